package publish

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// Medium takes neither tables, nor Mermaid, nor SVG, nor links within a
// page, and keeps code blocks when a rendered page is pasted into its
// editor. So each English post becomes one HTML page whose tables are
// preformatted text, whose diagrams and charts are PNG pictures inside
// the page (data: URIs), and whose every link is absolute.

// MediumPost is an English post made ready for Medium.
type MediumPost struct {
	Slug, Title string
	// Markdown is the post as Medium should show it, its pictures named
	// by file (NAME.png).
	Markdown string
	// Images are the pictures to copy or draw beside the page, and
	// Diagrams the Mermaid blocks to draw.
	Images   []Image
	Diagrams []Diagram
}

// Medium turns an English post into a MediumPost. Links to the
// repository, and to other posts and to the page's own sections, go to
// the repository's pages on GitHub at the pinned commit: Medium resolves
// no relative link and has no anchors.
func Medium(o Options, p Page) (*MediumPost, error) {
	t, body := title(stripComments(stripNav(stripFrontMatter(p.Markdown))))
	if t == "" {
		return nil, fmt.Errorf("%s: no # title", p.Path)
	}
	post := &MediumPost{Slug: p.Slug(), Title: t}
	body = unwrap(body)
	body = tablesToText(body)
	var problems []string
	body = rewriteLinks(body, func(target string, image bool) string {
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			return target
		}
		file, anchor, _ := strings.Cut(target, "#")
		rel := p.Path
		if file != "" {
			rel = path.Clean(path.Join(path.Dir(p.Path), file))
		}
		if image {
			ext := path.Ext(rel)
			name := strings.TrimSuffix(path.Base(rel), ext) + ".png"
			post.Images = append(post.Images, Image{Source: rel, Target: name})
			return name
		}
		u, _, err := repoURL(o, rel, anchor)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", p.Path, err))
			return target
		}
		return u
	})
	// The diagrams' pictures come after the links: they sit beside the page.
	body = replaceMermaid(body, func(string) bool { return false }, func(i int, src string) string {
		name := fmt.Sprintf("%s-diagram-%d.png", post.Slug, i)
		post.Diagrams = append(post.Diagrams, Diagram{Source: src, Name: name})
		return fmt.Sprintf("![Diagram %d](%s)", i, name)
	})
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	post.Markdown = body
	return post, nil
}

// HTML is the post as one self-contained page: png returns the bytes of
// each picture the post names, which go into the page as data: URIs.
func (m *MediumPost) HTML(png func(name string) ([]byte, error)) ([]byte, error) {
	var body bytes.Buffer
	md := goldmark.New(goldmark.WithExtensions(extension.Strikethrough, extension.Linkify))
	if err := md.Convert([]byte(m.Markdown), &body); err != nil {
		return nil, err
	}
	var firstErr error
	out := imgSrcRe.ReplaceAllStringFunc(body.String(), func(s string) string {
		name := html.UnescapeString(imgSrcRe.FindStringSubmatch(s)[1])
		if strings.Contains(name, "://") {
			return s
		}
		data, err := png(name)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("%s: picture %s: %w", m.Slug, name, err)
			}
			return s
		}
		return `src="data:image/png;base64,` + base64.StdEncoding.EncodeToString(data) + `"`
	})
	if firstErr != nil {
		return nil, firstErr
	}
	var page bytes.Buffer
	fmt.Fprintf(&page, `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>%s</title>
<style>
body { max-width: 720px; margin: 2em auto; padding: 0 1em; font: 18px/1.6 Georgia, serif; color: #242424; }
pre { background: #f2f2f2; padding: 1em; overflow-x: auto; font: 14px/1.4 Menlo, monospace; }
code { font-family: Menlo, monospace; font-size: 0.9em; }
img { max-width: 100%%; }
blockquote { border-left: 3px solid #242424; margin-left: 0; padding-left: 1em; }
</style>
</head>
<body>
<article>
<h1>%s</h1>
%s</article>
</body>
</html>
`, html.EscapeString(m.Title), html.EscapeString(m.Title), out)
	return page.Bytes(), nil
}

