// Package hostsig reads the host signals that tell where a process's time went when it was
// not running its own code: CPU time from /proc (an instrument independent of the Go tracer),
// per-thread scheduler delay, CFS throttling from the cgroup's cpu.stat, CPU pressure (PSI)
// of the system and of the process's v2 cgroup, and steal time from /proc/stat.
//
// The package has three layers:
//   - pure parsers over []byte, one per kernel file (ParseProcStat, ParseSchedstat,
//     ParseSystemStat, ParsePSI, ParseCPUStat, ParseProcCgroup, ParseMountinfo,
//     ParseCFSQuota, ParseCPUMax);
//   - a Sampler that reads all of them for one process and returns a Sample, and Diff,
//     which turns two samples into a Delta: counter increments over the interval;
//   - Cgroup, which creates a cgroup with a CFS quota for the lab (root only).
//
// Samples travel inside Go execution traces as trace.Log messages of category LogCategory,
// encoded by Sample.MarshalText and decoded by ParseLog. Package probe, below this one, is
// the CPU-availability probe: whether the process could run on time, measured from inside.
//
// The package is a module of its own (github.com/latscope/latscope/internal/hostsig), which
// the agent's module and the main module both require: Go's internal rule, which goes by
// import path, lets both import it and no one else's code (docs/agent.md, "Modules").
//
// Every counter in a Sample is cumulative; only the Diff of two samples says what happened in
// between. A source that could not be read is recorded as absent, with the reason, and never
// as zero. See docs/hostsig.md for the meaning of each signal and the classification rules
// they support.
//
// BUG: thread schedstat sums lose the last interval of a thread that exits between two
// samples (the kernel drops its counters with it); Sampler keeps the sum monotonic.
package hostsig
