package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
}

// Result is one run of one target.
type Result struct {
	Name       string  `json:"name"`
	Throughput Summary `json:"throughput"`
	Scheduled  int     `json:"scheduled"`
	DNF        bool    `json:"dnf"`
	Seconds    float64 `json:"seconds"`
	// PeakRSS is the scheduler's VmHWM in bytes (0 for the ceiling).
	PeakRSS int64 `json:"peakRSSBytes"`
}

// measured labels the pods whose scheduling is measured.
const measured = "minisched.io/bench"

// RunSchedulingBasic runs SchedulingBasic for one target on its own
// namespace and nodes, and removes them afterwards.
func RunSchedulingBasic(ctx context.Context, cl *cluster.Cluster, client kubernetes.Interface, t Target, cfg Config, logDir string, run int) (Result, error) {
	ns := fmt.Sprintf("bench-%s-%d", strings.ToLower(strings.NewReplacer(".", "-", "_", "-", " ", "-").Replace(t.Name)), run)
	res := Result{Name: t.Name}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return res, err
	}
	defer cleanup(client, ns)
	nodes := make([]string, cfg.Nodes)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("%s-node-%05d", ns, i)
	}
	if err := forEach(ctx, len(nodes), func(i int) error {
		_, err := client.CoreV1().Nodes().Create(ctx, benchNode(nodes[i]), metav1.CreateOptions{})
		return err
	}); err != nil {
		return res, fmt.Errorf("creating nodes: %w", err)
	}

	var bound, boundMeasured atomic.Int64
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	podInformer := factory.Core().V1().Pods().Informer()
	pending := make(chan *v1.Pod, cfg.InitPods+cfg.Pods)
	_, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if p := obj.(*v1.Pod); p.Spec.NodeName == "" && t.Sched == nil {
				pending <- p
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			if oldObj.(*v1.Pod).Spec.NodeName == "" && newObj.(*v1.Pod).Spec.NodeName != "" {
				bound.Add(1)
				if newObj.(*v1.Pod).Labels[measured] != "" {
					boundMeasured.Add(1)
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
		logPath := filepath.Join(logDir, ns+".log")
		if proc, err = e2e.StartScheduler(*t.Sched, cl.Kubeconfig, t.Extra, logPath); err != nil {
			return res, err
		}
		defer func() { _ = proc.Stop(false) }()
		if err := proc.WaitServing(); err != nil {
			return res, err
		}
	} else {
		stopBinder := startBinder(infCtx, cl.Config, cfg, nodes, pending)
		defer stopBinder()
	}

	if err := createPods(ctx, client, ns, "init", cfg.InitPods, false); err != nil {
		return res, err
	}
	if err := waitFor(ctx, 5*time.Minute, func() bool { return bound.Load() >= int64(cfg.InitPods) }); err != nil {
		return res, fmt.Errorf("the %d init pods were not scheduled: %w", cfg.InitPods, err)
	}

	s := newSampler(time.Second)
	start := time.Now()
	createErr := make(chan error, 1)
	go func() { createErr <- createPods(ctx, client, ns, "measured", cfg.Pods, true) }()
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	deadline := time.After(cfg.Cap)
loop:
	for {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-deadline:
			res.DNF = true
			break loop
		case now := <-ticker.C:
			n := int(boundMeasured.Load())
			s.observe(now, n)
			if n >= cfg.Pods {
				break loop
			}
		}
	}
	res.Seconds = time.Since(start).Seconds()
	res.Scheduled = int(boundMeasured.Load())
	res.Throughput = Summarize(s.samples)
	if err := <-createErr; err != nil && !res.DNF {
		return res, err
	}
	if proc != nil {
		if proc.Exited() {
			return res, fmt.Errorf("%s exited: %v", t.Name, proc.Err())
		}
		res.PeakRSS, _ = peakRSS(proc.Pid())
	}
	return res, nil
}

// benchNode is scheduler_perf's node-default.yaml: 4 CPUs, 32 GiB, 110 pods.
func benchNode(name string) *v1.Node {
	resources := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("4"),
		v1.ResourceMemory: resource.MustParse("32Gi"),
		v1.ResourcePods:   resource.MustParse("110"),
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      map[string]string{v1.LabelHostname: name},
			Annotations: map[string]string{cluster.FakeNodeAnnotation: cluster.FakeNodeAnnotationValue},
		},
		Status: v1.NodeStatus{Allocatable: resources, Capacity: resources.DeepCopy()},
	}
}

// createPods creates n pods as scheduler_perf's pod-default.yaml: 100m CPU
// and 500Mi, for the mini-scheduler.
func createPods(ctx context.Context, client kubernetes.Interface, ns, prefix string, n int, measure bool) error {
	return forEach(ctx, n, func(i int) error {
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%05d", prefix, i)},
			Spec: v1.PodSpec{
				SchedulerName: e2e.DefaultSchedulerName,
				Containers: []v1.Container{{
					Name: "pause", Image: "registry.k8s.io/pause:3.10",
					Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
						v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("500Mi"),
					}},
				}},
			},
		}
		if measure {
			pod.Labels = map[string]string{measured: "true"}
		}
		_, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		return err
	})
}

// startBinder binds every pending pod to a precomputed node, round robin,
// with no scheduling logic, through a client with the schedulers' QPS and
// burst: the ceiling no scheduler can beat on this cluster.
func startBinder(ctx context.Context, admin *rest.Config, cfg Config, nodes []string, pending <-chan *v1.Pod) func() {
	c := rest.CopyConfig(admin)
	c.QPS, c.Burst = cfg.QPS, cfg.Burst
	client := kubernetes.NewForConfigOrDie(c)
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
	return wg.Wait
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

func cleanup(client kubernetes.Interface, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	zero := int64(0)
	_ = client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	_ = client.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
}

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
