package defaultpreemption

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/parallelize"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
)

// testHandle is the plugin's handle in these tests: the real
// NodeResourcesFit plugin is the only filter, with its PreFilter state
// computed once per test, and nodes and podGroups are the snapshot (a pod
// group's scheduled members are its members on the nodes).
type testHandle struct {
	fwk.Handle
	factory   informers.SharedInformerFactory
	fit       *noderesources.Fit
	nodes     map[string]fwk.NodeInfo
	podGroups map[string]*schedulingv1beta1.PodGroup
	// fixedStates, when set, are the pod group states, whatever the
	// nodes hold.
	fixedStates map[string]fwk.PodGroupState
}

func (h *testHandle) SnapshotSharedLister() fwk.SharedLister { return testSnapshot{h} }

type testSnapshot struct{ h *testHandle }

func (s testSnapshot) NodeInfos() fwk.NodeInfoLister                             { return s.h }
func (s testSnapshot) StorageInfos() fwk.StorageInfoLister                       { return nil }
func (s testSnapshot) PodGroupStates() fwk.PodGroupStateLister                   { return testPodGroupStates(s) }
func (s testSnapshot) PodGroups() fwk.PodGroupLister                             { return testPodGroups(s) }
func (s testSnapshot) CompositePodGroupStates() fwk.CompositePodGroupStateLister { return nil }
func (s testSnapshot) CompositePodGroups() fwk.CompositePodGroupLister           { return nil }

type testPodGroups struct{ h *testHandle }

func (l testPodGroups) Get(namespace, name string) (*schedulingv1beta1.PodGroup, error) {
	if pg, ok := l.h.podGroups[namespace+"/"+name]; ok {
		return pg, nil
	}
	return nil, fmt.Errorf("pod group %s/%s not found", namespace, name)
}

type testPodGroupStates struct{ h *testHandle }

func (l testPodGroupStates) Get(namespace, name string) (fwk.PodGroupState, error) {
	if st, ok := l.h.fixedStates[namespace+"/"+name]; ok {
		return st, nil
	}
	if _, ok := l.h.podGroups[namespace+"/"+name]; !ok {
		return nil, fmt.Errorf("pod group state %s/%s not found", namespace, name)
	}
	st := testPodGroupState{}
	for _, n := range l.h.nodes {
		for _, pi := range n.GetPods() {
			p := pi.GetPod()
			if p.Namespace == namespace && p.Spec.SchedulingGroup != nil && *p.Spec.SchedulingGroup.PodGroupName == name {
				st.scheduled = append(st.scheduled, p)
			}
		}
	}
	return st, nil
}

// testPodGroupState serves ScheduledPods, the only method preemption calls.
type testPodGroupState struct {
	fwk.PodGroupState
	scheduled []*v1.Pod
}

func (s testPodGroupState) ScheduledPods() []*v1.Pod { return s.scheduled }

func (h *testHandle) SharedInformerFactory() informers.SharedInformerFactory { return h.factory }
func (h *testHandle) Parallelizer() fwk.Parallelizer {
	return parallelize.NewParallelizer(parallelize.DefaultParallelism)
}
func (h *testHandle) NodeInfos() fwk.NodeInfoLister             { return h }
func (h *testHandle) NominatedPodsForNode(string) []fwk.PodInfo { return nil }

func (h *testHandle) RunFilterPluginsWithNominatedPods(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	return h.fit.Filter(ctx, state, pod, nodeInfo)
}

func (h *testHandle) RunPreFilterExtensionAddPod(ctx context.Context, state fwk.CycleState, pod *v1.Pod, pi fwk.PodInfo, nodeInfo fwk.NodeInfo) *fwk.Status {
	return nil
}

func (h *testHandle) RunPreFilterExtensionRemovePod(ctx context.Context, state fwk.CycleState, pod *v1.Pod, pi fwk.PodInfo, nodeInfo fwk.NodeInfo) *fwk.Status {
	return nil
}

