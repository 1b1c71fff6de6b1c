package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"minisched/scripts/cluster"
	"minisched/scripts/e2e"
)

// Config sizes the SchedulingBasic workload, as scheduler_perf's
// misc/performance-config.yaml does (initNodes, initPods, measurePods).
type Config struct {
	// Workload names the namespaces and nodes of a run, "basic" when
	// empty: the large size runs the same targets in the same cluster.
	Workload              string `json:",omitempty"`
	Nodes, InitPods, Pods int
	// Cap bounds the measured phase: a scheduler that has not scheduled
	// every measured pod by then did not finish (DNF).
	Cap time.Duration
	// QPS and Burst are given to every scheduler's client, and to the
	// binder that measures the ceiling.
	QPS   float32
	Burst int
}

// Target is one scheduler under test; a nil Sched is the raw bind ceiling.
type Target struct {
	Name  string
	Sched *e2e.Scheduler
	// Extra flags for the scheduler (a chapter's QPS and burst; upstream
	// takes them from its configuration file).
	Extra []string
	// Profile, for a build with the profiling hook (BuildProfiled) started
	// with MINISCHED_CPUPROFILE=Profile, is where its measured phase's CPU
	// profile goes.
	Profile string
}

// Env is the local cluster the benchmarks run on.
type Env struct {
	Cluster *cluster.Cluster
	// Client is the driver's own client, not rate-limited like the
	// schedulers'.
	Client kubernetes.Interface
	LogDir string
	// ProfileWindow, if not zero, profiles each preemption and gang run's
	// first ProfileWindow of its measured phase (profileWindow).
	ProfileWindow time.Duration
}

// Result is one SchedulingBasic run of one target.
type Result struct {
	Name       string  `json:"name"`
	Throughput Summary `json:"throughput"`
	// Overall is Scheduled over the time from the first measured pod's
	// creation to the last one's binding: the one figure a run too short
	// for many samples still gives.
	Overall   float64 `json:"overall"`
	Scheduled int     `json:"scheduled"`
	DNF       bool    `json:"dnf"`
	Seconds   float64 `json:"seconds"`
	// PeakRSS is the scheduler's VmHWM in bytes (0 for the ceiling).
	PeakRSS int64 `json:"peakRSSBytes"`
	// CPUSeconds is the CPU time the scheduler used (user and system)
	// during the measured phase (0 for the ceiling). On a machine it
	// shares with kube-apiserver and etcd, every CPU second a scheduler
	// spends is one the apiserver does not get.
	CPUSeconds float64 `json:"cpuSeconds"`
	// Phases, for the preemption workloads, splits a preemptor's time.
	Phases *Phases `json:"phases,omitempty"`
	// Profile is the CPU profile of the run's first Env.ProfileWindow,
	// when there is one.
	Profile string `json:"profile,omitempty"`
}

// measured labels the pods whose scheduling is measured.
const measured = "minisched.io/bench"

// namespace names a target's namespace for one run of one workload.
func namespace(workload string, t Target, run int) string {
	name := strings.ToLower(t.Name)
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, name)
	ns := strings.Trim(fmt.Sprintf("%s-%s-%d", workload, name, run), "-")
	// Node names are the namespace and "-node-NNNNN", and a node's
	// hostname label, like the namespace, holds 63 bytes at most: a long
	// name is cut and told apart by a hash of the whole.
	if len(ns) > 40 {
		h := fnv.New32a()
		h.Write([]byte(ns))
		ns = fmt.Sprintf("%s-%08x", strings.TrimRight(ns[:31], "-"), h.Sum32())
	}
	return ns
}

// start starts the target's scheduler, its log in ns.log, and waits until
// it serves.
func (e *Env) start(t Target, ns string) (*e2e.Process, error) {
	proc, err := e2e.StartScheduler(*t.Sched, e.Cluster.Kubeconfig, t.Extra, filepath.Join(e.LogDir, ns+".log"))
	if err != nil {
		return nil, err
	}
	if err := proc.WaitServing(); err != nil {
		_ = proc.Stop(false)
		return nil, err
	}
	return proc, nil
}

// setUp creates a workload's namespace for one run of one target, and n
// nodes. The caller removes them with cleanup, even on an error.
func (e *Env) setUp(ctx context.Context, workload string, t Target, run, n int) (string, []string, error) {
	ns := namespace(workload, t, run)
	if _, err := e.Client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return ns, nil, err
	}
	nodes, err := e.createNodes(ctx, ns, 0, n, nil)
	return ns, nodes, err
}

