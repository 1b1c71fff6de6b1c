// Package integration runs this chapter's scheduler against a real
// kube-apiserver and etcd started by envtest, as upstream's
// test/integration/scheduler runs kube-scheduler against a real apiserver.
package integration

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"minisched/10-percentage-of-nodes-to-score/scheduler"
)

// assetsDir finds etcd and kube-apiserver: $KUBEBUILDER_ASSETS, else the
// tools cache that `make tools` fills. A missing binary fails the test: an
// integration test that skips proves nothing.
func assetsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("..", "..", "..", ".cache", "tools", "bin"))
	}
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			t.Fatalf("%s not found in %s: run `make tools` (make test does) or set KUBEBUILDER_ASSETS", bin, dir)
		}
	}
	return dir
}

// controlPlane is the etcd and kube-apiserver the package's tests share.
// Starting them takes several seconds, more than most tests here take, so
// the first test that needs them starts them and TestMain stops them, as
// upstream's integration packages share one etcd (TestMain calls
// framework.EtcdMain in test/integration/scheduler/main_test.go). Tests do
// not run in parallel, and each starts on an empty cluster.
var controlPlane struct {
	mu  sync.Mutex
	env *envtest.Environment
	cfg *restclient.Config
}

func TestMain(m *testing.M) {
	code := m.Run()
	if err := stopControlPlane(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
		code = max(code, 1)
	}
	os.Exit(code)
}

// startAPIServer returns an admin config for etcd and kube-apiserver on
// 127.0.0.1, started by the first test that asks. The cluster is empty:
// what the tests before left is deleted first.
func startAPIServer(t *testing.T) *restclient.Config {
	t.Helper()
	dir := assetsDir(t)
	controlPlane.mu.Lock()
	if controlPlane.env == nil {
		env := &envtest.Environment{BinaryAssetsDirectory: dir}
		// Without a node lifecycle controller, TaintNodesByCondition would
		// leave every new node tainted not-ready forever. ServiceAccount
		// admission stays off as envtest has it: no controller creates
		// default accounts.
		env.ControlPlane.GetAPIServer().Configure().Set("disable-admission-plugins", "ServiceAccount,TaintNodesByCondition")
		cfg, err := env.Start()
		if err != nil {
			controlPlane.mu.Unlock()
			t.Fatalf("starting the control plane: %v", err)
		}
		controlPlane.env, controlPlane.cfg = env, cfg
	}
	cfg := restclient.CopyConfig(controlPlane.cfg)
	controlPlane.mu.Unlock()
	// A test that failed may have left anything behind, and one that
	// panicked ends the process before TestMain runs: stop the control
	// plane then (cleanups run after a panic too); the next test starts
	// a new one.
	t.Cleanup(func() {
		if t.Failed() {
			if err := stopControlPlane(); err != nil {
				t.Errorf("stopping the control plane: %v", err)
			}
		}
	})
	cfg.QPS, cfg.Burst = 500, 1000
	emptyCluster(t, kubernetes.NewForConfigOrDie(cfg))
	return cfg
}

// stopControlPlane stops the shared etcd and kube-apiserver, if they run.
func stopControlPlane() error {
	controlPlane.mu.Lock()
	defer controlPlane.mu.Unlock()
	env := controlPlane.env
	controlPlane.env, controlPlane.cfg = nil, nil
	if env == nil {
		return nil
	}
	return env.Stop()
}

// emptyCluster deletes every pod, node and PriorityClass but the built-in
// ones, and waits until the apiserver has none left, so that a test sees
// only what it creates. Pods go with grace period 0: no kubelet runs to
// finish a graceful deletion. The scheduler of the test before has stopped
// by now (runScheduler's cleanup waits for it).
func emptyCluster(t *testing.T, client kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	var zero int64
	now := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	namespaces, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("emptying the cluster: %v", err)
	}
	for _, ns := range namespaces.Items {
		if err := client.CoreV1().Pods(ns.Name).DeleteCollection(ctx, now, metav1.ListOptions{}); err != nil {
			t.Fatalf("emptying the cluster: %v", err)
		}
	}
	if err := client.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatalf("emptying the cluster: %v", err)
	}
	classes, err := client.SchedulingV1().PriorityClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("emptying the cluster: %v", err)
	}
	for _, pc := range classes.Items {
		if strings.HasPrefix(pc.Name, "system-") {
			continue
		}
		if err := client.SchedulingV1().PriorityClasses().Delete(ctx, pc.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("emptying the cluster: %v", err)
		}
	}
	waitFor(ctx, t, "an empty cluster", func() (bool, error) {
		pods, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		return len(pods.Items) == 0 && len(nodes.Items) == 0, nil
	})
}

