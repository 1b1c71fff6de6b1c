package watch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestControls drives the controls against fake clusters: each action goes
// to every lane, a refusal comes back with the apiserver's message, bad
// input with one line, and requests from another site or from a replay are
// refused before any cluster sees them.
func TestControls(t *testing.T) {
	tests := []struct {
		name        string
		method      string
		path        string
		body        string
		header      map[string]string
		replay      bool
		refuse      bool // the second lane's apiserver refuses pods
		wantCode    int
		wantMessage string
		wantPods    []string // in each lane
		// wantNoneInB: the second lane has no pod (its apiserver refused).
		wantNoneInB bool
	}{
		{name: "a pod in both lanes", method: "POST", path: "/api/pods", body: `{"name":"web","cpu":"500m","memory":"1Gi","labels":"app=web","tolerations":"gpu=yes:NoSchedule","nodeSelector":"zone=a"}`, wantCode: http.StatusNoContent, wantPods: []string{"default/web"}},
		{name: "a generated name is the same in both lanes", method: "POST", path: "/api/pods", body: `{"cpu":"100m"}`, wantCode: http.StatusNoContent, wantPods: []string{"same"}},
		{name: "a bad quantity", method: "POST", path: "/api/pods", body: `{"name":"p","cpu":"lots"}`, wantCode: http.StatusBadRequest, wantMessage: `cpu "lots" is not a quantity (like 500m, 2, 1Gi)`},
		{name: "a bad toleration", method: "POST", path: "/api/pods", body: `{"name":"p","tolerations":"a=b:Never"}`, wantCode: http.StatusBadRequest, wantMessage: `toleration "a=b:Never": the effect must be one of NoSchedule, PreferNoSchedule, NoExecute`},
		{name: "a bad taint", method: "POST", path: "/api/nodes", body: `{"name":"n","taints":"a=b"}`, wantCode: http.StatusBadRequest, wantMessage: `taint "a=b": want key=value:Effect, the effect one of NoSchedule, PreferNoSchedule, NoExecute`},
		{name: "an unknown field", method: "POST", path: "/api/pods", body: `{"nme":"p"}`, wantCode: http.StatusBadRequest, wantMessage: `the form is not valid JSON: json: unknown field "nme"`},
		{name: "the apiserver refuses", method: "POST", path: "/api/pods", body: `{"name":"p"}`, refuse: true, wantCode: http.StatusUnprocessableEntity, wantMessage: `b: pods "p" is forbidden: exceeded quota`, wantPods: []string{"default/p"}, wantNoneInB: true},
		{name: "another site", method: "POST", path: "/api/pods", body: `{"name":"p"}`, header: map[string]string{"Origin": "http://evil.example"}, wantCode: http.StatusForbidden, wantMessage: "refused: the request comes from another site (http://evil.example)"},
		{name: "not JSON", method: "POST", path: "/api/pods", body: `name=p`, header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, wantCode: http.StatusUnsupportedMediaType, wantMessage: "refused: send JSON"},
		{name: "DNS rebinding", method: "POST", path: "/api/pods", body: `{"name":"p"}`, header: map[string]string{"Host": "evil.example:8765", "Origin": "http://evil.example:8765"}, wantCode: http.StatusForbidden, wantMessage: "refused: make watch answers requests to 127.0.0.1 or localhost only, not to evil.example:8765"},
		{name: "a replay", method: "POST", path: "/api/pods", body: `{"name":"p"}`, replay: true, wantCode: http.StatusForbidden, wantMessage: "a replay cannot change anything"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := fake.NewClientset(), fake.NewClientset()
			if tt.refuse {
				b.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errString("exceeded quota"))
				})
			}
			s := &Server{Targets: []Target{{Client: a, SchedulerName: "mini-scheduler"}, {Client: b, SchedulerName: "mini-scheduler"}}}
			if tt.replay {
				s.Replay = &Recording{Header: Header{Lanes: []string{"a", "b"}}}
			} else {
				s.Session = NewSession(Header{Lanes: []string{"a", "b"}}, nil)
			}
			req := httptest.NewRequest(tt.method, "http://127.0.0.1:8765"+tt.path, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tt.header {
				if k == "Host" {
					req.Host = v
					continue
				}
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			if rec.Code != tt.wantCode {
				t.Fatalf("code %d, want %d: %s", rec.Code, tt.wantCode, rec.Body)
			}
			if got := strings.TrimSpace(rec.Body.String()); tt.wantMessage != "" && got != tt.wantMessage {
				t.Errorf("message %q, want %q", got, tt.wantMessage)
			}
			podsA, podsB := pods(t, a), pods(t, b)
			if tt.wantNoneInB {
				if len(podsB) != 0 {
					t.Errorf("lane b has %v, want none", podsB)
				}
				podsB = tt.wantPods
			}
			if len(tt.wantPods) == 1 && tt.wantPods[0] == "same" {
				if len(podsA) != 1 || !strings.HasPrefix(podsA[0], "default/pod-") {
					t.Fatalf("lane a has %v, want one generated pod", podsA)
				}
				tt.wantPods = podsA
			}
			for lane, got := range map[string][]string{"a": podsA, "b": podsB} {
				if diff := cmp.Diff(tt.wantPods, got); diff != "" {
					t.Errorf("lane %s's pods (-want +got):\n%s", lane, diff)
				}
			}
		})
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func pods(t *testing.T, c *fake.Clientset) []string {
	t.Helper()
	list, err := c.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}

