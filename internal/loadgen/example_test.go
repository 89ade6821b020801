package loadgen_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/latscope/latscope/internal/loadgen"
)

// ExampleRun runs a short closed-model load, drives a progress count from
// the result stream, keeps the results as JSON lines, and closes the report.
func ExampleRun() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()

	opts := loadgen.DefaultOptions
	opts.URL, opts.Clients = srv.URL, 4
	opts.Warmup, opts.Duration = 50*time.Millisecond, 200*time.Millisecond

	var rep loadgen.Report
	enc := loadgen.NewJSONEncoder(io.Discard) // e.g. a results file
	done := 0
	err := loadgen.Run(context.Background(), opts, func(r loadgen.Result) {
		done++ // a progress bar would redraw here, at most every few ms
		rep.Add(&r)
		enc.Encode(&r)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	rep.Close()
	// internal/report/loadreport prints rep, as `latscope load` does.
	fmt.Fprintln(os.Stdout, done == rep.Requests+rep.Warmup, rep.Codes[200] == rep.Requests, rep.RPS > 0)
	// Output: true true true
}
