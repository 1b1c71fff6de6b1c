package watch

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"minisched/scripts/e2e"
)

//go:embed static
var static embed.FS

// Target is a lane's cluster, where the page's controls write.
type Target struct {
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	Mapper  meta.RESTMapper
	// SchedulerName is what the form's pods ask for.
	SchedulerName string
}

// Server serves the page, the state, and the controls.
type Server struct {
	// Session is the live state; nil when replaying.
	Session *Session
	// Replay is the recording being replayed; nil when live.
	Replay *Recording
	// Targets has one cluster per lane; every action goes to each.
	Targets []Target
	// Examples is the directory of docs/examples.
	Examples string
	// Warning is shown on the page: a cluster that is not on this
	// machine.
	Warning string
	// Interval is the least time between two states a stream sends.
	Interval time.Duration
}

// Handler returns the server's routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	files, _ := fs.Sub(static, "static")
	mux.Handle("GET /", http.FileServerFS(files))
	mux.HandleFunc("GET /api/state", s.state)
	mux.HandleFunc("GET /api/stream", s.stream)
	mux.HandleFunc("GET /api/examples", s.listExamples)
	mux.HandleFunc("POST /api/examples", s.write(s.createExample))
	mux.HandleFunc("POST /api/pods", s.write(s.createPod))
	mux.HandleFunc("POST /api/nodes", s.write(s.createNode))
	mux.HandleFunc("DELETE /api/pods/{namespace}/{name}", s.write(s.deletePod))
	mux.HandleFunc("DELETE /api/nodes/{name}", s.write(s.deleteNode))
	return loopbackOnly(mux)
}

// loopbackOnly answers only requests addressed to this machine by name or
// address. A site whose name an attacker points at 127.0.0.1 (DNS
// rebinding) would otherwise pass the Origin check of the controls, its
// Origin matching its Host.
func loopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			http.Error(w, "refused: make watch answers requests to 127.0.0.1 or localhost only, not to "+r.Host, http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) state(w http.ResponseWriter, r *http.Request) {
	if s.Replay == nil {
		data, _, err := s.Session.Snapshot(s.Warning)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(data)
		return
	}
	from, to := s.Replay.Span()
	at := to
	if v := r.URL.Query().Get("t"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			http.Error(w, "t must be milliseconds since the recording's first input", http.StatusBadRequest)
			return
		}
		at = from.Add(time.Duration(ms) * time.Millisecond)
	}
	st := State{Mode: "replay", From: from, To: to, At: at, Warning: s.Warning, Caption: s.Replay.Header.Caption}
	for _, l := range s.Replay.At(at) {
		st.Lanes = append(st.Lanes, l.View())
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(st)
}

// stream sends the state as server-sent events: at once, then whenever it
// changed, at most once per Interval.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	if s.Session == nil {
		http.Error(w, "a replay has no stream: ask /api/state?t=", http.StatusNotFound)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	var version uint64
	for {
		data, v, err := s.Session.Snapshot(s.Warning)
		if err != nil {
			return
		}
		version = v
		if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
			return
		}
		flusher.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(s.Interval):
		}
		s.Session.Wait(r.Context(), version)
		if r.Context().Err() != nil {
			return
		}
	}
}

// action is a control: it reads the request once, then does the same in
// every lane's cluster.
type action func(r *http.Request) (func(ctx context.Context, t Target) error, error)

