package queue

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"
)

// withPriority sets a pod's priority, as the Priority admission plugin does
// from the pod's PriorityClass.
func withPriority(p *v1.Pod, priority int32) *v1.Pod {
	p.Spec.Priority = &priority
	return p
}

// TestFIFOPriority: a pod of higher priority is popped before the pods of
// lower priority that were queued before it, also when it comes back after
// its retry delay; among pods of one priority, the first in is still the
// first out. Chapter 05's FIFO as shipped ignores priority: there the
// high-priority pod waits its turn.
func TestFIFOPriority(t *testing.T) {
	tests := []struct {
		name string
		ops  func(t *testing.T, q *FIFO, clk *testingclock.FakeClock)
		want []string
	}{
		{
			name: "a high-priority pod jumps the queue",
			ops: func(t *testing.T, q *FIFO, clk *testingclock.FakeClock) {
				q.Add(withPriority(pod("low-1", "1"), 10))
				q.Add(withPriority(pod("low-2", "1"), 10))
				q.Add(withPriority(pod("high", "1"), 1000))
			},
			want: []string{"high:1#1", "low-1:1#1", "low-2:1#1"},
		},
		{
			name: "equal priority: first in, first out",
			ops: func(t *testing.T, q *FIFO, clk *testingclock.FakeClock) {
				q.Add(withPriority(pod("a", "1"), 5))
				q.Add(withPriority(pod("b", "1"), 5))
				q.Add(withPriority(pod("c", "1"), 5))
			},
			want: []string{"a:1#1", "b:1#1", "c:1#1"},
		},
		{
			name: "no priority counts as zero",
			ops: func(t *testing.T, q *FIFO, clk *testingclock.FakeClock) {
				q.Add(pod("none", "1"))
				q.Add(withPriority(pod("negative", "1"), -1))
				q.Add(withPriority(pod("one", "1"), 1))
			},
			want: []string{"one:1#1", "none:1#1", "negative:1#1"},
		},
		{
			name: "an update keeps the pod's place",
			ops: func(t *testing.T, q *FIFO, clk *testingclock.FakeClock) {
				q.Add(withPriority(pod("high", "1"), 1000))
				q.Add(withPriority(pod("low", "1"), 10))
				q.Update(withPriority(pod("high", "2"), 1000))
			},
			want: []string{"high:2#1", "low:1#1"},
		},
		{
			name: "a retried pod goes ahead of lower priorities that came meanwhile",
			ops: func(t *testing.T, q *FIFO, clk *testingclock.FakeClock) {
				q.Add(withPriority(pod("high", "1"), 1000))
				p, _ := q.Pop()
				q.AddUnschedulable(p)
				q.Add(withPriority(pod("low", "1"), 10))
				clk.Step(time.Second)
				waitReady(t, q, 2)
			},
			want: []string{"high:1#2", "low:1#1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Now())
			q := New(clk, time.Second)
			tt.ops(t, q, clk)
			if diff := cmp.Diff(tt.want, popAll(q)); diff != "" {
				t.Errorf("popped (-want, +got):\n%s", diff)
			}
		})
	}
}
