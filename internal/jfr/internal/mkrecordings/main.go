// Command mkrecordings records the JVM recordings that the fast tier of
// packages jfr, java and cmd/latscope reads, into internal/jfr/testdata/rec: real
// recordings of the programs in the repository (internal/jfr/testdata/Probe.java,
// Shop.java and Burst.java, internal/jfr/testdata/LibDemo.java and LibEdge.java),
// each with its ground truth beside it (NAME.json: what the program was
// configured to do, its own counts and timers, the host's load) and what
// the JDK's `jfr print --json` gave for it (NAME.*.print.jsonl.gz: the
// events as jfr.Print decodes them, one JSON object a line), which the
// binary reader is compared with event by event. internal/jfr/testdata/README.md
// lists them.
//
// From the repository's top, on a host as quiet as can be had:
//
//	go run ./internal/jfr/internal/mkrecordings           # all of them (about a minute)
//	go run ./internal/jfr/internal/mkrecordings probe     # one set: probe, shop, lib, edge, churn
//
// then `go test -update -run JFR ./cmd/latscope/` for the CLI's goldens on
// them (read the diff), and update the figures of internal/jfr/testdata/README.md.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/jfr/churntest"
	"github.com/latscope/latscope/internal/jfr/jfrtest"
	"github.com/latscope/latscope/java"
)

// CompareEvents are the event types the binary reader is compared on: what
// the analysis reads, the Java library's events, and a few more with other
// field types. The manifest of each recording names them.
var CompareEvents = append(slices.Clone(jfr.Events),
	"latscope.Request", "latscope.TaskSubmit", "latscope.TaskRun", "latscope.TaskWait",
	"jdk.ThreadStart", "jdk.ThreadEnd", "jdk.GarbageCollection", "jdk.ObjectAllocationSample", "jdk.ClassLoad")

// Truth, Print and Host are jfrtest's.
type (
	Truth = jfrtest.Truth
	Print = jfrtest.Print
	Host  = jfrtest.Host
)

var out string

