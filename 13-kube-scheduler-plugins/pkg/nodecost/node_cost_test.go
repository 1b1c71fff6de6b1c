package nodecost_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"

	"minisched/13-kube-scheduler-plugins/internal/plugintest"
	"minisched/13-kube-scheduler-plugins/pkg/nodecost"
)

// profile runs NodeCost alone at PreScore and Score, with weight 1, so
// that each node's score is NodeCost's normalized one.
func profile(t *testing.T) config.KubeSchedulerProfile {
	return plugintest.Profile(t, `
plugins:
  multiPoint: {disabled: [{name: "*"}]}
  queueSort: {enabled: [{name: PrioritySort}]}
  bind: {enabled: [{name: DefaultBinder}]}
  preScore: {enabled: [{name: NodeCost}]}
  score: {enabled: [{name: NodeCost, weight: 1}]}
`)
}

func node(name, cost string) *v1.Node {
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}},
		Status:     v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourcePods: resource.MustParse("110")}},
	}
	if cost != "" {
		n.Labels[nodecost.CostLabel] = cost
	}
	return n
}

// TestNodeCost is chapter 03's table, run through upstream's framework
// runtime: the behaviour has not changed.
func TestNodeCost(t *testing.T) {
	tests := []struct {
		name  string
		costs map[string]string // node -> label value ("" for no label)
		optIn bool
		want  map[string]int64
	}{
		{
			name:  "cheapest 100, dearest 0, linear between",
			costs: map[string]string{"a": "1", "b": "5", "c": "9"},
			optIn: true,
			want:  map[string]int64{"a": 100, "b": 50, "c": 0},
		},
		{
			name:  "unknown or bad cost scores 0",
			costs: map[string]string{"a": "3", "b": "", "c": "cheap", "d": "-2"},
			optIn: true,
			want:  map[string]int64{"a": 100, "b": 0, "c": 0, "d": 0},
		},
		{
			name:  "all equal: all 100",
			costs: map[string]string{"a": "4", "b": "4"},
			optIn: true,
			want:  map[string]int64{"a": 100, "b": 100},
		},
		{
			name:  "costs up to the int64 limit",
			costs: map[string]string{"a": "0", "b": "4611686018427387904", "c": "9223372036854775807"},
			optIn: true,
			want:  map[string]int64{"a": 100, "b": 50, "c": 0},
		},
		{
			name:  "a pod that did not opt in is not scored (PreScore says Skip)",
			costs: map[string]string{"a": "1", "b": "9"},
			want:  map[string]int64{"a": 0, "b": 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var nodes []*v1.Node
			for name, cost := range tt.costs {
				nodes = append(nodes, node(name, cost))
			}
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
			if tt.optIn {
				pod.Annotations = map[string]string{nodecost.PreferCheapAnnotation: "true"}
			}
			fw := plugintest.NewFramework(ctx, t, profile(t), nodes, nil)
			_, verdicts := plugintest.Cycle(ctx, t, fw, pod)
			got := map[string]int64{}
			for name, v := range verdicts {
				got[name] = v.Total
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scores (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestSignPod checks NodeCost's fragment: pods that differ in opting in
// get different signatures, so batching never mixes them.
func TestSignPod(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	fw := plugintest.NewFramework(ctx, t, profile(t), []*v1.Node{node("a", "1")}, nil)
	plain := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	thrifty := plain.DeepCopy()
	thrifty.Annotations = map[string]string{nodecost.PreferCheapAnnotation: "true"}
	a, b := fw.SignPod(ctx, plain), fw.SignPod(ctx, thrifty)
	if a == nil || b == nil {
		t.Fatalf("signatures %s and %s: want both", a, b)
	}
	if string(a) == string(b) {
		t.Errorf("a pod that opts in and one that does not share the signature %s", a)
	}
}
