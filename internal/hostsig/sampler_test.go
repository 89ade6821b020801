package hostsig

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/hostsig/internal/tier"
)

// burn spends about d of CPU on each of n goroutines.
func burn(n int, d time.Duration) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sum [32]byte
			for start := time.Now(); time.Since(start) < d; {
				sum = sha256.Sum256(sum[:])
			}
		}()
	}
	wg.Wait()
}

func rusageCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestSelfCPU checks the process CPU of the test process against getrusage, which the
// kernel computes from the same per-thread runtime. /proc truncates utime and stime to
// clock ticks each, so the sum may lag by up to two ticks.
func TestSelfCPU(t *testing.T) {
	tier.Timing(t)
	s, err := NewSampler(os.Getpid(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tick := time.Second / DefaultUserHZ
	var prev Sample
	for i := range 8 {
		burn(2, 15*time.Millisecond)
		before := rusageCPU(t)
		smp, err := s.Sample()
		if err != nil {
			t.Fatal(err)
		}
		after := rusageCPU(t)
		if cpu := smp.CPU(); cpu < before-2*tick || cpu > after {
			t.Errorf("sample %d: /proc CPU %v outside getrusage [%v - 2 ticks, %v]", i, cpu, before, after)
		}
		for src := range NumSources {
			if !smp.Has(src) {
				t.Logf("%v absent: %s", src, smp.Absent[src])
			}
		}
		if i > 0 {
			checkMonotonic(t, prev, smp)
		}
		prev = smp
	}
	if !prev.Has(SourceProcess) || !prev.Has(SourceSchedstat) || prev.Threads < 2 || prev.Run == 0 {
		t.Errorf("self sample lacks process or thread data: %+v", prev)
	}
}

// checkMonotonic asserts that every counter of b is at least that of a.
func checkMonotonic(t *testing.T, a, b Sample) {
	t.Helper()
	d := Diff(a, b)
	for src := range NumSources {
		if a.Has(src) && b.Has(src) && !d.Has(src) {
			t.Errorf("%v not monotonic: %s", src, d.Absent[src])
		}
	}
	if d.Interval <= 0 {
		t.Errorf("Mono did not advance: %v then %v", a.Mono, b.Mono)
	}
}

// TestSchedstatAcrossThreadExit checks that the thread sum stays monotonic when threads
// exit: a goroutine that locks its thread and returns makes the runtime end the thread.
// Each thread is sampled once alive, so the sampler must retire it, not forget it.
func TestSchedstatAcrossThreadExit(t *testing.T) {
	tier.Timing(t)
	s, err := NewSampler(os.Getpid(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	prev, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		alive, exit, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread() // not unlocked: the thread exits with the goroutine
			burn(1, 5*time.Millisecond)
			close(alive)
			<-exit
		}()
		<-alive
		for _, release := range []bool{true, false} {
			smp, err := s.Sample()
			if err != nil {
				t.Fatal(err)
			}
			checkMonotonic(t, prev, smp)
			prev = smp
			if release {
				close(exit)
				<-done
				time.Sleep(5 * time.Millisecond) // let the thread finish exiting
			}
		}
	}
	if s.threads.retired.Run == 0 {
		t.Errorf("no exited thread was retired; the test did not exercise thread exit")
	}
}

func TestSamplerRun(t *testing.T) {
	s, err := NewSampler(os.Getpid(), Options{Interval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var got []Sample
	err = s.Run(ctx, func(smp Sample) {
		if got = append(got, smp); len(got) == 3 {
			cancel()
		}
	})
	if err != nil || len(got) != 3 {
		t.Fatalf("Run: %v after %d samples", err, len(got))
	}
}

func TestSamplerExited(t *testing.T) {
	p, err := os.StartProcess("/bin/sh", []string{"sh", "-c", "exit 0"}, &os.ProcAttr{})
	if err != nil {
		t.Skipf("SKIP: cannot start /bin/sh: %v", err)
	}
	s, err := NewSampler(p.Pid, Options{})
	if err != nil { // raced with the exit and the reaping
		p.Wait()
		return
	}
	defer s.Close()
	p.Wait()
	if _, err := s.Sample(); !errors.Is(err, ErrExited) {
		t.Errorf("sampling a reaped process: %v, want ErrExited", err)
	}
	if _, err := NewSampler(p.Pid, Options{}); err == nil {
		t.Errorf("NewSampler of a reaped process succeeded")
	}
}

func TestSumThreads(t *testing.T) {
	sum, n, err := SumThreads("/proc", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if n < 2 || sum.Run <= 0 || sum.Timeslices == 0 {
		t.Errorf("SumThreads of this process: %+v over %d threads", sum, n)
	}
	if _, _, err := SumThreads("/proc", -1); err == nil {
		t.Errorf("SumThreads of pid -1: no error")
	}
}

// BenchmarkSample measures one Sample of the benchmark process itself; the per-thread
// schedstat reads grow with the thread count (reported as threads).
func BenchmarkSample(b *testing.B) {
	s, err := NewSampler(os.Getpid(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var smp Sample
	for b.Loop() {
		if smp, err = s.Sample(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(smp.Threads), "threads")
}
