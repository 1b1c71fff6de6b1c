package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScenarioRows(t *testing.T) {
	table := `building 06-scheduling-queue (with -race)
CHAPTER              SCENARIO             RESULT    TIME BINDINGS ATTEMPTS  PROBLEMS
06-scheduling-queue  queue-label-noise    PASS      7.4s        1        5  
06-scheduling-queue  queue-waits-for-node PASS      7.5s        1        2  
07-backoff           queue-label-noise    FAIL      8.4s        1        4  pod x: queue-label-noise
2 passed, 1 failed`
	want := `CHAPTER              SCENARIO             RESULT    TIME BINDINGS ATTEMPTS  PROBLEMS
06-scheduling-queue  queue-label-noise    PASS      7.4s        1        5  
07-backoff           queue-label-noise    FAIL      8.4s        1        4  pod x: queue-label-noise`
	if diff := cmp.Diff(want, scenarioRows(table, "queue-label-noise")); diff != "" {
		t.Errorf("(-want, +got):\n%s", diff)
	}
}
