package dbwait_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/pglog"
	"github.com/latscope/latscope/internal/report/dbwaitreport"
	"github.com/latscope/latscope/internal/tracein"
)

// traceSamples decodes the host samples a capture's service logged into
// its trace.
func traceSamples(t testing.TB, cond string) []hostsig.Sample {
	t.Helper()
	r, err := tracein.NewReader(cond, bytes.NewReader(loadCapture(t, cond).trace))
	if err != nil {
		t.Fatal(err)
	}
	var out []hostsig.Sample
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == tracein.KindLog && ev.Name == hostsig.LogCategory {
			s, err := hostsig.ParseLog(ev.Message)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
	}
}

// samplesFile writes samples in the samples-file format, every other line
// as a JSON string (both forms are accepted), with a comment and a blank
// line.
func samplesFile(t testing.TB, samples []hostsig.Sample) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("# host samples\n\n")
	for i, s := range samples {
		text, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			text, _ = json.Marshal(string(text))
		}
		b.Write(text)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// analyseWithSamples joins a capture using samples given apart from the
// trace (its own logged samples ignored).
func analyseWithSamples(t testing.TB, cond string, samples []hostsig.Sample) *dbwait.Result {
	t.Helper()
	c := loadCapture(t, cond)
	a := dbwait.New(dbwait.Options{NoTraceSamples: true})
	feedTrace(t, a, cond, c.trace)
	if err := dbwait.ReadSamples("samples.txt", bytes.NewReader(samplesFile(t, samples)), a.Sample); err != nil {
		t.Fatal(err)
	}
	if err := dbwait.FeedPGLog(a, pglog.NewReader(bytes.NewReader(c.pglog))); err != nil {
		t.Fatal(err)
	}
	r, err := a.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSamplesFileSameAsTrace: the recorded samples, written to a samples
// file and read back, classify every statement as the trace's own do.
func TestSamplesFileSameAsTrace(t *testing.T) {
	for _, cond := range conditions {
		t.Run(cond, func(t *testing.T) {
			want := analyse(t, cond, dbwait.Options{})
			got := analyseWithSamples(t, cond, traceSamples(t, cond))
			if got.Host.InTrace || got.Host.Samples != want.Host.Samples {
				t.Errorf("host: %d samples (in trace %v), want %d from the file", got.Host.Samples, got.Host.InTrace, want.Host.Samples)
			}
			for i, q := range got.Queries {
				if w := want.Queries[i]; q.Verdict != w.Verdict || q.Outside != w.Outside {
					t.Errorf("query %d: %v %v, want %v %v", i, q.Verdict, q.Outside, w.Verdict, w.Outside)
				}
			}
		})
	}
}

// TestStealOnRecordedSamples tests the steal rule on the proxy capture's
// real samples (steal cannot be produced on this machine), with the CPU
// count they were recorded on (2) and with it unknown, as in files
// recorded before hostsig kept it.
//
// A trickle, 10 ms ticks in two sampling intervals out of every four
// (50 ms/s of steal, more than this VM's trickle in a busy hour; 0-20 ms
// per 100-200 ms interval), turns nothing into steal, although the old
// rule (machine steal ≥ half the difference) took the statements of the
// 200 ms intervals that hold two ticks.
//
// An episode, the whole VM descheduled for one network statement's
// difference (steal rises by 2 × the difference, in 10 ms ticks, in the
// interval where it waited), turns that statement into steal, and only
// the statements whose sampled interval holds the rise and whose trace has
// an event-free stretch of half their difference (a stolen process emits
// no events; an idle wait looks the same, which is why the steal counter
// must confirm it). A statement of the same interval without such a
// stretch stays network.
func TestStealOnRecordedSamples(t *testing.T) {
	const cond, tick = "proxy", 10 * time.Millisecond
	recorded := traceSamples(t, cond)
	before := analyse(t, cond, dbwait.Options{})
	for _, q := range before.Queries {
		if q.Evidence.Host != nil && q.Evidence.Host.Steal != 0 {
			t.Fatalf("the proxy capture already has steal (+%v at %v): the test adds its own", q.Evidence.Host.Steal, q.Start)
		}
	}
	withCPUs := func(n int) []hostsig.Sample {
		s := append([]hostsig.Sample(nil), recorded...)
		for i := range s {
			s[i].CPUs = n
		}
		return s
	}

	for _, n := range []int{2, 0} {
		t.Run(fmt.Sprintf("trickle/cpus=%d", n), func(t *testing.T) {
			samples := withCPUs(n)
			var added time.Duration
			for i := range samples {
				if i%4 == 1 || i%4 == 2 { // ticks in pairs of intervals, then two without
					added += tick
				}
				samples[i].Steal += added
			}
			oldRule := 0
			after := analyseWithSamples(t, cond, samples)
			for i, q := range after.Queries {
				was := before.Queries[i]
				if q.Verdict != was.Verdict {
					t.Errorf("query at %v: %v, want %v as without steal (%s)", q.Start, q.Verdict, was.Verdict, dbwaitreport.Evidence(q.Evidence))
				}
				if h := q.Evidence.Host; was.Verdict == dbwait.Network && h.Steal >= q.Outside/2 {
					oldRule++
				}
			}
			if oldRule == 0 {
				t.Error("the trickle tipped no statement under the old rule either: it tests nothing")
			}
			t.Logf("%d network statements the old rule would have called steal", oldRule)
		})
	}

	// The target: a network statement with an event-free stretch of half
	// its difference, sharing its sampled interval with one without.
	gapped := func(q dbwait.Query) bool { return 2*q.Evidence.Gap >= q.Outside }
	interval := func(s []hostsig.Sample, q dbwait.Query) (int, int) {
		return lastAtOrBefore(s, q.Start), firstAtOrAfter(s, q.End)
	}
	var target dbwait.Query
	found := false
	for _, q := range before.Queries {
		if q.Verdict != dbwait.Network || !gapped(q) {
			continue
		}
		a, b := interval(recorded, q)
		for _, o := range before.Queries {
			if oa, ob := interval(recorded, o); o.Verdict == dbwait.Network && !gapped(o) && oa == a && ob == b {
				target, found = q, true
			}
		}
		if found {
			break
		}
	}
	if !found {
		t.Fatal("no network statement with an event-free stretch shares its interval with one without")
	}
	rise := (2*target.Outside + tick - 1) / tick * tick // both vCPUs lost for the difference, in whole ticks
	for _, n := range []int{2, 0} {
		t.Run(fmt.Sprintf("episode/cpus=%d", n), func(t *testing.T) {
			samples := withCPUs(n)
			at := lastAtOrBefore(samples, target.Start) // steal rises between samples at and at+1
			for i := at + 1; i < len(samples); i++ {
				samples[i].Steal += rise
			}
			after := analyseWithSamples(t, cond, samples)
			stole, kept := 0, 0
			for i, q := range after.Queries {
				was := before.Queries[i]
				a, b := interval(samples, q)
				holds := a >= 0 && b < len(samples) && a <= at && at < b
				enough := rise >= q.Outside // n unknown: the whole difference
				if n > 0 {
					enough = 2*rise >= time.Duration(n)*q.Outside // steal per CPU ≥ half the difference
				}
				want := was.Verdict
				switch {
				case was.Verdict != dbwait.Inside && holds && enough && gapped(q):
					want = dbwait.Steal
				case was.Verdict == dbwait.Network && holds && enough:
					kept++ // enough steal, but no stall in the trace
				}
				if q.Verdict != want {
					t.Errorf("query at %v: %v, want %v (before: %v; %s)", q.Start, q.Verdict, want, was.Verdict, dbwaitreport.Evidence(q.Evidence))
				}
				if q.Verdict == dbwait.Steal {
					stole++
					if h := q.Evidence.Host; h.Steal != rise || h.CPUs != n {
						t.Errorf("evidence steal %v over %d CPUs, want the added %v over %d", h.Steal, h.CPUs, rise, n)
					}
				}
			}
			if i := indexOf(after.Queries, target); i < 0 || after.Queries[i].Verdict != dbwait.Steal {
				t.Errorf("the target at %v is not steal", target.Start)
			}
			if stole == 0 || kept == 0 {
				t.Errorf("%d statements became steal and %d of the rise's interval stayed network; want some of each", stole, kept)
			}
			t.Logf("steal +%v in one interval: %d statements steal, %d without an event-free stretch stayed network", rise, stole, kept)
		})
	}
}

// indexOf finds q in qs by its start.
func indexOf(qs []dbwait.Query, q dbwait.Query) int {
	for i := range qs {
		if qs[i].Start == q.Start && qs[i].G == q.G {
			return i
		}
	}
	return -1
}

func lastAtOrBefore(s []hostsig.Sample, t tracein.Time) int {
	return sort.Search(len(s), func(i int) bool { return tracein.Time(s[i].Mono) > t }) - 1
}

func firstAtOrAfter(s []hostsig.Sample, t tracein.Time) int {
	return sort.Search(len(s), func(i int) bool { return tracein.Time(s[i].Mono) >= t })
}

func TestReadSamplesErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"mono=1 wall=2\n", "samples.txt: line 1: parse latscope.host log: no pid"},
		{"# ok\n\"unterminated\n", "samples.txt: line 2: not a JSON string"},
		{"mono=1 wall=2 pid=3\nmono=x wall=2 pid=3\n", "samples.txt: line 2: parse latscope.host log: mono"},
	} {
		err := dbwait.ReadSamples("samples.txt", strings.NewReader(tc.in), func(hostsig.Sample) {})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadSamples(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

// FuzzReadSamples: any input is read or refused, never a panic; what is
// read re-encodes to text that reads back the same.
func FuzzReadSamples(f *testing.F) {
	s := traceSamples(f, "quota")
	f.Add(samplesFile(f, s[:3]))
	f.Add([]byte("mono=1 wall=2 pid=3 no.proc=\"gone\"\n"))
	f.Add([]byte("\"mono=1 wall=2 pid=3\"\n# x\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var got []hostsig.Sample
		if err := dbwait.ReadSamples("fuzz", bytes.NewReader(in), func(s hostsig.Sample) { got = append(got, s) }); err != nil {
			return
		}
		var again []hostsig.Sample
		if err := dbwait.ReadSamples("again", bytes.NewReader(samplesFile(t, got)), func(s hostsig.Sample) { again = append(again, s) }); err != nil {
			t.Fatalf("re-encoded samples do not read back: %v", err)
		}
		if len(again) != len(got) {
			t.Fatalf("%d samples read back, want %d", len(again), len(got))
		}
		for i := range got {
			if again[i].Mono != got[i].Mono || again[i].PID != got[i].PID || again[i].Steal != got[i].Steal || again[i].CPUs != got[i].CPUs {
				t.Fatalf("sample %d changed: %+v -> %+v", i, got[i], again[i])
			}
		}
	})
}
