// render.mjs renders a Zenn book as Zenn does, for make publish: each
// chapter through zenn-markdown-html (the renderer zenn.dev uses) into a
// page styled by zenn-content-css, and the book and each chapter through
// zenn-model's validateBook and validateBookChapter, the checks Zenn's
// preview shows. It prints one JSON object: the pages it wrote and every
// problem, and exits 1 if a problem is critical.
//
//   node render.mjs BOOK_DIR OUT_DIR
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
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
const css = require.resolve('zenn-content-css');
const config = yaml.load(fs.readFileSync(path.join(bookDir, 'config.yaml'), 'utf8'));
const slug = path.basename(bookDir);
const problems = [];
const report = (where, errors) => {
  for (const e of errors) problems.push({ where, message: e.message, critical: !!e.isCritical });
};
report('config.yaml', validateBook({ slug, ...config, chapterOrderedByConfig: true }));
const pages = [];
for (const chapter of config.chapters) {
  const file = path.join(bookDir, chapter + '.md');
  const text = fs.readFileSync(file, 'utf8');
  const m = /^---\n([\s\S]*?)\n---\n/.exec(text);
  const front = m ? yaml.load(m[1]) : {};
  const body = m ? text.slice(m[0].length) : text;
  const html = await markdownToHtml(body);
  report(chapter, validateBookChapter({ slug: chapter, ...front, bodyHtml: html }));
  if (/data-body-error/.test(html)) problems.push({ where: chapter, message: 'the body has an error Zenn shows in its place', critical: true });
  const page = `<!doctype html><html lang="ja"><head><meta charset="utf-8"><title>${front.title || chapter}</title>
<link rel="stylesheet" href="file://${css}"></head>
<body style="max-width: 780px; margin: 2em auto; padding: 0 1em"><h1>${front.title || chapter}</h1><div class="znc">${html}</div></body></html>`;
  const out = path.join(outDir, chapter + '.html');
  fs.writeFileSync(out, page);
  pages.push(out);
}
console.log(JSON.stringify({ pages, problems }, null, 2));
process.exit(problems.some((p) => p.critical) ? 1 : 0);