// TestPodForm checks that the form's pod is a scenario's pod: requests,
// labels, selector, tolerations, priority class, scheduler name.
func TestPodForm(t *testing.T) {
	prio := int32(1000)
	pod, err := PodForm{Name: "p", CPU: "250m", Labels: "app=web", NodeSelector: "zone=a", Tolerations: "gpu:NoSchedule,any", Priority: &prio}.Pod("mini-scheduler")
	if err != nil {
		t.Fatal(err)
	}
	want := []v1.Toleration{{Key: "gpu", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}, {Key: "any", Operator: v1.TolerationOpExists}}
	if diff := cmp.Diff(want, pod.Spec.Tolerations); diff != "" {
		t.Errorf("tolerations (-want +got):\n%s", diff)
	}
	got := []string{pod.Namespace, pod.Spec.SchedulerName, pod.Spec.PriorityClassName, pod.Labels["app"], pod.Spec.NodeSelector["zone"], pod.Spec.Containers[0].Resources.Requests.Cpu().String()}
	if diff := cmp.Diff([]string{"default", "mini-scheduler", "watch-priority-1000", "web", "a", "250m"}, got); diff != "" {
		t.Errorf("pod (-want +got):\n%s", diff)
	}
}

// TestSafety checks what make watch refuses: serving anywhere but the
// loopback, and, without --allow-remote, an apiserver on another machine.
func TestSafety(t *testing.T) {
	for _, tt := range []struct {
		addr    string
		wantErr bool
	}{{"127.0.0.1:8765", false}, {"[::1]:0", false}, {"0.0.0.0:8765", true}, {":8765", true}, {"192.168.1.2:80", true}, {"localhost", true}} {
		if err := CheckLoopback(tt.addr); (err != nil) != tt.wantErr {
			t.Errorf("CheckLoopback(%q) = %v, want an error: %v", tt.addr, err, tt.wantErr)
		}
	}
	for _, tt := range []struct {
		host    string
		wantErr bool
	}{{"https://127.0.0.1:6443", false}, {"https://localhost:6443", false}, {"https://[::1]:6443", false}, {"https://10.0.0.1:6443", true}, {"https://cluster.example.com", true}} {
		if err := checkAPIServer(tt.host); (err != nil) != tt.wantErr {
			t.Errorf("checkAPIServer(%q) = %v, want an error: %v", tt.host, err, tt.wantErr)
		}
	}
}
