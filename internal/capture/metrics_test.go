package capture

import (
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
)

var textFmt = expfmt.NewFormat(expfmt.TypeTextPlain)

func TestParseCPUSeconds(t *testing.T) {
	tests := []struct {
		name, in string
		want     float64
		err      string
	}{
		{"counter", "# HELP process_cpu_seconds_total CPU.\n# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 12.5\n", 12.5, ""},
		{"among others", "go_goroutines 7\nprocess_cpu_seconds_total 0.03\nprocess_open_fds 9\n", 0.03, ""},
		{"untyped", "process_cpu_seconds_total 3\n", 3, ""},
		{"absent", "go_goroutines 7\n", 0, "no process_cpu_seconds_total"},
		{"empty", "", 0, "no process_cpu_seconds_total"},
		{"two series", "process_cpu_seconds_total{pid=\"1\"} 1\nprocess_cpu_seconds_total{pid=\"2\"} 2\n", 0, "2 series"},
		{"negative", "process_cpu_seconds_total -1\n", 0, "non-negative"},
		{"NaN", "process_cpu_seconds_total NaN\n", 0, "non-negative"},
		{"garbage", "process_cpu_seconds_total twelve\n", 0, "metrics:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCPUSeconds(strings.NewReader(tt.in), textFmt)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("= %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func FuzzParseCPUSeconds(f *testing.F) {
	f.Add("process_cpu_seconds_total 12.5\n")
	f.Add("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1e3\n")
	f.Add("process_cpu_seconds_total{a=\"b\"} 1\nprocess_cpu_seconds_total{a=\"c\"} 2\n")
	f.Add("go_goroutines 7\n")
	f.Add("process_cpu_seconds_total NaN\n")
	f.Fuzz(func(t *testing.T, in string) {
		v, err := ParseCPUSeconds(strings.NewReader(in), textFmt)
		if err == nil && !(v >= 0) {
			t.Fatalf("accepted %v", v)
		}
	})
}
