package docsgen

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The Japanese pages: docs/ja/NN-name.md for each post, and README.ja.md.
// English is the source. A Japanese page's prose is written for Japanese
// readers; what is not prose (snippets, run outputs, tables, diffs) is the
// same generated block as on the English page, filled by Render. Each
// Japanese page starts with front matter that names its English page and
// the hash of that page's prose when the Japanese one was last brought in
// step with it:
//
//	---
//	english: docs/01-initial.md
//	synced: sha256:0123456789ab
//	---
//
// so that a change to the English prose shows as a stale Japanese page.

// JaDir is the folder of the Japanese posts, under the repository root.
const JaDir = "docs/ja"

// JaTerms is the term list every Japanese page follows; it is not a page
// of the series.
const JaTerms = "docs/ja/terms.md"

// JaReadme is the Japanese README, beside the English one.
const JaReadme = "README.ja.md"

var frontRe = regexp.MustCompile(`(?s)\A---\n(.*?)\n---\n`)

// FrontMatter is what a Japanese page records of its English page.
type FrontMatter struct {
	// English is the English page, relative to the repository root.
	English string
	// Synced is ProseHash of the English page when the Japanese one was
	// last brought in step with it.
	Synced string
}

// ParseFrontMatter reads a Japanese page's front matter, and returns it
// and the page without it.
func ParseFrontMatter(page []byte) (FrontMatter, []byte, error) {
	m := frontRe.FindSubmatchIndex(page)
	if m == nil {
		return FrontMatter{}, page, fmt.Errorf("no front matter (---, english: PATH, synced: HASH, ---) at the top")
	}
	var fm FrontMatter
	for _, line := range strings.Split(string(page[m[2]:m[3]]), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "english":
			fm.English = strings.TrimSpace(v)
		case "synced":
			fm.Synced = strings.TrimSpace(v)
		}
	}
	if fm.English == "" || fm.Synced == "" {
		return fm, page, fmt.Errorf("front matter without english: or synced:")
	}
	return fm, page[m[1]:], nil
}

// SetSynced returns the page with its front matter's synced: set to hash.
func SetSynced(page []byte, hash string) ([]byte, error) {
	m := frontRe.FindSubmatchIndex(page)
	if m == nil {
		return nil, fmt.Errorf("no front matter")
	}
	lines := strings.Split(string(page[m[2]:m[3]]), "\n")
	found := false
	for i, line := range lines {
		if k, _, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "synced" {
			lines[i] = "synced: " + hash
			found = true
		}
	}
	if !found {
		return nil, fmt.Errorf("front matter without synced:")
	}
	out := "---\n" + strings.Join(lines, "\n") + "\n---\n"
	return append([]byte(out), page[m[1]:]...), nil
}

// ProseHash hashes what a translator reads on an English page: its text
// with the bodies of the generated blocks left out, their marker lines
// kept. A new snippet range or a renamed function changes it (the
// Japanese page has the same markers, and must follow); regenerated code
// or a rerun's output does not (both languages embed the same block).
func ProseHash(page []byte) string {
	text := genRe.ReplaceAllString(string(page), "<!-- $1: $2 -->\n<!-- /$4 -->")
	sum := sha256.Sum256([]byte(text))
	return "sha256:" + hex.EncodeToString(sum[:6])
}

