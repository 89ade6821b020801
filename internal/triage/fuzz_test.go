package triage

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/termsafe"
)

// FuzzDecodeRange feeds range-query answers to the decoder and what it
// decodes to the rules (the writers: triagereport.FuzzWriters): nothing panics, an error is one
// line that prints safely, and every value laid out on the step grid is a
// finite number or NaN (no value).
func FuzzDecodeRange(f *testing.F) {
	for _, s := range []string{
		matrixAnswer,
		`{"status":"success","warnings":["partial data"],"infos":["info"],"data":{"resultType":"matrix","result":[{"metric":{"job":"j","instance":"a"},"values":[[60,"+Inf"],[120,"NaN"],[180,"-Inf"],[240,"1e308"],[300,"-0.5"]]}]}}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"job":"j","instance":"a\u001b[2J"},"values":[[1e300,"0.1"],[-1e300,"0.2"],[60.5,"0.3"]]},{"metric":{},"values":[]}]}}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"job":"j","instance":"a","le":"0.05"},"values":[[60,"0.01"]],"histograms":[[60,{"count":"1","sum":"0.01","buckets":[[0,"0","0.1","1"]]}]]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[]}}`,
		`{"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected \"(\""}`,
		`{"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"}`,
		`{"status":"success","data":null}`,
		`<html><body>502 Bad Gateway</body></html>`,
		``,
	} {
		f.Add(uint8(0), []byte(s))
	}
	f.Add(uint8(1), []byte(`{"status":"error","errorType":"bad_data","error":"invalid parameter \"start\""}`))
	f.Add(uint8(2), []byte(`unauthorized`))
	statuses := []int{http.StatusOK, http.StatusBadRequest, http.StatusUnauthorized, http.StatusUnprocessableEntity, http.StatusServiceUnavailable}
	step := time.Minute
	fe := &fetcher{c: Config{Step: step}, r: promRange{Start: time.Unix(60, 0), End: time.Unix(600, 0), Step: step}}
	f.Fuzz(func(t *testing.T, st uint8, body []byte) {
		m, _, err := decodeRange(statuses[int(st)%len(statuses)], body)
		if err != nil {
			if !termsafe.Safe(err.Error()) {
				t.Fatalf("error %q does not print safely", err)
			}
			return
		}
		in := Input{Start: fe.r.Start.Add(-step), Step: step, Steps: int(fe.r.End.Sub(fe.r.Start)/step) + 1}
		for i, s := range m {
			if i == 8 {
				break
			}
			v := fe.values(s)
			for _, x := range v {
				if math.IsInf(x, 0) {
					t.Fatalf("series %d: value %v on the grid", i, x)
				}
			}
			in.Instances = append(in.Instances, InstanceSeries{Name: string(s.Metric["instance"]), Signal: v, NoDB95: v, Host: [NumHostSignals][]float64{Stall: v}})
		}
		if r := Analyze(in, Params{Threshold: 50 * time.Millisecond}); r == nil {
			t.Fatal("no report")
		}
	})
}
