package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// upstreamFilters are the Filter (and PreFilter) plugins of chapters 02 on,
// in the order of upstream's default profile.
var upstreamFilters = []string{"NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodeResourcesFit"}

// upstreamScores are the Score plugins of chapters 03 on, with upstream's
// default weights.
var upstreamScores = []struct {
	name   string
	weight int
}{{"TaintToleration", 3}, {"NodeAffinity", 2}, {"NodeResourcesFit", 1}, {"NodeResourcesBalancedAllocation", 1}}

// Client is the rate limit of a scheduler's clients (its own, and the one
// it sends events through).
type Client struct {
	QPS   float32
	Burst int
}

// ChapterClient is the chapters' default: 50 requests a second after a
// burst of 100, as kube-scheduler's.
var ChapterClient = Client{QPS: 50, Burst: 100}

// UpstreamConfig is a KubeSchedulerConfiguration that makes kube-scheduler
// behave like chapter `chapter` for the pods `make compare` creates: every
// multiPoint plugin disabled, exactly the chapter's in-tree plugins enabled
// with upstream's weights, every node scored up to chapter 09
// (percentageOfNodesToScore 100) and upstream's default search from chapter
// 10 on (the scenarios have fewer than 100 nodes, so both search them all),
// profile mini-scheduler, the given client QPS and burst. From chapter 11
// on, GangScheduling too (at every extension point it has: PreEnqueue,
// PlacementFeasible, Permit); kube-scheduler then needs the GenericWorkload
// feature gate (upstreamFeatureGates). The chapters' own plugins
// (NodeCost, 04-10's Gang) have no upstream counterpart: scenarios that use
// them are not deterministic.
func UpstreamConfig(chapter int, kubeconfig string, client Client) string {
	var b strings.Builder
	b.WriteString(upstreamHeader(kubeconfig, client))
	// Up to chapter 09, the chapters look at every node; from chapter 10
	// on, they stop as kube-scheduler does by default.
	if chapter < SearchChapter {
		b.WriteString("percentageOfNodesToScore: 100\n")
	}
	fmt.Fprintf(&b, `profiles:
- schedulerName: %s
  plugins:
    multiPoint:
      disabled: [{name: "*"}]
%s    queueSort:
      enabled: [{name: PrioritySort}]
    bind:
      enabled: [{name: DefaultBinder}]
`, DefaultSchedulerName, gangScheduling(chapter))
	list := func(names []string) string {
		var parts []string
		for _, n := range names {
			parts = append(parts, "{name: "+n+"}")
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	// DefaultPreemption, from chapter 09 on, is a PreEnqueue plugin too
	// (it holds a preemptor back while its victims are deleted).
	preEnqueue := []string{"SchedulingGates"}
	if chapter >= PreemptionChapter {
		preEnqueue = append(preEnqueue, "DefaultPreemption")
		fmt.Fprintf(&b, "    postFilter:\n      enabled: %s\n", list([]string{"DefaultPreemption"}))
	}
	fmt.Fprintf(&b, "    preEnqueue:\n      enabled: %s\n", list(preEnqueue))
	fmt.Fprintf(&b, "    preFilter:\n      enabled: %s\n", list([]string{"NodeAffinity", "NodeResourcesFit"}))
	fmt.Fprintf(&b, "    filter:\n      enabled: %s\n", list(upstreamFilters))
	if chapter >= 3 {
		var scores, preScores []string
		for _, s := range upstreamScores {
			scores = append(scores, fmt.Sprintf("{name: %s, weight: %d}", s.name, s.weight))
			preScores = append(preScores, "{name: "+s.name+"}")
		}
		fmt.Fprintf(&b, "    preScore:\n      enabled: [%s]\n", strings.Join(preScores, ", "))
		fmt.Fprintf(&b, "    score:\n      enabled: [%s]\n", strings.Join(scores, ", "))
	}
	return b.String()
}

// gangScheduling is the multiPoint entry that enables GangScheduling, from
// chapter 11 on.
func gangScheduling(chapter int) string {
	if chapter < PodGroupChapter {
		return ""
	}
	return "      enabled: [{name: GangScheduling}]\n"
}

// upstreamFeatureGates is kube-scheduler's --feature-gates for a chapter:
// OpportunisticBatching off, as the chapters have no batching, and from
// chapter 11 on the GenericWorkload gate, without which kube-scheduler
// v1.37.1 treats a pod group's members as single pods. From chapter 11 on,
// NominatedNodeNameForExpectation (beta, on by default) is off too: it
// sets the nominatedNodeName of a pod that is to wait at Permit (bindingCycle
// in schedule_one.go), which a gang's members all do but the last, and the
// chapters do not have it.
func upstreamFeatureGates(chapter int) string {
	gates := "--feature-gates=OpportunisticBatching=false"
	if chapter >= PodGroupChapter {
		gates += ",GenericWorkload=true,NominatedNodeNameForExpectation=false"
	}
	return gates
}

// PluginsCompareGates are the feature gates make compare gives chapter 13
// and the kube-scheduler it is compared with: GenericWorkload for the pod
// groups, and NominatedNodeNameForExpectation off. With it on, every
// member of a gang that waits at Permit gets a nominatedNodeName, all but
// the last one tried, and kube-scheduler does not try a group's members in
// a fixed order (its logs show a different order from run to run): the
// nominations would differ between two runs of the same scheduler.
const PluginsCompareGates = "--feature-gates=GenericWorkload=true,NominatedNodeNameForExpectation=false"

// UpstreamDefaultsConfig is kube-scheduler's own default profile, answering
// to the chapters' scheduler name, with the given client QPS and burst.
func UpstreamDefaultsConfig(kubeconfig string, client Client) string {
	return upstreamHeader(kubeconfig, client) + "profiles:\n- schedulerName: " + DefaultSchedulerName + "\n"
}

func upstreamHeader(kubeconfig string, client Client) string {
	return fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: %g
  burst: %d
leaderElection:
  leaderElect: false
`, kubeconfig, client.QPS, client.Burst)
}

// UpstreamScheduler returns how to run kube-scheduler configured like the
// chapter, as make compare does: the configuration above with the
// chapters' client, written to dir; OpportunisticBatching off; its HTTPS
// server on 127.0.0.1; scores logged (-v=10 for schedule_one.go only), as
// the chapters log theirs.
func UpstreamScheduler(toolsDir, dir string, chapter int) (Scheduler, error) {
	if chapter == PluginsChapter {
		// Chapter 13 is kube-scheduler with its plugins: it is compared
		// with kube-scheduler's own defaults, the same gates on both
		// (PluginsCompareGates).
		return upstreamScheduler(toolsDir, dir, "kube-scheduler-defaults.yaml",
			func(kubeconfig string) string { return UpstreamDefaultsConfig(kubeconfig, ChapterClient) },
			chapter, "kube-scheduler (defaults)", "-v=2", "--vmodule=schedule_one=10,schedule_one_podgroup=10", PluginsCompareGates)
	}
	return upstreamScheduler(toolsDir, dir, fmt.Sprintf("kube-scheduler-%02d.yaml", chapter),
		func(kubeconfig string) string { return UpstreamConfig(chapter, kubeconfig, ChapterClient) },
		chapter, "kube-scheduler", "-v=2", "--vmodule=schedule_one=10,schedule_one_podgroup=10", upstreamFeatureGates(chapter))
}

// UpstreamBenchSchedulers returns kube-scheduler configured like chapter
// 08 (OpportunisticBatching off), and kube-scheduler with its defaults,
// both with the given client and at the default verbosity, as make bench
// runs them. Their /metrics answers anonymous requests, for the attempts
// counter.
func UpstreamBenchSchedulers(toolsDir, dir string, client Client) (like08, defaults Scheduler, err error) {
	like08, err = upstreamScheduler(toolsDir, dir, "kube-scheduler-like-08.yaml",
		func(kubeconfig string) string { return UpstreamConfig(8, kubeconfig, client) },
		8, "kube-scheduler (like 08)", upstreamFeatureGates(8))
	if err != nil {
		return
	}
	defaults, err = upstreamScheduler(toolsDir, dir, "kube-scheduler-defaults.yaml",
		func(kubeconfig string) string { return UpstreamDefaultsConfig(kubeconfig, client) },
		8, "kube-scheduler (defaults)")
	return
}

// UpstreamBenchLike returns kube-scheduler configured like the chapter
// (OpportunisticBatching off), with the given client and at the default
// verbosity, labelled "kube-scheduler (like NN)": make bench runs it like
// 09 beside chapter 09 on the preemption workloads.
func UpstreamBenchLike(toolsDir, dir string, chapter int, client Client) (Scheduler, error) {
	return upstreamScheduler(toolsDir, dir, fmt.Sprintf("kube-scheduler-like-%02d.yaml", chapter),
		func(kubeconfig string) string { return UpstreamConfig(chapter, kubeconfig, client) },
		chapter, fmt.Sprintf("kube-scheduler (like %02d)", chapter), upstreamFeatureGates(chapter))
}

// UpstreamQuality returns kube-scheduler with its defaults (like 0) or
// configured like chapter `like`, with NodeResourcesFit's scoring strategy
// (LeastAllocated, its default, or MostAllocated) and the given client, as
// make quality runs it; OpportunisticBatching stays as each is configured
// elsewhere (on for the defaults, off like a chapter).
func UpstreamQuality(toolsDir, dir string, like int, strategy string, client Client) (Scheduler, error) {
	config := func(kubeconfig string) string { return UpstreamDefaultsConfig(kubeconfig, client) }
	label, flags := "kube-scheduler (defaults)", []string(nil)
	if like > 0 {
		config = func(kubeconfig string) string { return UpstreamConfig(like, kubeconfig, client) }
		label, flags = fmt.Sprintf("kube-scheduler (like %02d)", like), []string{upstreamFeatureGates(like)}
	}
	withStrategy := func(kubeconfig string) string {
		c := config(kubeconfig)
		if strategy == "" || strategy == "LeastAllocated" {
			return c
		}
		// The profile is the configuration's last item.
		return c + "  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: " + strategy + "\n"
	}
	return upstreamScheduler(toolsDir, dir, fmt.Sprintf("kube-scheduler-quality-%02d-%s.yaml", like, strategy), withStrategy, max(like, 1), label, flags...)
}

func upstreamScheduler(toolsDir, dir, file string, config func(kubeconfig string) string, chapter int, label string, flags ...string) (Scheduler, error) {
	bin, err := filepath.Abs(filepath.Join(toolsDir, "bin", "kube-scheduler"))
	if err != nil {
		return Scheduler{}, err
	}
	return Scheduler{
		Chapter:  chapter,
		Label:    label,
		Upstream: true,
		Command:  append([]string{bin}, flags...),
		Args: func(kubeconfig, addr string, extra []string) []string {
			// One file per cluster (the kubeconfig's directory): lanes
			// that play side by side each point kube-scheduler at their
			// own apiserver.
			cfg := filepath.Join(dir, filepath.Base(filepath.Dir(kubeconfig))+"-"+file)
			if err := os.WriteFile(cfg, []byte(config(kubeconfig)), 0o644); err != nil {
				panic(err) // the directory was created by the caller
			}
			host, port, _ := strings.Cut(addr, ":")
			// /debug/pprof/* too: make trace and the benchmark's
			// profiles read kube-scheduler's execution trace and CPU
			// profile there (enableProfiling is on by default).
			return append([]string{"--config=" + cfg, "--authentication-skip-lookup=true", "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics,/debug/pprof/*",
				"--bind-address=" + host, "--secure-port=" + port}, extra...)
		},
	}, nil
}

var (
	// A pod's cycle, or its turn in its pod group's cycle (chapter 11 and
	// kube-scheduler log that at -v=4).
	attemptLine = regexp.MustCompile(`"Attempting to schedule (?:pod|a pod belonging to a pod group)".*? pod="([^"]+)"`)
	// A pod group's cycle, at -v=3: its members' cycle in chaos's logs.
	groupAttemptLine = regexp.MustCompile(`"Attempting to schedule pod group".*? podGroup="([^"]+)"`)
	scoreLine        = regexp.MustCompile(`"Calculated node's final score for pod" pod="([^"]+)" node="([^"]+)" score=(\d+)`)
	feasible         = regexp.MustCompile(`"Scheduling decision" pod="([^"]+)".* feasibleNodes=(\d+)`)
)

