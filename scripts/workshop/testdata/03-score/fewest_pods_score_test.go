package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// TestFewestPodsScore checks the exercise's score plugin: a pod annotated
// minisched.io/prefer-fewer-pods: "true" prefers the node that runs fewer
// pods. Node "busy" runs three small pods (300m CPU, 300Mi in all), node
// "quiet" one larger pod (1 CPU, 300Mi): by load alone busy wins
// (LeastAllocated), so only the pod-count score sends the pod to quiet. A
// pod that does not opt in still goes to busy.
func TestFewestPodsScore(t *testing.T) {
	requesting := func(p *podWrapper, cpu, memory string) *v1.Pod {
		p.Spec.Containers = []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse(cpu),
			v1.ResourceMemory: resource.MustParse(memory),
		}}}}
		return p.obj()
	}
	var existing []*v1.Pod
	for i := range 3 {
		existing = append(existing, requesting(makePod(fmt.Sprintf("small-%d", i)).node("busy"), "100m", "100Mi"))
	}
	existing = append(existing, requesting(makePod("large").node("quiet"), "1", "300Mi"))

	tests := []struct {
		name string
		pod  *v1.Pod
		want string
	}{
		{
			name: "a pod that opts in goes to the node with fewer pods",
			pod:  requesting(makePod("p").annotate("minisched.io/prefer-fewer-pods", "true"), "100m", "100Mi"),
			want: "quiet",
		},
		{
			name: "a pod that does not opt in goes by load",
			pod:  requesting(makePod("p"), "100m", "100Mi"),
			want: "busy",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			objs := []runtime.Object{makeNode("busy").obj(), makeNode("quiet").obj()}
			for _, p := range existing {
				objs = append(objs, p)
			}
			sched := newTestScheduler(t, ctx, fake.NewClientset(objs...), events.NewFakeRecorder(10))
			// Every seed must give the same answer: there is no tie.
			for seed := range uint64(20) {
				sched.rand = rand.New(rand.NewPCG(seed, seed))
				result, err := sched.schedulePod(ctx, framework.NewCycleState(), tt.pod)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, result.SuggestedHost); diff != "" {
					t.Fatalf("seed %d: node (-want, +got):\n%s", seed, diff)
				}
			}
		})
	}
}