func (h *testHandle) List() ([]fwk.NodeInfo, error) {
	var out []fwk.NodeInfo
	for _, n := range h.nodes {
		out = append(out, n)
	}
	return out, nil
}
func (h *testHandle) Get(name string) (fwk.NodeInfo, error) {
	if n, ok := h.nodes[name]; ok {
		return n, nil
	}
	// As the snapshot's lister answers.
	return nil, fmt.Errorf("nodeinfo not found for node name %q", name)
}
func (h *testHandle) HavePodsWithAffinityList() ([]fwk.NodeInfo, error)             { return nil, nil }
func (h *testHandle) HavePodsWithRequiredAntiAffinityList() ([]fwk.NodeInfo, error) { return nil, nil }
func (h *testHandle) HavePodsWithRequiredNonHostScopedAntiAffinityList() ([]fwk.NodeInfo, error) {
	return nil, nil
}

// newPlugin builds DefaultPreemption with upstream's defaulted arguments,
// and the NodeResourcesFit plugin its filter runs.
func newPlugin(t *testing.T, ctx context.Context, nodes ...*framework.NodeInfo) (*DefaultPreemption, *testHandle) {
	t.Helper()
	cfg, err := latest.Default()
	if err != nil {
		t.Fatal(err)
	}
	var dpArgs, fitArgs any
	for _, pc := range cfg.Profiles[0].PluginConfig {
		switch pc.Name {
		case Name:
			dpArgs = pc.Args
		case noderesources.Name:
			fitArgs = pc.Args
		}
	}
	h := &testHandle{factory: informers.NewSharedInformerFactory(fake.NewClientset(), 0), nodes: map[string]fwk.NodeInfo{}, podGroups: map[string]*schedulingv1beta1.PodGroup{}}
	for _, n := range nodes {
		h.nodes[n.Node().Name] = n
	}
	// GenericWorkload is on, as in this chapter's scheduler.
	fts := feature.Features{EnableAsyncPreemption: true, EnableGenericWorkload: true}
	fit, err := noderesources.NewFit(ctx, fitArgs.(*config.NodeResourcesFitArgs), h, fts)
	if err != nil {
		t.Fatal(err)
	}
	h.fit = fit.(*noderesources.Fit)
	pl, err := New(ctx, dpArgs.(*config.DefaultPreemptionArgs), h, fts)
	if err != nil {
		t.Fatal(err)
	}
	return pl, h
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// running is a pod on node, of the given priority and CPU, started start
// minutes after t0.
func running(name, node string, priority int32, cpu string, start int, labels map[string]string) *v1.Pod {
	st := metav1.NewTime(t0.Add(time.Duration(start) * time.Minute))
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name), Labels: labels},
		Spec: v1.PodSpec{NodeName: node, Priority: &priority, Containers: []v1.Container{{
			Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}},
		}}},
		Status: v1.PodStatus{StartTime: &st},
	}
}

func nodeInfo(name, cpu string, pods ...*v1.Pod) *framework.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{
		v1.ResourceCPU: resource.MustParse(cpu), v1.ResourcePods: resource.MustParse("110"),
	}}})
	return ni
}

// web labels the pods that newWebPDB's budget protects.
var web = map[string]string{"app": "web"}

// newWebPDB is a PodDisruptionBudget over the pods labelled web that
// allows no disruption.
func newWebPDB() *policy.PodDisruptionBudget {
	return &policy.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec:       policy.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: web}},
		Status:     policy.PodDisruptionBudgetStatus{DisruptionsAllowed: 0},
	}
}

