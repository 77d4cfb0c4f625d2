/**
 * Safe Markdown (§14): a deliberately small renderer. Raw HTML is never passed through (every `<` is
 * escaped), links are rendered only for `https:` URLs (anything else becomes plain text), there is no image
 * syntax (external images are refused at input), and the output has no style attribute, no event handler
 * and no CSS. Supported: paragraphs, `#`–`###` headings, `-`/`*` and `1.` lists, `**bold**`, `*em*`,
 * `` `code` ``, fenced code blocks, `[text](https://…)` links.
 */

const ESC: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESC[c] ?? c);
}

/**
 * Why a Markdown source is refused at input, or undefined when it is acceptable: SVG, style/script tags,
 * image syntax (no external images), and link targets that are not `https:` (javascript:, data:, http:, …).
 */
export function unsafeMarkdownReason(src: string): string | undefined {
  if (/<\s*\/?\s*svg/i.test(src) || /\.svg\b/i.test(src)) return "svg is not allowed";
  if (/<\s*\/?\s*(style|script|iframe|object|embed)/i.test(src)) return "raw html is not allowed";
  if (/!\[[^\]]*\]\(/.test(src)) return "images are not allowed (no external images)";
  for (const m of src.matchAll(/\]\(\s*<?([^)\s>]*)/g)) {
    if (!isSafeUrl(m[1] ?? "")) return "only https: links are allowed";
  }
  // Prose may say "data: 5 GB"; what is refused is a script scheme anywhere and any scheme in an autolink.
  if (/\b(javascript|vbscript)\s*:/i.test(src) || /<\s*(javascript|data|vbscript)\s*:/i.test(src))
    return "javascript: and data: urls are not allowed";
  return undefined;
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
  let rest = src;
  const link = /\[([^\]\n]{1,500})\]\(\s*<?([^)\s>]{1,2000})>?\s*\)/;
  while (rest.length > 0) {
    const m = link.exec(rest);
    if (m === null) {
      parts.push(emphasis(escapeHtml(rest)));
      break;
    }
    parts.push(emphasis(escapeHtml(rest.slice(0, m.index))));
    const label = emphasis(escapeHtml(m[1] ?? ""));
    const href = m[2] ?? "";
    parts.push(
      isSafeUrl(href)
        ? `<a href="${escapeHtml(new URL(href).href)}" rel="nofollow noopener noreferrer ugc">${label}</a>`
        : label,
    );
    rest = rest.slice(m.index + m[0].length);
  }
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
