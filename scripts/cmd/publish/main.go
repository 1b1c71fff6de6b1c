// Command publish writes the series for its two homes, into a folder
// outside the sources (.cache/publish by default):
//
//   - zenn/: a Zenn book of the Japanese posts (books/SLUG/ and
//     images/SLUG/), to copy to the root of the GitHub repository a Zenn
//     account deploys from; zenn-html/ has each chapter rendered by Zenn's
//     own renderer, and screenshots/ a picture of each;
//   - medium/: one self-contained HTML page per English post, and its
//     pictures beside it.
//
// It needs Node.js (npm) and Debian's Chromium, and says in one line which
// is missing. Its npm packages are pinned in scripts/publish/node and go
// into .cache/publish-tools.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"minisched/scripts/docsgen"
	"minisched/scripts/publish"
	"minisched/scripts/watch"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "publish: "+err.Error())
		os.Exit(1)
	}
}

func run() error {
	var o publish.Options
	out := flag.String("out", ".cache/publish", "the folder to write into")
	tools := flag.String("tools", ".cache/publish-tools", "the folder for the npm packages")
	flag.StringVar(&o.Root, "root", ".", "repository root")
	flag.StringVar(&o.RepoURL, "repo", "", "the repository on GitHub, https://github.com/OWNER/NAME (default: git remote origin)")
	flag.StringVar(&o.Commit, "commit", "", "the commit or tag links pin (default: HEAD)")
	flag.StringVar(&o.ZennUser, "zenn-user", "", "the Zenn account the book is deployed from: chapter links need it")
	flag.StringVar(&o.BookSlug, "book", "minisched-kube-scheduler", "the Zenn book's slug")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flag.Arg(0))
	}
	var err error
	if o.RepoURL == "" {
		if o.RepoURL, err = originURL(o.Root); err != nil {
			return err
		}
	}
	if o.Commit == "" {
		c, err := exec.Command("git", "-C", o.Root, "rev-parse", "HEAD").Output()
		if err != nil {
			return fmt.Errorf("the commit to pin links to: %v (say --commit)", err)
		}
		o.Commit = strings.TrimSpace(string(c))
	}
	if o.ZennUser == "" {
		return errors.New("say which Zenn account deploys the book: make publish ZENN_USER=name")
	}
	chromium, err := watch.Chromium()
	if err != nil {
		return errors.New("Chromium is missing: sudo apt-get install chromium")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return errors.New("Node.js is missing: sudo apt-get install nodejs npm")
	}
	if err := japaneseFont(); err != nil {
		return err
	}
	pages, err := posts(o.Root)
	if err != nil {
		return err
	}
	res, err := Publish(o, pages, *out, *tools, chromium, false)
	if err != nil {
		return err
	}
	fmt.Printf("Zenn book: %s (copy books/ and images/ to your Zenn repository; README.md, Publishing, has the steps)\n", filepath.Join(*out, "zenn"))
	fmt.Printf("Zenn's rendering of each chapter: %s, screenshots in %s\n", filepath.Join(*out, "zenn-html"), filepath.Join(*out, "screenshots"))
	fmt.Printf("Medium: %d pages in %s\n", len(res.Medium), filepath.Join(*out, "medium"))
	return nil
}

// japaneseFont fails unless fontconfig knows a font with Japanese glyphs:
// without one, Chromium draws the Zenn chapters' text as empty boxes, and
// the screenshots show nothing a reader could read.
func japaneseFont() error {
	out, err := exec.Command("fc-list", ":lang=ja").Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		return errors.New("a Japanese font is missing, so the screenshots of the Zenn chapters would show boxes: sudo apt-get install fonts-noto-cjk")
	}
	return nil
}

// Post is a post in both languages.
type Post struct {
	English, Japanese publish.Page
}

// posts returns the series, in reading order, each post rendered in both
// languages.
func posts(root string) ([]Post, error) {
	chapters, err := docsgen.ChapterDirs(root)
	if err != nil {
		return nil, err
	}
	names, _, err := docsgen.Posts(root, chapters)
	if err != nil {
		return nil, err
	}
	var out []Post
	for _, name := range names {
		en, err := rendered(root, "docs/"+name)
		if err != nil {
			return nil, err
		}
		ja, err := rendered(root, docsgen.JaDir+"/"+name)
		if err != nil {
			return nil, err
		}
		out = append(out, Post{English: en, Japanese: ja})
	}
	return out, nil
}

