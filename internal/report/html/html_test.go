package htmlreport_test

import (
	"bytes"
	"flag"
	"github.com/latscope/latscope/internal/golden"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/latscope/latscope/internal/fixture"
	htmlreport "github.com/latscope/latscope/internal/report/html"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestMain(m *testing.M) {
	code := m.Run()
	fixture.Cleanup()
	os.Exit(code)
}

func TestWriteGolden(t *testing.T) {
	rep, res := synthetic("svc")
	var buf bytes.Buffer
	if err := htmlreport.Write(&buf, rep, res, htmlreport.DefaultOptions); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "synthetic.html"), buf.Bytes(), *update)
}

func TestWriteSections(t *testing.T) {
	rep, res := synthetic("svc")
	opts := htmlreport.DefaultOptions
	opts.Sections = []htmlreport.Section{{Title: "Modes", Intro: "lab modes"}}
	var buf bytes.Buffer
	if err := htmlreport.Write(&buf, rep, res, opts); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{`id="latency-budget"`, `id="latency-distribution"`, `id="critical-path"`, `id="predictions"`,
		`id="cpu-profile-vs-wall-clock"`, `id="modes"`, `id="findings"`, `aria-label="latency histogram"`,
		`aria-label="Median request critical path"`, `aria-label="Slowest request critical path"`, "url(#ls-hatch)",
		"Content-Security-Policy", "remove=svc", "(no region)", "(no app frame)"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Index(out, `id="modes"`) > strings.Index(out, `id="findings"`) {
		t.Error("extra sections come after the findings, want before")
	}
	for _, bad := range []string{"http://", "https://", "<link", "@import", "ZgotmplZ", "NaN", "Inf"} {
		if strings.Contains(strings.ReplaceAll(out, `xmlns="http://www.w3.org/2000/svg"`, ""), bad) {
			t.Errorf("report contains %q", bad)
		}
	}
}

func TestWriteMultipleGroups(t *testing.T) {
	rep, res := synthetic("a")
	rep2, res2 := synthetic("b")
	rep.Groups = append(rep.Groups, rep2.Groups[0])
	res.Groups = append(res.Groups, res2.Groups[0])
	rep.Groups = append(rep.Groups, rep2.Groups[0])
	rep.Groups[2].Name, rep.Groups[2].Requests.Count = "empty", 0
	var buf bytes.Buffer
	if err := htmlreport.Write(&buf, rep, nil, htmlreport.DefaultOptions); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{`id="a-latency-budget"`, `id="b-latency-budget"`, `id="empty-no-requests"`, "per-request latencies not available"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestWriteNil(t *testing.T) {
	if err := htmlreport.Write(&bytes.Buffer{}, nil, nil, htmlreport.DefaultOptions); err == nil {
		t.Error("nil report: no error")
	}
}

func TestWriteFileAtomic(t *testing.T) {
	rep, res := synthetic("svc")
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := htmlreport.WriteFile(path, rep, res, htmlreport.DefaultOptions); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "report.html" {
		t.Errorf("dir holds %v, want only report.html", ents)
	}
	if err := htmlreport.WriteFile(filepath.Join(dir, "missing", "r.html"), rep, res, htmlreport.DefaultOptions); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("write into a missing dir: %v, want an error naming it", err)
	}
}

// FuzzWriteEscapes feeds arbitrary names into every place user text goes
// and checks none of it reaches the page as markup.
func FuzzWriteEscapes(f *testing.F) {
	for _, s := range []string{"main", "<script>alert(1)</script>", `"><img src=x onerror=alert(1)>`, "a&b", "]]></svg>", "\x00\xff", "é—✓"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name := "<x-evil " + s
		rep, res := synthetic(name)
		opts := htmlreport.DefaultOptions
		opts.Title = name
		opts.Sections = []htmlreport.Section{{Title: name, Intro: name, Note: name}}
		var buf bytes.Buffer
		if err := htmlreport.Write(&buf, rep, res, opts); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if strings.Contains(out, "<x-evil") {
			i := strings.Index(out, "<x-evil")
			t.Fatalf("unescaped input in output: …%s…", out[max(i-80, 0):min(i+80, len(out))])
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatal("valid input gave invalid UTF-8")
		}
	})
}
