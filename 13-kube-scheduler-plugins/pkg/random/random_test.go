package random_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"minisched/13-kube-scheduler-plugins/internal/plugintest"
	"minisched/13-kube-scheduler-plugins/pkg/random"
)

func node(name, cpu string) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110"),
		}},
	}
}

func pod(name, cpu string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name)},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)},
		}}}},
	}
}

// profile runs NodeResourcesFit's PreFilter and Filter, so that only the
// nodes the pod fits are feasible, and Random as the only PreScore and
// Score plugin, with the seed given, as config/random.yaml does.
func profile(t *testing.T, seed int) config.KubeSchedulerProfile {
	return plugintest.Profile(t, fmt.Sprintf(`
plugins:
  multiPoint: {disabled: [{name: "*"}]}
  queueSort: {enabled: [{name: PrioritySort}]}
  bind: {enabled: [{name: DefaultBinder}]}
  preFilter: {enabled: [{name: NodeResourcesFit}]}
  filter: {enabled: [{name: NodeResourcesFit}]}
  preScore: {enabled: [{name: Random}]}
  score: {enabled: [{name: Random, weight: 1}]}
  reserve: {enabled: [{name: Random}]}
  postBind: {enabled: [{name: Random}]}
pluginConfig:
- name: Random
  args: {seed: %d}
`, seed))
}

// TestScore checks one cycle: the node Random chose, and only it, has the
// maximum score. Only the nodes that pass Filter are scored (the table's
// feasible, checked here against the Filter plugins), so a Random that
// chose a node the pod does not fit would leave no node at the maximum.
func TestScore(t *testing.T) {
	tests := []struct {
		name  string
		nodes []*v1.Node
		pod   *v1.Pod
		// feasible are the nodes the choice must come from.
		feasible []string
	}{
		{name: "three nodes", nodes: []*v1.Node{node("a", "2"), node("b", "2"), node("c", "2")}, pod: pod("p", "1"), feasible: []string{"a", "b", "c"}},
		{name: "the pod fits one of two", nodes: []*v1.Node{node("small", "1"), node("big", "4")}, pod: pod("p", "2"), feasible: []string{"big"}},
	}
	for _, tt := range tests {
		for seed := 1; seed <= 20; seed++ {
			t.Run(fmt.Sprintf("%s, seed %d", tt.name, seed), func(t *testing.T) {
				_, ctx := ktesting.NewTestContext(t)
				fw := plugintest.NewFramework(ctx, t, profile(t, seed), tt.nodes, nil)
				_, verdicts := plugintest.Cycle(ctx, t, fw, tt.pod)
				var max, passed []string
				for name, v := range verdicts {
					if v.Filter != "" {
						continue
					}
					passed = append(passed, name)
					switch v.Scores[random.Name] {
					case fwk.MaxScore:
						max = append(max, name)
					case fwk.MinScore:
					default:
						t.Errorf("node %s scored %d, want %d or %d", name, v.Scores[random.Name], fwk.MinScore, fwk.MaxScore)
					}
				}
				slices.Sort(passed)
				if diff := cmp.Diff(tt.feasible, passed); diff != "" {
					t.Errorf("nodes that passed Filter (-want +got):\n%s", diff)
				}
				if len(max) != 1 {
					t.Errorf("nodes with the maximum score: %v, want exactly one", max)
				}
			})
		}
	}
}