// createNodes creates nodes named ns-node-NNNNN from index from on.
func (e *Env) createNodes(ctx context.Context, ns string, from, n int, labels map[string]string) ([]string, error) {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-node-%05d", ns, from+i)
	}
	err := forEach(ctx, n, func(i int) error {
		_, err := e.Client.CoreV1().Nodes().Create(ctx, benchNode(names[i], labels), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("creating nodes: %w", err)
	}
	return names, nil
}

// RunSchedulingBasic runs SchedulingBasic for one target on its own
// namespace and nodes, and removes them afterwards.
func (e *Env) RunSchedulingBasic(ctx context.Context, t Target, cfg Config, run int) (Result, error) {
	client := e.Client
	res := Result{Name: t.Name}
	workload := cfg.Workload
	if workload == "" {
		workload = "basic"
	}
	ns, nodes, err := e.setUp(ctx, workload, t, run, cfg.Nodes)
	defer cleanup(client, ns)
	if err != nil {
		return res, err
	}

	var bound, boundMeasured, lastBound atomic.Int64
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	podInformer := factory.Core().V1().Pods().Informer()
	pending := make(chan *v1.Pod, cfg.InitPods+cfg.Pods)
	_, err = podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			p := obj.(*v1.Pod)
			if p.Spec.NodeName == "" && t.Sched == nil {
				pending <- p
			}
			// A pod first seen bound: the watch missed its binding and a
			// relist brought it (right after the apiserver started, a
			// watch can end at once).
			if p.Spec.NodeName != "" {
				bound.Add(1)
				if p.Labels[measured] != "" {
					boundMeasured.Add(1)
					lastBound.Store(time.Now().UnixNano())
				}
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			if oldObj.(*v1.Pod).Spec.NodeName == "" && newObj.(*v1.Pod).Spec.NodeName != "" {
				bound.Add(1)
				if newObj.(*v1.Pod).Labels[measured] != "" {
					boundMeasured.Add(1)
					lastBound.Store(time.Now().UnixNano())
				}
			}
		},
	})
	if err != nil {
		return res, err
	}
	infCtx, stopInformer := context.WithCancel(ctx)
	defer stopInformer()
	factory.Start(infCtx.Done())
	factory.WaitForCacheSync(infCtx.Done())

	var proc *e2e.Process
	if t.Sched != nil {
		if proc, err = e.start(t, ns); err != nil {
			return res, err
		}
		defer func() { _ = proc.Stop(false) }()
	} else {
		stopBinder := startBinder(infCtx, e.Cluster.Config, cfg, nodes, pending)
		defer stopBinder()
	}

	if err := createPods(ctx, client, ns, "init", cfg.InitPods, nil, nil); err != nil {
		return res, err
	}
	if err := waitFor(ctx, 5*time.Minute, func() bool { return bound.Load() >= int64(cfg.InitPods) }); err != nil {
		return res, fmt.Errorf("the %d init pods were not scheduled: %w", cfg.InitPods, err)
	}

	var cpuAtStart float64
	if proc != nil {
		cpuAtStart, _ = cpuSeconds(proc.Pid())
	}
	if t.Profile != "" {
		if err := toggleProfile(proc); err != nil {
			return res, err
		}
	}
	s := newSampler(time.Second)
	start := time.Now()
	createErr := make(chan error, 1)
	go func() {
		createErr <- createPods(ctx, client, ns, "measured", cfg.Pods, map[string]string{measured: "true"}, nil)
	}()
	// The creations' error is read after the loop, once they are done.
	if res.DNF, err = sampleUntil(ctx, s, cfg.Pods, cfg.Cap, func() int { return int(boundMeasured.Load()) }, nil); err != nil {
		return res, err
	}
	res.Seconds = time.Since(start).Seconds()
	res.Scheduled = int(boundMeasured.Load())
	if last := time.Unix(0, lastBound.Load()); res.Scheduled > 0 && last.After(start) {
		res.Overall = float64(res.Scheduled) / last.Sub(start).Seconds()
	}
	res.Throughput = Summarize(s.samples)
	if err := <-createErr; err != nil && !res.DNF {
		return res, err
	}
	if proc != nil {
		if proc.Exited() {
			return res, fmt.Errorf("%s exited: %v", t.Name, proc.Err())
		}
		if t.Profile != "" {
			if err := toggleProfile(proc); err != nil {
				return res, err
			}
			if err := waitFor(ctx, 30*time.Second, func() bool { _, err := os.Stat(t.Profile); return err == nil }); err != nil {
				return res, fmt.Errorf("no CPU profile at %s: %w", t.Profile, err)
			}
		}
		res.PeakRSS, _ = peakRSS(proc.Pid())
		if cpu, err := cpuSeconds(proc.Pid()); err == nil {
			res.CPUSeconds = cpu - cpuAtStart
		}
	}
	return res, nil
}

