package jfr

import "slices"

// Events are the event types latscope reads of a recording: the ones the
// JVM's request analysis reads (package jvm), and the ones the
// scheduler-churn analysis (package sched's JVMChurn) reads beside them
// (ChurnEvents), so that one read of a recording feeds both.
var Events = slices.Concat(WaitEvents, []string{"jdk.ExecutionSample", "jdk.ActiveSetting", "jdk.JVMInformation", "jdk.CPUInformation", "jdk.CPULoad", "jdk.CompilerStatistics"}, RequestEvents, ChurnEvents)

// ChurnEvents are the event types the JVM's scheduler-churn analysis
// (package sched's JVMChurn, docs/jfr-churn.md) reads beyond the budget's:
// the native samples (counted, never CPU) and thread starts and ends.
// jdk.ExecutionSample, jdk.ThreadPark, jdk.ActiveSetting, jdk.CPUInformation
// and jdk.CPULoad are in Events already, and so are these.
var ChurnEvents = []string{"jdk.NativeMethodSample", "jdk.ThreadStart", "jdk.ThreadEnd"}

// RequestEvents are the event types of the Java library (java/, docs/jfr.md)
// the request analysis reads.
var RequestEvents = []string{"latscope.Request", "latscope.TaskSubmit", "latscope.TaskRun", "latscope.TaskWait", "latscope.Hold"}