var imgSrcRe = regexp.MustCompile(`src="([^"]*)"`)

// tablesToText turns each table into a preformatted block with its
// columns aligned: Medium has no tables, and keeps a code block as it is.
// Inline markup in the cells is dropped, a link keeps its text.
func tablesToText(md string) string {
	ls := split(md)
	var out []line
	for i := 0; i < len(ls); i++ {
		if ls[i].code || !tableRowRe.MatchString(ls[i].text) || i+1 >= len(ls) || !tableSepRe.MatchString(ls[i+1].text) {
			out = append(out, ls[i])
			continue
		}
		var rows [][]string
		j := i
		for ; j < len(ls) && !ls[j].code && tableRowRe.MatchString(ls[j].text); j++ {
			if j == i+1 {
				continue // the separator
			}
			rows = append(rows, cells(ls[j].text))
		}
		out = append(out, line{text: "```text", code: true})
		for _, r := range alignRows(rows) {
			out = append(out, line{text: r, code: true})
		}
		out = append(out, line{text: "```", code: true})
		i = j - 1
	}
	return join(out)
}

var (
	tableSepRe = regexp.MustCompile(`^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$`)
	cellLinkRe = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// cells splits a table row into its cells' plain text.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(strings.TrimSuffix(row, "|"), "|")
	row = strings.ReplaceAll(row, `\|`, "\x00")
	var out []string
	for _, c := range strings.Split(row, "|") {
		c = strings.ReplaceAll(c, "\x00", "|")
		c = cellLinkRe.ReplaceAllString(c, "$1")
		c = brRe.ReplaceAllString(c, " / ")
		c = strings.NewReplacer("**", "", "`", "").Replace(c)
		out = append(out, strings.TrimSpace(c))
	}
	return out
}

// alignRows pads each column to its widest cell, with a rule under the
// header.
func alignRows(rows [][]string) []string {
	var widths []int
	for _, r := range rows {
		for k, c := range r {
			if k >= len(widths) {
				widths = append(widths, 0)
			}
			widths[k] = max(widths[k], utf8.RuneCountInString(c))
		}
	}
	var out []string
	for n, r := range rows {
		var b strings.Builder
		for k, c := range r {
			if k > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c + strings.Repeat(" ", widths[k]-utf8.RuneCountInString(c)))
		}
		out = append(out, strings.TrimRight(b.String(), " "))
		if n == 0 {
			var rule []string
			for _, w := range widths {
				rule = append(rule, strings.Repeat("-", w))
			}
			out = append(out, strings.Join(rule, "  "))
		}
	}
	return out
}

var hrefRe = regexp.MustCompile(`href="([^"]*)"`)

// CheckMedium reports what Medium would lose of a page: a diagram left as
// Mermaid source, a picture that is not inside the page, a relative link,
// a table.
func CheckMedium(slug string, page []byte) []string {
	var problems []string
	s := string(page)
	report := func(format string, args ...any) {
		problems = append(problems, slug+": "+fmt.Sprintf(format, args...))
	}
	if strings.Contains(s, "language-mermaid") || strings.Contains(s, "```mermaid") {
		report("a diagram is left as Mermaid source")
	}
	if strings.Contains(s, "<table") {
		report("a table, which Medium does not have")
	}
	for _, m := range imgSrcRe.FindAllStringSubmatch(s, -1) {
		if !strings.HasPrefix(m[1], "data:image/png;base64,") || len(m[1]) < len("data:image/png;base64,")+16 {
			report("a picture that is not in the page: src=%q", shorten(m[1]))
		}
	}
	for _, m := range hrefRe.FindAllStringSubmatch(s, -1) {
		if !strings.HasPrefix(m[1], "https://") && !strings.HasPrefix(m[1], "http://") && !strings.HasPrefix(m[1], "mailto:") {
			report("a relative link: href=%q", m[1])
		}
	}
	return problems
}

func shorten(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
