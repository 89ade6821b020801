package demo

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/tier"
)

func TestCalibrate(t *testing.T) {
	tier.Timing(t)
	perMS := calibrate()
	if perMS < 1 {
		t.Fatalf("calibrate() = %d iterations per ms", perMS)
	}
	t.Logf("calibrated: %d SHA-256 iterations per ms of CPU", perMS)
}

func TestIterations(t *testing.T) {
	tests := []struct {
		perMS int
		work  time.Duration
		want  int
	}{
		{1000, time.Millisecond, 1000},
		{1000, 2 * time.Millisecond, 2000},
		{1000, 500 * time.Microsecond, 500},
		{1000, 0, 1},
		{3, 100 * time.Microsecond, 1},
	}
	for _, tt := range tests {
		if got := iterations(tt.perMS, tt.work); got != tt.want {
			t.Errorf("iterations(%d, %v) = %d, want %d", tt.perMS, tt.work, got, tt.want)
		}
	}
}

// TestThreadCPU checks that the thread clock advances with work and not with
// sleep: a sleep of 50 ms must add far less than 50 ms of CPU.
func TestThreadCPU(t *testing.T) {
	tier.Timing(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := threadCPU()
	cpuWork(20000)
	if threadCPU() <= before {
		t.Error("thread CPU time did not advance over 20000 hashes")
	}
	before = threadCPU()
	time.Sleep(50 * time.Millisecond)
	if used := threadCPU() - before; used > 25*time.Millisecond {
		t.Errorf("a 50 ms sleep used %v of thread CPU", used)
	}
}

func TestSharedSection(t *testing.T) {
	for _, fixed := range []bool{false, true} {
		var st sharedState
		sharedSection(&st, 10, fixed)
		sharedSection(&st, 10, fixed)
		if st.updates != 2 {
			t.Errorf("fixed=%v: %d updates, want 2", fixed, st.updates)
		}
		if !st.mu.TryLock() {
			t.Errorf("fixed=%v: lock still held after sharedSection", fixed)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	got := Config{UpstreamURL: "u", DBURL: "d"}.withDefaults()
	want := DefaultConfig
	want.UpstreamURL, want.DBURL = "u", "d"
	if got.Mode != want.Mode || got.PoolSize != want.PoolSize || got.UpstreamConns != want.UpstreamConns ||
		got.CPUWork != want.CPUWork || got.SharedWork != want.SharedWork || got.DBSleep != want.DBSleep {
		t.Errorf("withDefaults() = %+v, want %+v", got, want)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{DBURL: "d"}, "UpstreamURL"},
		{Config{UpstreamURL: "u"}, "DBURL"},
		{Config{UpstreamURL: "u", DBURL: "d", Mode: 7}, "invalid mode"},
	}
	for _, tt := range tests {
		_, err := New(t.Context(), tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) error = %v, want one naming %s", tt.cfg, err, tt.want)
		}
	}
	_, err := New(t.Context(), Config{UpstreamURL: "u", DBURL: "://bad", CPUIters: 1})
	if err == nil || !strings.Contains(err.Error(), "database URL") {
		t.Errorf("New with a bad DBURL: error %v", err)
	}
}
