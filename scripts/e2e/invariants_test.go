package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestStaticFit(t *testing.T) {
	node := func(mut func(*v1.Node)) *v1.Node {
		n := MakeNode("n", NodeSpec{CPU: "2", Labels: map[string]string{"zone": "a"}})
		if mut != nil {
			mut(n)
		}
		return n
	}
	pod := func(spec PodSpec) *v1.Pod { return MakePod("ns", "p", spec) }
	tests := []struct {
		name string
		pod  *v1.Pod
		node *v1.Node
		want string
	}{
		{"fits", pod(PodSpec{CPU: "1"}), node(nil), ""},
		{"too big", pod(PodSpec{CPU: "3"}), node(nil), "the pod alone exceeds the node: cpu requested 3 of 2 allocatable"},
		{"unschedulable", pod(PodSpec{}), node(func(n *v1.Node) { n.Spec.Unschedulable = true }), "the node is unschedulable"},
		{"unschedulable but tolerated", pod(PodSpec{Tolerations: []v1.Toleration{{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists}}}), node(func(n *v1.Node) { n.Spec.Unschedulable = true }), ""},
		{"taint", pod(PodSpec{}), node(func(n *v1.Node) { n.Spec.Taints = []v1.Taint{{Key: "k", Value: "v", Effect: v1.TaintEffectNoSchedule}} }), "untolerated taint k=v:NoSchedule"},
		{"prefer-no-schedule taint is no bar", pod(PodSpec{}), node(func(n *v1.Node) { n.Spec.Taints = []v1.Taint{{Key: "k", Effect: v1.TaintEffectPreferNoSchedule}} }), ""},
		{"tolerated taint", pod(PodSpec{Tolerations: []v1.Toleration{{Key: "k", Operator: v1.TolerationOpEqual, Value: "v"}}}), node(func(n *v1.Node) { n.Spec.Taints = []v1.Taint{{Key: "k", Value: "v", Effect: v1.TaintEffectNoSchedule}} }), ""},
		{"node selector", pod(PodSpec{NodeSelector: map[string]string{"zone": "b"}}), node(nil), "the node does not match the pod's node affinity or selector"},
		{"node selector met", pod(PodSpec{NodeSelector: map[string]string{"zone": "a"}}), node(nil), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, staticFit(tt.pod, tt.node)); diff != "" {
				t.Errorf("(-want, +got):\n%s", diff)
			}
		})
	}
}

func TestOverCommitted(t *testing.T) {
	used := map[string]v1.ResourceList{}
	for range 3 {
		addTo(used, "n", MakePod("ns", "p", PodSpec{CPU: "1", Memory: "1Gi"}))
	}
	alloc := MakeNode("n", NodeSpec{CPU: "3", Pods: "3"}).Status.Allocatable
	if diff := cmp.Diff("", overCommitted(used["n"], alloc)); diff != "" {
		t.Errorf("exactly full (-want, +got):\n%s", diff)
	}
	addTo(used, "n", MakePod("ns", "p", PodSpec{}))
	if diff := cmp.Diff("pods requested 4 of 3 allocatable", overCommitted(used["n"], alloc)); diff != "" {
		t.Errorf("one pod too many (-want, +got):\n%s", diff)
	}
}