func rendered(root, rel string) (publish.Page, error) {
	path := filepath.Join(root, rel)
	data, err := os.ReadFile(path)
	if err != nil {
		return publish.Page{}, err
	}
	page, err := docsgen.Render(root, filepath.Dir(path), data)
	if err != nil {
		return publish.Page{}, fmt.Errorf("%s: %w", rel, err)
	}
	return publish.Page{Path: rel, Markdown: string(page)}, nil
}

var githubRe = regexp.MustCompile(`github\.com[:/]([^/]+)/([^/.]+?)(\.git)?$`)

// originURL is the repository's GitHub address, from its origin remote.
func originURL(root string) (string, error) {
	out, err := exec.Command("git", "-C", root, "remote", "get-url", "origin").Output()
	if m := githubRe.FindStringSubmatch(strings.TrimSpace(string(out))); err == nil && m != nil {
		return "https://github.com/" + m[1] + "/" + m[2], nil
	}
	return "", errors.New("say where the repository is on GitHub: make publish REPO=https://github.com/OWNER/NAME (origin is not a GitHub remote)")
}

// BookConfig is the book's config.yaml: its title, the Japanese README's
// first paragraph as its summary, and five topics.
func BookConfig(root string) (publish.BookConfig, error) {
	readme, err := os.ReadFile(filepath.Join(root, docsgen.JaReadme))
	if err != nil {
		return publish.BookConfig{}, err
	}
	_, body, err := docsgen.ParseFrontMatter(readme)
	if err != nil {
		return publish.BookConfig{}, fmt.Errorf("%s: %w", docsgen.JaReadme, err)
	}
	var summary string
	for _, para := range strings.Split(string(body), "\n\n") {
		p := strings.TrimSpace(para)
		if p == "" || strings.HasPrefix(p, "#") || strings.HasPrefix(p, "[") || strings.HasPrefix(p, "<!--") {
			continue
		}
		summary = strings.NewReplacer("**", "", "`", "", "\n", "").Replace(p)
		break
	}
	return publish.BookConfig{
		Title:   "minisched: kube-schedulerを作りながら学ぶ",
		Summary: summary,
		Topics:  []string{"kubernetes", "kubescheduler", "go", "scheduler", "k8s"},
	}, nil
}

// Result is what Publish wrote.
type Result struct {
	Book   *publish.Book
	Medium []string
}

