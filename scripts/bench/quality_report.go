package bench

import (
	"fmt"
	"html"
	"strings"
)

// QualityReport is what make quality writes to JSON and to
// docs/data/quality.{json,md,svg}.
type QualityReport struct {
	Date    string            `json:"date"`
	Machine string            `json:"machine"`
	Runs    int               `json:"runs"`
	Config  QualityConfig     `json:"config"`
	Results [][]QualityResult `json:"results"`
	Median  []QualityResult   `json:"median"`
	Targets []Check           `json:"targets"`
}

func (r *QualityReport) of(workload string) []QualityResult {
	var out []QualityResult
	for _, x := range r.Median {
		if x.Workload == workload {
			out = append(out, x)
		}
	}
	return out
}

// JudgeQuality checks issue 16's quality target on the medians: chapter
// 10's spread skew with its defaults no worse than kube-scheduler's with
// its defaults. Power-of-two choices is reported against both, with no
// target. It is reported, never asserted.
func JudgeQuality(median []QualityResult, chapter10, powerOfTwo string) []Check {
	find := func(name string) (QualityResult, bool) {
		for _, x := range median {
			if x.Workload == Spread && x.Name == name {
				return x, true
			}
		}
		return QualityResult{}, false
	}
	c := Check{Target: fmt.Sprintf("%s spread skew ≤ %s's", chapter10, UpstreamDefaults), Measured: "not measured"}
	ours, ok1 := find(chapter10)
	theirs, ok2 := find(UpstreamDefaults)
	if ok1 && ok2 {
		c.Measured = fmt.Sprintf("%d vs %d pods (CPU CV %.3f vs %.3f)", ours.Skew(), theirs.Skew(), ours.CPUCV, theirs.CPUCV)
		c.Met = ours.Skew() <= theirs.Skew() && !ours.DNF
	}
	checks := []Check{c}
	if p2, ok := find(powerOfTwo); ok && ok1 && ok2 {
		checks = append(checks, Check{
			Target: fmt.Sprintf("%s against %s and %s (reported, no target)", powerOfTwo, chapter10, UpstreamDefaults),
			Measured: fmt.Sprintf("skew %d vs %d and %d; time to place %.1f s vs %.1f s and %.1f s",
				p2.Skew(), ours.Skew(), theirs.Skew(), p2.Seconds, ours.Seconds, theirs.Seconds),
			Met: true,
		})
	}
	return checks
}

