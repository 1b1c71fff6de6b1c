package publish

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"minisched/scripts/docsgen"
)

// The Zenn book: books/SLUG/config.yaml, one chapter file per Japanese
// post, named by the post's slug, and the pictures under images/SLUG/.
// The rules it follows are Zenn's (zenn-editor v0.5.2): zenn-model's
// validateBook and validateBookChapter, and zenn-markdown-html's parser,
// which renders no raw HTML and makes every line break inside a paragraph
// a <br>.

// Book is a Zenn book, ready to copy to the root of the GitHub repository
// that a Zenn account deploys from.
type Book struct {
	// Files are the book's text files by path under the output folder:
	// books/SLUG/config.yaml and books/SLUG/CHAPTER.md.
	Files map[string][]byte
	// Images are the pictures the chapters show, to copy (PNG) or draw
	// (SVG) into images/SLUG/.
	Images []Image
	// Diagrams are the Mermaid blocks over Zenn's limits, to draw as
	// images/SLUG/NAME.png.
	Diagrams []Diagram
	// Chapters are the chapter slugs in reading order.
	Chapters []string
}

// Image is a picture a page shows.
type Image struct {
	// Source is the repository's file (docs/data/trace-pod.svg).
	Source string
	// Target is where it goes under the output folder, as a PNG.
	Target string
}

// Zenn's limits for a Mermaid block (zenn.dev/zenn/articles/markdown-guide,
// 制限事項): over them Zenn shows an error in the diagram's place.
const (
	zennMermaidMaxChars  = 2000
	zennMermaidMaxChains = 10
)

// messageLabels are the asides of the Japanese posts (docs/ja/terms.md):
// each becomes a :::message box.
var messageLabelRe = regexp.MustCompile(`^>\s*\*\*(はじめる前に|補足|動きを見る):\*\*`)

// BookConfig is what config.yaml says of the book.
type BookConfig struct {
	Title   string
	Summary string
	Topics  []string
}

// ZennBook turns the Japanese posts, in reading order, into a Zenn book.
func ZennBook(o Options, pages []Page, cfg BookConfig) (*Book, error) {
	b := &Book{Files: map[string][]byte{}}
	// Each page's anchors, from the GitHub anchors the sources link to
	// to the ids Zenn gives the same headings.
	ids := map[string]map[string]string{}
	bodies := map[string]string{}
	titles := map[string]string{}
	for _, p := range pages {
		t, body := title(stripComments(stripNav(stripFrontMatter(p.Markdown))))
		if t == "" {
			return nil, fmt.Errorf("%s: no # title", p.Path)
		}
		titles[p.Path], bodies[p.Path] = t, body
		ids[p.Path] = headingIDs(body)
	}
	var problems []string
	for _, p := range pages {
		slug := p.Slug()
		body := unwrap(bodies[p.Path])
		body = messagesFromQuotes(body)
		body = detailsToZenn(body)
		body = tableBreaks(body)
		body = replaceMermaid(body, fitsZenn, func(i int, src string) string {
			name := fmt.Sprintf("%s-diagram-%d.png", slug, i)
			b.Diagrams = append(b.Diagrams, Diagram{Source: src, Name: name})
			return fmt.Sprintf("![](/images/%s/%s)", o.BookSlug, name)
		})
		body = rewriteLinks(body, func(target string, image bool) string {
			out, img, err := zennTarget(o, p, target, image, ids)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", p.Path, err))
				return target
			}
			if img != nil {
				b.Images = append(b.Images, *img)
			}
			return out
		})
		front := "---\ntitle: " + strconv.Quote(titles[p.Path]) + "\n---\n\n"
		b.Files["books/"+o.BookSlug+"/"+slug+".md"] = []byte(front + strings.TrimLeft(body, "\n"))
		b.Chapters = append(b.Chapters, slug)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	var c strings.Builder
	fmt.Fprintf(&c, "title: %s\nsummary: %s\ntopics: [", strconv.Quote(cfg.Title), strconv.Quote(cfg.Summary))
	for i, t := range cfg.Topics {
		if i > 0 {
			c.WriteString(", ")
		}
		c.WriteString(strconv.Quote(t))
	}
	c.WriteString("]\n# A draft: publish it on Zenn when it has been read there.\npublished: false\nprice: 0\nchapters:\n")
	for _, ch := range b.Chapters {
		fmt.Fprintf(&c, "  - %s\n", ch)
	}
	b.Files["books/"+o.BookSlug+"/config.yaml"] = []byte(c.String())
	return b, nil
}