// TestSelectVictimsOnNode: the fewest, least important pods of lower
// priority, with and without PodDisruptionBudgets.
func TestSelectVictimsOnNode(t *testing.T) {
	webPDB := newWebPDB()
	tests := []struct {
		name           string
		preemptorCPU   string
		pods           []*v1.Pod
		pdbs           []*policy.PodDisruptionBudget
		wantVictims    []string
		wantViolations int
		wantCode       fwk.Code
	}{
		{
			name:         "the least important pod goes, the others are reprieved",
			preemptorCPU: "1",
			pods: []*v1.Pod{
				running("p20", "n", 20, "1", 0, nil),
				running("p10", "n", 10, "1", 0, nil),
				running("p30", "n", 30, "1", 0, nil),
			},
			wantVictims: []string{"p10"},
		},
		{
			name:         "equal priority: the pod that started later goes",
			preemptorCPU: "1",
			pods: []*v1.Pod{
				running("old", "n", 10, "1", 0, nil),
				running("new", "n", 10, "1", 5, nil),
				running("p30", "n", 30, "1", 0, nil),
			},
			wantVictims: []string{"new"},
		},
		{
			name:         "two needed: most important first in the result",
			preemptorCPU: "2",
			pods: []*v1.Pod{
				running("p10", "n", 10, "1", 0, nil),
				running("p20", "n", 20, "1", 0, nil),
				running("p30", "n", 30, "1", 0, nil),
			},
			wantVictims: []string{"p20", "p10"},
		},
		{
			name:         "pods of equal or higher priority are never victims",
			preemptorCPU: "2",
			pods: []*v1.Pod{
				running("p10", "n", 10, "1", 0, nil),
				running("p100", "n", 100, "1", 0, nil),
				running("p200", "n", 200, "1", 0, nil),
			},
			wantCode: fwk.Unschedulable,
		},
		{
			name:         "no pod of lower priority",
			preemptorCPU: "1",
			pods:         []*v1.Pod{running("p100", "n", 100, "3", 0, nil)},
			wantCode:     fwk.UnschedulableAndUnresolvable,
		},
		{
			name:         "without a budget, the least important pod goes",
			preemptorCPU: "1",
			pods: []*v1.Pod{
				running("web", "n", 10, "1", 0, web),
				running("batch", "n", 20, "1", 0, nil),
				running("p300", "n", 300, "1", 0, nil),
			},
			wantVictims: []string{"web"},
		},
		{
			name:         "a budget protects the less important pod: the other goes instead",
			preemptorCPU: "1",
			pods: []*v1.Pod{
				running("web", "n", 10, "1", 0, web),
				running("batch", "n", 20, "1", 0, nil),
				running("p300", "n", 300, "1", 0, nil),
			},
			pdbs:        []*policy.PodDisruptionBudget{webPDB},
			wantVictims: []string{"batch"},
		},
		{
			name:         "a budget cannot protect a pod whose room is needed: counted as a violation",
			preemptorCPU: "2",
			pods: []*v1.Pod{
				running("web", "n", 10, "1", 0, web),
				running("batch", "n", 20, "1", 0, nil),
				running("p300", "n", 300, "1", 0, nil),
			},
			pdbs:           []*policy.PodDisruptionBudget{webPDB},
			wantVictims:    []string{"batch", "web"},
			wantViolations: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			ni := nodeInfo("n", "3", tt.pods...)
			pl, h := newPlugin(t, ctx, ni)
			preemptor := running("preemptor", "", 100, tt.preemptorCPU, 0, nil)
			preemptor.Spec.NodeName = ""
			state := framework.NewCycleState()
			if _, s := h.fit.PreFilter(ctx, state, preemptor, nil); !s.IsSuccess() {
				t.Fatal(s.AsError())
			}
			allPossibleVictims, err := pl.Evaluator.GetVictimsOnNode(ctx, ni)
			if err != nil {
				t.Fatal(err)
			}
			victims, violations, status := pl.SelectVictimsOnNode(ctx, state, preemptor, ni.Snapshot(), allPossibleVictims, tt.pdbs)
			if status.Code() != tt.wantCode {
				t.Fatalf("status = %v, want code %v", status, tt.wantCode)
			}
			var names []string
			for _, v := range victims {
				names = append(names, v.Name)
			}
			if diff := cmp.Diff(tt.wantVictims, names); diff != "" {
				t.Errorf("victims (-want, +got):\n%s", diff)
			}
			if violations != tt.wantViolations {
				t.Errorf("PDB violations = %d, want %d", violations, tt.wantViolations)
			}
		})
	}
}

