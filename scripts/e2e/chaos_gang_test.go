package e2e

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestJudgeGangs: a cycle's Bindings, with the members bound before it,
// must reach minCount; a gang that ends part bound must have lost a member
// or had a Binding refused.
func TestJudgeGangs(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 8, 0, 0, 0, time.Local)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	groupOf := map[string]string{"a": "g", "b": "g", "c": "g"}
	gangs := map[string]int{"g": 3}
	bind := func(pod string, cycle, at int) logBind {
		return logBind{Pod: pod, Node: "n", Cycle: ms(cycle), At: ms(at)}
	}
	accepted := func(pod string, at int) binding { return binding{Pod: pod, Node: "n", Code: 201, At: ms(at)} }
	refused := func(pod string, at int) binding { return binding{Pod: pod, Node: "n", Code: 503, At: ms(at)} }
	for _, tc := range []struct {
		name     string
		binds    []logBind
		bindings []binding
		deleted  map[string]time.Time
		judged   int
		want     []string
	}{
		{
			name:     "one cycle binds the gang",
			binds:    []logBind{bind("a", 0, 5), bind("b", 0, 6), bind("c", 0, 7)},
			bindings: []binding{accepted("a", 6), accepted("b", 7), accepted("c", 8)},
			judged:   1,
		},
		{
			name:     "a cycle binds two of three: a member rejected at Permit, the rest allowed",
			binds:    []logBind{bind("b", 0, 6), bind("c", 0, 7), bind("a", 900, 905)},
			bindings: []binding{accepted("b", 7), accepted("c", 8), accepted("a", 906)},
			judged:   2,
			want:     []string{"gang g: the cycle of 08:00:00.000000 set out to bind [b c], with [] bound before it: 2 of minCount 3"},
		},
		{
			name:     "a Binding refused while the apiserver was down, the member bound again by a cycle of its own",
			binds:    []logBind{bind("a", 0, 5), bind("b", 0, 6), bind("c", 0, 7), bind("c", 2000, 2005)},
			bindings: []binding{accepted("a", 6), accepted("b", 7), refused("c", 8), accepted("c", 2006)},
			judged:   2,
		},
		{
			name:     "the member tried again after another was deleted: the gang is short",
			binds:    []logBind{bind("a", 0, 5), bind("b", 0, 6), bind("c", 0, 7), bind("c", 2000, 2005)},
			bindings: []binding{accepted("a", 6), accepted("b", 7), refused("c", 8), accepted("c", 2006)},
			deleted:  map[string]time.Time{"b": ms(1000)},
			judged:   2,
			want:     []string{"gang g: the cycle of 08:00:02.000000 set out to bind [c], with [a] bound before it: 2 of minCount 3"},
		},
		{
			name:     "part bound at the end with no member lost",
			binds:    []logBind{bind("a", 0, 5), bind("b", 0, 6), bind("c", 0, 7)},
			bindings: []binding{accepted("a", 6), accepted("b", 7)},
			judged:   1,
			want:     []string{"gang g: 2 of minCount 3 members bound at the end ([a b]), none deleted and no Binding refused"},
		},
		{
			name:     "part bound at the end after the churn deleted a member",
			binds:    []logBind{bind("a", 0, 5), bind("b", 0, 6), bind("c", 0, 7)},
			bindings: []binding{accepted("a", 6), accepted("b", 7), accepted("c", 8)},
			deleted:  map[string]time.Time{"c": ms(3000)},
			judged:   1,
		},
		{
			name:   "a Binding with no cycle before it in the log",
			binds:  []logBind{{Pod: "a", Node: "n", At: ms(5)}, bind("b", 0, 6), bind("c", 0, 7)},
			judged: 1,
			want: []string{
				"gang g: the log has a Binding for a with no cycle before it",
				"gang g: the cycle of 08:00:00.000000 set out to bind [b c], with [] bound before it: 2 of minCount 3",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			judged, got := judgeGangs(gangs, groupOf, tc.binds, tc.bindings, tc.deleted)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("violations (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.judged, judged); diff != "" {
				t.Errorf("cycles judged (-want, +got):\n%s", diff)
			}
		})
	}
}
