// Package proclife ties child processes to the life of the process that
// starts them, and records owners so that what a killed process left behind
// can be told from what a live one still uses.
//
// [Start] starts a command whose parent-death signal (Linux
// PR_SET_PDEATHSIG) is set: the kernel sends the signal to the child when
// its parent dies, SIGKILL included. The kernel ties the signal to the
// thread that forked the child, not to the process, so Start forks from one
// goroutine that is locked to its OS thread and never returns: that thread
// lives exactly as long as the process. On other systems Start is
// exec.Cmd.Start.
//
// [WriteOwner] writes a file naming the calling process (PID and start time,
// so a reused PID is not mistaken for the owner); [OwnerGone] reports
// whether the process such a file names no longer runs.
package proclife
