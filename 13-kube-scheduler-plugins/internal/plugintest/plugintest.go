// Package plugintest runs the chapter's plugins through upstream's
// framework runtime, as the in-tree plugins' own tests do
// (pkg/scheduler/framework/plugins/*/..._test.go build theirs with
// frameworkruntime.NewFramework): a framework built from a profile, with the
// in-tree registry and the chapter's, over a snapshot of nodes and pods.
// What a test sees is what kube-scheduler's scheduling cycle would see at
// each extension point.
package plugintest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	"k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"

	"minisched/13-kube-scheduler-plugins/pkg/registry"
)

// LoadProfile reads a KubeSchedulerConfiguration file the way
// kube-scheduler does (options.LoadConfigFromFile: decoded, converted and
// defaulted, default plugins merged in) and returns its only profile.
func LoadProfile(t testing.TB, logger klog.Logger, file string) config.KubeSchedulerProfile {
	t.Helper()
	cfg, err := options.LoadConfigFromFile(logger, file)
	if err != nil {
		t.Fatalf("loading %s: %v", file, err)
	}
	if len(cfg.Profiles) != 1 {
		t.Fatalf("%s has %d profiles, want 1", file, len(cfg.Profiles))
	}
	return cfg.Profiles[0]
}

// Registry is kube-scheduler's: the in-tree plugins and the chapter's.
func Registry(t testing.TB) frameworkruntime.Registry {
	t.Helper()
	r := frameworkplugins.NewInTreeRegistry()
	ours, err := registry.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Merge(ours); err != nil {
		t.Fatal(err)
	}
	return r
}

// Framework is upstream's framework, and the plugin instances it built,
// by name, for tests that look inside one.
type Framework struct {
	framework.Framework
	Plugins map[string]fwk.Plugin
}

// NewFramework builds upstream's framework for the profile over a
// snapshot of the nodes and the pods on them. The objects are what the
// apiserver holds besides them, such as DeviceClasses: the framework's
// informers and its DRA manager see them, as scheduler.New builds that
// manager when DynamicResourceAllocation is on (GA since v1.34). The framework
// starts goroutines (its metrics recorder, the informers) that run until
// its context is cancelled: NewFramework cancels it when the test ends
// (ktesting's context is never cancelled). The framework counts every
// plugin's evaluations in the scheduler's metrics, which kube-scheduler
// registers at start: so does NewFramework, once (metrics.Register, as
// upstream's framework_test.go does).
func NewFramework(ctx context.Context, t testing.TB, profile config.KubeSchedulerProfile, nodes []*v1.Node, pods []*v1.Pod, objects ...runtime.Object) *Framework {
	t.Helper()
	metrics.Register()
	ctx, cancel := context.WithCancel(ctx)
	client := fake.NewClientset(objects...)
	informerFactory := informers.NewSharedInformerFactory(client, 0)
	// Cancel first, then wait: Shutdown waits for the informers, which
	// stop only once the context is done.
	t.Cleanup(func() {
		cancel()
		informerFactory.Shutdown()
	})
	dra, draSynced := newDRAManager(ctx, t, client, informerFactory)
	snapshot := cache.NewSnapshot(pods, nodes)
	built := map[string]fwk.Plugin{}
	r := Registry(t)
	for name, factory := range r {
		r[name] = func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			p, err := factory(ctx, args, h)
			built[name] = p
			return p, err
		}
	}
	fw, err := frameworkruntime.NewFramework(ctx, r, &profile,
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(informerFactory),
		frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
		frameworkruntime.WithSharedDRAManager(dra),
	)
	if err != nil {
		t.Fatalf("building the framework for profile %s: %v", profile.SchedulerName, err)
	}
	// As kube-scheduler does, the informers start once the plugins have
	// asked for theirs.
	informerFactory.Start(ctx.Done())
	for typ, ok := range informerFactory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("the informer of %v never synced", typ)
		}
	}
	// No name: with one, WaitFor logs two lines at V(0) for every framework.
	if !toolscache.WaitFor(ctx, "", draSynced) {
		t.Fatal("the DRA manager never saw the DeviceClasses")
	}
	return &Framework{Framework: fw, Plugins: built}
}