// runScheduler runs this chapter's scheduler in the test's process, on a
// client that counts its Bindings, until the test ends.
func runScheduler(ctx context.Context, t *testing.T, cfg *restclient.Config, opts ...scheduler.Option) *bindingCounter {
	t.Helper()
	counter := &bindingCounter{}
	ctx, cancel := context.WithCancel(ctx)
	sched, err := scheduler.New(ctx, kubernetes.NewForConfigOrDie(counter.wrap(cfg)), events.NewFakeRecorder(10000), opts...)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { sched.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return counter
}

// bindingCounter counts the Binding requests that go through a client, and
// how the apiserver answered each, per pod.
type bindingCounter struct {
	mu    sync.Mutex
	codes map[string][]int // "namespace/name" -> status codes
	// lists records when each List request (a GET of a collection, not a
	// watch) was sent, by resource.
	lists        map[string][]time.Time
	firstBinding time.Time
}

// wrap makes cfg's transport count bindings.
func (c *bindingCounter) wrap(cfg *restclient.Config) *restclient.Config {
	cfg = restclient.CopyConfig(cfg)
	c.codes = map[string][]int{}
	c.lists = map[string][]time.Time{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			// POST /api/v1/namespaces/NS/pods/NAME/binding
			parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
			// GET /api/v1/pods, /api/v1/nodes: a List, unless it is a watch.
			if req.Method == http.MethodGet && len(parts) == 3 && req.URL.Query().Get("watch") != "true" {
				c.mu.Lock()
				c.lists[parts[2]] = append(c.lists[parts[2]], time.Now())
				c.mu.Unlock()
			}
			if req.Method == http.MethodPost && len(parts) == 7 && parts[6] == "binding" {
				code := 0
				if resp != nil {
					code = resp.StatusCode
				}
				c.mu.Lock()
				c.codes[parts[3]+"/"+parts[5]] = append(c.codes[parts[3]+"/"+parts[5]], code)
				if c.firstBinding.IsZero() {
					c.firstBinding = time.Now()
				}
				c.mu.Unlock()
			}
			return resp, err
		})
	})
	return cfg
}

func (c *bindingCounter) get() map[string][]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]int{}
	for k, v := range c.codes {
		out[k] = append([]int(nil), v...)
	}
	return out
}

// waitCounted waits until n pods have a counted Binding. The apiserver sets
// spec.nodeName before its answer comes back through this counter, so a
// test that has seen n pods bound could otherwise read the counter early.
func (c *bindingCounter) waitCounted(ctx context.Context, t *testing.T, n int) {
	t.Helper()
	waitFor(ctx, t, fmt.Sprintf("%d counted Bindings", n), func() (bool, error) { return len(c.get()) >= n, nil })
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func node(name string) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse("4"),
			v1.ResourceMemory: resource.MustParse("16Gi"),
			v1.ResourcePods:   resource.MustParse("110"),
		}},
	}
}

