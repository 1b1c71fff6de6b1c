package schedtrace

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCPUAt(t *testing.T) {
	g := &Goroutine{Running: []Interval{{10, 20}, {30, 35}, {50, 60}}}
	g.cpuBefore = []int64{0, 10, 15}
	for _, tc := range []struct {
		at, want int64
	}{
		{0, 0}, {10, 0}, {15, 5}, {20, 10}, {25, 10}, {30, 10}, {33, 13}, {40, 15}, {55, 20}, {60, 25}, {100, 25},
	} {
		if got := g.CPUAt(tc.at); got != tc.want {
			t.Errorf("CPUAt(%d) = %d, want %d", tc.at, got, tc.want)
		}
	}
}

func TestSplitByRegion(t *testing.T) {
	outer := &Region{Type: "schedulingCycle", Start: 0, End: 100}
	filter := &Region{Type: "PreFilter", Start: 10, End: 40, Depth: 1, Parent: outer}
	fit := &Region{Type: "NodeResourcesFit", Start: 20, End: 30, Depth: 2, Parent: filter}
	got := splitByRegion(7, 5, 50, []*Region{outer, filter, fit})
	want := []Piece{
		{7, 5, 10, "schedulingCycle"},
		{7, 10, 20, "PreFilter"},
		{7, 20, 30, "NodeResourcesFit"},
		{7, 30, 40, "PreFilter"},
		{7, 40, 50, "schedulingCycle"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pieces (-want, +got):\n%s", diff)
	}
}

// TestCPULayout lays out two goroutines that ran in parallel for part of
// the time: each bar is as long as its goroutine ran, and the axis grows
// by both while both ran.
func TestCPULayout(t *testing.T) {
	a := &Attempt{
		Goroutines: []int64{1, 2},
		Pieces: []Piece{
			{1, 0, 10, "PreFilter"},
			{2, 5, 15, "NodeResourcesFit"},
			{1, 20, 30, "Score"},
		},
	}
	got := a.CPULayout()
	// From 5 to 10 both ran: goroutine 1's five then goroutine 2's five;
	// each goroutine's bar continues where its last one ended.
	want := []Rect{
		{Goroutine: 1, X: 0, W: 10, Type: "PreFilter", CPU: 10},
		{Goroutine: 2, X: 10, W: 10, Type: "NodeResourcesFit", CPU: 10},
		{Goroutine: 1, X: 20, W: 10, Type: "Score", CPU: 10},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rects (-want, +got):\n%s", diff)
	}
	var total int64
	for _, r := range got {
		total += r.W
	}
	if total != 30 {
		t.Errorf("the bars add up to %d ns, want the 30 ns the goroutines ran", total)
	}
}

// recordTrace records a real execution trace of a small imitation of a
// scheduling attempt: a task whose scheduling cycle runs a plugin on two
// worker goroutines, then hands over to a binding goroutine that waits
// before it binds.
func recordTrace(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatalf("starting the trace: %v", err)
	}
	ctx, task := trace.NewTask(context.Background(), "schedulingAttempt")
	trace.Log(ctx, "pod", "default/p1")
	cycle := trace.StartRegion(ctx, "schedulingCycle")
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			defer trace.StartRegion(ctx, "Filter").End()
			defer trace.StartRegion(ctx, "NodeResourcesFit").End()
			spin(2 * time.Millisecond)
		})
	}
	wg.Wait()
	cycle.End()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer task.End()
		defer trace.StartRegion(ctx, "bindingCycle").End()
		func() {
			defer trace.StartRegion(ctx, "WaitOnPermit").End()
			time.Sleep(30 * time.Millisecond)
		}()
		trace.Log(ctx, "decision", "scheduled node=n1")
	}()
	<-done
	trace.Stop()
	return buf.Bytes()
}

