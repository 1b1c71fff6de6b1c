package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"minisched/scripts/e2e"
)

// GangConfig sizes the GangScheduling workload, after scheduler_perf's
// podgroup/gangscheduling/performance-config.yaml (initNodes,
// initPodGroups, podsPerGroup): Groups PodGroups with a gang policy of
// minCount PodsPerGroup, then PodsPerGroup pods of 100m and 100Mi for
// each, every pod measured.
type GangConfig struct {
	Nodes, Groups, PodsPerGroup int
	// Cap bounds the measured phase, as Config's.
	Cap time.Duration
}

// RunGangScheduling runs GangScheduling for one target on its own
// namespace and nodes, and removes them afterwards. As scheduler_perf does,
// it creates every PodGroup first, then the pods, and measures from the
// first pod's creation until every pod is bound. When every pod is bound
// it also checks what the workload is about: no gang was left part bound.
// (While the run goes on, a gang is part bound for a moment, as its
// members' Bindings are sent one after the other; make chaos checks the
// moments from the audit log.)
func (e *Env) RunGangScheduling(ctx context.Context, t Target, cfg GangConfig, run int) (Result, error) {
	client := e.Client
	res := Result{Name: t.Name}
	ns, _, err := e.setUp(ctx, "gang", t, run, cfg.Nodes)
	defer cleanup(client, ns)
	if err != nil {
		return res, err
	}
	pods := cfg.Groups * cfg.PodsPerGroup
	var bound, lastBound atomic.Int64
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	_, err = factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if obj.(*v1.Pod).Spec.NodeName != "" {
				bound.Add(1)
				lastBound.Store(time.Now().UnixNano())
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			if oldObj.(*v1.Pod).Spec.NodeName == "" && newObj.(*v1.Pod).Spec.NodeName != "" {
				bound.Add(1)
				lastBound.Store(time.Now().UnixNano())
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

	proc, err := e.start(t, ns)
	if err != nil {
		return res, err
	}
	defer func() { _ = proc.Stop(false) }()
	if err := forEach(ctx, cfg.Groups, func(i int) error {
		pg := &schedulingv1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("gang-%d", i)},
			Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
				Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: int32(cfg.PodsPerGroup)},
			}},
		}
		_, err := client.SchedulingV1beta1().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{})
		return err
	}); err != nil {
		return res, fmt.Errorf("creating pod groups: %w", err)
	}

	var cpuAtStart float64
	cpuAtStart, _ = cpuSeconds(proc.Pid())
	s := newSampler(time.Second)
	start := time.Now()
	profiled := e.profileWindow(ctx, t, proc, ns)
	createErr := make(chan error, 1)
	go func() {
		createErr <- forEach(ctx, pods, func(i int) error {
			group := fmt.Sprintf("gang-%d", i/cfg.PodsPerGroup)
			pod := &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("gang-pod-%05d", i)},
				Spec: v1.PodSpec{
					SchedulerName:   e2e.DefaultSchedulerName,
					SchedulingGroup: &v1.PodSchedulingGroup{PodGroupName: &group},
					Containers: []v1.Container{{
						Name: "pause", Image: "registry.k8s.io/pause:3.10",
						Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
							v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("100Mi"),
						}},
					}},
				},
			}
			_, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
			return err
		})
	}()
	if res.DNF, err = sampleUntil(ctx, s, pods, cfg.Cap, func() int { return int(bound.Load()) }, nil); err != nil {
		return res, err
	}
	res.Seconds = time.Since(start).Seconds()
	res.Scheduled = int(bound.Load())
	if last := time.Unix(0, lastBound.Load()); res.Scheduled > 0 && last.After(start) {
		res.Overall = float64(res.Scheduled) / last.Sub(start).Seconds()
	}
	res.Throughput = Summarize(s.samples)
	if err := <-createErr; err != nil && !res.DNF {
		return res, err
	}
	if res.Profile, err = profiled(); err != nil {
		return res, err
	}
	if proc.Exited() {
		return res, fmt.Errorf("%s exited: %v", t.Name, proc.Err())
	}
	res.PeakRSS, _ = peakRSS(proc.Pid())
	if cpu, err := cpuSeconds(proc.Pid()); err == nil {
		res.CPUSeconds = cpu - cpuAtStart
	}
	if res.DNF {
		return res, nil
	}
	if partial, err := partlyBound(ctx, e, ns, cfg.PodsPerGroup); err != nil {
		return res, err
	} else if len(partial) > 0 {
		return res, fmt.Errorf("%s left %d gangs part bound: %v", t.Name, len(partial), partial)
	}
	return res, nil
}

// partlyBound lists the groups of which some, but fewer than minCount,
// members are bound.
func partlyBound(ctx context.Context, e *Env, ns string, minCount int) ([]string, error) {
	list, err := e.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	boundPerGroup := map[string]int{}
	for _, p := range list.Items {
		if p.Spec.SchedulingGroup != nil && p.Spec.NodeName != "" {
			boundPerGroup[*p.Spec.SchedulingGroup.PodGroupName]++
		}
	}
	var out []string
	for g, n := range boundPerGroup {
		if n < minCount {
			out = append(out, fmt.Sprintf("%s (%d of %d)", g, n, minCount))
		}
	}
	return out, nil
}
