package scheduler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2/ktesting"

	"minisched/01-initial/scheduler/metrics"
)

func makeNode(name string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// podWrapper builds test pods, after upstream's st.MakePod().
type podWrapper struct{ v1.Pod }

func makePod(name string) *podWrapper {
	return &podWrapper{v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name + "-uid")},
		Spec:       v1.PodSpec{SchedulerName: DefaultSchedulerName},
	}}
}

func (p *podWrapper) schedulerName(s string) *podWrapper { p.Spec.SchedulerName = s; return p }
func (p *podWrapper) node(n string) *podWrapper          { p.Spec.NodeName = n; return p }
func (p *podWrapper) phase(ph v1.PodPhase) *podWrapper   { p.Status.Phase = ph; return p }
func (p *podWrapper) gate(g string) *podWrapper {
	p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, v1.PodSchedulingGate{Name: g})
	return p
}
func (p *podWrapper) terminating() *podWrapper {
	now := metav1.Now()
	p.DeletionTimestamp = &now
	return p
}
func (p *podWrapper) obj() *v1.Pod { return &p.Pod }

// bindings lists the Bindings a fake clientset received, as "ns/pod->node".
func bindings(client *fake.Clientset) []string {
	var out []string
	for _, a := range client.Actions() {
		if a.GetVerb() == "create" && a.GetSubresource() == "binding" {
			b := a.(clienttesting.CreateAction).GetObject().(*v1.Binding)
			out = append(out, fmt.Sprintf("%s/%s->%s", b.Namespace, b.Name, b.Target.Name))
		}
	}
	return out
}

// drainEvents returns the events a FakeRecorder holds, as "Type Reason".
func drainEvents(r *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			// FakeRecorder formats "Type Reason Note"; keep type and reason.
			f := strings.SplitN(e, " ", 3)
			out = append(out, f[0]+" "+f[1])
		default:
			return out
		}
	}
}

