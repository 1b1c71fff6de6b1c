package preemption

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime/trace"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	exptrace "golang.org/x/exp/trace"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
)

// TestAsyncPreemptionTrace evicts two victims asynchronously while a trace
// is recorded, from a context that carries the preemptor's attempt: the
// goroutine that evicts works in an asyncPreemption task under the
// attempt's, in a region of that name, with a PreemptPod region per
// victim. So the trace links the evictions to the attempt that chose them,
// though they outlive its cycle.
func TestAsyncPreemptionTrace(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	victim := func(name string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name)}, Spec: v1.PodSpec{NodeName: "n"}}
	}
	client := fake.NewClientset(victim("v1"), victim("v2"))
	e, _ := newStartedExecutor(t, ctx, client, feature.Features{EnableAsyncPreemption: true})
	e.PreemptPod = func(context.Context, Candidate, *v1.Pod, *v1.Pod, string) (bool, error) { return false, nil }
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	attemptCtx, attempt := trace.NewTask(ctx, "schedulingAttempt")
	preemptor := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "preemptor", UID: "preemptor"}}
	c := &candidate{name: "n", victims: &extenderv1.Victims{Pods: []*v1.Pod{victim("v1"), victim("v2")}}}
	e.prepareCandidateAsync(attemptCtx, c, preemptor, "DefaultPreemption")
	attempt.End()
	// The goroutine is done once it no longer counts the preemptor as
	// preempting; its task ends right after, before trace.Stop waits.
	waitDone(t, e, preemptor)
	trace.Stop()

	r, err := exptrace.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	types := map[exptrace.TaskID]string{}
	parents := map[exptrace.TaskID]exptrace.TaskID{}
	regions := map[string][]string{}
	for {
		ev, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind() {
		case exptrace.EventTaskBegin:
			types[ev.Task().ID], parents[ev.Task().ID] = ev.Task().Type, ev.Task().Parent
		case exptrace.EventRegionBegin:
			regions[types[ev.Region().Task]] = append(regions[types[ev.Region().Task]], ev.Region().Type)
		}
	}
	var async exptrace.TaskID
	for id, typ := range types {
		if typ == "asyncPreemption" {
			async = id
		}
	}
	if async == 0 || types[parents[async]] != "schedulingAttempt" {
		t.Fatalf("tasks %v (parents %v): want an asyncPreemption task under the schedulingAttempt", types, parents)
	}
	if diff := cmp.Diff([]string{"asyncPreemption", "PreemptPod", "PreemptPod"}, regions["asyncPreemption"]); diff != "" {
		t.Errorf("regions of the asyncPreemption task (-want, +got):\n%s", diff)
	}
}

// waitDone waits until the asynchronous preemption has let the preemptor
// go, after its regions began; the bound only limits how long a failing
// test waits.
func waitDone(t *testing.T, e *Executor, preemptor *v1.Pod) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && e.IsPodRunningPreemption(preemptor.UID); {
		time.Sleep(10 * time.Millisecond)
	}
	if e.IsPodRunningPreemption(preemptor.UID) {
		t.Fatal("the asynchronous preemption did not finish")
	}
}
