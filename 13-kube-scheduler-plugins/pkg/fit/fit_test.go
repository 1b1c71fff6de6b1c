package fit_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"

	"minisched/13-kube-scheduler-plugins/internal/plugintest"
	"minisched/13-kube-scheduler-plugins/pkg/fit"
)

// These tests prove Fit equal to NodeResourcesFit the way a plugin is best
// tested against another: both run through upstream's framework runtime
// on the same nodes and pods, and every verdict and score must match.
// The cases are the ones where a hand-written NodeResourcesFit goes wrong:
// init containers, sidecars, overhead, pod-level requests, pods that
// request nothing, resizes, extended resources, and the default requests
// of scoring (kubernetes/kubernetes#130445).

// profile runs one resource plugin, name, at PreFilter, Filter, PreScore
// and Score, with the given args (YAML under args:, or "" for the
// defaults).
func profile(t *testing.T, name, args string) config.KubeSchedulerProfile {
	p := fmt.Sprintf(`
plugins:
  multiPoint: {disabled: [{name: "*"}]}
  queueSort: {enabled: [{name: PrioritySort}]}
  bind: {enabled: [{name: DefaultBinder}]}
  preFilter: {enabled: [{name: %[1]s}]}
  filter: {enabled: [{name: %[1]s}]}
  preScore: {enabled: [{name: %[1]s}]}
  score: {enabled: [{name: %[1]s, weight: 1}]}
`, name)
	if args != "" {
		p += "pluginConfig:\n- name: " + name + "\n  args:\n"
		for _, line := range strings.Split(strings.Trim(args, "\n"), "\n") {
			p += "    " + line + "\n"
		}
	}
	return plugintest.Profile(t, p)
}

type resources map[v1.ResourceName]string

func list(r resources) v1.ResourceList {
	out := v1.ResourceList{}
	for k, v := range r {
		out[k] = resource.MustParse(v)
	}
	return out
}

func node(name string, alloc resources) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: list(alloc), Capacity: list(alloc)}}
}

// podSpec builds a pod: containers, init containers (a name starting with
// "sidecar" gets restartPolicy Always), pod-level requests and overhead.
type podSpec struct {
	name       string
	node       string
	containers []resources
	inits      []resources
	initNames  []string
	podLevel   resources
	overhead   resources
	allocated  resources // status.containerStatuses[0].allocatedResources (a resize in progress)
	infeasible bool      // the resize is Infeasible
}

func (s podSpec) pod() *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: s.name, UID: types.UID(s.name)}, Spec: v1.PodSpec{NodeName: s.node}}
	for i, r := range s.containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: fmt.Sprintf("c%d", i), Resources: v1.ResourceRequirements{Requests: list(r)}})
	}
	always := v1.ContainerRestartPolicyAlways
	for i, r := range s.inits {
		c := v1.Container{Name: fmt.Sprintf("i%d", i), Resources: v1.ResourceRequirements{Requests: list(r)}}
		if i < len(s.initNames) {
			c.Name = s.initNames[i]
			if strings.HasPrefix(c.Name, "sidecar") {
				c.RestartPolicy = &always
			}
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	if s.podLevel != nil {
		p.Spec.Resources = &v1.ResourceRequirements{Requests: list(s.podLevel)}
	}
	if s.overhead != nil {
		p.Spec.Overhead = list(s.overhead)
	}
	if s.allocated != nil {
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c0", AllocatedResources: list(s.allocated)}}
	}
	if s.infeasible {
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonInfeasible}}
	}
	return p
}

var (
	small = resources{v1.ResourceCPU: "1500m", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}
	big   = resources{v1.ResourceCPU: "4", v1.ResourceMemory: "4Gi", v1.ResourcePods: "110"}
)