// fitsZenn says whether Zenn draws a Mermaid block.
func fitsZenn(src string) bool {
	return utf8.RuneCountInString(src) <= zennMermaidMaxChars && strings.Count(src, "&") <= zennMermaidMaxChains
}

// zennTarget turns a link's target into what a Zenn chapter needs: the
// chapter's viewer URL for another post of the book, an id Zenn gives for
// a heading, a /images/ path for a picture, and the repository at the
// pinned commit for anything else.
func zennTarget(o Options, p Page, target string, image bool, ids map[string]map[string]string) (string, *Image, error) {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return target, nil, nil
	}
	file, anchor, _ := strings.Cut(target, "#")
	if file == "" {
		id, ok := ids[p.Path][anchor]
		if !ok {
			return "", nil, fmt.Errorf("link #%s names no heading of the page", anchor)
		}
		return "#" + id, nil, nil
	}
	rel := path.Clean(path.Join(path.Dir(p.Path), file))
	if image {
		ext := strings.ToLower(path.Ext(rel))
		switch ext {
		case ".png", ".svg", ".jpg", ".jpeg", ".gif":
		default:
			return "", nil, fmt.Errorf("image %s: Zenn takes png, jpg, gif or webp (and svg is drawn as png)", file)
		}
		name := strings.TrimSuffix(path.Base(rel), ext) + ".png"
		if ext != ".svg" {
			name = path.Base(rel)
		}
		return "/images/" + o.BookSlug + "/" + name, &Image{Source: rel, Target: "images/" + o.BookSlug + "/" + name}, nil
	}
	if pageIDs, ok := ids[rel]; ok {
		u := "https://zenn.dev/" + o.ZennUser + "/books/" + o.BookSlug + "/viewer/" + strings.TrimSuffix(path.Base(rel), ".md")
		if anchor == "" {
			return u, nil, nil
		}
		id, ok := pageIDs[anchor]
		if !ok {
			return "", nil, fmt.Errorf("link %s names no heading of %s", target, rel)
		}
		return u + "#" + id, nil, nil
	}
	return repoURL(o, rel, anchor)
}

// repoURL is a repository file's page on GitHub at the pinned commit.
func repoURL(o Options, rel, anchor string) (string, *Image, error) {
	info, err := os.Stat(filepath.Join(o.Root, filepath.FromSlash(rel)))
	if err != nil {
		return "", nil, fmt.Errorf("link to %s: %v", rel, err)
	}
	kind := "blob"
	if info.IsDir() {
		kind = "tree"
	}
	u := strings.TrimSuffix(o.RepoURL, "/") + "/" + kind + "/" + o.Commit + "/" + rel
	if anchor != "" {
		u += "#" + anchor
	}
	return u, nil, nil
}

var (
	mdHeadingRe = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	inlineLink  = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	spacesRe    = regexp.MustCompile(`[\s\x{3000}]+`)
	emphasisRe  = regexp.MustCompile(`(\*\*|__|\*|_)(\S(?:.*?\S)?)(\*\*|__|\*|_)`)
)

