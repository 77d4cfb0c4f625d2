/**
 * A node's anchor on the PostgreSQL chain deleted with the chain cut back, as `audit-anchor-missing.test.ts`
 * does it to the file log. Before 28 Nov 2026 `acp audit verify --storage-url` in the node's home said intact
 * with a warning (exit 0), and the next `acp serve` took it for a first start: verified what was left from
 * row 1, anchored it and went on. Now the anchor's marker (`audit-postgres-<id>.anchored`) says it existed:
 * verify fails `anchor_missing` (exit 3), `acp serve` does not start (`audit_anchor_missing`, exit 1) and
 * `acp doctor` fails its `audit anchor` check, until the anchor is put back or the marker removed.
 */
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../store/test/postgres/test-database.js";
import { envFor, fixtureHome, tempRoot } from "../home-fixture.js";
import { runCli } from "../run.js";
import { serveFailure, startServe } from "../serve-fixture.js";
import { runNodeOnce, runSql } from "./fixtures/node-chain.js";

const root = tempRoot("serve-anchor-missing");
const dbs: TestDatabase[] = [];
afterAll(async () => {
  for (const db of dbs) await db.drop();
  root.cleanup();
});

/** The node's anchor file and its marker in the home (`audit-postgres-<16 hex>.checkpoint`, `.anchored`). */
function anchorFiles(home: string): { anchor: string; marker: string } {
  const names = readdirSync(home).filter((n) => /^audit-postgres-[0-9a-f]{16}\.checkpoint$/.test(n));
  expect(names).toHaveLength(1);
  const anchor = join(home, names[0] as string);
  return { anchor, marker: anchor.replace(/\.checkpoint$/, ".anchored") };
}

/** A node of a fresh home has run twice on a fresh database (checkpoints at rows 4 and 8); the anchor is row 8. */
async function twoRuns(): Promise<{ url: string; home: string; env: Record<string, string> }> {
  const db = await createTestDatabase();
  dbs.push(db);
  const { home, key } = fixtureHome(root.dir);
  await runNodeOnce(db.url, home, key);
  await runNodeOnce(db.url, home, key);
  return { url: db.url, home, env: { ...envFor(home), ACP_STORAGE_URL: db.url } };
}

describe("a node's anchor on the PostgreSQL chain deleted with the chain cut back", () => {
  it("acp audit verify fails anchor_missing (exit 3), never intact, when the chain was cut back to an earlier checkpoint", async () => {
    const { url, home, env } = await twoRuns();
    const { anchor, marker } = anchorFiles(home);
    expect((await runCli(["audit", "verify"], { env })).code).toBe(0);
    await runSql(url, "DELETE FROM acp_audit_events WHERE seq > 4"); // to the first checkpoint, a genuine signed row
    rmSync(anchor);
    const out = await runCli(["audit", "verify"], { env });
    expect(out.code).toBe(3);
    expect(out.stdout).not.toContain("intact");
    expect(out.stderr).toContain(
      `${anchor}: anchor_missing: this node's anchor for it (${anchor}) is missing, though ${marker} records that it had one`,
    );
    expect(out.stderr).toContain("the chain's own rows verify (4 events, last checkpoint: row 4)");
    expect(out.stderr).toContain(`remove \`${marker}\``);
    const json = await runCli(["audit", "verify", "--json"], { env });
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({
      output_version: 6,
      valid: false,
      ok: false,
      count: 4,
      anchor_file: null,
      anchor_marker_file: marker,
      problem: { code: "anchor_missing", line: 0, where: "anchor" },
    });
  });

  it("acp serve does not start on it (audit_anchor_missing, exit 1) and acp doctor fails; removing the marker lets it re-anchor", async () => {
    const { url, home, env } = await twoRuns();
    const { anchor, marker } = anchorFiles(home);
    await runSql(url, "DELETE FROM acp_audit_events WHERE seq > 4");
    rmSync(anchor);
    const refused = await serveFailure(home, ["--port", "0"], env);
    expect(refused?.exitCode).toBe(1);
    expect(refused?.message).toContain(`this node's anchor for it (${anchor}) is missing, though ${marker}`);
    expect(refused?.message).toMatch(/put the anchor back if a copy was kept.*once you know why it is gone, remove/);
    expect((await runCli(["audit", "verify"], { env })).code).toBe(3); // nothing was anchored over the cut

    const doctor = await runCli(["doctor", "--json"], { env });
    const check = (
      JSON.parse(doctor.stdout) as { checks: { name: string; status: string; detail: string }[] }
    ).checks.find((c) => c.name === "audit anchor");
    expect(check?.status).toBe("fail");
    expect(check?.detail).toContain("acp serve here refuses the database (audit_anchor_missing)");

    rmSync(marker); // an operator who knows why the anchor is gone
    const serve = startServe(home, ["--port", "0"], env);
    await serve.ready;
    serve.stop();
    await serve.done;
    expect(serve.output().stdout + serve.output().stderr).toContain("verified from row 1");
    expect((await runCli(["audit", "verify"], { env })).code).toBe(0);
  });

  it('a chain emptied whole and the anchor deleted is refused, not started again; its table dropped too is anchor_missing, not "no audit chain"', async () => {
    const { url, home, env } = await twoRuns();
    await runSql(url, "DELETE FROM acp_audit_events");
    rmSync(anchorFiles(home).anchor);
    const refused = await serveFailure(home, ["--port", "0"], env);
    expect(refused?.exitCode).toBe(1);
    expect(refused?.message).toContain("is missing, though");
    const emptied = await runCli(["audit", "verify", "--json"], { env });
    expect(emptied.code).toBe(3);
    expect(JSON.parse(emptied.stdout)).toMatchObject({ count: 0, problem: { code: "anchor_missing" } });
    await runSql(url, "DROP TABLE acp_audit_events");
    const dropped = await runCli(["audit", "verify", "--json"], { env });
    expect(dropped.code).toBe(3);
    expect(JSON.parse(dropped.stdout)).toMatchObject({ count: 0, problem: { code: "anchor_missing" } });
  });
});
