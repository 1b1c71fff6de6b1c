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

	"minisched/scripts/cluster"
	"minisched/scripts/e2e"
	"minisched/scripts/klogtext"
)

// toolsDir finds the tools `make tools` builds (cluster.TestTools).
func toolsDir(t *testing.T) string {
	t.Helper()
	dir, err := cluster.TestTools(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// chromium returns Debian's Chromium, or fails the test with how to
// install it. make test leaves this test out on a machine without
// Chromium, with one line that says so, except under CI.
func chromium(t *testing.T) string {
	t.Helper()
	path, err := Chromium()
	if err != nil {
		t.Fatal(err)
	}
	return path
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
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	play, err := Play{Root: root, Tools: tools, Dir: t.TempDir(), Chapter: "08", Scenarios: []string{"queue-waits-for-node", "score-least-allocated"}, Race: true}.Start(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	r := play.Running
	defer func() {
		if err := r.Stop(); err != nil {
			t.Errorf("stopping: %v", err)
		}
	}()
	defer cancel() // first: a failed test ends the scenario before Stop waits for it

	b := browser(t, chrome)
	pod := play.Namespaces["queue-waits-for-node"] + "/big"
	if err := chromedp.Do(b, chromedp.Navigate(r.URL+"?pod="+pod)); err != nil {
		t.Fatal(err)
	}
	// What the page showed at some moment while the scenario played:
	// each is a fact the page must show at least once.
	checks := []struct{ name, selector, want string }{
		// The pod in the pool, with the plugin that rejected it.
		{"the pod in the unschedulable pool", fmt.Sprintf(`.queue-col[data-queue="Unschedulable"] [data-pod=%q]`, pod), "NodeResourcesFit"},
		// Its moves, in the attempts panel: the NodeAdd that moved it.
		{"the event that moved it", `.attempt-lane .moves`, "NodeAdd"},
		// Its attempts: the last one bound it to the node that came.
		{"its binding", `.attempt-lane`, "scheduled on large"},
	}
	seen := map[string]bool{}
	last := map[string]string{} // each check's last text, for the failure message
	var results []e2e.Result
	for done := false; !done; {
		select {
		case results = <-play.Results:
			done = true
		case <-time.After(100 * time.Millisecond):
		}
		for _, c := range checks {
			got, err := text(b, c.selector)
			if err != nil {
				t.Fatalf("reading %s: %v", c.name, err)
			}
			last[c.name] = got
			if strings.Contains(got, c.want) {
				seen[c.name] = true
			}
		}
	}
	for _, res := range results {
		if !res.Passed {
			t.Fatalf("scenario %s failed: %v (log %s)", res.Scenario, res.Problems, res.Log)
		}
	}
	if len(results) != 2 {
		t.Fatalf("%d scenarios played, want 2", len(results))
	}
	for _, c := range checks {
		if !seen[c.name] {
			t.Errorf("the page never showed %s (%q in %s); last it showed %q", c.name, c.want, c.selector, last[c.name])
		}
	}
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	scored := play.Namespaces["score-least-allocated"] + "/next"
	t.Run("replay's score table", func(t *testing.T) {
		testReplayScoreTable(t, b, play.Recording, play.Logs["score-least-allocated"], scored)
	})
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
		r, ok := klogtext.Parse(sc.Text(), time.Now().Year())
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
	if err := chromedp.Do(b, chromedp.Navigate(url), chromedp.WaitVisible("body[data-ready]"), chromedp.WaitVisible(`.attempt.scheduled table.verdicts`)); err != nil {
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
