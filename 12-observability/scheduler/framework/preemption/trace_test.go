package preemption

import (
	"bytes"
	"context"
	"runtime/trace"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"

	"minisched/12-observability/internal/tracetest"
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

	tasks, err := tracetest.Read(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	async := tracetest.OfType(tasks, "asyncPreemption")
	if len(async) != 1 || tasks[async[0].Parent] == nil || tasks[async[0].Parent].Type != "schedulingAttempt" {
		t.Fatalf("asyncPreemption tasks %+v: want one, under the schedulingAttempt", async)
	}
	if diff := cmp.Diff([]string{"asyncPreemption", "PreemptPod", "PreemptPod"}, async[0].Regions); diff != "" {
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
