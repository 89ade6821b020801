package hostsig_test

import (
	"fmt"
	"os"
	"time"

	"github.com/latscope/latscope/internal/hostsig"
)

// Sample a process twice and report what happened in between. The counters, not the
// samples, carry the answer: a rising Throttled means CFS throttling, a rising Steal means
// the hypervisor took the CPU.
func ExampleSampler() {
	s, err := hostsig.NewSampler(os.Getpid(), hostsig.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	a, _ := s.Sample()
	time.Sleep(100 * time.Millisecond)
	b, _ := s.Sample()
	d := hostsig.Diff(a, b)
	fmt.Printf("in %v: cpu %v, run-queue wait %v, throttled periods %d, steal %v\n",
		d.Interval, d.CPU(), d.Wait, d.Throttled, d.Steal)
	for src := range hostsig.NumSources {
		if !d.Has(src) {
			fmt.Printf("%v absent: %s\n", src, d.Absent[src])
		}
	}
	text, _ := b.MarshalText() // runtime/trace.Log(ctx, hostsig.LogCategory, string(text))
	fmt.Println(len(text) > 0)
}
