package bench

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		name    string
		samples []float64
		want    Summary
	}{
		{"no samples", nil, Summary{}},
		{"one sample", []float64{7}, Summary{Average: 7, Perc50: 7, Perc90: 7, Perc99: 7, Samples: 1}},
		// ceil(4·50/100)-1 = 1, ceil(4·90/100)-1 = 3, ceil(4·99/100)-1 = 3.
		{"four, unsorted", []float64{40, 10, 30, 20}, Summary{Average: 25, Perc50: 20, Perc90: 40, Perc99: 40, Samples: 4}},
		// ten samples 1..10: index 4, 8 and 9.
		{"ten", []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, Summary{Average: 5.5, Perc50: 5, Perc90: 9, Perc99: 10, Samples: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Summarize(tt.samples)); diff != "" {
				t.Errorf("Summarize (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSamplerObserve(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type obs struct {
		ms, scheduled int
	}
	tests := []struct {
		name string
		obs  []obs
		want []float64
	}{
		{"nothing scheduled", []obs{{1000, 0}, {2000, 0}}, nil},
		{"the first observation only starts the clock", []obs{{1000, 0}, {2000, 50}}, nil},
		{"steady", []obs{{1000, 10}, {2000, 30}, {3000, 60}}, []float64{20, 30}},
		{"real time, not the nominal second", []obs{{1000, 10}, {2500, 40}}, []float64{20}},
		// No pod between 2 s and 4 s: the 30 pods of 2 s..5 s count as
		// 10 pods/s three times, not as 0, 0, 30.
		{"an idle stretch is spread over the intervals it took", []obs{{1000, 10}, {2000, 20}, {3000, 20}, {4000, 20}, {5000, 50}}, []float64{10, 10, 10, 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSampler(time.Second)
			for _, o := range tt.obs {
				s.observe(at(o.ms), o.scheduled)
			}
			if diff := cmp.Diff(tt.want, s.samples); diff != "" {
				t.Errorf("samples (-want +got):\n%s", diff)
			}
		})
	}
}
