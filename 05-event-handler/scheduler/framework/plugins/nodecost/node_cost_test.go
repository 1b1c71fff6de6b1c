package nodecost

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func TestNodeCost(t *testing.T) {
	tests := []struct {
		name  string
		costs map[string]string // node -> label value ("" for no label)
		want  map[string]int64
	}{
		{
			name:  "cheapest 100, dearest 0, linear between",
			costs: map[string]string{"a": "1", "b": "5", "c": "9"},
			want:  map[string]int64{"a": 100, "b": 50, "c": 0},
		},
		{
			name:  "unknown or bad cost scores 0",
			costs: map[string]string{"a": "3", "b": "", "c": "cheap", "d": "-2"},
			want:  map[string]int64{"a": 100, "b": 0, "c": 0, "d": 0},
		},
		{
			name:  "all equal: all 100",
			costs: map[string]string{"a": "4", "b": "4"},
			want:  map[string]int64{"a": 100, "b": 100},
		},
		{
			name:  "costs up to the int64 limit",
			costs: map[string]string{"a": "0", "b": "4611686018427387904", "c": "9223372036854775807"},
			want:  map[string]int64{"a": 100, "b": 50, "c": 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			pl := &NodeCost{}
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{PreferCheapAnnotation: "true"}}}
			state := framework.NewCycleState()
			if s := pl.PreScore(ctx, state, pod, nil); !s.IsSuccess() {
				t.Fatalf("PreScore of a pod that opted in: %v", s)
			}
			var scores fwk.NodeScoreList
			for name, cost := range tt.costs {
				node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
				if cost != "" {
					node.Labels[CostLabel] = cost
				}
				info := framework.NewNodeInfo()
				info.SetNode(node)
				s, status := pl.Score(ctx, state, pod, info)
				if !status.IsSuccess() {
					t.Fatal(status.AsError())
				}
				scores = append(scores, fwk.NodeScore{Name: name, Score: s})
			}
			if s := pl.ScoreExtensions().NormalizeScore(ctx, state, pod, scores); !s.IsSuccess() {
				t.Fatal(s.AsError())
			}
			got := map[string]int64{}
			for _, s := range scores {
				got[s.Name] = s.Score
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("normalized scores (-want, +got):\n%s", diff)
			}
		})
	}
	if s := (&NodeCost{}).PreScore(nil, nil, &v1.Pod{}, nil); !s.IsSkip() {
		t.Errorf("PreScore of a pod without the annotation = %v, want Skip", s)
	}
}
