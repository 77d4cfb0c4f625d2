import { afterEach, describe, expect, it } from "vitest";
import { FAILURE_BODY, newPublicHandle } from "../src/index.js";
import {
  cookiesOf,
  fromPage,
  createSandbox,
  humanClaim,
  publishFaq,
  shape,
  str,
  startProvider,
  type Provider,
} from "./harness.js";

let p: Provider;
afterEach(async () => p?.close());

describe("§10 / §22 / App. B Observability", () => {
  it("MUST §10 not-found, expired, invalid and already-used answers are identical (status, body, headers) across surfaces", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const b = await createSandbox(p);
    await publishFaq(p, a);
    // API: unknown sandbox id, another agent's sandbox, a garbage token, a deleted sandbox's token.
    const other = await p.req("api.localhost", "POST", `/v1/sandboxes/${b.id}/claim`, { headers: a.auth });
    const unknownId = await p.req("api.localhost", "POST", "/v1/sandboxes/sbx_0000000000000000000000/claim", {
      headers: a.auth,
    });
    const garbage = await p.req("api.localhost", "GET", "/v1/faqs", { headers: { authorization: "Bearer nope" } });
    await p.req("api.localhost", "DELETE", `/v1/sandboxes/${b.id}`, { headers: b.auth });
    const deleted = await p.req("api.localhost", "GET", "/v1/faqs", { headers: b.auth });
    const noRoute = await p.req("api.localhost", "GET", "/v2/anything");
    const noHost = await p.req("evil.example", "GET", "/");
    // Exchange: unknown, used, expired.
    const ex = new URL(
      str(
        (await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/preview`, { headers: a.auth, json: {} })).json(),
        "exchange_url",
      ),
    );
    const code = ex.searchParams.get("code") ?? "";
    const first = await p.req("preview.localhost", "POST", "/exchange", {
      form: { code },
      headers: fromPage(p, "preview.localhost"),
    });
    expect(first.status).toBe(303);
    const used = await p.req("preview.localhost", "POST", "/exchange", {
      form: { code },
      headers: fromPage(p, "preview.localhost"),
    });
    const unknownEx = await p.req("preview.localhost", "POST", "/exchange", {
      form: { code: "acp_exch_0000000000000000000000" },
      headers: fromPage(p, "preview.localhost"),
    });
    const ex2 = new URL(
      str(
        (await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/preview`, { headers: a.auth, json: {} })).json(),
        "exchange_url",
      ),
    );
    p.advance(10 * 60_000 + 1);
    const expired = await p.req("preview.localhost", "POST", "/exchange", {
      form: { code: ex2.searchParams.get("code") ?? "" },
      headers: fromPage(p, "preview.localhost"),
    });
    const all = [other, unknownId, garbage, deleted, noRoute, noHost, used, unknownEx, expired];
    for (const r of all) {
      expect(r.body).toBe(FAILURE_BODY);
      expect(shape(r)).toEqual(shape(all[0]!));
    }
    expect(cookiesOf(used)).toBe("");
  });

  it("MUST §10 timing normalized: a failure is never answered before the minimum response time", async () => {
    p = await startProvider({ minFailureMs: 60 });
    const t = performance.now();
    const r = await p.req(`${newPublicHandle()}.pub.localhost`, "GET", "/");
    expect(r.status).toBe(404);
    expect(performance.now() - t).toBeGreaterThanOrEqual(55);
  });

  it("MUST §22 / App. B secrets not logged (canary): no token, code, handle or authorization in any log line; request_id, action, internal id and coarse range are", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const { pub } = await publishFaq(p, a);
    const ex = str(
      (await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/preview`, { headers: a.auth, json: {} })).json(),
      "exchange_url",
    );
    const exCode = new URL(ex).searchParams.get("code") ?? "";
    await p.req("preview.localhost", "GET", `/exchange?code=${exCode}`);
    await p.req("preview.localhost", "POST", "/exchange", {
      form: { code: exCode },
      headers: fromPage(p, "preview.localhost"),
    });
    const code = str(
      (await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/claim`, { headers: a.auth })).json(),
      "claim_code",
    );
    await humanClaim(p, "ACP-CANA-RYCA-NARY-CANA");
    const { verify } = await humanClaim(p, code);
    expect(verify.status).toBe(200);
    const text = p.logs.map((l) => JSON.stringify(l)).join("\n");
    const secrets = [
      a.token,
      a.handle,
      str(pub, "new_handle"),
      exCode,
      code,
      code.replace(/-/g, ""),
      "CANA-RYCA",
      "Bearer",
    ];
    for (const s of secrets) expect(text).not.toContain(s);
    expect(text.toLowerCase()).not.toContain("authorization");
    expect(text).not.toContain("127.0.0.1");
    expect(p.logs.every((l) => /^[0-9a-f]{16}$/.test(l.request_id) && l.ip_range === "127.0.0.0/24")).toBe(true);
    expect(p.logs.some((l) => l.action === "claim.verify" && l.sandbox_id === a.id && l.status === 200)).toBe(true);
    expect(p.logs.some((l) => l.action === "faq.publish" && l.sandbox_id === a.id)).toBe(true);
  });
});
