package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

type resources map[v1.ResourceName]string

func list(r resources) v1.ResourceList {
	out := v1.ResourceList{}
	for k, v := range r {
		out[k] = resource.MustParse(v)
	}
	return out
}

func node(name string, alloc resources, labels map[string]string) *v1.Node {
	if _, ok := alloc[v1.ResourcePods]; !ok {
		alloc[v1.ResourcePods] = "110"
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status:     v1.NodeStatus{Allocatable: list(alloc), Capacity: list(alloc)},
	}
}

// pod is a pod of the chapters' scheduler name with one container per
// entry of containers; init containers named "sidecar..." restart always.
func pod(name string, containers []resources, inits []string, initRes []resources) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       v1.PodSpec{SchedulerName: "mini-scheduler"},
	}
	for i, r := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: fmt.Sprintf("c%d", i), Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{Requests: list(r)}})
	}
	always := v1.ContainerRestartPolicyAlways
	for i, n := range inits {
		c := v1.Container{Name: n, Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{Requests: list(initRes[i])}}
		if strings.HasPrefix(n, "sidecar") {
			c.RestartPolicy = &always
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	return p
}

// overCommitted lists the nodes whose pods request more CPU than they
// have.
func overCommitted(ctx context.Context, t *testing.T, client kubernetes.Interface) []string {
	t.Helper()
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range nodes.Items {
		used := resource.Quantity{}
		for _, p := range pods.Items {
			if p.Spec.NodeName == n.Name {
				for _, c := range p.Spec.Containers {
					used.Add(*c.Resources.Requests.Cpu())
				}
			}
		}
		if used.Cmp(*n.Status.Allocatable.Cpu()) > 0 {
			out = append(out, fmt.Sprintf("%s (%s of %s)", n.Name, used.String(), n.Status.Allocatable.Cpu().String()))
		}
	}
	return out
}

// TestRandom runs the random scheduler: every pod binds, no node is given
// more than it has, and PostBind logged each choice.
func TestRandom(t *testing.T) {
	// The logger keeps what it logs, so that the test can count the
	// PostBind lines (ktesting.NewTestContext's only prints them).
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx := klog.NewContext(context.Background(), logger)
	cfg := startAPIServer(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	for i := range 4 {
		if _, err := client.CoreV1().Nodes().Create(ctx, node(fmt.Sprintf("n%d", i), resources{v1.ResourceCPU: "2", v1.ResourceMemory: "8Gi"}, nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	runScheduler(ctx, t, schedulerConfig(t, "random.yaml", writeKubeconfig(t, cfg), map[string]map[string]any{"Random": {"seed": 7}}))
	const pods = 12
	for i := range pods {
		p := pod(fmt.Sprintf("p%02d", i), []resources{{v1.ResourceCPU: "500m"}}, nil, nil)
		if _, err := client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	used := map[string]int{}
	for i := range pods {
		used[waitBound(ctx, t, client, "default", fmt.Sprintf("p%02d", i))]++
	}
	t.Logf("pods per node: %v", used)
	if over := overCommitted(ctx, t, client); len(over) > 0 {
		t.Errorf("over-committed nodes: %v", over)
	}
	// PostBind runs after the Binding that set the pod's node: wait for
	// its lines.
	waitFor(ctx, t, fmt.Sprintf("%d PostBind lines", pods), func() (bool, error) {
		buf := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
		return strings.Count(buf, "Bound pod to a randomly chosen node") == pods, nil
	})
}

// TestNodeCost runs upstream's defaults with NodeCost: pods that opt in
// go to the cheapest node while it has room.
func TestNodeCost(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cfg := startAPIServer(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	for name, cost := range map[string]string{"cheap": "1", "mid": "5", "dear": "9"} {
		n := node(name, resources{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}, map[string]string{"minisched.io/cost": cost})
		if _, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	runScheduler(ctx, t, schedulerConfig(t, "nodecost.yaml", writeKubeconfig(t, cfg), nil))
	got := map[string]string{}
	for i := range 3 {
		p := pod(fmt.Sprintf("thrifty-%d", i), []resources{{v1.ResourceCPU: "1"}}, nil, nil)
		p.Annotations = map[string]string{"minisched.io/prefer-cheap-nodes": "true"}
		if _, err := client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got[p.Name] = waitBound(ctx, t, client, "default", p.Name)
	}
	want := map[string]string{"thrifty-0": "cheap", "thrifty-1": "cheap", "thrifty-2": "cheap"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("placements (-want +got):\n%s", diff)
	}
}

// fitCase is a pod and two nodes where a NodeResourcesFit that computes
// requests naively (the containers' sum) places the pod elsewhere than
// kube-scheduler does: an init container larger than the containers, a
// sidecar before or after an init container, a RuntimeClass's overhead,
// pod-level requests, and pods without requests on a node (which scoring
// counts at 100m each, kubernetes/kubernetes#130445). want is the node
// kube-scheduler v1.37.1 picks, worked out from its sources and checked
// by running it; Fit must pick it too.
type fitCase struct {
	name     string
	nodes    []*v1.Node
	existing []*v1.Pod // bound, with their nodes
	pod      *v1.Pod
	runtime  *nodev1.RuntimeClass
	want     string
}

func bound(p *v1.Pod, node string) *v1.Pod {
	p.Spec.NodeName = node
	return p
}

func fitCases() []fitCase {
	a := func() *v1.Node { return node("a", resources{v1.ResourceCPU: "1500m", v1.ResourceMemory: "8Gi"}, nil) }
	b := func() *v1.Node { return node("b", resources{v1.ResourceCPU: "4", v1.ResourceMemory: "4Gi"}, nil) }
	bLoad := func() *v1.Pod {
		return bound(pod("b-load", []resources{{v1.ResourceCPU: "2", v1.ResourceMemory: "2Gi"}}, nil, nil), "b")
	}
	withOverhead := pod("with-overhead", []resources{{v1.ResourceCPU: "1", v1.ResourceMemory: "1Gi"}}, nil, nil)
	withOverhead.Spec.RuntimeClassName = ptrTo("with-overhead")
	podLevel := pod("pod-level", []resources{{v1.ResourceCPU: "100m", v1.ResourceMemory: "512Mi"}, {v1.ResourceCPU: "100m", v1.ResourceMemory: "512Mi"}}, nil, nil)
	podLevel.Spec.Resources = &v1.ResourceRequirements{Requests: list(resources{v1.ResourceCPU: "1800m", v1.ResourceMemory: "1Gi"})}
	var bestEffort []*v1.Pod
	for i := range 10 {
		bestEffort = append(bestEffort, bound(pod(fmt.Sprintf("best-effort-%d", i), []resources{{}}, nil, nil), "a"))
	}
	return []fitCase{
		{
			name:  "the largest init container decides",
			nodes: []*v1.Node{a(), b()}, existing: []*v1.Pod{bLoad()},
			pod:  pod("init-heavy", []resources{{v1.ResourceCPU: "500m", v1.ResourceMemory: "1Gi"}}, []string{"setup"}, []resources{{v1.ResourceCPU: "2", v1.ResourceMemory: "1Gi"}}),
			want: "b",
		},
		{
			name:  "a sidecar runs beside the init container after it",
			nodes: []*v1.Node{a(), b()}, existing: []*v1.Pod{bLoad()},
			pod: pod("sidecar-first", []resources{{v1.ResourceCPU: "500m", v1.ResourceMemory: "512Mi"}}, []string{"sidecar", "job"},
				[]resources{{v1.ResourceCPU: "600m", v1.ResourceMemory: "512Mi"}, {v1.ResourceCPU: "1", v1.ResourceMemory: "512Mi"}}),
			want: "b",
		},
		{
			name:  "but not beside the one before it",
			nodes: []*v1.Node{a(), b()}, existing: []*v1.Pod{bLoad()},
			pod: pod("job-first", []resources{{v1.ResourceCPU: "500m", v1.ResourceMemory: "512Mi"}}, []string{"job", "sidecar"},
				[]resources{{v1.ResourceCPU: "1", v1.ResourceMemory: "512Mi"}, {v1.ResourceCPU: "600m", v1.ResourceMemory: "512Mi"}}),
			want: "a",
		},
		{
			name:  "the RuntimeClass's overhead comes on top",
			nodes: []*v1.Node{a(), b()}, existing: []*v1.Pod{bLoad()},
			runtime: &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "with-overhead"}, Handler: "runc",
				Overhead: &nodev1.Overhead{PodFixed: list(resources{v1.ResourceCPU: "600m", v1.ResourceMemory: "64Mi"})}},
			pod:  withOverhead,
			want: "b",
		},
		{
			name:  "pod-level requests replace the containers' sum",
			nodes: []*v1.Node{a(), b()}, existing: []*v1.Pod{bLoad()},
			pod:  podLevel,
			want: "b",
		},
		{
			name: "pods without requests count 100m each in the score (#130445)",
			nodes: []*v1.Node{
				node("a", resources{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}, nil),
				node("b", resources{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}, nil),
			},
			existing: append(bestEffort, bound(pod("b-load", []resources{{v1.ResourceCPU: "600m", v1.ResourceMemory: "1Gi"}}, nil, nil), "b")),
			pod:      pod("newcomer", []resources{{v1.ResourceCPU: "500m", v1.ResourceMemory: "512Mi"}}, nil, nil),
			want:     "b",
		},
	}
}

func ptrTo[T any](v T) *T { return &v }

// defaultsConfig is kube-scheduler's default profile under the chapters'
// scheduler name: what Fit's placements are compared with.
func defaultsConfig(t *testing.T, kubeconfig string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "defaults.yaml")
	data := fmt.Sprintf("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nclientConnection: {kubeconfig: %q, qps: 500, burst: 1000}\nleaderElection: {leaderElect: false}\nprofiles:\n- schedulerName: mini-scheduler\n", kubeconfig)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFitPlacesAsNodeResourcesFit places each case's pod twice, with
// kube-scheduler's defaults and with config/fit.yaml, and wants both on
// the node kube-scheduler v1.37.1 picks.
func TestFitPlacesAsNodeResourcesFit(t *testing.T) {
	for _, tc := range fitCases() {
		for _, config := range []string{"defaults", "fit.yaml"} {
			t.Run(tc.name+", "+config, func(t *testing.T) {
				_, ctx := ktesting.NewTestContext(t)
				cfg := startAPIServer(t)
				client := kubernetes.NewForConfigOrDie(cfg)
				if tc.runtime != nil {
					if _, err := client.NodeV1().RuntimeClasses().Create(ctx, tc.runtime, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				for _, n := range tc.nodes {
					if _, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				for _, p := range tc.existing {
					if _, err := client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				kubeconfig := writeKubeconfig(t, cfg)
				file := defaultsConfig(t, kubeconfig)
				if config != "defaults" {
					file = schedulerConfig(t, config, kubeconfig, nil)
				}
				runScheduler(ctx, t, file)
				if _, err := client.CoreV1().Pods("default").Create(ctx, tc.pod, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				if got := waitBound(ctx, t, client, "default", tc.pod.Name); got != tc.want {
					t.Errorf("%s placed %s on %s, want %s", config, tc.pod.Name, got, tc.want)
				}
			})
		}
	}
}
