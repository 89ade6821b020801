package pgcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/latscope/latscope/internal/pgcluster/proclife"
)

// ErrNoPostgresUser is wrapped by Start's error when the caller is root and
// the system has no postgres OS user to run the server as.
var ErrNoPostgresUser = errors.New("running as root but there is no postgres OS user to run PostgreSQL as " +
	"(install the Debian package postgresql, or run as a non-root user)")

// serverUser is the OS user PostgreSQL runs as when the caller is root.
const serverUser = "postgres"

// runner runs PostgreSQL binaries from binDir: directly, or as serverUser
// when the calling process is root.
type runner struct {
	binDir string
	log    io.Writer // may be nil
	asUser bool      // switch to serverUser
	cred   *syscall.Credential
	home   string // serverUser's home directory
}

// newRunner decides how to run binaries from binDir.
func newRunner(binDir string, log io.Writer) (*runner, error) {
	r := &runner{binDir: binDir, log: log}
	if os.Geteuid() != 0 {
		return r, nil
	}
	u, err := user.Lookup(serverUser)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: looking up user %s: %w", serverUser, errors.Join(ErrNoPostgresUser, err))
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("pgcluster: user %s: %w", serverUser, err)
	}
	r.asUser, r.home = true, u.HomeDir
	r.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := strconv.ParseUint(id, 10, 32); err == nil {
				r.cred.Groups = append(r.cred.Groups, uint32(g))
			}
		}
	}
	return r, nil
}

// command builds the exec.Cmd for binDir/name args: as serverUser (switched
// with SysProcAttr.Credential, so no helper process stands between this
// process and the tool), in its own process group, so that cancelling ctx
// kills the tool and everything it started and a Ctrl-C at the terminal
// reaches only this process. Start it with r.start.
func (r *runner) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(r.binDir, name), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: r.cred}
	cmd.Env = toolEnv()
	if r.asUser {
		cmd.Env = append(cmd.Env, "HOME="+r.home, "USER="+serverUser, "LOGNAME="+serverUser)
		// The server user may not enter this process's working directory
		// (a 0700 checkout under /root): initdb then warns and the server
		// tools start in a directory they cannot read. Every path passed is
		// absolute, so run them from the root.
		cmd.Dir = "/"
	}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// start starts cmd so that it gets sig if this process dies (proclife).
func start(cmd *exec.Cmd, sig syscall.Signal) error { return proclife.Start(cmd, sig) }

// run runs binDir/name args and returns its combined output, which is also
// copied to r.log. A failure's message is "pgcluster: <what>: <cause>",
// followed by the tail of the output on the next lines; when ctx ended the
// run, it is the one line "pgcluster: <what>: <ctx's error>" (the output is
// in r.log).
func (r *runner) run(ctx context.Context, what, name string, args ...string) error {
	var out bytes.Buffer
	w := io.Writer(&out)
	if r.log != nil {
		w = io.MultiWriter(&out, r.log)
	}
	cmd := r.command(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = w, w
	err := start(cmd, syscall.SIGKILL)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("pgcluster: %s: %w", what, context.Cause(ctx))
	}
	if err != nil {
		return fmt.Errorf("pgcluster: %s: %s: %w\n%s", what, name, err, tail(out.Bytes(), tailBytes))
	}
	return nil
}

// chown gives path to the server user when binaries run as that user.
func (r *runner) chown(path string) error {
	if !r.asUser {
		return nil
	}
	if err := os.Chown(path, int(r.cred.Uid), int(r.cred.Gid)); err != nil {
		return fmt.Errorf("pgcluster: chown %s to %s: %w", path, serverUser, err)
	}
	return nil
}

// toolEnv is the caller's environment without PG* variables (PGDATA, PGPORT,
// ... would override our flags) and with C-locale messages.
func toolEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C", "LANG=C")
}
