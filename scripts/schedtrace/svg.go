package schedtrace

import (
	"fmt"
	"html"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Selection picks the attempts to draw.
type Selection struct {
	// Pods, if set, keeps the attempts of the pods (or pod groups) whose
	// namespace/name it matches.
	Pods *regexp.Regexp
	// Kind keeps "preemption" attempts (whose PostFilter ran), "podgroup"
	// attempts, or, when empty, any.
	Kind string
	// Max is how many attempts to keep, the first ones; 0 means 3.
	Max int
}

// Attempts returns the attempts the selection keeps: the tasks of type
// schedulingAttempt (a pod on its own) and podGroupAttempt that no other
// attempt encloses, in the order they began.
func (tr *Trace) Attempts(sel Selection) []uint64 {
	var roots []*Task
	for _, tk := range tr.Tasks {
		if tk.Type != "schedulingAttempt" && tk.Type != "podGroupAttempt" {
			continue
		}
		if p, ok := tr.Tasks[tk.Parent]; ok && p.Type == "podGroupAttempt" {
			continue
		}
		if len(tk.Regions) == 0 && len(tk.Children) == 0 {
			continue
		}
		roots = append(roots, tk)
	}
	slices.SortFunc(roots, func(a, b *Task) int { return compareInt(a.Start, b.Start, int64(a.ID), int64(b.ID)) })
	limit := sel.Max
	if limit == 0 {
		limit = 3
	}
	var out []uint64
	for _, tk := range roots {
		if sel.Pods != nil && !sel.Pods.MatchString(tr.Pod(tk.ID)) {
			continue
		}
		switch sel.Kind {
		case "preemption":
			if !tr.hasRegion(tk.ID, "PostFilter") {
				continue
			}
		case "podgroup":
			if tk.Type != "podGroupAttempt" {
				continue
			}
		}
		out = append(out, tk.ID)
		if len(out) == limit {
			break
		}
	}
	return out
}

func (tr *Trace) hasRegion(id uint64, typ string) bool {
	for _, tk := range tr.Descendants(id) {
		for _, reg := range tk.Regions {
			if reg.Type == typ {
				return true
			}
		}
	}
	return false
}

// Piece is a stretch of time in which a goroutine ran inside an attempt's
// regions, with its innermost region's type.
type Piece struct {
	Goroutine  int64
	Start, End int64
	Type       string
}

// Attempt is one attempt laid out for drawing.
type Attempt struct {
	Task uint64
	Pod  string
	// Decision is the attempt's last decision log.
	Decision string
	// Goroutines are the goroutines that worked for it, in the order they
	// began to, each with the type of its first region.
	Goroutines []int64
	FirstType  map[int64]string
	// Spans are each goroutine's outermost regions of the attempt: wall
	// time it spent working for it, running or not.
	Spans map[int64][]Interval
	// Pieces are the running stretches, in time order.
	Pieces []Piece
	// Start and End bound its regions; CPU sums its pieces.
	Start, End, CPU int64
}

// Layout gathers what an attempt's drawing needs: every region of the
// task and of the tasks under it (a pod group's members, an asynchronous
// preemption), on every goroutine.
func (tr *Trace) Layout(id uint64) *Attempt {
	in := map[uint64]bool{}
	for _, tk := range tr.Descendants(id) {
		in[tk.ID] = true
	}
	a := &Attempt{Task: id, Pod: tr.Pod(id), Decision: tr.Decision(id), FirstType: map[int64]string{}, Spans: map[int64][]Interval{}, Start: -1}
	byG := map[int64][]*Region{}
	for _, reg := range tr.Regions {
		if !in[reg.Task] {
			continue
		}
		if _, seen := byG[reg.Goroutine]; !seen {
			a.Goroutines = append(a.Goroutines, reg.Goroutine)
			a.FirstType[reg.Goroutine] = reg.Type
		}
		byG[reg.Goroutine] = append(byG[reg.Goroutine], reg)
		if a.Start < 0 || reg.Start < a.Start {
			a.Start = reg.Start
		}
		a.End = max(a.End, reg.End)
		if reg.Parent == nil || !in[reg.Parent.Task] {
			a.Spans[reg.Goroutine] = append(a.Spans[reg.Goroutine], Interval{reg.Start, reg.End})
		}
	}
	for _, gid := range a.Goroutines {
		g := tr.Goroutines[gid]
		regs := byG[gid]
		for _, span := range a.Spans[gid] {
			for _, run := range g.Running {
				s, e := max(run.Start, span.Start), min(run.End, span.End)
				if s >= e {
					continue
				}
				a.Pieces = append(a.Pieces, splitByRegion(gid, s, e, regs)...)
			}
		}
	}
	sort.SliceStable(a.Pieces, func(i, j int) bool { return a.Pieces[i].Start < a.Pieces[j].Start })
	for _, p := range a.Pieces {
		a.CPU += p.End - p.Start
	}
	return a
}

// splitByRegion cuts [s, e) where the innermost region of regs changes.
func splitByRegion(gid, s, e int64, regs []*Region) []Piece {
	cuts := []int64{s, e}
	for _, r := range regs {
		if r.Start > s && r.Start < e {
			cuts = append(cuts, r.Start)
		}
		if r.End > s && r.End < e {
			cuts = append(cuts, r.End)
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	var out []Piece
	for i := 0; i+1 < len(cuts); i++ {
		a, b := cuts[i], cuts[i+1]
		var inner *Region
		for _, r := range regs {
			if r.Start <= a && b <= r.End && (inner == nil || r.Depth > inner.Depth) {
				inner = r
			}
		}
		if inner == nil {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Type == inner.Type && out[n-1].End == a {
			out[n-1].End = b
			continue
		}
		out = append(out, Piece{Goroutine: gid, Start: a, End: b, Type: inner.Type})
	}
	return out
}

// Rect is a bar of the CPU view: a goroutine's row, from X to X+W in
// cumulative CPU nanoseconds.
type Rect struct {
	Goroutine int64
	X, W      int64
	Type      string
	// CPU is the running time the bar stands for: W, unless mergeRects
	// joined bars across small gaps.
	CPU int64
}

// CPULayout lays the pieces along the attempt's cumulative CPU time: time
// is cut where any piece starts or ends, and in each cut, the goroutines
// running take turns, each advancing the axis by the time it ran. So a
// bar's length is the CPU its goroutine spent, waiting takes no room, and
// what ran in parallel sits side by side along the axis, in time order.
func (a *Attempt) CPULayout() []Rect {
	var cuts []int64
	for _, p := range a.Pieces {
		cuts = append(cuts, p.Start, p.End)
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	row := map[int64]int{}
	for i, g := range a.Goroutines {
		row[g] = i
	}
	var rects []Rect
	last := map[int64]int{} // goroutine -> index of its last rect
	var x int64
	active := []Piece{}
	next := 0
	for i := 0; i+1 < len(cuts); i++ {
		c0, c1 := cuts[i], cuts[i+1]
		for next < len(a.Pieces) && a.Pieces[next].Start <= c0 {
			active = append(active, a.Pieces[next])
			next++
		}
		kept := active[:0]
		for _, p := range active {
			if p.End > c0 {
				kept = append(kept, p)
			}
		}
		active = kept
		slices.SortFunc(active, func(p, q Piece) int { return row[p.Goroutine] - row[q.Goroutine] })
		for _, p := range active {
			if p.Start > c0 || p.End < c1 {
				continue
			}
			w := c1 - c0
			if j, ok := last[p.Goroutine]; ok && rects[j].Type == p.Type && rects[j].X+rects[j].W == x {
				rects[j].W += w
				rects[j].CPU += w
			} else {
				last[p.Goroutine] = len(rects)
				rects = append(rects, Rect{Goroutine: p.Goroutine, X: x, W: w, Type: p.Type, CPU: w})
			}
			x += w
		}
	}
	return rects
}

// Layout of the drawing, in pixels.
const (
	svgLabelWidth = 210
	svgPlotWidth  = 720
	svgRowHeight  = 16
	svgBarHeight  = 10
)

// WriteSVG draws the attempts twice: along cumulative CPU time (each bar's
// length is CPU time), then along wall time (a goroutine's light bar is
// the time it worked for the attempt, running or waiting; the colours
// inside are when it ran). Each panel has one scale for all attempts, so
// their costs compare. title goes on top, stamp at the bottom.
func (tr *Trace) WriteSVG(w io.Writer, ids []uint64, title, stamp string) error {
	if len(ids) == 0 {
		return fmt.Errorf("no attempt to draw")
	}
	attempts := make([]*Attempt, len(ids))
	layouts := make([][]Rect, len(ids))
	var maxCPU int64 = 1
	totals := map[string]int64{}
	for i, id := range ids {
		attempts[i] = tr.Layout(id)
		layouts[i] = attempts[i].CPULayout()
		maxCPU = max(maxCPU, attempts[i].CPU)
		for _, p := range attempts[i].Pieces {
			totals[p.Type] += p.End - p.Start
		}
	}
	wallOrigin, maxWall, wallUnit := wallAxis(attempts)
	types := make([]string, 0, len(totals))
	for t := range totals {
		types = append(types, t)
	}
	slices.SortFunc(types, func(a, b string) int {
		if totals[a] != totals[b] {
			return int(clampSign(totals[b] - totals[a]))
		}
		return strings.Compare(a, b)
	})
	color := colors(types)
	rows := 0
	for _, a := range attempts {
		rows += 1 + len(a.Goroutines)
	}
	legendRows := (len(types) + 2) / 3
	panelHeight := rows*svgRowHeight + 40
	height := 60 + 2*panelHeight + legendRows*16 + 50
	width := svgLabelWidth + svgPlotWidth + 30
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	y := 44
	drawPanel := func(heading, unit string, scale int64, bars func(i int, a *Attempt, row map[int64]int, y0 int)) {
		fmt.Fprintf(&b, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", y, html.EscapeString(heading))
		y += 8
		top := y
		for i, a := range attempts {
			cpu := float64(a.CPU) / 1e6
			wall := float64(a.End-a.Start) / 1e6
			label := fmt.Sprintf("%s: %.2f ms CPU in %d goroutines, %.2f ms wall", orDash(a.Pod), cpu, len(a.Goroutines), wall)
			if a.Decision != "" {
				label += "; " + a.Decision
			}
			fmt.Fprintf(&b, `<text x="10" y="%d" font-style="italic">%s</text>`+"\n", y+svgRowHeight-4, html.EscapeString(shorten(label, 130)))
			y += svgRowHeight
			row := map[int64]int{}
			for j, g := range a.Goroutines {
				row[g] = y + j*svgRowHeight
				fmt.Fprintf(&b, `<text x="18" y="%d">G%d %s</text>`+"\n", y+j*svgRowHeight+svgRowHeight-4, g, html.EscapeString(shorten(a.FirstType[g], 26)))
			}
			bars(i, a, row, y)
			y += len(a.Goroutines) * svgRowHeight
		}
		// The axis: five ticks over the panel's scale.
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>`+"\n", svgLabelWidth, y+4, svgLabelWidth+svgPlotWidth, y+4)
		for k := 0; k <= 5; k++ {
			x := svgLabelWidth + k*svgPlotWidth/5
			fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#eee"/>`+"\n", x, top, x, y+4)
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" fill="#555">%.2f</text>`+"\n", x, y+18, float64(scale)*float64(k)/5/1e6)
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#555">%s</text>`+"\n", svgLabelWidth+svgPlotWidth, y+32, unit)
		y += 44
	}
	px := func(v, scale int64) float64 { return svgLabelWidth + float64(v)/float64(scale)*svgPlotWidth }
	drawPanel("Along CPU time: a bar's length is the CPU its goroutine spent; waiting takes no room", "ms of CPU since the attempt began", maxCPU, func(i int, a *Attempt, row map[int64]int, _ int) {
		for _, r := range coalesce(mergeRects(layouts[i], maxCPU), maxCPU) {
			x0, x1 := px(r.X, maxCPU), px(r.X+r.W, maxCPU)
			fmt.Fprintf(&b, `<rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s"><title>%s: %.3f ms CPU</title></rect>`+"\n",
				x0, row[r.Goroutine]+(svgRowHeight-svgBarHeight)/2, max(x1-x0, 0.3), svgBarHeight, color(r.Type), html.EscapeString(r.Type), float64(r.CPU)/1e6)
		}
	})
	drawPanel("Along wall time: light, the goroutine worked for the attempt; coloured, it ran", wallUnit, maxWall, func(i int, a *Attempt, row map[int64]int, _ int) {
		origin := wallOrigin(a)
		for _, g := range a.Goroutines {
			for _, s := range a.Spans[g] {
				x0, x1 := px(s.Start-origin, maxWall), px(s.End-origin, maxWall)
				fmt.Fprintf(&b, `<rect x="%.2f" y="%d" width="%.2f" height="%d" fill="#e8e8e8"/>`+"\n", x0, row[g]+(svgRowHeight-svgBarHeight)/2, max(x1-x0, 0.3), svgBarHeight)
			}
		}
		// The running stretches, joined as the CPU view's bars are, at
		// this scale.
		var pieces []Rect
		for _, p := range a.Pieces {
			pieces = append(pieces, Rect{Goroutine: p.Goroutine, X: p.Start - origin, W: p.End - p.Start, Type: p.Type, CPU: p.End - p.Start})
		}
		for _, r := range coalesce(mergeRects(pieces, maxWall), maxWall) {
			x0, x1 := px(r.X, maxWall), px(r.X+r.W, maxWall)
			fmt.Fprintf(&b, `<rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s"><title>%s: %.3f ms CPU</title></rect>`+"\n",
				x0, row[r.Goroutine]+(svgRowHeight-svgBarHeight)/2, max(x1-x0, 0.3), svgBarHeight, color(r.Type), html.EscapeString(r.Type), float64(r.CPU)/1e6)
		}
	})
	// The legend: each region type, with its CPU time over the attempts.
	for k, t := range types {
		x := 10 + (k%3)*(width-20)/3
		ly := y + (k/3)*16
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/>`+"\n", x, ly-9, color(t))
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s %.3f ms</text>`+"\n", x+14, ly, html.EscapeString(shorten(t, 30)), float64(totals[t])/1e6)
	}
	y += legendRows*16 + 10
	fmt.Fprintf(&b, `<text x="10" y="%d" fill="#777">%s</text>`+"\n", y, html.EscapeString(stamp))
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// wallAxis chooses the wall-time panel's axis: where each attempt's zero
// is, how long the axis is (ns), and its unit. Attempts of several pods
// each start at zero, to compare them. Several attempts of one pod share
// the axis from its first one, in the order they began, so that the
// picture shows what the pod waited for between them: its backoff, its
// victims' deletion.
func wallAxis(attempts []*Attempt) (origin func(*Attempt) int64, scale int64, unit string) {
	onePod := len(attempts) > 1
	for _, a := range attempts {
		if a.Pod == "" || a.Pod != attempts[0].Pod {
			onePod = false
		}
	}
	scale = 1
	if onePod {
		first := attempts[0].Start
		for _, a := range attempts {
			scale = max(scale, a.End-first)
		}
		return func(*Attempt) int64 { return first }, scale, "ms since the pod's first attempt began"
	}
	for _, a := range attempts {
		scale = max(scale, a.End-a.Start)
	}
	return func(a *Attempt) int64 { return a.Start }, scale, "ms since the attempt began"
}

// mergeRects joins a row's consecutive bars of one colour across gaps, as
// long as the gaps a bar swallows add up to at most half a pixel at this
// scale: the drawing stays small, and no bar is more than half a pixel
// longer than the CPU it stands for (which its tooltip gives).
func mergeRects(rects []Rect, scale int64) []Rect {
	halfPixel := scale / (2 * svgPlotWidth)
	var out []Rect
	gaps := map[int]int64{} // index in out -> the gaps it swallowed
	last := map[int64]int{}
	for _, r := range rects {
		if j, ok := last[r.Goroutine]; ok && out[j].Type == r.Type {
			if gap := r.X - (out[j].X + out[j].W); gaps[j]+gap <= halfPixel {
				gaps[j] += gap
				out[j].W = r.X + r.W - out[j].X
				out[j].CPU += r.CPU
				continue
			}
		}
		last[r.Goroutine] = len(out)
		out = append(out, r)
	}
	return out
}

// coalesce joins, in each row, the bars that together span less than a
// pixel at this scale, whatever their types, with no more than half a
// pixel of gaps between them: at that size the eye sees one bar, so it is
// drawn as one, in the colour of the type with the most CPU in it, and
// the drawing keeps to about one bar per pixel of a row instead of one
// per plugin per node. The bars it returns keep their CPU.
func coalesce(rects []Rect, scale int64) []Rect {
	pixel := scale / svgPlotWidth
	type group struct {
		r     Rect
		gaps  int64
		byCPU map[string]int64
	}
	var out []*group
	last := map[int64]*group{}
	for _, r := range rects {
		if g, ok := last[r.Goroutine]; ok {
			end := g.r.X + g.r.W
			if gap := r.X - end; gap >= 0 && g.gaps+gap <= pixel/2 && r.X+r.W-g.r.X <= pixel {
				g.gaps += gap
				g.r.W = r.X + r.W - g.r.X
				g.r.CPU += r.CPU
				g.byCPU[r.Type] += r.CPU
				continue
			}
		}
		g := &group{r: r, byCPU: map[string]int64{r.Type: r.CPU}}
		last[r.Goroutine] = g
		out = append(out, g)
	}
	res := make([]Rect, len(out))
	for i, g := range out {
		best := g.r.Type
		for t, c := range g.byCPU {
			if c > g.byCPU[best] || (c == g.byCPU[best] && t < best) {
				best = t
			}
		}
		g.r.Type = best
		res[i] = g.r
	}
	return res
}

// The region types' colours: the scheduler's own phases have fixed
// colours; the other types of a drawing (the plugins) take the palette's
// in turn, the costliest first, so that no two share one until the
// palette runs out.
var fixed = map[string]string{
	"schedulingCycle":                "#9e9e9e",
	"bindingCycle":                   "#78909c",
	"podGroupCycle":                  "#8d6e63",
	"podGroupPodSchedulingAlgorithm": "#a1887f",
	"PreFilter":                      "#1565c0",
	"Filter":                         "#42a5f5",
	"PostFilter":                     "#c62828",
	"PreScore":                       "#6a1b9a",
	"Score":                          "#ab47bc",
	"Reserve":                        "#00897b",
	"Permit":                         "#43a047",
	"WaitOnPermit":                   "#c0ca33",
	"PreBind":                        "#ef6c00",
	"Bind":                           "#f9a825",
	"PostBind":                       "#ffcc80",
	"DryRunPreemption":               "#e57373",
	"PreemptPod":                     "#b71c1c",
	"evaluate":                       "#ef9a9a",
}

var palette = []string{"#2e7d32", "#0277bd", "#ad1457", "#827717", "#5e35b1", "#00838f", "#6d4c41", "#d84315", "#283593", "#558b2f", "#37474f", "#8e24aa"}

func colors(types []string) func(string) string {
	m := map[string]string{}
	next := 0
	for _, t := range types {
		if c, ok := fixed[t]; ok {
			m[t] = c
			continue
		}
		m[t] = palette[next%len(palette)]
		next++
	}
	return func(t string) string {
		if c, ok := m[t]; ok {
			return c
		}
		return "#000000"
	}
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