// JaPages returns the Japanese pages: README.ja.md, if it exists, and
// every page of docs/ja but the term list.
func JaPages(root string) ([]string, error) {
	pages, err := filepath.Glob(filepath.Join(root, JaDir, "*.md"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pages {
		if filepath.Base(p) != filepath.Base(JaTerms) {
			out = append(out, p)
		}
	}
	if _, err := os.Stat(filepath.Join(root, JaReadme)); err == nil {
		out = append(out, filepath.Join(root, JaReadme))
	}
	sort.Strings(out)
	return out, nil
}

var headingRe = regexp.MustCompile(`^(#+) `)

// headings returns a page's headings, outside code, as their levels and
// GitHub anchors, in order.
func headings(page []byte) (levels []int, anchors []string) {
	for _, line := range strings.Split(stripCode(page), "\n") {
		m := headingRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		levels = append(levels, len(m[1]))
		anchors = append(anchors, slug(strings.TrimSpace(line[len(m[0]):])))
	}
	return levels, anchors
}

// markers returns the opening lines of a page's generated blocks, with an
// output block's path as seen from docs/ (a Japanese page's ../data/X and
// an English page's data/X are the same file).
func markers(page []byte, docDir, root string) []string {
	var out []string
	for _, m := range genRe.FindAllStringSubmatch(string(page), -1) {
		arg := strings.TrimSpace(m[2])
		if m[1] == "output" {
			if rel, err := filepath.Rel(root, filepath.Join(docDir, arg)); err == nil {
				arg = filepath.ToSlash(rel)
			}
			// A table in Japanese, from the same run, stands for the
			// English one (bench.Japanese).
			arg = strings.Replace(arg, "docs/data/ja/", "docs/data/", 1)
		}
		out = append(out, m[1]+": "+arg)
	}
	return out
}

// CheckJa reports what keeps a Japanese page from being in step with its
// English page: front matter that names no English page, an English page
// whose prose changed since the last sync, headings that do not match the
// English ones one to one (anchors are mapped by position), and generated
// blocks that are not the English page's.
func CheckJa(root, path string, page []byte) []string {
	var problems []string
	report := func(format string, args ...any) {
		problems = append(problems, path+": "+fmt.Sprintf(format, args...))
	}
	fm, body, err := ParseFrontMatter(page)
	if err != nil {
		report("%v", err)
		return problems
	}
	english, err := os.ReadFile(filepath.Join(root, fm.English))
	if err != nil {
		report("its English page: %v", err)
		return problems
	}
	if now := ProseHash(english); fm.Synced != now {
		report("%s changed since this page was last brought in step with it (synced %s, now %s): update the Japanese text, then run `make ja-synced PAGE=%s`", fm.English, fm.Synced, now, relPath(root, path))
	}
	el, _ := headings(english)
	jl, _ := headings(body)
	if len(el) != len(jl) {
		report("%d headings, but %s has %d: a Japanese page has one heading per English heading, in the same order", len(jl), fm.English, len(el))
	} else {
		for i := range el {
			if el[i] != jl[i] {
				report("heading %d is of level %d, but %s's is of level %d", i+1, jl[i], fm.English, el[i])
				break
			}
		}
	}
	em := markers(english, filepath.Dir(filepath.Join(root, fm.English)), root)
	jm := markers(body, filepath.Dir(path), root)
	if strings.Join(em, "\n") != strings.Join(jm, "\n") {
		report("its generated blocks are not %s's, in the same order: %s", fm.English, firstDifference(em, jm))
	}
	return problems
}

func firstDifference(want, got []string) string {
	for i := 0; i < len(want) || i < len(got); i++ {
		switch {
		case i >= len(got):
			return fmt.Sprintf("missing %q", want[i])
		case i >= len(want):
			return fmt.Sprintf("extra %q", got[i])
		case want[i] != got[i]:
			return fmt.Sprintf("%q where the English page has %q", got[i], want[i])
		}
	}
	return ""
}

func relPath(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil {
		return filepath.ToSlash(rel)
	}
	return path
}

var jaLinkRe = regexp.MustCompile(`\]\(([^)\s#]*\.md)#([^)\s]+)\)`)

// MapJaAnchors rewrites a Japanese page's links to a section of another
// Japanese page that still name the English anchor: the heading at the
// same position on the Japanese page is the one. Translators link with
// the English anchors they see; this keeps the links right when either
// page's headings change.
func MapJaAnchors(root, path string, page []byte) []byte {
	return jaLinkRe.ReplaceAllFunc(page, func(m []byte) []byte {
		sub := jaLinkRe.FindSubmatch(m)
		file, anchor := string(sub[1]), string(sub[2])
		target := filepath.Join(filepath.Dir(path), file)
		if filepath.Dir(target) != filepath.Join(root, JaDir) {
			return m
		}
		ja, err := os.ReadFile(target)
		if err != nil {
			return m
		}
		_, jaAnchors := headings(ja)
		for _, a := range jaAnchors {
			if a == anchor {
				return m
			}
		}
		fm, body, err := ParseFrontMatter(ja)
		if err != nil {
			return m
		}
		english, err := os.ReadFile(filepath.Join(root, fm.English))
		if err != nil {
			return m
		}
		_, enAnchors := headings(english)
		_, jaAnchors = headings(body)
		for i, a := range enAnchors {
			if a == anchor && i < len(jaAnchors) {
				return []byte("](" + file + "#" + jaAnchors[i] + ")")
			}
		}
		return m
	})
}
