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
	"strings"
	"syscall"

	"minisched/scripts/e2e"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: "+err.Error())
		os.Exit(1)
	}
}

func run() error {
	var f e2e.Flags
	f.Register(flag.CommandLine, ".cache/e2e", 4)
	// make timeline asks for -v=4, where the handlers log node updates.
	verbosity := flag.Int("log-level", 3, "the schedulers' -v")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	h, err := e2e.Setup(ctx, f, func(e2e.Chapter) bool { return true })
	if err != nil {
		return err
	}
	defer h.Close()

	// Rows print as scenarios finish, so the widths are fixed up front.
	width := len("SCENARIO")
	for _, sc := range h.Scenarios {
		width = max(width, len(sc.Name))
	}
	row := fmt.Sprintf("%%-%ds %%-%ds %%-6s %%7s %%8s %%8s  %%s\n", e2e.DirWidth(h.Chapters, 20), width)
	fmt.Printf(row, "CHAPTER", "SCENARIO", "RESULT", "TIME", "BINDINGS", "ATTEMPTS", "PROBLEMS")
	type job struct {
		sched e2e.Scheduler
		dir   string
		sc    *e2e.Scenario
	}
	var jobs []job
	for _, c := range h.Chapters {
		sched, err := h.ChapterScheduler(c, fmt.Sprintf("-v=%d", *verbosity))
		if err != nil {
			return err
		}
		for _, sc := range h.Scenarios {
			if sc.AppliesTo(c.Number) {
				jobs = append(jobs, job{sched, c.Dir, sc})
			}
		}
	}
	passed := 0
	var failures []string
	err = e2e.Play(ctx, h.Runners, len(jobs), func(ctx context.Context, r *e2e.Runner, i int) e2e.Result {
		return r.Run(ctx, jobs[i].sc, jobs[i].sched)
	}, func(i int, res e2e.Result) {
		verdict := "PASS"
		if !res.Passed {
			verdict = "FAIL"
		} else {
			passed++
		}
		problems := strings.Join(res.Problems, "; ")
		if !res.Passed {
			problems += " (log: " + res.Log + ")"
		}
		line := fmt.Sprintf(row, jobs[i].dir, jobs[i].sc.Name, verdict, fmt.Sprintf("%.1fs", res.Duration.Seconds()), fmt.Sprint(res.Bindings), fmt.Sprint(res.Attempts), problems)
		fmt.Print(line)
		if !res.Passed {
			failures = append(failures, line)
		}
	})
	if err != nil {
		return err
	}
	fmt.Printf("%d passed, %d failed\n", passed, len(failures))
	if len(failures) > 0 {
		// Repeated at the end, where a CI log's tail shows them.
		fmt.Print("failed:\n" + strings.Join(failures, ""))
		return fmt.Errorf("%d scenario(s) failed", len(failures))
	}
	return nil
}
