package churn

import "strings"

// FindingKind classifies a Finding.
type FindingKind uint8

// Finding kinds. Both runtimes give FindSchedOverhead, FindNoSamples and
// FindFewSamples; the others are Go's.
const (
	FindSchedOverhead FindingKind = iota // the scheduler's share of CPU is over the threshold
	FindProcsAbove                       // GOMAXPROCS is above the CPUs the process may use
	FindParentLimit                      // a parent cgroup's quota binds; the runtime's default misses it
	FindNoSamples                        // no CPU samples: the share cannot be measured
	FindFewSamples                       // too few CPU samples to judge the share
	// FindSchedInconclusive: the share's 95 % interval contains the
	// threshold, so the samples cannot tell whether it is over
	FindSchedInconclusive
)

var findingNames = [...]string{
	FindSchedOverhead: "sched-overhead", FindProcsAbove: "gomaxprocs-above-limit",
	FindParentLimit: "parent-limit-missed", FindNoSamples: "no-cpu-samples", FindFewSamples: "few-cpu-samples",
	FindSchedInconclusive: "sched-overhead-inconclusive",
}

// String returns the kind's name as used in JSON.
func (k FindingKind) String() string {
	if int(k) < len(findingNames) {
		return findingNames[k]
	}
	return "unknown"
}

// MarshalText encodes the kind by name.
func (k FindingKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Finding is a typed warning: a plain-words statement of what was found and
// what to do about it.
type Finding struct {
	Kind    FindingKind `json:"kind"`
	Text    string      `json:"text"`
	Options []string    `json:"options,omitempty"` // fixes to consider
}

// Error returns the finding's text and its options.
func (f *Finding) Error() string {
	if len(f.Options) == 0 {
		return f.Text
	}
	return f.Text + ". Options: " + strings.Join(f.Options, "; ")
}
