package watch

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"minisched/scripts/e2e"
	"minisched/scripts/klogtext"
)

// toolsDir finds the tools make tools builds, as the cluster's test does.
func toolsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MINISCHED_TOOLS_DIR")
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("..", "..", ".cache", "tools"))
	}
	if _, err := os.Stat(filepath.Join(dir, "bin", "kwok")); err != nil {
		t.Fatalf("no tools in %s: run `make tools` (make test does) or set MINISCHED_TOOLS_DIR", dir)
	}
	return dir
}

// chromium returns Debian's Chromium. Without it the test is skipped with
// one line (make test prints it too), or fails under CI, where .ci/run
// installs it first.
func chromium(t *testing.T) string {
	t.Helper()
	path, err := Chromium()
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(err)
	}
	t.Skip(err)
	return ""
}

// browser starts a headless Chromium for the test.
func browser(t *testing.T, path string) context.Context {
	t.Helper()
	ctx, cancel, err := Browser(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cancel)
	return ctx
}

// text returns the text of the first element selector matches, or "".
func text(ctx context.Context, selector string) (string, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, selector)))
}

// TestPageFollowsAScenario loads the live page in Chromium while the
// shared scenario queue-waits-for-node plays against chapter 08, and
// checks that the page shows the pod in the unschedulable pool with
// NodeResourcesFit, the NodeAdd event that moved it, and its binding to
// the node that came. The session is recorded; the subtest opens the
// replay and checks its score table against the log.
func TestPageFollowsAScenario(t *testing.T) {
	chrome := chromium(t)
	tools := toolsDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	root, _ := filepath.Abs(filepath.Join("..", ".."))
	play, err := Play{Root: root, Tools: tools, Dir: t.TempDir(), Chapter: "08", Scenario: "queue-waits-for-node", Race: true}.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := play.Running
	defer func() {
		if err := r.Stop(); err != nil {
			t.Errorf("stopping: %v", err)
		}
	}()
	recording, logPath := play.Recording, play.Log

	b := browser(t, chrome)
	pod := play.Namespace + "/big"
	if err := chromedp.Do(b, chromedp.Navigate(r.URL+"?pod="+pod)); err != nil {
		t.Fatal(err)
	}
	// What the page showed at some moment while the scenario played:
	// each is a fact the page must show at least once.
	seen := map[string]string{}
	checks := map[string]string{
		// The pod in the pool, with the plugin that rejected it.
		"unschedulable": fmt.Sprintf(`.queue-col[data-queue="Unschedulable"] [data-pod=%q]`, pod),
		// The moves, in the attempts panel: the NodeAdd that moved it.
		"moves": `.attempt-lane .moves`,
		// Its attempts: the last one bound it.
		"attempts": `.attempt-lane`,
	}
	var res e2e.Result
	done := false
	for !done {
		select {
		case res = <-play.Result:
			done = true
		case <-time.After(100 * time.Millisecond):
		}
		for name, sel := range checks {
			got, err := text(b, sel)
			if err != nil {
				t.Fatalf("reading %s: %v", name, err)
			}
			switch name {
			case "unschedulable":
				if strings.Contains(got, "NodeResourcesFit") {
					seen[name] = got
				}
			case "moves":
				if strings.Contains(got, "NodeAdd") {
					seen[name] = got
				}
			case "attempts":
				if strings.Contains(got, "scheduled on large") {
					seen[name] = got
				}
			}
		}
	}
	if !res.Passed {
		t.Fatalf("the scenario failed: %v (log %s)", res.Problems, res.Log)
	}
	for _, name := range []string{"unschedulable", "moves", "attempts"} {
		if seen[name] == "" {
			t.Errorf("the page never showed the %s the scenario caused (selector %s)", name, checks[name])
		}
	}
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Run("replay's score table", func(t *testing.T) { testReplayScoreTable(t, b, recording, logPath, pod) })
}

// testReplayScoreTable serves the recording and checks the score table of
// the pod's binding attempt against the scheduler's log: each node's
// weighted score per plugin, and its total.
func testReplayScoreTable(t *testing.T, b context.Context, recording, logPath, pod string) {
	f, err := os.Open(recording)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ReadRecording(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: (&Server{Replay: rec}).Handler()}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	// The log's scores of the pod's last scored attempt.
	want := map[string]string{}
	lf, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(lf)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		r, ok := klogtext.Parse(sc.Text(), 2026)
		if !ok || r.Fields["pod"] != pod {
			continue
		}
		switch r.Msg {
		case "Attempting to schedule pod":
			want = map[string]string{}
		case "Plugin scored node for pod":
			want[r.Fields["node"]+" "+r.Fields["plugin"]] = r.Fields["score"]
		case "Calculated node's final score for pod":
			want[r.Fields["node"]+" total"] = r.Fields["score"]
		}
	}
	lf.Close()
	if len(want) == 0 {
		t.Fatalf("the log %s has no score of %s", logPath, pod)
	}
	from, to := rec.Span()
	url := fmt.Sprintf("http://%s/?pod=%s&t=%d", ln.Addr(), pod, to.Sub(from).Milliseconds())
	if err := chromedp.Do(b, chromedp.Navigate(url), chromedp.WaitVisible(`.attempt.scheduled table.verdicts`)); err != nil {
		t.Fatal(err)
	}
	// The table of the attempt that bound the pod: every row's header
	// cells, its plugin columns' weighted scores (the bold part) and the
	// total.
	got, err := chromedp.Run(b, chromedp.Evaluate[map[string]string](`(() => {
		const tables = document.querySelectorAll(".attempt.scheduled table.verdicts");
		const table = tables[tables.length - 1];
		const plugins = [...table.querySelectorAll("thead th")].map((th) => th.textContent);
		const out = {};
		for (const tr of table.querySelectorAll("tbody tr")) {
			const node = tr.dataset.node;
			tr.querySelectorAll("td").forEach((td, i) => {
				const col = plugins[i + 1];
				if (col === "Filter" || td.textContent === "") return;
				if (col === "total") { out[node + " total"] = td.textContent; return; }
				const b = td.querySelector("b");
				out[node + " " + col] = b ? b.textContent : td.textContent;
			});
		}
		return out;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the replay's score table differs from the log (-log +page):\n%s", diff)
	}
	for k, v := range want {
		if _, err := strconv.Atoi(v); err != nil {
			t.Errorf("the log's score %s = %q is not a number", k, v)
		}
	}
}