// TestReadAudit feeds readAudit the kind of lines the apiserver writes and
// checks what it keeps: bindings of the namespace since the start, and the
// node's states in order.
func TestReadAudit(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) metav1.MicroTime { return metav1.NewMicroTime(t0.Add(time.Duration(s) * time.Second)) }
	nodeJSON, _ := json.Marshal(MakeNode("n1", NodeSpec{}))
	bindingJSON, _ := json.Marshal(v1.Binding{Target: v1.ObjectReference{Kind: "Node", Name: "n1"}})
	type ref = map[string]string
	lines := []map[string]any{
		{"stage": "ResponseComplete", "verb": "create", "objectRef": ref{"resource": "nodes", "name": "n1"}, "responseStatus": map[string]int{"code": 201}, "responseObject": json.RawMessage(nodeJSON), "requestReceivedTimestamp": at(1), "stageTimestamp": at(1)},
		{"stage": "ResponseComplete", "verb": "create", "objectRef": ref{"resource": "pods", "subresource": "binding", "namespace": "ns", "name": "p"}, "responseStatus": map[string]int{"code": 201}, "requestObject": json.RawMessage(bindingJSON), "requestReceivedTimestamp": at(2), "stageTimestamp": at(2)},
		{"stage": "ResponseComplete", "verb": "create", "objectRef": ref{"resource": "pods", "subresource": "binding", "namespace": "other", "name": "q"}, "responseStatus": map[string]int{"code": 201}, "requestObject": json.RawMessage(bindingJSON), "requestReceivedTimestamp": at(2), "stageTimestamp": at(2)},
		{"stage": "ResponseComplete", "verb": "create", "objectRef": ref{"resource": "pods", "subresource": "binding", "namespace": "ns", "name": "old"}, "responseStatus": map[string]int{"code": 201}, "requestObject": json.RawMessage(bindingJSON), "requestReceivedTimestamp": at(-5), "stageTimestamp": at(-5)},
		{"stage": "ResponseComplete", "verb": "delete", "objectRef": ref{"resource": "nodes", "name": "n1"}, "responseStatus": map[string]int{"code": 200}, "requestReceivedTimestamp": at(3), "stageTimestamp": at(3)},
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()

	bindings, nodes, err := readAudit(path, "ns", t0)
	if err != nil {
		t.Fatal(err)
	}
	want := []binding{{Pod: "p", Node: "n1", Code: 201, At: t0.Add(2 * time.Second)}}
	if diff := cmp.Diff(want, bindings); diff != "" {
		t.Errorf("bindings (-want, +got):\n%s", diff)
	}
	for _, c := range []struct {
		sec  int
		want string
	}{{0, "which did not exist"}, {1, ""}, {2, ""}, {4, "which did not exist"}} {
		if diff := cmp.Diff(c.want, bindingProblem(MakePod("ns", "p", PodSpec{}), nodesAt(nodes["n1"], t0.Add(time.Duration(c.sec)*time.Second)), true)); diff != "" {
			t.Errorf("binding to n1 at +%ds (-want, +got):\n%s", c.sec, diff)
		}
	}
}

// TestBindingProblem checks a Binding against the node states it could have
// been decided on: a label update that was received but not yet answered
// when the Binding came may already have reached the scheduler's watch.
func TestBindingProblem(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	zone := func(z string) *v1.Node { return MakeNode("n1", NodeSpec{Labels: map[string]string{"zone": z}}) }
	changes := []nodeChange{
		{Received: ms(0), At: ms(1), Node: zone("a")},
		{Received: ms(100), At: ms(110), Node: zone("b")},
		{Received: ms(200), At: ms(205)},
	}
	wantsB := MakePod("ns", "p", PodSpec{NodeSelector: map[string]string{"zone": "b"}})
	tests := []struct {
		name     string
		at       time.Time
		checkFit bool
		want     string
	}{
		{"before the node", ms(-1), true, "which did not exist"},
		{"create received, not yet answered", ms(0), true, "which it does not fit: the node does not match the pod's node affinity or selector"},
		{"labelled a", ms(50), true, "which it does not fit: the node does not match the pod's node affinity or selector"},
		{"labelled a, fit not checked", ms(50), false, ""},
		{"label update received, not yet answered", ms(105), true, ""},
		{"labelled b", ms(150), true, ""},
		{"delete received, not yet answered", ms(202), true, ""},
		{"deleted", ms(300), true, "which did not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, bindingProblem(wantsB, nodesAt(changes, tt.at), tt.checkFit)); diff != "" {
				t.Errorf("(-want, +got):\n%s", diff)
			}
		})
	}
}

