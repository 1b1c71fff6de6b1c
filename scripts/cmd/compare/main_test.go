package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"minisched/scripts/e2e"
)

// TestCompare checks that the comparison reports each kind of difference,
// preemption victims and nominations included, and nothing when the two
// runs agree.
func TestCompare(t *testing.T) {
	log := filepath.Join(t.TempDir(), "scheduler.log")
	if err := os.WriteFile(log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	base := func() e2e.Result {
		return e2e.Result{
			Passed:      true,
			Log:         log,
			Placements:  map[string]string{"high": "b", "a-low": "a"},
			Preempted:   []string{"b-low"},
			Nominations: map[string][]string{"high": {"b"}},
		}
	}
	tests := []struct {
		name   string
		change func(*e2e.Result)
		want   []string
	}{
		{"same", func(*e2e.Result) {}, nil},
		{"other node", func(r *e2e.Result) { r.Placements["high"] = "a" }, []string{"pod high: chapter chose b, kube-scheduler a"}},
		{"other victims", func(r *e2e.Result) { r.Preempted = []string{"a-low"} }, []string{"chapter preempted [b-low], kube-scheduler [a-low]"}},
		{"no nomination", func(r *e2e.Result) { r.Nominations = nil }, []string{"pod high: chapter nominated it to [b], kube-scheduler to []"}},
		{"other message", func(r *e2e.Result) { r.Unschedulable = map[string]string{"high": "no"} }, []string{`pod high: chapter says "", kube-scheduler "no"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := base()
			tt.change(&up)
			if diff := cmp.Diff(tt.want, compare(base(), up)); diff != "" {
				t.Errorf("compare (-want +got):\n%s", diff)
			}
		})
	}
}
