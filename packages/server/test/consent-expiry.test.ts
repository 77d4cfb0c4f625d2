/** A consent request nobody answers in time: the agent hears `expired`, a late answer is 410. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { at, eventually, readJson, startTestServer, type TestServer, tokenFor } from "./harness.js";

const TOKEN = "test-token-0123456789";
const POLICY = `version: "1"
default_action: allow
rules:
  - id: ask-briefly
    match: { tool: "send_*" }
    action: ask
    timeout: 1
`;
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ token: TOKEN, policy: POLICY });
});
afterAll(async () => {
  await s.close();
});

function call(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${s.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${tokenFor(path, TOKEN)}`, "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

describe("a consent request that expires", () => {
  it("answers the agent expired (naming the request) and a late answer 410, nothing recorded", async () => {
    const waiting = call("POST", "/v1/decide?wait=true", { tool: "send_sms", arguments: { to: "+1555" } });
    const id = await eventually(async () => {
      const list = await readJson(await call("GET", "/v1/consent?status=pending"));
      return at(list, "requests", 0, "id") as string | undefined;
    });
    expect(await readJson(await waiting)).toMatchObject({
      route: "refuse",
      consent: { outcome: "expired", request_id: id },
    });
    const late = await call("POST", `/v1/consent/${id}/response`, { decision: "approved" });
    const lateBody = await readJson(late);
    expect(late.status).toBe(410);
    expect(at(lateBody, "error", "code")).toBe("consent_request_expired");
    expect(at(await readJson(await call("GET", `/v1/consent/${id}`)), "status")).toBe("expired");
    const audit = await readJson(await call("GET", `/v1/audit?request_id=${id}`));
    const types = (at(audit, "events") as { event: { event_type: string } }[]).map((e) => e.event.event_type);
    expect(types).toEqual(["consent_expired", "consent_requested"]);
  });
});
