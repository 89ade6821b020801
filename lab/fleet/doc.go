// Package fleet is the lab's fleet scenario (`latscope-lab fleet`): three
// instances of a small service, each its own process in its own cgroup,
// with the agent's Prometheus metrics on /metrics; one shared private
// PostgreSQL; a private Prometheus that scrapes them every second;
// closed-model load on all three. Time is compressed: a "minute" of the
// analysis lasts a few seconds (Config.Minute). Faults run in phases, each
// in its own window with the truth recorded — periodic CFS throttling of
// one instance, a table lock in the shared database, one stopped process,
// and no fault — and after each phase triage.Run reads the metrics back
// from Prometheus over that window; the checks compare its verdict with the
// truth (docs/lab.md, "fleet").
package fleet
