package triage

import (
	"strings"
	"testing"
	"time"
)

// withOutbound adds to a synthetic fleet (synth) one route's outbound
// series per instance, with a peer label: outbound p95 of 5 ms, and rise
// seconds more in the bad steps. The recorded case of an upstream is
// fleet-upstream (TestFleetRecordings); this is the decision table alone.
func withOutbound(in Input, s synth, route, peer string, rise float64) Input {
	for k := range in.Instances {
		o := OutboundSeries{Route: route, Peer: peer, P95: make([]float64, in.Steps), Count: make([]float64, in.Steps)}
		for i := range in.Steps {
			o.P95[i], o.Count[i] = 0.005, 100
			if s.bad(k, i) {
				o.P95[i] += rise
			}
		}
		in.Instances[k].Outbound = append(in.Instances[k].Outbound, o)
	}
	return in
}

// TestDependency checks rule 3's dependency on synthetic fleets: the
// route and peer of an outbound dependency are named, and the next step
// fits the dependency.
func TestDependency(t *testing.T) {
	shared := func(_, i int) bool { return i >= 10 && i <= 12 || i == 30 }
	p := Params{Threshold: 50 * time.Millisecond, Signal: "request"}
	tests := []struct {
		name      string
		s         synth
		dbRises   bool // the DB-call p95 rises with the signal
		outRise   float64
		want      Dependency
		inNext    string
		notInNext string
	}{
		{"outbound, peer labelled", synth{instances: 3, steps: 60, bad: shared, noDBRises: true}, false, 0.085,
			DepOutbound, "latscope analyze --task 'GET /quote' SNAPSHOT", "dbwait"},
		{"database", synth{instances: 3, steps: 60, bad: shared}, true, 0,
			DepDatabase, "dbwait --pglog", "analyze"},
		{"both: the host", synth{instances: 3, steps: 60, bad: shared, noDBRises: true}, true, 0.085,
			DepHost, "latscope analyze SNAPSHOT", "dbwait"},
		{"every request, no dependency: the host", synth{instances: 3, steps: 60, bad: shared, noDBRises: true}, false, 0,
			DepHost, "latscope analyze SNAPSHOT", "dbwait"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := withOutbound(tt.s.input(), tt.s, "GET /quote", "quotes.internal:443", tt.outRise)
			for k := range in.Instances {
				s := &in.Instances[k]
				s.DBCall = make([]float64, in.Steps)
				for i := range in.Steps {
					s.DBCall[i] = 0.002
					if tt.dbRises && tt.s.bad(k, i) {
						s.DBCall[i] = 0.09
					}
				}
			}
			r := Analyze(in, p)
			v := r.Verdict
			if v.Scope != "shared" || v.Dependency != tt.want {
				t.Fatalf("scope %s, dependency %s (%s), want shared, %s", v.Scope, v.Dependency, r.Dependency.Reason, tt.want)
			}
			if !strings.Contains(v.Next, tt.inNext) || strings.Contains(v.Next, tt.notInNext) {
				t.Errorf("next %q: want %q, not %q", v.Next, tt.inNext, tt.notInNext)
			}
			if tt.want == DepOutbound {
				if v.Route != "GET /quote" || v.Peer != "quotes.internal:443" || !strings.Contains(v.Line, "GET /quote → quotes.internal:443") ||
					!strings.Contains(v.Next, "look at quotes.internal:443") || strings.Contains(v.Line, "the host or the process") {
					t.Errorf("route %q peer %q\nline %s\nnext %s", v.Route, v.Peer, v.Line, v.Next)
				}
			}
			if r.Unwatched != nil {
				t.Errorf("unwatched %+v with the request signal", r.Unwatched)
			}
		})
	}
}

// TestUnwatchedSaid checks that the DB-call signal says what it does not
// watch, even when nothing slowed, and names an outbound route that
// slowed while its DB calls did not.
func TestUnwatchedSaid(t *testing.T) {
	s := synth{instances: 3, steps: 60, bad: func(int, int) bool { return false }}
	in := s.input()
	for k := range in.Instances {
		in.Instances[k].Requests, in.Instances[k].NoDBCount = make([]float64, 60), make([]float64, 60)
		for i := range 60 {
			in.Instances[k].Requests[i], in.Instances[k].NoDBCount[i] = 300, 100
		}
	}
	r := Analyze(in, Params{Threshold: 50 * time.Millisecond})
	if u := r.Unwatched; u == nil || u.Share != 1.0/3 || u.Slowed != 0 || !strings.Contains(r.Verdict.Line, "not watched by the DB-call p95: requests without DB calls (33 % of the requests); none of them slowed") {
		t.Errorf("unwatched %+v, line %q", u, r.Verdict.Line)
	}
	slow := synth{instances: 3, steps: 60, bad: func(_, i int) bool { return i >= 20 && i < 30 }}
	in = withOutbound(in, slow, "GET /quote", "", 0.3)
	r = Analyze(in, Params{Threshold: 50 * time.Millisecond})
	if u := r.Unwatched; r.Verdict.Scope != "none" || len(u.Outbound) != 1 || u.Outbound[0].Steps != 30 || !strings.Contains(r.Verdict.Next, "--signal request") {
		t.Errorf("scope %s, unwatched %+v, next %q", r.Verdict.Scope, u, r.Verdict.Next)
	}
}

// TestUnknownSaidOnce: a thin route's verdict (the lab's thin phase, issue
// #35), whose outbound calls are too few per step to compare and whose
// requests without DB calls have no series, is unknown on both counts,
// and the text gives each label once: it printed "which dependency:
// which dependency: unknown".
func TestUnknownSaidOnce(t *testing.T) {
	s := synth{instances: 3, steps: 60, bad: func(_, i int) bool { return i >= 10 && i <= 13 }, noNoDB: true}
	in := withOutbound(s.input(), s, "GET /quote", "", 0.4)
	for k := range in.Instances {
		for i := range in.Instances[k].Outbound[0].Count {
			if s.bad(k, i) {
				in.Instances[k].Outbound[0].Count[i] = 10 // under the 20 a p95 needs
			}
		}
	}
	r := Analyze(in, Params{Threshold: 50 * time.Millisecond, Signal: "request"})
	if r.Dependency.Kind != DepUnknown || r.DBPath.Verdict != "unknown" {
		t.Fatalf("dependency %s, DB path %s: want both unknown", r.Dependency.Kind, r.DBPath.Verdict)
	}
	var text strings.Builder
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	for _, twice := range []string{"which dependency: which dependency:", "DB path or not: unknown"} {
		if strings.Contains(text.String(), "3. DB path or not (requests without DB calls, db=\"no\"): "+twice) || strings.Contains(text.String(), "   "+twice) {
			t.Errorf("text gives a label twice (%q):\n%s", twice, text.String())
		}
	}
	if !strings.Contains(text.String(), "   which dependency: unknown (") || !strings.Contains(text.String(), `db="no"): unknown (`) {
		t.Errorf("text:\n%s", text.String())
	}
}
