package budget_test

import (
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/budget"
)

// TestParsePredictionFactor: a scale factor must be a finite number in
// range (scale=T:NaN predicted a mean of −7.8e12 ms).
func TestParsePredictionFactor(t *testing.T) {
	for _, c := range []struct {
		factor string
		ok     bool
	}{
		{"0", true}, {"0.5", true}, {"2", true}, {"1000", true},
		{"NaN", false}, {"nan", false}, {"Inf", false}, {"+Inf", false}, {"-Inf", false},
		{"1e11", false}, {"1000.5", false}, {"-0.5", false}, {"", false}, {"x", false}, {"0x1p-2", true},
	} {
		_, err := budget.ParsePrediction("scale=queryDB:" + c.factor)
		if (err == nil) != c.ok {
			t.Errorf("scale=queryDB:%s: err = %v, want ok=%v", c.factor, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "FACTOR a number from 0 to 1000") {
			t.Errorf("scale=queryDB:%s: error %q does not give the range", c.factor, err)
		}
	}
}

// TestParsePredictionOverlap: overlap takes two different terms.
func TestParsePredictionOverlap(t *testing.T) {
	for _, c := range []struct {
		spec, err string
	}{
		{"overlap=callUpstream,queryDB", ""},
		{"overlap=queryDB,queryDB", "cannot overlap itself"},
		{"overlap=a,b,c", "two terms"},
		{"overlap=a,", "two terms"},
		{"overlap=a", "two terms"},
	} {
		_, err := budget.ParsePrediction(c.spec)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: err = %v, want %q", c.spec, err, c.err)
		}
	}
}
