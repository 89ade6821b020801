// Package triage decides, from the metrics latscope's agent exposes to
// Prometheus, which instances of a fleet were slow in which steps (minutes),
// whether the slowness was local to one instance or shared by most of them,
// whether it was confined to the database path, when it happens (minute of
// the hour, hour of the day, a period), and which host signal rose with it.
//
// The core is pure: [Analyze] takes an [Input] (per-instance series, one
// value per step) and returns a [Report] holding every number the writers
// print, with the evidence of each rule. [Run] is the edge: it queries the
// Prometheus HTTP API  and calls Analyze. The writers (text, JSON and
// HTML: package internal/report/triagereport) only format a Report; the
// exported phrases and rule numbers they print are the analysis's.
//
// docs/triage.md describes the rules and the exact PromQL each one uses.
package triage
