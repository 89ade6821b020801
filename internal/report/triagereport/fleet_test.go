package triagereport

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/triage"
)

// fleetCase is one window of a real fleet run that package triage keeps
// (internal/triage/testdata/NAME.cases.json: triage's
// TestFleetRecordings), as far as triage's configuration goes.
type fleetCase struct {
	Name      string        `json:"name"`
	Signal    string        `json:"signal"`
	Start     time.Time     `json:"start"`
	End       time.Time     `json:"end"`
	Step      time.Duration `json:"step_ns"`
	Threshold time.Duration `json:"threshold_ns"`
	Route     string        `json:"route"`
}

// fleetReport runs triage over the window name of the recording rec.
func fleetReport(t *testing.T, rec, name string) *triage.Report {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "triage", "testdata", rec+".cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Cases []fleetCase }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	base := replay(t, rec)
	for _, c := range doc.Cases {
		if c.Name == name {
			r, err := triage.Run(context.Background(), triage.Config{URL: base, Job: "latscope-fleet", Start: c.Start, End: c.End, Step: c.Step, Threshold: c.Threshold, Signal: c.Signal, Route: c.Route})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
	}
	t.Fatalf("%s has no case %s", rec, name)
	return nil
}

// TestFleetWriters checks that the writers say what triage found in real
// fleet runs: the peer rule, the outbound dependency and its route, the
// GC evidence, a route not compared.
func TestFleetWriters(t *testing.T) {
	t.Run("peer rule", func(t *testing.T) {
		// instance A spinning, its DB calls far over its peers' and
		// mostly under the threshold
		r := fleetReport(t, "fleet-cases", "slow")
		text, js, page := write(t, r)
		a := instance(r, "a:8080")
		if !strings.Contains(text, "a:8080 (peer)") || !strings.Contains(js, `"rule": "threshold+peer"`) && !strings.Contains(js, `"rule": "peer"`) ||
			a == nil || len(a.Peer) == 0 || bars(page, peerColor) != len(a.Peer) || !strings.Contains(page, "by the peer rule") {
			t.Errorf("the peer rule is not named in the text, the JSON or the HTML")
		}
	})
	t.Run("outbound", func(t *testing.T) {
		// the upstream of GET /quote slowed for the whole fleet
		_, js, _ := write(t, fleetReport(t, "fleet-upstream", "upstream-request"))
		if !strings.Contains(js, `"dependency": "outbound"`) || !strings.Contains(js, `"route": "GET /quote"`) {
			t.Errorf("JSON does not name the dependency and its route")
		}
	})
	t.Run("gc", func(t *testing.T) {
		// instance A allocating: the collector's share of its CPU rose
		text, js, _ := write(t, fleetReport(t, "fleet-gc", "gc"))
		if !strings.Contains(text, "gc-share") || !strings.Contains(js, `"cause": "gc"`) || !strings.Contains(js, `"good_share"`) {
			t.Errorf("the GC evidence is not in the text or the JSON")
		}
	})
	t.Run("not compared", func(t *testing.T) {
		// GET /quote's clients started with the window: no baseline
		r := fleetReport(t, "fleet-upstream-late", "upstream-late")
		if _, js, _ := write(t, r); r.Verdict.Dependency == triage.DepUnknown && !strings.Contains(js, `"uncomparable": [`+"\n") {
			t.Errorf("JSON does not list the route not compared")
		}
	})
}
