package triagereport

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"time"

	htmlreport "github.com/latscope/latscope/internal/report/html"
	"github.com/latscope/latscope/internal/triage"
)

// svgWidth and svgHeight are the size of one instance's timeline.
const svgWidth, svgHeight = 960.0, 90.0

// The timelines' colours, from the product's palette: the signal a
// latency series, a bad step a failed check, a step bad by the peer rule
// (under the threshold) an inconclusive one, the host strip CPU time;
// the bad steps' background is their bar's colour, faint.
var (
	signalColor = htmlreport.SeriesColor("latency")
	badColor    = htmlreport.CheckColor("bad")
	peerColor   = htmlreport.CheckColor("inconclusive")
	hostColor   = htmlreport.SeriesColor("cpu")
)

// shadeOpacity is the opacity of a bad step's background.
const shadeOpacity = 0.15

// WriteHTML writes r as a self-contained HTML page, the product's report
// page (htmlreport.Page) with its style: the verdict, one timeline per
// instance (the signal per step as bars, the threshold as a dashed line,
// the bad steps marked red) with its host signals and GC share per step
// under it, and the text report.
func WriteHTML(w io.Writer, r *triage.Report) error {
	var text strings.Builder
	if err := WriteText(&text, r); err != nil {
		return err
	}
	var verdict, timelines strings.Builder
	if err := verdictHTML.Execute(&verdict, r.Verdict); err != nil {
		return fmt.Errorf("triage html: %w", err)
	}
	top, tops := scaleTop(r), hostTops(r)
	for _, ir := range r.Instances {
		if err := instanceHTML.Execute(&timelines, ir); err != nil {
			return fmt.Errorf("triage html: %w", err)
		}
		timelines.WriteString(string(timeline(r, ir, top, tops)))
	}
	var warnings strings.Builder
	for _, wn := range r.Warnings {
		warnings.WriteString("<p><b>Warning:</b> " + template.HTMLEscapeString(wn) + "</p>")
	}
	p := &htmlreport.Page{
		Title:    "latscope triage: " + who(r),
		Subtitle: fmt.Sprintf("%s per step of %s, threshold %s, %s to %s UTC", r.SignalName(), triage.Dur(r.Step), triage.Dur(r.Threshold), r.Start.UTC().Format("2006-01-02 "+r.ClockLayout()), r.End.UTC().Format("2006-01-02 "+r.ClockLayout())),
		Footer:   "latscope triage — which instances were slow, in which steps, shared or local, and why. Values come from Prometheus's answers over the range; hover a bar for its numbers.",
	}
	p.Add(
		htmlreport.Section{Title: "Verdict", Body: template.HTML(verdict.String() + warnings.String())},
		htmlreport.Section{Title: "Instances", Intro: fmt.Sprintf("One bar per step of %s: the %s; the dashed line is the threshold (%s); red: the instance's bad steps over the threshold (or held); amber: bad by the peer rule (under the threshold, far over the other instances in the same step). Hover a bar for its time, value and rule. Under each timeline, on the same steps: the host signals (seconds per step: throttled, stall, steal, CPU pressure of the cgroup and of the host) and the garbage collector's share of the process's CPU (no bar: no collection in the step), each on one scale for every instance.", triage.Dur(r.Step), r.SignalName(), triage.Dur(r.Threshold)),
			Body: template.HTML(timelines.String())},
		htmlreport.Section{Title: "Evidence", Body: template.HTML(`<pre class="wrap">` + template.HTMLEscapeString(text.String()) + `</pre>`)},
	)
	return p.Write(w)
}

// hostRow is one row of the host strip: a host signal, or the GC share.
type hostRow struct {
	name, unit string
	values     func(ir triage.InstanceReport) []float64
	// floor is the least scale of the row (hostTops: the largest value
	// of any instance, at least floor), so that a flat row stays flat.
	floor float64
}

// hostRows are the rows under each timeline: the host signals in the
// writers' order, then the collector's share of the process's CPU.
func hostRows(r *triage.Report) []hostRow {
	var rows []hostRow
	for sig := triage.HostSignal(0); sig < triage.NumHostSignals; sig++ {
		rows = append(rows, hostRow{name: sig.String(), unit: "s/step", floor: r.Threshold.Seconds(),
			values: func(ir triage.InstanceReport) []float64 { return ir.HostSteps[sig] }})
	}
	return append(rows, hostRow{name: "gc-share", unit: "of the CPU", floor: triage.GCShareRise,
		values: func(ir triage.InstanceReport) []float64 { return ir.GCShare }})
}

// hostTops is each host row's scale, common to every instance.
func hostTops(r *triage.Report) []float64 {
	rows := hostRows(r)
	tops := make([]float64, len(rows))
	for k, row := range rows {
		tops[k] = row.floor
		for _, ir := range r.Instances {
			for _, v := range row.values(ir) {
				if v > tops[k] && !math.IsInf(v, 0) {
					tops[k] = v
				}
			}
		}
		if !(tops[k] > 0) {
			tops[k] = 1
		}
	}
	return tops
}

// hostRowHeight is the height of one row of the host strip: a label line
// and the bars under it.
const hostRowHeight, hostLabel = 24.0, 11.0

