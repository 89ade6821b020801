package fleet

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestExportHeld writes the series of a lab run that --hold keeps up:
// LATSCOPE_FLEET_EXPORT="URL FROM TO FILE [ADDR=NAME ...]" (times RFC
// 3339); FILE is gzipped OpenMetrics for internal/triage's tests.
func TestExportHeld(t *testing.T) {
	spec := strings.Fields(os.Getenv("LATSCOPE_FLEET_EXPORT"))
	if len(spec) < 4 {
		t.Skip("LATSCOPE_FLEET_EXPORT=\"URL FROM TO FILE [ADDR=NAME ...]\" exports a held lab run's series")
	}
	from, err := time.Parse(time.RFC3339, spec[1])
	if err != nil {
		t.Fatal(err)
	}
	to, err := time.Parse(time.RFC3339, spec[2])
	if err != nil {
		t.Fatal(err)
	}
	rename := map[string]string{}
	for _, kv := range spec[4:] {
		if a, n, ok := strings.Cut(kv, "="); ok {
			rename[a] = n
		}
	}
	var om bytes.Buffer
	if err := ExportOpenMetrics(context.Background(), spec[0], Job, from, to, rename, &om); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(om.Bytes())
	zw.Close()
	if err := os.WriteFile(spec[3], gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bytes of OpenMetrics, %d gzipped", om.Len(), gz.Len())
}