// TestUniform runs many pods through PreScore and Score with a fixed seed
// and checks that the choices are spread evenly over the nodes: Pearson's
// chi-square statistic over the counts stays below the critical value of
// the chi-square distribution with k-1 degrees of freedom at p = 0.001.
// The seed fixes the sequence of draws; which node gets which count may
// change from run to run (the snapshot lists its nodes in map order), but
// the statistic does not depend on the nodes' names, so the test gives
// the same answer every time. A fair choice would fail the bound one
// seed in a thousand. It tests the choice, not Filter or how schedulePod
// takes the highest total: TestScore and the integration test cover those.
func TestUniform(t *testing.T) {
	const pods = 6000
	nodes := []*v1.Node{node("n0", "4"), node("n1", "4"), node("n2", "4"), node("n3", "4"), node("n4", "4"), node("n5", "4")}
	// The 0.999 quantile of chi-square with 5 degrees of freedom.
	const critical = 20.515
	_, ctx := ktesting.NewTestContext(t)
	fw := plugintest.NewFramework(ctx, t, profile(t, 42), nodes, nil)
	counts := map[string]int{}
	for i := range pods {
		p := pod(fmt.Sprintf("p%d", i), "100m")
		state := framework.NewCycleState()
		infos, err := fw.SnapshotSharedLister().NodeInfos().List()
		if err != nil {
			t.Fatal(err)
		}
		if s := fw.RunPreScorePlugins(ctx, state, p, infos); !s.IsSuccess() {
			t.Fatal(s.AsError())
		}
		scores, s := fw.RunScorePlugins(ctx, state, p, infos)
		if !s.IsSuccess() {
			t.Fatal(s.AsError())
		}
		for _, ns := range scores {
			if ns.TotalScore == fwk.MaxScore {
				counts[ns.Name]++
			}
		}
	}
	expected := float64(pods) / float64(len(nodes))
	chi2, total := 0.0, 0
	for _, n := range nodes {
		d := float64(counts[n.Name]) - expected
		chi2 += d * d / expected
		total += counts[n.Name]
	}
	if total != pods {
		t.Fatalf("%d choices for %d pods: %v", total, pods, counts)
	}
	t.Logf("counts %v, chi-square %.2f (critical %.3f)", counts, chi2, critical)
	if chi2 > critical {
		t.Errorf("chi-square %.2f > %.3f: the choices %v are not uniform", chi2, critical, counts)
	}
}

// TestReserve checks the record of choices: Reserve records the pod's
// node, Unreserve and PostBind forget it, and Unreserve of a pod never
// reserved does nothing.
func TestReserve(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	fw := plugintest.NewFramework(ctx, t, profile(t, 1), []*v1.Node{node("a", "2")}, nil)
	pl := plugin(t, fw)
	a, b := pod("a", "1"), pod("b", "1")
	state := framework.NewCycleState()
	steps := []struct {
		name string
		do   func()
		want map[types.UID]string
	}{
		{"reserve a", func() { fw.RunReservePluginsReserve(ctx, state, a, "a") }, map[types.UID]string{"a": "a"}},
		{"reserve b", func() { fw.RunReservePluginsReserve(ctx, state, b, "a") }, map[types.UID]string{"a": "a", "b": "a"}},
		{"unreserve a", func() { fw.RunReservePluginsUnreserve(ctx, state, a, "a") }, map[types.UID]string{"b": "a"}},
		{"unreserve a again", func() { fw.RunReservePluginsUnreserve(ctx, state, a, "a") }, map[types.UID]string{"b": "a"}},
		{"b bound", func() { fw.RunPostBindPlugins(ctx, state, b, "a") }, map[types.UID]string{}},
	}
	for _, st := range steps {
		st.do()
		if diff := cmp.Diff(st.want, pl.Reserved()); diff != "" {
			t.Errorf("after %s (-want +got):\n%s", st.name, diff)
		}
	}
}

// TestSignPod checks that a profile with Random signs no pod, so that
// OpportunisticBatching never hands one pod another's choice, while the
// same profile without Random does (the control: signatures are on).
func TestSignPod(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	nodes := []*v1.Node{node("a", "2")}
	if sig := plugintest.NewFramework(ctx, t, profile(t, 1), nodes, nil).SignPod(ctx, pod("p", "1")); sig != nil {
		t.Errorf("with Random: signature %s, want none", sig)
	}
	without := plugintest.Profile(t, `
plugins:
  multiPoint: {disabled: [{name: "*"}]}
  queueSort: {enabled: [{name: PrioritySort}]}
  bind: {enabled: [{name: DefaultBinder}]}
  preFilter: {enabled: [{name: NodeResourcesFit}]}
  filter: {enabled: [{name: NodeResourcesFit}]}
`)
	if sig := plugintest.NewFramework(ctx, t, without, nodes, nil).SignPod(ctx, pod("p", "1")); sig == nil {
		t.Errorf("without Random: no signature, want one (is OpportunisticBatching on?)")
	}
}

// plugin finds the Random instance the framework built.
func plugin(t *testing.T, fw *plugintest.Framework) *random.Random {
	t.Helper()
	pl, ok := fw.Plugins[random.Name].(*random.Random)
	if !ok {
		t.Fatalf("the framework built no %s plugin", random.Name)
	}
	return pl
}
