package jfr_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/jfr/jfrtest"
	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/java"
)

// compareEvents are the event types the binary reader is compared on: what
// the analysis reads, the Java library's events, and a few more with other
// field types.
var compareEvents = append(slices.Clone(jfr.Events),
	"latscope.Request", "latscope.TaskSubmit", "latscope.TaskRun", "latscope.TaskWait",
	"jdk.ThreadStart", "jdk.ThreadEnd", "jdk.GarbageCollection", "jdk.ObjectAllocationSample", "jdk.ClassLoad")

// TestBinaryMatchesPrint reads the kept recordings (internal/jfr/testdata/rec) with
// the binary reader and requires the events the JDK's `jfr print --json`
// gave for them when they were recorded (kept beside them), field for
// field, in the same order: every kept print, at each stack depth and
// selection of types it was made with.
func TestBinaryMatchesPrint(t *testing.T) {
	t.Parallel()
	truths, _ := filepath.Glob(filepath.Join(jfrtest.KeptDir(), "*.json"))
	if len(truths) == 0 {
		t.Fatal("no kept recordings in internal/jfr/testdata/rec (go run ./internal/jfr/internal/mkrecordings)")
	}
	prints := 0
	for _, tf := range truths {
		name := strings.TrimSuffix(filepath.Base(tf), ".json")
		tr := keptTruth(t, name)
		for _, pr := range tr.Prints {
			prints++
			t.Run(pr.File, func(t *testing.T) {
				t.Parallel()
				path := keptPath(t, name)
				want := keptPrint(t, pr.File)
				if len(want) != pr.Count {
					t.Fatalf("%s holds %d events, its truth says jfr print gave %d", pr.File, len(want), pr.Count)
				}
				o := jfr.PrintOptions{StackDepth: pr.StackDepth, Events: pr.Events}
				n, types := compareSources(t, path, o, func(fn func(*jfr.Event) error) error {
					for i := range want {
						if err := fn(&want[i]); err != nil {
							return err
						}
					}
					return nil
				})
				checkCompared(t, name, path, n, types, pr.Events)
			})
		}
	}
	if prints < 8 {
		t.Errorf("%d kept prints compared, want the 8 of internal/jfr/testdata/README.md at least", prints)
	}
}

// TestKeptRecordings: every truth names a kept recording and prints that
// exist, and the set stays small (issue #30: a few hundred KB each, a few
// MB in all; a recording over 500 KB is kept gzipped).
func TestKeptRecordings(t *testing.T) {
	t.Parallel()
	files, err := os.ReadDir(jfrtest.KeptDir())
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, f := range files {
		info, err := f.Info()
		if err != nil {
			t.Fatal(err)
		}
		total += info.Size()
		if info.Size() > 500<<10 {
			t.Errorf("%s: %d KB, over 500 KB", f.Name(), info.Size()>>10)
		}
		if name, ok := strings.CutSuffix(f.Name(), ".json"); ok {
			tr := keptTruth(t, name)
			if tr.Recording != name+".jfr" || len(tr.Prints) == 0 || tr.Host.JDK == "" {
				t.Errorf("%s: recording %q, %d prints, JDK %q", f.Name(), tr.Recording, len(tr.Prints), tr.Host.JDK)
			}
			for _, p := range append([]string{tr.Results}, func() (s []string) {
				for _, p := range tr.Prints {
					s = append(s, p.File)
				}
				return
			}()...) {
				if _, err := os.Stat(filepath.Join(jfrtest.KeptDir(), p)); p != "" && err != nil {
					t.Errorf("%s: %v", f.Name(), err)
				}
			}
		}
	}
	t.Logf("%d files, %d KB", len(files), total>>10)
	if total > 4<<20 {
		t.Errorf("the kept recordings hold %d KB, over 4 MB", total>>10)
	}
}

