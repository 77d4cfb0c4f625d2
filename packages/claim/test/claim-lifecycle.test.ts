import { afterEach, describe, expect, it } from "vitest";
import { FAILURE_BODY, type FaqBody } from "../src/index.js";
import { at, createSandbox, publishFaq, str, startProvider, type Provider } from "./harness.js";

let p: Provider;
afterEach(async () => p?.close());
const T0 = Date.parse("2026-03-01T12:00:00Z");
const HOUR = 3_600_000;
const faqBody: FaqBody = {
  title: "x",
  slug: "x",
  description: "",
  settings: { theme: "auto", accent_color: "#000000", show_search: true, show_feedback: false },
  questions: [],
};

describe("§5 state machine, §20 tokens, §28 TTL and extensions", () => {
  it("create → active with a 48 h TTL; agent token ≤ 48 h, sandbox-scoped (MUST §20.1)", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    expect(Date.parse(str(a.created, "expires_at"))).toBe(T0 + 48 * HOUR);
    expect(Date.parse(str(a.created, "agent_token.expires_at"))).toBeLessThanOrEqual(T0 + 48 * HOUR);
    const b = await createSandbox(p);
    await p.req("api.localhost", "POST", "/v1/faqs", { json: { title: "B only" }, headers: b.auth });
    expect((await p.req("api.localhost", "GET", "/v1/faqs", { headers: a.auth })).json()).toEqual({ faqs: [] });
    expect((await p.req("api.localhost", "DELETE", `/v1/sandboxes/${b.id}`, { headers: a.auth })).body).toBe(
      FAILURE_BODY,
    );
    expect((await p.server.store.sandbox(b.id))?.state).toBe("active");
  });

  it("extensions: +24 h each, at most 2 (§28); the agent token is not refreshed (MUST §20.1 non-refreshable)", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const e1 = await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/extend`, { headers: a.auth });
    expect(Date.parse(str(e1.json(), "expires_at"))).toBe(T0 + 72 * HOUR);
    const e2 = await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/extend`, { headers: a.auth });
    expect(Date.parse(str(e2.json(), "expires_at"))).toBe(T0 + 96 * HOUR);
    const e3 = await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/extend`, { headers: a.auth });
    expect(e3.status).toBe(409);
    expect(str(e3.json(), "error.code")).toBe("claim_extension_limit");
    p.advance(48 * HOUR);
    expect((await p.req("api.localhost", "GET", "/v1/faqs", { headers: a.auth })).body).toBe(FAILURE_BODY);
    expect((await p.server.store.sandbox(a.id))?.state).toBe("active");
  });

  it("TTL expiry: active → expired and published → expired; content and handle gone; expired is final", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const b = await createSandbox(p);
    const { pub } = await publishFaq(p, b);
    p.advance(48 * HOUR);
    const gone = await p.req(new URL(str(pub, "published_url")).hostname, "GET", "/");
    expect(gone.body).toBe(FAILURE_BODY);
    expect(await p.server.store.sweep(T0 + 48 * HOUR + 1)).toBeGreaterThanOrEqual(0);
    expect((await p.server.store.sandbox(a.id))?.state).toBe("expired");
    expect((await p.server.store.sandbox(b.id))?.state).toBe("expired");
    expect(await p.server.store.listFaqs(b.id)).toEqual([]);
    expect(await p.server.store.deleteSandbox(a.id, T0 + 49 * HOUR)).toBe(false);
    expect(await p.server.store.extend(a.id, HOUR, 2, T0 + 49 * HOUR)).toBeUndefined();
    expect((await p.server.store.sandbox(a.id))?.state).toBe("expired");
  });

  it("delete: active/published → deleted; token, handle and content gone; deleted is final", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const { pub } = await publishFaq(p, a);
    expect((await p.req("api.localhost", "DELETE", `/v1/sandboxes/${a.id}`, { headers: a.auth })).status).toBe(204);
    expect((await p.server.store.sandbox(a.id))?.state).toBe("deleted");
    expect((await p.req("api.localhost", "DELETE", `/v1/sandboxes/${a.id}`, { headers: a.auth })).body).toBe(
      FAILURE_BODY,
    );
    expect((await p.req(new URL(str(pub, "published_url")).hostname, "GET", "/")).body).toBe(FAILURE_BODY);
    expect(await p.server.store.publishFaq(a.id, "faq_x", T0, faqBody)).toBeUndefined();
    expect((await p.server.store.sandbox(a.id))?.state).toBe("deleted");
  });

  it("publish via the generic §7.3 route; a second publish keeps the published handle", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const { pub } = await publishFaq(p, a);
    const f2 = await p.req("api.localhost", "POST", "/v1/faqs", { json: { title: "Second" }, headers: a.auth });
    const r = await p.req("api.localhost", "POST", `/v1/content/${str(f2.json(), "faq_id")}/publish`, {
      headers: a.auth,
    });
    expect(r.status).toBe(200);
    expect(at(r.json(), "handle_rotated")).toBe(false);
    expect(at(r.json(), "new_handle")).toBe(at(pub, "new_handle"));
    const page = await p.req(new URL(str(r.json(), "published_url")).hostname, "GET", "/second");
    expect(page.status).toBe(200);
  });

  it("§24.3 tokens cannot mint durable credentials: every credential the API issues expires within its cap", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    await publishFaq(p, a);
    await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/claim`, { headers: a.auth });
    await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/preview`, { headers: a.auth, json: {} });
    const rows = p.db.prepare("SELECT kind, created_at, expires_at FROM claim_credentials").all() as {
      kind: string;
      created_at: number;
      expires_at: number;
    }[];
    const cap: Record<string, number> = { agent_token: 48 * HOUR, claim_code: HOUR, exchange_code: 10 * 60_000 };
    expect(rows.length).toBe(3);
    for (const r of rows) expect(r.expires_at - r.created_at).toBeLessThanOrEqual(cap[r.kind] ?? 0);
  });
});

describe("§28 request quota", () => {
  it("§28 / §23.2 500 requests per hour per sandbox (here 3): further agent calls get 429, other sandboxes are unaffected", async () => {
    p = await startProvider({ requestsPerSandboxPerHour: 3 });
    const a = await createSandbox(p);
    const b = await createSandbox(p);
    for (let i = 0; i < 3; i++)
      expect((await p.req("api.localhost", "GET", "/v1/faqs", { headers: a.auth })).status).toBe(200);
    const over = await p.req("api.localhost", "POST", "/v1/faqs", { json: { title: "late" }, headers: a.auth });
    expect(over.status).toBe(429);
    expect(str(over.json(), "error.code")).toBe("claim_rate_limited");
    expect((await p.req("api.localhost", "GET", "/v1/faqs", { headers: b.auth })).status).toBe(200);
    p.advance(HOUR + 180_000); // a sliding window forgets a hit one slice (1/20) after it has passed
    expect((await p.req("api.localhost", "GET", "/v1/faqs", { headers: a.auth })).json()).toEqual({ faqs: [] });
  });
});
