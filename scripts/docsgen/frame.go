package docsgen

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The rules below are those of docs/post-form.md marked "checked": every
// chapter has posts, read top to bottom as a blog series, and one
// reference page that holds the rest. They are checked so that a new
// chapter is written to them from its first draft.

// MaxProseWords is a post's budget of prose: a technical post a reader
// finishes in one sitting.
const MaxProseWords = 3000

// MaxSnippetLines is the longest snippet a post shows: a longer function
// is shown in parts, with a sentence between them.
const MaxSnippetLines = 45

// MaxBoxLines bounds the "Before you start" box.
const MaxBoxLines = 5

// Posts returns the series: every post of every chapter, in reading
// order. A chapter's first post is docs/<chapter>.md; a chapter told in
// more posts adds docs/NNb-*.md, docs/NNc-*.md, and so on. owner maps each
// post to its chapter.
func Posts(root string, chapters []string) (posts []string, owner map[string]string, err error) {
	owner = map[string]string{}
	for _, ch := range chapters {
		posts = append(posts, ch+".md")
		owner[ch+".md"] = ch
		more, err := filepath.Glob(filepath.Join(root, "docs", ch[:2]+"[b-z]-*.md"))
		if err != nil {
			return nil, nil, err
		}
		sort.Strings(more)
		for _, m := range more {
			posts = append(posts, filepath.Base(m))
			owner[filepath.Base(m)] = ch
		}
	}
	return posts, owner, nil
}

var (
	navRe     = regexp.MustCompile(`(?s)<!-- nav -->\n(.*?)\n<!-- /nav -->`)
	genRe     = regexp.MustCompile(`(?s)<!-- (snippet|diffstat|diff|output|workshop): ([^>]*?) -->\n(.*?)<!-- /(snippet|diffstat|diff|output|workshop) -->`)
	commentRe = regexp.MustCompile(`(?s)<!--.*?-->`)
	detailsRe = regexp.MustCompile(`(?s)<details>.*?</details>`)
	fenceRe   = regexp.MustCompile("(?ms)^[ \t]*(```+)[^\n]*\n.*?^[ \t]*```+[ \t]*$")
	inlineRe  = regexp.MustCompile("`[^`\n]+`")
	linkTgtRe = regexp.MustCompile(`\]\([^)]*\)`)
	refDefRe  = regexp.MustCompile(`(?m)^\[[^\]]+\]:\s*\S+.*$`)
	tagRe     = regexp.MustCompile(`</?[a-zA-Z][^>]*>`)
	wordRe    = regexp.MustCompile(`[\p{L}\p{N}]`)
	stepRe    = regexp.MustCompile(`(?m)^## Step [0-9]+: .+$`)
	snipRe    = regexp.MustCompile(`(?s)<!-- snippet: (\S+)([^>]*?) -->\n(.*?)<!-- /snippet -->`)
	fileRe    = regexp.MustCompile("`([A-Za-z0-9_./-]+\\.(?:go|yaml))`")
)

// ProseWords counts a post's words of prose as docs/post-form.md defines
// them: not in fenced code, generated blocks, <details> folds or HTML
// comments; an inline code span is one word and a link's target none.
func ProseWords(page string) int {
	text := genRe.ReplaceAllString(page, " ")
	text = detailsRe.ReplaceAllString(text, " ")
	text = commentRe.ReplaceAllString(text, " ")
	text = fenceRe.ReplaceAllString(text, " ")
	text = inlineRe.ReplaceAllString(text, " code ")
	text = linkTgtRe.ReplaceAllString(text, "] ")
	text = refDefRe.ReplaceAllString(text, " ")
	text = tagRe.ReplaceAllString(text, " ")
	n := 0
	for _, f := range strings.Fields(text) {
		if wordRe.MatchString(f) {
			n++
		}
	}
	return n
}

