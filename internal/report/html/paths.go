package htmlreport

import (
	"fmt"

	"github.com/latscope/latscope/internal/render"
)

// pathSection draws the critical paths of the median and slowest requests.
func pathSection(g *render.Group, opts Options) Section {
	w := wordsOf(opts)
	var b body
	paths := []struct {
		name string
		p    *render.Path
	}{{"Median request", g.Median}, {"Slowest request", g.Slowest}}
	if g.Median != nil && g.Slowest != nil && g.Median.Task == g.Slowest.Task {
		paths = paths[:1]
		paths[0].name = "Median and slowest request"
	}
	shown := 0
	for _, x := range paths {
		if x.p == nil {
			continue
		}
		shown++
		b.h3(pathHeading(x.name, x.p, w.unit))
		b.legend(pathLegend(x.p))
		b.raw(Waterfall{Label: x.name + " critical path", Path: x.p, Unit: w.unit}.SVG())
	}
	if shown == 0 {
		b.p("note", "No critical path was kept for this request type.")
	}
	return Section{Title: "Critical path", Body: b.html(), Intro: w.pathIntro}
}

// pathHeading names a path, its latency and the goroutines it crosses.
func pathHeading(name string, p *render.Path, unit string) string {
	_, order := waterfallRows(p.Segments)
	outside := 0
	for _, l := range order {
		if l.borrowedOnly {
			outside++
		}
	}
	s := fmt.Sprintf("%s — task %d, %s, critical path over %s", name, p.Task, fmtMs(p.Latency.Ms()), plural(len(order), unit))
	if outside > 0 {
		s += fmt.Sprintf(" (%d outside the request)", outside)
	}
	return s
}

// pathLegend lists the kinds a path shows.
func pathLegend(p *render.Path) []legendItem {
	seen := map[string]bool{}
	var items []legendItem
	borrowed, contention := false, false
	for _, s := range p.Segments {
		k := s.Kind
		if s.Unknown {
			k = "unknown"
		}
		if !seen[k] {
			seen[k] = true
			items = append(items, legendItem{color: KindColor(k), name: k})
		}
		borrowed = borrowed || s.Borrowed
		contention = contention || s.Contention
	}
	if borrowed {
		items = append(items, legendItem{color: "#7d8a96", name: "outside the request (borrowed)", style: "hatched"})
	}
	if contention {
		items = append(items, legendItem{color: "transparent", name: "held by another request", style: "outline"})
	}
	return items
}
