package scheduler

import (
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	testingclock "k8s.io/utils/clock/testing"
)

// TestSchedulingCycle: the scheduling cycle assumes the pod on the node it
// chose, so the next cycle sees that node's room taken although no Binding
// was sent; and a gang member that must wait (for a second member, whose
// PodGroup wants two) is registered at Permit, still assumed. No binding cycle runs here. The pod that does not fit runs the
// PostFilter plugins: preemption finds no pod of lower priority to evict.
func TestSchedulingCycle(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	clock := testingclock.NewFakeClock(time.Now())
	pods := []*v1.Pod{
		makePod("first").req("1").obj(),
		makePod("second").req("1").obj(),
		makePod("member").group("g").obj(),
	}
	// Preemption reads the preemptor from the informer.
	client := fake.NewClientset(makeNode("small").cpu("1").obj(), makePodGroup("g", 2), pods[0], pods[1], pods[2])
	sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(10), WithClock(clock))

	type cycle struct {
		Host      string // the chosen node
		AssumedOn string // the assumed copy's spec.nodeName
		Waiting   bool   // whether the pod waits at Permit
		Err       string
	}
	run := func(pod *v1.Pod) cycle {
		result, assumed, err := sched.schedulingCycle(ctx, framework.NewCycleState(), pod, time.Now())
		c := cycle{Host: result.SuggestedHost, Waiting: sched.framework.waitingPods.get(pod.UID) != nil}
		if assumed != nil {
			c.AssumedOn = assumed.Spec.NodeName
		}
		if err != nil {
			c.Err = err.Error()
		}
		return c
	}
	var got []cycle
	for _, p := range pods {
		got = append(got, run(p))
	}
	want := []cycle{
		{Host: "small", AssumedOn: "small"},
		{Err: "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."},
		{Host: "small", AssumedOn: "small", Waiting: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scheduling cycles (-want, +got):\n%s", diff)
	}
	var assumed []string
	_, assumedUIDs := sched.cache.Dump()
	for _, uid := range assumedUIDs {
		for _, p := range pods {
			if p.UID == uid {
				assumed = append(assumed, p.Name)
			}
		}
	}
	sort.Strings(assumed)
	if diff := cmp.Diff([]string{"first", "member"}, assumed); diff != "" {
		t.Errorf("assumed pods (-want, +got):\n%s", diff)
	}
	// The scheduling cycle only assumes: the Binding is the binding
	// cycle's.
	if diff := cmp.Diff([]string(nil), bindings(client)); diff != "" {
		t.Errorf("bindings after the scheduling cycles (-want, +got):\n%s", diff)
	}
	if wp := sched.framework.waitingPods.get(pods[2].UID); wp != nil {
		wp.Reject("", "test over")
		sched.framework.waitingPods.remove(pods[2].UID)
	}
}
