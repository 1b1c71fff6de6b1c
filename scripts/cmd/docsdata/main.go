// Command docsdata regenerates the outputs of real runs that the docs embed
// (docs/data/*.txt): each chapter's demo, and the scenario table of every
// chapter. Each file starts with a line saying when and on what machine it
// was made. `make verify` does not rerun these (their timings and random
// placements differ run to run); it checks that they exist and are shown.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"minisched/scripts/docsgen"
	"minisched/scripts/timeline"
)

func main() {
	root := flag.String("root", ".", "repository root")
	tools := flag.String("tools", ".cache/tools", "tools directory")
	only := flag.String("only", "", `regenerate one output only: "scenarios" (make e2e and make compare), "chaos", "try", "tests", "demo", "timelines", "watch" (make watch's screenshots), or "quotes" (the quoted log lines, from the logs of the last scenarios run)`)
	chapter := flag.String("chapter", "", `with --only tests or demo: that chapter's (a number, e.g. 09) only`)
	flag.Parse()
	var err error
	dir := filepath.Join(*root, "docs", "data")
	switch *only {
	case "":
		err = run(*root, *tools)
	case "scenarios":
		_, err = scenarios(*root, *tools, dir)
	case "chaos":
		err = chaos(*root, *tools, dir)
	case "try":
		err = try(*root, *tools, dir)
	case "tests":
		err = tests(*root, dir, *chapter)
	case "demo":
		err = demos(*root, *tools, dir, *chapter)
	case "timelines":
		err = timelinesOnly(*root, *tools)
	case "watch":
		err = watchShots(*root, *tools, dir)
	case "quotes":
		err = quoteLogs(dir, filepath.Join(*root, ".cache", "docsdata"))
	default:
		err = fmt.Errorf("--only %q: the outputs that can be made alone are scenarios, chaos, try, tests, demo, timelines, watch and quotes", *only)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "docsdata: "+err.Error())
		os.Exit(1)
	}
}

func run(root, tools string) error {
	chapters, err := docsgen.ChapterDirs(root)
	if err != nil {
		return err
	}
	dir := filepath.Join(root, "docs", "data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := demos(root, tools, dir, ""); err != nil {
		return err
	}
	e2eDir, err := scenarios(root, tools, dir)
	if err != nil {
		return err
	}
	if err := chaos(root, tools, dir); err != nil {
		return err
	}
	if err := try(root, tools, dir); err != nil {
		return err
	}
	if err := tests(root, dir, ""); err != nil {
		return err
	}
	if err := timelines(root, chapters, e2eDir); err != nil {
		return err
	}
	return watchShots(root, tools, dir)
}

// quoteLogs writes the decision lines (and, from chapter 06 on, the queue
// moves) of the scenarios the posts quote, from the scheduler logs of a
// scenarios run in e2eDir. `--only scenarios` writes them too, from its
// own run, so that the lines always come from the same run as e2e.txt.
func quoteLogs(dir, e2eDir string) error {
	// The decision lines (and, from chapter 06 on, the queue moves) of
	// scenarios the chapter pages quote.
	quotes := []struct{ chapter, scenario string }{
		{"02-filter", "unschedulable-message"},
		{"05-event-handler", "queue-waits-for-node"},
		{"06-scheduling-queue", "queue-waits-for-node"},
		{"06-scheduling-queue", "queue-label-noise"},
		{"07-backoff", "queue-label-noise"},
		{"08-queueinghint", "queue-label-noise"},
		{"11-gang-scheduling", "podgroup-all-or-nothing"},
	}
	for _, q := range quotes {
		logPath, err := schedulerLog(e2eDir, q.chapter, q.scenario)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(logPath)
		if err != nil {
			return err
		}
		var lines []string
		for _, l := range strings.Split(string(data), "\n") {
			if strings.Contains(l, `"Scheduling decision"`) || strings.Contains(l, `"Pod moved to an internal scheduling queue"`) {
				lines = append(lines, l)
			}
		}
		// make e2e prints a table; the scheduler's log is a file of the run.
		cmd := fmt.Sprintf(`make e2e CHAPTER=%s RUN=%s; grep -hE '"Scheduling decision"|"Pod moved' .cache/e2e/*/ch%s-%s.log`, q.chapter[:2], q.scenario, q.chapter[:2], q.scenario)
		if err := write(filepath.Join(dir, q.chapter+"-"+q.scenario+".txt"), cmd, strings.Join(lines, "\n")); err != nil {
			return err
		}
	}
	return nil
}

// scenarios runs every scenario against every chapter, then the comparison
// with kube-scheduler, writes their outputs, and returns the directory of
// the scenario run's logs (the timelines are drawn from them).
func scenarios(root, tools, dir string) (string, error) {
	fmt.Println("scenarios of every chapter")
	e2eDir := filepath.Join(root, ".cache", "docsdata")
	_ = os.RemoveAll(e2eDir)
	// -v=4: the handlers log node updates, which the timelines mark.
	out, err := command(root, "go", "run", "./scripts/cmd/e2e", "--tools", tools, "--out", e2eDir, "--log-level", "4")
	if err != nil {
		return "", fmt.Errorf("e2e: %w\n%s", err, out)
	}
	if err := write(filepath.Join(dir, "e2e.txt"), "make e2e", out); err != nil {
		return "", err
	}
	// The rows of one scenario across the chapters, for the chapter 08 page
	// to compare attempts; and chapter 01's rows, for its page.
	if err := write(filepath.Join(dir, "e2e-queue-label-noise.txt"), "make e2e RUN=queue-label-noise   # its rows of the full run", tableRows(out, 1, "queue-label-noise")); err != nil {
		return "", err
	}
	if err := write(filepath.Join(dir, "e2e-01.txt"), "make e2e CHAPTER=01   # its rows of the full run", tableRows(out, 0, "01-initial")); err != nil {
		return "", err
	}
	fmt.Println("comparison with kube-scheduler")
	out, err = command(root, "go", "run", "./scripts/cmd/compare", "--tools", tools, "--out", filepath.Join(e2eDir, "compare"))
	if err != nil {
		return "", fmt.Errorf("compare: %w\n%s", err, out)
	}
	if err := write(filepath.Join(dir, "compare.txt"), "make compare", out); err != nil {
		return "", err
	}
	return e2eDir, quoteLogs(dir, e2eDir)
}

