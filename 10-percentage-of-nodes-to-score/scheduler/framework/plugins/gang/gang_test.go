package gang

import (
	"context"
	"fmt"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// fakeWaitingPod records what the plugin did to it.
type fakeWaitingPod struct {
	pod     *v1.Pod
	verdict string
}

func (w *fakeWaitingPod) GetPod() *v1.Pod             { return w.pod }
func (w *fakeWaitingPod) GetPendingPlugins() []string { return []string{Name} }
func (w *fakeWaitingPod) Allow(string)                { w.verdict = "allowed" }
func (w *fakeWaitingPod) Reject(_, msg string) bool   { w.verdict = "rejected: " + msg; return true }
func (w *fakeWaitingPod) Preempt(string, string) bool { return false }
func (w *fakeWaitingPod) String() string              { return w.pod.Name + " " + w.verdict }

var _ fwk.WaitingPod = &fakeWaitingPod{}

// fakeHandle serves waiting pods; the plugin uses nothing else.
type fakeHandle struct {
	fwk.Handle
	waiting []*fakeWaitingPod
}

// SharedInformerFactory returns none: the plugin then lists no siblings.
func (h *fakeHandle) SharedInformerFactory() informers.SharedInformerFactory { return nil }

func (h *fakeHandle) IterateOverWaitingPods(cb func(fwk.WaitingPod)) {
	for _, w := range h.waiting {
		cb(w)
	}
}

func member(ns, name, group string, size int) *v1.Pod {
	labels := map[string]string{}
	if group != "" {
		labels[GroupLabel] = group
		labels[GroupSizeLabel] = fmt.Sprint(size)
	}
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(name), Labels: labels}}
}

func TestPermit(t *testing.T) {
	tests := []struct {
		name        string
		waiting     []*v1.Pod
		pod         *v1.Pod
		wantCode    fwk.Code
		wantTimeout time.Duration
		wantWaiting []string // the waiting pods afterwards, with verdicts
	}{
		{
			name:     "no gang: straight through",
			pod:      member("ns", "solo", "", 0),
			wantCode: fwk.Success,
		},
		{
			name:        "first of three waits",
			pod:         member("ns", "a", "g", 3),
			wantCode:    fwk.Wait,
			wantTimeout: time.Minute,
		},
		{
			name:        "second of three waits; other gangs and namespaces do not count",
			waiting:     []*v1.Pod{member("ns", "a", "g", 3), member("ns", "x", "other", 3), member("elsewhere", "y", "g", 3)},
			pod:         member("ns", "b", "g", 3),
			wantCode:    fwk.Wait,
			wantTimeout: time.Minute,
			wantWaiting: []string{"a ", "x ", "y "},
		},
		{
			name:        "third of three allows the two waiting and goes on",
			waiting:     []*v1.Pod{member("ns", "a", "g", 3), member("ns", "b", "g", 3), member("ns", "x", "other", 3)},
			pod:         member("ns", "c", "g", 3),
			wantCode:    fwk.Success,
			wantWaiting: []string{"a allowed", "b allowed", "x "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &fakeHandle{}
			for _, p := range tt.waiting {
				h.waiting = append(h.waiting, &fakeWaitingPod{pod: p})
			}
			pl, err := New(context.Background(), &Args{Timeout: time.Minute}, h, featureless)
			if err != nil {
				t.Fatal(err)
			}
			status, timeout := pl.(*Gang).Permit(context.Background(), nil, tt.pod, "node")
			if diff := cmp.Diff(tt.wantCode.String(), status.Code().String()); diff != "" {
				t.Errorf("code (-want, +got):\n%s", diff)
			}
			if timeout != tt.wantTimeout {
				t.Errorf("timeout = %v, want %v", timeout, tt.wantTimeout)
			}
			if diff := cmp.Diff(tt.wantWaiting, verdicts(h)); diff != "" {
				t.Errorf("waiting pods (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestUnreserveRejectsTheGang: when one member fails, the others still
// waiting are rejected at once; other gangs are left alone.
func TestUnreserveRejectsTheGang(t *testing.T) {
	h := &fakeHandle{waiting: []*fakeWaitingPod{
		{pod: member("ns", "a", "g", 3)},
		{pod: member("ns", "b", "g", 3)},
		{pod: member("ns", "x", "other", 2)},
	}}
	pl, err := New(context.Background(), nil, h, featureless)
	if err != nil {
		t.Fatal(err)
	}
	pl.(*Gang).Unreserve(context.Background(), nil, member("ns", "a", "g", 3), "node")
	want := []string{"a ", "b rejected: member a of gang g was rejected", "x "}
	if diff := cmp.Diff(want, verdicts(h)); diff != "" {
		t.Errorf("waiting pods (-want, +got):\n%s", diff)
	}
}

func verdicts(h *fakeHandle) []string {
	var out []string
	for _, w := range h.waiting {
		out = append(out, w.String())
	}
	sort.Strings(out)
	return out
}

var featureless = feature.Features{}

// TestIsSchedulableAfterPodAdded: a member the plugin rejected is worth a
// retry only when a new member of its gang arrives.
func TestIsSchedulableAfterPodAdded(t *testing.T) {
	rejected := member("ns", "a", "g", 3)
	tests := []struct {
		name    string
		added   any
		want    fwk.QueueingHint
		wantErr bool
	}{
		{name: "a new member of the gang", added: member("ns", "b", "g", 3), want: fwk.Queue},
		{name: "a member of another gang", added: member("ns", "b", "h", 3), want: fwk.QueueSkip},
		{name: "the same gang name in another namespace", added: member("other", "b", "g", 3), want: fwk.QueueSkip},
		{name: "a pod without a gang", added: member("ns", "b", "", 0), want: fwk.QueueSkip},
		{name: "the rejected pod itself", added: rejected, want: fwk.QueueSkip},
		{name: "not a pod: an error, which the queue counts as Queue", added: &v1.Node{}, want: fwk.Queue, wantErr: true},
	}
	g := &Gang{}
	events, err := g.EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Add}, events[0].Event); len(events) != 1 || diff != "" {
		t.Fatalf("EventsToRegister: want only pod additions, got %d events (-want, +got):\n%s", len(events), diff)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := events[0].QueueingHintFn(klog.Background(), rejected, nil, tt.added)
			if (err != nil) != tt.wantErr {
				t.Errorf("error = %v, want one: %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want, +got):\n%s", diff)
			}
		})
	}
}
