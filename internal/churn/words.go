package churn

import (
	"fmt"
	"strings"
)

// Method is the section of the method that sets the bar a share is judged
// against, as the findings cite it.
const Method = "docs/method.md §9"

// Nouns are a runtime's words in the texts both runtimes share.
type Nouns struct {
	// Workers are what runs the work: "goroutines", "threads".
	Workers string
	// Handout is what one wakeup should hand over, Batched how, and
	// Single what is handed over one at a time instead.
	Handout, Batched, Single string
}

// Each runtime's nouns.
var (
	GoNouns  = Nouns{Workers: "goroutines", Handout: "a worker a slice of items", Single: "item"}
	JVMNouns = Nouns{Workers: "threads", Handout: "a task a batch of events", Batched: " (one execute per burst)", Single: "task per event"}
)

// OptionBatch is the fix of batching, in the runtime's nouns.
func (n Nouns) OptionBatch() string {
	return "batching: hand " + n.Handout + " per wakeup" + n.Batched + ", not one " + n.Single
}

// OptionSteady is the fix of a steady consumer, in the runtime's nouns.
func (n Nouns) OptionSteady() string {
	return "a steady consumer: route the bursty work to " + n.Workers + " that are busy anyway (the seed moved its actor to the steady dispatcher)"
}

// IntervalWords is "95 % interval 12.0–27.0 %, 100 samples": a share's
// interval (stats.Wilson) in words.
func IntervalWords(lo, hi float64, samples int64) string {
	return fmt.Sprintf("95 %% interval %.1f–%.1f %%, %d samples", 100*lo, 100*hi, samples)
}

// InsteadOfWork is " — what instead of running the work": what the
// machinery spent the CPU on.
func InsteadOfWork(what string) string { return " — " + what + " instead of running the work" }

// PaidOn is "; paid on the stacks of a, b", or "" without payers.
func PaidOn(payers []string) string {
	if len(payers) == 0 {
		return ""
	}
	return "; paid on the stacks of " + strings.Join(payers, ", ")
}
