package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestLoadRejectsMalformedScenarios: each malformed file gives an error that
// names the file and the problem.
func TestLoadRejectsMalformedScenarios(t *testing.T) {
	valid := `description: d
firstChapter: 1
steps:
- createNodes: [{name: node}]
- createPods: [{name: p}]
expect:
  bound: {p: node}
`
	tests := []struct {
		name    string
		file    string
		content string
		wantErr string
	}{
		{"not yaml", "s.yaml", "steps: [", "error converting YAML to JSON"},
		{"unknown field", "s.yaml", valid + "bogus: 1\n", `unknown field "bogus"`},
		{"no description", "s.yaml", strings.Replace(valid, "description: d\n", "", 1), "description is missing"},
		{"chapter out of range", "s.yaml", strings.Replace(valid, "firstChapter: 1", fmt.Sprintf("firstChapter: %d", LastChapter+1), 1), fmt.Sprintf("firstChapter is %d, want 1 to %d", LastChapter+1, LastChapter)},
		{"searched before its chapter", "s.yaml", valid + "  searched: {fromChapter: 0, feasible: {p: 1}}\n", fmt.Sprintf("expect.searched.fromChapter is 0, want 1 to %d", LastChapter)},
		{"searched pod not bound", "s.yaml", strings.Replace(valid, "- createPods: [{name: p}]", "- createPods: [{name: p}, {name: q}]", 1) + "  searched: {fromChapter: 1, feasible: {q: 1}}\n", `expect.searched.feasible names pod "q", which expect.bound does not`},
		{"searched zero", "s.yaml", valid + "  searched: {fromChapter: 1, feasible: {p: 0}}\n", "expect.searched.feasible.p is 0, want at least 1"},
		{"bad file name", "Bad_Name.yaml", valid, `the file name "Bad_Name" must be a DNS label`},
		{"two actions in a step", "s.yaml", strings.Replace(valid, "- createPods: [{name: p}]", "- createPods: [{name: p}]\n  deletePods: [p]", 1), "step 2 has 2 actions, want exactly one"},
		{"pod used before created", "s.yaml", strings.Replace(valid, "steps:\n", "steps:\n- deletePods: [p]\n", 1), `step 1 names pod "p", which no earlier step creates`},
		{"unknown node in expect", "s.yaml", strings.Replace(valid, "bound: {p: node}", "bound: {p: other}", 1), `expect.bound.p names node "other"`},
		{"no expectation", "s.yaml", strings.Replace(valid, "  bound: {p: node}\n", "", 1), "expect has no bound, unbound or preempted pods"},
		{"wait without state", "s.yaml", strings.Replace(valid, "expect:", "- waitFor: {pods: [p]}\nexpect:", 1), "step 3: waitFor needs pods and one of bound, condition, nominated or deleted"},
		{"deleted with another state", "s.yaml", strings.Replace(valid, "expect:", "- waitFor: {pods: [p], deleted: true, bound: true}\nexpect:", 1), "step 3: waitFor deleted cannot be combined"},
		{"nominated to an unknown node", "s.yaml", strings.Replace(valid, "expect:", "- waitFor: {pods: [p], nominated: other}\nexpect:", 1), `step 3 names node "other"`},
		{"bad preemption policy", "s.yaml", strings.Replace(valid, "steps:\n", "steps:\n- createPriorityClasses: [{name: x, value: 1, preemptionPolicy: Sometimes}]\n", 1), `preemptionPolicy "Sometimes"`},
		{"PDB without labels", "s.yaml", strings.Replace(valid, "steps:\n", "steps:\n- createPodDisruptionBudgets: [{name: x, disruptionsAllowed: 0}]\n", 1), "a PodDisruptionBudget needs a name, matchLabels"},
		{"preempted before chapter 09", "s.yaml", strings.Replace(valid, "  bound: {p: node}\n", "  bound: {p: node}\n  preempted: [p]\n", 1), "expect.preempted and expect.nominated need firstChapter 9"},
		{"unknown pod preempted", "s.yaml", strings.Replace(strings.Replace(valid, "firstChapter: 1", "firstChapter: 9", 1), "  bound: {p: node}\n", "  bound: {p: node}\n  preempted: [q]\n", 1), `expect.preempted names pod "q"`},
		{"yaml boolean as node name", "s.yaml", strings.Replace(valid, "bound: {p: node}", "bound: {p: n}", 1), "got the boolean false: quote the name"},
		{"node cpu not a quantity", "s.yaml", strings.Replace(valid, "[{name: node}]", "[{name: node, cpu: four}]", 1), `step 1: node node: cpu "four" is not a quantity`},
		{"pod memory not a quantity", "s.yaml", strings.Replace(valid, "[{name: p}]", "[{name: p, memory: 1GB}]", 1), `step 2: pod p: memory "1GB" is not a quantity`},
		{"pod created twice", "s.yaml", strings.Replace(valid, "[{name: p}]", "[{name: p}, {name: p}]", 1), "step 2: pod p is created twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.file)
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			if err == nil {
				t.Fatalf("want an error containing %q", tt.wantErr)
			}
			if !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error = %q, want it to start with the file name and contain %q", err, tt.wantErr)
			}
		})
	}
}

