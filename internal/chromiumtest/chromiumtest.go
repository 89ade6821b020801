// Package chromiumtest runs headless Chromium for the tests that open
// latscope's HTML reports in a real browser.
package chromiumtest

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/tier"
)

// Bin returns the path of a Chromium on PATH, or skips t loudly, saying
// that what (e.g. "the HTML report") is not checked in a browser.
func Bin(t testing.TB, what string) string {
	t.Helper()
	tier.Require(t, "headless Chromium")
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

// errorProbe records script errors from the first moment; layoutProbe
// measures every chart as laid out and writes the result into the DOM as
// JSON in <pre id="latscope-probe">, for --dump-dom.
const errorProbe = `<script>window.__latscopeErrors=[];window.addEventListener("error",function(e){window.__latscopeErrors.push(String(e.message||e))},true);</script>`

const layoutProbe = `<script>(function(){
var out={errors:window.__latscopeErrors||[],resources:performance.getEntriesByType("resource").length,charts:[],sections:[]};
function count(svg,sel,both){var n=0;svg.querySelectorAll(sel).forEach(function(e){var b=e.getBoundingClientRect();if(both?(b.width>0&&b.height>0):(b.width>0||b.height>0))n++});return n}
document.querySelectorAll("svg.chart").forEach(function(svg){var r=svg.getBoundingClientRect();var s=svg.closest("section");
out.charts.push({label:svg.getAttribute("aria-label"),section:s?s.id:"",w:r.width,h:r.height,
n:{bar:count(svg,"rect.bar",true),seg:count(svg,"rect.seg",true),hatch:count(svg,"rect.hatch",true),dot:count(svg,"circle.dot",true),
series:count(svg,"path.series",false),area:count(svg,"path.area",false),band:count(svg,"rect.band",true),mark:count(svg,"line.mark",false),text:count(svg,"text",true)}})});
document.querySelectorAll("section").forEach(function(s){out.sections.push(s.id)});
var pre=document.createElement("pre");pre.id="latscope-probe";pre.textContent=JSON.stringify(out);document.body.appendChild(pre);
})();</script>`

var probeRe = regexp.MustCompile(`(?s)<pre id="latscope-probe">(.*?)</pre>`)

// Layout is what the browser laid out: script errors, resources fetched,
// every chart (svg.chart) with its size and how many of each kind of mark
// are visible in it (bar, seg, hatch, dot, series, area, band, mark,
// text), and the page's section ids.
type Layout struct {
	Errors    []string `json:"errors"`
	Resources int      `json:"resources"`
	Charts    []struct {
		Label, Section string
		W, H           float64
		N              map[string]int
	} `json:"charts"`
	Sections []string `json:"sections"`
}

// Measure writes page, with the probes added, to path, opens it in bin and
// returns its Layout. Every console message (a script error, a blocked
// fetch, a CSP violation) fails t. args are added to Chromium's (a window
// size, say).
func Measure(t testing.TB, bin string, page []byte, path string, args ...string) Layout {
	t.Helper()
	s := strings.Replace(string(page), "<head>", "<head>"+errorProbe, 1)
	s = strings.Replace(s, "</body>", layoutProbe+"</body>", 1)
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr := Run(t, bin, append([]string{"--enable-logging=stderr", "--v=0"}, append(args, "--dump-dom", "file://"+path)...)...)
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, ":CONSOLE") {
			t.Errorf("browser console: %s", line)
		}
	}
	m := probeRe.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no probe output in the DOM dump of %s (%d bytes); stderr:\n%s", path, len(stdout), stderr)
	}
	var l Layout
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &l); err != nil {
		t.Fatalf("probe output of %s: %v", path, err)
	}
	return l
}
