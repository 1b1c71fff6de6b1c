package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// sampleCount is how many observations a histogram of upstream's metrics
// holds for the labels, as /metrics serves it (testutil reads the
// registry); 0 if none.
func sampleCount(t *testing.T, name string, labels map[string]string) uint64 {
	t.Helper()
	vec, err := testutil.GetHistogramVecFromGatherer(legacyregistry.DefaultGatherer, name, labels)
	if err != nil {
		return 0
	}
	return vec.GetAggregatedSampleCount()
}

// counterValue is a counter's value for the labels, as /metrics serves it.
func counterValue(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	values, err := testutil.GetCounterValuesFromGatherer(legacyregistry.DefaultGatherer, name, labels, "profile")
	if err != nil {
		return 0
	}
	var sum float64
	for _, v := range values {
		sum += v
	}
	return sum
}

// TestScheduleOneRecordsMetrics schedules one pod per case and checks
// which of upstream's metrics grew, and by how much: each is recorded
// where upstream's scheduler records it (scheduleOnePod,
// schedulingAlgorithm, bindingCycle, handleSchedulingFailure, the
// framework's Run* loops, DefaultPreemption's PostFilter).
func TestScheduleOneRecordsMetrics(t *testing.T) {
	type metric struct {
		name   string
		labels map[string]string
	}
	ep := func(point, status string) metric {
		return metric{"scheduler_framework_extension_point_duration_seconds", map[string]string{"extension_point": point, "status": status}}
	}
	attempt := func(result string) metric {
		return metric{"scheduler_scheduling_attempt_duration_seconds", map[string]string{"result": result}}
	}
	algorithm := metric{"scheduler_scheduling_algorithm_duration_seconds", nil}
	attempts := metric{"scheduler_pod_scheduling_attempts", nil}
	sli := metric{"scheduler_pod_scheduling_sli_duration_seconds", map[string]string{"attempts": "1"}}
	histograms := []metric{
		attempt(metrics.ScheduledResult), attempt(metrics.UnschedulableResult), attempt(metrics.ErrorResult),
		algorithm, attempts, sli,
		ep(metrics.PreFilter, "Success"), ep(metrics.Filter, "Success"), ep(metrics.PostFilter, "Unschedulable"),
		ep(metrics.PreScore, "Success"), ep(metrics.Score, "Success"),
		ep(metrics.Reserve, "Success"), ep(metrics.Permit, "Success"), ep(metrics.PreBind, "Success"),
		ep(metrics.Bind, "Success"), ep(metrics.Bind, "Error"), ep(metrics.PostBind, "Success"), ep(metrics.Unreserve, "Success"),
	}
	key := func(m metric) string {
		s := m.name
		for _, k := range []string{"result", "extension_point", "status", "attempts"} {
			if v, ok := m.labels[k]; ok {
				s += " " + k + "=" + v
			}
		}
		return s
	}
	tests := []struct {
		name    string
		pod     *v1.Pod
		nodes   []*v1.Node
		bindErr error
		// want is how much each histogram grew; those not named stayed.
		want map[string]uint64
		// wantPreemptions is how much preemption_attempts_total grew.
		wantPreemptions float64
	}{
		{
			name:  "scheduled on the only node: no scores, binding metrics, attempts and SLI",
			pod:   makePod("p").obj(),
			nodes: []*v1.Node{makeNode("node-a").obj()},
			want: map[string]uint64{
				key(attempt(metrics.ScheduledResult)): 1, key(algorithm): 1, key(attempts): 1, key(sli): 1,
				key(ep(metrics.PreFilter, "Success")): 1, key(ep(metrics.Filter, "Success")): 1,
				key(ep(metrics.Reserve, "Success")): 1, key(ep(metrics.Permit, "Success")): 1, key(ep(metrics.PreBind, "Success")): 1,
				key(ep(metrics.Bind, "Success")): 1, key(ep(metrics.PostBind, "Success")): 1,
			},
		},
		{
			name:  "scheduled among two nodes: PreScore and Score once each",
			pod:   makePod("p").obj(),
			nodes: []*v1.Node{makeNode("node-a").obj(), makeNode("node-b").obj()},
			want: map[string]uint64{
				key(attempt(metrics.ScheduledResult)): 1, key(algorithm): 1, key(attempts): 1, key(sli): 1,
				key(ep(metrics.PreFilter, "Success")): 1, key(ep(metrics.Filter, "Success")): 1,
				key(ep(metrics.PreScore, "Success")): 1, key(ep(metrics.Score, "Success")): 1,
				key(ep(metrics.Reserve, "Success")): 1, key(ep(metrics.Permit, "Success")): 1, key(ep(metrics.PreBind, "Success")): 1,
				key(ep(metrics.Bind, "Success")): 1, key(ep(metrics.PostBind, "Success")): 1,
			},
		},
		{
			name:  "fits nowhere: unschedulable, PostFilter ran and preemption was attempted",
			pod:   makePod("p").req("2").obj(),
			nodes: []*v1.Node{makeNode("small").cpu("1").obj()},
			want: map[string]uint64{
				key(attempt(metrics.UnschedulableResult)): 1, key(algorithm): 1,
				key(ep(metrics.PreFilter, "Success")): 1, key(ep(metrics.Filter, "Success")): 1, key(ep(metrics.PostFilter, "Unschedulable")): 1,
			},
			wantPreemptions: 1,
		},
		{
			name:    "binding rejected: an error, Bind's status says so, and Reserve is undone",
			pod:     makePod("p").obj(),
			nodes:   []*v1.Node{makeNode("node-a").obj()},
			bindErr: fmt.Errorf("pods \"p\" is forbidden"),
			want: map[string]uint64{
				key(attempt(metrics.ErrorResult)): 1, key(algorithm): 1,
				key(ep(metrics.PreFilter, "Success")): 1, key(ep(metrics.Filter, "Success")): 1,
				key(ep(metrics.Reserve, "Success")): 1, key(ep(metrics.Permit, "Success")): 1, key(ep(metrics.PreBind, "Success")): 1,
				key(ep(metrics.Bind, "Error")): 1, key(ep(metrics.Unreserve, "Success")): 1,
			},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := newBufferedTestContext(t)
			// A profile per case keeps the labelled metrics of cases apart;
			// the unlabelled ones are read before and after.
			profile := fmt.Sprintf("metrics-%d", i)
			pod := tt.pod.DeepCopy()
			pod.Spec.SchedulerName = profile
			objs := []runtime.Object{pod}
			for _, n := range tt.nodes {
				objs = append(objs, n)
			}
			client := fake.NewClientset(objs...)
			if tt.bindErr != nil {
				client.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
					return a.GetSubresource() == "binding", nil, tt.bindErr
				})
			}
			sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(10), WithSchedulerName(profile), WithRand(rand.New(rand.NewPCG(1, 2))))
			read := func() map[string]uint64 {
				got := map[string]uint64{}
				for _, m := range histograms {
					labels := map[string]string{}
					for k, v := range m.labels {
						labels[k] = v
					}
					if m.name != "scheduler_scheduling_algorithm_duration_seconds" && m.name != "scheduler_pod_scheduling_attempts" && m.name != "scheduler_pod_scheduling_sli_duration_seconds" {
						labels["profile"] = profile
					}
					got[key(m)] = sampleCount(t, m.name, labels)
				}
				return got
			}
			preemptionsBefore, err := testutil.GetCounterMetricValue(metrics.PreemptionAttempts)
			if err != nil {
				t.Fatal(err)
			}
			before := read()

			sched.scheduleOnePod(ctx, popped(t, sched, pod))
			sched.bindings.Wait()

			after := read()
			grew := map[string]uint64{}
			for k, v := range after {
				if d := v - before[k]; d != 0 {
					grew[k] = d
				}
			}
			if diff := cmp.Diff(tt.want, grew); diff != "" {
				t.Errorf("histograms that grew (-want, +got):\n%s", diff)
			}
			preemptions, err := testutil.GetCounterMetricValue(metrics.PreemptionAttempts)
			if err != nil {
				t.Fatal(err)
			}
			if d := preemptions - preemptionsBefore; d != tt.wantPreemptions {
				t.Errorf("preemption_attempts_total grew by %v, want %v", d, tt.wantPreemptions)
			}
		})
	}
}

