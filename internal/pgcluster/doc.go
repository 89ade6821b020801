// Package pgcluster starts a private, throwaway PostgreSQL cluster for the lab
// and for tests: initdb into a fresh temporary directory, the server on a
// free 127.0.0.1 port, statement logging to jsonlog, and removal of every
// file on Stop.
//
// PostgreSQL refuses to run as root. When the calling process is root, every
// PostgreSQL binary runs as the postgres OS user (switched with
// SysProcAttr.Credential) and the cluster directory is chowned to that user;
// otherwise the binaries run as the calling user.
//
// # Lifetime
//
// The postmaster runs in the foreground as a direct child of the calling
// process, in its own process group (a Ctrl-C at the terminal does not reach
// it), with SIGQUIT as its parent-death signal (package proclife): when the
// calling process dies, even by SIGKILL, the server shuts down at once and
// its backends end with it. Callers still call [Cluster.Stop] on every exit
// path, which shuts down cleanly and removes the directory; Stop is
// idempotent and safe to call from several goroutines, so a deferred Stop
// plus a Stop in a signal path is fine. The ctx given to [Start] bounds only
// the start-up, not the cluster's life.
//
// A killed caller leaves its directory behind. A cluster in a default
// directory lives under [os.TempDir] with the name prefix [DirPrefix] and
// records its owner's PID and start time; [Sweep] stops and removes
// clusters whose owner is gone.
package pgcluster
