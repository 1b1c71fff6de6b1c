package queue

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
)

func pod(name, label string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), Labels: map[string]string{"v": label}}}
}

// popAll pops what is ready, as "name:label#attempt".
func popAll(q *FIFO) []string {
	var out []string
	for {
		if ready, _ := q.Len(); ready == 0 {
			return out
		}
		p, n := q.Pop()
		out = append(out, p.Name+":"+p.Labels["v"]+"#"+string(rune('0'+n)))
	}
}

func TestFIFO(t *testing.T) {
	tests := []struct {
		name string
		ops  func(q *FIFO)
		want []string
	}{
		{"first in, first out", func(q *FIFO) { q.Add(pod("a", "1")); q.Add(pod("b", "1")); q.Add(pod("c", "1")) }, []string{"a:1#1", "b:1#1", "c:1#1"}},
		{"an update keeps the place and the latest spec", func(q *FIFO) {
			q.Add(pod("a", "1"))
			q.Add(pod("b", "1"))
			q.Update(pod("a", "2"))
		}, []string{"a:2#1", "b:1#1"}},
		{"a deleted pod is never popped", func(q *FIFO) { q.Add(pod("a", "1")); q.Add(pod("b", "1")); q.Delete(pod("a", "1")) }, []string{"b:1#1"}},
		{"an update of a pod that is not queued queues it", func(q *FIFO) { q.Update(pod("a", "1")) }, []string{"a:1#1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := New(testingclock.NewFakeClock(time.Now()), time.Second)
			tt.ops(q)
			if diff := cmp.Diff(tt.want, popAll(q)); diff != "" {
				t.Errorf("popped (-want, +got):\n%s", diff)
			}
		})
	}
}

// waitReady waits until n pods are ready: the retry hands the pod back
// from a goroutine of its own.
func waitReady(t *testing.T, q *FIFO, n int) {
	t.Helper()
	for range 500 {
		if ready, _ := q.Len(); ready == n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	ready, waiting := q.Len()
	t.Fatalf("ready = %d, waiting = %d; want %d ready", ready, waiting, n)
}

// TestNaiveRetry: an unschedulable pod comes back only after the delay,
// with its latest copy, and not at all if it was deleted meanwhile.
func TestNaiveRetry(t *testing.T) {
	clock := testingclock.NewFakeClock(time.Now())
	q := New(clock, 5*time.Second)
	q.Add(pod("a", "1"))
	p, _ := q.Pop()
	q.AddUnschedulable(p)
	q.Update(pod("a", "2")) // for instance its own PodScheduled condition
	if ready, waiting := q.Len(); ready != 0 || waiting != 1 {
		t.Fatalf("after an update while waiting: ready %d, waiting %d; want 0, 1", ready, waiting)
	}
	clock.Step(4 * time.Second)
	time.Sleep(20 * time.Millisecond)
	if ready, _ := q.Len(); ready != 0 {
		t.Fatal("the pod came back before its delay")
	}
	clock.Step(time.Second)
	waitReady(t, q, 1)
	if diff := cmp.Diff([]string{"a:2#2"}, popAll(q)); diff != "" {
		t.Errorf("popped (-want, +got):\n%s", diff)
	}

	q.Add(pod("b", "1"))
	p, _ = q.Pop()
	q.AddUnschedulable(p)
	q.Delete(p)
	clock.Step(5 * time.Second)
	time.Sleep(20 * time.Millisecond)
	if ready, waiting := q.Len(); ready+waiting != 0 {
		t.Errorf("a deleted pod came back: ready %d, waiting %d", ready, waiting)
	}
}

// TestPopWaitsAndClose: Pop blocks until a pod arrives, and returns nil once
// the FIFO is closed.
func TestPopWaitsAndClose(t *testing.T) {
	q := New(testingclock.NewFakeClock(time.Now()), time.Second)
	got := make(chan *v1.Pod)
	go func() { p, _ := q.Pop(); got <- p }()
	q.Add(pod("a", "1"))
	if p := <-got; p == nil || p.Name != "a" {
		t.Fatalf("Pop returned %v, want pod a", p)
	}
	go func() { p, _ := q.Pop(); got <- p }()
	q.Close()
	if p := <-got; p != nil {
		t.Errorf("Pop after Close returned %s", p.Name)
	}
}
