import { afterEach, describe, expect, it } from "vitest";
import { FAILURE_BODY } from "../src/index.js";
import {
  cookiesOf,
  fromPage,
  createSandbox,
  publishFaq,
  shape,
  str,
  startProvider,
  type Agent,
  type Provider,
} from "./harness.js";

let p: Provider;
afterEach(async () => p?.close());

async function exchange(a: Agent, surface = "preview"): Promise<string> {
  const r = await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/preview`, {
    headers: a.auth,
    json: { surface },
  });
  expect(r.status).toBe(200);
  const u = new URL(str(r.json(), "exchange_url"));
  expect(u.hostname).toBe(surface === "preview" ? "preview.localhost" : "preview-admin.localhost");
  expect(Date.parse(str(r.json(), "expires_at")) - Date.parse("2026-03-01T12:00:00Z")).toBeLessThanOrEqual(10 * 60_000);
  return u.searchParams.get("code") ?? "";
}

describe("§16 / §17 Preview", () => {
  it("MUST §17.2 / App. B / §24.10 GET never consumes: a static form with no script; only a POST consumes, once", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const code = await exchange(a);
    for (let i = 0; i < 3; i++) {
      const g = await p.req("preview.localhost", "GET", `/exchange?code=${code}`);
      expect(g.status).toBe(200);
      expect(g.body).toContain('<form method="post" action="/exchange">');
      expect(g.body).toContain('<button type="submit">');
      expect(g.body).not.toMatch(/<script|onload|onclick|http-equiv/i);
      expect(g.headers["content-security-policy"]).toContain("script-src 'none'");
      expect(g.headers["set-cookie"]).toBeUndefined();
    }
    const post = await p.req("preview.localhost", "POST", "/exchange", {
      form: { code },
      headers: fromPage(p, "preview.localhost"),
    });
    expect(post.status).toBe(303);
    expect(post.headers["location"]).toBe("/");
    const again = await p.req("preview.localhost", "POST", "/exchange", {
      form: { code },
      headers: fromPage(p, "preview.localhost"),
    });
    expect(again.body).toBe(FAILURE_BODY);
  });

  it("MUST §17.1 / App. B exchange codes expire within 10 minutes and are scoped to one surface; MUST §17.3 identical failures", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const forAdmin = await exchange(a, "preview_admin");
    const wrongSurface = await p.req("preview.localhost", "POST", "/exchange", {
      form: { code: forAdmin },
      headers: fromPage(p, "preview.localhost"),
    });
    const code = await exchange(a);
    p.advance(10 * 60_000);
    const expired = await p.req("preview.localhost", "POST", "/exchange", {
      form: { code },
      headers: fromPage(p, "preview.localhost"),
    });
    const unknown = await p.req("preview.localhost", "POST", "/exchange", {
      form: { code: "acp_exch_AAAAAAAAAAAAAAAAAAAAAA" },
      headers: fromPage(p, "preview.localhost"),
    });
    expect(shape(wrongSurface)).toEqual(shape(unknown));
    expect(shape(expired)).toEqual(shape(unknown));
  });

  it("MUST §21 no open redirect: the exchange always lands on `/`, whatever the request asks", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const code = await exchange(a);
    const r = await p.req("preview.localhost", "POST", "/exchange?next=https://evil.example", {
      form: { code, next: "https://evil.example", redirect: "//evil" },
      headers: fromPage(p, "preview.localhost"),
    });
    expect(r.headers["location"]).toBe("/");
  });

  it("MUST §17.2 / §21 a POST naming no origin (neither Origin nor Sec-Fetch-Site: not a browser's form) is refused with a page saying why, before the code is looked at", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    await publishFaq(p, a);
    for (const [host, surface] of [
      ["preview.localhost", "preview"],
      ["preview-admin.localhost", "preview_admin"],
    ] as const) {
      const code = await exchange(a, surface);
      const bare = await p.req(host, "POST", "/exchange", { form: { code } });
      // The old code consumed the code for this request (303 and a session).
      expect(bare.status).toBe(403);
      expect(bare.headers["set-cookie"]).toBeUndefined();
      expect(bare.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(bare.body).toContain("<h1>Open this link in a browser</h1>");
      expect(bare.body).toContain("the link was not looked at and still works");
      expect(bare.body).not.toContain(code);
      // Unknown codes get the same page: nothing about the code shows.
      const unknown = await p.req(host, "POST", "/exchange", { form: { code: "acp_exch_AAAAAAAAAAAAAAAAAAAAAA" } });
      expect(unknown.status).toBe(403);
      expect(unknown.body).toBe(bare.body);
      // The code is untouched: the page's button (Origin alone, Sec-Fetch-Site alone) still opens it, once.
      const onlySite = await p.req(host, "POST", "/exchange", {
        form: { code },
        headers: { "sec-fetch-site": "same-origin" },
      });
      expect(onlySite.status).toBe(303);
      const next = await exchange(a, surface);
      const onlyOrigin = await p.req(host, "POST", "/exchange", {
        form: { code: next },
        headers: { origin: `http://${host}:${p.port}` },
      });
      expect(onlyOrigin.status).toBe(303);
    }
    expect(p.logs.filter((l) => l.action === "exchange.not_from_page").map((l) => l.status)).toEqual([
      403, 403, 403, 403,
    ]);
  });

  it("MUST §21 CSRF: a cross-origin POST consumes nothing", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const code = await exchange(a);
    const cross = await p.req("preview.localhost", "POST", "/exchange", {
      form: { code },
      headers: { origin: "https://evil.example" },
    });
    expect(cross.body).toBe(FAILURE_BODY);
    const site = await p.req("preview.localhost", "POST", "/exchange", {
      form: { code },
      headers: { "sec-fetch-site": "cross-site" },
    });
    expect(site.body).toBe(FAILURE_BODY);
    expect(
      (
        await p.req("preview.localhost", "POST", "/exchange", {
          form: { code },
          headers: { origin: `http://preview.localhost:${p.port}` },
        })
      ).status,
    ).toBe(303);
  });

  it("MUST §16.1 session cookies HttpOnly, SameSite=Strict, host-only (scoped to the preview origin) and never accepted by preview-admin or admin", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const r = await p.req("preview.localhost", "POST", "/exchange", {
      form: { code: await exchange(a) },
      headers: fromPage(p, "preview.localhost"),
    });
    const set = String(r.headers["set-cookie"]);
    expect(set).toMatch(/^acp_pv=[A-Za-z0-9]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=3600$/);
    expect(set).not.toMatch(/domain=/i);
    const cookie = cookiesOf(r);
    const view = await p.req("preview.localhost", "GET", "/", { headers: { cookie } });
    expect(view.status).toBe(200);
    expect(view.body).toContain("What is Acme?");
    expect(view.headers["x-frame-options"]).toBe("DENY");
    expect(view.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(view.headers["x-robots-tag"]).toContain("noindex");
    const asAdminCookie = cookie.replace("acp_pv=", "acp_pva=");
    expect((await p.req("preview-admin.localhost", "GET", "/", { headers: { cookie: asAdminCookie } })).body).toBe(
      FAILURE_BODY,
    );
    expect(
      (
        await p.req("admin.localhost", "GET", "/workspace", {
          headers: { cookie: cookie.replace("acp_pv=", "acp_owner=") },
        })
      ).body,
    ).toBe(FAILURE_BODY);
  });

  it("MUST §16.1 Secure and __Host- cookies when served over TLS", async () => {
    p = await startProvider({ tls: true });
    const a = await createSandbox(p);
    const r = await p.req("preview.localhost", "POST", "/exchange", {
      form: { code: await exchange(a) },
      headers: { origin: `https://preview.localhost:${p.port}`, "sec-fetch-site": "same-origin" },
    });
    expect(String(r.headers["set-cookie"])).toMatch(
      /^__Host-acp_pv=[A-Za-z0-9]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=3600; Secure$/,
    );
  });

  it("MUST §16.1 / App. B preview admin is read-only at the backend: every state-changing method is refused and changes nothing", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const r = await p.req("preview-admin.localhost", "POST", "/exchange", {
      form: { code: await exchange(a, "preview_admin") },
      headers: fromPage(p, "preview-admin.localhost"),
    });
    const cookie = cookiesOf(r);
    const view = await p.req("preview-admin.localhost", "GET", "/", { headers: { cookie } });
    expect(view.status).toBe(200);
    expect(view.body).toContain("published");
    expect(view.headers["x-frame-options"]).toBe("DENY");
    const before =
      JSON.stringify(p.db.prepare("SELECT * FROM claim_sandboxes").all()) +
      JSON.stringify(p.db.prepare("SELECT * FROM claim_faqs").all());
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      for (const path of ["/", "/v1/faqs", `/v1/sandboxes/${a.id}`, "/claim/verify", "/anything"]) {
        const w = await p.req("preview-admin.localhost", method, path, {
          json: { title: "pwned" },
          headers: { cookie, ...a.auth },
        });
        expect(w.status).toBe(405);
      }
    }
    const after =
      JSON.stringify(p.db.prepare("SELECT * FROM claim_sandboxes").all()) +
      JSON.stringify(p.db.prepare("SELECT * FROM claim_faqs").all());
    expect(after).toBe(before);
  });

  it("MUST §16.1 / App. B separate origins: the API, claim and admin routes are not served on the preview origins and vice versa", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const onPreview = await p.req("preview.localhost", "GET", "/v1/faqs", { headers: a.auth });
    const claimOnPreview = await p.req("preview.localhost", "GET", "/claim");
    const exchangeOnApi = await p.req("api.localhost", "GET", "/exchange?code=x");
    const discoveryOnAdmin = await p.req("admin.localhost", "GET", "/.well-known/agent-access");
    for (const r of [onPreview, claimOnPreview, exchangeOnApi, discoveryOnAdmin]) expect(r.body).toBe(FAILURE_BODY);
  });
});