// TestLoadDirShippedScenarios loads the scenarios in this repository, sorted
// by first chapter, then name.
func TestLoadDirShippedScenarios(t *testing.T) {
	scenarios, err := LoadDir("scenarios")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(scenarios); i++ {
		a, b := scenarios[i-1], scenarios[i]
		if a.FirstChapter > b.FirstChapter || (a.FirstChapter == b.FirstChapter && a.Name > b.Name) {
			t.Errorf("%s sorts before %s", a.Name, b.Name)
		}
	}
	readme, err := os.ReadFile(filepath.Join("scenarios", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scenarios {
		if !strings.Contains(string(readme), "("+s.Name+".yaml)") {
			t.Errorf("scenarios/README.md does not list %s", s.Name)
		}
	}
}

func TestNodesUnmarshal(t *testing.T) {
	tests := []struct {
		in   string
		want Nodes
	}{
		{`a`, Nodes{"a"}},
		{`"*"`, Nodes{"*"}},
		{`[a, b]`, Nodes{"a", "b"}},
	}
	for _, tt := range tests {
		var got Nodes
		if err := yaml.Unmarshal([]byte(tt.in), &got); err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want, +got):\n%s", tt.in, diff)
		}
	}
	if !(Nodes{"*"}).Allows("x") || (Nodes{"a"}).Allows("b") {
		t.Error("Allows is wrong")
	}
}

func TestExpand(t *testing.T) {
	if diff := cmp.Diff([]string{"web-0", "web-1", "web-2"}, expand("web", 3)); diff != "" {
		t.Errorf("(-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"web"}, expand("web", 0)); diff != "" {
		t.Errorf("(-want, +got):\n%s", diff)
	}
}

// TestReadFeasible reads the feasibleNodes of the decisions that bound a
// namespace's pods, as chapters log them, and nothing else.
func TestReadFeasible(t *testing.T) {
	log := `I1124 02:10:00.000000 1 schedule_one.go:205] "Scheduling decision" pod="ns/probe" attempt=1 result="scheduled" node="n-3" evaluatedNodes=100 feasibleNodes=100
I1124 02:10:00.100000 1 schedule_one.go:631] "Scheduling decision" pod="ns/late" attempt=1 result="unschedulable" reason="Unschedulable" message="0/150 nodes are available"
I1124 02:10:00.200000 1 schedule_one.go:205] "Scheduling decision" pod="other/probe" attempt=1 result="scheduled" node="n-4" evaluatedNodes=150 feasibleNodes=150
I1124 02:10:01.000000 1 schedule_one.go:205] "Scheduling decision" pod="ns/late" attempt=2 result="scheduled" node="n-5" evaluatedNodes=144 feasibleNodes=144
`
	path := filepath.Join(t.TempDir(), "scheduler.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readFeasible(path, "ns")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"probe": 100, "late": 144}, got); diff != "" {
		t.Errorf("feasible nodes (-want, +got):\n%s", diff)
	}
}
