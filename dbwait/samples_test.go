package dbwait_test

import (
	"bytes"
	"encoding/json"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/latscope/latscope/dbwait"
	"github.com/latscope/latscope/hostsig"
	"github.com/latscope/latscope/pglog"
	"github.com/latscope/latscope/tracein"
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
// real samples with a steal episode added (steal cannot be produced on
// this machine): /proc/stat steal rises by the difference of one network
// statement in the interval where it waited. That statement, and only
// statements whose sampled interval holds the rise, become steal.
func TestStealOnRecordedSamples(t *testing.T) {
	const cond = "proxy"
	samples := traceSamples(t, cond)
	before := analyse(t, cond, dbwait.Options{})
	var target dbwait.Query
	for _, q := range before.Queries {
		if q.Verdict == dbwait.Network {
			target = q
			break
		}
	}
	if target.Verdict != dbwait.Network {
		t.Fatal("no network statement in the proxy capture")
	}
	at := lastAtOrBefore(samples, target.Start) // steal rises between samples at and at+1
	steal := target.Outside
	for i := at + 1; i < len(samples); i++ {
		samples[i].Steal += steal
	}
	after := analyseWithSamples(t, cond, samples)
	stole := 0
	for i, q := range after.Queries {
		was := before.Queries[i]
		a, b := lastAtOrBefore(samples, q.Start), firstAtOrAfter(samples, q.End)
		want := was.Verdict
		if was.Verdict != dbwait.Inside && a >= 0 && b < len(samples) && a <= at && at < b && steal >= q.Outside/2 {
			want = dbwait.Steal
		}
		if q.Verdict != want {
			t.Errorf("query at %v: %v, want %v (before: %v)", q.Start, q.Verdict, want, was.Verdict)
		}
		if q.Verdict == dbwait.Steal {
			stole++
			if q.Evidence.Host.Steal != steal {
				t.Errorf("evidence steal %v, want the added %v", q.Evidence.Host.Steal, steal)
			}
		}
	}
	if stole == 0 {
		t.Error("the steal rise classified nothing as steal")
	}
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
			if again[i].Mono != got[i].Mono || again[i].PID != got[i].PID || again[i].Steal != got[i].Steal {
				t.Fatalf("sample %d changed: %+v -> %+v", i, got[i], again[i])
			}
		}
	})
}
