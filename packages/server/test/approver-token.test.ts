/**
 * Two tokens for two kinds of caller: the agents' token asks for decisions and reads; only the approvers'
 * token answers consent over the API. An agent holding the token it asks with cannot approve what it asked.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  APPROVER_TOKEN,
  at,
  eventually,
  READ_EVENT,
  readJson,
  startTestServer,
  openTestServerAt,
  type TestServer,
} from "./harness.js";

const AGENT_TOKEN = "agent-token-0123456789abcdef";
const agent = { authorization: `Bearer ${AGENT_TOKEN}`, "content-type": "application/json" };
const approver = { authorization: `Bearer ${APPROVER_TOKEN}`, "content-type": "application/json" };

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ token: AGENT_TOKEN });
});
afterAll(async () => {
  await s.close();
});

function send(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Response> {
  return fetch(`${s.url}${path}`, {
    method,
    headers: body === undefined ? { authorization: headers["authorization"] ?? "" } : headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/** A `write_file` call waiting for a person, and its consent request's id. */
async function waitingWrite(path: string): Promise<{ id: string; call: Promise<Response> }> {
  const call = send("POST", "/v1/decide?wait=true", agent, { tool: "write_file", arguments: { path } });
  const id = await eventually(async () => {
    const list = at(await readJson(await send("GET", "/v1/consent?status=pending", agent)), "requests") as {
      id: string;
      request: { action: { parameters: unknown } };
    }[];
    return list.find((r) => JSON.stringify(r.request.action.parameters).includes(path))?.id;
  });
  return { id, call };
}

/** The audit file's event types, in order. */
async function auditTypes(): Promise<string[]> {
  await s.stores.auditLog.flush();
  return readFileSync(join(s.home, "audit.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => (JSON.parse(line) as { event_type: string }).event_type);
}

describe("the agents' token cannot answer consent", () => {
  it("is refused 403 approver_token_required with an insufficient_scope challenge; nothing is recorded", async () => {
    const { id, call } = await waitingWrite("/tmp/self-approve");
    const before = await auditTypes();
    const res = await send("POST", `/v1/consent/${id}/response`, agent, { decision: "approved", scope: "once" });
    expect(res.status).toBe(403);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="acp", error="insufficient_scope"');
    const error = at(await readJson(res), "error") as { code: string; message: string };
    expect(error.code).toBe("approver_token_required");
    expect(error.message).toContain("ACP_APPROVER_TOKEN");
    // still waiting for a person, and the audit trail holds nothing new
    const view = await readJson(await send("GET", `/v1/consent/${id}`, agent));
    expect(at(view, "status")).toBe("pending");
    expect(await auditTypes()).toEqual(before);

    // the approvers' token answers it, and the agent's call completes with that answer
    const answered = await send("POST", `/v1/consent/${id}/response`, approver, {
      decision: "denied",
      reason: "an agent asked to approve itself",
    });
    expect(answered.status).toBe(200);
    expect(await readJson(await call)).toMatchObject({ route: "refuse", consent: { outcome: "denied" } });
  });

  it("refuses a wrong or malformed token on the answer route like any other (401, 400)", async () => {
    const { id, call } = await waitingWrite("/tmp/wrong-token");
    const wrong = await send(
      "POST",
      `/v1/consent/${id}/response`,
      { ...approver, authorization: "Bearer nope-nope-nope-nope" },
      {
        decision: "approved",
      },
    );
    expect(wrong.status).toBe(401);
    expect(at(await readJson(wrong), "error", "code")).toBe("auth_token_wrong");
    const malformed = await send(
      "POST",
      `/v1/consent/${id}/response`,
      { ...approver, authorization: "Bearer a b" },
      {
        decision: "approved",
      },
    );
    expect(malformed.status).toBe(400);
    expect(at(await readJson(await send("GET", `/v1/consent/${id}`, approver)), "status")).toBe("pending");
    expect((await send("POST", `/v1/consent/${id}/response`, approver, { decision: "denied" })).status).toBe(200);
    await call;
  });
});

describe("the approvers' token", () => {
  it("reads the consent requests, the audit and its verification, and /metrics (which the agents' token may not)", async () => {
    for (const path of ["/v1/consent?status=pending", "/v1/audit?limit=5", "/v1/audit/verify", "/metrics"]) {
      const res = await send("GET", path, approver);
      expect(res.status, path).toBe(200);
      await res.arrayBuffer();
    }
  });

  it("does not ask for decisions or complete an agent's request (401)", async () => {
    const check = await send("POST", "/pre-tool-check", approver, READ_EVENT);
    expect(check.status).toBe(401);
    expect(at(await readJson(check), "error", "code")).toBe("auth_token_wrong");
    const decide = await send("POST", "/v1/decide", approver, { tool: "read_file", arguments: {} });
    expect(decide.status).toBe(401);
    const mcp = await send(
      "POST",
      "/mcp",
      { ...approver, accept: "application/json, text/event-stream" },
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
      },
    );
    expect(mcp.status).toBe(401);
    const complete = await send("POST", `/v1/consent/cr_${"b".repeat(32)}/complete`, approver, {});
    expect(complete.status).toBe(401);
    // the agents' token still does all of these
    expect((await send("POST", "/pre-tool-check", agent, READ_EVENT)).status).toBe(200);
  });

  it("is documented as the answer route's only security in the OpenAPI document", async () => {
    const doc = (await readJson(await fetch(`${s.url}/openapi.json`))) as {
      paths: Record<string, Record<string, { security?: unknown }>>;
      components: { securitySchemes: Record<string, unknown> };
    };
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(["approver", "bearer"]);
    expect(doc.paths["/v1/consent/{id}/response"]?.["post"]?.security).toEqual([{ approver: [] }]);
    expect(doc.paths["/v1/consent"]?.["get"]?.security).toEqual([{ bearer: [] }, { approver: [] }]);
    expect(doc.paths["/pre-tool-check"]?.["post"]?.security).toEqual([{ bearer: [] }]);
  });
});

describe("a service given one token for both", () => {
  it("does not start (the same home then serves with two distinct tokens)", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-approver-same-"));
    try {
      await expect(openTestServerAt(home, { token: AGENT_TOKEN, approverToken: AGENT_TOKEN })).rejects.toThrow(
        /must differ from the agents' bearer token/,
      );
      const { node } = await openTestServerAt(home, { token: AGENT_TOKEN, approverToken: APPROVER_TOKEN });
      await node.close();
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
