import { afterEach, describe, expect, it } from "vitest";
import { FAILURE_BODY, handleOf, takeDown } from "../src/index.js";
import { createSandbox, humanClaim, num, publishFaq, shape, str, startProvider, type Provider } from "./harness.js";

let p: Provider;
afterEach(async () => p?.close());

const T0 = Date.parse("2026-03-01T12:00:00Z");
const CHARGE = { points: 30, halfLifeMs: 72 * 3_600_000 };

describe("§23.2 rapid takedown by the operator", () => {
  it("MUST §23.2 rapid takedown: the published page is gone at once (the one failure answer), the handle stays dead, the creator's reputation is charged", async () => {
    p = await startProvider({ admission: { baseDifficulty: 6, maxDifficulty: 20 } });
    const a = await createSandbox(p);
    const { pub } = await publishFaq(p, a);
    const handle = str(pub, "new_handle");
    const url = str(pub, "published_url");
    expect((await p.req(`${handle}.pub.localhost`, "GET", "/acme-help")).status).toBe(200);
    expect(handleOf(url)).toBe(handle);
    expect(await takeDown(p.server.store, handle, T0, CHARGE)).toMatchObject({ ok: true, sandboxId: a.id });
    const gone = await p.req(`${handle}.pub.localhost`, "GET", "/acme-help");
    const unknown = await p.req("aaaaaaaaaaaaaaaaaaaaaaaaaa.pub.localhost", "GET", "/acme-help");
    expect(gone.body).toBe(FAILURE_BODY);
    expect(shape(gone)).toEqual(shape(unknown));
    expect((await p.req("api.localhost", "GET", `/v1/sandboxes/${a.id}`, { headers: a.auth })).body).toBe(FAILURE_BODY);
    expect(await takeDown(p.server.store, handle, T0, CHARGE)).toEqual({ ok: false, reason: "not_found" });
    const c = await p.req("api.localhost", "GET", "/v1/sandboxes/challenge");
    expect(num(c.json(), "difficulty")).toBe(6 + 2); // 30 points on 127.0.0.1
  });

  it("a claimed workspace is not a sandbox: takedown leaves it alone; text that is not a handle or URL names nothing", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const code = str(
      (await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/claim`, { headers: a.auth })).json(),
      "claim_code",
    );
    const verify = (await humanClaim(p, code)).verify;
    const handle = handleOf(str(verify.json(), "published_url")) ?? "";
    expect(await takeDown(p.server.store, handle, T0)).toEqual({ ok: false, reason: "claimed" });
    expect((await p.req(`${handle}.pub.localhost`, "GET", "/acme-help")).status).toBe(200);
    for (const bad of ["", "not a url", "https://example.com/", "https://UPPERCASEHANDLE.pub.localhost/"])
      expect(handleOf(bad)).toBeUndefined();
  });
});