// Publish writes the Zenn book and the Medium pages into out, draws their
// pictures with chromium and mermaid-cli, renders the book with Zenn's
// renderer, and takes a screenshot of every page. It fails on any rule a
// page breaks.
//
// With firstScreen, each screenshot is the page's first screen, not the
// whole page: every check still runs on the whole page (every diagram
// drawn, every picture loaded), and a test saves the minutes that
// capturing some thirty pages, each up to 20,000 pixels tall, costs.
func Publish(o publish.Options, posts []Post, out, tools, chromium string, firstScreen bool) (*Result, error) {
	cfg, err := BookConfig(o.Root)
	if err != nil {
		return nil, err
	}
	var ja []publish.Page
	for _, p := range posts {
		ja = append(ja, p.Japanese)
	}
	book, err := publish.ZennBook(o, ja, cfg)
	if err != nil {
		return nil, err
	}
	if problems := publish.CheckZenn(book, o.BookSlug); len(problems) > 0 {
		return nil, fmt.Errorf("the Zenn book breaks Zenn's rules:\n%s", strings.Join(problems, "\n"))
	}
	if err := os.RemoveAll(out); err != nil {
		return nil, err
	}
	if err := npmInstall(o.Root, tools); err != nil {
		return nil, err
	}
	ctx, cancel, err := watch.Browser(chromium)
	if err != nil {
		return nil, err
	}
	defer cancel()
	zenn := filepath.Join(out, "zenn")
	for rel, data := range book.Files {
		if err := write(filepath.Join(zenn, rel), data); err != nil {
			return nil, err
		}
	}
	if err := cover(ctx, cfg, filepath.Join(zenn, "books", o.BookSlug, "cover.png")); err != nil {
		return nil, err
	}
	for _, im := range book.Images {
		if err := picture(ctx, filepath.Join(o.Root, im.Source), filepath.Join(zenn, im.Target)); err != nil {
			return nil, err
		}
	}
	// Every diagram of both homes is drawn in one mermaid-cli run: each run
	// starts a browser, which costs more than drawing.
	var drawings []drawing
	for _, d := range book.Diagrams {
		drawings = append(drawings, drawing{d.Source, filepath.Join(zenn, "images", o.BookSlug, d.Name)})
	}
	medium := filepath.Join(out, "medium")
	var pages []*publish.MediumPost
	for _, p := range posts {
		m, err := publish.Medium(o, p.English)
		if err != nil {
			return nil, err
		}
		for _, d := range m.Diagrams {
			drawings = append(drawings, drawing{d.Source, filepath.Join(medium, d.Name)})
		}
		pages = append(pages, m)
	}
	if err := diagrams(tools, chromium, drawings); err != nil {
		return nil, err
	}
	if err := checkImageSizes(filepath.Join(zenn, "images")); err != nil {
		return nil, err
	}
	chapters, err := renderZenn(tools, filepath.Join(zenn, "books", o.BookSlug), filepath.Join(out, "zenn-html"))
	if err != nil {
		return nil, err
	}
	shots := filepath.Join(out, "screenshots")
	for _, page := range chapters {
		if err := screenshot(ctx, page, filepath.Join(shots, "zenn-"+strings.TrimSuffix(filepath.Base(page), ".html")+".png"), true, firstScreen); err != nil {
			return nil, err
		}
	}
	res := &Result{Book: book}
	for _, m := range pages {
		for _, im := range m.Images {
			if err := picture(ctx, filepath.Join(o.Root, im.Source), filepath.Join(medium, im.Target)); err != nil {
				return nil, err
			}
		}
		page, err := m.HTML(func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(medium, name)) })
		if err != nil {
			return nil, err
		}
		if problems := publish.CheckMedium(m.Slug, page); len(problems) > 0 {
			return nil, fmt.Errorf("a Medium page would lose something:\n%s", strings.Join(problems, "\n"))
		}
		path := filepath.Join(medium, m.Slug+".html")
		if err := write(path, page); err != nil {
			return nil, err
		}
		if err := screenshot(ctx, path, filepath.Join(shots, "medium-"+m.Slug+".png"), false, firstScreen); err != nil {
			return nil, err
		}
		res.Medium = append(res.Medium, path)
	}
	return res, nil
}

func write(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// npmInstall installs the pinned packages into tools, once per version of
// package.json, without the browser puppeteer would download: mermaid-cli
// runs on Debian's Chromium. render.mjs is copied every time, so that a
// change to it is never left behind by an installation that is current.
func npmInstall(root, tools string) error {
	src := filepath.Join(root, "scripts", "publish", "node")
	script, err := os.ReadFile(filepath.Join(src, "render.mjs"))
	if err != nil {
		return err
	}
	if err := write(filepath.Join(tools, "render.mjs"), script); err != nil {
		return err
	}
	want, err := os.ReadFile(filepath.Join(src, "package.json"))
	if err != nil {
		return err
	}
	if have, err := os.ReadFile(filepath.Join(tools, "package.json")); err == nil && bytes.Equal(have, want) {
		if _, err := os.Stat(filepath.Join(tools, "node_modules")); err == nil {
			return nil
		}
	}
	if err := write(filepath.Join(tools, "package.json"), want); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "publish: npm install (Zenn's renderer and mermaid-cli, pinned in scripts/publish/node/package.json)")
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tools
	cmd.Env = append(os.Environ(), "PUPPETEER_SKIP_DOWNLOAD=1")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm install in %s: %v", tools, err)
	}
	return nil
}

