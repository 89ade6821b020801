// Package jfr reads JDK Flight Recorder recordings: the events latscope's
// JVM analyses read, package jvm's per-request budget and package sched's
// scheduler churn.
//
// Events are read directly from the binary .jfr file (ReadBinary, through
// ReadEvents, the one event source; docs/jfr-format.md): chunk headers,
// metadata, constant pools and events, streamed one at a time, so no JDK is
// needed to read a recording. LATSCOPE_JFR_READER=print reads them from
// the JDK's own `jfr print --json` instead (Print, Decoder).
//
// The reader is an input (docs/architecture.md): it imports nothing of the
// analyses. What they share of a recording is here: Events, the event
// types they read, so that one read feeds both; Rules, which decide a
// stack's application frame and a wait's mechanism and kind; Settings,
// the jdk.ActiveSetting events combined as the JVM combines them.
// docs/jfr.md describes the method and how to record.
package jfr