// TestPluginEvaluationTotal counts each Filter plugin once per node and
// each PreFilter plugin once per pod unless it answered Skip, as
// upstream's instrumented plugins count them.
func TestPluginEvaluationTotal(t *testing.T) {
	ctx := testContext(t)
	nodes := []*v1.Node{makeNode("node-a").obj(), makeNode("node-b").obj(), makeNode("node-c").obj()}
	objs := []runtime.Object{}
	for _, n := range nodes {
		objs = append(objs, n)
	}
	profile := "evaluation"
	sched := newTestScheduler(t, ctx, fake.NewClientset(objs...), events.NewFakeRecorder(10), WithSchedulerName(profile))
	evaluations := func(plugin, point string) float64 {
		return counterValue(t, "scheduler_plugin_evaluation_total", map[string]string{"plugin": plugin, "extension_point": point, "profile": profile})
	}
	type counts struct{ FitFilter, FitPreFilter, AffinityPreFilter float64 }
	read := func() counts {
		return counts{evaluations("NodeResourcesFit", metrics.Filter), evaluations("NodeResourcesFit", metrics.PreFilter), evaluations("NodeAffinity", metrics.PreFilter)}
	}
	before := read()
	// A pod without affinity: NodeAffinity's PreFilter answers Skip.
	if _, err := schedulePodNow(t, ctx, sched, makePod("p").obj()); err != nil {
		t.Fatal(err)
	}
	after := read()
	got := counts{after.FitFilter - before.FitFilter, after.FitPreFilter - before.FitPreFilter, after.AffinityPreFilter - before.AffinityPreFilter}
	if diff := cmp.Diff(counts{FitFilter: 3, FitPreFilter: 1, AffinityPreFilter: 0}, got); diff != "" {
		t.Errorf("evaluations (-want, +got):\n%s", diff)
	}
}