// TestDryRunPreemption runs the dry runs on full nodes, each with one pod
// of lower priority, on 16 goroutines (run it with -race); a budget that
// allows no disruption protects the pods labelled web. The dry runs stop
// once they have candidatesNum candidates, one of them without a
// violation; each list keeps candidatesNum at most, as upstream's
// candidateList does, and the candidates without a violation come first,
// each with its node's pod.
func TestDryRunPreemption(t *testing.T) {
	webPDB := newWebPDB()
	tests := []struct {
		name          string
		nodes         int
		protected     func(i int) bool
		offset        int32
		candidatesNum int32
		// wantClean and wantViolating are exact counts; -1 means "from 1 (0
		// for violating) to candidatesNum", where the dry runs may stop
		// at different points.
		wantClean, wantViolating int
	}{
		{name: "1 candidate, every other node protected", nodes: 40, protected: func(i int) bool { return i%2 == 0 }, offset: 7, candidatesNum: 1, wantClean: -1, wantViolating: -1},
		{name: "3 candidates, every other node protected", nodes: 40, protected: func(i int) bool { return i%2 == 0 }, offset: 7, candidatesNum: 3, wantClean: -1, wantViolating: -1},
		{name: "every node asked for", nodes: 40, protected: func(i int) bool { return i%2 == 0 }, offset: 7, candidatesNum: 40, wantClean: 20, wantViolating: 20},
		// Nine violating candidates can turn up before the one without a
		// violation; each list keeps at most candidatesNum. On 16
		// goroutines the cancel may skip a node not yet started, so the
		// violating ones are 1 or 2, never more.
		{name: "only the last node unprotected", nodes: 10, protected: func(i int) bool { return i != 9 }, offset: 0, candidatesNum: 2, wantClean: 1, wantViolating: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var nodes []*framework.NodeInfo
			for i := range tt.nodes {
				var labels map[string]string
				if tt.protected(i) {
					labels = web
				}
				name := fmt.Sprintf("n%02d", i)
				nodes = append(nodes, nodeInfo(name, "2", running("low-"+name, name, 10, "2", 0, labels)))
			}
			pl, h := newPlugin(t, ctx, nodes...)
			preemptor := running("preemptor", "", 100, "1", 0, nil)
			state := framework.NewCycleState()
			if _, s := h.fit.PreFilter(ctx, state, preemptor, nil); !s.IsSuccess() {
				t.Fatal(s.AsError())
			}
			potential := make([]fwk.NodeInfo, len(nodes))
			for i, n := range nodes {
				potential[i] = n
			}
			candidates, statuses, err := pl.Evaluator.DryRunPreemption(ctx, state, preemptor, potential, []*policy.PodDisruptionBudget{webPDB}, tt.offset, tt.candidatesNum)
			if err != nil {
				t.Fatal(err)
			}
			violating, clean := 0, 0
			seen := map[string]bool{}
			for i, c := range candidates {
				if seen[c.Name()] {
					t.Errorf("node %s is a candidate twice", c.Name())
				}
				seen[c.Name()] = true
				if diff := cmp.Diff([]string{"low-" + c.Name()}, podNames(c.Victims().Pods)); diff != "" {
					t.Errorf("victims on %s (-want, +got):\n%s", c.Name(), diff)
				}
				if c.Victims().NumPDBViolations > 0 {
					violating++
				} else {
					clean++
					if violating > 0 {
						t.Errorf("candidate %d (%s) violates no budget but comes after one that does", i, c.Name())
					}
				}
			}
			if tt.wantClean >= 0 && clean != tt.wantClean {
				t.Errorf("%d candidates without a violation, want %d", clean, tt.wantClean)
			}
			if tt.wantViolating >= 0 && violating != tt.wantViolating {
				t.Errorf("%d candidates with a violation, want %d", violating, tt.wantViolating)
			}
			if clean < 1 || int32(clean) > tt.candidatesNum || int32(violating) > tt.candidatesNum {
				t.Errorf("%d candidates without a violation and %d with, want 1 to %d and at most %d", clean, violating, tt.candidatesNum, tt.candidatesNum)
			}
			if n := statuses.Len(); n != 0 {
				t.Errorf("%d nodes have a status: every node is a candidate", n)
			}
		})
	}
}

