package fleet

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ExportedMetrics are the series ExportOpenMetrics keeps: the ones triage
// queries (docs/triage.md), as the agent names them.
var ExportedMetrics = []string{
	"latscope_request_duration_seconds",
	"latscope_db_call_duration_seconds",
	"latscope_request_outbound_seconds",
	"latscope_stall_seconds",
	"latscope_stalls",
	"latscope_cfs_throttled_seconds",
	"latscope_steal_seconds",
	"latscope_cpu_pressure_some_seconds",
	"latscope_go_gc_cpu_seconds",
	"latscope_go_user_cpu_seconds",
	"latscope_go_gc_cycles",
}

// ExportOpenMetrics writes the raw samples that Prometheus at base holds
// of the job's ExportedMetrics between from and to as OpenMetrics text
// (with the final "# EOF"), which `promtool tsdb create-blocks-from
// openmetrics` backfills: a real run's series, kept for triage's tests
// (internal/triage/promtest). rename maps instance labels to the names
// written (others are kept).
func ExportOpenMetrics(ctx context.Context, base, job string, from, to time.Time, rename map[string]string, w io.Writer) error {
	window := strconv.FormatInt(to.Sub(from).Milliseconds(), 10) + "ms"
	bw := bufio.NewWriter(w)
	for _, fam := range ExportedMetrics {
		kind, names := "counter", []string{fam + "_total"}
		if strings.HasSuffix(fam, "_duration_seconds") || fam == "latscope_request_outbound_seconds" {
			kind, names = "histogram", []string{fam + "_bucket", fam + "_count", fam + "_sum"}
		}
		fmt.Fprintf(bw, "# TYPE %s %s\n", fam, kind)
		for _, name := range names {
			q := fmt.Sprintf("%s{job=%q}[%s]", name, job, window)
			series, err := rangeSamples(ctx, base, q, to)
			if err != nil {
				return err
			}
			for _, s := range series {
				if n, ok := rename[s.Metric["instance"]]; ok {
					s.Metric["instance"] = n
				}
				labels := labelText(s.Metric)
				for _, v := range s.Values {
					ts, _ := v[0].(float64)
					val, _ := v[1].(string)
					fmt.Fprintf(bw, "%s{%s} %s %s\n", name, labels, val, strconv.FormatFloat(ts, 'f', 3, 64))
				}
			}
		}
	}
	fmt.Fprintf(bw, "# EOF\n")
	return bw.Flush()
}

// promSeries is one series of a matrix answer.
type promSeries struct {
	Metric map[string]string
	Values [][2]any
}

// rangeSamples evaluates the range-vector selector query at t: the raw
// samples of each series, sorted by labels.
func rangeSamples(ctx context.Context, base, query string, t time.Time) ([]promSeries, error) {
	q := url.Values{"query": {query}, "time": {strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/query?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status, Error string
		Data          struct {
			Result []promSeries
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("prometheus: %s: %w", query, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("prometheus: %s: %s", query, body.Error)
	}
	out := body.Data.Result
	sort.Slice(out, func(i, j int) bool { return labelText(out[i].Metric) < labelText(out[j].Metric) })
	return out, nil
}

// labelText writes labels as OpenMetrics does, sorted, without __name__.
func labelText(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != "__name__" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%q", k, m[k])
	}
	return b.String()
}
