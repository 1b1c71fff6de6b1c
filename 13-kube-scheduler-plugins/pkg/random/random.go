// Package random is a whole scheduling policy written as plugins: among the
// nodes that pass every Filter, it places a pod on one chosen at random. It
// is the first scheduler of this series (chapter 01 bound each pod to a node
// it picked), rebuilt inside kube-scheduler: the queue, the Filter plugins,
// binding and the events are upstream's, and only the choice is ours.
//
// It uses four extension points, one method each, as every plugin under
// pkg/scheduler/framework/plugins/ of k8s.io/kubernetes does:
//   - PreScore sees, once per pod, the feasible nodes the cycle found (above
//     100 nodes, percentageOfNodesToScore stops the search early), so it
//     makes the choice among them and keeps it in the CycleState;
//   - Score gives the chosen node MaxScore and the others MinScore, so
//     schedulePod (schedule_one.go), which takes the head of
//     NewSortedScoredNodes, picks it;
//   - Reserve and Unreserve record the choice while the pod is assumed on
//     the node, and forget it if the placement is given up (a later
//     Reserve, Permit, PreBind or Bind failed);
//   - PostBind logs the choice once the Binding is made.
//
// Run it with config/random.yaml, which turns every other Score plugin off:
// with another one on, the total would no longer be ours alone.
//
// Random does not implement SignPlugin, on purpose. With
// OpportunisticBatching (KEP-5598, beta and on by default since v1.35,
// kube_features.go), kube-scheduler may reuse one pod's scored node list
// for the next pod with the same signature, which would hand that pod the
// same "random" node. A Score plugin that cannot sign pods turns
// signatures off for its whole profile (computeBatchablePlugins in
// framework/runtime/framework.go), and every pod gets a choice of its own.
package random

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

const (
	// Name is the plugin's name in the configuration, the logs and the
	// metrics.
	Name = "Random"
	// preScoreStateKey is where PreScore leaves its choice for Score. The
	// in-tree plugins name their keys "PreScore" + Name the same way.
	preScoreStateKey fwk.StateKey = "PreScore" + Name
)

// RandomArgs are the plugin's arguments, from its pluginConfig entry:
//
//	pluginConfig:
//	- name: Random
//	  args:
//	    seed: 42
//
// kube-scheduler decodes the args of in-tree plugins into types its scheme
// knows (NodeResourcesFitArgs and the like); an out-of-tree plugin's args
// reach New as a *runtime.Unknown holding the raw JSON, which
// frameworkruntime.DecodeInto reads (registry.go).
type RandomArgs struct {
	// Seed makes the choices repeatable: the same seed and the same
	// sequence of pods and nodes give the same placements. Zero, the
	// default, seeds from the clock.
	Seed uint64 `json:"seed,omitempty"`
}

// Random places each pod on a feasible node chosen at random.
type Random struct {
	// mu guards rnd and reserved. The scheduling cycle (PreScore, Score,
	// Reserve) runs one pod at a time, but Unreserve (from either cycle)
	// and PostBind may run in a binding cycle's goroutine, beside the next
	// pod's cycle.
	mu  sync.Mutex
	rnd *rand.Rand
	// reserved is each reserved pod's chosen node, from Reserve until
	// PostBind or Unreserve.
	reserved map[types.UID]string
}

var (
	_ fwk.PreScorePlugin = &Random{}
	_ fwk.ScorePlugin    = &Random{}
	_ fwk.ReservePlugin  = &Random{}
	_ fwk.PostBindPlugin = &Random{}
)

// New builds the plugin from its args. Its signature is
// frameworkruntime.PluginFactory, the one app.WithPlugin takes: an
// out-of-tree plugin gets no feature gates from the registry, unlike the
// in-tree ones (runtime.FactoryAdapter in NewInTreeRegistry).
func New(_ context.Context, obj runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	args := RandomArgs{}
	if err := frameworkruntime.DecodeInto(obj, &args); err != nil {
		return nil, fmt.Errorf("%s: decoding args: %w", Name, err)
	}
	seed := args.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	return &Random{rnd: rand.New(rand.NewPCG(seed, seed)), reserved: map[types.UID]string{}}, nil
}

// Name returns the plugin's name.
func (pl *Random) Name() string { return Name }