// CheckPost reports what a post lacks of the frame of docs/post-form.md.
// posts is the series in order and i this post; ch is its chapter, whose
// reference page the post links; root is the repository, where the files
// the steps name are looked up.
func CheckPost(root, name string, page []byte, posts []string, i int, ch string) []string {
	var problems []string
	report := func(format string, args ...any) {
		problems = append(problems, name+": "+fmt.Sprintf(format, args...))
	}
	text := strings.TrimRight(string(page), "\n")
	prev, next := "../README.md", "../README.md#the-chapters"
	if i > 0 {
		prev = posts[i-1]
	}
	if i+1 < len(posts) {
		next = posts[i+1]
	}
	ref := "reference/" + ch + ".md"
	navs := navRe.FindAllStringSubmatchIndex(text, -1)
	if len(navs) < 2 {
		report("want a nav block under the title and one at the end, found %d", len(navs))
		return problems
	}
	title := strings.Index(text, "\n")
	if !strings.HasPrefix(text, "# ") || title < 0 || strings.TrimSpace(text[title:navs[0][0]]) != "" {
		report("the page must start with a # title and the nav block right after it")
	}
	if navs[len(navs)-1][1] != len(text) {
		report("the page must end with a nav block")
	}
	for _, n := range [][]int{navs[0], navs[len(navs)-1]} {
		links := text[n[2]:n[3]]
		for _, target := range []string{prev, next} {
			if !strings.Contains(links, "]("+target+")") {
				report("a nav block does not link %s", target)
			}
		}
	}
	if !strings.Contains(text[navs[0][2]:navs[0][3]], "]("+ref+")") {
		report("the top nav block does not link the reference page %s", ref)
	}

	// The opening: a run or a failing test, and the loop, before the box.
	box := strings.Index(text, "\n> **Before you start:**")
	if box < 0 {
		report(`no box: a blockquote starting "> **Before you start:**"`)
	} else {
		opening := text[navs[0][1]:box]
		if !strings.Contains(opening, "```mermaid") {
			report("the opening has no picture of the loop (a ```mermaid block) before the box")
		}
		if !hasRunOrTest(opening) {
			report("the opening shows no run or failing test (a fenced block or an output block) before the box")
		}
		if strings.Contains(opening, "\n## ") {
			report("a section starts before the box: the opening and the box come first")
		}
		var lines []string
		for _, l := range strings.Split(text[box+1:], "\n") {
			if !strings.HasPrefix(l, ">") {
				break
			}
			lines = append(lines, l)
		}
		if len(lines) > MaxBoxLines {
			report("the box has %d lines, at most %d", len(lines), MaxBoxLines)
		}
		if !strings.Contains(strings.Join(lines, "\n"), "](") {
			report("the box links nothing: it links the posts the reader needs")
		}
	}

	// The steps: where the code goes, the test first, then the code.
	steps := stepRe.FindAllStringIndex(text, -1)
	if len(steps) < 2 {
		report(`want at least two "## Step N: ..." sections, found %d`, len(steps))
	}
	for k, s := range steps {
		end := s[1] + nextSection(text[s[1]:])
		section := text[s[0]:end]
		heading := text[s[0]:s[1]]
		if want := fmt.Sprintf("## Step %d: ", k+1); !strings.HasPrefix(heading, want) {
			report("%q: steps are numbered 1, 2, ... in order", heading)
		}
		if !namesChapterFile(root, ch, section) {
			report("%q names no file of %s in backticks: say where the step's code goes", heading, ch)
		}
		firstTest, firstCode := -1, -1
		for _, m := range snipRe.FindAllStringSubmatchIndex(section, -1) {
			path := section[m[2]:m[3]]
			if !strings.HasSuffix(path, ".go") {
				continue
			}
			if strings.HasSuffix(path, "_test.go") {
				if firstTest < 0 {
					firstTest = m[0]
				}
			} else if firstCode < 0 {
				firstCode = m[0]
			}
		}
		if firstCode >= 0 && (firstTest < 0 || firstTest > firstCode) {
			report("%q shows code before a test: show the test that fails first (a snippet of a _test.go file)", heading)
		}
	}

	for _, m := range snipRe.FindAllStringSubmatch(text, -1) {
		body := strings.TrimSpace(m[3])
		if n := strings.Count(body, "\n") - 1; n > MaxSnippetLines {
			report("snippet %s%s has %d lines, at most %d in a post: show it in parts (PATH SYMBOL FROM-TO)", m[1], m[2], n, MaxSnippetLines)
		}
	}
	for _, kind := range []string{"<!-- diff: ", "<!-- workshop: "} {
		if strings.Contains(text, kind) {
			report("%s...--> belongs on the reference page", kind)
		}
	}
	if strings.Contains(text, "-tests.txt -->") {
		report("a test listing belongs on the reference page")
	}
	if !strings.Contains(text, "\n## What you learned\n") {
		report(`no "## What you learned" section`)
	}
	if n := ProseWords(text); n > MaxProseWords {
		report("%d words of prose, at most %d: move reference material to %s, or split the chapter into two posts", n, MaxProseWords, ref)
	}
	return problems
}

