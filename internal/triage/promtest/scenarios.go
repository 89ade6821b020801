package promtest

import (
	"bytes"
	"time"
)

// T0 is the start of the known series.
var T0 = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)

// Rate is the known fleets' Fleet.Rate: 1,200 DB calls and 600 requests
// without DB calls a minute per instance, enough for the percentiles of
// every step (a p99 needs 500 observations, docs/triage.md).
const Rate = 10

// Instances are the three instances of each known fleet.
var Instances = []string{"a:8080", "b:8080", "c:8080"}

// LocalFleet is job "local" from T0 for 6 h: instance b:8080 is slow in
// minutes :00 and :01 of every hour, requests without DB calls slow with
// it, and its throttled time (3 s per minute), stall probe (3.2 s) and
// cgroup PSI (1 s) rise in those minutes.
func LocalFleet() Fleet {
	return Fleet{
		Job: "local", Route: "/orders", Instances: Instances,
		Start: T0, Duration: 6 * time.Hour, Scrape: 30 * time.Second, Rate: Rate,
		Bad:       func(i int, m time.Time) bool { return i == 1 && m.Minute() <= 1 },
		NoDBSlows: true, Throttled: 3, Stall: 3.2, Stalls: 100, PSI: 1,
	}
}

// SharedBadMinutes are the minutes after T0 in which every instance of
// SharedFleet is slow.
var SharedBadMinutes = []int{10, 11, 12, 40, 75, 76}

// SharedFleet is job "shared" from T0 for 2 h: all three instances are
// slow together in SharedBadMinutes, only in DB calls (requests without
// DB calls do not slow), no host signal rises, and the steal counter is
// absent.
func SharedFleet() Fleet {
	return Fleet{
		Job: "shared", Route: "/orders", Instances: Instances,
		Start: T0, Duration: 2 * time.Hour, Scrape: 30 * time.Second, Rate: Rate,
		Bad: func(_ int, m time.Time) bool {
			for _, b := range SharedBadMinutes {
				if m.Equal(T0.Add(time.Duration(b) * time.Minute)) {
					return true
				}
			}
			return false
		},
		NoSteal: true,
	}
}

// StoppedFleet is job "stopped" from T0 for 4 h: instance c:8080 is
// stopped in minutes :30 and :31 of every hour — not scraped, its DB calls
// and requests held (a third of them slow) and its stall probe gaining
// 60 s a minute — and is scraped again from :32.
func StoppedFleet() Fleet {
	stopped := func(i int, m time.Time) bool { return i == 2 && (m.Minute() == 30 || m.Minute() == 31) }
	return Fleet{
		Job: "stopped", Route: "/orders", Instances: Instances,
		Start: T0, Duration: 4 * time.Hour, Scrape: 30 * time.Second, Rate: Rate,
		Bad: stopped, Gap: stopped, NoDBSlows: true, Stall: 60,
	}
}

// HeldFleet is job "held" from T0 for 2 h: instance c:8080 is stopped for
// 3 s between requests in minute :30 of every hour — scraped as usual,
// every latency fast, its stall probe waking once 3 s late — as when a
// stop catches no request inside a handler.
func HeldFleet() Fleet {
	return Fleet{
		Job: "held", Route: "/orders", Instances: Instances,
		Start: T0, Duration: 2 * time.Hour, Scrape: 30 * time.Second,
		Held: func(i int, m time.Time) bool { return i == 2 && m.Minute() == 30 }, HeldStall: 3, Rate: Rate,
	}
}

// Known returns LocalFleet, SharedFleet, StoppedFleet and HeldFleet as
// one OpenMetrics file.
func Known() []byte {
	var b bytes.Buffer
	Write(&b, LocalFleet(), SharedFleet(), StoppedFleet(), HeldFleet())
	return b.Bytes()
}
