/** Decision events are acknowledged once queued in the audit chain; a failed write stops every later decision. */
import { mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openEmbeddedServer } from "@acp/server";
import { afterEach, describe, expect, it } from "vitest";
import {
  at,
  eventually,
  openTestServerAt,
  namedPipelines,
  readJson,
  startTestServer,
  testKeys,
  READ_EVENT,
  type TestServer,
} from "./harness.js";

let s: TestServer | undefined;
afterEach(async () => {
  const server = s;
  s = undefined;
  // closing writes a final checkpoint, which fails on purpose after the log was moved away
  await server?.close().catch(() => rmSync(server.home, { recursive: true, force: true }));
});

function check(server: TestServer): Promise<Response> {
  return fetch(`${server.url}/pre-tool-check`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(READ_EVENT),
  });
}

describe("decision audit acknowledgement", () => {
  it("records every answered decision in the chain once flushed", async () => {
    const server = (s = await startTestServer());
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => check(server)));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    await server.stores.auditLog.flush();
    const page = await readJson(await fetch(`${server.url}/v1/audit?event_type=policy_evaluated&limit=50`));
    expect((at(page, "events") as unknown[]).length).toBe(5);
    expect(await readJson(await fetch(`${server.url}/v1/audit/verify`))).toMatchObject({ ok: true });
  });

  it("in durable mode answers only once the decision's event is in the file", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-serve-durable-"));
    const embedded = await openEmbeddedServer({
      statePath: join(home, "state.db"),
      auditPath: join(home, "audit.jsonl"),
      ...namedPipelines(),
      keys: testKeys(),
      clock: () => new Date(),
      loopbackOnly: true,
      decisionAudit: "durable",
    });
    try {
      const url = await embedded.server.listen({ port: 0, host: "127.0.0.1" });
      const answers = await Promise.all(
        [1, 2, 3].map(() =>
          fetch(`${url}/pre-tool-check`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(READ_EVENT),
          }).then(async (res) => ({ status: res.status, body: await readJson(res) })),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      // no flush: every answered decision is already written
      const file = readFileSync(join(home, "audit.jsonl"), "utf8");
      for (const a of answers) expect(file).toContain(String(at(a.body, "decision", "decision_id")));
    } finally {
      await embedded.close();
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("refuses a tool name holding a lone surrogate (400 invalid_event, nothing recorded) and goes on deciding", async () => {
    const server = (s = await startTestServer());
    // valid JSON text, but not I-JSON: no hash can bind an accept to it (contract_not_canonical)
    const body = JSON.stringify({ ...READ_EVENT, agent_id: "agent-1" }).replace(
      '"search_docs"',
      '"search_\\ud800docs"',
    );
    const odd = await fetch(`${server.url}/pre-tool-check`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    expect(odd.status).toBe(400);
    expect(JSON.stringify(await readJson(odd))).toContain("invalid_event");
    const later = await check(server);
    expect(later.status).toBe(200);
    await server.stores.auditLog.flush();
    const tools = readFileSync(join(server.home, "audit.jsonl"), "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { event_type: string; tool: string | null })
      .filter((e) => e.event_type === "policy_evaluated")
      .map((e) => e.tool);
    expect(tools).toEqual(["search_docs"]);
    expect(await readJson(await fetch(`${server.url}/v1/audit/verify`))).toMatchObject({ ok: true });
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });

  it("after a failed audit write every later decision is refused and /readyz says why", async () => {
    const server = (s = await startTestServer());
    expect((await check(server)).status).toBe(200);
    await server.stores.auditLog.flush();
    renameSync(join(server.home, "audit.jsonl"), join(server.home, "moved.jsonl")); // the writer refuses to go on
    await check(server); // answered before its write failed, or refused: either way the write fails
    await eventually(async () => (await fetch(`${server.url}/readyz`)).status === 503);
    const probe = await fetch(`${server.url}/readyz`);
    // a restart lifts it, no time does: the probe tells none
    expect(probe.headers.get("retry-after")).toBeNull();
    const ready = await readJson(probe);
    expect(at(ready, "error", "code")).toBe("audit_unavailable");
    // what to do, not only what happened (before: "an audit write failed: decisions refuse")
    expect(at(ready, "error", "message")).toBe(
      "an audit write failed, so every decision is refused: fix the cause (disk full, audit.jsonl moved or " +
        "replaced) and restart the service (the cause is in the service log)",
    );
    const refused = await check(server);
    expect(refused.status).toBe(503);
    expect(at(await readJson(refused), "error", "code")).toBe("audit_unavailable");
    // on the audit.jsonl file only a restart lifts it: no time to come back is told
    expect(refused.headers.get("retry-after")).toBeNull();
  });

  it("tells the caller that the audit trail cannot record, and only the log where and why", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-audit-leak-"));
    const logged: string[] = [];
    const { node, url } = await openTestServerAt(home, { log: (line) => logged.push(line) });
    try {
      const decide = (): Promise<Response> =>
        fetch(`${url}/pre-tool-check`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(READ_EVENT),
        });
      expect((await decide()).status).toBe(200);
      await node.stores.auditLog.flush();
      renameSync(join(home, "audit.jsonl"), join(home, "moved.jsonl"));
      await decide();
      const refused = await eventually(async () => {
        const res = await decide();
        return res.status === 503 ? res : undefined;
      });
      const said = JSON.stringify(await readJson(refused));
      expect(at(JSON.parse(said), "error", "code")).toBe("audit_unavailable");
      const mcp = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "aana_pre_tool_check", arguments: READ_EVENT },
        }),
      });
      const told = await readJson(mcp);
      expect(at(told, "result", "isError")).toBe(true);
      expect(String(at(told, "result", "content", 0, "text"))).toMatch(/^audit_unavailable: /);
      // neither the answer nor the tool error names the home, the file or what the writer said
      for (const text of [said, JSON.stringify(told)]) {
        expect(text).not.toContain(home);
        expect(text).not.toContain("audit.jsonl");
      }
      // the log does
      expect(
        logged.some((line) => line.startsWith("decision refused (503 audit_unavailable)") && line.includes(home)),
      ).toBe(true);
    } finally {
      await node.close().catch(() => undefined);
      rmSync(home, { recursive: true, force: true });
    }
  });
});
