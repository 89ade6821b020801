package burst

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/tier"
)

// TestServiceModes: every mode processes every event it is handed.
func TestServiceModes(t *testing.T) {
	tier.Timing(t)
	for _, mode := range []Mode{Spawn, Pool, Fixed} {
		t.Run(mode.String(), func(t *testing.T) {
			svc, err := New(Config{Mode: mode, Procs: 4, Batch: 500, Work: 2})
			if err != nil {
				t.Fatal(err)
			}
			batch := make([]Event, 500)
			for range 4 {
				svc.Deliver(batch)
			}
			deadline := time.Now().Add(10 * time.Second)
			for svc.Stats().Events < 2000 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			svc.Close()
			st := svc.Stats()
			if st.Events != 2000 || st.Batches != 4 {
				t.Errorf("stats %+v: want 2000 events in 4 batches", st)
			}
			wantWorkers := map[Mode]int{Spawn: 0, Pool: 4, Fixed: FixedWorkers}[mode]
			if st.Workers != wantWorkers || st.Mode != mode {
				t.Errorf("workers %d mode %v, want %d %v", st.Workers, st.Mode, wantWorkers, mode)
			}
		})
	}
}

// TestServiceRun: the source delivers a batch per interval until cancelled.
func TestServiceRun(t *testing.T) {
	tier.Timing(t)
	svc, err := New(Config{Mode: Fixed, Batch: 10, Every: 5 * time.Millisecond, Work: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := svc.Run(ctx); err != nil {
		t.Fatal(err)
	}
	svc.Close()
	if st := svc.Stats(); st.Batches < 3 || st.Events != st.Batches*10 {
		t.Errorf("stats %+v: want several batches of 10, all processed", st)
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []Config{{Mode: 9}, {Procs: -1}, {Batch: -1}, {Every: -time.Second}, {Work: 2_000_000}, {Workers: -2}}
	for _, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v): no error", c)
		}
	}
	c := Config{Mode: Pool}.withDefaults()
	if c.Procs != 32 || c.Workers != 32 || c.Batch != DefaultConfig.Batch || c.Every != DefaultConfig.Every || c.Work != DefaultConfig.Work {
		t.Errorf("defaults %+v", c)
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range []Mode{Spawn, Pool, Fixed} {
		var got Mode
		b, _ := m.MarshalText()
		if err := got.UnmarshalText(b); err != nil || got != m {
			t.Errorf("%v: round trip %v, %v", m, got, err)
		}
	}
	if _, err := ParseMode("burst"); err == nil {
		t.Error("ParseMode(burst): no error")
	}
}

// TestCaptureParams: bad parameters are 400s; a second capture at once is
// a 409.
func TestCaptureParams(t *testing.T) {
	tier.Timing(t)
	svc, err := New(Config{Mode: Fixed, Batch: 10, Work: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	srv := httptest.NewServer(handler(svc))
	defer srv.Close()
	for _, q := range []string{"/profile", "/profile?seconds=0", "/profile?seconds=x", "/trace?seconds=1&hz=0", "/trace?seconds=1&hz=5000"} {
		resp, err := http.Get(srv.URL + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET %s: %s, want 400", q, resp.Status)
		}
	}
	var wg sync.WaitGroup
	codes := make(chan int, 2)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(srv.URL + "/profile?seconds=0.3")
			if err != nil {
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	wg.Wait()
	close(codes)
	seen := map[int]int{}
	for c := range codes {
		seen[c]++
	}
	if seen[http.StatusOK] != 1 || seen[http.StatusConflict] != 1 {
		t.Errorf("two concurrent profiles: status counts %v, want one 200 and one 409", seen)
	}
}

func TestMedianWindow(t *testing.T) {
	ws := []Window{{CPU: 300, Events: 100}, {CPU: 100, Events: 100}, {CPU: 200, Events: 100}}
	if m := medianWindow(ws); m.CPU != 200 {
		t.Errorf("median %+v", m)
	}
	if m := medianWindow(nil); m != (Window{}) {
		t.Errorf("median of none %+v", m)
	}
	if r := (Window{Events: 1000}).Resolution(100); r != 20_000 {
		t.Errorf("resolution %v ns, want two 10 ms ticks over 1000 events", r)
	}
}
