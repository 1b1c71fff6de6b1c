package workshop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// source has functions marked for two parts of chapter 06, one marked for
// chapter 07, named results, a generic receiver, and imports that only the
// stubbed bodies use.
const source = `package queue

import (
	"errors"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Pop takes the head of activeQ.
//
//workshop:part 06/1
func (p *PriorityQueue) Pop() (*v1.Pod, error) {
	if p.empty() {
		return nil, errors.New("empty")
	}
	return p.head(), nil
}

// Len is not a part.
func (p *PriorityQueue) Len() int { return len(p.items) }

//workshop:part 06/2
func matches(a, b string) (bool, int, Info) {
	return strings.EqualFold(a, b), 1, Info{}
}

// Another chapter's part.
//
//workshop:part 07/1
func later() (n int) {
	n = 1
	return n
}

// Named results get a bare return.
//
//workshop:part 06/2
func named() (n int, err error) {
	n = 1
	return n, nil
}

//workshop:part 06/1
func (h *Heap[T]) Peek() (T, bool) {
	var zero T
	return zero, false
}
`

func TestStubSource(t *testing.T) {
	// Upstream has a Pop, and none of the others: the TODO names the
	// function only where it exists. No module cache needed.
	upstreamLookup = func(file, name string) bool { return name == "Pop" }
	t.Cleanup(func() { upstreamLookup = upstreamHas })
	spec := &Spec{Chapter: "06-scheduling-queue", Number: 6, Parts: []Part{
		{Title: "activeQ", Doc: "docs/06-scheduling-queue.md#activeq", Upstream: []string{"pkg/scheduler/backend/queue/scheduling_queue.go"}},
		{Title: "events", Doc: "docs/06-scheduling-queue.md#events", Upstream: []string{"pkg/scheduler/framework/events.go"}},
	}}
	tests := []struct {
		name      string
		stub      map[int]bool
		wantFuncs []Stubbed
		want      string
	}{
		{
			name: "part 1 only: a generic receiver, and the other chapter's marker is ignored",
			stub: map[int]bool{1: true},
			wantFuncs: []Stubbed{
				{Part: 1, File: "queue.go", Func: "Heap.Peek"},
				{Part: 1, File: "queue.go", Func: "PriorityQueue.Pop"},
			},
			want: `package queue

import (
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Pop takes the head of activeQ.
//
//workshop:part 06/1
func (p *PriorityQueue) Pop() (*v1.Pod, error) {
	// TODO(workshop part 1, activeQ): write PriorityQueue.Pop.
	// Read docs/06-scheduling-queue.md#activeq, and upstream's Pop in
	// https://github.com/kubernetes/kubernetes/blob/v1.37.1/pkg/scheduler/backend/queue/scheduling_queue.go
	// The unit tests of the part are the spec. The post's section shows the
	// code too, after its idea: read the code when you are done, or stuck.
	return nil, nil
}

// Len is not a part.
func (p *PriorityQueue) Len() int { return len(p.items) }

//workshop:part 06/2
func matches(a, b string) (bool, int, Info) {
	return strings.EqualFold(a, b), 1, Info{}
}

// Another chapter's part.
//
//workshop:part 07/1
func later() (n int) {
	n = 1
	return n
}

// Named results get a bare return.
//
//workshop:part 06/2
func named() (n int, err error) {
	n = 1
	return n, nil
}

//workshop:part 06/1
func (h *Heap[T]) Peek() (T, bool) {
	// TODO(workshop part 1, activeQ): write Heap.Peek.
	// Read docs/06-scheduling-queue.md#activeq, and the code that does this upstream, in
	// https://github.com/kubernetes/kubernetes/blob/v1.37.1/pkg/scheduler/backend/queue/scheduling_queue.go
	// The unit tests of the part are the spec. The post's section shows the
	// code too, after its idea: read the code when you are done, or stuck.
	return *new(T), false
}
`,
		},
		{
			name: "both parts: zero values of every kind, a bare return for named results, and the imports only stubs used go",
			stub: map[int]bool{1: true, 2: true},
			wantFuncs: []Stubbed{
				{Part: 1, File: "queue.go", Func: "Heap.Peek"},
				{Part: 1, File: "queue.go", Func: "PriorityQueue.Pop"},
				{Part: 2, File: "queue.go", Func: "matches"},
				{Part: 2, File: "queue.go", Func: "named"},
			},
			want: `package queue

import (
	v1 "k8s.io/api/core/v1"
)

// Pop takes the head of activeQ.
//
//workshop:part 06/1
func (p *PriorityQueue) Pop() (*v1.Pod, error) {
	// TODO(workshop part 1, activeQ): write PriorityQueue.Pop.
	// Read docs/06-scheduling-queue.md#activeq, and upstream's Pop in
	// https://github.com/kubernetes/kubernetes/blob/v1.37.1/pkg/scheduler/backend/queue/scheduling_queue.go
	// The unit tests of the part are the spec. The post's section shows the
	// code too, after its idea: read the code when you are done, or stuck.
	return nil, nil
}

// Len is not a part.
func (p *PriorityQueue) Len() int { return len(p.items) }

//workshop:part 06/2
func matches(a, b string) (bool, int, Info) {
	// TODO(workshop part 2, events): write matches.
	// Read docs/06-scheduling-queue.md#events, and the code that does this upstream, in
	// https://github.com/kubernetes/kubernetes/blob/v1.37.1/pkg/scheduler/framework/events.go
	// The unit tests of the part are the spec. The post's section shows the
	// code too, after its idea: read the code when you are done, or stuck.
	return false, 0, *new(Info)
}

// Another chapter's part.
//
//workshop:part 07/1
func later() (n int) {
	n = 1
	return n
}

// Named results get a bare return.
//
//workshop:part 06/2
func named() (n int, err error) {
	// TODO(workshop part 2, events): write named.
	// Read docs/06-scheduling-queue.md#events, and the code that does this upstream, in
	// https://github.com/kubernetes/kubernetes/blob/v1.37.1/pkg/scheduler/framework/events.go
	// The unit tests of the part are the spec. The post's section shows the
	// code too, after its idea: read the code when you are done, or stuck.
	return
}

//workshop:part 06/1
func (h *Heap[T]) Peek() (T, bool) {
	// TODO(workshop part 1, activeQ): write Heap.Peek.
	// Read docs/06-scheduling-queue.md#activeq, and the code that does this upstream, in
	// https://github.com/kubernetes/kubernetes/blob/v1.37.1/pkg/scheduler/backend/queue/scheduling_queue.go
	// The unit tests of the part are the spec. The post's section shows the
	// code too, after its idea: read the code when you are done, or stuck.
	return *new(T), false
}
`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module example.com/q\n\ngo 1.26.0\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(src, "queue.go"), []byte(source), 0o644); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "copy")
			got, err := MakeCopy(src, dst, spec, tc.stub)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.wantFuncs, got); d != "" {
				t.Errorf("stubbed functions (-want, +got):\n%s", d)
			}
			data, err := os.ReadFile(filepath.Join(dst, "queue.go"))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, string(data)); d != "" {
				t.Errorf("stubbed source (-want, +got):\n%s", d)
			}
		})
	}
}

