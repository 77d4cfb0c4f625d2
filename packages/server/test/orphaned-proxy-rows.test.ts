/**
 * `acp serve` on SQLite shares `state.db` with the home's `acp proxy` processes, so its API and console see
 * their consent requests too. A request whose proxy died while it waited (killed, crashed) waits for
 * nobody: serve does not list it, does not count it, and refuses an answer to it (410, nothing recorded),
 * as `acp pending` and `acp approve` do. A request of a running proxy stays answerable.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SESSION_TTL_MS, type EmbeddedServer } from "@acp/server";
import {
  createPendingConsentStore,
  currentOwner,
  openPendingConsentDb,
  type NewPendingConsent,
  type PendingOwner,
} from "@acp/store";
import { openTestServerAt, APPROVER_TOKEN } from "./harness.js";

const TOKEN = "orphaned-rows-token-0123456789";
const DEAD = `cr_${"d".repeat(32)}`; // a request of a proxy that died
const LIVE = `cr_${"a".repeat(32)}`; // a request of a running proxy
let home: string;
let node: EmbeddedServer;
let url: string;

/** The pid of a process that has exited (a child run to its end). */
const gonePid = (): number => spawnSync(process.execPath, ["-e", ""]).pid ?? 0;

function proxyRow(id: string): NewPendingConsent {
  const now = Date.now();
  return {
    id,
    nonce: `n_${id}`,
    sessionId: "s1",
    server: "fs",
    tool: "write_file",
    request: { id, action: { server: "fs", tool: "write_file", parameters: { path: `/tmp/${id.slice(0, 8)}` } } },
    reasons: [{ code: "rule_matched" }],
    createdAtMs: now,
    expiresAtMs: now + 10 * 60_000,
  };
}

/** Writes a row into the shared state.db as the proxy `owner` would. */
function raisedBy(owner: PendingOwner, id: string): void {
  const db = openPendingConsentDb(join(home, "state.db"));
  try {
    createPendingConsentStore(db, { owner }).insert(proxyRow(id));
  } finally {
    db.close();
  }
}

function statusOf(id: string): string | undefined {
  const db = openPendingConsentDb(join(home, "state.db"));
  try {
    return createPendingConsentStore(db).get(id)?.status;
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "acp-orphaned-rows-"));
  ({ node, url } = await openTestServerAt(home, {
    token: TOKEN,
    approverToken: APPROVER_TOKEN,
  }));
  const dead: PendingOwner = { pid: gonePid(), host: hostname(), start: null };
  raisedBy(dead, DEAD);
  raisedBy(currentOwner(), LIVE); // this test process stands for a running proxy
});
afterAll(async () => {
  await node.close();
  rmSync(home, { recursive: true, force: true });
});

const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const approverAuth = { authorization: `Bearer ${APPROVER_TOKEN}`, "content-type": "application/json" };

describe("acp serve and a dead proxy's consent requests in the shared state.db", () => {
  it("lists only the running proxy's request", async () => {
    const res = await fetch(`${url}/v1/consent?status=pending`, { headers: approverAuth });
    expect(res.status).toBe(200);
    const ids = ((await res.json()) as { requests: { id: string }[] }).requests.map((r) => r.id);
    expect(ids).toContain(LIVE);
    expect(ids).not.toContain(DEAD);
    // the agents' token reads only the requests raised with it: not a proxy's, whose arguments are another agent's
    const asAgent = await fetch(`${url}/v1/consent?status=pending`, { headers: auth });
    expect(((await asAgent.json()) as { requests: { id: string }[] }).requests.map((r) => r.id)).not.toContain(LIVE);
    expect((await fetch(`${url}/v1/consent/${LIVE}`, { headers: auth })).status).toBe(404);
  });

  it("counts only the running proxy's request in /metrics (the count reads ids, not requests)", async () => {
    const res = await fetch(`${url}/metrics`, { headers: approverAuth });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^acp_consent_pending 1$/m);
  });

  it("refuses an answer to the dead proxy's request over the API and in the console: 410, nothing recorded", async () => {
    const api = await fetch(`${url}/v1/consent/${DEAD}/response`, {
      method: "POST",
      headers: approverAuth,
      body: JSON.stringify({ decision: "approved" }),
    });
    expect(api.status).toBe(410);
    const body = (await api.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("consent_request_orphaned");
    expect(body.error.message).toContain("no longer running");

    const { id, session } = await node.stores.consoleAuth.createSession(Date.now(), SESSION_TTL_MS);
    const page = await fetch(`${url}/console/api/consent/${DEAD}`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: `acp_console=${id}`, "x-csrf-token": session.csrfToken },
      body: JSON.stringify({ decision: "denied", reason: "too late" }),
    });
    expect(page.status).toBe(410);
    expect(statusOf(DEAD)).toBe("pending");
  });

  it("still takes an answer to the running proxy's request", async () => {
    const res = await fetch(`${url}/v1/consent/${LIVE}/response`, {
      method: "POST",
      headers: approverAuth,
      body: JSON.stringify({ decision: "denied", reason: "not now" }),
    });
    expect(res.status).toBe(200);
    expect(statusOf(LIVE)).toBe("denied");
  });

  it("lets no agents' token complete a proxy's request, running or dead: 403, nothing spent or recorded", async () => {
    const raised = `cr_${"b".repeat(32)}`;
    raisedBy(currentOwner(), raised);
    const before = await fetch(`${url}/v1/audit`, { headers: auth }).then(
      (r) => r.json() as Promise<{ total: number }>,
    );
    for (const id of [raised, DEAD]) {
      const res = await fetch(`${url}/v1/consent/${id}/complete`, { method: "POST", headers: auth, body: "{}" });
      expect(res.status).toBe(403);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("agent_mismatch");
      expect(body.error.message).toContain("raised by an acp proxy");
      expect(statusOf(id)).toBe("pending");
    }
    const after = await fetch(`${url}/v1/audit`, { headers: auth }).then((r) => r.json() as Promise<{ total: number }>);
    expect(after.total).toBe(before.total);
  });
});
