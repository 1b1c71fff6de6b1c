package publish

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// The rules a book must follow for Zenn to take it and show it as the
// repository does. The book's own rules are zenn-model's validateBook and
// validateBookChapter (packages/zenn-model/src/utils.ts, zenn-editor
// v0.5.2), those marked critical; the body's come from zenn-markdown-html.
// They need no browser, so make test checks them; the browser test
// renders each chapter with Zenn's renderer as well.

var (
	bookSlugRe    = regexp.MustCompile(`^[0-9a-z\-_]{12,50}$`)
	chapterSlugRe = regexp.MustCompile(`^[0-9a-z\-_]{1,50}$`)
	topicRe       = regexp.MustCompile(`^[0-9a-z]+$`)
	rawTagRe      = regexp.MustCompile(`</?(details|summary|div|span|img|a|br|table|sub|sup|kbd|p)\b[^>]*>`)
	chapterFMRe   = regexp.MustCompile(`(?s)\A---\n(.*?)\n---\n`)
)

type bookConfig struct {
	Title     string   `json:"title"`
	Summary   string   `json:"summary"`
	Topics    []string `json:"topics"`
	Published *bool    `json:"published"`
	Price     *int     `json:"price"`
	Chapters  []string `json:"chapters"`
}

// CheckZenn reports each way the book breaks a rule of Zenn's, one line
// each.
func CheckZenn(b *Book, slug string) []string {
	var problems []string
	report := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if !bookSlugRe.MatchString(slug) {
		report("book slug %q: Zenn wants 12 to 50 of a-z, 0-9, - and _", slug)
	}
	data, ok := b.Files["books/"+slug+"/config.yaml"]
	if !ok {
		report("no books/%s/config.yaml", slug)
		return problems
	}
	var cfg bookConfig
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		report("config.yaml: %v", err)
		return problems
	}
	switch n := utf8.RuneCountInString(cfg.Title); {
	case n == 0:
		report("config.yaml: no title")
	case n > 70:
		report("config.yaml: a title of %d characters; Zenn takes 70", n)
	}
	if strings.TrimSpace(cfg.Summary) == "" {
		report("config.yaml: no summary")
	}
	if len(cfg.Topics) == 0 || len(cfg.Topics) > 5 {
		report("config.yaml: %d topics; Zenn takes 1 to 5", len(cfg.Topics))
	}
	for _, t := range cfg.Topics {
		if len(t) > 18 || !topicRe.MatchString(t) {
			report("config.yaml: topic %q: at most 18 of a-z and 0-9", t)
		}
	}
	if cfg.Published == nil || *cfg.Published {
		report("config.yaml: published must be false: the author publishes the book on Zenn")
	}
	if cfg.Price == nil || *cfg.Price != 0 {
		report("config.yaml: price must be 0")
	}
	if len(cfg.Chapters) == 0 {
		report("config.yaml: no chapters")
	}
	images := map[string]bool{}
	for _, im := range b.Images {
		images["/"+im.Target] = true
	}
	for _, d := range b.Diagrams {
		images["/images/"+slug+"/"+d.Name] = true
	}
	listed := map[string]bool{}
	for _, ch := range cfg.Chapters {
		listed[ch] = true
		if strings.HasSuffix(ch, ".md") || !chapterSlugRe.MatchString(ch) {
			report("config.yaml: chapter %q: 1 to 50 of a-z, 0-9, - and _, without .md", ch)
		}
		path := "books/" + slug + "/" + ch + ".md"
		body, ok := b.Files[path]
		if !ok {
			report("config.yaml lists %s, which the book lacks", ch)
			continue
		}
		problems = append(problems, checkChapter(path, string(body), images)...)
	}
	var extra []string
	for path := range b.Files {
		if strings.HasSuffix(path, ".md") && !listed[strings.TrimSuffix(path[strings.LastIndex(path, "/")+1:], ".md")] {
			extra = append(extra, path)
		}
	}
	sort.Strings(extra)
	for _, p := range extra {
		report("%s is not in config.yaml's chapters", p)
	}
	return problems
}

// checkChapter checks one chapter: its front matter, and a body that
// Zenn's renderer shows as the repository does.
func checkChapter(path, body string, images map[string]bool) []string {
	var problems []string
	report := func(format string, args ...any) {
		problems = append(problems, path+": "+fmt.Sprintf(format, args...))
	}
	fm := chapterFMRe.FindStringSubmatch(body)
	if fm == nil {
		report("no front matter with a title")
		return problems
	}
	var front struct {
		Title string `json:"title"`
		Free  *bool  `json:"free"`
	}
	if err := yaml.UnmarshalStrict([]byte(fm[1]), &front); err != nil {
		report("front matter: %v", err)
	}
	if n := utf8.RuneCountInString(front.Title); n == 0 || n > 70 {
		report("a title of %d characters; Zenn takes 1 to 70", n)
	}
	text := body[len(fm[0]):]
	depth := 0
	ls := split(text)
	for i, l := range ls {
		if l.code {
			if strings.HasPrefix(strings.TrimSpace(l.text), "```mermaid") {
				var src []string
				for j := i + 1; j < len(ls) && ls[j].fenceID == l.fenceID; j++ {
					src = append(src, ls[j].text)
				}
				if s := strings.Join(src[:max(0, len(src)-1)], "\n") + "\n"; !fitsZenn(s) {
					report("line %d: a Mermaid block of %d characters and %d chains; Zenn draws at most %d and %d", i+1, utf8.RuneCountInString(s), strings.Count(s, "&"), zennMermaidMaxChars, zennMermaidMaxChains)
				}
			}
			continue
		}
		t := l.text
		outsideInlineCode(t, func(s string) string {
			if m := rawTagRe.FindString(s); m != "" {
				report("line %d: raw HTML %s, which Zenn shows as text", i+1, m)
			}
			if strings.Contains(s, "<!--") && !strings.Contains(s, "-->") {
				report("line %d: an HTML comment over several lines, which Zenn shows as text", i+1)
			}
			return s
		})
		replaceLinks(t, func(m []string) string {
			target := m[3]
			switch {
			case m[1] == "!":
				if !images[target] {
					report("line %d: image %s is not one of the book's /images", i+1, target)
				}
			case strings.HasPrefix(target, "https://"), strings.HasPrefix(target, "http://"), strings.HasPrefix(target, "#"):
			default:
				report("line %d: relative link %s: a Zenn chapter has no repository around it", i+1, target)
			}
			return m[0]
		})
		s := strings.TrimSpace(t)
		if strings.HasPrefix(s, ":::") {
			if strings.Trim(s, ":") == "" {
				depth--
			} else {
				depth++
			}
		}
		if strings.HasPrefix(s, "<!-- nav") || strings.HasPrefix(s, "english:") || strings.HasPrefix(s, "synced:") {
			report("line %d: %q is the repository's, not the book's", i+1, s)
		}
	}
	if depth != 0 {
		report("its ::: boxes do not close (%+d)", depth)
	}
	return problems
}