// headingIDs maps the GitHub anchor of each heading of a page to the id
// Zenn gives it. Both number a repeated heading -1, -2, ... in order; Zenn
// gives ids to h1-h4 only.
func headingIDs(md string) map[string]string {
	out := map[string]string{}
	seenGH, seenZenn := map[string]int{}, map[string]int{}
	for _, l := range split(md) {
		if l.code {
			continue
		}
		m := mdHeadingRe.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		text := m[2]
		gh := unique(docsgen.Slug(text), seenGH)
		if len(m[1]) > 4 {
			continue
		}
		out[gh] = unique(zennID(headingText(text)), seenZenn)
	}
	return out
}

func unique(s string, seen map[string]int) string {
	n := seen[s]
	seen[s] = n + 1
	if n == 0 {
		return s
	}
	return s + "-" + strconv.Itoa(n)
}

// headingText is a heading's text as markdown-it hands it to the slug
// function: the text and the code spans' content, without markup.
func headingText(h string) string {
	h = inlineLink.ReplaceAllString(h, "$1")
	h = strings.ReplaceAll(h, "`", "")
	for {
		next := emphasisRe.ReplaceAllString(h, "$2")
		if next == h {
			return h
		}
		h = next
	}
}

// zennID is markdown-it-anchor's default slugify, which
// zenn-markdown-html uses: trimmed, lower case, each run of white space
// one '-', then encodeURIComponent.
func zennID(text string) string {
	s := strings.ToLower(strings.TrimSpace(text))
	s = spacesRe.ReplaceAllString(s, "-")
	var b strings.Builder
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("-_.!~*'()", c) >= 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// messagesFromQuotes turns each labelled aside, a blockquote that starts
// with one of the posts' labels, into a :::message box.
func messagesFromQuotes(md string) string {
	ls := split(md)
	var out []line
	for i := 0; i < len(ls); i++ {
		l := ls[i]
		if l.code || !messageLabelRe.MatchString(l.text) {
			out = append(out, l)
			continue
		}
		var content []string
		j := i
		for ; j < len(ls) && !ls[j].code && strings.HasPrefix(strings.TrimSpace(ls[j].text), ">"); j++ {
			t := strings.TrimPrefix(strings.TrimSpace(ls[j].text), ">")
			content = append(content, strings.TrimPrefix(t, " "))
		}
		fence := ":::"
		if strings.Contains(strings.Join(content, "\n"), ":::") {
			fence = "::::"
		}
		out = append(out, line{text: fence + "message"})
		for _, c := range content {
			out = append(out, line{text: c})
		}
		out = append(out, line{text: fence})
		i = j - 1
	}
	return join(out)
}

var (
	detailsRe = regexp.MustCompile(`(?s)<details>\s*<summary>(.*?)</summary>\n(.*?)\n</details>`)
	tagRe     = regexp.MustCompile(`<[^>]+>`)
	brRe      = regexp.MustCompile(`\s*<br\s*/?>\s*`)
)

// detailsToZenn turns <details> folds into :::details (Zenn shows raw
// HTML as text); the summary becomes plain text, which is all Zenn
// renders there.
func detailsToZenn(md string) string {
	return detailsRe.ReplaceAllStringFunc(md, func(m string) string {
		sub := detailsRe.FindStringSubmatch(m)
		summary := strings.TrimSpace(tagRe.ReplaceAllString(sub[1], ""))
		summary = strings.ReplaceAll(summary, "`", "")
		body := strings.Trim(sub[2], "\n")
		fence := ":::"
		if strings.Contains(body, ":::") {
			fence = "::::"
		}
		return fence + "details " + summary + "\n" + body + "\n" + fence
	})
}

// tableBreaks replaces the <br> inside table cells, which Zenn would show
// as text, with " / ".
func tableBreaks(md string) string {
	ls := split(md)
	for i, l := range ls {
		if !l.code && tableRowRe.MatchString(l.text) {
			ls[i].text = outsideInlineCode(l.text, func(s string) string { return brRe.ReplaceAllString(s, " / ") })
		}
	}
	return join(ls)
}