// cases are shared by the verdict and the signature tests.
var cases = []struct {
	name     string
	args     string
	nodes    []*v1.Node
	existing []podSpec
	pod      podSpec
	// classes are the DRA DeviceClasses the apiserver holds.
	classes []runtime.Object
}{
	{
		name:  "requests that fit one node of two",
		nodes: []*v1.Node{node("a", small), node("b", big)},
		pod:   podSpec{name: "p", containers: []resources{{v1.ResourceCPU: "2", v1.ResourceMemory: "1Gi"}}},
	},
	{
		name:     "room taken by a pod: Unschedulable, not Unresolvable",
		nodes:    []*v1.Node{node("a", small), node("b", big)},
		existing: []podSpec{{name: "load", node: "b", containers: []resources{{v1.ResourceCPU: "3"}}}},
		pod:      podSpec{name: "p", containers: []resources{{v1.ResourceCPU: "1200m"}}},
	},
	{
		name:  "the largest init container counts, not the sum",
		nodes: []*v1.Node{node("a", small), node("b", big)},
		pod:   podSpec{name: "p", inits: []resources{{v1.ResourceCPU: "2", v1.ResourceMemory: "1Gi"}}, containers: []resources{{v1.ResourceCPU: "500m", v1.ResourceMemory: "1Gi"}}},
	},
	{
		name:  "a sidecar before an init container runs beside it",
		nodes: []*v1.Node{node("a", small), node("b", big)},
		pod: podSpec{name: "p", initNames: []string{"sidecar", "job"},
			inits:      []resources{{v1.ResourceCPU: "600m", v1.ResourceMemory: "512Mi"}, {v1.ResourceCPU: "1", v1.ResourceMemory: "512Mi"}},
			containers: []resources{{v1.ResourceCPU: "500m", v1.ResourceMemory: "512Mi"}}},
	},
	{
		name:  "a sidecar after an init container does not",
		nodes: []*v1.Node{node("a", small), node("b", big)},
		pod: podSpec{name: "p", initNames: []string{"job", "sidecar"},
			inits:      []resources{{v1.ResourceCPU: "1", v1.ResourceMemory: "512Mi"}, {v1.ResourceCPU: "600m", v1.ResourceMemory: "512Mi"}},
			containers: []resources{{v1.ResourceCPU: "500m", v1.ResourceMemory: "512Mi"}}},
	},
	{
		name:  "overhead comes on top",
		nodes: []*v1.Node{node("a", small), node("b", big)},
		pod:   podSpec{name: "p", overhead: resources{v1.ResourceCPU: "600m", v1.ResourceMemory: "64Mi"}, containers: []resources{{v1.ResourceCPU: "1", v1.ResourceMemory: "1Gi"}}},
	},
	{
		name:  "pod-level requests replace the containers' sum in Filter",
		nodes: []*v1.Node{node("a", small), node("b", big)},
		pod: podSpec{name: "p", podLevel: resources{v1.ResourceCPU: "1800m", v1.ResourceMemory: "1Gi"},
			containers: []resources{{v1.ResourceCPU: "100m", v1.ResourceMemory: "512Mi"}, {v1.ResourceCPU: "100m", v1.ResourceMemory: "512Mi"}}},
	},
	{
		name:     "but not in Score",
		nodes:    []*v1.Node{node("a", resources{v1.ResourceCPU: "2", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}), node("b", resources{v1.ResourceCPU: "10", v1.ResourceMemory: "4Gi", v1.ResourcePods: "110"})},
		existing: []podSpec{{name: "load", node: "b", containers: []resources{{v1.ResourceCPU: "5", v1.ResourceMemory: "1Gi"}}}},
		pod:      podSpec{name: "p", podLevel: resources{v1.ResourceCPU: "2", v1.ResourceMemory: "1Gi"}, containers: []resources{{v1.ResourceCPU: "100m", v1.ResourceMemory: "1Gi"}}},
	},
	{
		name:  "pods that request nothing count the defaults in Score (#130445)",
		nodes: []*v1.Node{node("a", resources{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}), node("b", resources{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"})},
		existing: []podSpec{
			{name: "be-1", node: "a", containers: []resources{{}}}, {name: "be-2", node: "a", containers: []resources{{}}}, {name: "be-3", node: "a", containers: []resources{{}}},
			{name: "be-4", node: "a", containers: []resources{{}}}, {name: "be-5", node: "a", containers: []resources{{}}}, {name: "be-6", node: "a", containers: []resources{{}}},
			{name: "load", node: "b", containers: []resources{{v1.ResourceCPU: "600m", v1.ResourceMemory: "1Gi"}}},
		},
		pod: podSpec{name: "p", containers: []resources{{v1.ResourceCPU: "500m", v1.ResourceMemory: "512Mi"}}},
	},
	{
		name:     "an init container without requests counts the defaults in Score",
		nodes:    []*v1.Node{node("a", big), node("b", big)},
		existing: []podSpec{{name: "load", node: "b", containers: []resources{{v1.ResourceCPU: "5m"}}, inits: []resources{{}}}},
		pod:      podSpec{name: "p", containers: []resources{{v1.ResourceCPU: "200m", v1.ResourceMemory: "1Gi"}}},
	},
	{
		name:  "an explicit zero is not a missing request",
		nodes: []*v1.Node{node("a", big)},
		pod:   podSpec{name: "p", containers: []resources{{v1.ResourceCPU: "0", v1.ResourceMemory: "0"}}},
	},
	{
		name:     "a pod that requests nothing needs only a pod slot",
		nodes:    []*v1.Node{node("a", resources{v1.ResourceCPU: "1", v1.ResourceMemory: "1Gi", v1.ResourcePods: "2"})},
		existing: []podSpec{{name: "load", node: "a", containers: []resources{{v1.ResourceCPU: "1", v1.ResourceMemory: "1Gi"}}}},
		pod:      podSpec{name: "p", containers: []resources{{}}},
	},
	{
		name:     "too many pods",
		nodes:    []*v1.Node{node("a", resources{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "1"})},
		existing: []podSpec{{name: "load", node: "a", containers: []resources{{v1.ResourceCPU: "100m"}}}},
		pod:      podSpec{name: "p", containers: []resources{{v1.ResourceCPU: "100m"}}},
	},
	{
		name:     "a running pod being resized counts the larger of spec and status",
		nodes:    []*v1.Node{node("a", resources{v1.ResourceCPU: "2", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"})},
		existing: []podSpec{{name: "resized", node: "a", containers: []resources{{v1.ResourceCPU: "500m"}}, allocated: resources{v1.ResourceCPU: "1500m"}}},
		pod:      podSpec{name: "p", containers: []resources{{v1.ResourceCPU: "800m"}}},
	},
	{
		name:     "an infeasible resize counts its status only",
		nodes:    []*v1.Node{node("a", resources{v1.ResourceCPU: "2", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"})},
		existing: []podSpec{{name: "resized", node: "a", containers: []resources{{v1.ResourceCPU: "3"}}, allocated: resources{v1.ResourceCPU: "500m"}, infeasible: true}},
		pod:      podSpec{name: "p", containers: []resources{{v1.ResourceCPU: "800m"}}},
	},
	{
		name: "extended resources, huge pages and ephemeral storage",
		nodes: []*v1.Node{
			node("a", resources{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110", "example.com/gpu": "1", "hugepages-2Mi": "64Mi", v1.ResourceEphemeralStorage: "10Gi"}),
			node("b", resources{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110", "example.com/gpu": "4", "hugepages-2Mi": "1Gi", v1.ResourceEphemeralStorage: "1Gi"}),
		},
		pod: podSpec{name: "p", containers: []resources{{"example.com/gpu": "2", "hugepages-2Mi": "128Mi", v1.ResourceEphemeralStorage: "2Gi"}}},
	},
	{
		name:  "ignored resources and resource groups",
		args:  "ignoredResources: [example.com/fpga]\nignoredResourceGroups: [vendor.io]\n",
		nodes: []*v1.Node{node("a", big)},
		pod:   podSpec{name: "p", containers: []resources{{v1.ResourceCPU: "1", "example.com/fpga": "1", "vendor.io/tpu": "2", "example.com/gpu": "1"}}},
	},
	{
		name:     "MostAllocated",
		args:     "scoringStrategy:\n  type: MostAllocated\n  resources: [{name: cpu, weight: 2}, {name: memory, weight: 1}]\n",
		nodes:    []*v1.Node{node("a", big), node("b", big), node("c", small)},
		existing: []podSpec{{name: "load", node: "b", containers: []resources{{v1.ResourceCPU: "2", v1.ResourceMemory: "1Gi"}}}},
		pod:      podSpec{name: "p", containers: []resources{{v1.ResourceCPU: "1", v1.ResourceMemory: "512Mi"}}},
	},
	{
		// Ten pods that ask for nothing count 100m each when scoring, and
		// the pod 100m more: 1100m on a 1-CPU node, which MostAllocated
		// counts as full (mostRequestedScore caps at the capacity).
		name:     "MostAllocated past a node's CPU, by the default requests",
		args:     "scoringStrategy: {type: MostAllocated}\n",
		nodes:    []*v1.Node{node("a", resources{v1.ResourceCPU: "1", v1.ResourceMemory: "4Gi", v1.ResourcePods: "110"}), node("b", big)},
		existing: bestEffort("a", 10),
		pod:      podSpec{name: "p", containers: []resources{{}}},
	},
	{
		name:  "LeastAllocated with weights",
		args:  "scoringStrategy:\n  type: LeastAllocated\n  resources: [{name: cpu, weight: 3}, {name: memory, weight: 1}]\n",
		nodes: []*v1.Node{node("a", big), node("b", small)},
		pod:   podSpec{name: "p", containers: []resources{{v1.ResourceCPU: "300m", v1.ResourceMemory: "1Gi"}}},
	},
	{
		// No node lists example.com/gpu, and a DeviceClass provides it:
		// the DynamicResources plugin allocates it, and NodeResourcesFit
		// leaves it alone, at Filter and in the signature.
		name:    "an extended resource that a DeviceClass provides is left to DRA",
		nodes:   []*v1.Node{node("a", big), node("b", small)},
		classes: []runtime.Object{deviceClass("gpus", "example.com/gpu")},
		pod:     podSpec{name: "p", containers: []resources{{v1.ResourceCPU: "1", "example.com/gpu": "1"}}},
	},
	{
		// A node that lists the resource counts it itself, DeviceClass or
		// not: only a resource the node does not list goes to DRA.
		name:    "an extended resource the node lists is counted, though a DeviceClass provides it",
		nodes:   []*v1.Node{node("a", resources{v1.ResourceCPU: "4", v1.ResourceMemory: "4Gi", v1.ResourcePods: "110", "example.com/gpu": "1"})},
		classes: []runtime.Object{deviceClass("gpus", "example.com/gpu")},
		pod:     podSpec{name: "p", containers: []resources{{v1.ResourceCPU: "1", "example.com/gpu": "2"}}},
	},
}

// bestEffort is n pods on the node that ask for nothing.
func bestEffort(node string, n int) []podSpec {
	var out []podSpec
	for i := range n {
		out = append(out, podSpec{name: fmt.Sprintf("best-effort-%d", i), node: node, containers: []resources{{}}})
	}
	return out
}

// sortedReasons makes a Filter verdict comparable: the reasons of other
// resources come in map order, in both plugins.
func sortedReasons(v string) string {
	code, reasons, ok := strings.Cut(v, ": ")
	if !ok {
		return v
	}
	parts := strings.Split(reasons, ", ")
	slices.Sort(parts)
	return code + ": " + strings.Join(parts, ", ")
}

// TestSameRequests compares podRequests, for the pod of every case, with
// PodRequests in k8s.io/component-helpers/resource, the function
// NodeResourcesFit calls, under the options NodeResourcesFit gives it:
// PreFilter and SignPod count the pod-level requests when the
// PodLevelResources gate is on (computePodResourceRequest in fit.go);
// scoring counts no pod-level requests, and the default requests for a
// container that names none (calculatePodResourceRequest in
// resource_allocation.go). It pins podRequests down on its own, so that a
// mistake in it shows here, and not first in Score's subtests.
func TestSameRequests(t *testing.T) {
	// milli turns a list into milli-units, so that 1 and 1000m compare
	// equal, and leaves out zeros, which no check of Fit tells apart from
	// a missing entry.
	milli := func(l v1.ResourceList) map[v1.ResourceName]int64 {
		out := map[v1.ResourceName]int64{}
		for name, q := range l {
			if v := q.MilliValue(); v != 0 {
				out[name] = v
			}
		}
		return out
	}
	options := []struct {
		name       string
		podLevel   bool
		nonMissing v1.ResourceList
	}{
		{"to filter", true, nil},
		{"to filter, PodLevelResources off", false, nil},
		{"to score", false, fit.DefaultRequests},
	}
	for _, tt := range cases {
		for _, o := range options {
			t.Run(tt.name+", "+o.name, func(t *testing.T) {
				pod := tt.pod.pod()
				want := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{SkipPodLevelResources: !o.podLevel, NonMissingContainerRequests: o.nonMissing})
				got := fit.PodRequests(pod, o.podLevel, o.nonMissing)
				if diff := cmp.Diff(milli(want), milli(got)); diff != "" {
					t.Errorf("requests in milli-units (-PodRequests +podRequests):\n%s", diff)
				}
			})
		}
	}
}

// TestSameVerdictsAsNodeResourcesFit runs each case through a framework
// with NodeResourcesFit and one with Fit, and compares the PreFilter
// status and every node's Filter status (subtest Filter), then every
// feasible node's score (subtest Score): Filter holds once Fit's requests
// and fitsRequest are right, Score once its scoring is too.
func TestSameVerdictsAsNodeResourcesFit(t *testing.T) {
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var existing []*v1.Pod
			for _, p := range tt.existing {
				existing = append(existing, p.pod())
			}
			upstream := plugintest.NewFramework(ctx, t, profile(t, "NodeResourcesFit", tt.args), tt.nodes, existing, tt.classes...)
			ours := plugintest.NewFramework(ctx, t, profile(t, fit.Name, tt.args), tt.nodes, existing, tt.classes...)
			wantPre, want := plugintest.Cycle(ctx, t, upstream, tt.pod.pod())
			gotPre, got := plugintest.Cycle(ctx, t, ours, tt.pod.pod())
			if len(tt.classes) > 0 && !slices.ContainsFunc(tt.nodes, listsGPU) {
				// NodeResourcesFit itself leaves the resource alone: were
				// the DRA manager's cache empty, both plugins would reject
				// the nodes alike, and the comparison would prove nothing.
				for n, v := range want {
					if v.Filter != "" {
						t.Fatalf("NodeResourcesFit rejects node %s (%s): the DeviceClass did not reach the DRA manager", n, v.Filter)
					}
				}
			}
			t.Logf("verdicts: %+v", got)
			t.Run("Filter", func(t *testing.T) {
				if diff := cmp.Diff(wantPre, gotPre); diff != "" {
					t.Errorf("PreFilter (-NodeResourcesFit +Fit):\n%s", diff)
				}
				filters := func(m map[string]plugintest.Verdict) map[string]string {
					out := map[string]string{}
					for n, v := range m {
						out[n] = sortedReasons(v.Filter)
					}
					return out
				}
				if diff := cmp.Diff(filters(want), filters(got)); diff != "" {
					t.Errorf("Filter verdicts (-NodeResourcesFit +Fit):\n%s", diff)
				}
			})
			t.Run("Score", func(t *testing.T) {
				scores := func(m map[string]plugintest.Verdict, plugin string) map[string]plugintest.Verdict {
					out := map[string]plugintest.Verdict{}
					for n, v := range m {
						if v.Filter != "" {
							continue
						}
						if v.Scores != nil {
							v.Scores = map[string]int64{"score": v.Scores[plugin]}
						}
						out[n] = v
					}
					return out
				}
				if diff := cmp.Diff(scores(want, "NodeResourcesFit"), scores(got, fit.Name)); diff != "" {
					t.Errorf("scores (-NodeResourcesFit +Fit):\n%s", diff)
				}
			})
		})
	}
}

// listsGPU says whether a node lists example.com/gpu, the extended
// resource of the DRA cases: only a resource no node lists is left to DRA.
func listsGPU(n *v1.Node) bool {
	return !n.Status.Allocatable.Name("example.com/gpu", resource.DecimalSI).IsZero()
}

// TestSameSignature checks that Fit signs each pod as NodeResourcesFit
// does, so that OpportunisticBatching groups the same pods.
func TestSameSignature(t *testing.T) {
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			upstream := plugintest.NewFramework(ctx, t, profile(t, "NodeResourcesFit", tt.args), tt.nodes, nil, tt.classes...)
			ours := plugintest.NewFramework(ctx, t, profile(t, fit.Name, tt.args), tt.nodes, nil, tt.classes...)
			want, got := upstream.SignPod(ctx, tt.pod.pod()), ours.SignPod(ctx, tt.pod.pod())
			if len(tt.classes) > 0 {
				// A pod that asks for a resource a DeviceClass provides is
				// signed by neither: its fit depends on devices.
				if want != nil || got != nil {
					t.Errorf("signatures %s and %s: want neither, the pod's resource is DRA's", want, got)
				}
				return
			}
			if want == nil || got == nil {
				t.Fatalf("signatures %s and %s: want both", want, got)
			}
			var w, g any
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("signature (-NodeResourcesFit +Fit):\n%s", diff)
			}
		})
	}
}

// TestSameEvents checks that Fit registers NodeResourcesFit's events, and
// that its queueing hints answer as NodeResourcesFit's do: for every change,
// once with no DeviceClass and once with a class that provides the pod's
// extended resource, since the hints for nodes and classes ask DRA whether
// the resource is its to allocate.
func TestSameEvents(t *testing.T) {
	target := podSpec{name: "p", containers: []resources{{v1.ResourceCPU: "2", "example.com/gpu": "1"}}}.pod()
	// byClass asks for a device of the class gpus by the name every class
	// implies, deviceclass.resource.kubernetes.io/NAME.
	byClass := podSpec{name: "p", containers: []resources{{v1.ResourceCPU: "2", v1.ResourceName(resourceapi.ResourceDeviceClassPrefix + "gpus"): "1"}}}.pod()
	bigger := node("a", resources{v1.ResourceCPU: "8", v1.ResourceMemory: "4Gi", v1.ResourcePods: "110", "example.com/gpu": "1"})
	withGPU := node("a", resources{v1.ResourceCPU: "4", v1.ResourceMemory: "4Gi", v1.ResourcePods: "110", "example.com/gpu": "1"})
	morePods := node("a", resources{v1.ResourceCPU: "4", v1.ResourceMemory: "4Gi", v1.ResourcePods: "200", "example.com/gpu": "1"})
	tooSmall := node("a", resources{v1.ResourceCPU: "1", v1.ResourceMemory: "4Gi", v1.ResourcePods: "110", "example.com/gpu": "1"})
	running := podSpec{name: "r", node: "a", containers: []resources{{v1.ResourceCPU: "2"}}}.pod()
	runningSmaller := podSpec{name: "r", node: "a", containers: []resources{{v1.ResourceCPU: "1"}}}.pod()
	runningMemSmaller := podSpec{name: "r", node: "a", containers: []resources{{v1.ResourceCPU: "2", v1.ResourceMemory: "1Gi"}}}.pod()
	runningMem := podSpec{name: "r", node: "a", containers: []resources{{v1.ResourceCPU: "2", v1.ResourceMemory: "2Gi"}}}.pod()
	pending := podSpec{name: "q", containers: []resources{{v1.ResourceCPU: "2"}}}.pod()
	nominated := pending.DeepCopy()
	nominated.Status.NominatedNodeName = "a"
	changes := []struct {
		name     string
		event    int // index in the events
		old, new any
		target   *v1.Pod // the pod that waits; target when nil
	}{
		{name: "a running pod deleted", event: 0, old: running},
		{name: "a pending pod deleted", event: 0, old: pending},
		{name: "a nominated pod deleted", event: 0, old: nominated},
		{name: "a pod deleted, but the object is a node", event: 0, old: withGPU},
		{name: "a node that fits added", event: 1, new: withGPU},
		{name: "a node too small added", event: 1, new: tooSmall},
		{name: "a node without the GPU added", event: 1, new: node("a", big)},
		{name: "a node given more CPU", event: 1, old: withGPU, new: bigger},
		{name: "a node given more pod slots", event: 1, old: withGPU, new: morePods},
		{name: "a node updated, nothing more", event: 1, old: withGPU, new: withGPU},
		{name: "a node without the GPU updated, nothing more", event: 1, old: node("a", big), new: node("a", big)},
		{name: "a running pod scaled down in CPU", event: 3, old: running, new: runningSmaller},
		{name: "a running pod scaled down in memory only", event: 3, old: runningMem, new: runningMemSmaller},
		{name: "the pod itself scaled down", event: 4, old: target, new: target},
		{name: "a DeviceClass for the pod's extended resource added", event: 2, new: deviceClass("gpus", "example.com/gpu")},
		{name: "a DeviceClass for another resource added", event: 2, new: deviceClass("fpgas", "example.com/fpga")},
		{name: "a DeviceClass given the pod's extended resource", event: 2, old: deviceClass("gpus", ""), new: deviceClass("gpus", "example.com/gpu")},
		{name: "a DeviceClass updated, its resource the same", event: 2, old: deviceClass("gpus", "example.com/gpu"), new: deviceClass("gpus", "example.com/gpu")},
		{name: "a DeviceClass added whose name the pod asks for", event: 2, new: deviceClass("gpus", ""), target: byClass},
		{name: "a DeviceClass added, but the object is a pod", event: 2, new: running},
	}
	setups := []struct {
		name    string
		classes []runtime.Object
	}{
		{"no DeviceClass", nil},
		{"a DeviceClass provides example.com/gpu", []runtime.Object{deviceClass("gpus", "example.com/gpu")}},
	}
	for _, setup := range setups {
		t.Run(setup.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			nodes := []*v1.Node{node("a", big)}
			upstream := plugintest.NewFramework(ctx, t, profile(t, "NodeResourcesFit", ""), nodes, nil, setup.classes...).Plugins["NodeResourcesFit"].(fwk.EnqueueExtensions)
			ours := plugintest.NewFramework(ctx, t, profile(t, fit.Name, ""), nodes, nil, setup.classes...).Plugins[fit.Name].(fwk.EnqueueExtensions)
			want, err := upstream.EventsToRegister(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ours.EventsToRegister(ctx)
			if err != nil {
				t.Fatal(err)
			}
			events := func(l []fwk.ClusterEventWithHint) []string {
				var out []string
				for _, e := range l {
					out = append(out, e.Event.Label())
				}
				return out
			}
			if diff := cmp.Diff(events(want), events(got)); diff != "" {
				t.Fatalf("events (-NodeResourcesFit +Fit):\n%s", diff)
			}
			logger, _ := ktesting.NewTestContext(t)
			for _, c := range changes {
				t.Run(c.name, func(t *testing.T) {
					if c.event >= len(want) {
						t.Fatalf("event %d of %d", c.event, len(want))
					}
					pod := target
					if c.target != nil {
						pod = c.target
					}
					wantHint, wantErr := want[c.event].QueueingHintFn(logger, pod, c.old, c.new)
					gotHint, gotErr := got[c.event].QueueingHintFn(logger, pod, c.old, c.new)
					if wantHint != gotHint || (wantErr == nil) != (gotErr == nil) {
						t.Errorf("%s: NodeResourcesFit says %v (%v), Fit %v (%v)", want[c.event].Event.Label(), wantHint, wantErr, gotHint, gotErr)
					}
				})
			}
		})
	}
}

// deviceClass is a DRA DeviceClass that provides an extended resource
// (none for "").
func deviceClass(name, extended string) *resourceapi.DeviceClass {
	c := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if extended != "" {
		c.Spec.ExtendedResourceName = &extended
	}
	return c
}

// TestArgs checks that Fit takes NodeResourcesFit's args and refuses what
// it does not implement, with one line that says so.
func TestArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    string
		wantErr string
	}{
		{name: "the defaults"},
		{name: "MostAllocated", args: "scoringStrategy: {type: MostAllocated}"},
		{name: "RequestedToCapacityRatio", args: "scoringStrategy:\n  type: RequestedToCapacityRatio\n  requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}", wantErr: "scoring strategy RequestedToCapacityRatio is not supported by Fit"},
		{name: "a weight out of range", args: "scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 200}]}", wantErr: "resource weight of cpu not in valid range"},
		// kube-scheduler refuses the same field in NodeResourcesFit's args
		// when it loads the file (strict decoding).
		{name: "a misspelt field", args: "scoringStrategy: {type: MostAllocated, resouces: [{name: cpu, weight: 2}]}", wantErr: `unknown field "scoringStrategy.resouces"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			prof := profile(t, fit.Name, tt.args)
			var args runtime.Object
			for _, pc := range prof.PluginConfig {
				if pc.Name == fit.Name {
					args = pc.Args
				}
			}
			_, err := fit.New(ctx, args, nil)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("New: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("New: %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
}
