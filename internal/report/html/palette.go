package htmlreport

// The product's one palette: the colours of the wait kinds, of the series
// that are not about kinds, and of the verdicts. Every verdict has a
// colour no other verdict has (TestVerdictColorsDistinct); a verdict that
// is a wait kind (dbwait's network, runnable, unknown) takes the kind's.
// Reports, the lab's included, take their colours from here. The
// verdicts of checks and comparisons are the table classes good (pass),
// bad (fail) and inconclusive, coloured in page.css.

import (
	"regexp"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/frame"
)

// kindColors are the colours of goroutine states and wait kinds, the same
// in every chart.
var kindColors = [frame.NumKinds]string{
	frame.Running:   "#2e8b57",
	frame.Runnable:  "#e8a317",
	frame.Network:   "#2f6fb5",
	frame.Select:    "#7152c2",
	frame.ChanRecv:  "#9b6fd6",
	frame.ChanSend:  "#b896e3",
	frame.Sync:      "#d0393e",
	frame.Cond:      "#e377a8",
	frame.Sleep:     "#7d8a96",
	frame.Syscall:   "#1aa5b8",
	frame.GCAssist:  "#8c564b",
	frame.GC:        "#b08470",
	frame.System:    "#98a3ad",
	frame.Forever:   "#c3c9cf",
	frame.Preempted: "#a9a628",
	frame.Other:     "#aab0b6",
}

// unknownColor marks time the timelines could not explain.
const unknownColor = "#5b5b5b"

// KindColor returns the colour of a kind by its name as printed in reports
// ("network", "running", …); "unknown" and unrecognised names are grey.
func KindColor(kind string) string {
	if kind == "unknown" {
		return unknownColor
	}
	k, ok := frame.ParseKind(kind)
	if !ok {
		return unknownColor
	}
	return kindColors[k]
}

// Series colours for charts that are not about kinds.
const (
	colorWall     = "#2f6fb5"
	colorCPU      = "#e4572e"
	colorLatency  = "#4a7bb7"
	colorMarkP50  = "#1b1f24"
	colorMarkP99  = "#c0392b"
	colorMarkMean = "#6b7280"
)

// Palette is a sequence of distinguishable colours for caller-defined series.
var Palette = []string{"#2f6fb5", "#e4572e", "#2e8b57", "#7152c2", "#e8a317", "#1aa5b8", "#d0393e", "#8c564b"}

// dbwaitColors are the colours of dbwait's verdicts (where a DB span's
// time went), in every chart and table that draws them.
var dbwaitColors = [dbwait.NumVerdicts]string{
	dbwait.Inside:    "#2e8b57",
	dbwait.Throttled: "#d0393e",
	dbwait.Steal:     "#8c564b",
	dbwait.Paused:    "#7152c2",
	dbwait.Runnable:  kindColors[frame.Runnable],
	dbwait.Network:   kindColors[frame.Network],
	dbwait.DBCPU:     "#0f8b8d",
	dbwait.Mixed:     "#b8860b",
	dbwait.Unknown:   unknownColor,
}

// DBWaitColor returns the colour of a dbwait verdict; grey for one out of
// range.
func DBWaitColor(v dbwait.Verdict) string {
	if v >= dbwait.NumVerdicts {
		return unknownColor
	}
	return dbwaitColors[v]
}

// seriesColors are the series colours by the names SeriesColor takes.
var seriesColors = map[string]string{
	"wall": colorWall, "cpu": colorCPU, "latency": colorLatency,
	"p50": colorMarkP50, "p99": colorMarkP99, "mean": colorMarkMean,
}

// SeriesColor returns the colour of a series that is not about kinds, by
// name: "wall", "cpu" (CPU time or a share of it), "latency" (one value a
// request or a step), and the marks "p50", "p99", "mean"; grey for
// another name.
func SeriesColor(name string) string {
	if c, ok := seriesColors[name]; ok {
		return c
	}
	return unknownColor
}

// checkColors are the colours of the checks' verdicts, read from page.css
// (its table classes good, bad and inconclusive), so that a chart and a
// table give a verdict the same colour.
var checkColors = func() map[string]string {
	m := map[string]string{}
	for _, sub := range regexp.MustCompile(`table\.data \.(good|bad|inconclusive) \{ color: (#[0-9a-f]{6});`).FindAllStringSubmatch(pageCSS, -1) {
		m[sub[1]] = sub[2]
	}
	return m
}()

// CheckColor returns the colour of a check's verdict by its class:
// "good" (pass), "bad" (fail) or "inconclusive", as page.css colours the
// table classes; grey for another class.
func CheckColor(class string) string {
	if c, ok := checkColors[class]; ok {
		return c
	}
	return unknownColor
}