func pod(namespace, name, schedulerName string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: v1.PodSpec{
			SchedulerName: schedulerName,
			Containers:    []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
}

// createPod creates a pod.
func createPod(ctx context.Context, t *testing.T, client kubernetes.Interface, p *v1.Pod) {
	t.Helper()
	if _, err := client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createPriorityClass creates a PriorityClass and returns once the
// apiserver admits pods of it in namespace ns. The Priority admission
// plugin looks a pod's class up in its informer's lister (resolvePriorityClass
// in kube-apiserver's plugin/pkg/admission/priority/admission.go), which
// learns of a new class a moment after it is created: a pod created in that
// moment is refused with "no PriorityClass with name ... was found". A pod
// created with a server-side dry run goes through admission and is never
// stored, so no scheduler sees it; once one is admitted, the class is known.
func createPriorityClass(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, name string, value int32) {
	t.Helper()
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
	if _, err := client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	probe := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "priority-class-probe-"},
		Spec: v1.PodSpec{
			PriorityClassName: name,
			Containers:        []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, last = client.CoreV1().Pods(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if apierrors.IsForbidden(last) {
			return false, nil // not known to the admission plugin yet
		}
		return last == nil, last
	})
	if err != nil {
		t.Fatalf("pods of priority class %s were not admitted: %v (last: %v)", name, err, last)
	}
}

// getPod reads a pod as the apiserver has it now.
func getPod(ctx context.Context, t *testing.T, client kubernetes.Interface, namespace, name string) *v1.Pod {
	t.Helper()
	p, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// waitUnschedulable waits until the pod carries PodScheduled=False with
// reason Unschedulable and, unless message is empty, that message.
func waitUnschedulable(ctx context.Context, t *testing.T, client kubernetes.Interface, namespace, name, message string) {
	t.Helper()
	waitFor(ctx, t, "pod "+name+" to be unschedulable", func() (bool, error) {
		for _, c := range getPod(ctx, t, client, namespace, name).Status.Conditions {
			if c.Type == v1.PodScheduled && c.Reason == v1.PodReasonUnschedulable && (message == "" || c.Message == message) {
				return true, nil
			}
		}
		return false, nil
	})
}

func createNodes(ctx context.Context, t *testing.T, client kubernetes.Interface, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := client.CoreV1().Nodes().Create(ctx, node(n), metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating node %s: %v", n, err)
		}
	}
}

func createNamespace(ctx context.Context, t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	// A namespace outlives the test that made it, emptied: no namespace
	// controller runs to finish deleting one.
	_, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

// waitFor polls cond until it holds. The timeout only bounds how long a
// failing test waits; passing tests never reach it.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var lastErr error
	for time.Now().Before(deadline) && ctx.Err() == nil {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s (last error: %v)", what, lastErr)
}

// placements maps every pod of a namespace to its node ("" if unbound).
func placements(ctx context.Context, client kubernetes.Interface, namespace string) (map[string]string, error) {
	pods, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		out[p.Name] = p.Spec.NodeName
	}
	return out, nil
}

func podName(prefix string, i int) string { return fmt.Sprintf("%s-%02d", prefix, i) }

func withLabel(n *v1.Node, k, v string) *v1.Node {
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels[k] = v
	return n
}

// labelNode sets a label on a node of the cluster.
func labelNode(ctx context.Context, t *testing.T, client kubernetes.Interface, name, k, v string) {
	t.Helper()
	node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Nodes().Update(ctx, withLabel(node, k, v), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func withTaint(n *v1.Node, k, v string) *v1.Node {
	n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: k, Value: v, Effect: v1.TaintEffectNoSchedule})
	return n
}

func cordoned(n *v1.Node) *v1.Node { n.Spec.Unschedulable = true; return n }

func withCPU(n *v1.Node, cpu string) *v1.Node {
	n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse(cpu)
	return n
}

func requesting(p *v1.Pod, cpu string) *v1.Pod {
	p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}
	return p
}

func withSelector(p *v1.Pod, k, v string) *v1.Pod {
	p.Spec.NodeSelector = map[string]string{k: v}
	return p
}

func tolerating(p *v1.Pod, k, v string) *v1.Pod {
	p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: k, Operator: v1.TolerationOpEqual, Value: v, Effect: v1.TaintEffectNoSchedule})
	return p
}

// listsAfterFirstBinding counts the List requests sent after the first
// Binding, by resource: by then the informers have synced, so any List is
// the scheduling loop's.
func (c *bindingCounter) listsAfterFirstBinding() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for resource, times := range c.lists {
		for _, at := range times {
			if !c.firstBinding.IsZero() && at.After(c.firstBinding) {
				out[resource]++
			}
		}
	}
	return out
}

// newBufferedContext returns a context whose logger writes to the test's
// log at -v=5 and keeps every entry, so a test can assert on what the
// scheduler logged: which event moved a pod, which event it handled.
func newBufferedContext(t *testing.T) (context.Context, ktesting.Underlier) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true), ktesting.Verbosity(5)))
	return klog.NewContext(context.Background(), logger), logger.GetSink().(ktesting.Underlier)
}

// logEntries returns the key/value pairs of every entry logged with
// message, the logger's own values included, as strings.
func logEntries(logs ktesting.Underlier, message string) []map[string]string {
	var out []map[string]string
	for _, e := range logs.GetBuffer().Data() {
		if e.Message != message {
			continue
		}
		kv := map[string]string{}
		for _, list := range [][]any{e.WithKVList, e.ParameterKVList} {
			for i := 0; i+1 < len(list); i += 2 {
				kv[fmt.Sprint(list[i])] = fmt.Sprint(list[i+1])
			}
		}
		out = append(out, kv)
	}
	return out
}

// scheduledDecision says whether the scheduler has logged that it
// scheduled pod. The binding goroutine logs it once the Binding returns, so
// a test that sees the pod bound may still be ahead of the line.
func scheduledDecision(logs ktesting.Underlier, pod string) bool {
	for _, kv := range logEntries(logs, "Scheduling decision") {
		if kv["pod"] == pod && kv["result"] == "scheduled" {
			return true
		}
	}
	return false
}

// decisions counts the "Scheduling decision" lines logged for a pod: its
// attempts so far.
func decisions(logs ktesting.Underlier, pod string) int {
	n := 0
	for _, kv := range logEntries(logs, "Scheduling decision") {
		if kv["pod"] == pod {
			n++
		}
	}
	return n
}
