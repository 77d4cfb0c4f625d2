/**
 * Safe Markdown (§14): a deliberately small renderer. Raw HTML is never passed through (every `<` is
 * escaped), links are rendered only for `https:` URLs (anything else becomes plain text), there is no image
 * syntax (external images are refused at input), and the output has no style attribute, no event handler
 * and no CSS. Supported: paragraphs, `#`–`###` headings, `-`/`*` and `1.` lists, `**bold**`, `*em*`,
 * `` `code` ``, fenced code blocks, `[text](https://…)` links.
 *
 * Every check and the renderer run in time linear in the text: an answer is attacker-controlled (10 KB each, 50 to an
 * FAQ, 5 FAQs to a published page any visitor can load), and a pattern that backtracks over it blocks the provider's
 * one event loop. So no pattern here may retry a run of text from each of its start positions: `<` + 10 000
 * spaces took `<\s*\/?\s*svg` 0.3 s per answer (quadratic), `![` repeated took `!\[[^\]]*\]\(` as long, and a
 * link pattern whose label and target could hold `[` rescanned up to 2 500 characters from every `[`.
 */

const ESC: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESC[c] ?? c);
}

/**
 * Why a Markdown source is refused at input, or undefined when it is acceptable: SVG, style/script tags,
 * image syntax (no external images), and link targets that are not `https:` (javascript:, data:, http:, …).
 * (The optional `/` of a closing tag is `(?:\/\s*)?`, not `\/?\s*`: two `\s*` in a row split a run of spaces every
 * possible way before failing.)
 */
export function unsafeMarkdownReason(src: string): string | undefined {
  if (/<\s*(?:\/\s*)?svg/i.test(src) || /\.svg\b/i.test(src)) return "svg is not allowed";
  if (/<\s*(?:\/\s*)?(?:style|script|iframe|object|embed)/i.test(src)) return "raw html is not allowed";
  if (hasImage(src)) return "images are not allowed (no external images)";
  for (const m of src.matchAll(/\]\(\s*<?([^)\s>]*)/g)) {
    if (!isSafeUrl(m[1] ?? "")) return "only https: links are allowed";
  }
  // Prose may say "data: 5 GB"; what is refused is a script scheme anywhere and any scheme in an autolink.
  if (/\b(javascript|vbscript)\s*:/i.test(src) || /<\s*(javascript|data|vbscript)\s*:/i.test(src))
    return "javascript: and data: urls are not allowed";
  return undefined;
}

/**
 * Whether `src` has Markdown image syntax: a `![` whose first `]` after it is followed by `(` (what
 * `/!\[[^\]]*\]\(/` matches), found in one pass: every `![` before a `]` that is not followed by `(` has that same
 * first `]`, so the search goes on after it rather than from each of them in turn.
 */
export function hasImage(src: string): boolean {
  for (let i = src.indexOf("!["); i >= 0;) {
    const close = src.indexOf("]", i + 2);
    if (close < 0) return false;
    if (src[close + 1] === "(") return true;
    i = src.indexOf("![", close + 1);
  }
  return false;
}

/**
 * A Markdown link `[label](target)`, as the renderer draws it and the content scan checks it (one pattern, so the
 * scan sees exactly the links a page shows). Neither label nor target holds `[`: each scan stops at the next `[`,
 * where the next attempt starts, so no text is scanned twice (with `[` allowed, every `[` of a run rescanned up to
 * 2 500 characters: 55 ms for an answer of `[`s, 14 s for a page of them). A `[` in a target (an IPv6 literal, a
 * bracket in a path) leaves the text unlinked.
 */
const MARKDOWN_LINK = /\[([^[\]\n]{1,500})\]\(\s*<?([^)\s>[]{1,2000})>?\s*\)/g;

/** The links of a Markdown text: label, target, and where the whole `[label](target)` starts and ends. */
export function markdownLinks(src: string): { label: string; href: string; start: number; end: number }[] {
  return [...src.matchAll(MARKDOWN_LINK)].map((m) => ({
    label: m[1] ?? "",
    href: m[2] ?? "",
    start: m.index,
    end: m.index + m[0].length,
  }));
}

