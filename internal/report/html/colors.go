package htmlreport

import "github.com/latscope/latscope/internal/frame"

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