func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// TestReadRecordedTrace reads a trace the runtime wrote and checks what
// does not depend on the machine's speed: the regions, their nesting and
// goroutines, the arrow from the scheduling cycle to the binding cycle,
// that CPU time never exceeds wall time, and that a region's sleep does
// not count as CPU.
func TestReadRecordedTrace(t *testing.T) {
	tr, err := Read(bytes.NewReader(recordTrace(t)))
	if err != nil {
		t.Fatal(err)
	}
	ids := tr.Attempts(Selection{})
	if len(ids) != 1 {
		t.Fatalf("attempts = %v, want one", ids)
	}
	id := ids[0]
	if got := tr.Pod(id); got != "default/p1" {
		t.Errorf("Pod = %q, want default/p1", got)
	}
	if got := tr.Decision(id); got != "scheduled node=n1" {
		t.Errorf("Decision = %q", got)
	}
	count := map[string]int{}
	goroutines := map[string]map[int64]bool{}
	for _, reg := range tr.Tasks[id].Regions {
		count[reg.Type]++
		if goroutines[reg.Type] == nil {
			goroutines[reg.Type] = map[int64]bool{}
		}
		goroutines[reg.Type][reg.Goroutine] = true
		if reg.CPU < 0 || reg.CPU > reg.End-reg.Start {
			t.Errorf("%s: CPU %d ns outside [0, wall %d ns]", reg.Type, reg.CPU, reg.End-reg.Start)
		}
		if reg.Type == "NodeResourcesFit" && (reg.Parent == nil || reg.Parent.Type != "Filter") {
			t.Errorf("NodeResourcesFit is not inside Filter: parent %v", reg.Parent)
		}
		// The 30 ms the goroutine sleeps must not count as CPU. Only that
		// is asserted: the region's running parts count the time the
		// operating system took the thread away too (the trace cannot see
		// it), which on a loaded machine is milliseconds, so no ratio of
		// CPU to wall time holds. time.Sleep sets its deadline a few
		// instructions before the goroutine parks, hence 1 ms of slack.
		if reg.Type == "WaitOnPermit" && (reg.End-reg.Start)-reg.CPU < int64(29*time.Millisecond) {
			t.Errorf("WaitOnPermit slept 30 ms within %d ns of wall time, but %d ns of it count as CPU", reg.End-reg.Start, reg.CPU)
		}
	}
	wantCount := map[string]int{"schedulingCycle": 1, "Filter": 2, "NodeResourcesFit": 2, "bindingCycle": 1, "WaitOnPermit": 1}
	if diff := cmp.Diff(wantCount, count); diff != "" {
		t.Errorf("regions (-want, +got):\n%s", diff)
	}
	if len(goroutines["Filter"]) != 2 {
		t.Errorf("Filter ran on %d goroutines, want 2", len(goroutines["Filter"]))
	}
	flows := tr.Flows()
	if len(flows) != 1 || flows[0].From.Type != "schedulingCycle" || flows[0].To.Type != "bindingCycle" {
		t.Errorf("flows = %+v, want one from schedulingCycle to bindingCycle", flows)
	}
	a := tr.Layout(id)
	if len(a.Goroutines) != 4 {
		t.Errorf("the attempt ran on %d goroutines, want 4 (cycle, two workers, binding)", len(a.Goroutines))
	}
	var laid int64
	for _, r := range a.CPULayout() {
		laid += r.W
	}
	if laid != a.CPU {
		t.Errorf("the CPU view's bars add up to %d ns, want the attempt's %d ns", laid, a.CPU)
	}
}

