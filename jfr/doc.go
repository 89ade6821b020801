// Package jfr reads JDK Flight Recorder recordings and builds the same
// per-request budget latscope builds from Go execution traces.
//
// A recording is read in two ways. The chunk headers and metadata are read
// directly from the .jfr file (ReadChunks): they give the exact recording
// window and the event type ids that jdk.ActiveSetting events refer to. The
// events themselves come from the JDK's own `jfr print --json` (Print),
// streamed one event at a time (Decoder): the JSON is 56–178 times the size
// of the recording and is never held whole.
//
// JFR has no request boundaries and no wakeup edges. The analysis (Analyzer)
// keeps only events whose stack contains the handler frame, attributes each
// to the application frame beneath the wait, divides by a request count the
// caller supplies, and states in its findings what this cannot know: waits
// shorter than the JFR threshold are not recorded, and a request's critical
// path is taken to be its handler thread's waits. docs/jfr.md describes the
// method and how to record.
package jfr
