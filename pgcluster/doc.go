// Package pgcluster starts a private, throwaway PostgreSQL cluster for the lab
// and for tests: initdb into a fresh temporary directory, pg_ctl start on a
// free 127.0.0.1 port, statement logging to jsonlog, and removal of every file
// on Stop.
//
// PostgreSQL refuses to run as root. When the calling process is root, every
// PostgreSQL binary runs as the postgres OS user (runuser -u postgres --) and
// the cluster directory is chowned to that user; otherwise the binaries run
// as the calling user.
//
// # Lifetime
//
// The server is detached from the calling process (pg_ctl puts it in its own
// session), so it survives Ctrl-C and a crash of the caller. Callers must
// call [Cluster.Stop] on every exit path, including cancellation of their
// context by a signal; Stop is idempotent and safe to call from several
// goroutines, so a deferred Stop plus a Stop in a signal path is fine. The
// ctx given to [Start] bounds only the start-up, not the cluster's life.
//
// As a safety net for crashed callers, a cluster in a default directory lives
// under [os.TempDir] with the name prefix [DirPrefix] and records its owner's
// PID; [Sweep] stops and removes clusters whose owner is gone.
package pgcluster
