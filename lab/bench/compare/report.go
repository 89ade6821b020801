package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	md "github.com/latscope/latscope/internal/report/markdown"
)

// summary is what the table shows of one tool's runs.
type summary struct {
	name       string
	ok         int
	median     time.Duration // of successful runs
	best       time.Duration
	cpu        time.Duration // median
	rss        int64         // max over runs
	mibps      float64       // from the median
	loadLo     float64
	loadHi     float64
	othersHi   float64
	failure    string
	failedWall time.Duration
}

func summarize(name string, ss []sample, size int64) summary {
	sum := summary{name: name, loadLo: 1e9, loadHi: -1}
	var walls, cpus []time.Duration
	for _, s := range ss {
		sum.rss = max(sum.rss, s.rss)
		sum.loadLo, sum.loadHi = min(sum.loadLo, s.load), max(sum.loadHi, s.load)
		sum.othersHi = max(sum.othersHi, s.others)
		if s.err != "" {
			sum.failure, sum.failedWall = s.err, s.wall
			continue
		}
		sum.ok++
		walls, cpus = append(walls, s.wall), append(cpus, s.cpu)
	}
	if sum.ok > 0 {
		slices.Sort(walls)
		slices.Sort(cpus)
		sum.median, sum.best, sum.cpu = walls[len(walls)/2], walls[0], cpus[len(cpus)/2]
		sum.mibps = float64(size) / (1 << 20) / sum.median.Seconds()
	}
	return sum
}

func find(sums []summary, name string) *summary {
	for i := range sums {
		if sums[i].name == name {
			return &sums[i]
		}
	}
	return nil
}

// report prints the table (Markdown) and the targets.
func report(w io.Writer, o Options, size int64, sums []summary) {
	order := "interleaved"
	if len(o.After) > 0 {
		order += "; " + strings.Join(o.After, ", ") + " after the others"
	}
	fmt.Fprintf(w, "\ntrace %s: %d bytes (%.1f MiB); %d run(s) per tool, %s; median wall time\n\n", o.Trace, size, float64(size)/(1<<20), o.Reps, order)
	tb := md.NewTable("tool", "MiB/s", "wall s (median / best)", "CPU s", "peak RSS MiB", "× "+o.Base+" (wall)", "× "+o.Base+" (CPU)").RightFrom(1)
	base := find(sums, o.Base)
	for _, s := range sums {
		if s.ok == 0 {
			tb.Row(s.name, "—", fmt.Sprintf("failed after %.1f", s.failedWall.Seconds()), "—", strconv.FormatInt(s.rss>>20, 10), "—", "—")
			continue
		}
		ratio, cpuRatio := "—", "—"
		if base != nil && base.ok > 0 {
			ratio = fmt.Sprintf("%.2f", s.median.Seconds()/base.median.Seconds())
			cpuRatio = fmt.Sprintf("%.2f", s.cpu.Seconds()/base.cpu.Seconds())
		}
		tb.Row(s.name, fmt.Sprintf("%.1f", s.mibps), fmt.Sprintf("%.2f / %.2f", s.median.Seconds(), s.best.Seconds()), fmt.Sprintf("%.2f", s.cpu.Seconds()), strconv.FormatInt(s.rss>>20, 10), ratio, cpuRatio)
	}
	io.WriteString(w, tb.String())
	var notes []string
	lo, hi, others := 1e9, -1.0, 0.0
	for _, s := range sums {
		lo, hi, others = min(lo, s.loadLo), max(hi, s.loadHi), max(others, s.othersHi)
		if s.failure != "" {
			notes = append(notes, fmt.Sprintf("%s failed: %s", s.name, s.failure))
		}
	}
	fmt.Fprintf(w, "\nload average (1 min) at run starts: %.2f–%.2f; other processes used up to %.2f cores during a run\n", lo, hi, others)
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	if o.Subject != "" {
		targets(w, o, size, sums)
	}
}

func targets(w io.Writer, o Options, size int64, sums []summary) {
	sub := find(sums, o.Subject)
	fmt.Fprintf(w, "\ntargets for %s:\n", o.Subject)
	if sub.ok == 0 {
		fmt.Fprintf(w, "  FAIL  it did not complete\n")
		return
	}
	if r := find(sums, o.Rival); r != nil {
		switch {
		case r.ok == 0:
			fmt.Fprintf(w, "  PASS  faster than %s (which failed: %s)\n", r.name, r.failure)
		default:
			fmt.Fprintf(w, "  %s  faster than %s: %.2fs vs %.2fs (%.1f× faster)\n", verdict(sub.median < r.median), r.name, sub.median.Seconds(), r.median.Seconds(), r.median.Seconds()/sub.median.Seconds())
		}
	}
	if b := find(sums, o.Base); b != nil && b.ok > 0 {
		ratio := sub.median.Seconds() / b.median.Seconds()
		fmt.Fprintf(w, "  %s  within %.1f× of %s: %.2f× its wall time (%.2f× its CPU time)\n", verdict(ratio <= o.Ratio), o.Ratio, b.name, ratio, sub.cpu.Seconds()/b.cpu.Seconds())
	}
	rss := fmt.Sprintf("peak RSS under %d MiB on a trace of ≥ %.0f MiB: %d MiB on %.0f MiB", o.RSS>>20, float64(o.Size)/(1<<20), sub.rss>>20, float64(size)/(1<<20))
	if size < o.Size {
		fmt.Fprintf(w, "  ----  %s (trace too small to judge; run with --big)\n", rss)
	} else {
		fmt.Fprintf(w, "  %s  %s\n", verdict(sub.rss < o.RSS), rss)
	}
}

func verdict(ok bool) string {
	return map[bool]string{true: "PASS", false: "FAIL"}[ok]
}