// sampleUntil observes bound() every second into s until it reaches want,
// or limit passes (dnf). The end of ctx, or an error from errs (a nil
// channel never delivers one), stops it with that error.
func sampleUntil(ctx context.Context, s *sampler, want int, limit time.Duration, bound func() int, errs <-chan error) (dnf bool, err error) {
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	deadline := time.After(limit)
	for {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case err := <-errs:
			if err != nil {
				return false, err
			}
		case <-deadline:
			return true, nil
		case now := <-ticker.C:
			n := bound()
			s.observe(now, n)
			if n >= want {
				return false, nil
			}
		}
	}
}

// benchNode is scheduler_perf's node-default.yaml: 4 CPUs, 32 GiB, 110
// pods, with extra labels.
func benchNode(name string, labels map[string]string) *v1.Node {
	resources := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("4"),
		v1.ResourceMemory: resource.MustParse("32Gi"),
		v1.ResourcePods:   resource.MustParse("110"),
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      mergeLabels(map[string]string{v1.LabelHostname: name}, labels),
			Annotations: map[string]string{cluster.FakeNodeAnnotation: cluster.FakeNodeAnnotationValue},
		},
		Status: v1.NodeStatus{Allocatable: resources, Capacity: resources.DeepCopy()},
	}
}

// createPods creates n pods as scheduler_perf's pod-default.yaml: 100m CPU
// and 500Mi, for the mini-scheduler, with labels and a node selector.
func createPods(ctx context.Context, client kubernetes.Interface, ns, prefix string, n int, labels, nodeSelector map[string]string) error {
	return createFromTemplate(ctx, client, ns, prefix, n, podTemplate{CPU: "100m", Labels: labels, NodeSelector: nodeSelector})
}

// podTemplate is what differs between scheduler_perf's pod templates.
type podTemplate struct {
	CPU               string
	Labels            map[string]string
	NodeSelector      map[string]string
	PriorityClassName string
	// Graceless sets terminationGracePeriodSeconds 0, as
	// pod-low-priority.yaml does: a victim's deletion is then immediate.
	Graceless bool
}

// createFromTemplate creates n pods named prefix-NNNNN: the template's CPU
// and 500Mi, for the mini-scheduler.
func createFromTemplate(ctx context.Context, client kubernetes.Interface, ns, prefix string, n int, t podTemplate) error {
	return forEach(ctx, n, func(i int) error {
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%05d", prefix, i), Labels: t.Labels},
			Spec: v1.PodSpec{
				SchedulerName:     e2e.DefaultSchedulerName,
				NodeSelector:      t.NodeSelector,
				PriorityClassName: t.PriorityClassName,
				Containers: []v1.Container{{
					Name: "pause", Image: "registry.k8s.io/pause:3.10",
					Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
						v1.ResourceCPU: resource.MustParse(t.CPU), v1.ResourceMemory: resource.MustParse("500Mi"),
					}},
				}},
			},
		}
		if t.Graceless {
			pod.Spec.TerminationGracePeriodSeconds = new(int64)
		}
		_, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		return err
	})
}

// startBinder binds every pending pod to a precomputed node, round robin,
// with no scheduling logic, through a client with the schedulers' QPS and
// burst: the ceiling no scheduler can beat on this cluster. The returned
// function stops it and waits for its goroutines.
func startBinder(ctx context.Context, admin *rest.Config, cfg Config, nodes []string, pending <-chan *v1.Pod) func() {
	c := rest.CopyConfig(admin)
	c.QPS, c.Burst = cfg.QPS, cfg.Burst
	client := kubernetes.NewForConfigOrDie(c)
	ctx, cancel := context.WithCancel(ctx)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case p := <-pending:
					node := nodes[int(next.Add(1)-1)%len(nodes)]
					b := &v1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, UID: p.UID}, Target: v1.ObjectReference{Kind: "Node", Name: node}}
					_ = client.CoreV1().Pods(p.Namespace).Bind(ctx, b, metav1.CreateOptions{})
				}
			}
		}()
	}
	return func() { cancel(); wg.Wait() }
}

