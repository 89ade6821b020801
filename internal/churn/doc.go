// Package churn holds what the scheduler-churn analyses of the two
// runtimes share, written once: the thresholds that judge a share and
// cluster wakeups into bursts, the findings and their kinds, the interval
// maths (stats.Wilson), the top frames, the burst clustering, and the
// words of the findings, with each runtime's nouns as a parameter.
//
// Package sched analyses a Go trace with it and, in sched.AnalyzeJVM, a
// JDK Flight Recorder recording whose events package jfr reads; the JFR
// reader imports nothing of the analyses.
// Each runtime keeps its own judgement: Go judges the share's interval
// (its lower bound above the threshold, with an inconclusive case), the
// JVM its point share (docs/jfr-churn.md).
package churn
