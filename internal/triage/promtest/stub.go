package promtest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Stub answers every range query of the Prometheus HTTP API with body,
// but the counts of observations (their series absent, so that every step
// counts) and the label values with none: a server for the tests of
// triage's rules and writers that need one answer, not a fleet.
func Stub(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/values") {
			w.Write([]byte(`{"status":"success","data":[]}`))
			return
		}
		if r.ParseForm() == nil && strings.Contains(r.Form.Get("query"), "_count") {
			w.Write(NoResult(body))
			return
		}
		w.Write([]byte(body))
	}
}

// NoResult is the answer body with its result emptied (its warnings kept).
func NoResult(body string) []byte {
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		return []byte(body)
	}
	if d, ok := doc["data"].(map[string]any); ok {
		d["result"] = []any{}
	}
	b, _ := json.Marshal(doc)
	return b
}
