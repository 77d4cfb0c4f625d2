import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FAILURE_BODY, renderSafeMarkdown, unsafeMarkdownReason } from "../src/index.js";
import { at, createSandbox, publishFaq, shape, str, startProvider, type Provider } from "./harness.js";

let p: Provider;
afterEach(async () => p?.close());

const post = (a: { auth: Record<string, string> }, path: string, json: unknown) =>
  p.req("api.localhost", "POST", path, { json, headers: a.auth });

describe("§25 / §28 FAQ content type", () => {
  it("creates, updates, lists and deletes FAQs and questions", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const f = await post(a, "/v1/faqs", { title: "Help", questions: [{ question: "Q1?", answer: "A1" }] });
    expect(f.status).toBe(201);
    const id = str(f.json(), "faq_id");
    expect(at(f.json(), "slug")).toBe("help");
    expect(at(f.json(), "status")).toBe("draft");
    const q = await post(a, `/v1/faqs/${id}/questions`, { question: "Q2?", answer: "A2" });
    expect(q.status).toBe(201);
    const qs = at(q.json(), "questions") as { id: string; question: string }[];
    expect(qs.map((x) => x.question)).toEqual(["Q1?", "Q2?"]);
    const upd = await p.req("api.localhost", "PATCH", `/v1/faqs/${id}/questions/${qs[1]!.id}`, {
      json: { answer: "A2 new" },
      headers: a.auth,
    });
    expect(upd.status).toBe(200);
    const del = await p.req("api.localhost", "DELETE", `/v1/faqs/${id}/questions/${qs[0]!.id}`, { headers: a.auth });
    expect((at(del.json(), "questions") as unknown[]).length).toBe(1);
    const patch = await p.req("api.localhost", "PATCH", `/v1/faqs/${id}`, {
      json: { title: "Help 2", settings: { theme: "dark" } },
      headers: a.auth,
    });
    expect(at(patch.json(), "title")).toBe("Help 2");
    expect(at(patch.json(), "settings.theme")).toBe("dark");
    const list = await p.req("api.localhost", "GET", "/v1/faqs", { headers: a.auth });
    expect((at(list.json(), "faqs") as unknown[]).length).toBe(1);
    expect((await p.req("api.localhost", "DELETE", `/v1/faqs/${id}`, { headers: a.auth })).status).toBe(204);
    expect((await p.req("api.localhost", "GET", `/v1/faqs/${id}`, { headers: a.auth })).body).toBe(FAILURE_BODY);
  });

  it("§28 limits: 5 FAQs per sandbox, 50 questions, 10 KB answers, 100-char titles", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    for (let i = 0; i < 5; i++) expect((await post(a, "/v1/faqs", { title: `F${i}` })).status).toBe(201);
    const sixth = await post(a, "/v1/faqs", { title: "F6" });
    expect(sixth.status).toBe(409);
    expect(str(sixth.json(), "error.code")).toBe("claim_limit_exceeded");
    const b = await createSandbox(p);
    const many = Array.from({ length: 51 }, (_, i) => ({ question: `q${i}`, answer: "a" }));
    expect(str((await post(b, "/v1/faqs", { title: "x", questions: many })).json(), "error.code")).toBe(
      "claim_limit_exceeded",
    );
    expect(
      str(
        (
          await post(b, "/v1/faqs", { title: "x", questions: [{ question: "q", answer: "a".repeat(10 * 1024 + 1) }] })
        ).json(),
        "error.code",
      ),
    ).toBe("claim_limit_exceeded");
    expect(str((await post(b, "/v1/faqs", { title: "t".repeat(101) })).json(), "error.code")).toBe(
      "claim_limit_exceeded",
    );
    expect((await p.req("api.localhost", "GET", "/v1/faqs", { headers: b.auth })).json()).toEqual({ faqs: [] });
  });

  it("MUST §14.2 / §24.8 / App. B SVG disallowed entirely; MUST §14.3 custom CSS disallowed; no external images", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const cases = [
      { title: "x", questions: [{ question: "q", answer: "<svg onload=alert(1)></svg>" }] },
      { title: "x", questions: [{ question: "q", answer: "see [logo](https://x.test/logo.svg)" }] },
      { title: "<svg/onload=alert(1)>" },
      { title: "x", custom_css: "body{background:url(https://evil)}" },
      { title: "x", settings: { css: "x" } },
      { title: "x", settings: { accent_color: "red;background:url(x)" } },
      { title: "x", questions: [{ question: "q", answer: "![img](https://evil.test/a.png)" }] },
      { title: "x", questions: [{ question: "q", answer: "<style>*{}</style>" }] },
    ];
    for (const c of cases) {
      const r = await post(a, "/v1/faqs", c);
      expect(r.status).toBe(400);
    }
    expect((await p.req("api.localhost", "GET", "/v1/faqs", { headers: a.auth })).json()).toEqual({ faqs: [] });
  });

  it("MUST §14.1 / App. B javascript:, data: and non-https links refused at input and stripped by the renderer", async () => {
    expect(unsafeMarkdownReason("[x](javascript:alert(1))")).toBeDefined();
    expect(unsafeMarkdownReason("[x](data:text/html,hi)")).toBeDefined();
    expect(unsafeMarkdownReason("[x](http://plain.test)")).toBeDefined();
    expect(unsafeMarkdownReason("[x](https://ok.test/a)")).toBeUndefined();
    expect(unsafeMarkdownReason("<data:text/html,hi>")).toBeDefined();
    expect(unsafeMarkdownReason("Your data: kept for 30 days.")).toBeUndefined();
    const html = renderSafeMarkdown(
      "[a](javascript:alert(1)) [b](data:x) [c](http://x.test) [d](https://ok.test/p?q=1&r=2)",
    );
    expect(html).not.toMatch(/javascript:|data:|http:\/\//);
    expect(html).toContain('<a href="https://ok.test/p?q=1&amp;r=2" rel="nofollow noopener noreferrer ugc">d</a>');
    p = await startProvider();
    const a = await createSandbox(p);
    for (const answer of ["[x](javascript:alert(1))", "[x](data:text/html;base64,AAAA)", "[x](JaVaScRiPt:alert(1))"]) {
      expect((await post(a, "/v1/faqs", { title: "x", questions: [{ question: "q", answer }] })).status).toBe(400);
    }
  });

  it("MUST §14.1 / App. B raw HTML stripped, no style attributes, no event handlers in rendered output", async () => {
    const html = renderSafeMarkdown(
      '<img src=x onerror="alert(1)"> <b style="color:red" onclick=x>hi</b> <a href="https://x">y</a>',
    );
    expect(html).not.toMatch(/<img|<b |<a href="https:\/\/x"/);
    expect(html).not.toMatch(/<[^>]*\s(style|on\w+)=/i);
    expect(html).toContain("&lt;img");
    p = await startProvider();
    const a = await createSandbox(p);
    const { pub } = await publishFaq(p, a, {
      title: "T",
      questions: [{ question: "<b onclick=x>q</b>", answer: '<img src=x onerror="alert(1)"> **ok**' }],
    });
    const page = await p.req(new URL(str(pub, "published_url")).hostname, "GET", "/t");
    expect(page.status).toBe(200);
    expect(page.body).not.toMatch(/<img|<b onclick/);
    expect(page.body).not.toMatch(/<[^>]*\s(style|on\w+)=/i);
    expect(page.body).toContain("<strong>ok</strong>");
    expect(page.body).not.toContain("<script");
    expect(page.headers["content-security-policy"]).toContain("script-src 'none'");
  });

  it("MUST §13.1 / App. B arbitrary paths not routed, cannot serve arbitrary HTML/JS/headers; MUST §13.2 no sitemap; MUST §13.2/§24.6 unpublished content not reachable", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    await post(a, "/v1/faqs", { title: "Draft" });
    const draft = await p.req(`${a.handle}.pub.localhost`, "GET", "/draft");
    expect(draft.body).toBe(FAILURE_BODY);
    const { pub } = await publishFaq(p, a);
    const host = new URL(str(pub, "published_url")).hostname;
    const ok = await p.req(host, "GET", "/acme-help");
    expect(ok.headers["set-cookie"]).toBeUndefined();
    expect(ok.headers["content-type"]).toBe("text/html; charset=utf-8");
    const paths = [
      "/draft",
      "/acme-help/x",
      "/index.html",
      "/app.js",
      "/sitemap.xml",
      "/robots.txt",
      "/../etc/passwd",
      "/ACME-HELP",
    ];
    const fails = await Promise.all(paths.map((x) => p.req(host, "GET", x)));
    fails.push(await p.req(host, "POST", "/acme-help", { json: {} }));
    for (const r of fails) expect(shape(r)).toEqual(shape(fails[0]!));
    expect(fails[0]!.body).toBe(FAILURE_BODY);
  });

  it("MUST §13.2 / App. B X-Robots-Tag: noindex on published content until claimed", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const { pub } = await publishFaq(p, a);
    const r = await p.req(new URL(str(pub, "published_url")).hostname, "GET", "/");
    expect(r.headers["x-robots-tag"]).toBe("noindex, nofollow");
  });
});

describe("§18 outbound fetches", () => {
  it("MUST §18.2 / §24.9 no automatic URL unfurling or metadata fetching: the provider's code has no outbound network client", () => {
    const root = new URL("../src/", import.meta.url).pathname;
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : [join(dir, n)]));
    const provider = files(root).filter((f) => !f.includes("/client/") && !f.endsWith("index.ts"));
    expect(provider.length).toBeGreaterThan(10);
    for (const f of provider) {
      // `isIP` (a pure address check, for --trust-proxy) is the one thing taken from node:net: it opens nothing.
      const text = readFileSync(f, "utf8").replace(/^import \{ isIP \} from "node:net";$/m, "");
      // The only fetch is the claim page's same-origin browser script calling `/claim/…`.
      expect(text).not.toMatch(/\bfetch\((?!'\/claim\/)|from "node:(https?|dns|net|tls)"|undici/);
    }
  });
});