func main() {
	flag.Parse()
	out = filepath.Join(jfrtest.Source(), "testdata", "rec")
	if err := os.MkdirAll(out, 0o755); err != nil {
		log.Fatal(err)
	}
	sets := map[string]func(context.Context, string) error{"probe": probe, "shop": shop, "lib": lib, "edge": edge, "churn": churn, "svc": svc,
		"svc-jcmd":  func(ctx context.Context, dir string) error { return svcRuns(ctx, dir, "svc-jcmd") },
		"svc-40-w8": func(ctx context.Context, dir string) error { return svcRuns(ctx, dir, "svc-40-w8") },
		"reprint":   reprint}
	names := flag.Args()
	if len(names) == 0 {
		names = []string{"probe", "shop", "lib", "edge", "churn", "svc"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, n := range names {
		f, ok := sets[n]
		if !ok {
			log.Fatalf("no set %q: want probe, shop, lib, edge, churn, svc, svc-jcmd, svc-40-w8 or reprint", n)
		}
		dir, err := os.MkdirTemp("", "mkrecordings-")
		if err != nil {
			log.Fatal(err)
		}
		log.Printf("%s: recording (load %s)", n, jfrtest.LoadAvg())
		err = f(ctx, dir)
		os.RemoveAll(dir)
		if err != nil {
			log.Fatalf("%s: %v", n, err)
		}
	}
	if err := pack(); err != nil {
		log.Fatal(err)
	}
}

// GzipOver is the size over which a kept recording is kept gzipped
// (NAME.jfr.gz; jfrtest.Kept unpacks it).
const GzipOver = 500 << 10

// pack gzips the kept recordings over GzipOver.
func pack() error {
	recs, _ := filepath.Glob(filepath.Join(out, "*.jfr"))
	for _, r := range recs {
		b, err := os.ReadFile(r)
		if err != nil {
			return err
		}
		if len(b) <= GzipOver {
			os.Remove(r + ".gz")
			continue
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(b)
		if err := zw.Close(); err != nil {
			return err
		}
		if err := os.WriteFile(r+".gz", buf.Bytes(), 0o644); err != nil {
			return err
		}
		if err := os.Remove(r); err != nil {
			return err
		}
		log.Printf("%s: %d bytes, kept gzipped (%d bytes)", filepath.Base(r), len(b), buf.Len())
	}
	return nil
}

func jdk() string {
	o, _ := exec.Command("java", "-version").CombinedOutput()
	l, _, _ := strings.Cut(string(o), "\n")
	return strings.TrimSpace(l)
}

func host(before string) Host {
	return Host{Recorded: time.Now().UTC().Truncate(time.Second), CPUs: runtime.NumCPU(), LoadBefore: before, LoadAfter: jfrtest.LoadAvg(), JDK: jdk()}
}

// keep copies src to out/name.
func keep(src, name string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, name), b, 0o644)
}

// printed writes jfr print's events of out/rec as out/file, gzipped JSON
// lines of jfr.Event.
func printed(ctx context.Context, rec, file string, depth int, events []string) (Print, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	enc := json.NewEncoder(zw)
	n := 0
	err := jfr.Print(ctx, filepath.Join(out, rec), jfr.PrintOptions{StackDepth: depth, Events: events}, func(ev *jfr.Event) error {
		n++
		return enc.Encode(ev)
	})
	if err != nil {
		return Print{}, err
	}
	if err := zw.Close(); err != nil {
		return Print{}, err
	}
	return Print{File: file, StackDepth: depth, Events: events, Count: n}, os.WriteFile(filepath.Join(out, file), buf.Bytes(), 0o644)
}

// reprint prints every kept recording again with the JDK's jfr tool, at
// each kept print's stack depth and event types, adding the types the
// analysis reads (jfr.Events) that the recording declares and the print
// lacked: for an event type or field the readers gained after the
// recording was made. The recordings themselves are not touched.
func reprint(ctx context.Context, dir string) error {
	truths, _ := filepath.Glob(filepath.Join(out, "*.json"))
	for _, tf := range truths {
		name := strings.TrimSuffix(filepath.Base(tf), ".json")
		var t Truth
		b, err := os.ReadFile(tf)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &t); err != nil {
			return fmt.Errorf("%s: %w", tf, err)
		}
		path, err := jfrtest.Kept(name, dir)
		if err != nil {
			return err
		}
		rec, err := jfr.ReadRecording(path)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		rel, err := filepath.Rel(out, path) // printed reads out/rec
		if err != nil {
			return err
		}
		declared := map[string]bool{}
		for _, c := range rec.Chunks {
			for _, n := range c.Types {
				declared[n] = true
			}
		}
		for i, pr := range t.Prints {
			events := slices.Clone(pr.Events)
			// prints of the library's events only stay so
			if events != nil && slices.Contains(events, "jdk.ExecutionSample") {
				for _, typ := range jfr.Events {
					if declared[typ] && !slices.Contains(events, typ) {
						events = append(events, typ)
					}
				}
			}
			p, err := printed(ctx, rel, pr.File, pr.StackDepth, events)
			if err != nil {
				return fmt.Errorf("%s: %w", pr.File, err)
			}
			log.Printf("%s: %d → %d events", pr.File, pr.Count, p.Count)
			t.Prints[i] = p
		}
		if err := writeTruth(name, t); err != nil {
			return err
		}
	}
	return nil
}

func writeTruth(name string, t Truth) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // commands keep their "&"
	enc.SetIndent("", "  ")
	if err := enc.Encode(t); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, name+".json"), b.Bytes(), 0o644)
}

// Probe runs twice. The run kept from the JVM's start is short (a 2 s
// warm-up, then a 1.5 s jcmd recording that rotates its chunks and lowers
// its thresholds for a while); the run kept after warm-up starts its jcmd
// recording past jvm.WarmupGap after the JVM's start (so it has no warm-up
// finding) and lasts 3 s. Of each run one recording is kept: a recording
// from the start of the second run would be over 700 KB (three chunks of
// ~100 KB of metadata each, and 10 s of events).
var probeRuns = []struct {
	name           string
	warmup, after  time.Duration
	fromStart      bool // keep the recording from the JVM's start, else the jcmd one
	depth3, allTyp bool // the extra print variants
}{
	{"probe-start", 2 * time.Second, 1500 * time.Millisecond, true, true, false},
	{"probe-after", 10500 * time.Millisecond, 3 * time.Second, false, false, true},
}

// probeOverrides keep the recording from the JVM's start small: the
// analysis reads none of the events disabled.
var probeOverrides = append(slices.Clone(jfrtest.DefaultOverrides), probeSlim...)