// TestBinaryMatchesPrintLive records Probe and LibDemo live and compares the
// binary reader with the JDK's `jfr print` run now. Two readers of one file
// agree or not whatever the host's load: a tier.Busy test.
func TestBinaryMatchesPrintLive(t *testing.T) {
	tier.Busy(t)
	start, after := liveProbe(t)
	recs := map[string]string{"probe-start": start.Path, "probe-after": after.Path, "lib": libRecording(t)}
	for name, path := range recs {
		type variant struct {
			depth int
			all   bool // every event type, not only compareEvents
		}
		vs := []variant{{depth: jfr.DefaultStackDepth}}
		switch name {
		case "probe-start":
			vs = append(vs, variant{depth: 3}) // the cut of --stack-depth
		case "probe-after":
			vs = append(vs, variant{depth: jfr.DefaultStackDepth, all: true}) // short: every type
		}
		for _, v := range vs {
			t.Run(fmt.Sprintf("%s/depth %d/all types %v", name, v.depth, v.all), func(t *testing.T) {
				t.Parallel() // a comparison of two readers of one file: no timing in it
				o := jfr.PrintOptions{StackDepth: v.depth, Events: compareEvents}
				if v.all {
					o.Events = nil
				}
				n, types := compareSources(t, path, o, func(fn func(*jfr.Event) error) error {
					return jfr.Print(context.Background(), path, o, fn)
				})
				checkCompared(t, name, path, n, types, o.Events)
			})
		}
	}
}

// checkCompared checks that a comparison covered what it should: the
// chunks after the first, the Java library's events, the types the
// analysis reads.
func checkCompared(t *testing.T, name, path string, n int, types map[string]int, events []string) {
	t.Helper()
	rec, err := jfr.ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d events of %d types in %d chunk(s) the same from both sources", filepath.Base(path), n, len(types), len(rec.Chunks))
	if name == "probe-start" && len(rec.Chunks) < 2 {
		t.Errorf("%d chunk: starting the recording after warm-up should have started a new chunk, so that chunks after the first are compared too", len(rec.Chunks))
	}
	if name == "lib" || name == "edge" {
		for _, typ := range []string{"latscope.Request", "latscope.TaskSubmit", "latscope.TaskRun", "latscope.TaskWait"} {
			if types[typ] == 0 {
				t.Errorf("no %s event in the recording of the Java library's demo", typ)
			}
		}
	}
	if strings.HasPrefix(name, "svc") && (events == nil || slices.Contains(events, "latscope.Hold")) && types["latscope.Hold"] == 0 {
		t.Errorf("no latscope.Hold event in the recording of Svc")
	}
	// edge, svc-fixed, svc-40: printed for the library's events only
	libraryOnly := events != nil && !slices.Contains(events, "jdk.ExecutionSample")
	declared := map[string]bool{}
	for _, c := range rec.Chunks {
		for _, n := range c.Types {
			declared[n] = true
		}
	}
	for _, typ := range jfr.Events {
		if events != nil && !libraryOnly && declared[typ] && !slices.Contains(events, typ) {
			t.Errorf("%s is read by the analysis but not compared", typ)
		}
	}
	if name == "edge" || name == "lib" || libraryOnly {
		return // the library's demos, too short for a jdk.CPULoad (once a second)
	}
	for _, typ := range []string{"jdk.ExecutionSample", "jdk.ActiveSetting", "jdk.CPULoad", "jdk.JVMInformation"} {
		if types[typ] == 0 {
			t.Errorf("no %s event: the comparison does not cover it", typ)
		}
	}
}

