package watch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"minisched/scripts/e2e"
)

// Session is the live state of every lane: the inputs arrive from the
// lanes' informers and log files, each is applied under one lock, written
// to the recording if there is one, and the page's streams are told.
type Session struct {
	mu    sync.Mutex
	lanes []*Lane
	rec   *Recorder
	// version counts the inputs applied; a stream sends the state when
	// it moved.
	version uint64
	changed *sync.Cond
	// cache is the JSON of cacheVersion.
	cache        []byte
	cacheVersion uint64
	// followers are the goroutines that feed the session, and factories
	// the informers': Close waits for both.
	followers sync.WaitGroup
	factories []informers.SharedInformerFactory
}

// Close waits until nothing feeds the session any more: call it once the
// context given to FollowCluster and FollowLog is done.
func (s *Session) Close() {
	s.mu.Lock()
	factories := s.factories
	s.mu.Unlock()
	for _, f := range factories {
		f.Shutdown()
	}
	s.followers.Wait()
}

// NewSession starts a session of the lanes of h (its names, which are
// kube-scheduler's, the chapters' numbers); rec may be nil.
func NewSession(h Header, rec *Recorder) *Session {
	s := &Session{rec: rec}
	s.changed = sync.NewCond(&s.mu)
	for i, n := range h.Lanes {
		l := NewLane(n)
		l.Upstream = i < len(h.Upstream) && h.Upstream[i]
		if i < len(h.Chapters) {
			l.Chapter = h.Chapters[i]
		}
		s.lanes = append(s.lanes, l)
	}
	return s
}

// Input applies one input, stamped with the time it is applied: a
// recording's order is then its times' order.
func (s *Session) Input(in Input) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in.At = time.Now()
	if err := Apply(s.lanes, in); err != nil {
		return
	}
	if s.rec != nil {
		if err := s.rec.Write(in); err != nil {
			klog.Background().Error(err, "Recording stopped")
			s.rec = nil
		}
	}
	s.version++
	s.changed.Broadcast()
}

// State is what /api/state and /api/stream send.
type State struct {
	Mode  string `json:"mode"` // live or replay
	Lanes []View `json:"lanes"`
	// From and To span a replay; At is the time shown.
	From    time.Time `json:"from,omitzero"`
	To      time.Time `json:"to,omitzero"`
	At      time.Time `json:"at,omitzero"`
	Warning string    `json:"warning,omitempty"`
	// Caption is a replay's: what was recorded, when and where.
	Caption string `json:"caption,omitempty"`
	// Version is the live session's count of inputs.
	Version uint64 `json:"version"`
}

// Snapshot returns the state as JSON, and its version. Every stream asks
// for it: it is marshalled once per version.
func (s *Session) Snapshot(warning string) ([]byte, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cache != nil && s.cacheVersion == s.version {
		return s.cache, s.version, nil
	}
	st := State{Mode: "live", Warning: warning, Version: s.version}
	for _, l := range s.lanes {
		st.Lanes = append(st.Lanes, l.View())
	}
	// Marshalled under the lock: the views share the lanes' pods.
	data, err := json.Marshal(st)
	if err == nil {
		s.cache, s.cacheVersion = data, s.version
	}
	return data, s.version, err
}

// Wait returns once the version is past v or ctx is done.
func (s *Session) Wait(ctx context.Context, v uint64) uint64 {
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.changed.Broadcast()
	})
	defer stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.version <= v && ctx.Err() == nil {
		s.changed.Wait()
	}
	return s.version
}

// Flush writes out the recording.
func (s *Session) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec == nil {
		return nil
	}
	return s.rec.Flush()
}