// hostStrip draws, under an instance's timeline (from y0) and on its
// steps, the host signals and the GC share per step, one row each, with
// the instance's bad steps shaded: why beside when.
func hostStrip(b *strings.Builder, r *triage.Report, ir triage.InstanceReport, tops []float64, y0 float64) {
	rows := hostRows(r)
	n := float64(len(ir.Signal))
	if n == 0 {
		n = 1
	}
	bw := svgWidth / n
	h := hostRowHeight * float64(len(rows))
	peer := indexSet(ir.Peer)
	for _, i := range ir.Bad {
		bg := badColor
		if peer[i] {
			bg = peerColor
		}
		fmt.Fprintf(b, `<rect x="%.2f" y="%.0f" width="%.2f" height="%.0f" fill="%s" fill-opacity="%g"/>`, float64(i)*bw, y0, math.Max(bw, 1), h, bg, shadeOpacity)
	}
	for k, row := range rows {
		y := y0 + float64(k)*hostRowHeight
		vals := row.values(ir)
		label := fmt.Sprintf("%s, %s (scale %s)", row.name, row.unit, hostValue(row, tops[k]))
		if vals == nil {
			label = row.name + ": absent"
		}
		fmt.Fprintf(b, `<text x="0" y="%.0f" font-size="10" fill="#333">%s</text>`, y+9, template.HTMLEscapeString(label))
		fmt.Fprintf(b, `<line x1="0" x2="%.0f" y1="%.2f" y2="%.2f" stroke="#ccc"/>`, svgWidth, y+hostRowHeight-0.5, y+hostRowHeight-0.5)
		span := hostRowHeight - hostLabel - 1
		for i, v := range vals {
			if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
				continue
			}
			bh := math.Max(0.5, math.Min(v/tops[k], 1)*span)
			fmt.Fprintf(b, `<rect class="hostbar" x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"><title>%s %s %s</title></rect>`,
				float64(i)*bw, y+hostRowHeight-1-bh, math.Max(bw*0.9, 0.5), bh, hostColor,
				r.Start.Add(r.Step*time.Duration(i)).UTC().Format("01-02 "+r.ClockLayout()), row.name, hostValue(row, v))
		}
	}
}

// hostValue formats a value of a host row: seconds, or a share in %.
func hostValue(row hostRow, v float64) string {
	if row.name == "gc-share" {
		return triage.Pct(v)
	}
	return triage.Sec(v) + " s"
}

// scaleTop is the timelines' common top: twice the threshold, or the
// worst step.
func scaleTop(r *triage.Report) float64 {
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

// timeline draws one instance's steps as an inline SVG: the signal, and
// under it the host strip (hostStrip) on the same steps.
func timeline(r *triage.Report, ir triage.InstanceReport, top float64, tops []float64) template.HTML {
	var b strings.Builder
	n := float64(len(ir.Signal))
	if n == 0 {
		n = 1
	}
	bw := svgWidth / n
	strip := svgHeight + 18
	total := strip + hostRowHeight*float64(len(tops))
	fmt.Fprintf(&b, `<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s: the signal, the host signals and the GC share per step">`,
		svgWidth, total, svgWidth, total, template.HTMLEscapeString(ir.Name))
	fmt.Fprintf(&b, `<rect width="%.0f" height="%.0f" fill="#f6f6f6"/>`, svgWidth, svgHeight)
	bad, peer, held := indexSet(ir.Bad), indexSet(ir.Peer), indexSet(ir.Held)
	for _, i := range ir.Bad {
		bg := badColor
		if peer[i] {
			bg = peerColor
		}
		fmt.Fprintf(&b, `<rect x="%.2f" y="0" width="%.2f" height="%.0f" fill="%s" fill-opacity="%g"/>`, float64(i)*bw, math.Max(bw, 1), svgHeight, bg, shadeOpacity)
	}
	for i, v := range ir.Signal {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		h := math.Max(0, math.Min(v/top, 1)) * svgHeight
		fill, rule := signalColor, ""
		switch {
		case peer[i]:
			fill, rule = peerColor, " bad by the peer rule"
		case held[i]:
			fill, rule = badColor, " bad: held"
		case bad[i]:
			fill, rule = badColor, " bad: over the threshold"
		}
		fmt.Fprintf(&b, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"><title>%s %s%s</title></rect>`,
			float64(i)*bw, svgHeight-h, math.Max(bw*0.9, 0.5), h, fill,
			r.Start.Add(r.Step*time.Duration(i)).UTC().Format("01-02 "+r.ClockLayout()), triage.Ms(v), rule)
	}
	y := svgHeight - r.Threshold.Seconds()/top*svgHeight
	fmt.Fprintf(&b, `<line x1="0" x2="%.0f" y1="%.2f" y2="%.2f" stroke="#000" stroke-dasharray="4 3"/>`, svgWidth, y, y)
	fmt.Fprintf(&b, `<text x="0" y="%.0f" font-size="11">%s</text>`, svgHeight+12, r.Start.UTC().Format("2006-01-02 "+r.ClockLayout()))
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="11" text-anchor="end">%s UTC</text>`, svgWidth, svgHeight+12, r.End.UTC().Format("2006-01-02 "+r.ClockLayout()))
	hostStrip(&b, r, ir, tops, strip)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// verdictHTML is the verdict's line, its next step and its warnings.
var verdictHTML = template.Must(template.New("verdict").Parse(`<p class="lead verdict">{{.Line}}</p>
{{with .Next}}<p><b>Next:</b> {{.}}</p>{{end}}`))

// instanceHTML heads one instance's timeline.
var instanceHTML = template.Must(template.New("instance").Parse(`<h3>{{.Name}}: {{len .Bad}} bad step(s) of {{.DataSteps}}{{with .Peer}} ({{len .}} by the peer rule){{end}}{{with .Held}} ({{len .}} held){{end}}</h3>
`))
