package timeline

import (
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// colors of the states, and of the marks.
var colors = map[State]string{
	Active:        "#2e7d32",
	Backoff:       "#ef6c00",
	Unschedulable: "#9e9e9e",
	InFlight:      "#1565c0",
}

// Layout of the drawing, in pixels.
const (
	labelWidth = 230
	plotWidth  = 640
	rowHeight  = 22
	barHeight  = 12
	topMargin  = 60
	axisHeight = 30
	legendRows = 2
)

// WriteSVG draws the timeline. title goes on top, stamp (date and machine)
// at the bottom.
func (tl *Timeline) WriteSVG(w io.Writer, title, stamp string) error {
	span := tl.span()
	x := func(d time.Duration) float64 {
		return labelWidth + float64(d)/float64(span)*plotWidth
	}
	height := topMargin + len(tl.Pods)*rowHeight + axisHeight + legendRows*18 + 20
	width := labelWidth + plotWidth + 20
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	fmt.Fprintf(&b, `<text x="10" y="36" fill="#555">one row per pod; time in seconds from the first line of the scheduler's log</text>`+"\n")
	for i, p := range tl.Pods {
		y := topMargin + i*rowHeight
		mid := float64(y) + rowHeight/2
		fmt.Fprintf(&b, `<text x="10" y="%.1f" dominant-baseline="middle">%s</text>`+"\n", mid, html.EscapeString(shorten(p.Name, 32)))
		for _, s := range p.Segments {
			h, dy := barHeight, (rowHeight-barHeight)/2
			if s.State == InFlight {
				h, dy = barHeight/2, (rowHeight-barHeight/2)/2
			}
			wid := math.Max(x(s.End)-x(s.Start), 1)
			what := legendName(s.State)
			if s.Event != "" {
				what += " (" + s.Event + ")"
			}
			fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s, %s to %s</title></rect>`+"\n",
				x(s.Start), y+dy, wid, h, colors[s.State], html.EscapeString(what), seconds(s.Start), seconds(s.End))
		}
		for _, a := range p.Attempts {
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="black" stroke-width="1.5"><title>attempt: %s at %s</title></line>`+"\n",
				x(a.At), x(a.At), y+2, y+rowHeight-2, html.EscapeString(a.Result), seconds(a.At))
		}
		if p.Bound >= 0 {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="5" fill="#c62828"><title>bound at %s</title></circle>`+"\n", x(p.Bound), mid, seconds(p.Bound))
		}
	}
	// Cluster events: a dashed line across the rows, the label on top.
	// Events a few pixels apart share one label, so they stay legible.
	lastLabelX := -100.0
	for _, m := range tl.Markers {
		if m.At > span {
			continue
		}
		mx := x(m.At)
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#6a1b9a" stroke-dasharray="3,3"><title>%s at %s</title></line>`+"\n",
			mx, mx, topMargin-4, topMargin+len(tl.Pods)*rowHeight, html.EscapeString(m.Label), seconds(m.At))
		if mx-lastLabelX > 60 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="10" fill="#6a1b9a" text-anchor="middle">%s</text>`+"\n", mx, topMargin-6, html.EscapeString(shortLabel(m.Label)))
			lastLabelX = mx
		}
	}
	axisY := topMargin + len(tl.Pods)*rowHeight + 6
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>`+"\n", labelWidth, labelWidth+plotWidth, axisY, axisY)
	step := tickStep(span)
	for d := time.Duration(0); d <= span; d += step {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#333"/><text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n",
			x(d), x(d), axisY, axisY+4, x(d), axisY+16, strconv.FormatFloat(d.Seconds(), 'g', -1, 64))
	}
	legendY := axisY + axisHeight
	lx := 10
	for _, s := range []State{Active, InFlight, Backoff, Unschedulable} {
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="14" height="10" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", lx, legendY-9, colors[s], lx+18, legendY, legendName(s))
		lx += 150
	}
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="black" stroke-width="1.5"/><text x="%d" y="%d">attempt</text>`+"\n", 10, 10, legendY+8, legendY+20, 18, legendY+18)
	fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="5" fill="#c62828"/><text x="%d" y="%d">bound</text>`+"\n", 165, legendY+14, 175, legendY+18)
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#6a1b9a" stroke-dasharray="3,3"/><text x="%d" y="%d">node event the scheduler saw (added, updated, deleted)</text>`+"\n", 310, 310, legendY+8, legendY+20, 318, legendY+18)
	fmt.Fprintf(&b, `<text x="10" y="%d" fill="#555">%s</text>`+"\n", height-6, html.EscapeString(stamp))
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// shortLabel drops the node's name from a marker's label: the tooltip has
// it, and the top line has room for a word or two.
func shortLabel(l string) string {
	f := strings.Fields(l)
	if len(f) >= 2 {
		return f[1]
	}
	return l
}

func legendName(s State) string {
	switch s {
	case Active:
		return "activeQ"
	case InFlight:
		return "being scheduled"
	case Backoff:
		return "backoffQ"
	}
	return "unschedulable pool"
}

// span is the length of the x axis: the end of the last segment, attempt
// or binding, rounded up to a whole tick, and at least a second.
func (tl *Timeline) span() time.Duration {
	var last time.Duration
	for _, p := range tl.Pods {
		for _, s := range p.Segments {
			last = max(last, s.End)
		}
		for _, a := range p.Attempts {
			last = max(last, a.At)
		}
	}
	last = max(last, time.Second)
	step := tickStep(last)
	return (last + step - 1) / step * step
}

// tickStep picks 1, 2, 5, 10... seconds, so that the axis has at most ten
// ticks.
func tickStep(span time.Duration) time.Duration {
	for _, s := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute} {
		if span/s <= 10 {
			return s
		}
	}
	return 10 * time.Minute
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n+3:]
}

// RenderFile reads a scheduler's log, keeps the pods of namespace ns, and
// writes their timeline to out.
func RenderFile(logPath, ns, title, stamp, out string) error {
	f, err := os.Open(logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	tl, err := Parse(f)
	if err != nil {
		return fmt.Errorf("%s: %w", logPath, err)
	}
	tl = tl.Filter(ns + "/")
	if len(tl.Pods) == 0 {
		return fmt.Errorf("%s: no pod of namespace %s in the log", logPath, ns)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	var b strings.Builder
	if err := tl.WriteSVG(&b, title, stamp); err != nil {
		return err
	}
	return os.WriteFile(out, []byte(b.String()), 0o644)
}
