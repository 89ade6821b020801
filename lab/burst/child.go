package burst

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/lab"
)

// child is one burst-serve process started by the scenario.
type child struct {
	cmd     *exec.Cmd
	base    string // http://ADDR
	log     *os.File
	exited  chan error
	sampler *hostsig.Sampler
	client  *http.Client
}

// startChild starts `latscope-lab burst-serve` with cfg and waits until it
// listens. Its output goes to logPath.
func startChild(ctx context.Context, command func(context.Context, ...string) *exec.Cmd, cfg ServeConfig, logPath string) (*child, error) {
	if err := os.Remove(cfg.AddrFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("stale address file: %w", err) // else the wait would read the old address
	}
	log, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("burst-serve log: %w", err)
	}
	cmd := command(ctx, append([]string{"burst-serve"}, cfg.Args()...)...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := lab.StartChild(cmd); err != nil { // killed if the lab dies
		log.Close()
		return nil, fmt.Errorf("start burst-serve: %w", err)
	}
	c := &child{cmd: cmd, log: log, exited: make(chan error, 1), client: &http.Client{Timeout: 10 * time.Minute}}
	go func() { c.exited <- cmd.Wait() }()
	addr, err := c.waitAddr(ctx, cfg.AddrFile, logPath)
	if err == nil {
		c.base = "http://" + addr
		c.sampler, err = hostsig.NewSampler(cmd.Process.Pid, hostsig.Options{})
	}
	if err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// waitAddr polls the address file until it appears, the child exits or 15 s pass.
func (c *child) waitAddr(ctx context.Context, path, logPath string) (string, error) {
	deadline := time.After(15 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil {
			if addr := strings.TrimSpace(string(b)); addr != "" {
				return addr, nil
			}
		}
		select {
		case err := <-c.exited:
			c.exited <- err
			return "", fmt.Errorf("burst-serve exited before listening (%v): %s", err, lastLine(logPath))
		case <-deadline:
			return "", fmt.Errorf("burst-serve did not write %s within 15 s: %s", path, lastLine(logPath))
		case <-ctx.Done():
			return "", ctx.Err()
		case <-tick.C:
		}
	}
}

func lastLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no log)"
	}
	defer f.Close()
	last := "(empty log)"
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			last = s
		}
	}
	return last
}

// stats fetches the child's counters.
func (c *child) stats(ctx context.Context) (Stats, error) {
	var st Stats
	body, err := c.get(ctx, "/stats")
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return st, fmt.Errorf("burst-serve /stats: %w", err)
	}
	return st, nil
}

// get fetches a path and returns the body of a 200 answer.
func (c *child) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("burst-serve %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("burst-serve %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("burst-serve %s: %s: %s", path, resp.Status, strings.TrimSpace(string(body)))
	}
	return body, nil
}

// stop asks the child to exit (SIGTERM), kills it after 10 s, and closes
// its log.
func (c *child) stop() error {
	if c.sampler != nil {
		c.sampler.Close()
	}
	defer c.log.Close()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		c.cmd.Process.Kill()
	}
	select {
	case err := <-c.exited:
		return exitErr(err)
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		return fmt.Errorf("burst-serve did not exit within 10 s of SIGTERM: killed (%v)", <-c.exited)
	}
}

// exitErr ignores the exit caused by our own SIGTERM.
func exitErr(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return nil
		}
	}
	return err
}
