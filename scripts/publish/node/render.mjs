// render.mjs renders a Zenn book as Zenn does, for make publish: each
// chapter through zenn-markdown-html (the renderer zenn.dev uses) into a
// page styled by zenn-content-css, and the book and each chapter through
// zenn-model's validateBook and validateBookChapter, the checks Zenn's
// preview shows. It prints one JSON object: the pages it wrote and every
// problem, and exits 1 if a problem is critical.
//
// On zenn.dev a mermaid block becomes an iframe of Zenn's embed server,
// which draws it with mermaid in the reader's browser. That server is not
// reachable here, so each page draws its diagrams itself with the mermaid
// that mermaid-cli brings, and sets data-mermaid on <body> to "done", or to
// the first diagram's error: the screenshot waits for it and fails on an
// error, as a reader would see one. A picture's address, /images/..., is
// the Zenn repository's root on zenn.dev; here it is the folder the book's
// images/ were written to, and the pictures load at once, not lazily, so
// that a whole-page screenshot has them.
//
//   node render.mjs BOOK_DIR OUT_DIR
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import markdownToHtml from 'zenn-markdown-html';

const require = createRequire(import.meta.url);
const { validateBook, validateBookChapter } = require('zenn-model');
const yaml = require('js-yaml');

const [bookDir, outDir] = process.argv.slice(2);
if (!bookDir || !outDir) {
  console.error('usage: node render.mjs BOOK_DIR OUT_DIR');
  process.exit(2);
}
fs.mkdirSync(outDir, { recursive: true });
const css = pathToFileURL(require.resolve('zenn-content-css')).href;
const mermaidJS = pathToFileURL(require.resolve('mermaid/dist/mermaid.min.js')).href;
const escapeHTML = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const options = { customEmbed: { mermaid: (src) => `<pre class="mermaid">${escapeHTML(src)}</pre>` } };
// Zenn's CSS gives every pre a dark background; the embed server draws a
// diagram on white, as here. A diagram counts as drawn only if it has an
// svg: mermaid drops some errors without a word.
const drawDiagrams = `<style>.znc pre.mermaid { background: #fff; display: block; }</style>
<script>
const failed = (e) => { document.body.dataset.mermaid = 'error: ' + (e && e.message ? e.message : String(e)); };
</script>
<script src="${mermaidJS}" onerror="failed('mermaid.min.js did not load')"></script>
<script>
try {
  mermaid.initialize({ startOnLoad: false });
  mermaid.run({ querySelector: 'pre.mermaid' })
    .then(() => {
      const blank = [...document.querySelectorAll('pre.mermaid')].filter((el) => !el.querySelector('svg')).length;
      if (blank > 0) failed(blank + ' diagrams drew nothing');
      else document.body.dataset.mermaid = 'done';
    })
    .catch(failed);
} catch (e) {
  failed(e);
}
</script>`;
const config = yaml.load(fs.readFileSync(path.join(bookDir, 'config.yaml'), 'utf8'));
const slug = path.basename(bookDir);
// bookDir is ZENN/books/SLUG: the images are in ZENN/images.
const zennRoot = path.resolve(bookDir, '..', '..');
const problems = [];
const report = (where, errors) => {
  for (const e of errors) problems.push({ where, message: e.message, critical: !!e.isCritical });
};
// The cover, as zenn-cli hands it to validateBook: a data URL, its size in
// bytes, and its width and height (a PNG's IHDR, bytes 16 to 23).
const coverFile = path.join(bookDir, 'cover.png');
const cover = {};
if (fs.existsSync(coverFile)) {
  const png = fs.readFileSync(coverFile);
  cover.coverDataUrl = 'data:image/png;base64,' + png.toString('base64');
  cover.coverFilesize = png.length;
  cover.coverWidth = png.readUInt32BE(16);
  cover.coverHeight = png.readUInt32BE(20);
}
report('config.yaml', validateBook({ slug, ...config, ...cover, chapterOrderedByConfig: true }));
const pages = [];
for (const chapter of config.chapters) {
  const file = path.join(bookDir, chapter + '.md');
  const text = fs.readFileSync(file, 'utf8');
  const m = /^---\n([\s\S]*?)\n---\n/.exec(text);
  const front = m ? yaml.load(m[1]) : {};
  const body = m ? text.slice(m[0].length) : text;
  const html = await markdownToHtml(body, options);
  report(chapter, validateBookChapter({ slug: chapter, ...front, bodyHtml: html }));
  if (/data-body-error/.test(html)) problems.push({ where: chapter, message: 'the body has an error Zenn shows in its place', critical: true });
  const preview = html.replace(/<img [^>]*>/g, (img) =>
    img.replace(' src="/images/', ` src="${pathToFileURL(zennRoot).href}/images/`).replace(' loading="lazy"', ''));
  const page = `<!doctype html><html lang="ja"><head><meta charset="utf-8"><title>${front.title || chapter}</title>
<link rel="stylesheet" href="${css}"></head>
<body style="max-width: 780px; margin: 2em auto; padding: 0 1em"><h1>${front.title || chapter}</h1><div class="znc">${preview}</div>${drawDiagrams}</body></html>`;
  const out = path.join(outDir, chapter + '.html');
  fs.writeFileSync(out, page);
  pages.push(out);
}
console.log(JSON.stringify({ pages, problems }, null, 2));
process.exit(problems.some((p) => p.critical) ? 1 : 0);
