package main

import (
	"testing"

	"github.com/latscope/latscope/lab/queues"
)

// TestQueuesVerdict: the queues lab exits 1 when a prediction missed its
// re-measured run (a failed check, as in every lab), 0 when all passed.
func TestQueuesVerdict(t *testing.T) {
	runs := []queues.Run{{Pass: true}, {Pass: false}}
	err := queuesVerdict(&queues.Report{Runs: runs, Passed: 1})
	if exitStatus(err) != 1 || err.Error() != "lab queues: 1 of 2 predictions missed (causes above)" {
		t.Errorf("a miss: exit %d, %v", exitStatus(err), err)
	}
	if err := queuesVerdict(&queues.Report{Runs: runs[:1], Passed: 1}); exitStatus(err) != 0 {
		t.Errorf("all passed: exit %d, %v", exitStatus(err), err)
	}
}
