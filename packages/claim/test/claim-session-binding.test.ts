import { afterEach, describe, expect, it } from "vitest";
import { FAILURE_BODY } from "../src/index.js";
import {
  cookiesOf,
  fromPage,
  createSandbox,
  humanClaim,
  publishFaq,
  shape,
  startProvider,
  str,
  type Provider,
} from "./harness.js";

let p: Provider | undefined;
afterEach(async () => p?.close());

const A = "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0";
const B = "curl/8.5.0";

describe("SHOULD §17.2 sessions bound to the user agent that opened them", () => {
  it("a preview session cookie replayed from another user agent finds nothing (the one failure answer)", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const r = await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/preview`, {
      headers: a.auth,
      json: { surface: "preview" },
    });
    const code = new URL(str(r.json(), "exchange_url")).searchParams.get("code") ?? "";
    const post = await p.req("preview.localhost", "POST", "/exchange", {
      form: { code },
      headers: { "user-agent": A, ...fromPage(p, "preview.localhost") },
    });
    expect(post.status).toBe(303);
    const cookie = cookiesOf(post);
    const same = await p.req("preview.localhost", "GET", "/", { headers: { cookie, "user-agent": A } });
    expect(same.status).toBe(200);
    const other = await p.req("preview.localhost", "GET", "/", { headers: { cookie, "user-agent": B } });
    const none = await p.req("preview.localhost", "GET", "/", { headers: { "user-agent": B } });
    expect(other.body).toBe(FAILURE_BODY);
    expect(shape(other)).toEqual(shape(none));
  });

  it("the owner session after a claim works only from the claiming user agent", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const cl = await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/claim`, { headers: a.auth });
    const { verify, cookie } = await humanClaim(p, str(cl.json(), "claim_code"));
    expect(verify.status).toBe(200);
    expect((await p.req("admin.localhost", "GET", "/workspace", { headers: { cookie } })).status).toBe(200);
    const stolen = await p.req("admin.localhost", "GET", "/workspace", { headers: { cookie, "user-agent": B } });
    expect(stolen.body).toBe(FAILURE_BODY);
  });
});
