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
	binDir  string
	log     io.Writer // may be nil
	asUser  bool      // switch to serverUser
	runuser string    // path of runuser; "" = switch with SysProcAttr.Credential
	uid     int
	gid     int
}

// newRunner decides how to run binaries from binDir.
func newRunner(binDir string, log io.Writer) (*runner, error) {
	r := &runner{binDir: binDir, log: log, uid: -1, gid: -1}
	if os.Geteuid() != 0 {
		return r, nil
	}
	u, err := user.Lookup(serverUser)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: looking up user %s: %w", serverUser, errors.Join(ErrNoPostgresUser, err))
	}
	r.asUser = true
	r.uid, _ = strconv.Atoi(u.Uid)
	r.gid, _ = strconv.Atoi(u.Gid)
	if p, err := exec.LookPath("runuser"); err == nil {
		r.runuser = p
	}
	return r, nil
}

// command builds the exec.Cmd for binDir/name args, in its own process group
// so that cancelling ctx kills runuser and the tool beneath it.
func (r *runner) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	bin := filepath.Join(r.binDir, name)
	var cmd *exec.Cmd
	switch {
	case r.asUser && r.runuser != "":
		cmd = exec.CommandContext(ctx, r.runuser, append([]string{"-u", serverUser, "--", bin}, args...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	case r.asUser:
		cmd = exec.CommandContext(ctx, bin, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true,
			Credential: &syscall.Credential{Uid: uint32(r.uid), Gid: uint32(r.gid)}}
	default:
		cmd = exec.CommandContext(ctx, bin, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	cmd.Env = toolEnv()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// run runs binDir/name args and returns its combined output, which is also
// copied to r.log. A failure's message is "pgcluster: <what>: <cause>",
// followed by the tail of the output on the next lines.
func (r *runner) run(ctx context.Context, what, name string, args ...string) error {
	var out bytes.Buffer
	w := io.Writer(&out)
	if r.log != nil {
		w = io.MultiWriter(&out, r.log)
	}
	cmd := r.command(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pgcluster: %s: %s: %w\n%s", what, name, err, tail(out.Bytes(), tailBytes))
	}
	return nil
}

// chown gives path to the server user when binaries run as that user.
func (r *runner) chown(path string) error {
	if !r.asUser {
		return nil
	}
	if err := os.Chown(path, r.uid, r.gid); err != nil {
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
