package triagereport

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/chromiumtest"
	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/internal/triage"
)

// widthProbe measures, once laid out, the page's width against the
// window's, each text block's (the evidence, the verdict) content width
// against its box and its right edge, and the host bars drawn.
const widthProbe = `<script>(function(){
var out={window:window.innerWidth,page:document.documentElement.scrollWidth,blocks:[],hostbars:0,svgs:document.querySelectorAll("svg.timeline").length};
document.querySelectorAll("pre,p.verdict").forEach(function(e){var r=e.getBoundingClientRect();out.blocks.push({tag:e.tagName,scroll:e.scrollWidth,client:e.clientWidth,right:r.right})});
document.querySelectorAll("rect.hostbar").forEach(function(e){var b=e.getBoundingClientRect();if(b.width>0&&b.height>0)out.hostbars++});
var pre=document.createElement("pre");pre.id="triage-probe";pre.textContent=JSON.stringify(out);document.body.appendChild(pre);
})();</script>`

var widthProbeRe = regexp.MustCompile(`(?s)<pre id="triage-probe">(.*?)</pre>`)

// TestHTMLInChromium lays out the HTML of the recorded GC-bound instance
// (fleet-gc) in a 1400 px wide headless Chromium: the evidence block and
// the verdict fit their boxes and the window (their long lines wrap; the
// evidence block used to scroll sideways), and the host strips under the
// timelines draw their bars.
func TestHTMLInChromium(t *testing.T) {
	tier.Busy(t)
	bin := chromiumtest.Bin(t, "triage's HTML page")
	base := replay(t, "fleet-gc")
	start, end := time.Date(2026, 12, 4, 22, 8, 58, 0, time.UTC), time.Date(2026, 12, 4, 22, 9, 38, 0, time.UTC)
	r, err := triage.Run(context.Background(), triage.Config{URL: base, Job: "latscope-fleet", Start: start, End: end, Step: 2 * time.Second, Threshold: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "triage.html")
	if err := os.WriteFile(path, []byte(strings.Replace(page.String(), "</body>", widthProbe+"</body>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _ := chromiumtest.Run(t, bin, "--window-size=1400,4000", "--dump-dom", "file://"+path)
	m := widthProbeRe.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no probe output in the DOM dump (%d bytes)", len(stdout))
	}
	var got struct {
		Window, Page float64
		Blocks       []struct {
			Tag                   string
			Scroll, Client, Right float64
		}
		Hostbars, SVGs int
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &got); err != nil {
		t.Fatal(err)
	}
	t.Logf("layout at 1400 px: %+v", got)
	if got.Window != 1400 || got.Page > got.Window {
		t.Errorf("page %v px wide in a window of %v", got.Page, got.Window)
	}
	if len(got.Blocks) != 2 {
		t.Errorf("%d text blocks, want the verdict and the evidence", len(got.Blocks))
	}
	for _, b := range got.Blocks {
		if b.Scroll > b.Client || b.Right > got.Window {
			t.Errorf("%s: content %v px in a box of %v, right edge at %v: it overflows", b.Tag, b.Scroll, b.Client, b.Right)
		}
	}
	a := instance(r, "a:8080")
	if got.SVGs != len(r.Instances) || got.Hostbars < len(a.Bad) {
		t.Errorf("%d timelines, %d host bars drawn: want %d timelines, and bars at least in a:8080's %d bad steps", got.SVGs, got.Hostbars, len(r.Instances), len(a.Bad))
	}
}
