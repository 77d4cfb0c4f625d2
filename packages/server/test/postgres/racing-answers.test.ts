/**
 * Two people answer one consent request at the same moment through two nodes of one PostgreSQL — one
 * approves, one denies, each several times over. Exactly one answer is recorded; every other is told 409
 * `consent_request_already_decided` naming the winner's status; the waiting call gets the winner's outcome,
 * once; the chain holds exactly one `consent_approved` or `consent_denied` for it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { EmbeddedServer, ServiceKeyPair } from "@acp/server";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";
import {
  at,
  eventually,
  openTestServerAt,
  readJson,
  testKeys,
  type Json,
  APPROVER_TOKEN,
  tokenFor,
} from "../harness.js";

const TOKEN = "racing-answers-token-0123456789";
const db = useTestDatabase();
const dirs: string[] = [];
const running: EmbeddedServer[] = [];
afterAll(async () => {
  for (const s of running) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function startNode(keys: ServiceKeyPair): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), "acp-racing-"));
  dirs.push(home);
  const { node, url } = await openTestServerAt(home, {
    keys,
    token: TOKEN,
    approverToken: APPROVER_TOKEN,
    storageUrl: db.url,
  });
  running.push(node);
  return url;
}

async function call(
  url: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${tokenFor(path, TOKEN)}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: await readJson(res) };
}

describe("an approval and a denial racing on two nodes", () => {
  it("records exactly one; every other answer is told who won; the call gets the winner's outcome once", async () => {
    const keys = testKeys();
    const [a, b] = await Promise.all([startNode(keys), startNode(keys)]);
    const waiting = call(a, "POST", "/v1/decide?wait=true&session=race", {
      tool: "write_file",
      server: "fs",
      arguments: { path: "/srv/race.txt", text: "x" },
    });
    const id = await eventually(async () => {
      const list = await call(b, "GET", "/v1/consent?status=pending");
      return at(list.json, "requests", 0, "id") as string | undefined;
    });
    const answers = Array.from({ length: 8 }, (_, i) =>
      call(i % 2 === 0 ? a : b, "POST", `/v1/consent/${id}/response`, {
        decision: i % 2 === 0 ? "approved" : "denied",
        approver_id: `person-${i}`,
      }),
    );
    const results = await Promise.all(answers);
    const won = results.filter((r) => r.status === 200);
    expect(won).toHaveLength(1);
    const winner = at(won[0]?.json ?? null, "status") as string;
    expect(["approved", "denied"]).toContain(winner);
    for (const lost of results.filter((r) => r.status !== 200)) {
      expect(lost.status).toBe(409);
      expect(lost.json).toMatchObject({ error: { code: "consent_request_already_decided" } });
      expect(at(lost.json, "error", "message")).toBe(`consent request \`${id}\` was already ${winner}`);
    }
    const done = await waiting;
    expect(done.json).toMatchObject({
      route: winner === "approved" ? "accept" : "refuse",
      consent: { outcome: winner, request_id: id },
    });
    const type = winner === "approved" ? "consent_approved" : "consent_denied";
    const events = await eventually(async () => {
      const page = await call(b, "GET", `/v1/audit?request_id=${id}&limit=20`);
      const list = (at(page.json, "events") as { event: { event_type: string } }[]).map((e) => e.event.event_type);
      return list.includes(type) ? list : false;
    });
    expect(events.filter((t) => t === "consent_approved" || t === "consent_denied")).toEqual([type]);
  });
});