func TestMakeCopyNeedsAMarkedFunction(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "a.go"), []byte("package a\n\nfunc A() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := &Spec{Chapter: "06-scheduling-queue", Number: 6, Parts: []Part{{Title: "a"}, {Title: "b"}}}
	_, err := MakeCopy(src, filepath.Join(t.TempDir(), "copy"), spec, map[int]bool{2: true})
	want := "no function is marked //workshop:part 06/2"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("MakeCopy error = %v, want one containing %q", err, want)
	}
}

// switchProgram is a program whose marked functions have a result, named
// results, and no result but a side effect.
const switchProgram = `package main

import (
	"fmt"
	"strings"
)

//workshop:part 06/1
func add(a, b int) int { return a + b }

//workshop:part 06/2
func named() (n int, err error) {
	n = 7
	return n, nil
}

var calls []string

//workshop:part 06/2
func record(s string) {
	calls = append(calls, s)
}

func main() {
	n, _ := named()
	record("x")
	fmt.Printf("%d %d [%s]", add(1, 2), n, strings.Join(calls, ","))
}
`

// TestMakeSwitchableCopy: in every state, the switchable copy run with
// StubEnv behaves as the copy MakeCopy stubs for that state. That is what
// lets the proof run one test binary for every state.
func TestMakeSwitchableCopy(t *testing.T) {
	upstreamLookup = func(file, name string) bool { return false }
	t.Cleanup(func() { upstreamLookup = upstreamHas })
	spec := &Spec{Chapter: "06-scheduling-queue", Number: 6, Parts: []Part{{Title: "one", Doc: "d#1"}, {Title: "two", Doc: "d#2"}}}
	src := t.TempDir()
	for name, text := range map[string]string{"go.mod": "module example.com/sw\n\ngo 1.26.0\n", "main.go": switchProgram} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := func(dir string) string {
		t.Helper()
		bin := filepath.Join(dir, "prog")
		cmd := exec.Command("go", "build", "-o", bin, ".")
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build in %s: %v\n%s", dir, err, out)
		}
		return bin
	}
	run := func(bin, stubs string) string {
		t.Helper()
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), StubEnv+"="+stubs)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		return string(out)
	}
	sw := filepath.Join(t.TempDir(), "switch")
	funcs, err := MakeSwitchableCopy(src, sw, spec)
	if err != nil {
		t.Fatal(err)
	}
	wantFuncs := []Stubbed{{Part: 1, File: "main.go", Func: "add"}, {Part: 2, File: "main.go", Func: "named"}, {Part: 2, File: "main.go", Func: "record"}}
	if d := cmp.Diff(wantFuncs, funcs); d != "" {
		t.Errorf("switchable functions (-want, +got):\n%s", d)
	}
	switchBin := build(sw)
	tests := []struct {
		stubs string
		stub  map[int]bool
		want  string
	}{
		{"", nil, "3 7 [x]"},
		{"2", map[int]bool{2: true}, "3 0 []"},
		{"1", map[int]bool{1: true}, "0 7 [x]"},
		{"1,2", map[int]bool{1: true, 2: true}, "0 0 []"},
	}
	for _, tt := range tests {
		t.Run("stubbed parts "+tt.stubs, func(t *testing.T) {
			got := run(switchBin, tt.stubs)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("switchable copy (-want, +got):\n%s", d)
			}
			if tt.stub == nil {
				return
			}
			stubbed := filepath.Join(t.TempDir(), "copy")
			if _, err := MakeCopy(src, stubbed, spec, tt.stub); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(run(build(stubbed), ""), got); d != "" {
				t.Errorf("the switchable copy differs from MakeCopy's (-MakeCopy, +switchable):\n%s", d)
			}
		})
	}
}

// A function marked for two parts of one chapter would be stubbed in the
// states of both, which a switchable guard on one part cannot follow.
func TestMakeCopyRejectsTwoPartsOfOneChapter(t *testing.T) {
	src := t.TempDir()
	text := "package a\n\n//workshop:part 06/1\n//workshop:part 06/2\nfunc A() {}\n\n//workshop:part 06/2\n//workshop:part 07/1\nfunc B() {}\n"
	if err := os.WriteFile(filepath.Join(src, "a.go"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := &Spec{Chapter: "06-scheduling-queue", Number: 6, Parts: []Part{{Title: "a"}, {Title: "b"}}}
	for _, switchable := range []bool{false, true} {
		var err error
		if switchable {
			_, err = MakeSwitchableCopy(src, filepath.Join(t.TempDir(), "copy"), spec)
		} else {
			_, err = MakeCopy(src, filepath.Join(t.TempDir(), "copy"), spec, map[int]bool{2: true})
		}
		want := "A is marked for 2 parts of chapter 06"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("switchable=%v: error = %v, want one containing %q", switchable, err, want)
		}
	}
}
