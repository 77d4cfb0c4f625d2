/**
 * A tool, server or agent name, or a session, holding a NUL character is refused with 400 before anything
 * is decided or recorded. PostgreSQL's text cannot hold a NUL: such a call was decided `ask`, then its
 * consent request could not be written and the caller got 500 `internal_error` (SQLite took it).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddedServer } from "@acp/server";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { at, eventually, openTestServerAt, readJson } from "../harness.js";

const db = useTestDatabase();
const home = mkdtempSync(join(tmpdir(), "acp-nul-names-"));
let node: EmbeddedServer;
let url: string;
beforeAll(async () => {
  ({ node, url } = await openTestServerAt(home, { storageUrl: db.url }));
});
afterAll(async () => {
  await node.close();
  rmSync(home, { recursive: true, force: true });
});

function decide(query: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${url}/v1/decide?wait=true${query}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ tool: "write_file", arguments: { path: "/tmp/nul" }, ...body }),
  });
}

describe("a name or session holding a NUL character, on PostgreSQL", () => {
  it("is 400 naming the field, not 500, with nothing decided, asked or recorded", async () => {
    const asked: [string, Response][] = [
      ["body/tool", await decide("", { tool: "write_file\u0000" })],
      ["body/server", await decide("", { server: "fs\u0000" })],
      ["body/agent", await decide("", { agent: "bot\u0000" })],
      ["querystring/session", await decide("&session=a%00b", {})],
    ];
    for (const [where, res] of asked) {
      expect([where, res.status]).toEqual([where, 400]);
      const body = await readJson(res);
      expect(at(body, "error", "code")).toBe(where.startsWith("body") ? "invalid_body" : "invalid_query");
      expect(at(body, "error", "message")).toBe(`${where}: must not hold a NUL character`);
    }
    expect(await node.stores.pending.listPending(Date.now())).toEqual([]);
    const events = await readJson(await fetch(`${url}/v1/audit`));
    expect(at(events, "total")).toBe(0);
  });

  it("keeps a NUL inside the arguments: the request is asked, the person answers", async () => {
    const call = decide("", { arguments: { path: "/tmp/a\u0000b" } });
    const row = await eventually(async () => (await node.stores.pending.listPending(Date.now()))[0]);
    const denial = { decision: "denied", approver: "t", nonce: row.nonce };
    expect((await node.stores.pending.decide(row.id, "denied", denial, Date.now())).ok).toBe(true);
    expect(await readJson(await call)).toMatchObject({ route: "refuse", consent: { outcome: "denied" } });
  });
});
