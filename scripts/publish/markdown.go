// Package publish turns the series into what its two homes take: a Zenn
// book of the Japanese posts (zenn.go) and one self-contained HTML page per
// English post for Medium (medium.go). Both start from a post as verifydocs
// renders it (every generated block filled), so what is published is what
// the repository shows, and both make every link absolute: a published
// page has no repository around it.
package publish

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Options say where the published pages point.
type Options struct {
	// Root is the repository's root on disk.
	Root string
	// RepoURL is the repository on GitHub, https://github.com/OWNER/NAME:
	// links to files, to the glossary and to the reference pages go
	// there.
	RepoURL string
	// Commit pins those links: a commit or a tag that GitHub has.
	Commit string
	// ZennUser and BookSlug make the URLs of the book's chapters
	// (https://zenn.dev/USER/books/SLUG/viewer/CHAPTER): Zenn resolves no
	// relative link between chapters.
	ZennUser, BookSlug string
}

// Page is a post to publish.
type Page struct {
	// Path is the post's file, relative to the root (docs/ja/01-initial.md).
	Path string
	// Markdown is the post rendered: its generated blocks filled.
	Markdown string
}

// Slug is the post's file name without .md: a Zenn chapter's slug, and
// the Medium page's file name.
func (p Page) Slug() string {
	base := p.Path[strings.LastIndex(p.Path, "/")+1:]
	return strings.TrimSuffix(base, ".md")
}

var fenceOpenRe = regexp.MustCompile("^[ \t]*(```+|~~~+)(.*)$")

// lines is a page as lines, each marked with whether it is inside a fenced
// code block (the fence lines themselves included): every transformation
// below leaves code alone.
type line struct {
	text    string
	code    bool
	fenceID int // which fence the line belongs to, from 1; 0 outside code
}

func split(md string) []line {
	var out []line
	fence, id := "", 0
	for _, t := range strings.Split(md, "\n") {
		if fence == "" {
			if m := fenceOpenRe.FindStringSubmatch(t); m != nil {
				fence = m[1]
				id++
				out = append(out, line{text: t, code: true, fenceID: id})
				continue
			}
			out = append(out, line{text: t})
			continue
		}
		out = append(out, line{text: t, code: true, fenceID: id})
		if s := strings.TrimSpace(t); strings.HasPrefix(s, fence[:1]) && strings.Trim(s, fence[:1]) == "" && len(s) >= len(fence) {
			fence = ""
		}
	}
	return out
}

func join(ls []line) string {
	texts := make([]string, len(ls))
	for i, l := range ls {
		texts[i] = l.text
	}
	return strings.Join(texts, "\n")
}

var frontMatterRe = regexp.MustCompile(`(?s)\A---\n.*?\n---\n`)

// stripFrontMatter drops a Japanese page's front matter (its English page
// and sync hash are the repository's business).
func stripFrontMatter(md string) string { return frontMatterRe.ReplaceAllString(md, "") }

var navBlockRe = regexp.MustCompile(`(?s)<!-- nav -->\n.*?\n<!-- /nav -->\n?`)

// stripNav drops the nav lines: Zenn's book and Medium have their own.
func stripNav(md string) string { return navBlockRe.ReplaceAllString(md, "") }

var commentLineRe = regexp.MustCompile(`^\s*<!--.*-->\s*$`)

// stripComments drops the lines that are only an HTML comment, outside
// code: the generated blocks' markers. Zenn shows a comment that spans
// lines as text, and neither home needs them.
func stripComments(md string) string {
	var out []line
	for _, l := range split(md) {
		if !l.code && commentLineRe.MatchString(l.text) {
			continue
		}
		out = append(out, l)
	}
	return join(out)
}

// title returns a page's "# " title and the page without it.
func title(md string) (string, string) {
	ls := split(md)
	for i, l := range ls {
		if !l.code && strings.HasPrefix(l.text, "# ") {
			rest := append(append([]line{}, ls[:i]...), ls[i+1:]...)
			return strings.TrimSpace(l.text[2:]), strings.TrimLeft(join(rest), "\n")
		}
	}
	return "", md
}

var (
	listItemRe  = regexp.MustCompile(`^\s*([-*+]|\d+[.)])\s`)
	tableRowRe  = regexp.MustCompile(`^\s*\|`)
	headingRe   = regexp.MustCompile(`^#{1,6}\s`)
	containerRe = regexp.MustCompile(`^:{3,}`)
	htmlLineRe  = regexp.MustCompile(`^\s*</?[a-zA-Z]`)
)

// unwrap joins the lines of a paragraph or a list item into one line.
// Zenn renders every line break inside a paragraph as <br>, and a Medium
// paste keeps them too; the sources wrap English prose at 72 columns.
// Two Japanese characters join without a space, anything else with one.
func unwrap(md string) string {
	ls := split(md)
	var out []line
	for _, l := range ls {
		if len(out) > 0 && joinable(out[len(out)-1], l) {
			prev := &out[len(out)-1]
			next := strings.TrimSpace(l.text)
			if strings.HasPrefix(next, ">") {
				// The next line of the same quote: its marker goes.
				next = strings.TrimSpace(strings.TrimPrefix(next, ">"))
			}
			if needsSpace(prev.text, next) {
				prev.text += " " + next
			} else {
				prev.text += next
			}
			continue
		}
		out = append(out, l)
	}
	return join(out)
}