// newDRAManager builds upstream's DRA manager as scheduler.New does
// (without the DeviceTaintRules informer, which no test here needs), and
// feeds its cache of the extended resources that DeviceClasses provide
// from the DeviceClass informer, as addAllEventHandlers does
// (eventhandlers.go). The checker it returns is done once that cache has
// seen every DeviceClass of the informer's first list: a plugin that asks
// it (NodeResourcesFit and Fit, for an extended resource no node lists)
// then gets the answer kube-scheduler would.
func newDRAManager(ctx context.Context, t testing.TB, client *fake.Clientset, informerFactory informers.SharedInformerFactory) (fwk.SharedDRAManager, toolscache.DoneChecker) {
	t.Helper()
	sliceTracker, err := tracker.StartTracker(ctx, tracker.Options{
		SliceInformer: informerFactory.Resource().V1().ResourceSlices(),
		KubeClient:    client,
	})
	if err != nil {
		t.Fatalf("starting the ResourceSlice tracker: %v", err)
	}
	claims := assumecache.NewAssumeCache(klog.FromContext(ctx), informerFactory.Resource().V1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
	dra := dynamicresources.NewDRAManager(ctx, claims, sliceTracker, informerFactory)
	extended, ok := dra.DeviceClassResolver().(*extendedresourcecache.ExtendedResourceCache)
	if !ok || extended == nil {
		// DRAExtendedResource is GA and locked on in v1.37.
		t.Fatal("the DRA manager has no cache of extended resources: is DRAExtendedResource off?")
	}
	registration, err := informerFactory.Resource().V1().DeviceClasses().Informer().AddEventHandler(extended)
	if err != nil {
		t.Fatalf("watching DeviceClasses: %v", err)
	}
	return dra, registration.HasSyncedChecker()
}

// Profile reads one profile written in YAML, as it would appear under
// profiles: in a KubeSchedulerConfiguration (without its schedulerName),
// through LoadProfile: the in-tree plugins' args are then defaulted by
// upstream's own defaulting, and the chapter's reach their factories as
// kube-scheduler hands them over. A test profile usually starts with
//
//	plugins:
//	  multiPoint: {disabled: [{name: "*"}]}
//	  queueSort: {enabled: [{name: PrioritySort}]}
//	  bind: {enabled: [{name: DefaultBinder}]}
//
// and enables only what it tests, as upstream's plugin tests register
// only theirs.
func Profile(t testing.TB, profile string) config.KubeSchedulerProfile {
	t.Helper()
	var b strings.Builder
	b.WriteString("profiles:\n- schedulerName: mini-scheduler\n")
	for _, line := range strings.Split(strings.Trim(profile, "\n"), "\n") {
		b.WriteString("  " + line + "\n")
	}
	return LoadProfile(t, klog.Background(), WriteConfig(t, b.String()))
}

// WriteConfig writes a KubeSchedulerConfiguration of the given body (what
// follows its apiVersion and kind) to a file of the test's, and returns
// its path.
func WriteConfig(t testing.TB, body string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "config.yaml")
	data := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + body
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// Verdict is what a scheduling cycle decided about one node for a pod.
type Verdict struct {
	// Filter is the Filter plugins' status: "" when the node passed, or
	// the first failing plugin's code and reasons.
	Filter string
	// Scores are the Score plugins' weighted scores by plugin, and Total
	// their sum, for the nodes that passed.
	Scores map[string]int64
	Total  int64
	// ScoreError is PreScore's or Score's status when it was not a
	// success, on every node that passed: a test that compares only the
	// Filter verdicts still runs then.
	ScoreError string
}

// Cycle runs PreFilter, Filter on every node, PreScore and Score on the
// nodes that passed, as schedulePod in schedule_one.go does (without its
// shortcuts: every node is filtered and every feasible node scored, even
// one alone). It returns the PreFilter status, if not a success, and a
// verdict per node.
func Cycle(ctx context.Context, t testing.TB, fw *Framework, pod *v1.Pod) (string, map[string]Verdict) {
	t.Helper()
	state := framework.NewCycleState()
	pre, s, _ := fw.RunPreFilterPlugins(ctx, state, pod)
	if !s.IsSuccess() {
		return statusString(s), nil
	}
	infos, err := fw.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Verdict{}
	var feasible []fwk.NodeInfo
	for _, ni := range infos {
		name := ni.Node().Name
		if pre != nil && !pre.AllNodes() && !pre.NodeNames.Has(name) {
			out[name] = Verdict{Filter: "not in PreFilterResult"}
			continue
		}
		if s := fw.RunFilterPlugins(ctx, state, pod, ni); !s.IsSuccess() {
			out[name] = Verdict{Filter: statusString(s)}
			continue
		}
		feasible = append(feasible, ni)
	}
	if len(feasible) == 0 {
		return "", out
	}
	failed := func(s *fwk.Status) map[string]Verdict {
		for _, ni := range feasible {
			out[ni.Node().Name] = Verdict{ScoreError: statusString(s)}
		}
		return out
	}
	if s := fw.RunPreScorePlugins(ctx, state, pod, feasible); !s.IsSuccess() {
		return "", failed(s)
	}
	scores, s := fw.RunScorePlugins(ctx, state, pod, feasible)
	if !s.IsSuccess() {
		return "", failed(s)
	}
	for _, ns := range scores {
		v := Verdict{Scores: map[string]int64{}, Total: ns.TotalScore}
		for _, ps := range ns.Scores {
			v.Scores[ps.Name] = ps.Score
		}
		out[ns.Name] = v
	}
	return "", out
}

// statusString is a status's code, plugin and reasons, comparable across
// two plugins that should agree (the plugin's name is left out).
func statusString(s *fwk.Status) string {
	return s.Code().String() + ": " + s.Message()
}
