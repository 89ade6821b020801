package htmlreport

import (
	"fmt"
	"math"

	"github.com/latscope/latscope/internal/render"
)

// regionSection sets each region's share of CPU samples beside its share of
// wall-clock goroutine time: what a CPU profile shows against where the
// time went.
func regionSection(g *render.Group, opts Options) (Section, bool) {
	w := wordsOf(opts)
	named := false
	samples := 0
	for _, r := range g.Regions {
		named = named || r.Name != ""
		samples += r.CPUSamples
	}
	if !named {
		return Section{}, false
	}
	var rows []BarRow
	for _, r := range g.Regions {
		rows = append(rows, BarRow{Label: regionName(r.Name), Note: fmt.Sprintf("%s per request · %d samples", fmtMs(r.Wall.Ms()), r.CPUSamples),
			Values: []float64{r.WallPct, r.CPUPct}, Tip: regionTip(r, samples, w)})
	}
	chart := BarChart{Label: "CPU samples vs wall clock by region", Unit: "% of the request type's total",
		Series: []Series{{Name: "share of wall-clock " + w.unit + " time", Color: colorWall}, {Name: "share of CPU profile samples", Color: colorCPU}},
		Rows:   rows, Max: 100}
	var b body
	b.lead(disagreement(g.Regions, samples)...)
	b.raw(chart.SVG())
	note := fmt.Sprintf("%s in these requests. A share p of n samples is uncertain by about ±√(p(1−p)/n).", plural(samples, "CPU sample"))
	if samples == 0 {
		note = w.noSamples
	}
	return Section{Title: "CPU profile vs wall clock", Body: b.html(), Note: note, Intro: w.regionIntro}, true
}

// disagreement names the region a CPU profile would blame and the one the
// wall clock does.
func disagreement(rs []render.Region, samples int) []string {
	var cpuTop, wallTop *render.Region
	for i := range rs {
		r := &rs[i]
		if cpuTop == nil || r.CPUPct > cpuTop.CPUPct {
			cpuTop = r
		}
		if wallTop == nil || r.WallPct > wallTop.WallPct {
			wallTop = r
		}
	}
	switch {
	case wallTop == nil:
		return nil
	case samples == 0:
		return []string{"By wall clock, ", regionName(wallTop.Name), fmt.Sprintf(" takes the most time (%s).", fmtPct(wallTop.WallPct))}
	case cpuTop.Name == wallTop.Name:
		return []string{"The CPU profile and the wall clock agree: ", regionName(wallTop.Name), fmt.Sprintf(" leads both (%s of samples, %s of time).", fmtPct(cpuTop.CPUPct), fmtPct(wallTop.WallPct))}
	}
	return []string{"A CPU profile points at ", regionName(cpuTop.Name), fmt.Sprintf(" (%s of samples, %s of the time); the wall clock points at ", fmtPct(cpuTop.CPUPct), fmtPct(cpuTop.WallPct)),
		regionName(wallTop.Name), fmt.Sprintf(" (%s of the time, %s of samples).", fmtPct(wallTop.WallPct), fmtPct(wallTop.CPUPct))}
}

func regionTip(r render.Region, n int, w words) string {
	s := fmt.Sprintf("%s: %s of wall-clock %s time (%s per request), %s of CPU samples (%d of %d)",
		regionName(r.Name), fmtPct(r.WallPct), w.unit, fmtMs(r.Wall.Ms()), fmtPct(r.CPUPct), r.CPUSamples, n)
	if n > 0 {
		p := r.CPUPct / 100
		s += fmt.Sprintf(" ± %s", fmtPct(100*math.Sqrt(p*(1-p)/float64(n))))
	}
	return s
}

func regionName(n string) string {
	if n == "" {
		return "(no region)"
	}
	return n
}
