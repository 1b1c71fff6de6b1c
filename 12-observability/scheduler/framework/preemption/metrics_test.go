package preemption

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2/ktesting"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// TestPreemptionMetrics evicts two victims, within the cycle and
// asynchronously, and checks what upstream's executor records for a pod's
// preemption: the victims chosen, the PDBs their eviction violates, how
// long the evictions took, and, for the asynchronous one, the goroutine.
func TestPreemptionMetrics(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(map[bool]string{false: "within the cycle", true: "asynchronous"}[async], func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			victim := func(name string) *v1.Pod {
				return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name)}, Spec: v1.PodSpec{NodeName: "n"}}
			}
			client := fake.NewClientset(victim("v1"), victim("v2"))
			e, _ := newStartedExecutor(t, ctx, client, feature.Features{EnableAsyncPreemption: async})
			done := make(chan struct{}, 2)
			e.PreemptPod = func(context.Context, Candidate, *v1.Pod, *v1.Pod, string) (bool, error) {
				done <- struct{}{}
				return false, nil
			}
			type counts struct {
				Victims, VictimsSum, PDBViolations, Executions, Goroutines float64
			}
			read := func() counts {
				n, err := testutil.GetHistogramMetricCount(metrics.PreemptionVictims.ObserverMetric)
				if err != nil {
					t.Fatal(err)
				}
				sum, err := testutil.GetHistogramMetricValue(metrics.PreemptionVictims.ObserverMetric)
				if err != nil {
					t.Fatal(err)
				}
				pdb, _ := testutil.GetCounterMetricValue(metrics.PreemptionPDBViolations.WithLabelValues("pod"))
				exec, _ := testutil.GetHistogramMetricCount(metrics.PreemptionExecutionDuration.WithLabelValues("pod", metrics.GoroutineResultSuccess))
				goroutines, _ := testutil.GetCounterMetricValue(metrics.PreemptionGoroutinesExecutionTotal.WithLabelValues(metrics.GoroutineResultSuccess))
				return counts{float64(n), sum, pdb, float64(exec), goroutines}
			}
			before := read()
			preemptor := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "preemptor", UID: "preemptor"}}
			c := &candidate{name: "n", victims: &extenderv1.Victims{Pods: []*v1.Pod{victim("v1"), victim("v2")}, NumPDBViolations: 1}}
			if s := e.actuatePodPreemption(ctx, c, preemptor, "DefaultPreemption"); !s.IsSuccess() {
				t.Fatalf("actuatePodPreemption = %v", s)
			}
			for range 2 {
				<-done
			}
			want := counts{Victims: 1, VictimsSum: 2, PDBViolations: 1, Executions: 1}
			if async {
				want.Goroutines = 1
			}
			// The asynchronous goroutine records after its last eviction;
			// wait until it has, within a bound that only limits how long
			// a failing test waits.
			var got counts
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				after := read()
				got = counts{after.Victims - before.Victims, after.VictimsSum - before.VictimsSum, after.PDBViolations - before.PDBViolations, after.Executions - before.Executions, after.Goroutines - before.Goroutines}
				if got == want {
					break
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("growth of preemption_victims (count, sum), preemption_pdb_violations_total, preemption_execution_duration_seconds, preemption_goroutines_execution_total (-want, +got):\n%s", diff)
			}
		})
	}
}
