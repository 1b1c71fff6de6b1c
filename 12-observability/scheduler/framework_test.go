package scheduler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// filterStatus renders a verdict as "Code Plugin: reasons", or "Success".
func filterStatus(s *fwk.Status) string {
	if s.IsSuccess() {
		return "Success"
	}
	if s.Plugin() == "" {
		return fmt.Sprintf("%s: %s", s.Code(), strings.Join(s.Reasons(), ", "))
	}
	return fmt.Sprintf("%s %s: %s", s.Code(), s.Plugin(), strings.Join(s.Reasons(), ", "))
}

// nodeInfosOf wraps each node in a NodeInfo without pods, as the snapshot
// does for an empty node.
func nodeInfosOf(nodes ...*v1.Node) []fwk.NodeInfo {
	infos := make([]fwk.NodeInfo, 0, len(nodes))
	for _, n := range nodes {
		info := framework.NewNodeInfo()
		info.SetNode(n)
		infos = append(infos, info)
	}
	return infos
}

// listOrNil returns the set's items in order, or nil for an empty set.
func listOrNil(s sets.Set[string]) []string {
	if len(s) == 0 {
		return nil
	}
	return sets.List(s)
}

// TestRunPreFilterPlugins: what the PreFilter plugins tell the framework
// once per pod: the nodes they narrow the pod to, a rejection, and the
// plugins whose Filter can be skipped for this pod.
func TestRunPreFilterPlugins(t *testing.T) {
	// onlyNodes gives the pod a required node affinity of one term whose
	// requirements (ANDed) each name some nodes: the node-name form that
	// NodeAffinity's PreFilter turns into a list of nodes.
	onlyNodes := func(p *v1.Pod, names ...[]string) *v1.Pod {
		var reqs []v1.NodeSelectorRequirement
		for _, n := range names {
			reqs = append(reqs, v1.NodeSelectorRequirement{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: n})
		}
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: reqs}},
		}}}
		return p
	}
	type result struct {
		Nodes    []string // the nodes the pod is narrowed to; nil for all
		Status   string
		Narrowed []string // the plugins that narrowed the nodes
		Skipped  []string // the plugins whose Filter is skipped
	}
	tests := []struct {
		name string
		pod  *v1.Pod
		want result
	}{
		{
			name: "plain pod: every node, and NodeAffinity's Filter is skipped",
			pod:  makePod("p").req("1").obj(),
			want: result{Status: "Success", Skipped: []string{"NodeAffinity"}},
		},
		{
			name: "pod with a node selector: NodeAffinity filters",
			pod:  makePod("p").nodeSelector("disk", "ssd").obj(),
			want: result{Status: "Success"},
		},
		{
			name: "affinity to one node by name narrows the nodes",
			pod:  onlyNodes(makePod("p").obj(), []string{"node-b"}),
			want: result{Nodes: []string{"node-b"}, Status: "Success", Narrowed: []string{"NodeAffinity"}},
		},
		{
			name: "node names that conflict reject the pod",
			pod:  onlyNodes(makePod("p").obj(), []string{"node-a"}, []string{"node-b"}),
			want: result{Status: "UnschedulableAndUnresolvable NodeAffinity: pod affinity terms conflict"},
		},
		{
			name: "the narrowed nodes of two plugins are intersected: none left",
			pod:  onlyNodes(makePod("p").node("node-a").obj(), []string{"node-b"}),
			want: result{
				Nodes:    []string{},
				Status:   "UnschedulableAndUnresolvable: node(s) didn't satisfy plugin(s) [NodeAffinity NodeName] simultaneously",
				Narrowed: []string{"NodeAffinity", "NodeName"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			sched := newTestScheduler(t, ctx, fake.NewClientset(), events.NewFakeRecorder(10))
			state := framework.NewCycleState()
			nodes := nodeInfosOf(makeNode("node-a").obj(), makeNode("node-b").obj())
			pre, status, narrowed := sched.framework.RunPreFilterPlugins(ctx, state, tt.pod, nodes)
			got := result{Status: filterStatus(status), Narrowed: listOrNil(narrowed), Skipped: listOrNil(state.GetSkipFilterPlugins())}
			if !pre.AllNodes() {
				got.Nodes = sets.List(pre.NodeNames)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("PreFilter result (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestRunFilterPlugins: the Filter plugins judge one node, in the default
// profile's order (NodeName, NodeUnschedulable, TaintToleration,
// NodeAffinity, NodeResourcesFit), and the first rejection is the node's
// verdict.
func TestRunFilterPlugins(t *testing.T) {
	tests := []struct {
		name     string
		pod      *v1.Pod
		node     *v1.Node
		existing []*v1.Pod // pods already on the node
		want     string
	}{
		{
			name: "a node that fits",
			pod:  makePod("p").req("1").obj(),
			node: makeNode("n").obj(),
			want: "Success",
		},
		{
			name: "cordoned",
			pod:  makePod("p").obj(),
			node: makeNode("n").unschedulable().obj(),
			want: "UnschedulableAndUnresolvable NodeUnschedulable: node(s) were unschedulable",
		},
		{
			name: "an untolerated taint",
			pod:  makePod("p").obj(),
			node: makeNode("n").taint("dedicated", "db").obj(),
			want: "UnschedulableAndUnresolvable TaintToleration: node(s) had untolerated taint(s)",
		},
		{
			name: "a tolerated taint",
			pod:  makePod("p").toleration("dedicated", "db").obj(),
			node: makeNode("n").taint("dedicated", "db").obj(),
			want: "Success",
		},
		{
			name: "labels that miss the node selector",
			pod:  makePod("p").nodeSelector("disk", "ssd").obj(),
			node: makeNode("n").obj(),
			want: "UnschedulableAndUnresolvable NodeAffinity: node(s) didn't match Pod's node affinity/selector",
		},
		{
			name: "more cpu than the node has at all",
			pod:  makePod("p").req("2").obj(),
			node: makeNode("n").cpu("1").obj(),
			want: "UnschedulableAndUnresolvable NodeResourcesFit: Insufficient cpu",
		},
		{
			name:     "more cpu than the node's pods leave",
			pod:      makePod("p").req("2").obj(),
			node:     makeNode("n").obj(),
			existing: []*v1.Pod{makePod("busy").req("3").node("n").obj()},
			want:     "Unschedulable NodeResourcesFit: Insufficient cpu",
		},
		{
			name: "tainted and too small: TaintToleration runs first",
			pod:  makePod("p").req("2").obj(),
			node: makeNode("n").taint("dedicated", "db").cpu("1").obj(),
			want: "UnschedulableAndUnresolvable TaintToleration: node(s) had untolerated taint(s)",
		},
		{
			name: "cordoned, tainted and too small: NodeUnschedulable runs first",
			pod:  makePod("p").req("2").obj(),
			node: makeNode("n").unschedulable().taint("dedicated", "db").cpu("1").obj(),
			want: "UnschedulableAndUnresolvable NodeUnschedulable: node(s) were unschedulable",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			sched := newTestScheduler(t, ctx, fake.NewClientset(), events.NewFakeRecorder(10))
			state := framework.NewCycleState()
			info := framework.NewNodeInfo(tt.existing...)
			info.SetNode(tt.node)
			if _, s, _ := sched.framework.RunPreFilterPlugins(ctx, state, tt.pod, []fwk.NodeInfo{info}); !s.IsSuccess() {
				t.Fatalf("PreFilter: %v", s)
			}
			if diff := cmp.Diff(tt.want, filterStatus(sched.framework.RunFilterPlugins(ctx, state, tt.pod, info))); diff != "" {
				t.Errorf("Filter verdict (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestFindNodesThatFitPod: every node is filtered; the feasible ones are
// returned in order, and each rejected node's first rejection goes into the
// diagnosis, with the plugins that rejected some node.
func TestFindNodesThatFitPod(t *testing.T) {
	tests := []struct {
		name         string
		pod          *v1.Pod
		nodes        []*v1.Node
		wantFeasible []string
		wantStatuses map[string]string // node -> its verdict in the diagnosis
		wantPlugins  []string          // the diagnosis' UnschedulablePlugins
	}{
		{
			name:         "every node fits: an empty diagnosis",
			pod:          makePod("p").req("1").obj(),
			nodes:        []*v1.Node{makeNode("node-a").obj(), makeNode("node-b").obj()},
			wantFeasible: []string{"node-a", "node-b"},
			wantStatuses: map[string]string{},
		},
		{
			name: "each rejected node keeps its first rejection",
			pod:  makePod("p").req("2").obj(),
			nodes: []*v1.Node{
				makeNode("cordoned").unschedulable().obj(),
				makeNode("small").cpu("1").obj(),
				makeNode("fits").obj(),
				makeNode("tainted").taint("dedicated", "db").obj(),
				makeNode("tainted-small").taint("dedicated", "db").cpu("1").obj(),
			},
			wantFeasible: []string{"fits"},
			wantStatuses: map[string]string{
				"cordoned":      "UnschedulableAndUnresolvable NodeUnschedulable: node(s) were unschedulable",
				"small":         "UnschedulableAndUnresolvable NodeResourcesFit: Insufficient cpu",
				"tainted":       "UnschedulableAndUnresolvable TaintToleration: node(s) had untolerated taint(s)",
				"tainted-small": "UnschedulableAndUnresolvable TaintToleration: node(s) had untolerated taint(s)",
			},
			wantPlugins: []string{"NodeResourcesFit", "NodeUnschedulable", "TaintToleration"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			sched := newTestScheduler(t, ctx, fake.NewClientset(), events.NewFakeRecorder(10))
			feasible, diagnosis, err := sched.findNodesThatFitPod(ctx, framework.NewCycleState(), tt.pod, nodeInfosOf(tt.nodes...))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, n := range feasible {
				names = append(names, n.Node().Name)
			}
			// The filters run in parallel: the order is the workers'.
			slices.Sort(names)
			if diff := cmp.Diff(tt.wantFeasible, names); diff != "" {
				t.Errorf("feasible nodes (-want, +got):\n%s", diff)
			}
			statuses := map[string]string{}
			diagnosis.NodeToStatus.ForEachExplicitNode(func(node string, s *fwk.Status) {
				statuses[node] = filterStatus(s)
			})
			if diff := cmp.Diff(tt.wantStatuses, statuses); diff != "" {
				t.Errorf("diagnosis (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantPlugins, listOrNil(diagnosis.UnschedulablePlugins)); diff != "" {
				t.Errorf("unschedulable plugins (-want, +got):\n%s", diff)
			}
		})
	}
}

// preFilterVerdict is a PreFilter plugin that answers with a fixed status.
type preFilterVerdict struct {
	name   string
	status *fwk.Status
}

func (p preFilterVerdict) Name() string { return p.name }

func (p preFilterVerdict) PreFilter(context.Context, fwk.CycleState, *v1.Pod, []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	return nil, p.status
}

func (p preFilterVerdict) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// TestRunPreFilterPluginsStatus pins which PreFilter status answers when
// several reject: upstream's frameworkImpl.RunPreFilterPlugins returns at
// once on UnschedulableAndUnresolvable, and otherwise runs every plugin and
// keeps the last Unschedulable, which is the message a user reads.
func TestRunPreFilterPluginsStatus(t *testing.T) {
	unschedulable := func(msg string) *fwk.Status { return fwk.NewStatus(fwk.Unschedulable, msg) }
	tests := []struct {
		name    string
		plugins []fwk.PreFilterPlugin
		want    string
	}{
		{
			name:    "two Unschedulable: the last one answers",
			plugins: []fwk.PreFilterPlugin{preFilterVerdict{"A", unschedulable("a")}, preFilterVerdict{"B", unschedulable("b")}, preFilterVerdict{"C", nil}},
			want:    "Unschedulable B: b",
		},
		{
			name:    "UnschedulableAndUnresolvable stops the rest",
			plugins: []fwk.PreFilterPlugin{preFilterVerdict{"A", unschedulable("a")}, preFilterVerdict{"B", fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "b")}, preFilterVerdict{"C", unschedulable("c")}},
			want:    "UnschedulableAndUnresolvable B: b",
		},
		{
			name:    "every plugin passes",
			plugins: []fwk.PreFilterPlugin{preFilterVerdict{"A", nil}, preFilterVerdict{"B", nil}},
			want:    "Success",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := &Framework{preFilterPlugins: tt.plugins}
			_, status, _ := f.RunPreFilterPlugins(ctx, framework.NewCycleState(), &v1.Pod{}, nil)
			if diff := cmp.Diff(tt.want, filterStatus(status)); diff != "" {
				t.Errorf("status (-want, +got):\n%s", diff)
			}
		})
	}
}