// write guards a control: only in a live session, only from the page
// itself (a JSON body, which a form on another site cannot send without
// asking first, and no foreign Origin). It answers with the apiserver's
// message when a lane's cluster refuses.
func (s *Server) write(a action) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.Session == nil {
			http.Error(w, "a replay cannot change anything", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
			http.Error(w, "refused: the request comes from another site ("+o+")", http.StatusForbidden)
			return
		}
		if r.Method == http.MethodPost && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			http.Error(w, "refused: send JSON", http.StatusUnsupportedMediaType)
			return
		}
		do, err := a(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		var msgs []string
		for i, t := range s.Targets {
			if err := do(ctx, t); err != nil {
				msgs = append(msgs, laneMessage(s, i, err))
			}
		}
		if len(msgs) > 0 {
			http.Error(w, strings.Join(msgs, "\n"), http.StatusUnprocessableEntity)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

func laneMessage(s *Server, i int, err error) string {
	if len(s.Targets) == 1 {
		return err.Error()
	}
	name := strconv.Itoa(i + 1)
	if s.Session != nil && i < len(s.Session.lanes) {
		name = s.Session.lanes[i].Name
	}
	return name + ": " + err.Error()
}

// PodForm is the page's form for a pod. Lists are comma-separated:
// labels and nodeSelector as key=value, tolerations as key=value:Effect,
// key:Effect or key (any value, any effect).
type PodForm struct {
	Namespace    string `json:"namespace"`
	Name         string `json:"name"`
	CPU          string `json:"cpu"`
	Memory       string `json:"memory"`
	Priority     *int32 `json:"priority"`
	Labels       string `json:"labels"`
	Tolerations  string `json:"tolerations"`
	NodeSelector string `json:"nodeSelector"`
}

// NodeForm is the page's form for a node; taints are key=value:Effect.
type NodeForm struct {
	Name   string `json:"name"`
	CPU    string `json:"cpu"`
	Memory string `json:"memory"`
	Pods   string `json:"pods"`
	Labels string `json:"labels"`
	Taints string `json:"taints"`
}

func decode[T any](r *http.Request) (T, error) {
	var v T
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, fmt.Errorf("the form is not valid JSON: %w", err)
	}
	return v, nil
}

// Pod returns the pod the form describes: the same as a scenario's pod.
func (f PodForm) Pod(schedulerName string) (*v1.Pod, error) {
	if f.Namespace == "" {
		f.Namespace = "default"
	}
	labels, err := pairs(f.Labels)
	if err != nil {
		return nil, fmt.Errorf("labels: %w", err)
	}
	selector, err := pairs(f.NodeSelector)
	if err != nil {
		return nil, fmt.Errorf("node selector: %w", err)
	}
	tolerations, err := tolerations(f.Tolerations)
	if err != nil {
		return nil, err
	}
	spec := e2e.PodSpec{Name: f.Name, SchedulerName: schedulerName, CPU: f.CPU, Memory: f.Memory, Labels: labels, NodeSelector: selector, Tolerations: tolerations}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	pod := e2e.MakePod(f.Namespace, f.Name, spec)
	if f.Name == "" {
		pod.GenerateName = "pod-"
	}
	if f.Priority != nil {
		pod.Spec.PriorityClassName = priorityClass(*f.Priority)
	}
	return pod, nil
}

// priorityClass names the class the page creates for a priority.
func priorityClass(p int32) string {
	return "watch-priority-" + strings.ReplaceAll(strconv.Itoa(int(p)), "-", "minus-")
}

func (s *Server) createPod(r *http.Request) (func(context.Context, Target) error, error) {
	f, err := decode[PodForm](r)
	if err != nil {
		return nil, err
	}
	if f.Name == "" {
		// One name for every lane, so that side by side the same pod
		// has the same name.
		f.Name = "pod-" + utilrand.String(5)
	}
	if _, err := f.Pod(""); err != nil {
		return nil, err
	}
	return func(ctx context.Context, t Target) error {
		pod, _ := f.Pod(t.SchedulerName)
		if f.Priority != nil {
			pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: pod.Spec.PriorityClassName}, Value: *f.Priority}
			if _, err := t.Client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
		}
		if _, err := t.Client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: pod.Namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		_, err := t.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		return err
	}, nil
}

func (s *Server) createNode(r *http.Request) (func(context.Context, Target) error, error) {
	f, err := decode[NodeForm](r)
	if err != nil {
		return nil, err
	}
	if _, err := f.Node(); err != nil {
		return nil, err
	}
	return func(ctx context.Context, t Target) error {
		node, _ := f.Node()
		_, err := t.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		return err
	}, nil
}

// Node returns the KWOK node the form describes.
func (f NodeForm) Node() (*v1.Node, error) {
	labels, err := pairs(f.Labels)
	if err != nil {
		return nil, fmt.Errorf("labels: %w", err)
	}
	taints, err := taints(f.Taints)
	if err != nil {
		return nil, err
	}
	spec := e2e.NodeSpec{Name: f.Name, CPU: f.CPU, Memory: f.Memory, Pods: f.Pods, Labels: labels, Taints: taints}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if f.Name == "" {
		return nil, errors.New("a node needs a name")
	}
	return e2e.MakeNode(f.Name, spec), nil
}