// TestPluginDurationsAreSampled runs the Filter plugins on a node with the
// cycle state marked for sampling and without: only the first records
// each plugin's duration, and only once the recorder flushes, since the
// observations travel through its buffer, off the hot path.
func TestPluginDurationsAreSampled(t *testing.T) {
	ctx := testContext(t)
	node := makeNode("node-a").obj()
	sched := newTestScheduler(t, ctx, fake.NewClientset(node), events.NewFakeRecorder(10))
	nodeInfo := cachedNodes(t, sched)[0]
	recorded := func() uint64 {
		return sampleCount(t, "scheduler_plugin_execution_duration_seconds", map[string]string{"plugin": "NodeResourcesFit", "extension_point": metrics.Filter, "status": "Success"})
	}
	for _, tc := range []struct {
		name          string
		sampled       bool
		wantBuffered  uint64
		wantAfterward uint64
	}{
		{"a cycle not sampled records nothing", false, 0, 0},
		{"a sampled cycle records after the flush", true, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := recorded()
			state := framework.NewCycleState()
			state.SetRecordPluginMetrics(tc.sampled)
			pod := makePod("p").obj()
			// Filter reads what PreFilter computed.
			if _, s, _ := sched.framework.RunPreFilterPlugins(ctx, state, pod, []fwk.NodeInfo{nodeInfo}); !s.IsSuccess() {
				t.Fatalf("RunPreFilterPlugins = %v", s)
			}
			if s := sched.framework.RunFilterPlugins(ctx, state, pod, nodeInfo); !s.IsSuccess() {
				t.Fatalf("RunFilterPlugins = %v", s)
			}
			// The recorder's own goroutine flushes once a second; this
			// read may come after such a flush, so only the value after
			// the explicit flush is exact.
			if got := recorded() - before; got > tc.wantAfterward {
				t.Errorf("before the flush: %d recorded, want at most %d", got, tc.wantAfterward)
			}
			sched.framework.MetricsRecorder().FlushMetrics()
			if got := recorded() - before; got != tc.wantAfterward {
				t.Errorf("after the flush: %d recorded, want %d", got, tc.wantAfterward)
			}
		})
	}
}