// TestWriteChrome converts the recorded trace and checks the JSON as
// Perfetto's importer would read it (Validate), then what it holds: a
// named thread per goroutine, a slice per region with its CPU time, one
// flow, the decision and the counters.
func TestWriteChrome(t *testing.T) {
	tr, err := Read(bytes.NewReader(recordTrace(t)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := tr.WriteChrome(&out); err != nil {
		t.Fatal(err)
	}
	if err := Validate(out.Bytes()); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	var doc struct {
		TraceEvents []struct {
			Name, Ph string
			Tid      int64
			Tdur     *float64
			BindID   uint64 `json:"bind_id"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, e := range doc.TraceEvents {
		switch {
		case e.Ph == "X":
			got["X "+e.Name]++
			if e.Tdur == nil {
				t.Errorf("slice %s has no tdur", e.Name)
			}
			if e.BindID != 0 {
				got["flow ends"]++
			}
		case e.Ph == "M" && e.Name == "thread_name":
			got["threads"]++
		case e.Ph == "i":
			got["i "+e.Name]++
		case e.Ph == "C":
			got["C "+e.Name] = 1
		}
	}
	want := map[string]int{
		"X schedulingCycle": 1, "X Filter": 2, "X NodeResourcesFit": 2, "X bindingCycle": 1, "X WaitOnPermit": 1,
		"flow ends": 2, "threads": 4, "i scheduled node=n1": 1, "C goroutines": 1, "C heap": 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want, +got):\n%s", diff)
	}
}

func TestValidateRejects(t *testing.T) {
	for _, tc := range []struct {
		name, json, want string
	}{
		{"no list", `{}`, "no traceEvents"},
		{"no dur", `{"traceEvents":[{"name":"a","ph":"X","ts":1,"pid":1,"tid":2}]}`, "no dur"},
		{"tid 0", `{"traceEvents":[{"name":"a","ph":"X","ts":1,"dur":1,"pid":1,"tid":0}]}`, "no tid"},
		{"tdur over dur", `{"traceEvents":[{"name":"a","ph":"X","ts":1,"dur":1,"tdur":2,"pid":1,"tid":2}]}`, "not within dur"},
		{"overlap", `{"traceEvents":[{"name":"a","ph":"X","ts":0,"dur":10,"pid":1,"tid":2},{"name":"b","ph":"X","ts":5,"dur":10,"pid":1,"tid":2}]}`, "without nesting"},
		{"half flow", `{"traceEvents":[{"name":"a","ph":"X","ts":0,"dur":10,"pid":1,"tid":2,"bind_id":1,"flow_out":true}]}`, "want one each"},
		{"counter", `{"traceEvents":[{"name":"heap","ph":"C","ts":0,"pid":1,"args":{"bytes":"x"}}]}`, "not a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate([]byte(tc.json))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestWriteSVG(t *testing.T) {
	tr, err := Read(bytes.NewReader(recordTrace(t)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := tr.WriteSVG(&out, tr.Attempts(Selection{}), "test", "stamp"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "default/p1", "NodeResourcesFit", "Along CPU time", "Along wall time", "stamp"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the SVG lacks %q", want)
		}
	}
	if err := tr.WriteSVG(&out, nil, "test", "stamp"); err == nil {
		t.Errorf("WriteSVG with no attempt = nil error, want one")
	}
}

// TestWallAxis: attempts of several pods each start at zero on the
// wall-time axis, as long as the longest; several attempts of one pod
// share the axis from the first, so the wait between them shows.
func TestWallAxis(t *testing.T) {
	type axis struct {
		Origins []int64
		Scale   int64
		Unit    string
	}
	tests := []struct {
		name     string
		attempts []*Attempt
		want     axis
	}{
		{
			name:     "two pods: each from its own start",
			attempts: []*Attempt{{Pod: "ns/a", Start: 100, End: 150}, {Pod: "ns/b", Start: 400, End: 420}},
			want:     axis{[]int64{100, 400}, 50, "ms since the attempt began"},
		},
		{
			name:     "one pod, two attempts: both from the first, the gap between them shown",
			attempts: []*Attempt{{Pod: "ns/a", Start: 100, End: 150}, {Pod: "ns/a", Start: 1100, End: 1130}},
			want:     axis{[]int64{100, 100}, 1030, "ms since the pod's first attempt began"},
		},
		{
			name:     "one attempt",
			attempts: []*Attempt{{Pod: "ns/a", Start: 100, End: 150}},
			want:     axis{[]int64{100}, 50, "ms since the attempt began"},
		},
		{
			name:     "attempts with no pod logged are not taken for one pod's",
			attempts: []*Attempt{{Start: 100, End: 150}, {Start: 1100, End: 1130}},
			want:     axis{[]int64{100, 1100}, 50, "ms since the attempt began"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			origin, scale, unit := wallAxis(tt.attempts)
			got := axis{Scale: scale, Unit: unit}
			for _, a := range tt.attempts {
				got.Origins = append(got.Origins, origin(a))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want, +got):\n%s", diff)
			}
		})
	}
}

// TestMergeRects joins bars across gaps only while the gaps a bar swallows
// stay within half a pixel: two goroutines that took turns keep bars of
// about their own length, not of both.
func TestMergeRects(t *testing.T) {
	// The scale is svgPlotWidth*2*10 ns: half a pixel is 10 ns.
	scale := int64(svgPlotWidth * 2 * 10)
	var rects []Rect
	for i := int64(0); i < 4; i++ {
		// Goroutines 1 and 2 take turns, 6 ns each.
		rects = append(rects, Rect{Goroutine: 1, X: 12 * i, W: 6, Type: "Filter", CPU: 6}, Rect{Goroutine: 2, X: 12*i + 6, W: 6, Type: "Filter", CPU: 6})
	}
	got := mergeRects(rects, scale)
	var cpu, width int64
	for _, r := range got {
		if r.Goroutine == 1 {
			cpu += r.CPU
			width += r.W
		}
	}
	if cpu != 24 {
		t.Errorf("goroutine 1's bars stand for %d ns of CPU, want 24", cpu)
	}
	// Each of its bars may swallow 10 ns of gaps: 24 ns of CPU over
	// 42 ns of axis takes at least two bars, and at most 24+2*10 ns.
	if width > 24+2*10 {
		t.Errorf("goroutine 1's bars are %d ns long for 24 ns of CPU", width)
	}
	if len(got) <= 2 {
		t.Errorf("%d bars: the two goroutines' turns were merged into one bar each", len(got))
	}
}

// TestCoalesce joins a row's bars that span less than a pixel together,
// in the colour of the type with the most CPU, and keeps their CPU; bars
// of other rows, and bars that would make a group wider than a pixel, stay
// apart.
func TestCoalesce(t *testing.T) {
	// A pixel is 100 ns at this scale.
	scale := int64(svgPlotWidth * 100)
	got := coalesce([]Rect{
		{Goroutine: 1, X: 0, W: 20, Type: "NodeName", CPU: 20},
		{Goroutine: 1, X: 20, W: 50, Type: "NodeResourcesFit", CPU: 50},
		{Goroutine: 2, X: 70, W: 10, Type: "Score", CPU: 10},
		{Goroutine: 1, X: 80, W: 10, Type: "TaintToleration", CPU: 10},
		{Goroutine: 1, X: 90, W: 100, Type: "NodeAffinity", CPU: 100},
	}, scale)
	want := []Rect{
		{Goroutine: 1, X: 0, W: 90, Type: "NodeResourcesFit", CPU: 80},
		{Goroutine: 2, X: 70, W: 10, Type: "Score", CPU: 10},
		{Goroutine: 1, X: 90, W: 100, Type: "NodeAffinity", CPU: 100},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("coalesce (-want, +got):\n%s", diff)
	}
}