// attempts reads scheduler_schedule_attempts_total for one result and
// profile from the registry /metrics serves.
func attempts(t *testing.T, result, profile string) float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "scheduler_schedule_attempts_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["result"] == result && labels["profile"] == profile {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func TestScheduleOne(t *testing.T) {
	metrics.Register()
	threeNodes := []*v1.Node{makeNode("node-a"), makeNode("node-b"), makeNode("node-c")}
	tests := []struct {
		name         string
		pod          *v1.Pod
		nodes        []*v1.Node
		boundAlready bool
		bindErr      error
		wantBindings []string
		wantEvents   []string
		wantResult   string // the schedule_attempts_total result that grew, "" for none
	}{
		{
			name:         "pending pod is bound to the only node",
			pod:          makePod("p").obj(),
			nodes:        []*v1.Node{makeNode("node-a")},
			wantBindings: []string{"default/p->node-a"},
			wantEvents:   []string{"Normal Scheduled"},
			wantResult:   metrics.ScheduledResult,
		},
		{
			name:  "pod for another scheduler is ignored",
			pod:   makePod("p").schedulerName("default-scheduler").obj(),
			nodes: threeNodes,
		},
		{
			name:  "pod that already has a node is ignored",
			pod:   makePod("p").node("node-a").obj(),
			nodes: threeNodes,
		},
		{
			name:  "pod with a scheduling gate is ignored",
			pod:   makePod("p").gate("example.com/wait").obj(),
			nodes: threeNodes,
		},
		{
			name:  "pod being deleted is ignored",
			pod:   makePod("p").terminating().obj(),
			nodes: threeNodes,
		},
		{
			name:  "terminated pod is ignored",
			pod:   makePod("p").phase(v1.PodSucceeded).obj(),
			nodes: threeNodes,
		},
		{
			name:         "pod this scheduler bound already is not bound twice",
			pod:          makePod("p").obj(),
			nodes:        threeNodes,
			boundAlready: true,
		},
		{
			name:       "no nodes: unschedulable, with an event",
			pod:        makePod("p").obj(),
			wantEvents: []string{"Warning FailedScheduling"},
			wantResult: metrics.UnschedulableResult,
		},
		{
			name:         "rejected binding: error, with an event",
			pod:          makePod("p").obj(),
			nodes:        []*v1.Node{makeNode("node-a")},
			bindErr:      fmt.Errorf("pods \"p\" is forbidden"),
			wantBindings: []string{"default/p->node-a"},
			wantEvents:   []string{"Warning FailedScheduling"},
			wantResult:   metrics.ErrorResult,
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			// A profile name per case keeps the counters of cases apart.
			profile := fmt.Sprintf("test-%d", i)
			pod := tt.pod.DeepCopy()
			if pod.Spec.SchedulerName == DefaultSchedulerName {
				pod.Spec.SchedulerName = profile
			}
			objs := []runtime.Object{pod}
			for _, n := range tt.nodes {
				objs = append(objs, n)
			}
			client := fake.NewClientset(objs...)
			if tt.bindErr != nil {
				client.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
					return a.GetSubresource() == "binding", nil, tt.bindErr
				})
			}
			recorder := events.NewFakeRecorder(10)
			sched := New(client, recorder, WithSchedulerName(profile), WithRand(rand.New(rand.NewPCG(1, 2))))
			if tt.boundAlready {
				sched.bound[pod.UID] = true
			}
			before := map[string]float64{}
			for _, r := range []string{metrics.ScheduledResult, metrics.UnschedulableResult, metrics.ErrorResult} {
				before[r] = attempts(t, r, profile)
			}

			sched.ScheduleOne(ctx, pod)

			if diff := cmp.Diff(tt.wantBindings, bindings(client)); diff != "" {
				t.Errorf("bindings (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantEvents, drainEvents(recorder)); diff != "" {
				t.Errorf("events (-want, +got):\n%s", diff)
			}
			var grew []string
			for r, v := range before {
				if attempts(t, r, profile) != v {
					grew = append(grew, r)
				}
			}
			var want []string
			if tt.wantResult != "" {
				want = []string{tt.wantResult}
			}
			if diff := cmp.Diff(want, grew); diff != "" {
				t.Errorf("schedule_attempts_total results that grew (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestSchedulePodIsRandom checks that the pick is random over all nodes, not
// always the first: with a seeded source, 300 pods spread over all three
// nodes, using each of them, and the same seed gives the same placements.
func TestSchedulePodIsRandom(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	place := func(seed uint64) []string {
		client := fake.NewClientset(makeNode("node-a"), makeNode("node-b"), makeNode("node-c"))
		sched := New(client, events.NewFakeRecorder(1000), WithRand(rand.New(rand.NewPCG(seed, seed))))
		var got []string
		for i := range 300 {
			node, err := sched.schedulePod(ctx)
			if err != nil {
				t.Fatalf("pod %d: %v", i, err)
			}
			got = append(got, node)
		}
		return got
	}
	first := place(7)
	if diff := cmp.Diff(first, place(7)); diff != "" {
		t.Errorf("the same seed gave other placements (-first, +second):\n%s", diff)
	}
	count := map[string]int{}
	for _, n := range first {
		count[n]++
	}
	var used []string
	for n, c := range count {
		if c > 0 {
			used = append(used, n)
		}
	}
	sort.Strings(used)
	if diff := cmp.Diff([]string{"node-a", "node-b", "node-c"}, used); diff != "" {
		t.Errorf("nodes used (-want, +got):\n%s", diff)
	}
}

// TestRunBindsWatchedPods drives Run against a fake clientset: a pod that
// exists at start (found by the list) and one created later (found by the
// watch) are both bound, once each.
func TestRunBindsWatchedPods(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	client := fake.NewClientset(makeNode("node-a"), makePod("early").obj())
	sched := New(client, events.NewFakeRecorder(100))
	done := make(chan struct{})
	go func() { sched.Run(ctx); close(done) }()

	waitFor := func(want []string) {
		t.Helper()
		for range 500 {
			if cmp.Equal(want, bindings(client)) {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("bindings (-want, +got):\n%s", cmp.Diff(want, bindings(client)))
	}
	waitFor([]string{"default/early->node-a"})
	if _, err := client.CoreV1().Pods("default").Create(ctx, makePod("late").obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor([]string{"default/early->node-a", "default/late->node-a"})
	cancel()
	<-done
}