func mergeLabels(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

// peakRSS reads a process's peak resident set size (VmHWM) from /proc.
func peakRSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// cpuSeconds reads a process's user and system CPU time from
// /proc/PID/stat (fields 14 and 15, in clock ticks of 1/100 s on Linux).
func cpuSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(data), ')')
	fields := strings.Fields(string(data)[i+1:])
	if i < 0 || len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return float64(utime+stime) / 100, nil
}

func waitFor(ctx context.Context, limit time.Duration, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// cleanup deletes a run's pods and PodGroups and every node, and waits
// until they are gone. One DeleteCollection of the 11,000 pods of a
// 5,000-node run can outlast the apiserver's request timeout and leave pods
// behind; the chapters that List every pod at every attempt (02 to 04)
// then measured a sixth of their speed in the runs that followed. So it
// deletes again until a List finds nothing, and says so if it gives up.
//
// The PodGroups matter as much: a scheduler with the GenericWorkload gate
// (chapters 11 on, kube-scheduler like 11) keeps a state for every
// PodGroup in the cluster, and copies the changed ones into its snapshot
// at every cycle after a walk over all of them (updatePodGroupStateSnapshot
// in pkg/scheduler/backend/cache/cache.go). When three rounds of
// GangScheduling left 9,000 PodGroups behind, chapter 11 spent two thirds
// more CPU per pod at 5,000 nodes in the runs that followed, and was
// slower than kube-scheduler's defaults, which do not watch PodGroups.
// A deleted PodGroup stays until its finalizer is gone, which
// releasePodGroups sees to once the pods are. The API is not served
// without the gate: a NotFound there means there is nothing to delete.
func cleanup(client kubernetes.Interface, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	zero := int64(0)
	one := metav1.ListOptions{Limit: 1}
	for {
		_ = client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		_ = client.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		_ = client.SchedulingV1beta1().PodGroups(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		pods, err1 := client.CoreV1().Pods(ns).List(ctx, one)
		nodes, err2 := client.CoreV1().Nodes().List(ctx, one)
		if err1 == nil && len(pods.Items) == 0 {
			releasePodGroups(ctx, client, ns)
		}
		groups, err3 := client.SchedulingV1beta1().PodGroups(ns).List(ctx, one)
		noGroups := apierrors.IsNotFound(err3) || (err3 == nil && len(groups.Items) == 0)
		if err1 == nil && err2 == nil && noGroups && len(pods.Items) == 0 && len(nodes.Items) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(os.Stderr, "bench: pods, PodGroups or nodes of %s still there after 10 minutes: the runs that follow are not clean\n", ns)
			return
		case <-time.After(time.Second):
		}
	}
}

// releasePodGroups takes the PodGroupProtection finalizer off the
// namespace's PodGroups once no pod is left in it. The apiserver's
// PodGroupProtection admission puts it on every PodGroup it creates
// (plugin/pkg/admission/scheduling/podgroupprotection), and kube-controller-
// manager's podgroupprotection controller takes it off when no pod uses the
// group. The bench cluster has no controller manager, so a deleted PodGroup
// would wait for it forever, and stay in every scheduler's cache.
func releasePodGroups(ctx context.Context, client kubernetes.Interface, ns string) {
	groups, err := client.SchedulingV1beta1().PodGroups(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, pg := range groups.Items {
		if !slices.Contains(pg.Finalizers, podGroupProtectionFinalizer) {
			continue
		}
		rest := slices.DeleteFunc(slices.Clone(pg.Finalizers), func(f string) bool { return f == podGroupProtectionFinalizer })
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": rest, "resourceVersion": pg.ResourceVersion}})
		if err != nil {
			continue
		}
		_, _ = client.SchedulingV1beta1().PodGroups(ns).Patch(ctx, pg.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	}
}

// podGroupProtectionFinalizer is the apiserver's
// (scheduling.PodGroupProtectionFinalizer in pkg/apis/scheduling, which the
// harness does not import).
const podGroupProtectionFinalizer = "scheduling.k8s.io/podgroup-protection"

// forEach runs do(0..n-1) on 16 workers and returns the first error.
func forEach(ctx context.Context, n int, do func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range min(16, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				if err := do(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}
