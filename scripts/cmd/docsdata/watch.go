package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"minisched/scripts/docsgen"
	"minisched/scripts/watch"
)

// shot is one picture of make watch for the docs: a scenario played
// against a chapter and recorded, then its replay screenshotted at the
// first moment cond holds (or at the end), with pod's attempts open.
type shot struct {
	chapter, scenario string
	// pod is the scenario's pod whose attempts the page shows.
	pod string
	// selector is the part of the page in the picture.
	selector string
	// cond picks the moment; nil is the end of the recording.
	cond func(lanes []*watch.Lane, pod string) bool
	out  string
}

var shots = []shot{
	{chapter: "08", scenario: "queue-waits-for-node", pod: "big", selector: ".lane", out: "watch-queue.png", cond: waiting},
	// The posts' own: chapter 03's scores, chapter 06's queue.
	{chapter: "03", scenario: "score-least-allocated", pod: "next", selector: "#attempts", out: "watch-03-scores.png", cond: bound},
	{chapter: "06", scenario: "queue-waits-for-node", pod: "big", selector: ".lane", out: "watch-06-queue.png", cond: waiting},
	{chapter: "08", scenario: "score-least-allocated", pod: "next", selector: "#attempts", out: "watch-attempts.png", cond: bound},
	{chapter: "09", scenario: "preemption-minimal-victims", pod: "high", selector: "#attempts", out: "watch-preemption.png", cond: bound},
}

// waiting is the moment the pod waits in the unschedulable pool, with
// the event list drawn.
func waiting(lanes []*watch.Lane, pod string) bool {
	p := lanes[0].Pods[pod]
	return p != nil && p.Queue == watch.Unschedulable && len(lanes[0].Events) > 0
}

// bound is the moment the pod is bound: its attempts are all in, and the
// scenario has not yet deleted the nodes they judged.
func bound(lanes []*watch.Lane, pod string) bool {
	p := lanes[0].Pods[pod]
	return p != nil && p.Queue == watch.Bound
}

// watchShots plays each shot's scenario once and writes its pictures to
// dir.
func watchShots(root, tools, dir string) error {
	chrome, err := watch.Chromium()
	if err != nil {
		return err
	}
	b, stop, err := watch.Browser(chrome)
	if err != nil {
		return err
	}
	defer stop()
	recordings := map[string]*watch.Recording{}
	namespaces := map[string]string{}
	for _, s := range shots {
		key := s.chapter + "-" + s.scenario
		rec := recordings[key]
		if rec == nil {
			fmt.Printf("make watch: recording %s against chapter %s ...\n", s.scenario, s.chapter)
			if rec, namespaces[key], err = record(root, tools, s.chapter, s.scenario); err != nil {
				return err
			}
			recordings[key] = rec
		}
		pod := namespaces[key] + "/" + s.pod
		from, to := rec.Span()
		at := to
		if s.cond != nil {
			t, ok := rec.FirstTime(func(lanes []*watch.Lane) bool { return s.cond(lanes, pod) })
			if !ok {
				return fmt.Errorf("%s: the recording of %s never shows the moment it wants", s.out, key)
			}
			// A little later: the page shows what the next render drew.
			at = t.Add(300 * time.Millisecond)
		}
		if err := screenshot(b, rec, pod, at.Sub(from), s.selector, filepath.Join(dir, s.out)); err != nil {
			return fmt.Errorf("%s: %w", s.out, err)
		}
		fmt.Println("wrote", filepath.Join(dir, s.out))
	}
	return nil
}

// record plays a scenario against a chapter while a session records it,
// and returns the recording and the scenario's namespace.
func record(root, tools, chapter, scenario string) (*watch.Recording, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir, err := filepath.Abs(filepath.Join(root, ".cache", "docsdata-watch", chapter+"-"+scenario))
	if err != nil {
		return nil, "", err
	}
	_ = os.RemoveAll(dir)
	play, err := watch.Play{Root: root, Tools: tools, Dir: dir, Chapter: chapter, Scenarios: []string{scenario}}.Start(ctx)
	if err != nil {
		return nil, "", err
	}
	results := <-play.Results
	if err := play.Running.Stop(); err != nil {
		return nil, "", err
	}
	if len(results) != 1 || !results[0].Passed {
		return nil, "", fmt.Errorf("%s against %s failed: %v", scenario, chapter, results)
	}
	f, err := os.Open(play.Recording)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	rec, err := watch.ReadRecording(f)
	if err != nil {
		return nil, "", err
	}
	rec.Header.Caption = fmt.Sprintf("%s against %s, recorded by make docs-data on %s, %s", scenario, play.Chapter, time.Now().UTC().Format("2006-01-02"), docsgen.Machine())
	return rec, play.Namespaces[scenario], nil
}

// screenshot serves the recording as make watch REPLAY= does and takes
// the picture at offset t.
func screenshot(b context.Context, rec *watch.Recording, pod string, t time.Duration, selector, out string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: (&watch.Server{Replay: rec}).Handler()}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	u := fmt.Sprintf("http://%s/?pod=%s&t=%d", ln.Addr(), url.QueryEscape(pod), t.Milliseconds())
	return watch.Screenshot(b, u, selector, out)
}
