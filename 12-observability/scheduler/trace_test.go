package scheduler

import (
	"bytes"
	"errors"
	"io"
	"runtime/trace"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"

	exptrace "golang.org/x/exp/trace"
)

// tracedAttempt is what an execution trace says of one task.
type tracedAttempt struct {
	Type string
	// Logs are the task's log messages, "category: message".
	Logs []string
	// Regions are the region types, in the order they began, and
	// Goroutines how many goroutines ran them.
	Regions    []string
	Goroutines int
}

// readTasks reads an execution trace and returns its tasks by ID.
func readTasks(t *testing.T, data []byte) map[exptrace.TaskID]*tracedAttempt {
	t.Helper()
	r, err := exptrace.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tasks := map[exptrace.TaskID]*tracedAttempt{}
	goroutines := map[exptrace.TaskID]map[exptrace.GoID]bool{}
	get := func(id exptrace.TaskID) *tracedAttempt {
		if tasks[id] == nil {
			tasks[id] = &tracedAttempt{}
			goroutines[id] = map[exptrace.GoID]bool{}
		}
		return tasks[id]
	}
	for {
		ev, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind() {
		case exptrace.EventTaskBegin:
			get(ev.Task().ID).Type = ev.Task().Type
		case exptrace.EventLog:
			l := ev.Log()
			a := get(l.Task)
			a.Logs = append(a.Logs, l.Category+": "+l.Message)
		case exptrace.EventRegionBegin:
			reg := ev.Region()
			a := get(reg.Task)
			a.Regions = append(a.Regions, reg.Type)
			goroutines[reg.Task][ev.Goroutine()] = true
		}
	}
	for id, a := range tasks {
		a.Goroutines = len(goroutines[id])
	}
	return tasks
}

// TestScheduleOneTrace records an execution trace while a pod is
// scheduled: the attempt is one task, named for its pod, whose regions
// cover the scheduling cycle, each extension point and each plugin, the
// Filter and Score workers and the binding cycle, on several goroutines;
// its last log is the decision. Without a trace, the same attempt records
// nothing: the regions cost a check of trace.IsEnabled.
func TestScheduleOneTrace(t *testing.T) {
	for _, tracing := range []bool{true, false} {
		t.Run(map[bool]string{true: "on", false: "off"}[tracing], func(t *testing.T) {
			ctx := newBufferedTestContext(t)
			pod := makePod("p").obj()
			client := fake.NewClientset([]runtime.Object{pod, makeNode("node-a").obj(), makeNode("node-b").obj()}...)
			sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(10))
			var buf bytes.Buffer
			if tracing {
				if err := trace.Start(&buf); err != nil {
					t.Fatal(err)
				}
			}
			sched.scheduleOnePod(ctx, popped(t, sched, pod))
			sched.bindings.Wait()
			if !tracing {
				if trace.IsEnabled() || buf.Len() != 0 {
					t.Errorf("a trace was recorded without trace.Start")
				}
				return
			}
			trace.Stop()
			var attempts []*tracedAttempt
			for _, a := range readTasks(t, buf.Bytes()) {
				if a.Type == "schedulingAttempt" {
					attempts = append(attempts, a)
				}
			}
			if len(attempts) != 1 {
				t.Fatalf("%d schedulingAttempt tasks, want 1", len(attempts))
			}
			a := attempts[0]
			if diff := cmp.Diff([]string{"pod: default/p", "decision: scheduled node=" + boundNode(t, client)}, a.Logs); diff != "" {
				t.Errorf("the task's logs (-want, +got):\n%s", diff)
			}
			for _, want := range []string{"schedulingCycle", "PreFilter", "NodeResourcesFit", "Filter", "PreScore", "Score", "TaintToleration", "Reserve", "Permit", "bindingCycle", "PreBind", "Bind", "DefaultBinder", "PostBind"} {
				if !slices.Contains(a.Regions, want) {
					t.Errorf("no %s region in the attempt; regions: %v", want, a.Regions)
				}
			}
			// The scheduling loop, the binding goroutine, and at least one
			// worker of the Filter and Score loops.
			if a.Goroutines < 3 {
				t.Errorf("the attempt's regions ran on %d goroutines, want at least 3", a.Goroutines)
			}
		})
	}
}

// boundNode is the node the fake clientset's one Binding named.
func boundNode(t *testing.T, client *fake.Clientset) string {
	t.Helper()
	for _, a := range client.Actions() {
		if a.GetVerb() == "create" && a.GetSubresource() == "binding" {
			if b, ok := a.(interface{ GetObject() runtime.Object }); ok {
				if binding, ok := b.GetObject().(*v1.Binding); ok {
					return binding.Target.Name
				}
			}
		}
	}
	t.Fatal("no Binding was created")
	return ""
}
