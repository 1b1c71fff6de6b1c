package config_test

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

	"minisched/13-kube-scheduler-plugins/internal/plugintest"
	"minisched/13-kube-scheduler-plugins/pkg/registry"
)

// TestMaxPods checks the exercise's MaxPods, an out-of-tree Filter plugin:
// registered in pkg/registry, enabled by config/maxpods.yaml beside the
// default plugins with the argument maxPods: 2, it rejects a node that
// already holds two pods. The test names no package of the plugin's: it
// finds MaxPods through the chapter's registry and the configuration, as
// kube-scheduler does.
func TestMaxPods(t *testing.T) {
	logger, ctx := ktesting.NewTestContext(t)
	profile := plugintest.LoadProfile(t, logger, "maxpods.yaml")
	if profile.SchedulerName != "mini-scheduler" {
		t.Errorf("maxpods.yaml: scheduler name %q, want mini-scheduler", profile.SchedulerName)
	}

	t.Run("the defaults, and MaxPods last at Filter", func(t *testing.T) {
		defaults := plugintest.NewFramework(ctx, t, plugintest.LoadProfile(t, logger, plugintest.WriteConfig(t, "profiles:\n- schedulerName: mini-scheduler\n")), nil, nil).ListPlugins()
		want := points(defaults)
		want["Filter"] = append(slices.Clone(want["Filter"]), "MaxPods")
		got := plugintest.NewFramework(ctx, t, profile, nil, nil).ListPlugins()
		if diff := cmp.Diff(want, points(got)); diff != "" {
			t.Errorf("plugins (-want +got):\n%s", diff)
		}
	})

	node := func(name string) *v1.Node {
		return &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{
				v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110"),
			}},
		}
	}
	podsOn := func(nodeName string, n int) []*v1.Pod {
		var pods []*v1.Pod
		for i := range n {
			pods = append(pods, &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("%s-%d", nodeName, i), UID: types.UID(fmt.Sprintf("uid-%s-%d", nodeName, i))},
				Spec:       v1.PodSpec{NodeName: nodeName, Containers: []v1.Container{{Name: "c"}}},
			})
		}
		return pods
	}
	tests := []struct {
		name     string
		existing []*v1.Pod
		// want is each node's Filter verdict: "" when it passes.
		want map[string]string
	}{
		{
			name:     "one pod is not too many",
			existing: podsOn("a", 1),
			want:     map[string]string{"a": "", "b": ""},
		},
		{
			name:     "two pods fill a node",
			existing: append(podsOn("a", 2), podsOn("b", 1)...),
			want:     map[string]string{"a": "Unschedulable: node(s) have too many pods", "b": ""},
		},
		{
			name:     "every node full",
			existing: append(podsOn("a", 3), podsOn("b", 2)...),
			want:     map[string]string{"a": "Unschedulable: node(s) have too many pods", "b": "Unschedulable: node(s) have too many pods"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fw := plugintest.NewFramework(ctx, t, profile, []*v1.Node{node("a"), node("b")}, tt.existing)
			p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", UID: "uid-p"}, Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}}
			status, verdicts := plugintest.Cycle(ctx, t, fw, p)
			if status != "" {
				t.Fatalf("PreFilter: %s", status)
			}
			got := map[string]string{}
			for name, v := range verdicts {
				got[name] = v.Filter
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Filter verdicts (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("it signs pods, so OpportunisticBatching stays on", func(t *testing.T) {
		// The default profile signs no pod in v1.37.1 (PodTopologySpread's
		// default constraints refuse to), so MaxPods is signed in a profile
		// of its own, as the framework would sign it in any profile.
		alone := plugintest.Profile(t, `
plugins:
  multiPoint: {disabled: [{name: "*"}]}
  queueSort: {enabled: [{name: PrioritySort}]}
  bind: {enabled: [{name: DefaultBinder}]}
  filter: {enabled: [{name: MaxPods}]}
pluginConfig:
- name: MaxPods
  args: {maxPods: 2}
`)
		fw := plugintest.NewFramework(ctx, t, alone, []*v1.Node{node("a")}, nil)
		if sig := fw.SignPod(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"}}); sig == nil {
			t.Error("no signature: a Filter plugin without SignPod turns batching off for the whole profile")
		}
	})

	t.Run("a pod deleted from a node, or a node added, requeues the pod", func(t *testing.T) {
		fw := plugintest.NewFramework(ctx, t, profile, nil, nil)
		ext, ok := fw.Plugins["MaxPods"].(fwk.EnqueueExtensions)
		if !ok {
			t.Fatal("MaxPods does not implement EventsToRegister")
		}
		events, err := ext.EventsToRegister(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range events {
			got = append(got, e.Event.Label())
		}
		want := []string{fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}.Label(), fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}.Label()}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})

	t.Run("maxPods must be positive", func(t *testing.T) {
		r, err := registry.New()
		if err != nil {
			t.Fatal(err)
		}
		factory, ok := r["MaxPods"]
		if !ok {
			t.Fatal("MaxPods is not in pkg/registry")
		}
		bad := plugintest.LoadProfile(t, logger, plugintest.WriteConfig(t, "profiles:\n- schedulerName: mini-scheduler\n  pluginConfig:\n  - name: MaxPods\n    args: {maxPods: 0}\n"))
		for _, pc := range bad.PluginConfig {
			if pc.Name != "MaxPods" {
				continue
			}
			if _, err := factory(ctx, pc.Args, nil); err == nil {
				t.Error("maxPods: 0 was taken; want an error that says it must be positive")
			}
			return
		}
		t.Fatal("no pluginConfig for MaxPods")
	})
}