// chaos writes the table of a full `make chaos` run.
func chaos(root, tools, dir string) error {
	fmt.Println("churn under chapters 05 on")
	out, err := command(root, "go", "run", "./scripts/cmd/chaos", "--tools", tools, "--out", filepath.Join(root, ".cache", "docsdata-chaos"))
	if err != nil {
		return fmt.Errorf("chaos: %w\n%s", err, out)
	}
	return write(filepath.Join(dir, "chaos.txt"), "make chaos", out)
}

// schedulerLog finds the log of a chapter's scheduler for one scenario of
// the e2e run in dir.
func schedulerLog(dir, chapter, scenario string) (string, error) {
	logs, _ := filepath.Glob(filepath.Join(dir, "*", "ch"+chapter[:2]+"-"+scenario+".log"))
	if len(logs) != 1 {
		return "", fmt.Errorf("no scheduler log of %s in %s", scenario, dir)
	}
	return logs[0], nil
}

// tableRows keeps the header of an e2e table and the rows whose column
// col (0: the chapter, 1: the scenario) is value.
func tableRows(table string, col int, value string) string {
	var out []string
	for _, l := range strings.Split(table, "\n") {
		fields := strings.Fields(l)
		if len(fields) >= 2 && (fields[0] == "CHAPTER" || fields[col] == value) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func command(dir string, args ...string) (string, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr
	err := cmd.Run()
	return stdout.String(), err
}

// demos runs each chapter's demo (only chapter's, if it is not empty) and
// writes its final table to docs/data/NN-name-demo.txt.
func demos(root, tools, dir, chapter string) error {
	chapters, err := docsgen.ChapterDirs(root)
	if err != nil {
		return err
	}
	for _, ch := range chapters {
		if chapter != "" && ch[:2] != chapter {
			continue
		}
		fmt.Println("demo of", ch)
		args := []string{"run", "./scripts/cmd/demo", "--chapter", ch[:2], "--once", "--tools", tools}
		cmdline := "make demo CHAPTER=" + ch[:2] + " ONCE=1"
		if ch[:2] == "13" {
			// Chapter 13's post runs the random scheduler: its table
			// shows the pods spread at random.
			args = append(args, "--config", "random")
			cmdline += " CONFIG=random"
		}
		out, err := command(root, append([]string{"go"}, args...)...)
		if err != nil {
			return fmt.Errorf("demo of %s: %w\n%s", ch, err, out)
		}
		if err := write(filepath.Join(dir, ch+"-demo.txt"), cmdline, lastTable(out)); err != nil {
			return err
		}
	}
	return nil
}

// lastTable keeps the demo's final table and what follows it.
func lastTable(out string) string {
	if i := strings.LastIndex(out, "POD "); i >= 0 {
		out = out[i:]
	}
	out, _, _ = strings.Cut(out, "Stopping the cluster.")
	return out
}

func write(path, command, body string) error {
	header := fmt.Sprintf("$ %s\n# output of a real run by `make docs-data` on %s, %s\n", command, time.Now().UTC().Format("2006-01-02"), docsgen.Machine())
	return os.WriteFile(path, []byte(header+strings.TrimRight(body, "\n")+"\n"), 0o644)
}

// timelines draws, for chapters 06 to 08, one scenario's timeline from the
// scheduler logs of an e2e run at -v=4 in e2eDir, so that their pages can
// be compared at a glance: the queue, then backoff, then queueing hints.
// Later chapters queue as 08 does.
func timelines(root string, chapters []string, e2eDir string) error {
	for _, ch := range chapters {
		if ch < "06" || ch >= "09" {
			continue
		}
		const scenario = "queue-label-noise"
		logPath, err := schedulerLog(e2eDir, ch, scenario)
		if err != nil {
			return err
		}
		stamp := fmt.Sprintf("drawn by `make docs-data` on %s, %s", time.Now().UTC().Format("2006-01-02"), docsgen.Machine())
		out := filepath.Join(root, "docs", "timelines", ch+"-"+scenario+".svg")
		if err := timeline.RenderFile(logPath, "ch"+ch[:2]+"-"+scenario, ch+": "+scenario, stamp, out); err != nil {
			return err
		}
	}
	return nil
}

// timelinesOnly runs the timelines' scenario alone, then draws them.
func timelinesOnly(root, tools string) error {
	chapters, err := docsgen.ChapterDirs(root)
	if err != nil {
		return err
	}
	e2eDir := filepath.Join(root, ".cache", "docsdata-timelines")
	_ = os.RemoveAll(e2eDir)
	out, err := command(root, "go", "run", "./scripts/cmd/e2e", "--tools", tools, "--out", e2eDir, "--log-level", "4", "--run", "^queue-label-noise$", "--chapters", "6,7,8")
	if err != nil {
		return fmt.Errorf("e2e: %w\n%s", err, out)
	}
	return timelines(root, chapters, e2eDir)
}