// preScoreState is what PreScore saw and chose for one pod.
type preScoreState struct {
	// feasible are the names of the nodes that passed every Filter.
	feasible []string
	chosen   string
}

// Clone returns the state itself: nothing changes it after PreScore.
func (s *preScoreState) Clone() fwk.StateData { return s }

// PreScore is the one place a plugin sees all the feasible nodes together
// (Score sees one node per call, in parallel), so it keeps them and
// chooses among them here.
//
// kube-scheduler calls no PreScore or Score plugin when one node alone is
// feasible: schedulePod in schedule_one.go returns that node at once.
//
//workshop:part 13/1
func (pl *Random) PreScore(_ context.Context, state fwk.CycleState, _ *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	if len(nodes) == 0 {
		return fwk.NewStatus(fwk.Skip)
	}
	s := &preScoreState{feasible: make([]string, len(nodes))}
	for i, n := range nodes {
		s.feasible[i] = n.Node().Name
	}
	pl.mu.Lock()
	s.chosen = s.feasible[pl.rnd.IntN(len(s.feasible))]
	pl.mu.Unlock()
	state.Write(preScoreStateKey, s)
	return nil
}

// Score gives the chosen node the highest score and every other node the
// lowest.
//
//workshop:part 13/1
func (pl *Random) Score(_ context.Context, state fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	s, err := getPreScoreState(state)
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	if nodeInfo.Node().Name == s.chosen {
		return fwk.MaxScore, nil
	}
	return fwk.MinScore, nil
}

// ScoreExtensions returns nil: the scores are already in [MinScore,
// MaxScore], so there is nothing to normalize.
func (pl *Random) ScoreExtensions() fwk.ScoreExtensions { return nil }

func getPreScoreState(state fwk.CycleState) (*preScoreState, error) {
	c, err := state.Read(preScoreStateKey)
	if err != nil {
		return nil, fmt.Errorf("reading %q from the cycle state: %w", preScoreStateKey, err)
	}
	s, ok := c.(*preScoreState)
	if !ok {
		return nil, fmt.Errorf("%+v cannot be converted to *random.preScoreState", c)
	}
	return s, nil
}

// Reserve runs once the scheduler has assumed the pod on nodeName, before
// the binding cycle starts. A plugin that keeps state about placements
// (VolumeBinding's assumed volumes, say) updates it here, and must undo it
// in Unreserve.
func (pl *Random) Reserve(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.reserved[pod.UID] = nodeName
	klog.FromContext(ctx).V(5).Info("Reserved randomly chosen node", "pod", klog.KObj(pod), "node", nodeName)
	return nil
}

// Unreserve forgets the choice: a later plugin's Reserve, Permit, PreBind
// or Bind failed, and the pod goes back to the queue. Unreserve must be
// idempotent, as the framework may call it for a pod Reserve never saw
// (RunReservePluginsUnreserve in framework.go calls every Reserve plugin).
func (pl *Random) Unreserve(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, nodeName string) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if _, ok := pl.reserved[pod.UID]; ok {
		delete(pl.reserved, pod.UID)
		klog.FromContext(ctx).V(5).Info("Gave up randomly chosen node", "pod", klog.KObj(pod), "node", nodeName)
	}
}

// PostBind runs after the Binding succeeded. It cannot fail the pod any
// more: it is for bookkeeping and logs. A pod can be bound without a
// random choice: when one node alone was feasible, or when the pod was
// nominated to a node and fit there (evaluateNominatedNode in
// schedule_one.go), the framework skips PreScore and Score.
func (pl *Random) PostBind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) {
	pl.mu.Lock()
	delete(pl.reserved, pod.UID)
	pl.mu.Unlock()
	logger := klog.FromContext(ctx)
	if s, err := getPreScoreState(state); err == nil && s.chosen == nodeName {
		logger.V(2).Info("Bound pod to a randomly chosen node", "pod", klog.KObj(pod), "node", nodeName, "feasibleNodes", len(s.feasible))
		return
	}
	logger.V(2).Info("Bound pod without a random choice", "pod", klog.KObj(pod), "node", nodeName)
}

// Reserved returns a copy of the choices between Reserve and PostBind or
// Unreserve, for tests.
func (pl *Random) Reserved() map[types.UID]string {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	out := make(map[types.UID]string, len(pl.reserved))
	for k, v := range pl.reserved {
		out[k] = v
	}
	return out
}
