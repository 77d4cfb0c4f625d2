import { afterEach, describe, expect, it } from "vitest";
import { FAILURE_BODY } from "../src/index.js";
import { at, num, solve, str, startProvider, type Agent, type Provider } from "./harness.js";

let p: Provider;
afterEach(async () => p?.close());

const HOSTS = {
  api: "api.example.com",
  admin: "admin.example.com",
  preview: "preview.example-preview.net",
  previewAdmin: "preview-admin.example-preview.net",
  pubSuffix: "faq.example-preview.net",
};

describe("App. B / §26 origins on different registrable domains (configured)", () => {
  it("App. B different registrable domain: every surface answers on its configured host only, and the URLs handed out name those hosts", async () => {
    p = await startProvider({ hosts: HOSTS });
    const d = (await p.req(HOSTS.api, "GET", "/.well-known/agent-access")).json();
    expect(str(d, "sandbox.create_endpoint")).toBe(`http://${HOSTS.api}:${p.port}/v1/sandboxes`);
    expect(str(d, "claim.page")).toBe(`http://${HOSTS.admin}:${p.port}/claim`);
    expect((await p.req("api.localhost", "GET", "/.well-known/agent-access")).body).toBe(FAILURE_BODY);

    const c = (await p.req(HOSTS.api, "GET", "/v1/sandboxes/challenge")).json();
    const made = await p.req(HOSTS.api, "POST", "/v1/sandboxes", {
      json: {
        admission: {
          type: "proof_of_work",
          challenge: str(c, "challenge"),
          nonce: solve(str(c, "challenge"), num(c, "difficulty")),
        },
      },
    });
    expect(made.status).toBe(201);
    const token = str(made.json(), "agent_token.token");
    const a: Agent = {
      id: str(made.json(), "id"),
      token,
      handle: "",
      auth: { authorization: `Bearer ${token}` },
      created: made.json(),
    };
    // The harness publishes on api.localhost, which this provider does not serve: do it by hand.
    const f = await p.req(HOSTS.api, "POST", "/v1/faqs", {
      json: { title: "Acme help", questions: [] },
      headers: a.auth,
    });
    const pub = await p.req(HOSTS.api, "POST", `/v1/faqs/${str(f.json(), "faq_id")}/publish`, { headers: a.auth });
    expect(str(pub.json(), "published_url")).toBe(
      `http://${str(pub.json(), "new_handle")}.${HOSTS.pubSuffix}:${p.port}/acme-help`,
    );
    expect((await p.req(`${str(pub.json(), "new_handle")}.${HOSTS.pubSuffix}`, "GET", "/acme-help")).status).toBe(200);
    expect((await p.req(`${str(pub.json(), "new_handle")}.pub.localhost`, "GET", "/acme-help")).body).toBe(
      FAILURE_BODY,
    );
    const prev = await p.req(HOSTS.api, "POST", `/v1/sandboxes/${a.id}/preview`, {
      json: { surface: "preview_admin" },
      headers: a.auth,
    });
    expect(new URL(str(prev.json(), "exchange_url")).hostname).toBe(HOSTS.previewAdmin);
    expect((await p.req(HOSTS.admin, "GET", "/claim")).status).toBe(200);
    expect((await p.req(HOSTS.previewAdmin, "GET", "/claim")).body).toBe(FAILURE_BODY);
    expect(at(d, "claim.method")).toBe("code_plus_pow");
  });
});