// joinable says whether next continues the paragraph or list item that
// prev is in.
func joinable(prev, next line) bool {
	if prev.code || next.code {
		return false
	}
	p, n := prev.text, next.text
	if strings.TrimSpace(p) == "" || strings.TrimSpace(n) == "" {
		return false
	}
	for _, t := range []string{p, n} {
		s := strings.TrimSpace(t)
		if tableRowRe.MatchString(t) || headingRe.MatchString(s) || containerRe.MatchString(s) || htmlLineRe.MatchString(t) || commentLineRe.MatchString(t) {
			return false
		}
	}
	// A blockquote's lines join only with the next line of the same quote.
	pq, nq := strings.HasPrefix(strings.TrimSpace(p), ">"), strings.HasPrefix(strings.TrimSpace(n), ">")
	if pq != nq {
		return false
	}
	if pq {
		rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(n), ">"))
		if rest == "" || listItemRe.MatchString(rest) {
			return false
		}
		return true
	}
	// A new list item starts a new line; a list item's continuation is
	// indented, and joins.
	if listItemRe.MatchString(n) {
		return false
	}
	// Two trailing spaces or a backslash is a hard break the author meant.
	if strings.HasSuffix(p, "  ") || strings.HasSuffix(p, `\`) {
		return false
	}
	return true
}

func needsSpace(prev, next string) bool {
	a, _ := utf8.DecodeLastRuneInString(strings.TrimRight(prev, " "))
	b, _ := utf8.DecodeRuneInString(next)
	return !(wide(a) && wide(b))
}

// wide says whether a character is set without spaces around it in
// Japanese text: kana, kanji, and full-width punctuation.
func wide(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) || r >= 0x3000 && r <= 0x303f || r >= 0xff00 && r <= 0xffef
}

var linkRe = regexp.MustCompile(`(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)\)`)

// rewriteLinks calls fn on the target of every link and image outside
// code (fenced blocks and inline code spans), and puts what it returns in
// the target's place. A link's text may hold code: [`Fit`](fit.go).
func rewriteLinks(md string, fn func(target string, image bool) string) string {
	ls := split(md)
	for i, l := range ls {
		if l.code {
			continue
		}
		ls[i].text = replaceLinks(l.text, func(sub []string) string {
			return sub[1] + "[" + sub[2] + "](" + fn(sub[3], sub[1] == "!") + ")"
		})
	}
	return join(ls)
}

// replaceLinks replaces each link of a line that does not start inside an
// inline code span with what fn returns for its submatches.
func replaceLinks(s string, fn func(sub []string) string) string {
	spans := codeSpans(s)
	var b strings.Builder
	last := 0
	for _, m := range linkRe.FindAllStringSubmatchIndex(s, -1) {
		if inSpan(m[0], spans) {
			continue
		}
		sub := make([]string, len(m)/2)
		for k := range sub {
			if m[2*k] >= 0 {
				sub[k] = s[m[2*k]:m[2*k+1]]
			}
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(fn(sub))
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// codeSpans returns the [start, end) of each inline code span of a line.
func codeSpans(s string) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "`")
		if j < 0 {
			break
		}
		start := i + j
		k := strings.Index(s[start+1:], "`")
		if k < 0 {
			break
		}
		end := start + 1 + k + 1
		out = append(out, [2]int{start, end})
		i = end
	}
	return out
}

func inSpan(pos int, spans [][2]int) bool {
	for _, sp := range spans {
		if pos >= sp[0] && pos < sp[1] {
			return true
		}
	}
	return false
}

// outsideInlineCode applies fn to the parts of a line that are not inside
// backticks.
func outsideInlineCode(s string, fn func(string) string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "`")
		if i < 0 {
			b.WriteString(fn(s))
			return b.String()
		}
		j := strings.Index(s[i+1:], "`")
		if j < 0 {
			b.WriteString(fn(s))
			return b.String()
		}
		b.WriteString(fn(s[:i]))
		b.WriteString(s[i : i+j+2])
		s = s[i+j+2:]
	}
}

// Diagram is a Mermaid block of a page.
type Diagram struct {
	// Source is the block's content, without its fences.
	Source string
	// Name is a file name for its picture: the page's slug and its index.
	Name string
}

// replaceMermaid replaces every ```mermaid block for which keep returns
// false with what repl returns, and returns the page.
func replaceMermaid(md string, keep func(src string) bool, repl func(i int, src string) string) string {
	ls := split(md)
	var out []line
	n := 0
	for i := 0; i < len(ls); i++ {
		l := ls[i]
		if !l.code || !strings.HasPrefix(strings.TrimSpace(l.text), "```mermaid") {
			out = append(out, l)
			continue
		}
		j := i + 1
		var src []string
		for ; j < len(ls) && ls[j].fenceID == l.fenceID; j++ {
			src = append(src, ls[j].text)
		}
		// The last line of the fence is the closing one.
		if len(src) > 0 {
			src = src[:len(src)-1]
		}
		body := strings.Join(src, "\n") + "\n"
		n++
		if keep(body) {
			out = append(out, ls[i:j]...)
		} else {
			out = append(out, line{text: repl(n, body)})
		}
		i = j - 1
	}
	return join(out)
}
