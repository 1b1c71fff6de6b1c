package docsgen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"minisched/scripts/workshop"
)

// workshopBlock renders a chapter's workshop from
// scripts/workshop/chapters/<chapter>.yaml and the chapter's markers: the
// parts with the functions each stubs, its difficulty, its measured time
// and its check; then the exercises' checks. The page's prose explains
// each; the commands here are generated, so they cannot drift from what
// make workshop-prove proves.
func workshopBlock(root, prefix, chapter string) (string, error) {
	if chapter == "all" {
		return workshopPlan(root, prefix)
	}
	spec, err := workshop.LoadSpec(filepath.Join(root, "scripts", "workshop", "chapters", chapter+".yaml"))
	if err != nil {
		return "", err
	}
	funcs, err := workshop.MarkedFuncs(filepath.Join(root, chapter), spec)
	if err != nil {
		return "", err
	}
	nn := fmt.Sprintf("%02d", spec.Number)
	var b strings.Builder
	fmt.Fprintf(&b, "Start with `make workshop CHAPTER=%s`: it copies the chapter to `workshop/%s/` with these functions as stubs. Write them part by part and check each with the command in its row ([the workshop guide](%sworkshop.md) has the rest).\n\n", nn, chapter, prefix)
	b.WriteString("| part | what you write | functions | lines | difficulty | time (estimate) | its unit tests: your spec | check |\n|---|---|---|---:|---|---|---|---|\n")
	for i, p := range spec.Parts {
		k := i + 1
		if len(funcs[k]) == 0 {
			return "", fmt.Errorf("part %d: no function is marked //workshop:part %s/%d", k, nn, k)
		}
		var names []string
		lines := 0
		for _, f := range funcs[k] {
			names = append(names, "`"+f.Func+"`")
			lines += f.Lines
		}
		minutes := "?"
		if p.Minutes > 0 {
			minutes = fmt.Sprintf("%d min", p.Minutes)
		}
		doc := prefix + strings.TrimPrefix(p.Doc, "docs/")
		var tests []string
		for _, r := range p.Unit {
			tests = append(tests, cell(fmt.Sprintf("`%s` in `%s`", strings.Trim(r.Run, "^$"), strings.TrimPrefix(r.Pkg, "./"))))
		}
		fmt.Fprintf(&b, "| %d | [%s](%s) | %s | %d | %s | %s | %s | `make workshop-check CHAPTER=%s PART=%d` |\n",
			k, p.Title, doc, strings.Join(names, ", "), lines, p.Difficulty, minutes, strings.Join(tests, "<br>"), nn, k)
	}
	b.WriteString("\nA part's unit tests fail while it is a stub and pass once it is written, even with the later parts still stubs; `make workshop-prove` checks both in `make test`. The integration tests and scenarios run the whole scheduler, so they come with the last part.\n")
	if len(spec.Exercises) > 0 {
		hasBreak, hasExtend := false, false
		for _, e := range spec.Exercises {
			hasBreak = hasBreak || e.Kind == "break"
			hasExtend = hasExtend || e.Kind == "extend"
		}
		// Say only what this chapter's exercises are: a reader of a page
		// with break exercises alone looks in vain for a given test.
		b.WriteString("\nThe exercises below change the finished chapter, in its own folder.")
		if hasBreak {
			b.WriteString(" A break exercise's `go test` check passes on the chapter and fails with the break.")
		}
		if hasExtend {
			b.WriteString(" An extend exercise's given test fails on the chapter and passes with the solution in scripts/workshop/testdata.")
		}
		b.WriteString(" `make workshop-prove` checks this in `make test`; the `make e2e` lines show the effect on a cluster and are not part of that proof.")
		if hasBreak {
			b.WriteString(" `git checkout -- " + chapter + "` undoes a break.")
		}
		b.WriteString("\n\n| exercise | kind | check |\n|---|---|---|\n")
		for i, e := range spec.Exercises {
			var checks []string
			for _, r := range e.Unit {
				checks = append(checks, cell(fmt.Sprintf("`go test -race ./%s/%s -run '%s'`", chapter, strings.TrimPrefix(r.Pkg, "./"), r.Run)))
			}
			for _, s := range e.Scenarios {
				checks = append(checks, fmt.Sprintf("`make e2e CHAPTER=%s RUN=%s`", nn, s))
			}
			kind := "break it"
			if e.Kind == "extend" {
				kind = "extend it (the test is given)"
			}
			fmt.Fprintf(&b, "| %d. %s | %s | %s |\n", i+1, e.Title, kind, strings.Join(checks, "<br>"))
		}
	}
	return b.String(), nil
}

// cell escapes a table cell's pipes (a -run pattern's alternatives), which
// GitHub would otherwise take for column borders, even in code.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// workshopPlan is the table of every chapter's workshop for the
// facilitator's guide: parts, their measured minutes, and exercises.
func workshopPlan(root, prefix string) (string, error) {
	specs, err := workshop.LoadSpecs(filepath.Join(root, "scripts", "workshop"))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| chapter | parts (difficulty, estimated minutes) | parts in all | exercises |\n|---|---|---:|---:|\n")
	for _, s := range specs {
		var parts []string
		total := 0
		for i, p := range s.Parts {
			m := "?"
			if p.Minutes > 0 {
				m = fmt.Sprint(p.Minutes)
				total += p.Minutes
			}
			parts = append(parts, fmt.Sprintf("%d. %s (%s, %s)", i+1, strings.SplitN(p.Title, ":", 2)[0], p.Difficulty, m))
		}
		fmt.Fprintf(&b, "| [%s](%sreference/%s.md#exercises) | %s | %d min | %d |\n", s.Chapter, prefix, s.Chapter, strings.Join(parts, "<br>"), total, len(s.Exercises))
	}
	return b.String(), nil
}

// CheckWorkshopDocs reports a workshop part whose doc is not a section of
// a post: a stub's TODO sends the learner there to learn the concept, and
// the reference page's finished code would give the answer away.
func CheckWorkshopDocs(root string, posts []string) []string {
	specs, err := workshop.LoadSpecs(filepath.Join(root, "scripts", "workshop"))
	if err != nil {
		return []string{err.Error()}
	}
	isPost := map[string]bool{}
	for _, p := range posts {
		isPost["docs/"+p] = true
	}
	var problems []string
	for _, s := range specs {
		for i, p := range s.Parts {
			where := fmt.Sprintf("scripts/workshop/chapters/%s.yaml: part %d: doc %s", s.Chapter, i+1, p.Doc)
			file, anchor, _ := strings.Cut(p.Doc, "#")
			if !isPost[file] || anchor == "" {
				problems = append(problems, where+" is not a section of a post (docs/NN-name.md#section)")
				continue
			}
			data, err := os.ReadFile(filepath.Join(root, file))
			if err != nil || !hasAnchor(data, anchor) {
				problems = append(problems, where+" names no heading")
			}
		}
	}
	return problems
}