// FollowCluster feeds lane i with the cluster's pods, nodes and Events
// until ctx is done. It returns once the informers have synced.
func (s *Session) FollowCluster(ctx context.Context, i int, client kubernetes.Interface) error {
	// Without managedFields: the page never shows them, and a recording
	// would be mostly them.
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(stripManagedFields))
	add := func(obj any, deleted bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		in := Input{Lane: i, Deleted: deleted}
		switch o := obj.(type) {
		case *v1.Pod:
			in.Pod = o
		case *v1.Node:
			in.Node = o
		case *eventsv1.Event:
			in.Event = o
		default:
			return
		}
		s.Input(in)
	}
	handlers := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { add(obj, false) },
		UpdateFunc: func(_, obj any) { add(obj, false) },
		DeleteFunc: func(obj any) { add(obj, true) },
	}
	for _, inf := range []cache.SharedIndexInformer{
		factory.Core().V1().Nodes().Informer(),
		factory.Core().V1().Pods().Informer(),
		factory.Events().V1().Events().Informer(),
	} {
		if _, err := inf.AddEventHandler(handlers); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.factories = append(s.factories, factory)
	s.mu.Unlock()
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return errors.New("the informer of " + typ.String() + " did not sync")
		}
	}
	return nil
}

func stripManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

// FollowLog feeds lane i with the lines of the log at path, as the
// scheduler writes them, until ctx is done: from the start of the file,
// then each line once it is complete. The file may not exist yet, and may
// be truncated (a scheduler restarted on another port writes it anew):
// then it is read from its start again.
func (s *Session) FollowLog(ctx context.Context, i int, path string) {
	s.followers.Go(func() {
		if err := s.followLog(ctx, i, path); err != nil {
			klog.Background().Error(err, "Following the log stopped", "log", path)
		}
	})
}

func (s *Session) followLog(ctx context.Context, i int, path string) error {
	wait := func() bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
			return true
		}
	}
	var f *os.File
	for f == nil {
		var err error
		if f, err = os.Open(path); err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				return err
			}
			if !wait() {
				return nil
			}
		}
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1024*1024)
	var partial []byte
	var offset int64
	for {
		line, err := r.ReadBytes('\n')
		offset += int64(len(line))
		partial = append(partial, line...)
		if err == nil {
			s.Input(Input{Lane: i, Log: string(partial[:len(partial)-1])})
			partial = partial[:0]
			continue
		}
		if !errors.Is(err, io.EOF) {
			return err
		}
		if st, err := f.Stat(); err == nil && st.Size() < offset {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return err
			}
			r.Reset(f)
			partial, offset = partial[:0], 0
		}
		if !wait() {
			return nil
		}
	}
}

// FollowMetrics feeds lane i with the scheduler's scheduler_pending_pods
// gauge, read from its /metrics at addr (e2e.GetMetrics) once a second
// until ctx is done, each time it changes. A scheduler without the gauge
// (chapters before 06) or not answering yet gives nothing.
func (s *Session) FollowMetrics(ctx context.Context, i int, addr string, kubeScheduler bool) {
	s.followers.Go(func() {
		var last map[string]float64
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			page, err := e2e.GetMetrics(ctx, addr, kubeScheduler)
			if err != nil {
				continue
			}
			pending, err := parsePendingPods(bytes.NewReader(page))
			if err != nil || pending == nil || maps.Equal(pending, last) {
				continue
			}
			last = pending
			s.Input(Input{Lane: i, PendingPods: pending})
		}
	})
}

// parsePendingPods picks the lines scheduler_pending_pods{queue="active"} 3
// out of a Prometheus text page.
func parsePendingPods(r io.Reader) (map[string]float64, error) {
	var out map[string]float64
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "scheduler_pending_pods{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		queue := ""
		for _, l := range strings.Split(labels, ",") {
			if v, ok := strings.CutPrefix(l, `queue="`); ok {
				queue = strings.TrimSuffix(v, `"`)
			}
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if queue == "" || err != nil {
			continue
		}
		if out == nil {
			out = map[string]float64{}
		}
		out[queue] += n // one series per profile
	}
	return out, sc.Err()
}
