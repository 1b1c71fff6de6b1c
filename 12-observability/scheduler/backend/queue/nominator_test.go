package queue

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	testingclock "k8s.io/utils/clock/testing"
)

// nominations lists the queue's nominations as "pod->node", by node.
func nominations(q *PriorityQueue, nodes ...string) map[string][]string {
	out := map[string][]string{}
	for _, n := range nodes {
		for _, pi := range q.NominatedPodsForNode(n) {
			out[n] = append(out[n], pi.GetPod().Name)
		}
	}
	return out
}

func nominatedTo(p *v1.Pod, node string) *v1.Pod {
	p = p.DeepCopy()
	p.Status.NominatedNodeName = node
	return p
}

// TestNominator: how the queue's nominator follows decisions and pod
// events, as upstream's nominator.go does.
func TestNominator(t *testing.T) {
	override := func(node string) *fwk.NominatingInfo {
		return &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride, NominatedNodeName: node}
	}
	a, b := makePod("a", 100), makePod("b", 10)
	tests := []struct {
		name string
		// lister holds these pods, as the informer would; nil means no
		// lister.
		lister []*v1.Pod
		steps  func(logger klog.Logger, q *PriorityQueue)
		want   map[string][]string
	}{
		{
			name: "a decision nominates; a second one moves the pod",
			steps: func(logger klog.Logger, q *PriorityQueue) {
				q.AddNominatedPod(logger, podInfo(a), override("n1"))
				q.AddNominatedPod(logger, podInfo(b), override("n1"))
				q.AddNominatedPod(logger, podInfo(a), override("n2"))
			},
			want: map[string][]string{"n1": {"b"}, "n2": {"a"}},
		},
		{
			name: "an empty node name clears; a nil decision keeps the status's",
			steps: func(logger klog.Logger, q *PriorityQueue) {
				q.AddNominatedPod(logger, podInfo(a), override("n1"))
				q.AddNominatedPod(logger, podInfo(a), override(""))
				q.AddNominatedPod(logger, podInfo(nominatedTo(b, "n2")), nil)
			},
			want: map[string][]string{"n2": {"b"}},
		},
		{
			name: "a pod added with a nominated node is nominated",
			steps: func(logger klog.Logger, q *PriorityQueue) {
				q.Add(logger, nominatedTo(a, "n1"))
			},
			want: map[string][]string{"n1": {"a"}},
		},
		{
			name: "an update without the nomination keeps the one made in memory",
			steps: func(logger klog.Logger, q *PriorityQueue) {
				q.Add(logger, a)
				q.AddNominatedPod(logger, podInfo(a), override("n1"))
				newer := a.DeepCopy()
				newer.Labels = map[string]string{"x": "y"}
				q.Update(logger, a, newer)
			},
			want: map[string][]string{"n1": {"a"}},
		},
		{
			name: "an update that clears the nomination clears it",
			steps: func(logger klog.Logger, q *PriorityQueue) {
				q.Add(logger, nominatedTo(a, "n1"))
				q.Update(logger, nominatedTo(a, "n1"), a)
			},
			want: map[string][]string{},
		},
		{
			name: "deleted and assumed pods lose their nomination",
			steps: func(logger klog.Logger, q *PriorityQueue) {
				q.Add(logger, nominatedTo(a, "n1"))
				q.Add(logger, nominatedTo(b, "n1"))
				q.Delete(logger, a)
				q.DeleteNominatedPodIfExists(b)
			},
			want: map[string][]string{},
		},
		{
			name:   "a pod the informer has bound, or does not have, is not nominated",
			lister: []*v1.Pod{func() *v1.Pod { p := a.DeepCopy(); p.Spec.NodeName = "n1"; return p }()},
			steps: func(logger klog.Logger, q *PriorityQueue) {
				q.AddNominatedPod(logger, podInfo(a), override("n1"))
				q.AddNominatedPod(logger, podInfo(b), override("n1"))
			},
			want: map[string][]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []Option
			if tt.lister != nil {
				indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
				for _, p := range tt.lister {
					if err := indexer.Add(p); err != nil {
						t.Fatal(err)
					}
				}
				opts = append(opts, WithPodLister(corelisters.NewPodLister(indexer)))
			}
			q := newTestQueue(t, testingclock.NewFakeClock(time.Now()), opts...)
			tt.steps(newTestLogger(t), q)
			if diff := cmp.Diff(tt.want, nominations(q, "n1", "n2")); diff != "" {
				t.Errorf("nominations (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestNominatedPodsForNodeServesTheQueuedVersion: the nominated pod's
// requests are those of its newest version in the queue.
func TestNominatedPodsForNodeServesTheQueuedVersion(t *testing.T) {
	logger := newTestLogger(t)
	q := newTestQueue(t, testingclock.NewFakeClock(time.Now()))
	a := nominatedTo(makePod("a", 100), "n1")
	q.Add(logger, a)
	newer := a.DeepCopy()
	newer.Labels = map[string]string{"version": "2"}
	q.Update(logger, a, newer)
	got := q.NominatedPodsForNode("n1")
	if len(got) != 1 || got[0].GetPod().Labels["version"] != "2" {
		t.Errorf("NominatedPodsForNode = %v, want the updated pod a", got)
	}
}

func podInfo(p *v1.Pod) *framework.PodInfo {
	pi, _ := framework.NewPodInfo(p)
	return pi
}