var probeSlim = func() []string {
	var s []string
	for _, e := range []string{"ObjectAllocationSample", "BooleanFlag", "LongFlag", "UnsignedLongFlag", "IntFlag", "UnsignedIntFlag", "DoubleFlag", "StringFlag",
		"ModuleExport", "ModuleRequire", "SystemProcess", "InitialSecurityProperty", "InitialEnvironmentVariable", "InitialSystemProperty", "NativeLibrary",
		"PromoteObjectInNewPLAB", "PromoteObjectOutsidePLAB", "GCPhaseParallel", "ClassLoaderStatistics"} {
		s = append(s, "jdk."+e+"#enabled=false")
	}
	return s
}()

func probe(ctx context.Context, dir string) error {
	for _, pr := range probeRuns {
		before := jfrtest.LoadAvg()
		d := filepath.Join(dir, pr.name)
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
		run, err := jfrtest.Record(ctx, jfrtest.Options{Dir: d, Warmup: pr.warmup, After: pr.after, Overrides: probeOverrides})
		if err != nil {
			return err
		}
		h := host(before)
		rec := run.AfterWarmup
		if pr.fromStart {
			rec = run.FromStart
		}
		if err := keep(rec, pr.name+".jfr"); err != nil {
			return err
		}
		if err := keep(run.Results, pr.name+".jsonl"); err != nil {
			return err
		}
		n, parts, err := probeOwn(run.Results)
		if err != nil {
			return err
		}
		t := Truth{Recording: pr.name + ".jfr", Program: "internal/jfr/testdata/Probe.java", Results: pr.name + ".jsonl", Host: h,
			Command: fmt.Sprintf("java -XX:StartFlightRecording:filename=start.jfr,settings=profile,%s Probe %s.jsonl %d; once ready: jcmd PID JFR.start name=latscope settings=profile settings=internal/jfr/latscope.jfc duration=%dms filename=after.jfr; kept: %s",
				strings.Join(probeOverrides, ","), pr.name, pr.warmup.Milliseconds(), pr.after.Milliseconds(), map[bool]string{true: "start.jfr", false: "after.jfr"}[pr.fromStart]),
			Config: map[string]any{"warmup_ms": pr.warmup.Milliseconds(), "jcmd_duration_ms": pr.after.Milliseconds(), "overrides": probeOverrides,
				"workers": 3, "design_min_ms": map[string]float64{"upstream": 50, "db": 20, "sleep": 5, "park": 5, "cpu": 5}, "pool": 1},
			Own: map[string]any{"requests": n, "mean_ms": parts, "jvm_started": run.JVMStarted.UTC()}}
		variants := [][2]any{{jfr.DefaultStackDepth, false}}
		if pr.depth3 {
			variants = append(variants, [2]any{3, false})
		}
		if pr.allTyp {
			variants = append(variants, [2]any{jfr.DefaultStackDepth, true})
		}
		for _, v := range variants {
			depth, all := v[0].(int), v[1].(bool)
			evs, file := CompareEvents, fmt.Sprintf("%s.d%d.print.jsonl.gz", pr.name, depth)
			if all {
				evs, file = nil, fmt.Sprintf("%s.all.print.jsonl.gz", pr.name)
			}
			p, err := printed(ctx, pr.name+".jfr", file, depth, evs)
			if err != nil {
				return err
			}
			t.Prints = append(t.Prints, p)
		}
		if err := writeTruth(pr.name, t); err != nil {
			return err
		}
	}
	return nil
}

