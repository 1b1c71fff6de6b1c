package docsgen

import (
	"fmt"
	"regexp"
	"strings"
)

// navRe finds a navigation block: the links between a chapter's page and
// its neighbours, at the top and at the bottom of the page.
var navRe = regexp.MustCompile(`(?s)<!-- nav -->\n(.*?)\n<!-- /nav -->`)

// CheckChapterPage reports what a chapter's page lacks of the frame every
// page has, so that it reads on its own as a post of a series: a nav block
// right under the title and at the very end, each linking the previous
// page (the README for the first chapter) and the next one (the chapter
// list for the newest); a paragraph starting "**In short:**" before the
// first section; an "## Exercises" section holding the chapter's
// <!-- workshop --> block, and a "## What you learned" section. chapters lists every chapter directory in order, and i is this
// page's chapter.
func CheckChapterPage(name string, page []byte, chapters []string, i int) []string {
	var problems []string
	report := func(format string, args ...any) {
		problems = append(problems, name+": "+fmt.Sprintf(format, args...))
	}
	text := strings.TrimRight(string(page), "\n")
	prev, next := "../README.md", "../README.md#the-chapters"
	if i > 0 {
		prev = chapters[i-1] + ".md"
	}
	if i+1 < len(chapters) {
		next = chapters[i+1] + ".md"
	}
	navs := navRe.FindAllStringSubmatchIndex(text, -1)
	switch {
	case len(navs) < 2:
		report("want a nav block under the title and one at the end, found %d", len(navs))
	default:
		title := strings.Index(text, "\n")
		if title < 0 || strings.TrimSpace(text[title:navs[0][0]]) != "" {
			report("the first nav block must come right after the title")
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
	}
	firstSection := strings.Index(text, "\n## ")
	if firstSection < 0 || !strings.Contains(text[:firstSection], "\n**In short:** ") {
		report(`want a paragraph starting "**In short:** " before the first section`)
	}
	for _, heading := range []string{"## Exercises", "## What you learned"} {
		if !strings.Contains(text, "\n"+heading+"\n") {
			report("no %q section", heading)
		}
	}
	// The exercises are the workshop's parts: the block lists them with
	// their checks, generated from scripts/workshop/chapters.
	ex := strings.Index(text, "\n## Exercises\n")
	block := "<!-- workshop: " + chapters[i] + " -->"
	if ex < 0 || !strings.Contains(text[ex:], block) {
		report("the Exercises section has no %s block", block)
	}
	return problems
}
