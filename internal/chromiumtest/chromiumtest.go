// Package chromiumtest runs headless Chromium for the tests that open
// latscope's HTML reports in a real browser.
package chromiumtest

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Bin returns the path of a Chromium on PATH, or skips t loudly, saying
// that what (e.g. "the HTML report") is not checked in a browser.
func Bin(t testing.TB, what string) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skipf("SKIP (loud): no headless Chromium on PATH, %s is not checked in a browser (apt-get install chromium; .ci/run installs it)", what)
	return ""
}

// Run runs bin headless, sandbox off (tests run as root), with no network
// services of its own and a fresh profile, plus args; it fails t when
// Chromium fails or takes over 90 s.
func Run(t testing.TB, bin string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--disable-extensions", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, errb.String())
	}
	return out.String(), errb.String()
}
