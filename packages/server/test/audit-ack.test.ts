/** Decision events are acknowledged once queued in the audit chain; a failed write stops every later decision. */
import { renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { at, eventually, readJson, startTestServer, READ_EVENT, type TestServer } from "./harness.js";

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

  it("after a failed audit write every later decision is refused and /readyz says why", async () => {
    const server = (s = await startTestServer());
    expect((await check(server)).status).toBe(200);
    await server.stores.auditLog.flush();
    renameSync(join(server.home, "audit.jsonl"), join(server.home, "moved.jsonl")); // the writer refuses to go on
    await check(server); // answered before its write failed, or refused: either way the write fails
    await eventually(async () => (await fetch(`${server.url}/readyz`)).status === 503);
    const ready = await readJson(await fetch(`${server.url}/readyz`));
    expect(at(ready, "error", "code")).toBe("audit_unavailable");
    const refused = await check(server);
    expect(refused.status).toBe(503);
    expect(at(await readJson(refused), "error", "code")).toBe("audit_unavailable");
  });
});