// Markdown renders the tables of docs/quality.md; svg is the chart's path
// relative to the page.
func (r *QualityReport) Markdown(svg string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured on %s, %s; median of %d runs.\n\n", r.Date, r.Machine, r.Runs)
	fmt.Fprintf(&b, "![Spread skew and nodes used, by scheduler](%s)\n\n", svg)
	spread := r.of(Spread)
	if len(spread) > 0 {
		fmt.Fprintf(&b, "**Spread** after a fast scale-up: %d identical pods of 100m created at once on %d empty nodes of 4 CPUs (a perfect spread puts %s pods on each).\n\n",
			r.Config.SpreadPods, r.Config.SpreadNodes, perNode(r.Config.SpreadPods, r.Config.SpreadNodes))
		b.WriteString("| scheduler | strategy | pods per node, min–max | skew | CPU requested per node, CV | time to place (s) | pending |\n|---|---|---|---|---|---|---|\n")
		for _, x := range spread {
			fmt.Fprintf(&b, "| %s | %s | %d–%d | %d | %.3f | %s | %d |\n", x.Name, x.Strategy, x.MinPods, x.MaxPods, x.Skew(), x.CPUCV, seconds(x), x.Pending)
		}
		b.WriteString("\n")
	}
	half := r.of(PackHalf)
	if len(half) > 0 {
		fmt.Fprintf(&b, "**Bin packing, half full**: %d pods of 500m to 2 CPUs, cut from %d nodes' CPU, created at once on %d nodes.\n\n", half[0].Pods, r.Config.PackNodes/2, r.Config.PackNodes)
		b.WriteString("| scheduler | strategy | nodes used | lower bound | first-fit-decreasing | time to place (s) | pending |\n|---|---|---|---|---|---|---|\n")
		for _, x := range half {
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %s | %d |\n", x.Name, x.Strategy, x.NodesUsed, x.LowerBound, x.FFDNodes, seconds(x), x.Pending)
		}
		b.WriteString("\n")
	}
	full := r.of(PackFull)
	if len(full) > 0 {
		fmt.Fprintf(&b, "**Bin packing, full**: %d pods cut from all %d nodes' CPU, created at once: a perfect packing places every pod.\n\n", full[0].Pods, r.Config.PackNodes)
		b.WriteString("| scheduler | strategy | pending | of which a repacking would place | first-fit-decreasing leaves out | time to place (s) |\n|---|---|---|---|---|---|\n")
		for _, x := range full {
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %s |\n", x.Name, x.Strategy, x.Pending, x.Repackable, x.FFDPending, seconds(x))
		}
		b.WriteString("\n")
	}
	if len(r.Targets) > 0 {
		b.WriteString("| target | measured | met |\n|---|---|---|\n")
		for _, c := range r.Targets {
			met := "no"
			if c.Met {
				met = "yes"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", c.Target, c.Measured, met)
		}
	}
	return b.String()
}

func perNode(pods, nodes int) string {
	if nodes == 0 {
		return "0"
	}
	if pods%nodes == 0 {
		return fmt.Sprint(pods / nodes)
	}
	return fmt.Sprintf("%d or %d", pods/nodes, pods/nodes+1)
}

func seconds(x QualityResult) string {
	if x.DNF {
		return "DNF"
	}
	return fmt.Sprintf("%.1f", x.Seconds)
}

// SVG draws two panels of horizontal bars: each scheduler's spread skew,
// and the nodes each used on the half-full packing against the lower
// bound (a line).
func (r *QualityReport) SVG() string {
	const barH, gap, width = 18, 6, 360
	spread, half := r.of(Spread), r.of(PackHalf)
	var labels []string
	for _, x := range append(append([]QualityResult{}, spread...), half...) {
		labels = append(labels, x.Name+" · "+x.Strategy)
	}
	left := labelColumn(labels)
	top1 := 40
	top2 := top1 + len(spread)*(barH+gap) + 50
	height := top2 + len(half)*(barH+gap) + 30
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", left+width+120, height)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	color := func(x QualityResult) string {
		switch {
		case x.DNF:
			return "#bbbbbb"
		case strings.HasPrefix(x.Name, "kube-scheduler"):
			return "#ee6677"
		case strings.Contains(x.Name, "power of two"):
			return "#ccbb44"
		}
		return "#4477aa"
	}
	bars := func(title string, top int, rs []QualityResult, value func(QualityResult) int, mark func(QualityResult) int) {
		fmt.Fprintf(&b, `<text x="10" y="%d" font-size="14">%s</text>`+"\n", top-14, html.EscapeString(title))
		maxV := 1
		for _, x := range rs {
			maxV = max(maxV, value(x), mark(x))
		}
		for i, x := range rs {
			y := top + i*(barH+gap)
			w := width * value(x) / maxV
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-8, y+barH-5, html.EscapeString(x.Name+" · "+x.Strategy))
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", left, y, max(w, 1), barH, color(x))
			fmt.Fprintf(&b, `<text x="%d" y="%d">%d</text>`+"\n", left+max(w, 1)+6, y+barH-5, value(x))
			if m := mark(x); m > 0 {
				mx := left + width*m/maxV
				fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black" stroke-width="2"/>`+"\n", mx, y-2, mx, y+barH+2)
			}
		}
	}
	bars(fmt.Sprintf("Spread: most minus fewest pods on a node (%d pods, %d nodes)", r.Config.SpreadPods, r.Config.SpreadNodes), top1, spread,
		func(x QualityResult) int { return x.Skew() }, func(QualityResult) int { return 0 })
	bars(fmt.Sprintf("Bin packing, half full: nodes used of %d (line: lower bound)", r.Config.PackNodes), top2, half,
		func(x QualityResult) int { return x.NodesUsed }, func(x QualityResult) int { return x.LowerBound })
	fmt.Fprintf(&b, `<text x="10" y="%d" font-size="11" fill="#555">median of %d runs · %s · %s</text>`+"\n", height-8, r.Runs, html.EscapeString(r.Date), html.EscapeString(r.Machine))
	b.WriteString("</svg>\n")
	return b.String()
}
