import { afterEach, describe, expect, it } from "vitest";
import { FAILURE_BODY } from "../src/index.js";
import { at, cookiesOf, str, createSandbox, humanClaim, publishFaq, startProvider, type Provider } from "./harness.js";

let p: Provider;
afterEach(async () => p?.close());

describe("Appendix A example flow over real HTTP", () => {
  it("discovery documents sha256_leading_zeros exactly, then challenge → sandbox → faq → publish → claim code → human claim", async () => {
    p = await startProvider();
    const d = await p.req("api.localhost", "GET", "/.well-known/agent-access");
    expect(d.status).toBe(200);
    const disc = d.json();
    expect(at(disc, "acp_version")).toBe("1.0");
    expect(at(disc, "sandbox.admission")).toEqual(["proof_of_work"]);
    expect(at(disc, "proof_of_work.algorithm")).toBe("sha256_leading_zeros");
    expect(at(disc, "proof_of_work.nonce_pattern")).toBe("^[A-Za-z0-9]{1,64}$");
    expect(at(disc, "proof_of_work.description")).toContain("challenge + nonce");
    expect(at(disc, "security")).toEqual({
      handle_rotation_on_claim: true,
      handle_rotation_on_publish: true,
      adaptive_pow: true,
    });
    expect(at(disc, "content_types")).toEqual(["faq"]);
    expect(at(disc, "claim.method")).toBe("code_plus_pow");
    expect(at(disc, "sandbox.challenge_endpoint")).toBe(`http://api.localhost:${p.port}/v1/sandboxes/challenge`);

    const a = await createSandbox(p);
    expect(at(a.created, "status")).toBe("active");
    expect(at(a.created, "agent_token.scopes")).toEqual(["sandbox:manage", "content:write", "content:publish"]);
    const { pub } = await publishFaq(p, a);
    expect(at(pub, "status")).toBe("published");
    expect(at(pub, "handle_rotated")).toBe(true);
    expect(at(pub, "previous_handle")).toBe(a.handle);
    expect(at(pub, "new_handle")).not.toBe(a.handle);
    expect(at(pub, "published_url")).toBe(`http://${str(pub, "new_handle")}.pub.localhost:${p.port}/acme-help`);

    const view = await p.req(`${str(pub, "new_handle")}.pub.localhost`, "GET", "/acme-help");
    expect(view.status).toBe(200);
    expect(view.body).toContain("What is Acme?");
    expect(view.headers["x-robots-tag"]).toContain("noindex");

    const cl = await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/claim`, { headers: a.auth });
    expect(cl.status).toBe(200);
    const code = str(cl.json(), "claim_code");
    const url = str(cl.json(), "claim_url");
    expect(code).toMatch(/^ACP-[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    expect(url).toBe(`http://admin.localhost:${p.port}/claim`);

    const { verify, cookie } = await humanClaim(p, code.toLowerCase());
    expect(verify.status).toBe(200);
    const done = verify.json();
    expect(at(done, "status")).toBe("claimed");
    const ws = await p.req("admin.localhost", "GET", "/workspace", { headers: { cookie } });
    expect(ws.status).toBe(200);
    expect(ws.body).toContain("Acme help");
    // Claimed: the workspace handle serves without noindex; the published handle is dead.
    const newHost = new URL(str(done, "published_url")).hostname;
    const claimed = await p.req(newHost, "GET", "/acme-help");
    expect(claimed.status).toBe(200);
    expect(claimed.headers["x-robots-tag"]).toBeUndefined();
    const old = await p.req(`${str(pub, "new_handle")}.pub.localhost`, "GET", "/acme-help");
    expect(old.status).toBe(404);
    expect(old.body).toBe(FAILURE_BODY);
    expect(cookiesOf(old)).toBe("");
  });
});