// Ties reads a scheduler's log and returns, for each pod whose last scored
// attempt had several nodes sharing the top score, those nodes. A pod with
// several feasible nodes but no scores (chapter 02) counts as a tie too:
// its choice was not decided by the rules both schedulers share.
func Ties(logPath string) (map[string][]string, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	scores := map[string]map[string]int{} // pod -> node -> total, last attempt
	ties := map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if m := attemptLine.FindStringSubmatch(line); m != nil {
			scores[m[1]] = map[string]int{}
		}
		if m := scoreLine.FindStringSubmatch(line); m != nil {
			if scores[m[1]] == nil {
				scores[m[1]] = map[string]int{}
			}
			scores[m[1]][m[2]], _ = strconv.Atoi(m[3])
		}
		if m := feasible.FindStringSubmatch(line); m != nil {
			if n, _ := strconv.Atoi(m[2]); n > 1 && len(scores[m[1]]) == 0 {
				ties[m[1]] = []string{fmt.Sprintf("%d feasible nodes, no scores", n)}
			}
		}
	}
	for pod, byNode := range scores {
		top, nodes := -1, []string(nil)
		for n, s := range byNode {
			switch {
			case s > top:
				top, nodes = s, []string{n}
			case s == top:
				nodes = append(nodes, n)
			}
		}
		if len(nodes) > 1 {
			sort.Strings(nodes)
			ties[pod] = nodes
		}
	}
	return ties, sc.Err()
}
