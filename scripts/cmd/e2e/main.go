// Command e2e runs the shared KWOK scenario suite against chapters: for each
// chapter, every scenario whose firstChapter is at or below it, each with no
// nodes or pods of its own at the start and a fresh scheduler process, on
// one local cluster. It prints a pass/fail table and exits non-zero if any
// scenario failed.
//
//	go run ./scripts/cmd/e2e --chapters 01,02 --run basic
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"

	"minisched/scripts/cluster"
	"minisched/scripts/e2e"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: "+err.Error())
		os.Exit(1)
	}
}

func run() error {
	root := flag.String("root", ".", "repository root")
	tools := flag.String("tools", ".cache/tools", "tools directory (see scripts/build-tools.sh)")
	chapters := flag.String("chapters", "", "comma-separated chapter numbers (default: every chapter present)")
	scenarioDir := flag.String("scenarios", "scripts/e2e/scenarios", "directory of scenario files")
	only := flag.String("run", "", "run only scenarios whose name matches this regular expression")
	out := flag.String("out", ".cache/e2e", "directory for the cluster's files and the schedulers' logs")
	flag.Parse()

	filter, err := regexp.Compile(*only)
	if err != nil {
		return fmt.Errorf("--run: %w", err)
	}
	scenarios, err := e2e.LoadDir(*scenarioDir)
	if err != nil {
		return err
	}
	all, err := e2e.FindChapters(*root)
	if err != nil {
		return err
	}
	selected, err := e2e.SelectChapters(all, *chapters)
	if err != nil {
		return err
	}
	if len(selected) == 0 {
		return fmt.Errorf("no chapters found under %s", *root)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runDir := filepath.Join(*out, time.Now().Format("20060102-150405"))
	binDir := filepath.Join(runDir, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return err
	}
	schedulers := map[int]e2e.Scheduler{}
	for _, c := range selected {
		fmt.Fprintf(os.Stderr, "building %s (with -race)\n", c.Dir)
		bin, err := e2e.BuildChapter(*root, c, binDir)
		if err != nil {
			return err
		}
		schedulers[c.Number] = e2e.Scheduler{Chapter: c.Number, Label: c.Dir, Command: []string{bin, "-v=2"}}
	}

	fmt.Fprintln(os.Stderr, "starting the local cluster")
	cl, err := cluster.Start(ctx, cluster.Options{ToolsDir: *tools, Dir: filepath.Join(runDir, "cluster")})
	if err != nil {
		return err
	}
	defer func() {
		if err := cl.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: stopping the cluster:", err)
		}
	}()
	cl.Config.QPS, cl.Config.Burst = 1000, 2000
	runner := &e2e.Runner{Cluster: cl, Client: kubernetes.NewForConfigOrDie(cl.Config), LogDir: runDir}

	// Rows print as scenarios finish, so the widths are fixed up front.
	width := len("SCENARIO")
	for _, sc := range scenarios {
		width = max(width, len(sc.Name))
	}
	row := fmt.Sprintf("%%-20s %%-%ds %%-6s %%7s %%8s  %%s\n", width)
	fmt.Printf(row, "CHAPTER", "SCENARIO", "RESULT", "TIME", "BINDINGS", "PROBLEMS")
	failed, passed := 0, 0
	for _, c := range selected {
		for _, sc := range scenarios {
			if sc.FirstChapter > c.Number || !filter.MatchString(sc.Name) {
				continue
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			res := runner.Run(ctx, sc, schedulers[c.Number])
			verdict := "PASS"
			if !res.Passed {
				verdict = "FAIL"
				failed++
			} else {
				passed++
			}
			problems := strings.Join(res.Problems, "; ")
			if !res.Passed {
				problems += " (log: " + res.Log + ")"
			}
			fmt.Printf(row, c.Dir, sc.Name, verdict, fmt.Sprintf("%.1fs", res.Duration.Seconds()), fmt.Sprint(res.Bindings), problems)
		}
	}
	fmt.Printf("%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return fmt.Errorf("%d scenario(s) failed", failed)
	}
	return nil
}
