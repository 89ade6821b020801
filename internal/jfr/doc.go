// Package jfr reads JDK Flight Recorder recordings and builds the same
// per-request budget latscope builds from Go execution traces.
//
// Events are read directly from the binary .jfr file (ReadBinary, through
// ReadEvents, the one event source; docs/jfr-format.md): chunk headers,
// metadata, constant pools and events, streamed one at a time, so no JDK is
// needed to analyse a recording. LATSCOPE_JFR_READER=print reads them from
// the JDK's own `jfr print --json` instead (Print, Decoder).
//
// With the Java library in java/ (package io.latscope), a recording holds
// latscope.Request events and the hand-offs to executors (TaskSubmit,
// TaskRun, TaskWait): the analysis is then per request (request mode), with
// latencies, a critical path across the marked hand-offs, and predictions
// through the same simulation as Go traces. Without it, JFR has no request
// boundaries and no wakeup edges: the analysis keeps only events whose stack
// contains a handler frame, divides by a request count the caller supplies,
// and states what this cannot know. The scheduler-churn analysis is not
// the reader's: its caller feeds the same events to package sched's
// JVMChurn (docs/jfr-churn.md); Events holds ChurnEvents, the event types it
// needs. docs/jfr.md describes the method and how to record.
package jfr
