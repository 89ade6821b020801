package corpus

import (
	"testing"

	"github.com/latscope/latscope/internal/whatif"
)

// predictTol is where a prediction counts as a miss (docs/method.md §5,
// §11: latscope compare's threshold).
const predictTol = 0.05

// TestPredictionPairs checks a prediction against the change made for
// real: the before trace's what-if, predicted by the one engine
// (whatif.Evaluate), against the after trace's measured mean (latscope's,
// and the service's own timer around each request).
// With LATSCOPE_CORPUS_DIR set it judges that directory's recordings
// (corpusDir), skipping a pair it does not hold.
func TestPredictionPairs(t *testing.T) {
	t.Parallel()
	for _, pair := range []struct {
		before, after, spec string
	}{
		// issue #36: the default transport under 8 clients; before the fix
		// the adopted transport's read was the top term and this predicted
		// 58.9 ms against 41.6 measured.
		{"http-default-serial", "http-default-overlap", "overlap=callUpstream,callInventory"},
		// issue #36: the CPU of a frame, shrunk: pricing.Compute doing
		// half its rounds for real.
		{"gin-cpu", "gin-cpu-half", "scale=pricing.Compute:0.5"},
		// The same with a CPU burner per core, the pair recorded back to
		// back: the frame's CPU stretched by the host, and the running
		// time no sample saw (and its preemptions' runnable time) going
		// along with it (docs/method.md §3, "CPU by frame").
		{"gin-cpu-loaded", "gin-cpu-half-loaded", "scale=pricing.Compute:0.5"},
	} {
		t.Run(pair.before, func(t *testing.T) {
			t.Parallel()
			spec, err := whatif.ParseSpec(pair.spec)
			if err != nil {
				t.Fatal(err)
			}
			p := analyzePair(t, pair.before, pair.after, spec)
			res, g, after := p.res, p.g, p.after
			// The one engine (issue #36 §3), as analyze, compare and
			// predict use it: the queueing model where a queue is in play.
			ev, err := whatif.Evaluate(res, g.Name, whatif.Inputs{}, []whatif.Spec{spec})
			if err != nil {
				t.Fatal(err)
			}
			o := ev.Outcomes[0]
			pred := float64(o.Mean) / 1e6
			measured := p.gA.Latency.Mean / 1e6
			t.Logf("%s: before %.2f ms, predicted %.2f ms (%.2f–%.2f, %s: %s); after %.2f ms (latscope), %.2f ms (service's timer): %+.1f%%, %+.1f%%",
				pair.spec, g.Latency.Mean/1e6, pred, float64(o.Low)/1e6, float64(o.High)/1e6, o.Method, o.Why, measured, after.Server.MeanMS, 100*(pred/measured-1), 100*(pred/after.Server.MeanMS-1))
			for _, m := range []float64{measured, after.Server.MeanMS} {
				if d := pred/m - 1; d > predictTol || d < -predictTol {
					t.Errorf("%s predicted %.2f ms; the change made for real measured %.2f ms (%+.1f%%, tolerance 5%%)", pair.spec, pred, m, 100*d)
				}
			}
		})
	}
}
