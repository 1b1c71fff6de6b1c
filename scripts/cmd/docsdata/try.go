package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// try runs the first steps a reader types on chapter 01's page, on a
// cluster of its own, and writes each command's output: make up, applying
// the example nodes, the chapter at -v=2 while a pod is created, and
// kubectl's view of it.
func try(root, tools, dir string) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	tools, err = filepath.Abs(tools)
	if err != nil {
		return err
	}
	state := filepath.Join(root, ".cache", "docsdata-try")
	bin := filepath.Join(root, ".cache", "bin", "cluster")
	if out, err := command(root, "go", "build", "-o", bin, "./scripts/cmd/cluster"); err != nil {
		return fmt.Errorf("building the cluster command: %w\n%s", err, out)
	}
	up, err := combined(root, nil, bin, "up", "--dir", state, "--tools", tools)
	if err != nil {
		return fmt.Errorf("cluster up: %w\n%s", err, up)
	}
	defer combined(root, nil, bin, "down", "--dir", state)
	// The page shows make up's output with the repository's own paths.
	up = strings.ReplaceAll(up, state, filepath.Join(root, ".cache", "cluster"))
	if err := write(filepath.Join(dir, "make-up.txt"), "make up", relative(root, up)); err != nil {
		return err
	}
	env := append(os.Environ(), "KUBECONFIG="+filepath.Join(state, "kubeconfig"), "PATH="+filepath.Join(tools, "bin")+":"+os.Getenv("PATH"))
	// The built kubectl, by its path: not one that happens to be on PATH.
	kubectl := func(args ...string) (string, error) {
		return combined(root, env, filepath.Join(tools, "bin", "kubectl"), args...)
	}
	var session strings.Builder
	step := func(args ...string) error {
		out, err := kubectl(args...)
		fmt.Fprintf(&session, "$ kubectl %s\n%s", strings.Join(args, " "), out)
		if err != nil {
			return fmt.Errorf("kubectl %v: %w\n%s", args, err, out)
		}
		return nil
	}
	if err := step("apply", "-f", "docs/examples/nodes.yaml"); err != nil {
		return err
	}
	if _, err := kubectl("wait", "--for=condition=Ready", "node", "--all", "--timeout=60s"); err != nil {
		return err
	}
	if err := step("get", "nodes"); err != nil {
		return err
	}
	// The chapter, built first so that the log starts with the scheduler.
	schedBin := filepath.Join(root, ".cache", "bin", "01-initial")
	if out, err := command(filepath.Join(root, "01-initial"), "go", "build", "-o", schedBin, "."); err != nil {
		return fmt.Errorf("building 01-initial: %w\n%s", err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var schedLog bytes.Buffer
	sched := exec.CommandContext(ctx, schedBin, "-v=2")
	sched.Env, sched.Stdout, sched.Stderr = env, &schedLog, &schedLog
	sched.Cancel = func() error { return sched.Process.Signal(os.Interrupt) }
	// A scheduler that ignores SIGINT is killed after this long.
	sched.WaitDelay = 10 * time.Second
	if err := sched.Start(); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	if err := step("create", "-f", "docs/examples/pod.yaml"); err != nil {
		return err
	}
	if err := step("create", "-f", "docs/examples/pod.yaml"); err != nil {
		return err
	}
	if _, err := kubectl("wait", "--for=condition=Ready", "pod", "--all", "--timeout=60s"); err != nil {
		return err
	}
	if err := step("get", "pods", "-o", "wide"); err != nil {
		return err
	}
	cancel()
	_ = sched.Wait()
	if err := write(filepath.Join(dir, "01-initial-kubectl.txt"), "eval \"$(make -s env)\"   # then, with go run ./01-initial -v=2 in another terminal:", session.String()); err != nil {
		return err
	}
	return write(filepath.Join(dir, "01-initial-run.txt"), "go run ./01-initial -v=2   # its log while the two pods above were created; Ctrl-C stops it", schedLog.String())
}

// pageTests are the test commands the pages of 05-12 show, with -v.
var pageTests = []struct {
	chapter string
	runs    [][]string
}{
	{"05-event-handler", [][]string{{"./05-event-handler/test/integration", "-run", "TestEventHandlers"}}},
	{"06-scheduling-queue", [][]string{{"./06-scheduling-queue/test/integration", "-run", "TestSchedulingQueue"}, {"./06-scheduling-queue/scheduler/backend/queue"}}},
	{"07-backoff", [][]string{{"./07-backoff/scheduler/backend/queue"}, {"./07-backoff/test/integration", "-run", "TestSchedulingQueue"}}},
	{"08-queueinghint", [][]string{{"./08-queueinghint/scheduler/backend/queue", "-run", "InFlight|IsPodWorthRequeuing"}, {"./08-queueinghint/test/integration", "-run", "TestSchedulingQueue"}}},
	{"09-preemption", [][]string{
		{"./09-preemption/scheduler/...", "-run", "^(TestPickOneNodeForPreemption|TestFilterVictimsWithPDBViolation|TestPodTerminatingByPreemption|TestPreemptPod|TestPrepareCandidateAsync|TestSelectVictimsOnNode|TestPodEligibleToPreemptOthers|TestCalculateNumCandidates|TestNominator|TestRunFilterPluginsWithNominatedPods|TestRunPostFilterPlugins|TestEvaluateNominatedNode)$"},
		{"./09-preemption/test/integration", "-run", "TestPreemption"},
	}},
	{"10-percentage-of-nodes-to-score", [][]string{
		{"./10-percentage-of-nodes-to-score/scheduler/...", "-run", "^(TestNodeTree|TestSnapshotListsZonesInterleaved|TestNumFeasibleNodesToFind|TestFairEvaluationForNodes|TestFindNodesThatPassFiltersInParallel|TestRunScorePluginsInParallel|TestPowerOfTwoChoices|TestScoringStrategy|TestDryRunPreemption|TestFindNodesThatFitPod)$"},
	}},
	{"11-gang-scheduling", [][]string{
		{"./11-gang-scheduling/scheduler/...", "-run", "^(TestPodGroupState|TestSnapshotAssumePod|TestPodGroupEntity|TestAddAttemptedPodGroupIfNeeded|TestDeletePodGroupMembers|TestSinglePodFailureDuringGroupCycle|TestPodGroupMetrics|TestPodGroupEvents|TestPodGroupSchedulingAlgorithm|TestScheduleOnePodGroup|TestPodGroupMembersAreValidated|TestPermitDoesNotCountRejectedMembers|TestSimulationKeepsNominations)$"},
		{"./11-gang-scheduling/test/integration", "-run", "TestPodGroups"},
	}},
	{"12-observability", [][]string{
		{"./12-observability/scheduler/...", "-run", "^(TestScheduleOneRecordsMetrics|TestAlgorithmDurationCoversTheAlgorithm|TestPluginEvaluationTotal|TestPluginDurationsAreSampled|TestScheduleOneSamplesOneCycleInTen|TestUnschedulablePodsByPlugin|TestQueuedEntities|TestIncomingEntities|TestInFlightEventsMetric|TestQueueingHintDuration|TestPreemptionMetrics|TestScheduleOnePodGroup|TestScheduleOneTrace|TestScheduleOnePodGroupTrace|TestAsyncPreemptionTrace|TestRegionsCostNothingWhenOff)$"},
		{"./12-observability/test/integration", "-run", "TestCommandMetricsAndTrace"},
	}},
}

// tests runs the test commands the pages of 05-12 show (of one chapter
// only, if chapter is not empty) and writes, for each, the lines of its -v
// output that say what ran and how it ended (the tests' own logs are left
// out: they run to thousands of lines).
func tests(root, dir, chapter string) error {
	for _, pt := range pageTests {
		if chapter != "" && pt.chapter[:2] != chapter {
			continue
		}
		fmt.Println("tests of", pt.chapter)
		var b strings.Builder
		var shown []string
		for _, r := range pt.runs {
			args := append([]string{"test", "-race", "-count=1"}, r...)
			args = append(args, "-v")
			cmd := "go " + strings.Join(quoteArgs(args), " ")
			shown = append(shown, cmd)
			out, err := combined(root, nil, "go", args...)
			if err != nil {
				return fmt.Errorf("%s: %w\n%s", cmd, err, out)
			}
			if len(shown) > 1 {
				fmt.Fprintf(&b, "$ %s\n", cmd)
			}
			for _, l := range strings.Split(out, "\n") {
				t := strings.TrimSpace(l)
				if strings.HasPrefix(t, "--- ") || strings.HasPrefix(t, "ok ") || t == "PASS" {
					b.WriteString(l + "\n")
				}
			}
		}
		// The header names the first command; the others follow in the body.
		if err := write(filepath.Join(dir, pt.chapter+"-tests.txt"), shown[0]+"   # the --- lines of the -v output", b.String()); err != nil {
			return err
		}
	}
	return nil
}

// quoteArgs quotes the arguments a shell would split or expand.
func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, "|*? ") {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return out
}

// combined runs a command and returns its stdout and stderr together.
func combined(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// relative shows paths under the repository as the reader's: $PWD/...
func relative(root, s string) string { return strings.ReplaceAll(s, root, "$PWD") }
