import { createHash } from "node:crypto";
import { escapeHtml, renderSafeMarkdown } from "../content/safe-markdown.js";
import type { FaqRow } from "../store/claim-store.js";

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;color:#111}
h1{font-size:1.6rem}details{border-bottom:1px solid #ddd;padding:.5rem 0}summary{font-weight:600;cursor:pointer}
button{font:inherit;padding:.5rem 1rem}input{font:inherit;padding:.4rem;width:100%;box-sizing:border-box}
.note{color:#555;font-size:.9rem}code{background:#f3f3f3;padding:0 .2rem}`;

const sha = (s: string): string => `'sha256-${createHash("sha256").update(s, "utf8").digest("base64")}'`;

/**
 * The claim page's only script: ask for a challenge bound to the code, solve it, verify; a 409 (the difficulty rose
 * while it worked: `claim_challenge_stale`, nothing spent) starts again with a new challenge, three solves at most;
 * a 429 says when to try again (its `Retry-After`, in minutes rounded up). One claim at a time: a
 * second press while one is running does nothing (it would spend the code's one success and then fail, counting
 * toward the range's lockout).
 */
const CLAIM_SCRIPT = `(function(){var f=document.getElementById('f'),s=document.getElementById('s'),b=f.querySelector('button'),busy=false;
var bad='That did not work. Check the code and try again.';
function why(r){if(r.status!==429)return bad;var n=Math.ceil((Number(r.headers.get('retry-after'))||60)/60);
return 'Too many attempts. Try again in '+(n===1?'a minute.':n+' minutes.')}
function hex(b){return Array.prototype.map.call(new Uint8Array(b),function(x){return('0'+x.toString(16)).slice(-2)}).join('')}
function lz(b){var a=new Uint8Array(b),n=0;for(var i=0;i<a.length;i++){if(a[i]===0){n+=8;continue}return n+Math.clz32(a[i])-24}return n}
async function solve(c,d){var e=new TextEncoder(),n=0;for(;;){var batch=[];for(var k=0;k<256;k++){batch.push((n+k).toString(36))}
var ds=await Promise.all(batch.map(function(x){return crypto.subtle.digest('SHA-256',e.encode(c+x))}));
for(var j=0;j<ds.length;j++){if(lz(ds[j])>=d)return batch[j]}n+=256;if(n%8192===0)s.textContent='Working… '+n+' hashes'}}
async function claim(){var code=f.code.value,csrf=f.csrf.value,h={'content-type':'application/json'};
for(var i=0;i<3;i++){s.textContent='Requesting a challenge…';
var r=await fetch('/claim/challenge',{method:'POST',headers:h,body:JSON.stringify({code:code,csrf:csrf})});
if(!r.ok){s.textContent=why(r);return false}var c=await r.json();s.textContent='Working…';
var nonce=await solve(c.challenge,c.difficulty);var v=await fetch('/claim/verify',{method:'POST',headers:h,body:JSON.stringify({code:code,csrf:csrf,challenge:c.challenge,nonce:nonce})});
if(v.ok){location.assign('/workspace');return true}if(v.status!==409)break}s.textContent=why(v);return false}
function done(ok){if(!ok){busy=false;b.disabled=false}}
f.addEventListener('submit',function(ev){ev.preventDefault();if(busy)return;busy=true;b.disabled=true;
claim().then(done,function(){s.textContent=bad;done(false)})})})();`;

/** Content-Security-Policy of a page (script allowed only on the claim page, by hash). */
export function pageCsp(withScript: boolean): string {
  const script = withScript ? `script-src ${sha(CLAIM_SCRIPT)}` : "script-src 'none'";
  return `default-src 'none'; style-src ${sha(STYLE)}; ${script}; connect-src 'self'; img-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;
}

function page(title: string, body: string, script = false): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="no-referrer"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}${script ? `<script>${CLAIM_SCRIPT}</script>` : ""}</body></html>`;
}

/** The exchange interstitial (§17.2): static HTML, no script, a form a human must submit. Consumes nothing. */
export function exchangePage(code: string, label: string): string {
  return page(
    `Open ${label}`,
    `<h1>Open the ${escapeHtml(label)}</h1><p>An agent shared a ${escapeHtml(label)} link with you. Press the button to open it; the link then stops working.</p>
<form method="post" action="/exchange"><input type="hidden" name="code" value="${escapeHtml(code.slice(0, 100))}"><button type="submit">Open ${escapeHtml(label)}</button></form>`,
  );
}

/**
 * What a POST to `/exchange` that names no origin (neither `Origin` nor `Sec-Fetch-Site`: not a browser's form
 * post) gets (403): the link opens only from its page, in a browser, by pressing the button. The code was not
 * looked at, so the link still works.
 */
export function notFromPagePage(label: string): string {
  return page(
    "Open this link in a browser",
    `<h1>Open this link in a browser</h1><p>A ${escapeHtml(label)} link opens only from its own page, in a web browser, when you press the button on it. This request did not come from that page (it carried neither an <code>Origin</code> nor a <code>Sec-Fetch-Site</code> header, which browsers send with a form), so nothing was checked: the link was not looked at and still works.</p>
<p>Open the link in a browser and press the button.</p>`,
  );
}

/** The claim page: code entry plus a fresh proof-of-work bound to the code, with a CSRF token. */
export function claimPage(csrf: string): string {
  return page(
    "Claim your workspace",
    `<h1>Claim your workspace</h1><p>Enter the claim code the agent gave you. Your browser then does a short computation (a proof of work) before the claim is confirmed.</p>
<form id="f" method="post" action="/claim/verify"><label>Claim code <input name="code" autocomplete="off" spellcheck="false" placeholder="ACP-XXXX-XXXX-XXXX-XXXX" required></label>
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}"><p><button type="submit">Claim</button></p></form><p id="s" class="note" role="status"></p>
<noscript><p>This page needs JavaScript to compute the proof of work.</p></noscript>`,
    true,
  );
}

/**
 * What the claim page's form gets when it posts without a proof of work (the browser runs no script): why, and
 * the way back. The code was neither looked up nor used, and the post counts toward no lockout.
 */
export function noProofPage(): string {
  return page(
    "JavaScript needed",
    `<h1>This page needs JavaScript</h1><p>Claiming a workspace takes a short computation in your browser (a proof of work), and this browser did not run it, so nothing was checked: your claim code was not looked at and not used, and this attempt does not count against you.</p>
<p>Turn JavaScript on for this site (or use a browser that runs it), then <a href="/claim">go back to the claim page</a> and enter the code again.</p>`,
  );
}

/** Renders FAQs (safe Markdown answers) for the published, preview and workspace surfaces. */
export function faqsPage(title: string, faqs: readonly FaqRow[], banner: string): string {
  const parts = faqs.map((f) => {
    const qs = [...f.body.questions]
      .sort((a, b) => a.order - b.order)
      .map((q) => `<details><summary>${escapeHtml(q.question)}</summary>${renderSafeMarkdown(q.answer)}</details>`)
      .join("");
    return `<section><h1>${escapeHtml(f.body.title)}</h1><p>${escapeHtml(f.body.description)}</p>${qs}</section>`;
  });
  return page(title, `${banner === "" ? "" : `<p class="note">${escapeHtml(banner)}</p>`}${parts.join("")}`);
}

/** A read-only summary table for preview admin and the owner workspace. */
export function summaryPage(title: string, rows: readonly [string, string][], faqs: readonly FaqRow[]): string {
  const table = rows.map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join("");
  const list = faqs
    .map((f) => `<li>${escapeHtml(f.body.title)} — ${f.status}, ${f.body.questions.length} question(s)</li>`)
    .join("");
  return page(title, `<h1>${escapeHtml(title)}</h1><table>${table}</table><ul>${list}</ul>`);
}
