package jfr

import "time"

// SettingDuration parses a JFR timespan setting as a jdk.ActiveSetting
// event carries it ("10 ms", "0 ns", "1 s"): the sampling period of
// jdk.ExecutionSample, the threshold of a wait event. ok is false for a
// value that is not a timespan ("off", "everyChunk").
func SettingDuration(s string) (d time.Duration, ok bool) { return thresholdValue(s) }
