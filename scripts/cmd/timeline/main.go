// Command timeline draws each pod's path through a chapter's scheduling
// queue as an SVG, from the scheduler's structured log: its time in
// activeQ, backoffQ and the unschedulable pool, each attempt, and the
// moment it was bound.
//
// With --chapter and --scenario it first runs that scenario of the KWOK
// suite against that chapter (as `make e2e` does, at -v=4 so that node
// updates are logged and drawn as markers), then draws the run's log:
//
//	go run ./scripts/cmd/timeline --chapter 07 --scenario queue-label-noise
//
// With --log it draws a log that exists already, keeping the pods of
// --namespace.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	"minisched/scripts/docsgen"
	"minisched/scripts/timeline"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "timeline: "+err.Error())
		os.Exit(1)
	}
}

func run() error {
	chapter := flag.String("chapter", "", "chapter number to run, e.g. 07")
	scenario := flag.String("scenario", "", "name of the scenario to run")
	tools := flag.String("tools", ".cache/tools", "tools directory (see scripts/build-tools.sh)")
	logPath := flag.String("log", "", "draw this scheduler log instead of running a scenario")
	ns := flag.String("namespace", "", "with --log: the namespace whose pods to draw")
	out := flag.String("out", "", "SVG file to write (default .cache/timeline/NN-SCENARIO.svg)")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flag.Arg(0))
	}
	stamp := fmt.Sprintf("drawn on %s, %s", time.Now().UTC().Format("2006-01-02"), docsgen.Machine())
	if *logPath != "" {
		if *ns == "" || *out == "" {
			return fmt.Errorf("--log needs --namespace and --out")
		}
		return timeline.RenderFile(*logPath, *ns, *ns, stamp, *out)
	}
	if !regexp.MustCompile(`^\d\d$`).MatchString(*chapter) || *scenario == "" {
		return fmt.Errorf("set CHAPTER=NN and SCENARIO=name (or --log, --namespace and --out)")
	}
	dir := filepath.Join(".cache", "timeline")
	runDir := filepath.Join(dir, "runs")
	_ = os.RemoveAll(runDir)
	cmd := exec.Command("go", "run", "./scripts/cmd/e2e", "--tools", *tools, "--chapters", *chapter, "--run", "^"+regexp.QuoteMeta(*scenario)+"$", "--out", runDir,
		// -v=4: the handlers log each node update, drawn as a marker.
		"--log-level", "4")
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("running the scenario: %w\n%s", err, output.String())
	}
	name := "ch" + *chapter + "-" + *scenario
	logs, _ := filepath.Glob(filepath.Join(runDir, "*", name+".log"))
	if len(logs) != 1 {
		return fmt.Errorf("no scheduler log of %s in %s (is the scenario's firstChapter above %s?)\n%s", *scenario, runDir, *chapter, output.String())
	}
	if *out == "" {
		*out = filepath.Join(dir, *chapter+"-"+*scenario+".svg")
	}
	if err := timeline.RenderFile(logs[0], name, fmt.Sprintf("chapter %s, scenario %s", *chapter, *scenario), stamp, *out); err != nil {
		return err
	}
	fmt.Println("wrote", *out)
	return nil
}
