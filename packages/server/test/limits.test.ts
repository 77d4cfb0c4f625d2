import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { at, eventually, readJson, startTestServer, type TestServer } from "./harness.js";

let s: TestServer | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

function decide(server: TestServer, body: unknown, wait = false): Promise<Response> {
  return fetch(`${server.url}/v1/decide${wait ? "?wait=true" : ""}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("bad input and load", () => {
  it("refuses a flood of waiting consent requests beyond the limit with 429", async () => {
    const server = (s = await startTestServer({ maxPending: 2, maxPendingPerCaller: 2 }));
    const waits = [1, 2].map((i) => decide(server, { tool: "write_file", arguments: { n: i } }, true));
    while ((await server.stores.pending.listPending(Date.now())).length < 2) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const third = await decide(server, { tool: "write_file", arguments: { n: 3 } }, true);
    expect(third.status).toBe(429);
    expect(at(await readJson(third), "error", "code")).toBe("consent_queue_full");
    for (const row of await server.stores.pending.listPending(Date.now())) {
      await server.stores.pending.decide(
        row.id,
        "denied",
        { decision: "denied", approver: "t", nonce: row.nonce },
        Date.now(),
      );
    }
    for (const w of await Promise.all(waits)) expect(at(await readJson(w), "route")).toBe("refuse");
  });

  it("holds the limit when a flood of waiting calls arrives at once", async () => {
    const server = (s = await startTestServer({ maxPending: 2, maxPendingPerCaller: 2 }));
    let refused = 0;
    const waits = [1, 2, 3, 4, 5, 6].map((i) =>
      decide(server, { tool: "write_file", arguments: { n: i } }, true).then(async (res) => {
        if (res.status === 429) {
          expect(at(await readJson(res), "error", "code")).toBe("consent_queue_full");
          refused++;
        }
        return res;
      }),
    );
    // every call is either refused or waiting: before the fix all six passed the count at once
    const pending = await eventually(async () => {
      const rows = await server.stores.pending.listPending(Date.now());
      return rows.length + refused === 6 ? rows : undefined;
    });
    expect(pending.length).toBe(2);
    expect(refused).toBe(4);
    for (const row of pending) {
      await server.stores.pending.decide(
        row.id,
        "denied",
        { decision: "denied", approver: "t", nonce: row.nonce },
        Date.now(),
      );
    }
    await Promise.all(waits);
  });

  it("answers consent over the API only with an approvers' token configured", async () => {
    const server = (s = await startTestServer({ approverToken: null }));
    const res = await fetch(`${server.url}/v1/consent/cr_${"a".repeat(32)}/response`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decision: "approved" }),
    });
    expect(res.status).toBe(401);
    const error = at(await readJson(res), "error") as { code: string; message: string };
    expect(error.code).toBe("consent_api_token_required");
    expect(error.message).toContain("ACP_APPROVER_TOKEN");
  });

  it("reports the first broken event when the audit chain was tampered with", async () => {
    const server = (s = await startTestServer());
    for (const tool of ["read_a", "read_b", "read_c"]) await decide(server, { tool, arguments: {}, category: "read" });
    await server.stores.auditLog.flush();
    const path = join(server.home, "audit.jsonl");
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    lines[1] = (lines[1] ?? "").replace('"read_b"', '"read_x"');
    writeFileSync(path, `${lines.join("\n")}\n`);
    const verify = await readJson(await fetch(`${server.url}/v1/audit/verify`));
    expect(verify).toMatchObject({ ok: false, problem: { line: 2 } });
  });
});