func podNames(pods []*v1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// TestPreemptionOfPodGroupMembers: the victims v1.37.1 chooses with the
// GenericWorkload gate on (NewPodVictim, searchCrossNodesVictimPods and
// MoreImportantVictim in framework/preemption, SelectVictimsOnNode in
// plugins/defaultpreemption). A pod group's member takes its group's
// priority and is spared before a pod on its own of the same priority; a
// group whose disruptionMode is All is one victim, every scheduled member
// on any node, and each member's priority counts when nodes are compared.
// The preemptor has priority 100 and asks for 1 CPU.
func TestPreemptionOfPodGroupMembers(t *testing.T) {
	member := func(p *v1.Pod, group string) *v1.Pod {
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
		return p
	}
	podGroup := func(name string, all bool, priority int32) *schedulingv1beta1.PodGroup {
		pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
		pg.Spec.Priority = &priority
		pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}}
		if all {
			pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
		}
		return pg
	}
	tests := []struct {
		name      string
		nodes     []*framework.NodeInfo
		podGroups []*schedulingv1beta1.PodGroup
		// potential are the nodes the dry runs try.
		potential []string
		// wantNode and wantVictims (sorted) are SelectCandidate's choice;
		// wantStatus is the status of each potential node with no
		// candidate.
		wantNode    string
		wantVictims []string
		wantStatus  map[string]string
		// dropNodes are taken out of the snapshot's nodes after the
		// pod group states are built from them; wantErr says that the
		// dry runs then fail.
		dropNodes []string
		wantErr   bool
	}{
		{
			name: "a gang's member is spared before an older pod on its own",
			nodes: []*framework.NodeInfo{nodeInfo("n", "2",
				running("standalone", "n", 0, "1", 0, nil),
				member(running("g1", "n", 0, "1", 5, nil), "single"))},
			podGroups: []*schedulingv1beta1.PodGroup{podGroup("single", false, 0)},
			potential: []string{"n"}, wantNode: "n", wantVictims: []string{"standalone"},
		},
		{
			name: "disruptionMode All: the whole group goes, from every node",
			nodes: []*framework.NodeInfo{
				nodeInfo("n", "1", member(running("a1", "n", 0, "1", 0, nil), "all")),
				nodeInfo("m", "1", member(running("a2", "m", 0, "1", 0, nil), "all")),
			},
			podGroups: []*schedulingv1beta1.PodGroup{podGroup("all", true, 0)},
			potential: []string{"n"}, wantNode: "n", wantVictims: []string{"a1", "a2"},
		},
		{
			name:       "a member has its group's priority",
			nodes:      []*framework.NodeInfo{nodeInfo("n", "1", member(running("h1", "n", 0, "1", 0, nil), "high"))},
			podGroups:  []*schedulingv1beta1.PodGroup{podGroup("high", false, 200)},
			potential:  []string{"n"},
			wantStatus: map[string]string{"n": "UnschedulableAndUnresolvable: No preemption victims found for incoming pod"},
		},
		{
			// Equal highest priority on both; the sum counts both of the
			// group's members, so the node with the one older pod wins,
			// although its victim ran longer.
			name: "disruptionMode All: every member counts in the sum of priorities",
			nodes: []*framework.NodeInfo{
				nodeInfo("n1", "1", member(running("a1", "n1", 10, "1", 9, nil), "all")),
				nodeInfo("m", "1", member(running("a2", "m", 10, "1", 9, nil), "all")),
				nodeInfo("n2", "1", running("p", "n2", 10, "1", 0, nil)),
			},
			podGroups: []*schedulingv1beta1.PodGroup{podGroup("all", true, 10)},
			potential: []string{"n1", "n2"}, wantNode: "n2", wantVictims: []string{"p"},
		},
		{
			// The group's priority (5) makes the member the victim with
			// the lower highest priority, but nodes are compared by the
			// victim pods' own priorities (pickOneNodeForPreemption):
			// the member's own 50 loses to the pod of 20.
			name: "nodes are compared by the victims' own priorities",
			nodes: []*framework.NodeInfo{
				nodeInfo("n1", "1", member(running("s1", "n1", 50, "1", 0, nil), "low-group")),
				nodeInfo("n2", "1", running("p", "n2", 20, "1", 0, nil)),
			},
			podGroups: []*schedulingv1beta1.PodGroup{podGroup("low-group", false, 5)},
			potential: []string{"n1", "n2"}, wantNode: "n2", wantVictims: []string{"p"},
		},
		{
			// searchCrossNodesVictimPods finds a member on a node the
			// snapshot does not have: upstream's GetVictimsOnNode fails,
			// and the node is no candidate.
			name: "a group member on a node the snapshot lacks",
			nodes: []*framework.NodeInfo{
				nodeInfo("n", "1", member(running("a1", "n", 0, "1", 0, nil), "all")),
				nodeInfo("gone", "1", member(running("a2", "gone", 0, "1", 0, nil), "all")),
			},
			podGroups: []*schedulingv1beta1.PodGroup{podGroup("all", true, 0)},
			potential: []string{"n"}, dropNodes: []string{"gone"}, wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			pl, h := newPlugin(t, ctx, tt.nodes...)
			for _, pg := range tt.podGroups {
				h.podGroups[pg.Namespace+"/"+pg.Name] = pg
			}
			preemptor := running("preemptor", "", 100, "1", 0, nil)
			state := framework.NewCycleState()
			if _, s := h.fit.PreFilter(ctx, state, preemptor, nil); !s.IsSuccess() {
				t.Fatal(s.AsError())
			}
			var potential []fwk.NodeInfo
			for _, name := range tt.potential {
				potential = append(potential, h.nodes[name])
			}
			if len(tt.dropNodes) > 0 {
				// The group's state still lists the members there.
				states := map[string]fwk.PodGroupState{}
				for _, pg := range tt.podGroups {
					st, err := h.SnapshotSharedLister().PodGroupStates().Get(pg.Namespace, pg.Name)
					if err != nil {
						t.Fatal(err)
					}
					states[pg.Namespace+"/"+pg.Name] = st
				}
				h.fixedStates = states
				for _, name := range tt.dropNodes {
					delete(h.nodes, name)
				}
			}
			candidates, statuses, err := pl.Evaluator.DryRunPreemption(ctx, state, preemptor, potential, nil, 0, int32(len(potential)))
			if tt.wantErr {
				if err == nil || len(candidates) != 0 {
					t.Errorf("DryRunPreemption = %d candidates, error %v; want none and an error", len(candidates), err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gotStatus := map[string]string{}
			for _, name := range tt.potential {
				if st := statuses.Get(name); st.Code() != fwk.Unschedulable || st.Message() != "" {
					gotStatus[name] = st.Code().String() + ": " + st.Message()
				}
			}
			for _, c := range candidates {
				delete(gotStatus, c.Name())
			}
			if diff := cmp.Diff(tt.wantStatus, gotStatus, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("statuses of the nodes with no candidate (-want, +got):\n%s", diff)
			}
			var gotNode string
			var gotVictims []string
			if c := pl.Evaluator.SelectCandidate(ctx, candidates); c != nil {
				gotNode = c.Name()
				gotVictims = podNames(c.Victims().Pods)
				sort.Strings(gotVictims)
			}
			if diff := cmp.Diff(tt.wantNode, gotNode); diff != "" {
				t.Errorf("chosen node (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantVictims, gotVictims); diff != "" {
				t.Errorf("victims (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestPodEligibleToPreemptOthers: preemptionPolicy Never, and a pod whose
// earlier victims still terminate on its nominated node.
func TestPodEligibleToPreemptOthers(t *testing.T) {
	never := v1.PreemptNever
	now := metav1.NewTime(t0)
	terminating := func(p *v1.Pod, byScheduler bool) *v1.Pod {
		p.DeletionTimestamp = &now
		if byScheduler {
			p.Status.Conditions = []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler}}
		}
		return p
	}
	nominated := func(p *v1.Pod, node string) *v1.Pod { p.Status.NominatedNodeName = node; return p }
	tests := []struct {
		name          string
		pod           *v1.Pod
		nodePods      []*v1.Pod
		nominatedCode fwk.Code
		want          bool
		wantMsg       string
	}{
		{name: "a pod of higher priority", pod: running("p", "", 100, "1", 0, nil), want: true},
		{
			name: "preemptionPolicy Never",
			pod: func() *v1.Pod {
				p := running("p", "", 100, "1", 0, nil)
				p.Spec.PreemptionPolicy = &never
				return p
			}(),
			wantMsg: "not eligible due to preemptionPolicy=Never.",
		},
		{
			name:     "its victim still terminates on its nominated node",
			pod:      nominated(running("p", "", 100, "1", 0, nil), "n"),
			nodePods: []*v1.Pod{terminating(running("v", "n", 10, "1", 0, nil), true)},
			wantMsg:  "not eligible due to a terminating pod on the nominated node.",
		},
		{
			name:          "its nominated node is out of the question now",
			pod:           nominated(running("p", "", 100, "1", 0, nil), "n"),
			nodePods:      []*v1.Pod{terminating(running("v", "n", 10, "1", 0, nil), true)},
			nominatedCode: fwk.UnschedulableAndUnresolvable,
			want:          true,
		},
		{
			name:     "a pod terminating for another reason",
			pod:      nominated(running("p", "", 100, "1", 0, nil), "n"),
			nodePods: []*v1.Pod{terminating(running("v", "n", 10, "1", 0, nil), false)},
			want:     true,
		},
		{
			name:     "a terminating pod it could not preempt",
			pod:      nominated(running("p", "", 100, "1", 0, nil), "n"),
			nodePods: []*v1.Pod{terminating(running("v", "n", 100, "1", 0, nil), true)},
			want:     true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			pl, _ := newPlugin(t, ctx, nodeInfo("n", "2", tt.nodePods...))
			var status *fwk.Status
			if tt.nominatedCode != fwk.Success {
				status = fwk.NewStatus(tt.nominatedCode)
			}
			got, msg := pl.PodEligibleToPreemptOthers(ctx, tt.pod, status)
			if got != tt.want || msg != tt.wantMsg {
				t.Errorf("PodEligibleToPreemptOthers = %v, %q; want %v, %q", got, msg, tt.want, tt.wantMsg)
			}
		})
	}
}

// TestCalculateNumCandidates: upstream's defaults, 10% and at least 100,
// never more than the nodes.
func TestCalculateNumCandidates(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl, _ := newPlugin(t, ctx)
	got := map[int32]int32{}
	for _, n := range []int32{10, 100, 500, 1000, 5000} {
		got[n] = pl.calculateNumCandidates(n)
	}
	want := map[int32]int32{10: 10, 100: 100, 500: 100, 1000: 100, 5000: 500}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("candidates per node count (-want, +got):\n%s", diff)
	}
}
