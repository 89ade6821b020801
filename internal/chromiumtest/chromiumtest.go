// Package chromiumtest runs headless Chromium for the tests that open
// latscope's HTML reports in a real browser.
package chromiumtest

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"os/exec"
	"regexp"
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

// probeRe finds what a page's probe script left in the DOM: JSON in
// <pre id="latscope-probe">.
var probeRe = regexp.MustCompile(`(?s)<pre id="latscope-probe">(.*?)</pre>`)

// Probe opens page in bin with console logging on and decodes into v the
// JSON that the page's probe script wrote into <pre id="latscope-probe">.
// Every console message (a script error, a blocked fetch, a CSP violation)
// fails t. args are added to Chromium's (a window size, say).
func Probe(t testing.TB, bin, page string, v any, args ...string) {
	t.Helper()
	stdout, stderr := Run(t, bin, append([]string{"--enable-logging=stderr", "--v=0"}, append(args, "--dump-dom", "file://"+page)...)...)
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, ":CONSOLE") {
			t.Errorf("browser console: %s", line)
		}
	}
	m := probeRe.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no probe output in the DOM dump of %s (%d bytes); stderr:\n%s", page, len(stdout), stderr)
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), v); err != nil {
		t.Fatalf("probe output of %s: %v", page, err)
	}
}
