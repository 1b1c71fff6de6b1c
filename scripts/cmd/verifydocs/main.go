// Command verifydocs checks the docs the way a reader would trip over them:
// a generated block (code snippet, diff summary, run output) that no longer
// matches its source, a relative link or anchor that leads nowhere, a run
// output that is missing or not shown on any page, a chapter without its
// page, and misspellings in the docs and in Go comments. With -fix it
// rewrites the generated blocks instead of failing on them.
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"minisched/scripts/docsgen"
)

func main() {
	root := flag.String("root", ".", "repository root")
	fix := flag.Bool("fix", false, "rewrite generated blocks")
	show := flag.String("show", "", "print the declaration 'PATH SYMBOL' with the line numbers a snippet's FROM-TO counts, and exit")
	only := flag.String("only", "", "report only the problems that contain this text, and the word counts of the posts whose names contain it")
	jaSynced := flag.String("ja-synced", "", "mark the Japanese page PATH as in step with its English page (after a change that needs no translation, such as a typo), and exit")
	flag.Parse()
	if *jaSynced != "" {
		if err := markSynced(*root, *jaSynced); err != nil {
			fmt.Fprintln(os.Stderr, "verifydocs: "+err.Error())
			os.Exit(1)
		}
		return
	}
	if *show != "" {
		out, err := docsgen.DeclLines(*root, *show)
		if err != nil {
			fmt.Fprintln(os.Stderr, "verifydocs: "+err.Error())
			os.Exit(1)
		}
		fmt.Print(out)
		return
	}
	problems, words, err := run(*root, *fix, *only)
	if err != nil {
		fmt.Fprintln(os.Stderr, "verifydocs: "+err.Error())
		os.Exit(1)
	}
	if *only != "" {
		var kept []string
		for _, p := range problems {
			if strings.Contains(p, *only) {
				kept = append(kept, p)
			}
		}
		problems = kept
		for _, w := range words {
			if strings.Contains(w, *only) {
				fmt.Println(w)
			}
		}
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "verifydocs: "+p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}

// run checks every page, and returns the problems and, for each post, a
// line with its words of prose.
func run(root string, fix bool, only string) ([]string, []string, error) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, nil, err
	}
	refs, err := filepath.Glob(filepath.Join(root, "docs", "reference", "*.md"))
	if err != nil {
		return nil, nil, err
	}
	pages = append(pages, refs...)
	pages = append(pages, filepath.Join(root, "README.md"), filepath.Join(root, "scripts", "e2e", "scenarios", "README.md"))
	ja, err := docsgen.JaPages(root)
	if err != nil {
		return nil, nil, err
	}
	pages = append(pages, ja...)
	if _, err := os.Stat(filepath.Join(root, docsgen.JaTerms)); err == nil {
		pages = append(pages, filepath.Join(root, docsgen.JaTerms))
	}
	sort.Strings(pages)
	var problems []string
	var allText strings.Builder
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		allText.Write(data)
		if fix && slices.Contains(ja, page) {
			data = docsgen.MapJaAnchors(root, page, data)
		}
		rendered, err := docsgen.Render(root, filepath.Dir(page), data)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", page, err))
			continue
		}
		if !docsgen.Equal(rendered, data) {
			if fix {
				if err := os.WriteFile(page, rendered, 0o644); err != nil {
					return nil, nil, err
				}
				fmt.Println("rewrote", page)
			} else {
				problems = append(problems, fmt.Sprintf("%s: generated blocks are stale (run `make diffs`)", page))
			}
		}
		problems = append(problems, docsgen.CheckLinks(page, rendered)...)
	}

	chapters, err := docsgen.ChapterDirs(root)
	if err != nil {
		return nil, nil, err
	}
	posts, owner, err := docsgen.Posts(root, chapters)
	if err != nil {
		return nil, nil, err
	}
	readme, _ := os.ReadFile(filepath.Join(root, "README.md"))
	var words []string
	for i, post := range posts {
		page := filepath.Join(root, "docs", post)
		data, err := os.ReadFile(page)
		if err != nil {
			problems = append(problems, fmt.Sprintf("chapter %s has no post %s", owner[post], page))
			continue
		}
		problems = append(problems, docsgen.CheckPost(root, page, data, posts, i, owner[post])...)
		words = append(words, fmt.Sprintf("%s: %d words of prose (at most %d)", page, docsgen.ProseWords(string(data)), docsgen.MaxProseWords))
		if !strings.Contains(string(readme), "docs/"+post) {
			problems = append(problems, fmt.Sprintf("README.md does not link docs/%s", post))
		}
	}
	for i, ch := range chapters {
		page := filepath.Join(root, "docs", "reference", ch+".md")
		data, err := os.ReadFile(page)
		if err != nil {
			problems = append(problems, fmt.Sprintf("chapter %s has no reference page %s", ch, page))
			continue
		}
		var its []string
		for _, p := range posts {
			if owner[p] == ch {
				its = append(its, p)
			}
		}
		problems = append(problems, docsgen.CheckReference(root, page, data, ch, its, i == 0)...)
	}
	problems = append(problems, docsgen.CheckWorkshopDocs(root, posts)...)
	problems = append(problems, checkJapanese(root, ja, posts)...)

	// Every run output exists (Render checked that) and is shown somewhere.
	outputs, _ := filepath.Glob(filepath.Join(root, "docs", "data", "*"))
	for _, o := range outputs {
		if !strings.Contains(allText.String(), "data/"+filepath.Base(o)) {
			problems = append(problems, fmt.Sprintf("%s is neither embedded nor linked by any page", o))
		}
	}

	// Spelling: every page, and every Go file's comments and strings.
	files := append([]string{}, pages...)
	for _, dir := range append(chapters, "scripts") {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".yaml")) {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	for _, f := range files {
		if only != "" && !strings.Contains(f, only) {
			// A writer checking one chapter's pages: spelling is the
			// slow part, and the other files are not theirs.
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		problems = append(problems, docsgen.Misspellings(f, data)...)
	}
	return problems, words, nil
}

// checkJapanese checks the Japanese pages: each is in step with its
// English page (docsgen.CheckJa), every post and the README have one, and
// each Japanese post's nav links the Japanese posts before and after it.
func checkJapanese(root string, ja, posts []string) []string {
	var problems []string
	for _, page := range ja {
		data, err := os.ReadFile(page)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		problems = append(problems, docsgen.CheckJa(root, page, data)...)
	}
	readme := filepath.Join(root, docsgen.JaReadme)
	if !slices.Contains(ja, readme) {
		problems = append(problems, "README.md has no Japanese version "+docsgen.JaReadme)
	}
	for i, post := range posts {
		page := filepath.Join(root, docsgen.JaDir, post)
		if !slices.Contains(ja, page) {
			problems = append(problems, fmt.Sprintf("docs/%s has no Japanese version %s/%s", post, docsgen.JaDir, post))
			continue
		}
		data, _ := os.ReadFile(page)
		next := "../../" + docsgen.JaReadme + "#章の一覧"
		if i+1 < len(posts) {
			next = posts[i+1]
		}
		if !strings.Contains(string(data), "]("+next+")") {
			problems = append(problems, fmt.Sprintf("%s: its nav does not link the next Japanese post, %s", page, next))
		}
	}
	return problems
}

// markSynced records in a Japanese page that it is in step with its
// English page as the English page is now: the deliberate step after an
// English change that needs no translation (make ja-synced PAGE=...).
func markSynced(root, path string) error {
	page, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		return err
	}
	fm, _, err := docsgen.ParseFrontMatter(page)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	english, err := os.ReadFile(filepath.Join(root, fm.English))
	if err != nil {
		return fmt.Errorf("%s: its English page: %w", path, err)
	}
	hash := docsgen.ProseHash(english)
	out, err := docsgen.SetSynced(page, hash)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.WriteFile(filepath.Join(root, path), out, 0o644); err != nil {
		return err
	}
	fmt.Printf("%s: in step with %s (%s)\n", path, fm.English, hash)
	return nil
}