/** Whether a link target is an absolute `https:` URL without credentials. */
export function isSafeUrl(raw: string): boolean {
  if (!/^https:\/\//i.test(raw)) return false;
  try {
    const u = new URL(raw);
    return u.protocol === "https:" && u.username === "" && u.password === "";
  } catch {
    return false;
  }
}

function inline(src: string): string {
  const parts: string[] = [];
  let at = 0;
  for (const l of markdownLinks(src)) {
    parts.push(emphasis(escapeHtml(src.slice(at, l.start))));
    const label = emphasis(escapeHtml(l.label));
    parts.push(
      isSafeUrl(l.href)
        ? `<a href="${escapeHtml(new URL(l.href).href)}" rel="nofollow noopener noreferrer ugc">${label}</a>`
        : label,
    );
    at = l.end;
  }
  parts.push(emphasis(escapeHtml(src.slice(at))));
  return parts.join("");
}

function emphasis(escaped: string): string {
  return escaped
    .replace(/`([^`\n]+)`/g, "<code>$1</code>")
    .replace(/\*\*([^*\n]+)\*\*/g, "<strong>$1</strong>")
    .replace(/\*([^*\n]+)\*/g, "<em>$1</em>");
}

/** Renders safe Markdown to HTML (see the module comment). Never throws. */
export function renderSafeMarkdown(src: string): string {
  return renderBlocks(src, inline);
}

/**
 * The links a rendered page of `src` draws (those with an `https:` target become anchors): found in the text the
 * renderer passes to its inline step, after it joined a paragraph's lines with spaces — so a link whose text runs
 * over two lines is found, as the page shows it, and one inside a code block is not. The content scan checks
 * these, not the links of the raw text.
 */
export function renderedLinks(src: string): { label: string; href: string }[] {
  const links: { label: string; href: string }[] = [];
  renderBlocks(src, (text) => {
    links.push(...markdownLinks(text));
    return "";
  });
  return links;
}

/** The block structure of safe Markdown, each run of inline text rendered by `inline`. */
function renderBlocks(src: string, inline: (text: string) => string): string {
  const out: string[] = [];
  const lines = src.replace(/\r\n?/g, "\n").split("\n");
  let para: string[] = [];
  let list: { tag: "ul" | "ol"; items: string[] } | undefined;
  const flush = (): void => {
    if (para.length > 0) out.push(`<p>${inline(para.join(" "))}</p>`);
    para = [];
    if (list !== undefined)
      out.push(`<${list.tag}>${list.items.map((i) => `<li>${inline(i)}</li>`).join("")}</${list.tag}>`);
    list = undefined;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (/^```/.test(line)) {
      flush();
      const code: string[] = [];
      for (i++; i < lines.length && !/^```/.test(lines[i] ?? ""); i++) code.push(lines[i] ?? "");
      out.push(`<pre><code>${escapeHtml(code.join("\n"))}</code></pre>`);
      continue;
    }
    const h = /^(#{1,3})\s+(.*)$/.exec(line);
    const ul = /^\s*[-*]\s+(.*)$/.exec(line);
    const ol = /^\s*\d{1,9}[.)]\s+(.*)$/.exec(line);
    if (line.trim() === "") flush();
    else if (h !== null) {
      flush();
      const level = (h[1] ?? "#").length + 2;
      out.push(`<h${level}>${inline(h[2] ?? "")}</h${level}>`);
    } else if (ul !== null || ol !== null) {
      const tag = ul !== null ? "ul" : "ol";
      if (para.length > 0 || (list !== undefined && list.tag !== tag)) flush();
      list ??= { tag, items: [] };
      list.items.push((ul ?? ol)?.[1] ?? "");
    } else {
      if (list !== undefined) flush();
      para.push(line.trim());
    }
  }
  flush();
  return out.join("\n");
}
