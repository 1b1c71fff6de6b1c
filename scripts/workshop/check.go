package workshop

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"minisched/scripts/e2e"
)

// integrationTimeout bounds one envtest package run.
const integrationTimeout = 10 * time.Minute

// Row is one line of the progress table.
type Row struct {
	Part   int
	Title  string
	Check  string // "unit ./scheduler -run ...", "scenario node-label-change"
	Result string // PASS, FAIL, NOT RUN
	Detail string
}

// Checker runs a part's checks against a learner's copy.
type Checker struct {
	// Workshop is the folder holding the copies (workshop/); Tools the
	// tools directory, for the scenarios' cluster; Root the repository.
	Root, Workshop, Tools string
	Log                   io.Writer
}

// Check runs, for each selected part (every part when parts is empty), its
// unit tests, then its integration tests, then its scenarios. A part whose
// unit tests fail does not go on: its later checks are listed as NOT RUN,
// with the reason.
func (c *Checker) Check(ctx context.Context, spec *Spec, parts []int) ([]Row, error) {
	if len(parts) == 0 {
		for k := range spec.Parts {
			parts = append(parts, k+1)
		}
	}
	dir := filepath.Join(c.Workshop, spec.Chapter)
	stubs, err := remainingStubs(dir)
	if err != nil {
		return nil, err
	}
	var rows []Row
	scenarioParts := map[string][]int{}
	for _, k := range parts {
		p := spec.Parts[k-1]
		unitOK := true
		// The whole-scheduler checks need every part: say which is left.
		whole := ""
		if len(stubs) > 0 {
			whole = fmt.Sprintf("part %d is still a stub (TODO(workshop part %d) in your copy)", stubs[0], stubs[0])
		}
		for _, r := range p.Unit {
			fmt.Fprintf(c.Log, "part %d: go test %s\n", k, r)
			res := GoTest(ctx, dir, r, unitTimeout)
			unitOK = unitOK && res.Passed()
			rows = append(rows, testRow(k, p.Title, "unit", res))
		}
		for _, r := range p.Integration {
			if !unitOK || whole != "" {
				rows = append(rows, Row{Part: k, Title: p.Title, Check: "integration " + r.String(), Result: "NOT RUN", Detail: notRun(unitOK, whole)})
				continue
			}
			fmt.Fprintf(c.Log, "part %d: go test %s (envtest)\n", k, r)
			rows = append(rows, testRow(k, p.Title, "integration", GoTest(ctx, dir, r, integrationTimeout)))
		}
		for _, s := range p.Scenarios {
			if !unitOK || whole != "" {
				rows = append(rows, Row{Part: k, Title: p.Title, Check: "scenario " + s, Result: "NOT RUN", Detail: notRun(unitOK, whole)})
				continue
			}
			scenarioParts[s] = append(scenarioParts[s], k)
		}
	}
	if len(scenarioParts) > 0 {
		srows, err := c.scenarios(ctx, spec, scenarioParts)
		if err != nil {
			return rows, err
		}
		rows = append(rows, srows...)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Part < rows[j].Part })
	return rows, nil
}

func notRun(unitOK bool, whole string) string {
	if !unitOK {
		return "the unit tests fail"
	}
	return whole
}

// remainingStubs lists, in order, the parts whose TODO is still in the
// copy's Go files.
func remainingStubs(dir string) ([]int, error) {
	seen := map[int]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range todoRe.FindAllSubmatch(data, -1) {
			k, _ := strconv.Atoi(string(m[1]))
			seen[k] = true
		}
		return nil
	})
	var parts []int
	for k := range seen {
		parts = append(parts, k)
	}
	sort.Ints(parts)
	return parts, err
}

var todoRe = regexp.MustCompile(`TODO\(workshop part ([0-9]),`)

func testRow(part int, title, kind string, res Result) Row {
	r := Row{Part: part, Title: title, Check: kind + " " + res.Run.String(), Result: "PASS", Detail: res.Summary()}
	if !res.Passed() {
		r.Result = "FAIL"
	}
	return r
}

// scenarios plays the named KWOK scenarios against the copy, on one local
// cluster, with the same harness as make e2e.
func (c *Checker) scenarios(ctx context.Context, spec *Spec, byName map[string][]int) ([]Row, error) {
	var names []string
	for s := range byName {
		names = append(names, regexp.QuoteMeta(s))
	}
	fmt.Fprintf(c.Log, "scenarios: building the copy and starting a local cluster\n")
	h, err := e2e.Setup(ctx, e2e.Flags{
		Root:        c.Workshop,
		Tools:       c.Tools,
		Chapters:    fmt.Sprint(spec.Number),
		ScenarioDir: filepath.Join(c.Root, "scripts", "e2e", "scenarios"),
		Run:         "^(" + strings.Join(names, "|") + ")$",
		Out:         filepath.Join(c.Root, ".cache", "workshop-e2e"),
	}, func(e2e.Chapter) bool { return true })
	if err != nil {
		return nil, err
	}
	defer h.Close()
	var rows []Row
	found := map[string]bool{}
	for _, sc := range h.Scenarios {
		found[sc.Name] = true
		sched, err := h.ChapterScheduler(e2e.Chapter{Number: spec.Number, Dir: spec.Chapter}, "-v=3")
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(c.Log, "scenario %s\n", sc.Name)
		res := h.Runner.Run(ctx, sc, sched)
		for _, k := range byName[sc.Name] {
			row := Row{Part: k, Title: spec.Parts[k-1].Title, Check: "scenario " + sc.Name, Result: "PASS"}
			if !res.Passed {
				row.Result, row.Detail = "FAIL", strings.Join(res.Problems, "; ")+" (log: "+res.Log+")"
			}
			rows = append(rows, row)
		}
	}
	for s, ks := range byName {
		if !found[s] {
			for _, k := range ks {
				rows = append(rows, Row{Part: k, Title: spec.Parts[k-1].Title, Check: "scenario " + s, Result: "FAIL", Detail: "no such scenario"})
			}
		}
	}
	return rows, nil
}

// PrintTable writes the progress table, parts in order.
func PrintTable(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PART\tTITLE\tCHECK\tRESULT\tDETAIL")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", r.Part, r.Title, r.Check, r.Result, oneLine(r.Detail, 200))
	}
	tw.Flush()
}
