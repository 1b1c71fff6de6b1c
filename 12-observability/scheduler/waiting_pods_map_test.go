package scheduler

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	fwk "k8s.io/kube-scheduler/framework"
	testingclock "k8s.io/utils/clock/testing"
)

// TestWaitingPod: the verdict of a pod waiting on two plugins.
func TestWaitingPod(t *testing.T) {
	tests := []struct {
		name string
		act  func(wp *waitingPod, clock *testingclock.FakeClock)
		want string // "Code plugin: message"
	}{
		{
			name: "allowed by both plugins",
			act:  func(wp *waitingPod, _ *testingclock.FakeClock) { wp.Allow("A"); wp.Allow("B") },
			want: "Success : ",
		},
		{
			name: "rejected by one",
			act:  func(wp *waitingPod, _ *testingclock.FakeClock) { wp.Allow("A"); wp.Reject("B", "no") },
			want: "Unschedulable B: no",
		},
		{
			name: "B's deadline passes",
			act:  func(wp *waitingPod, clock *testingclock.FakeClock) { wp.Allow("A"); clock.Step(5 * time.Second) },
			want: "Unschedulable B: rejected due to timeout after waiting 5s at plugin B",
		},
		{
			name: "only the first verdict counts",
			act: func(wp *waitingPod, clock *testingclock.FakeClock) {
				wp.Reject("A", "first")
				wp.Reject("B", "second")
				wp.Allow("A")
				wp.Allow("B")
				clock.Step(time.Minute)
			},
			want: "Unschedulable A: first",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := testingclock.NewFakeClock(time.Now())
			wp := newWaitingPod(makePod("p").obj(), map[string]time.Duration{"A": time.Minute, "B": 5 * time.Second}, clock, &sync.Mutex{})
			tt.act(wp, clock)
			var s *fwk.Status
			select {
			case s = <-wp.verdict:
			case <-time.After(5 * time.Second):
				t.Fatal("no verdict")
			}
			if diff := cmp.Diff(tt.want, s.Code().String()+" "+s.Plugin()+": "+s.Message()); diff != "" {
				t.Errorf("verdict (-want, +got):\n%s", diff)
			}
			select {
			case extra := <-wp.verdict:
				t.Errorf("a second verdict: %v", extra)
			default:
			}
			if clock.HasWaiters() {
				t.Error("a deadline timer is still armed")
			}
		})
	}
}
