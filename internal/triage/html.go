package triage

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"time"
)

// svgWidth and svgHeight are the size of one instance's timeline.
const svgWidth, svgHeight = 960.0, 90.0

// WriteHTML writes r as a self-contained HTML page: the verdict, one
// timeline per instance (the signal per step as bars, the threshold as a
// dashed line, the bad steps marked red), and the text report.
func WriteHTML(w io.Writer, r *Report) error {
	var text strings.Builder
	if err := WriteText(&text, r); err != nil {
		return err
	}
	page := struct {
		R         *Report
		Who       string
		Timelines []template.HTML
		Text      string
		Step, Thr string
		Signal    string
	}{R: r, Who: r.who(), Text: text.String(), Step: dur(r.Step), Thr: dur(r.Threshold), Signal: r.signalName()}
	top := r.scaleTop()
	for _, ir := range r.Instances {
		page.Timelines = append(page.Timelines, timeline(r, ir, top))
	}
	return htmlPage.Execute(w, page)
}

// scaleTop is the timelines' common top: twice the threshold, or the
// worst step.
func (r *Report) scaleTop() float64 {
	top := 2 * r.Threshold.Seconds()
	for _, ir := range r.Instances {
		if ir.Worst > top {
			top = ir.Worst
		}
	}
	if !(top > 0) || math.IsInf(top, 0) {
		top = 1
	}
	return top
}

// timeline draws one instance's steps as an inline SVG.
func timeline(r *Report, ir InstanceReport, top float64) template.HTML {
	var b strings.Builder
	n := float64(len(ir.Signal))
	if n == 0 {
		n = 1
	}
	bw := svgWidth / n
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`,
		svgWidth, svgHeight+14, svgWidth, svgHeight+14, template.HTMLEscapeString(ir.Name))
	fmt.Fprintf(&b, `<rect width="%.0f" height="%.0f" fill="#f6f6f6"/>`, svgWidth, svgHeight)
	bad, peer, held := indexSet(ir.Bad), indexSet(ir.Peer), indexSet(ir.Held)
	for _, i := range ir.Bad {
		bg := "#fdd"
		if peer[i] {
			bg = "#fec"
		}
		fmt.Fprintf(&b, `<rect x="%.2f" y="0" width="%.2f" height="%.0f" fill="%s"/>`, float64(i)*bw, math.Max(bw, 1), svgHeight, bg)
	}
	for i, v := range ir.Signal {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		h := math.Max(0, math.Min(v/top, 1)) * svgHeight
		fill, rule := "#79a", ""
		switch {
		case peer[i]:
			fill, rule = "#e80", " bad by the peer rule"
		case held[i]:
			fill, rule = "#c00", " bad: held"
		case bad[i]:
			fill, rule = "#c00", " bad: over the threshold"
		}
		fmt.Fprintf(&b, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"><title>%s %s%s</title></rect>`,
			float64(i)*bw, svgHeight-h, math.Max(bw*0.9, 0.5), h, fill,
			r.Start.Add(r.Step*time.Duration(i)).UTC().Format("01-02 "+r.clockLayout()), ms(v), rule)
	}
	y := svgHeight - r.Threshold.Seconds()/top*svgHeight
	fmt.Fprintf(&b, `<line x1="0" x2="%.0f" y1="%.2f" y2="%.2f" stroke="#000" stroke-dasharray="4 3"/>`, svgWidth, y, y)
	fmt.Fprintf(&b, `<text x="0" y="%.0f" font-size="11">%s</text>`, svgHeight+12, r.Start.UTC().Format("2006-01-02 "+r.clockLayout()))
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="11" text-anchor="end">%s UTC</text>`, svgWidth, svgHeight+12, r.End.UTC().Format("2006-01-02 "+r.clockLayout()))
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

var htmlPage = template.Must(template.New("triage").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>latscope triage: {{.Who}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;max-width:1000px}
h2{font-size:1em;margin:1.2em 0 .2em}
.verdict{font-size:1.1em;background:#eef;padding:.6em;border-left:4px solid #447}
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:12px}
</style></head><body>
<h1>latscope triage: {{.Who}}</h1>
<p class="verdict">{{.R.Verdict.Line}}</p>
{{with .R.Verdict.Next}}<p><b>Next:</b> {{.}}</p>{{end}}
{{range .R.Warnings}}<p><b>Warning:</b> {{.}}</p>{{end}}
<p>One bar per step of {{.Step}}: the {{.Signal}}; the dashed line is the threshold ({{.Thr}}); red: the instance's bad steps over the threshold (or held); orange: bad by the peer rule (under the threshold, far over the other instances in the same step). Hover a bar for its time, value and rule.</p>
{{range $i, $ir := .R.Instances}}<h2>{{$ir.Name}}: {{len $ir.Bad}} bad step(s) of {{$ir.DataSteps}}{{with $ir.Peer}} ({{len .}} by the peer rule){{end}}{{with $ir.Held}} ({{len .}} held){{end}}</h2>
{{index $.Timelines $i}}
{{end}}
<h2>Evidence</h2>
<pre>{{.Text}}</pre>
</body></html>
`))