// TestScheduleOneSamplesOneCycleInTen schedules many pods and counts the
// cycles whose plugins' durations were recorded: about one in ten, as
// upstream's pluginMetricsSamplePercent. The bounds are six standard
// deviations of the binomial count wide, so the test fails on a wrong
// rate (none, all, or one in two), not by chance.
func TestScheduleOneSamplesOneCycleInTen(t *testing.T) {
	ctx := newBufferedTestContext(t)
	profile := "sampling"
	// One node the pods do not fit: every cycle runs NodeResourcesFit's
	// PreFilter once and fails, cheaply.
	client := fake.NewClientset(makeNode("small").cpu("1").obj())
	sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(1000), WithSchedulerName(profile))
	preFilters := func() uint64 {
		return sampleCount(t, "scheduler_plugin_execution_duration_seconds", map[string]string{"plugin": "NodeResourcesFit", "extension_point": metrics.PreFilter})
	}
	sched.framework.MetricsRecorder().FlushMetrics()
	before := preFilters()
	const cycles = 600
	for i := range cycles {
		// The pod is not in the apiserver: the failure handler finds it
		// gone and does not queue it again.
		pod := makePod(fmt.Sprintf("p%d", i)).req("2").schedulerName(profile).obj()
		sched.scheduleOnePod(ctx, popped(t, sched, pod))
		// A sampled cycle sends a score of observations: flushed after
		// each cycle, none is dropped for a full buffer.
		sched.framework.MetricsRecorder().FlushMetrics()
	}
	sched.framework.MetricsRecorder().FlushMetrics()
	sampled := preFilters() - before
	// Binomial(600, 0.1): mean 60, standard deviation about 7.3.
	if sampled < 16 || sampled > 104 {
		t.Errorf("%d of %d cycles recorded their plugins' durations, want about %d", sampled, cycles, cycles*pluginMetricsSamplePercent/100)
	}
}

// TestAlgorithmDurationCoversTheAlgorithm checks what
// scheduling_algorithm_duration_seconds measures, not only that it counts:
// the algorithm runs PreFilter and Filter, so its duration is at least
// theirs.
func TestAlgorithmDurationCoversTheAlgorithm(t *testing.T) {
	ctx := newBufferedTestContext(t)
	profile := "algorithm"
	nodes := []runtime.Object{}
	for i := range 50 {
		nodes = append(nodes, makeNode(fmt.Sprintf("node-%02d", i)).obj())
	}
	sched := newTestScheduler(t, ctx, fake.NewClientset(nodes...), events.NewFakeRecorder(10), WithSchedulerName(profile))
	sum := func(name string, labels map[string]string) float64 {
		vec, err := testutil.GetHistogramVecFromGatherer(legacyregistry.DefaultGatherer, name, labels)
		if err != nil {
			return 0
		}
		return vec.GetAggregatedSampleSum()
	}
	read := func() (algorithm, prefilter, filter float64) {
		return sum("scheduler_scheduling_algorithm_duration_seconds", nil),
			sum("scheduler_framework_extension_point_duration_seconds", map[string]string{"extension_point": metrics.PreFilter, "profile": profile}),
			sum("scheduler_framework_extension_point_duration_seconds", map[string]string{"extension_point": metrics.Filter, "profile": profile})
	}
	a0, p0, f0 := read()
	if err := sched.cache.UpdateSnapshot(klog.FromContext(ctx), sched.nodeInfoSnapshot); err != nil {
		t.Fatal(err)
	}
	if _, err := sched.schedulingAlgorithm(ctx, framework.NewCycleState(), makePod("p").schedulerName(profile).obj(), time.Now()); err != nil {
		t.Fatal(err)
	}
	a1, p1, f1 := read()
	if a1-a0 < (p1-p0)+(f1-f0) {
		t.Errorf("the algorithm took %gs, less than its PreFilter (%gs) and Filter (%gs)", a1-a0, p1-p0, f1-f0)
	}
}
