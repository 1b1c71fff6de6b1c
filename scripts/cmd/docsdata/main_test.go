package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTableRows(t *testing.T) {
	table := `building 06-scheduling-queue (with -race)
CHAPTER              SCENARIO             RESULT    TIME BINDINGS ATTEMPTS  PROBLEMS
06-scheduling-queue  queue-label-noise    PASS      7.4s        1        5  
06-scheduling-queue  queue-waits-for-node PASS      7.5s        1        2  
07-backoff           queue-label-noise    FAIL      8.4s        1        4  pod x: queue-label-noise
2 passed, 1 failed`
	want := `CHAPTER              SCENARIO             RESULT    TIME BINDINGS ATTEMPTS  PROBLEMS
06-scheduling-queue  queue-label-noise    PASS      7.4s        1        5  
07-backoff           queue-label-noise    FAIL      8.4s        1        4  pod x: queue-label-noise`
	if diff := cmp.Diff(want, tableRows(table, 1, "queue-label-noise")); diff != "" {
		t.Errorf("a scenario's rows (-want, +got):\n%s", diff)
	}
	wantChapter := `CHAPTER              SCENARIO             RESULT    TIME BINDINGS ATTEMPTS  PROBLEMS
06-scheduling-queue  queue-label-noise    PASS      7.4s        1        5  
06-scheduling-queue  queue-waits-for-node PASS      7.5s        1        2  `
	if diff := cmp.Diff(wantChapter, tableRows(table, 0, "06-scheduling-queue")); diff != "" {
		t.Errorf("a chapter's rows (-want, +got):\n%s", diff)
	}
}