// renderZenn renders the book with zenn-markdown-html and checks it with
// zenn-model (render.mjs).
func renderZenn(tools, book, out string) ([]string, error) {
	abs, err := filepath.Abs(book)
	if err != nil {
		return nil, err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("node", "render.mjs", abs, absOut)
	cmd.Dir = tools
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, runErr := cmd.Output()
	var res struct {
		Pages    []string
		Problems []struct {
			Where, Message string
			Critical       bool
		}
	}
	if err := json.Unmarshal(stdout, &res); err != nil {
		return nil, fmt.Errorf("rendering the book with zenn-markdown-html: %v %v\n%s", runErr, err, stderr.String())
	}
	var critical []string
	for _, p := range res.Problems {
		line := p.Where + ": " + p.Message
		if p.Critical {
			critical = append(critical, line)
		} else {
			fmt.Fprintln(os.Stderr, "publish: Zenn warns: "+line)
		}
	}
	if len(critical) > 0 || runErr != nil {
		return nil, fmt.Errorf("Zenn would refuse the book:\n%s%s", strings.Join(critical, "\n"), stderr.String())
	}
	return res.Pages, nil
}

// drawing is a Mermaid diagram and the PNG to draw it into.
type drawing struct{ source, out string }

// fenceLike is what ends a mermaid block in mermaid-cli's Markdown parser:
// any three of ` and : in a row.
var fenceLike = regexp.MustCompile("[`:]{3}")

// diagrams draws Mermaid diagrams as PNGs with mermaid-cli, on Debian's
// Chromium, in one run: given a Markdown file, mermaid-cli draws each of
// its mermaid blocks, in order, into OUT-1.png, OUT-2.png and so on. A
// diagram that holds something like a fence would end its block early
// there; it is drawn in a run of its own. If the run fails, each diagram
// is drawn alone, so that the error names the one that does not draw.
func diagrams(tools, chromium string, all []drawing) error {
	if len(all) == 0 {
		return nil
	}
	dir, err := os.MkdirTemp("", "publish-mermaid-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "puppeteer.json")
	pcfg, _ := json.Marshal(map[string]any{"executablePath": chromium, "args": []string{"--no-sandbox"}})
	if err := os.WriteFile(cfg, pcfg, 0o644); err != nil {
		return err
	}
	mmdc := func(in, out string) error {
		cmd := exec.Command(filepath.Join("node_modules", ".bin", "mmdc"), "-q", "-p", cfg, "-i", in, "-o", out, "-s", "2", "-b", "white", "-w", "1000")
		cmd.Dir = tools
		if msg, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("mermaid-cli: %v\n%s", err, msg)
		}
		return nil
	}
	var md strings.Builder
	var batch []drawing
	for i, d := range all {
		if fenceLike.MatchString(d.source) {
			in := filepath.Join(dir, fmt.Sprintf("alone-%d.mmd", i))
			if err := os.WriteFile(in, []byte(d.source), 0o644); err != nil {
				return err
			}
			if err := mmdc(in, filepath.Join(dir, fmt.Sprintf("alone-%d.png", i))); err != nil {
				return err
			}
			if err := move(filepath.Join(dir, fmt.Sprintf("alone-%d.png", i)), d.out); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(&md, "```mermaid\n%s\n```\n\n", strings.TrimRight(d.source, "\n"))
		batch = append(batch, d)
	}
	if len(batch) == 0 {
		return nil
	}
	in := filepath.Join(dir, "diagrams.md")
	if err := os.WriteFile(in, []byte(md.String()), 0o644); err != nil {
		return err
	}
	if err := mmdc(in, filepath.Join(dir, "diagram.png")); err != nil {
		for i, d := range batch {
			alone := filepath.Join(dir, fmt.Sprintf("retry-%d.mmd", i))
			if err := os.WriteFile(alone, []byte(d.source), 0o644); err != nil {
				return err
			}
			if err := mmdc(alone, filepath.Join(dir, fmt.Sprintf("retry-%d.png", i))); err != nil {
				return fmt.Errorf("the diagram for %s: %v", d.out, err)
			}
		}
		return err
	}
	for i, d := range batch {
		if err := move(filepath.Join(dir, fmt.Sprintf("diagram-%d.png", i+1)), d.out); err != nil {
			return fmt.Errorf("mermaid-cli drew %d diagrams of %d: %v", i, len(batch), err)
		}
	}
	return nil
}

// move puts a drawn file where the page wants it.
func move(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return write(to, data)
}

// picture copies a PNG, or draws an SVG as a PNG at twice its size, with
// Chromium: Zenn and Medium take no SVG.
func picture(ctx context.Context, src, out string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	if !strings.HasSuffix(src, ".svg") {
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	}
	abs, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 1000, chromedp.EmulateScale(2)), chromedp.Navigate(fileURL(abs))); err != nil {
		return fmt.Errorf("drawing %s: %v", src, err)
	}
	png, err := chromedp.Run(ctx, chromedp.Screenshot("svg"))
	if err != nil {
		return fmt.Errorf("drawing %s: %v", src, err)
	}
	return os.WriteFile(out, png, 0o644)
}