func (s *Server) deletePod(r *http.Request) (func(context.Context, Target) error, error) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	return func(ctx context.Context, t Target) error {
		return t.Client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{})
	}, nil
}

func (s *Server) deleteNode(r *http.Request) (func(context.Context, Target) error, error) {
	name := r.PathValue("name")
	return func(ctx context.Context, t Target) error {
		return t.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	}, nil
}

func (s *Server) listExamples(w http.ResponseWriter, _ *http.Request) {
	names := []string{}
	entries, _ := os.ReadDir(s.Examples)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yaml") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(names)
}

// createExample creates every object of one file of docs/examples, as
// kubectl create -f does. An object with generateName gets one name for
// every lane.
func (s *Server) createExample(r *http.Request) (func(context.Context, Target) error, error) {
	body, err := decode[struct {
		File string `json:"file"`
	}](r)
	if err != nil {
		return nil, err
	}
	if body.File != filepath.Base(body.File) || !strings.HasSuffix(body.File, ".yaml") {
		return nil, fmt.Errorf("%q is not a file of docs/examples", body.File)
	}
	f, err := os.Open(filepath.Join(s.Examples, body.File))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var objs []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("%s: %w", body.File, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		if g := obj.GetGenerateName(); g != "" && obj.GetName() == "" {
			obj.SetName(g + utilrand.String(5))
		}
		objs = append(objs, obj)
	}
	return func(ctx context.Context, t Target) error {
		for _, obj := range objs {
			obj := obj.DeepCopy()
			gvk := obj.GroupVersionKind()
			mapping, err := t.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				return fmt.Errorf("%s: %w", body.File, err)
			}
			var ri dynamic.ResourceInterface = t.Dynamic.Resource(mapping.Resource)
			if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
				if obj.GetNamespace() == "" {
					obj.SetNamespace("default")
				}
				ri = t.Dynamic.Resource(mapping.Resource).Namespace(obj.GetNamespace())
			}
			if _, err := ri.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
				if apierrors.IsAlreadyExists(err) && obj.GetKind() == "PriorityClass" {
					continue
				}
				return err
			}
			klog.FromContext(ctx).V(2).Info("Created from an example", "file", body.File, "kind", obj.GetKind(), "name", obj.GetName())
		}
		return nil
	}, nil
}

// pairs reads "a=b,c=d".
func pairs(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not key=value", kv)
		}
		out[k] = v
	}
	return out, nil
}

var effects = []v1.TaintEffect{v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute}

// taints reads "key=value:Effect,...".
func taints(s string) ([]v1.Taint, error) {
	var out []v1.Taint
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		kv, effect, ok := strings.Cut(t, ":")
		if !ok || !slices.Contains(effects, v1.TaintEffect(effect)) {
			return nil, fmt.Errorf("taint %q: want key=value:Effect, the effect one of NoSchedule, PreferNoSchedule, NoExecute", t)
		}
		k, v, _ := strings.Cut(kv, "=")
		out = append(out, v1.Taint{Key: k, Value: v, Effect: v1.TaintEffect(effect)})
	}
	return out, nil
}

// tolerations reads "key=value:Effect", "key:Effect" (any value) or
// "key" (any value and effect).
func tolerations(s string) ([]v1.Toleration, error) {
	var out []v1.Toleration
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		kv, effect, _ := strings.Cut(t, ":")
		if effect != "" && !slices.Contains(effects, v1.TaintEffect(effect)) {
			return nil, fmt.Errorf("toleration %q: the effect must be one of NoSchedule, PreferNoSchedule, NoExecute", t)
		}
		k, v, hasValue := strings.Cut(kv, "=")
		tol := v1.Toleration{Key: k, Operator: v1.TolerationOpExists, Effect: v1.TaintEffect(effect)}
		if hasValue {
			tol.Operator, tol.Value = v1.TolerationOpEqual, v
		}
		out = append(out, tol)
	}
	return out, nil
}