// TestJudgePendingGangs: a pending gang is a problem only if it could be
// bound: its PodGroup exists, its members bound and pending reach
// minCount, and first fit places every pending member on the room left.
func TestJudgePendingGangs(t *testing.T) {
	// Two nodes of 2 CPUs; node a has 1 CPU used by a bound pod.
	nodes := []v1.Node{*MakeNode("a", NodeSpec{CPU: "2"}), *MakeNode("b", NodeSpec{CPU: "2"})}
	member := func(name, group, cpu, node string) *v1.Pod {
		p := MakePod("ns", name, PodSpec{CPU: cpu, PodGroup: group})
		p.Spec.NodeName = node
		return p
	}
	succeeded := func(p *v1.Pod) *v1.Pod {
		p.Status.Phase = v1.PodSucceeded
		return p
	}
	tests := []struct {
		name     string
		minCount map[string]int
		pods     []*v1.Pod
		want     []string
	}{
		{
			name:     "a gang that fits",
			minCount: map[string]int{"g": 3},
			pods:     []*v1.Pod{member("g-0", "g", "1", ""), member("g-1", "g", "1", ""), member("g-2", "g", "1", "")},
			want:     []string{"pod group g (minCount 3, 0 bound) stayed pending although its members fit: g-0→a, g-1→b, g-2→b"},
		},
		{
			// First fit by name places 1200m on b, 800m on a and 800m on
			// b; a scheduler that puts the two 800m first on b, the
			// emptier node, leaves no room for 1200m.
			name:     "a gang that fits in some orders only: not judged",
			minCount: map[string]int{"g": 3},
			pods:     []*v1.Pod{member("g-0", "g", "1200m", ""), member("g-1", "g", "800m", ""), member("g-2", "g", "800m", "")},
		},
		{
			name:     "a member that ran to completion does not count toward minCount",
			minCount: map[string]int{"g": 3},
			pods:     []*v1.Pod{succeeded(member("g-0", "g", "1", "b")), member("g-1", "g", "1", ""), member("g-2", "g", "1", "")},
		},
		{
			name:     "a gang that does not fit together",
			minCount: map[string]int{"g": 3},
			pods:     []*v1.Pod{member("g-0", "g", "1500m", ""), member("g-1", "g", "1500m", ""), member("g-2", "g", "1", "")},
		},
		{
			name:     "a gang short of a member",
			minCount: map[string]int{"g": 3},
			pods:     []*v1.Pod{member("g-0", "g", "1", ""), member("g-1", "g", "1", "")},
		},
		{
			name:     "a gang without its PodGroup",
			minCount: map[string]int{},
			pods:     []*v1.Pod{member("g-0", "g", "1", ""), member("g-1", "g", "1", ""), member("g-2", "g", "1", "")},
		},
		{
			name:     "a member left of a gang bound already",
			minCount: map[string]int{"g": 3},
			pods:     []*v1.Pod{member("g-0", "g", "1", "b"), member("g-1", "g", "1", "b"), member("g-2", "g", "1", "")},
			want:     []string{"pod group g (minCount 3, 2 bound) stayed pending although its members fit: g-2→a"},
		},
		{
			name:     "a basic group: each member alone",
			minCount: map[string]int{"g": 0},
			pods:     []*v1.Pod{member("g-0", "g", "3", ""), member("g-1", "g", "1", "")},
			want:     []string{"pod g-1 of basic pod group g stayed pending although it fits node a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods := map[string]*v1.Pod{"busy": MakePod("ns", "busy", PodSpec{CPU: "1"})}
			pods["busy"].Spec.NodeName = "a"
			used := map[string]v1.ResourceList{}
			addTo(used, "a", pods["busy"])
			groups := map[string][]*v1.Pod{}
			for _, p := range tt.pods {
				pods[p.Name] = p
				if p.Spec.NodeName != "" {
					if p.Status.Phase != v1.PodSucceeded { // as checkCapacity counts the room
						addTo(used, p.Spec.NodeName, p)
					}
				} else {
					groups["g"] = append(groups["g"], p)
				}
			}
			got := judgePendingGangs(tt.minCount, pods, groups, nodes, used, nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestRejectionProblem: a refused Binding is a fault, except a 404 for a
// pod the scenario deleted (the scheduler saw a node before the deletion).
func TestRejectionProblem(t *testing.T) {
	tests := []struct {
		name               string
		code               int
		deleted, goneAtEnd bool
		want               string
	}{
		{name: "accepted", code: 201},
		{name: "a pod the scenario deleted, not found", code: 404, deleted: true, goneAtEnd: true},
		{name: "a pod nobody deleted, not found", code: 404, goneAtEnd: true, want: "the apiserver rejected the Binding to n1 (HTTP 404)"},
		{name: "a deleted pod that is back", code: 404, deleted: true, want: "the apiserver rejected the Binding to n1 (HTTP 404)"},
		{name: "a conflict", code: 409, deleted: true, goneAtEnd: true, want: "the apiserver rejected the Binding to n1 (HTTP 409)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rejectionProblem(binding{Pod: "p", Node: "n1", Code: tt.code}, tt.deleted, tt.goneAtEnd)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
