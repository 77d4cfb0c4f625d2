/**
 * §19.1 / §28: claim codes a sandbox is issued are limited per sandbox (default 10 an hour, `claimCodesPerSandboxPerHour`),
 * not only by the 500 requests an hour every call counts toward: a code lives up to an hour, so the limit also bounds
 * how many are live at once. The budget is the sandbox's own — only its agent token spends it — so no one else,
 * not another sandbox of the same range nor a caller with a wrong token, can use it up.
 */
import { afterEach, describe, expect, it } from "vitest";
import { FAILURE_BODY } from "../src/index.js";
import { createSandbox, num, publishFaq, startProvider, str, type Agent, type Provider } from "./harness.js";

let p: Provider;
afterEach(async () => p?.close());

const askCode = (a: Agent, auth = a.auth) =>
  p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/claim`, { headers: auth });

describe("§19.1 claim codes per sandbox", () => {
  it("a sandbox is issued at most 10 claim codes an hour (429 with the real wait); another sandbox of the same range is not held back", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const b = await createSandbox(p);
    await publishFaq(p, b);
    for (let i = 0; i < 10; i++) expect((await askCode(a)).status).toBe(200);
    // The old code issued up to 500 an hour (the general request budget): this was 200.
    const over = await askCode(a);
    expect(over.status).toBe(429);
    expect(str(over.json(), "error.code")).toBe("claim_rate_limited");
    const wait = Number(over.headers["retry-after"]);
    expect(wait).toBeGreaterThan(3_000);
    expect(wait).toBeLessThanOrEqual(3_780);
    expect(num(over.json(), "error.retry_after_seconds")).toBe(wait);
    expect((await askCode(b)).status).toBe(200);
    p.advance(wait * 1000);
    expect((await askCode(a)).status).toBe(200);
  });

  it("calls without the sandbox's token spend nothing of its budget; the limit is configurable", async () => {
    p = await startProvider({ claimCodesPerSandboxPerHour: 2 });
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const other = await createSandbox(p);
    for (const auth of [{ authorization: "Bearer wrong" }, other.auth, {}])
      for (let i = 0; i < 5; i++) expect((await askCode(a, auth)).body).toBe(FAILURE_BODY);
    expect((await askCode(a)).status).toBe(200);
    expect((await askCode(a)).status).toBe(200);
    expect((await askCode(a)).status).toBe(429);
  });
});