// coverPage is the Zenn book's cover: its title and the path every chapter
// builds a part of, from the queue to the binding.
const coverPage = `<!doctype html><html lang="ja"><head><meta charset="utf-8"><style>
body { margin: 0; width: 500px; height: 700px; background: #0f2a5c; color: #fff;
  font-family: "Noto Sans CJK JP", sans-serif; display: flex; flex-direction: column; justify-content: space-between; }
h1 { margin: 64px 40px 0; font-size: 56px; letter-spacing: 1px; }
p { margin: 16px 40px 0; font-size: 26px; line-height: 1.5; }
ol { list-style: none; margin: 0 40px; padding: 0; display: flex; flex-direction: column; gap: 10px; }
li { background: #fff; color: #0f2a5c; border-radius: 6px; padding: 8px 14px; font: 600 20px monospace; width: fit-content; }
li:nth-child(2) { margin-left: 40px } li:nth-child(3) { margin-left: 80px } li:nth-child(4) { margin-left: 120px }
footer { margin: 0 40px 40px; font-size: 18px; opacity: 0.8; }
</style></head><body>
<div><h1>minisched</h1><p>{{.Title}}</p></div>
<ol><li>activeQ</li><li>Filter</li><li>Score</li><li>Bind</li></ol>
<footer>kube-scheduler v1.37.1</footer>
</body></html>`

// cover draws the book's cover, 500 by 700 pixels as Zenn shows it, with
// Chromium. Without one Zenn warns, and shows no picture for the book.
func cover(ctx context.Context, cfg publish.BookConfig, out string) error {
	title := cfg.Title
	if i := strings.Index(title, ": "); i >= 0 {
		title = title[i+2:]
	}
	dir, err := os.MkdirTemp("", "publish-cover-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	page := filepath.Join(dir, "cover.html")
	if err := os.WriteFile(page, []byte(strings.Replace(coverPage, "{{.Title}}", html.EscapeString(title), 1)), 0o644); err != nil {
		return err
	}
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.EmulateViewport(500, 700), chromedp.Navigate(fileURL(page))); err != nil {
		return fmt.Errorf("drawing the cover: %v", err)
	}
	png, err := chromedp.Run(tctx, chromedp.CaptureScreenshot())
	if err != nil {
		return fmt.Errorf("drawing the cover: %v", err)
	}
	return write(out, png)
}

// screenshot takes a picture of a whole page. A picture the page does not
// load fails it. A page that draws Mermaid diagrams itself (the Zenn
// chapters: render.mjs) is taken once they are drawn, and a diagram
// mermaid refuses fails it.
func screenshot(ctx context.Context, page, out string, diagrams, firstScreen bool) error {
	abs, err := filepath.Abs(page)
	if err != nil {
		return err
	}
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.EmulateViewport(1000, 1200), chromedp.Navigate(fileURL(abs))); err != nil {
		return fmt.Errorf("screenshot of %s: %v", page, err)
	}
	if diagrams {
		state, err := chromedp.Run(tctx, chromedp.Poll[string](`document.body.dataset.mermaid`, chromedp.WithPollingInterval(100*time.Millisecond)))
		if err != nil {
			return fmt.Errorf("screenshot of %s: waiting for its diagrams: %v", page, err)
		}
		if state != "done" {
			return fmt.Errorf("screenshot of %s: a diagram does not draw: %s", page, strings.TrimPrefix(state, "error: "))
		}
	}
	missing, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](`Array.from(document.images).filter((i) => !(i.complete && i.naturalWidth > 0)).map((i) => (i.getAttribute("src") || "(no src)").slice(-100))`))
	if err != nil {
		return fmt.Errorf("screenshot of %s: %v", page, err)
	}
	if len(missing) > 0 {
		return fmt.Errorf("screenshot of %s: pictures that do not load: %s", page, strings.Join(missing, ", "))
	}
	capture := chromedp.FullScreenshot(100)
	if firstScreen {
		capture = chromedp.CaptureScreenshot()
	}
	png, err := chromedp.Run(tctx, capture)
	if err != nil {
		return fmt.Errorf("screenshot of %s: %v", page, err)
	}
	return write(out, png)
}

// zennImageLimit is the largest picture Zenn takes (3 MB).
const zennImageLimit = 3 << 20

func checkImageSizes(dir string) error {
	return filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !info.IsDir() && info.Size() > zennImageLimit {
			return fmt.Errorf("%s is %d bytes: Zenn takes 3 MB at most", path, info.Size())
		}
		return nil
	})
}

// fileURL is the file:// address of an absolute path.
func fileURL(abs string) string {
	return (&url.URL{Scheme: "file", Path: abs}).String()
}
