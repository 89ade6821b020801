package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
)

// repRecord is a repetition's line in reps.jsonl: the throughputs at 40
// clients (predicted, measured, measured again) and at 8 (Svc).
type repRecord struct {
	Rep        int     `json:"rep"`
	Load       string  `json:"load"`
	Burn       int     `json:"burn"`
	LengthS    float64 `json:"length_s"`
	Continuous bool    `json:"continuous"`
	Predicted  float64 `json:"predicted_rps"`
	Measured   float64 `json:"measured_rps"`
	Again      float64 `json:"again_rps"`
	Svc        float64 `json:"svc_rps"`
}

// repeat is one repetition's throughputs at 40 clients: predicted from the
// 8-client recording, measured, and measured again.
type repeat struct{ predicted, measured, again float64 }

// summary says, over the repetitions, how often the prediction and the
// repeated measurement came within 10 % of the first measurement, their
// mean absolute errors, and an exact two-sided Wilcoxon signed-rank test of
// the prediction's absolute error against the repeat's, paired by
// repetition: whether the prediction is further from a measurement than a
// second measurement is.
func summary(rs []repeat) string {
	var within, againWithin int
	var sumE, sumA float64
	d := make([]float64, 0, len(rs))
	for _, r := range rs {
		e, a := math.Abs(r.predicted/r.measured-1), math.Abs(r.again/r.measured-1)
		if e <= 0.10 {
			within++
		}
		if a <= 0.10 {
			againWithin++
		}
		sumE += e
		sumA += a
		d = append(d, e-a)
	}
	n := float64(len(rs))
	w, p := signedRank(d)
	return fmt.Sprintf("within 10 %% of the first 40-client measurement: the prediction %d of %d, the measurement again %d of %d; mean absolute error %.1f %% against %.1f %%; "+
		"Wilcoxon signed-rank of the two, paired (exact, two-sided): W+ = %g, p = %.3f",
		within, len(rs), againWithin, len(rs), 100*sumE/n, 100*sumA/n, w, p)
}

// signedRank is the exact two-sided Wilcoxon signed-rank test of
// differences d against zero: W+ (the sum of the ranks of the positive
// differences; ties share their mean rank, zeros are dropped) and the
// share of the 2^n sign assignments whose W+ lies at least as far from
// its mean. n is at most 20.
func signedRank(d []float64) (w, p float64) {
	var nz []float64
	for _, x := range d {
		if x != 0 {
			nz = append(nz, x)
		}
	}
	m := len(nz)
	if m == 0 || m > 20 {
		return 0, 1
	}
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return math.Abs(nz[idx[a]]) < math.Abs(nz[idx[b]]) })
	rank := make([]float64, m)
	for i := 0; i < m; {
		j := i
		for j+1 < m && math.Abs(nz[idx[j+1]]) == math.Abs(nz[idx[i]]) {
			j++
		}
		for k := i; k <= j; k++ {
			rank[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	for i, x := range nz {
		if x > 0 {
			w += rank[i]
		}
	}
	mean := float64(m*(m+1)) / 4
	far, all := 0, 1<<m
	for s := range all {
		var ws float64
		for i := range m {
			if s&(1<<i) != 0 {
				ws += rank[i]
			}
		}
		if math.Abs(ws-mean) >= math.Abs(w-mean)-1e-9 {
			far++
		}
	}
	return w, float64(far) / float64(all)
}

// summarise prints the summary of the repetitions in reps.jsonl files.
func summarise(files []string) error {
	rs, err := readRepeats(files)
	if err != nil {
		return err
	}
	fmt.Println(summary(rs))
	return nil
}

// readRepeats reads the repetitions of reps.jsonl files.
func readRepeats(files []string) ([]repeat, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("-summary: no reps.jsonl file given")
	}
	var rs []repeat
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for i, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			var r repRecord
			if err := json.Unmarshal(l, &r); err != nil {
				return nil, fmt.Errorf("%s: line %d: %w", f, i+1, err)
			}
			if r.Measured <= 0 || r.Predicted <= 0 || r.Again <= 0 {
				return nil, fmt.Errorf("%s: line %d: want predicted_rps, measured_rps and again_rps over 0", f, i+1)
			}
			rs = append(rs, repeat{r.Predicted, r.Measured, r.Again})
		}
	}
	return rs, nil
}
