package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp"
	"k8s.io/client-go/kubernetes"

	"minisched/scripts/e2e"
)

// Play is shared KWOK scenarios played one after the other against a
// chapter while a session watches and records them: what the browser
// test looks at live, and what make docs-data screenshots afterwards.
type Play struct {
	Root, Tools string
	// Dir receives the binary, the cluster, the logs and the recording.
	Dir     string
	Chapter string // "08"
	// Scenarios are file names of scripts/e2e/scenarios, without .yaml.
	Scenarios []string
	// Race builds the chapter with the race detector, as tests do.
	Race bool
}

// Played is a play in progress.
type Played struct {
	Running   *Running
	Recording string
	// Chapter is the chapter's directory.
	Chapter string
	// Logs and Namespaces are each scenario's, by scenario.
	Logs, Namespaces map[string]string
	// Results delivers the scenarios' results, in order, when the last
	// has ended.
	Results <-chan []e2e.Result
}

// Start builds the chapter, starts a session on a fresh cluster recording
// to Dir/watch.jsonl, and plays the scenarios. Stop the Running when done:
// it waits for the scenario being played to end first.
func (p Play) Start(ctx context.Context) (*Played, error) {
	all, err := e2e.FindChapters(p.Root)
	if err != nil {
		return nil, err
	}
	chosen, err := e2e.SelectChapters(all, p.Chapter)
	if err != nil {
		return nil, err
	}
	if len(chosen) != 1 || len(p.Scenarios) == 0 {
		return nil, fmt.Errorf("chapter %q, scenarios %q: want one chapter and a scenario", p.Chapter, p.Scenarios)
	}
	c := chosen[0]
	bin, err := e2e.BuildChapterWith(p.Root, c, filepath.Join(p.Dir, "bin"), p.Race)
	if err != nil {
		return nil, err
	}
	var scenarios []*e2e.Scenario
	for _, name := range p.Scenarios {
		sc, err := e2e.Load(filepath.Join(p.Root, "scripts", "e2e", "scenarios", name+".yaml"))
		if err != nil {
			return nil, err
		}
		scenarios = append(scenarios, sc)
	}
	logDir := filepath.Join(p.Dir, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	played := &Played{Recording: filepath.Join(p.Dir, "watch.jsonl"), Chapter: c.Dir, Logs: map[string]string{}, Namespaces: map[string]string{}}
	for _, sc := range scenarios {
		ns := fmt.Sprintf("ch%02d-%s", c.Number, sc.Name)
		played.Namespaces[sc.Name], played.Logs[sc.Name] = ns, filepath.Join(logDir, ns+".log")
	}
	r, err := Start(ctx, Options{
		Tools: p.Tools, Dir: filepath.Join(p.Dir, "watch"), Addr: "127.0.0.1:0", Record: played.Recording,
		Examples: filepath.Join(p.Root, "docs", "examples"),
		Lanes:    []LaneSpec{{Name: c.Dir, Log: played.Logs[scenarios[0].Name], Scheduler: e2e.Scheduler{Chapter: c.Number}}},
	})
	if err != nil {
		return nil, err
	}
	played.Running = r
	for _, sc := range scenarios[1:] {
		r.FollowLog(0, played.Logs[sc.Name])
	}
	client, err := kubernetes.NewForConfig(r.Configs[0])
	if err != nil {
		_ = r.Stop()
		return nil, err
	}
	runner := &e2e.Runner{Cluster: r.Clusters[0], Client: client, LogDir: logDir}
	sched := e2e.Scheduler{Chapter: c.Number, Label: c.Dir, Command: append([]string{bin}, ChapterFlags...)}
	results := make(chan []e2e.Result, 1)
	played.Results = results
	playing := make(chan struct{})
	go func() {
		defer close(playing)
		var out []e2e.Result
		for _, sc := range scenarios {
			res := runner.Run(ctx, sc, sched)
			out = append(out, res)
			if !res.Passed {
				break
			}
		}
		results <- out
	}()
	// The runner's scheduler and namespaces are gone once it returns:
	// Stop (which runs its steps last to first) waits for that before it
	// stops anything. Cancel ctx first to end the scenario early.
	r.stop = append(r.stop, func() error { <-playing; return nil })
	return played, nil
}

// Chromium returns Debian's Chromium, or an error that says how to
// install it.
func Chromium() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", errors.New(InstallChromium)
}

// InstallChromium is what the browser test and make docs-data say when
// Chromium is missing.
const InstallChromium = "Chromium is not installed (sudo apt-get install chromium): make watch's browser tests and pictures need it"

// Browser starts a headless Chromium; cancel stops it.
func Browser(path string) (context.Context, context.CancelFunc, error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1000))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	cancel := func() { cancelCtx(); cancelAlloc() }
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		return nil, nil, fmt.Errorf("starting Chromium: %w", err)
	}
	return ctx, cancel, nil
}

// Screenshot opens url, waits until selector is visible, and writes a PNG
// of that element to out.
func Screenshot(ctx context.Context, url, selector, out string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible("body[data-ready]"), chromedp.WaitVisible(selector)); err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	png, err := chromedp.Run(ctx, chromedp.Screenshot(selector))
	if err != nil {
		return err
	}
	return os.WriteFile(out, png, 0o644)
}

// FirstTime returns the time of the first input after which cond holds of
// the lanes, and whether it ever does.
func (rec *Recording) FirstTime(cond func([]*Lane) bool) (time.Time, bool) {
	lanes := rec.At(time.Time{})
	for _, in := range rec.Inputs {
		_ = Apply(lanes, in)
		if cond(lanes) {
			return in.At, true
		}
	}
	return time.Time{}, false
}