// nextSection returns the offset of the next "## " heading in text, or
// its length.
func nextSection(text string) int {
	if i := strings.Index(text, "\n## "); i >= 0 {
		return i
	}
	return len(text)
}

// hasRunOrTest says whether text shows something run: a fenced block
// other than a picture, or a generated output or snippet.
func hasRunOrTest(text string) bool {
	if strings.Contains(text, "<!-- output: ") || strings.Contains(text, "<!-- snippet: ") {
		return true
	}
	for _, m := range regexp.MustCompile("(?m)^```([a-z]*)").FindAllStringSubmatch(text, -1) {
		if m[1] != "mermaid" && m[1] != "" {
			return true
		}
	}
	return false
}

// namesChapterFile says whether a step names, in backticks, a file that
// exists in the chapter's folder.
func namesChapterFile(root, ch, section string) bool {
	for _, m := range fileRe.FindAllStringSubmatch(section, -1) {
		p := strings.TrimPrefix(m[1], ch+"/")
		if _, err := os.Stat(filepath.Join(root, ch, p)); err == nil {
			return true
		}
	}
	return false
}

// CheckReference reports what a chapter's reference page lacks: links to
// its posts and the sections of docs/post-form.md. The first chapter has
// no chapter before it, so its diff section has no diff to show.
func CheckReference(root, name string, page []byte, ch string, posts []string, first bool) []string {
	var problems []string
	report := func(format string, args ...any) {
		problems = append(problems, name+": "+fmt.Sprintf(format, args...))
	}
	text := string(page)
	for _, p := range posts {
		if !strings.Contains(text, "](../"+p) {
			report("does not link the post ../%s", p)
		}
	}
	section := func(h string) string {
		i := strings.Index(text, "\n"+h+"\n")
		if i < 0 {
			report("no %q section", h)
			return ""
		}
		rest := text[i+len(h)+2:]
		return rest[:nextSection(rest)]
	}
	if s := section("## The diff"); s != "" && !first && !strings.Contains(s, "<!-- diff: "+ch+" -->") {
		report("the diff section has no <!-- diff: %s --> block", ch)
	}
	tests := section("## Tests")
	if _, err := os.Stat(filepath.Join(root, "docs", "data", ch+"-tests.txt")); err == nil && !strings.Contains(tests, "<!-- output: ../data/"+ch+"-tests.txt -->") {
		report("the Tests section has no <!-- output: ../data/%s-tests.txt --> block", ch)
	}
	section("## Upstream map")
	section("## What this chapter leaves out")
	if s := section("## Exercises"); !strings.Contains(s, "<!-- workshop: "+ch+" -->") {
		report("the Exercises section has no <!-- workshop: %s --> block", ch)
	}
	return problems
}