// compareSources compares the binary reader's events of the recording at
// path with those ref gives (jfr print's, live or kept) and returns the
// number of events and the count by type.
func compareSources(t *testing.T, path string, o jfr.PrintOptions, ref func(fn func(*jfr.Event) error) error) (int, map[string]int) {
	t.Helper()
	var bin []jfr.Event
	if err := jfr.ReadBinary(context.Background(), path, o, func(ev *jfr.Event) error {
		bin = append(bin, *ev)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	i, bad, older := 0, 0, 0
	err := ref(func(ev *jfr.Event) error {
		types[ev.Type]++
		if i < len(bin) {
			if olderStack(&bin[i], ev) {
				older++ // compared without the stack below
				bin[i].Stack = ev.Stack
			}
			if diff := eventDiff(&bin[i], ev); diff != "" && bad < 5 {
				bad++
				t.Errorf("event %d (%s at %v): binary reader differs from jfr print: %s", i, ev.Type, ev.Start, diff)
			}
		}
		i++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if i != len(bin) {
		t.Errorf("binary reader: %d events, jfr print: %d", len(bin), i)
	}
	if older > 0 {
		t.Logf("%s: %d event(s) with a stack trace the binary reader found in the chunk before, which jfr print leaves empty", path, older)
	}
	return i, types
}

// olderStack tells whether a differs from b only in having a stack trace
// where b has none: an event written at a chunk's rotation that refers to
// a stack trace of the chunk before, which the binary reader resolves
// there and jfr print (JDK 17) leaves empty. Whether it happens depends on
// where the rotation falls.
func olderStack(a, b *jfr.Event) bool {
	if len(a.Stack) == 0 || len(b.Stack) != 0 {
		return false
	}
	x := *a
	x.Stack = b.Stack
	return eventDiff(&x, b) == ""
}

// eventDiff describes how a differs from b; "" if they are equal (times
// compared as instants).
func eventDiff(a, b *jfr.Event) string {
	var d []string
	if !a.Start.Equal(b.Start) {
		d = append(d, fmt.Sprintf("start %v vs %v", a.Start, b.Start))
	}
	if !a.JVMStart.Equal(b.JVMStart) {
		d = append(d, fmt.Sprintf("jvmStart %v vs %v", a.JVMStart, b.JVMStart))
	}
	x, y := *a, *b
	x.Start, y.Start, x.JVMStart, y.JVMStart = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if !reflect.DeepEqual(x, y) {
		d = append(d, fmt.Sprintf("\n  binary %+v\n  print  %+v", x, y))
	}
	return strings.Join(d, "; ")
}

// lib is the recording of the Java library's demo, made once.
var lib struct {
	once sync.Once
	path string
	err  error
}

// libRecording records testdata/LibDemo.java, which emits the four
// latscope.* events, and returns the recording's path.
func libRecording(t *testing.T) string {
	t.Helper()
	tier.Require(t, "recording LibDemo under JFR")
	lib.once.Do(func() {
		lib.path, lib.err = recordLib()
	})
	if lib.err != nil {
		t.Fatal(lib.err)
	}
	return lib.path
}

func recordLib() (string, error) {
	dir, err := os.MkdirTemp(recs.ProbeDir(), "lib-") // removed with the live recordings of Probe
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	classes, err := java.Build(ctx, java.BuildOptions{Dir: dir})
	if err != nil {
		return "", err
	}
	javac, err := java.Javac()
	if err != nil {
		return "", err
	}
	demo := filepath.Join(jfrSource(), "testdata", "LibDemo.java")
	if out, err := exec.CommandContext(ctx, javac, "-cp", classes, "-d", classes, demo).CombinedOutput(); err != nil {
		return "", fmt.Errorf("javac LibDemo.java: %v: %s", err, out)
	}
	rec := filepath.Join(dir, "lib.jfr")
	javaCmd := filepath.Join(filepath.Dir(javac), "java")
	if out, err := exec.CommandContext(ctx, javaCmd, "-cp", classes, "-XX:StartFlightRecording:settings=profile,filename="+rec,
		"LibDemo", strconv.Itoa(20)).CombinedOutput(); err != nil {
		return "", fmt.Errorf("java LibDemo: %v: %s", err, out)
	}
	return rec, nil
}

// jfrSource is the directory of package jfr.
func jfrSource() string {
	wd, _ := os.Getwd()
	return wd
}
