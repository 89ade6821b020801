// Package jvm is the JVM's request analysis over a JFR recording: from the
// events package jfr reads, it builds the same per-request budget
// (budget.Result) latscope builds from Go execution traces.
//
// With the Java library in java/ (package io.latscope), a recording holds
// latscope.Request events and the hand-offs to executors (TaskSubmit,
// TaskRun, TaskWait): the analysis is then per request (request mode), with
// latencies, a critical path across the marked hand-offs, and predictions
// through the same simulation as Go traces. Without it, JFR has no request
// boundaries and no wakeup edges: the analysis keeps only events whose stack
// contains a handler frame, divides by a request count the caller supplies,
// and states what this cannot know. The scheduler-churn analysis is not
// this package's: its caller feeds the same events to package sched's
// JVMChurn (docs/jfr-churn.md) through Read; jfr.Events holds
// jfr.ChurnEvents, the event types it needs. docs/jfr.md describes the
// method and how to record.
package jvm