// probeOwn averages Probe's own timings over all its requests (ms).
func probeOwn(path string) (int, map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	sum, n := map[string]float64{}, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct {
			Lat   int64            `json:"latency_ns"`
			Parts map[string]int64 `json:"probe_ns"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return 0, nil, err
		}
		n++
		sum["latency"] += float64(l.Lat)
		for k, v := range l.Parts {
			sum[k] += float64(v)
		}
	}
	for k := range sum {
		sum[k] = round3(sum[k] / float64(n) / 1e6)
	}
	return n, sum, sc.Err()
}

func round3(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 3, 64), 64)
	return v
}

// ShopN is the requests each of Shop's clients sends.
const ShopN = 15

func shop(ctx context.Context, dir string) error {
	before := jfrtest.LoadAvg()
	run, err := jfrtest.RecordShop(ctx, jfrtest.ShopOptions{Dir: dir, N: ShopN, Overrides: jfrtest.DefaultOverrides})
	if err != nil {
		return err
	}
	h := host(before)
	if err := keep(run.Recording, "shop.jfr"); err != nil {
		return err
	}
	if err := keep(run.Results, "shop.jsonl"); err != nil {
		return err
	}
	reqs, err := jfrtest.ReadShop(run.Results)
	if err != nil {
		return err
	}
	type route struct {
		Requests int                `json:"requests"`
		MeanMs   map[string]float64 `json:"mean_ms"`
	}
	routes := map[string]*route{}
	for _, r := range reqs {
		rt := routes[r.Route]
		if rt == nil {
			rt = &route{MeanMs: map[string]float64{}}
			routes[r.Route] = rt
		}
		rt.Requests++
		rt.MeanMs["latency"] += float64(r.Latency)
		for k, v := range r.Parts {
			rt.MeanMs[k] += float64(v)
		}
	}
	for _, rt := range routes {
		for k, v := range rt.MeanMs {
			rt.MeanMs[k] = round3(v / float64(rt.Requests) / 1e6)
		}
	}
	t := Truth{Recording: "shop.jfr", Program: "internal/jfr/testdata/Shop.java with the Java library (java/)", Results: "shop.jsonl", Host: h,
		Command: "java -cp LIB -XX:StartFlightRecording:settings=profile," + strings.Join(jfrtest.DefaultOverrides, ",") + ",filename=shop.jfr Shop shop.jsonl 15",
		Config: map[string]any{"n": ShopN, "requests": map[string]int{"/serial": ShopN, "/fanout": ShopN, "/helper": ShopN, "/pool": 2 * ShopN},
			"configured_ms": map[string]float64{"serial sleep": 10, "serial upstream": 40, "serial park": 5, "serial cpu": 5, "fanout upstream": 30, "fanout sleep": 10,
				"helper a": 10, "helper b": 20, "helper e": 15, "pool sleep": 10},
			"overrides": jfrtest.DefaultOverrides},
		Own: map[string]any{"routes": routes}}
	pr, err := printed(ctx, "shop.jfr", "shop.d1024.print.jsonl.gz", jfr.DefaultStackDepth, CompareEvents)
	if err != nil {
		return err
	}
	t.Prints = append(t.Prints, pr)
	return writeTruth("shop", t)
}

// LibN is the requests LibDemo makes.
const LibN = 8

// libProgram builds the library and runs internal/jfr/testdata/PROG.java against
// it under a recording from the JVM's start into out/name.jfr; it returns
// the program's output.
func libProgram(ctx context.Context, dir, prog, name string, args ...string) (string, error) {
	javac, err := java.Javac()
	if err != nil {
		return "", err
	}
	classes, err := java.Build(ctx, java.BuildOptions{Dir: dir, Javac: javac})
	if err != nil {
		return "", err
	}
	src := filepath.Join(jfrtest.Source(), "testdata", prog+".java")
	if o, err := exec.CommandContext(ctx, javac, "-cp", classes, "-d", classes, src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("javac %s: %v: %s", src, err, o)
	}
	rec := filepath.Join(dir, name+".jfr")
	cmd := append([]string{"-cp", classes, "-XX:StartFlightRecording:settings=profile,filename=" + rec, prog}, args...)
	o, err := exec.CommandContext(ctx, filepath.Join(filepath.Dir(javac), "java"), cmd...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("java %s: %v: %s", prog, err, o)
	}
	return string(o), keep(rec, name+".jfr")
}

func lib(ctx context.Context, dir string) error {
	before := jfrtest.LoadAvg()
	if _, err := libProgram(ctx, dir, "LibDemo", "lib", strconv.Itoa(LibN)); err != nil {
		return err
	}
	t := Truth{Recording: "lib.jfr", Program: "internal/jfr/testdata/LibDemo.java with the Java library (java/)", Host: host(before),
		Command: "java -cp LIB -XX:StartFlightRecording:settings=profile,filename=lib.jfr LibDemo 8",
		Config: map[string]any{"requests": LibN, "route": "/demo", "tasks_per_request": 3, "min_request_ms": 60, "min_task_ms": 5,
			"traceparent": "00-%032x-00f067aa0ba902b7-01 of the request's number, 1 to n", "executor_thread": "demo-executor"}}
	pr, err := printed(ctx, "lib.jfr", "lib.d1024.print.jsonl.gz", jfr.DefaultStackDepth, CompareEvents)
	if err != nil {
		return err
	}
	t.Prints = append(t.Prints, pr)
	return writeTruth("lib", t)
}

func edge(ctx context.Context, dir string) error {
	before := jfrtest.LoadAvg()
	o, err := libProgram(ctx, dir, "LibEdge", "edge")
	if err != nil {
		return err
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(o), "\n") {
		if !strings.HasPrefix(l, "[") { // JVM notes
			lines = append(lines, l)
		}
	}
	t := Truth{Recording: "edge.jfr", Program: "internal/jfr/testdata/LibEdge.java with the Java library (java/)", Host: host(before),
		Command: "java -cp LIB -XX:StartFlightRecording:settings=profile,filename=edge.jfr LibEdge",
		Config:  map[string]any{"requests": 1, "tasks": 4, "checks": 6},
		Own:     map[string]any{"output": lines}}
	pr, err := printed(ctx, "edge.jfr", "edge.d64.print.jsonl.gz", 64, []string{"latscope.Request", "latscope.TaskSubmit", "latscope.TaskRun", "latscope.TaskWait"})
	if err != nil {
		return err
	}
	t.Prints = append(t.Prints, pr)
	return writeTruth("edge", t)
}

// ChurnLength is how long each run of Burst lasts.
const ChurnLength = 3 * time.Second

func churn(ctx context.Context, dir string) error {
	classes, err := churntest.Compile(ctx, dir)
	if err != nil {
		return err
	}
	for _, mode := range []string{"burst", "batch"} {
		before := jfrtest.LoadAvg()
		o := churntest.Options{Mode: mode, Length: ChurnLength}
		run, err := churntest.Record(ctx, classes, dir, mode, o)
		if err != nil {
			return err
		}
		h := host(before)
		if err := keep(run.Recording, mode+".jfr"); err != nil {
			return err
		}
		d := churntest.DefaultOptions
		t := Truth{Recording: mode + ".jfr", Program: "internal/jfr/testdata/Burst.java", Host: h,
			Command: fmt.Sprintf("java -XX:StartFlightRecording:filename=%s.jfr,settings=profile,settings=internal/jfr/churntest/churn.jfc Burst %s %d %d %d %d %d",
				mode, mode, ChurnLength.Milliseconds(), d.Every.Microseconds(), d.Batch, d.Work, d.Parallelism),
			Config: map[string]any{"mode": mode, "length_ms": ChurnLength.Milliseconds(), "every_us": d.Every.Microseconds(), "batch": d.Batch,
				"work": d.Work, "parallelism": d.Parallelism, "sampling_period_ms": 1, "churn": mode == "burst"},
			Own: map[string]any{"events": run.Events, "cpu_ns": run.CPU.Nanoseconds(), "wall_ns": run.Wall.Nanoseconds(), "cpu_per_event_ns": run.CPUPerEvent().Nanoseconds()}}
		pr, err := printed(ctx, mode+".jfr", mode+".d1024.print.jsonl.gz", jfr.DefaultStackDepth, append(slices.Clone(jfr.Events), jfr.ChurnEvents...))
		if err != nil {
			return err
		}
		t.Prints = append(t.Prints, pr)
		if err := writeTruth(mode, t); err != nil {
			return err
		}
	}
	return nil
}

// SvcRuns are the runs of internal/jfr/testdata/Svc.java kept: 8 clients with the
// CPU-bound lock (the recording predict and the CPU checks read), the same
// with the lock's hashing moved out of it (compare's after), and 40 clients
// (the saturating concurrency whose throughput predict must meet), and 40
// clients recorded with jcmd JFR.start 12 s into the load (the recorder's
// own start-up stalls it), and 40 clients on 8 of the server's workers
// instead of 32 (the change compare judges with workers=8).
var SvcRuns = []struct {
	Name    string
	Clients int
	Mode    string
	Workers int // the server's threads; 0 for Svc's 32
}{{"svc", 8, "locked", 0}, {"svc-fixed", 8, "fixed", 0}, {"svc-40", 40, "locked", 0}, {"svc-jcmd", 40, "locked", 0}, {"svc-40-w8", 40, "locked", 8}}

func svc(ctx context.Context, dir string) error { return svcRuns(ctx, dir) }

// svcRuns records the runs of SvcRuns named (all of them without names).
func svcRuns(ctx context.Context, dir string, only ...string) error {
	for _, r := range SvcRuns {
		if len(only) > 0 && !slices.Contains(only, r.Name) || len(only) == 0 && r.Name == "svc-jcmd" {
			continue // svc-jcmd only by name: whether JFR.start's stall lands in it depends on the host
		}
		before := jfrtest.LoadAvg()
		o := jfrtest.DefaultSvc
		o.Dir, o.Name, o.Clients, o.Mode, o.Workers, o.Nice = filepath.Join(dir, r.Name), r.Name, r.Clients, r.Mode, r.Workers, os.Geteuid() == 0
		if r.Name == "svc-jcmd" { // started as an operator does, into a loaded service
			o.Jcmd, o.Run, o.Delay = true, 17*time.Second, 12*time.Second
		}
		if err := os.MkdirAll(o.Dir, 0o755); err != nil {
			return err
		}
		run, err := jfrtest.RecordSvc(ctx, o)
		if err != nil {
			return err
		}
		h := host(before)
		if err := keep(run.Recording, r.Name+".jfr"); err != nil {
			return err
		}
		rec, err := jfr.ReadRecording(run.Recording)
		if err != nil {
			return err
		}
		// keep the requests within a second of the recording (of the
		// 40-client run only its summary: the throughput predict must meet)
		if r.Clients == 40 {
		} else if err := keepWithin(run.Results, r.Name+".jsonl.gz", rec.Start().Add(-time.Second).UnixNano(), rec.End().Add(time.Second).UnixNano()); err != nil {
			return err
		}
		reqs, err := jfrtest.ReadSvc(run.Results)
		if err != nil {
			return err
		}
		var n int
		var cpu, lockCPU, lock, db, lat float64
		for _, q := range reqs {
			if q.Start < rec.Start().UnixNano() || q.Start > rec.End().UnixNano() {
				continue
			}
			n++
			cpu += float64(q.CPU)
			lockCPU += float64(q.LockCPU)
			lock += float64(q.Lock)
			db += float64(q.DB)
			lat += float64(q.Latency)
		}
		per := func(x float64) float64 { return round3(x / float64(max(n, 1)) / 1e6) }
		from, to := int(o.Delay.Seconds()), int((o.Delay + o.Length).Seconds())
		t := Truth{Recording: r.Name + ".jfr", Program: "internal/jfr/testdata/Svc.java with the Java library (java/)", Results: r.Name + ".jsonl.gz", Host: h,
			Command: run.Command,
			Config: map[string]any{"clients": r.Clients, "mode": r.Mode, "run_s": o.Run.Seconds(), "recorded_from_s": o.Delay.Seconds(), "recorded_s": o.Length.Seconds(),
				"etag_kb": 1024, "lock_kb": 2048, "db_ms": 6, "pool": 6, "workers": cmp.Or(r.Workers, 32), "nodelay": true},
			Own: map[string]any{"per_second": run.Summary.PerSecond, "throughput_recorded_rps": round3(run.Summary.Throughput(from, to)),
				"client_ns_per_second": run.Summary.ClientNs, "client_mean_recorded_ms": round3(run.Summary.ClientMean(from, to)),
				"requests_in_recording": n, "mean_ms": map[string]float64{"latency": per(lat), "cpu": per(cpu), "lock_cpu": per(lockCPU), "lock": per(lock), "db": per(db)}}}
		if r.Clients == 40 {
			t.Results = ""
		}
		// the library's events (a full print of a run is over 500 KB); of
		// the 8 workers' run, whose events are of the same kinds, only the
		// requests at depth 1, to keep the set under TestKeptRecordings' 4 MB
		file, depth, events := r.Name+".d64.print.jsonl.gz", 64, []string{"latscope.Request", "latscope.TaskRun", "latscope.Hold"}
		if r.Workers > 0 {
			file, depth, events = r.Name+".d1.print.jsonl.gz", 1, []string{"latscope.Request"}
		}
		pr, err := printed(ctx, r.Name+".jfr", file, depth, events)
		if err != nil {
			return err
		}
		t.Prints = append(t.Prints, pr)
		if err := writeTruth(r.Name, t); err != nil {
			return err
		}
	}
	return nil
}

// keepWithin copies the lines of Svc's results whose start lies in
// [from, to] to out/name.
func keepWithin(src, name string, from, to int64) error {
	reqs, err := jfrtest.ReadSvc(src)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var kept []string
	for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if reqs[i].Start >= from && reqs[i].Start <= to {
			kept = append(kept, l)
		}
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(strings.Join(kept, "\n") + "\n"))
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, name), buf.Bytes(), 0o644)
}
