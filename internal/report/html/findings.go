package htmlreport

import (
	"fmt"
	"sort"

	"github.com/latscope/latscope/internal/render"
)

// FindingsSection lists the report's findings and the goroutine (or, for a
// JVM recording, thread) time outside any request.
func FindingsSection(rep *render.Report) Section {
	var b body
	if len(rep.Findings) == 0 {
		b.b.WriteString(`<ul class="findings"><li><span class="badge ok">ok</span>Nothing to warn about: no refusals, no cut or warm-up requests, no CPU saturation.</li></ul>`)
	} else {
		b.b.WriteString(`<ul class="findings">`)
		for _, f := range rep.Findings {
			badge, class := f.Kind, "badge"
			if f.Refuse {
				badge, class = "refused", "badge refuse"
			}
			b.b.WriteString(`<li><span class="` + class + `">` + esc(badge) + "</span><span>")
			if f.Group != "" {
				b.b.WriteString("<strong>" + esc(f.Group) + ":</strong> ")
			}
			b.b.WriteString(esc(f.Text) + "</span></li>")
		}
		b.b.WriteString("</ul>")
	}
	if t, ok := outsideTable(rep); ok {
		if h, err := t.HTML(); err == nil {
			b.details(wordsOf(Options{jvm: rep.Trace.JVM}).unit+" time outside any request", h)
		}
	}
	return Section{Title: "Findings", Body: b.html()}
}

func outsideTable(rep *render.Report) (Table, bool) {
	type kv struct {
		k string
		v float64
	}
	var rows []kv
	total := 0.0
	for k, d := range rep.Outside {
		v := d.Ms()
		rows = append(rows, kv{k, v})
		total += v
	}
	if len(rows) == 0 {
		return Table{}, false
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].v > rows[j].v || rows[i].v == rows[j].v && rows[i].k < rows[j].k })
	over := "trace"
	if rep.Trace.JVM {
		over = "recording"
	}
	t := Table{Class: "compact", Caption: "Totals over the whole " + over + ", never divided by a request count.",
		Columns: []Column{{Name: "kind"}, {Name: "ms", Num: true}}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []Cell{{Text: r.k, Class: "swatch", Color: KindColor(r.k)}, {Text: fmt.Sprintf("%.1f", r.v), Bar: r.v / total}})
	}
	return t, true
}
