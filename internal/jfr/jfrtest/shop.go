package jfrtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/latscope/latscope/java"
)

// ShopOptions say how to record internal/jfr/testdata/Shop.java, the service
// instrumented with the Java library (java/).
type ShopOptions struct {
	Dir string // where to build and record; must exist
	N   int    // requests each client sends
	// Overrides are -XX:StartFlightRecording options after settings=profile.
	Overrides []string
}

// ShopRun is a finished run of Shop.
type ShopRun struct {
	Recording string // recorded from the JVM's start to its exit
	Results   string // Shop's own timings, one JSON line a request
}

// RecordShop builds the Java library and Shop and records a run of it.
func RecordShop(ctx context.Context, o ShopOptions) (*ShopRun, error) {
	javaCmd, err := jdkTool("java")
	if err != nil {
		return nil, err
	}
	javac, err := jdkTool("javac")
	if err != nil {
		return nil, err
	}
	classes, err := java.Build(ctx, java.BuildOptions{Dir: o.Dir, Javac: javac})
	if err != nil {
		return nil, err
	}
	if out, err := exec.CommandContext(ctx, javac, "-nowarn", "-cp", classes, "-d", classes, filepath.Join(Source(), "testdata", "Shop.java")).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("javac Shop.java: %w: %s", err, out)
	}
	r := &ShopRun{Recording: filepath.Join(o.Dir, "shop.jfr"), Results: filepath.Join(o.Dir, "shop.jsonl")}
	rec := append([]string{"settings=profile"}, o.Overrides...)
	rec = append(rec, "filename="+r.Recording)
	cmd := exec.CommandContext(ctx, javaCmd, "-cp", classes, "-XX:StartFlightRecording:"+strings.Join(rec, ","), "Shop", r.Results, strconv.Itoa(o.N))
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("java Shop: %w: %s", err, tail(string(out)))
	}
	return r, nil
}

// ShopRequest is one request as Shop timed it.
type ShopRequest struct {
	Route   string           `json:"route"`
	Latency int64            `json:"latency_ns"`
	Parts   map[string]int64 `json:"parts"`
}

// ReadShop reads Shop's results.
func ReadShop(path string) ([]ShopRequest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []ShopRequest
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r ShopRequest
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, r)
	}
	return out, nil
}
