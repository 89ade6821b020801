package htmlreport

import (
	"math"
	"regexp"
	"strconv"
	"testing"

	"github.com/latscope/latscope/internal/dbwait"
)

// verdictFamilies are the verdicts the reports colour, by family: the
// verdicts of one family are drawn side by side.
func verdictFamilies(t *testing.T) map[string]map[string]string {
	t.Helper()
	db := map[string]string{}
	for v := range dbwait.NumVerdicts {
		db[v.String()] = DBWaitColor(v)
	}
	checks := map[string]string{}
	for _, class := range []string{"good", "bad", "inconclusive"} {
		m := regexp.MustCompile(`table\.data \.` + class + ` \{ color: (#[0-9a-f]{6});`).FindStringSubmatch(pageCSS)
		if m == nil {
			t.Fatalf("page.css gives the verdict class %q no colour", class)
		}
		checks[class] = m[1]
	}
	return map[string]map[string]string{"dbwait": db, "checks": checks}
}

// TestVerdictColorsDistinct: no two verdicts share a colour, in any
// family or across them, and within a family every two are far enough
// apart to be told apart in a chart.
func TestVerdictColorsDistinct(t *testing.T) {
	const minDistance = 48 // Euclidean, in 0–255 RGB
	owner := map[string]string{}
	for fam, colors := range verdictFamilies(t) {
		for name, c := range colors {
			if _, err := rgb(c); err != nil {
				t.Errorf("%s verdict %s: colour %q: %v", fam, name, c, err)
				continue
			}
			if o, ok := owner[c]; ok {
				t.Errorf("%s verdict %s has the colour %s of %s", fam, name, c, o)
			}
			owner[c] = fam + " verdict " + name
		}
		for a, ca := range colors {
			for b, cb := range colors {
				if a < b && distance(ca, cb) < minDistance {
					t.Errorf("%s verdicts %s (%s) and %s (%s) are %.0f apart, less than %d", fam, a, ca, b, cb, distance(ca, cb), minDistance)
				}
			}
		}
	}
	if len(owner) < int(dbwait.NumVerdicts)+3 {
		t.Errorf("%d verdict colours, want %d", len(owner), int(dbwait.NumVerdicts)+3)
	}
	if DBWaitColor(dbwait.NumVerdicts) != unknownColor {
		t.Error("a verdict out of range is not grey")
	}
}

// TestKindColorsDistinct: every wait kind has its own colour.
func TestKindColorsDistinct(t *testing.T) {
	seen := map[string]int{}
	for k, c := range kindColors {
		if j, ok := seen[c]; ok {
			t.Errorf("kinds %d and %d share %s", j, k, c)
		}
		seen[c] = k
	}
}

func rgb(c string) ([3]float64, error) {
	var out [3]float64
	if len(c) != 7 || c[0] != '#' {
		return out, strconv.ErrSyntax
	}
	for i := range 3 {
		v, err := strconv.ParseUint(c[1+2*i:3+2*i], 16, 8)
		if err != nil {
			return out, err
		}
		out[i] = float64(v)
	}
	return out, nil
}

func distance(a, b string) float64 {
	x, _ := rgb(a)
	y, _ := rgb(b)
	return math.Sqrt((x[0]-y[0])*(x[0]-y[0]) + (x[1]-y[1])*(x[1]-y[1]) + (x[2]-y[2])*(x[2]-y[2]))
}

// TestColorAccessors: SeriesColor and CheckColor give the palette's
// colours by name (CheckColor page.css's, the colours the verdict test
// above judges), and grey for a name they do not know.
func TestColorAccessors(t *testing.T) {
	for name, want := range map[string]string{"wall": colorWall, "cpu": colorCPU, "latency": colorLatency, "p50": colorMarkP50, "p99": colorMarkP99, "mean": colorMarkMean, "nope": unknownColor} {
		if got := SeriesColor(name); got != want {
			t.Errorf("SeriesColor(%q) = %s, want %s", name, got, want)
		}
	}
	for class, want := range verdictFamilies(t)["checks"] {
		if got := CheckColor(class); got != want {
			t.Errorf("CheckColor(%q) = %s, want page.css's %s", class, got, want)
		}
	}
	if got := CheckColor("nope"); got != unknownColor {
		t.Errorf("CheckColor(\"nope\") = %s, want grey %s", got, unknownColor)
	}
}
