// Package bench measures how fast each chapter, and kube-scheduler, schedule
// pods on the local cluster (make bench). Its throughput arithmetic follows
// upstream scheduler_perf (test/integration/scheduler_perf/util.go at
// k8s.io/kubernetes v1.37.1): the count of scheduled pods is sampled every
// second, and the per-interval rates are summarised as an average and
// percentiles.
package bench

import (
	"math"
	"slices"
	"time"
)

// Summary is a throughput summary in pods/s.
type Summary struct {
	Average float64 `json:"average"`
	Perc50  float64 `json:"perc50"`
	Perc90  float64 `json:"perc90"`
	Perc99  float64 `json:"perc99"`
	Samples int     `json:"samples"`
}

// Summarize sorts the samples and picks the percentiles as scheduler_perf
// does: the value at index ceil(n·p/100)-1, with no interpolation. Zero
// samples give a zero Summary (the run was shorter than one interval).
func Summarize(samples []float64) Summary {
	n := len(samples)
	if n == 0 {
		return Summary{}
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	sum := 0.0
	for _, s := range sorted {
		sum += s
	}
	at := func(p int) float64 { return sorted[int(math.Ceil(float64(n*p)/100))-1] }
	return Summary{Average: sum / float64(n), Perc50: at(50), Perc90: at(90), Perc99: at(99), Samples: n}
}

// sampler turns counts of scheduled pods, observed about once a second,
// into throughput samples, the way scheduler_perf's collector does:
//   - nothing is recorded until the first pod is scheduled, and that first
//     observation only starts the clock (sampling and pod creation start
//     independently, so it would be an outlier);
//   - an interval in which no pod was scheduled is not recorded as 0 pods/s:
//     the sampler waits for the next pod, then records the rate over the
//     whole wait once per interval waited, so percentiles keep their weight;
//   - rates use the real time between observations, not the nominal second.
type sampler struct {
	interval time.Duration
	started  bool
	last     int
	lastAt   time.Time
	skipped  int
	samples  []float64
}

func newSampler(interval time.Duration) *sampler { return &sampler{interval: interval} }

// observe records the count of scheduled pods seen at now.
func (s *sampler) observe(now time.Time, scheduled int) {
	if scheduled == 0 {
		return
	}
	if !s.started {
		s.started, s.last, s.lastAt = true, scheduled, now
		return
	}
	if scheduled == s.last {
		s.skipped++
		return
	}
	rate := float64(scheduled-s.last) / now.Sub(s.lastAt).Seconds()
	for i := 0; i <= s.skipped; i++ {
		s.samples = append(s.samples, rate)
	}
	s.last, s.lastAt, s.skipped = scheduled, now, 0
}
