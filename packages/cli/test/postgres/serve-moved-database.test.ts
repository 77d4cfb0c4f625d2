/**
 * The anchor is named from the database the storage URL reaches, so a dump restored on a new server at the
 * same address, its last rows cut, was a first start to `acp serve` (verified from row 1, the cut unseen).
 * Now `acp serve` stops there (`audit_anchor_database_changed`, naming both databases) and `acp doctor`
 * fails the same way; `--accept-moved-database` accepts a move made on purpose by holding the new database
 * to the old one's anchor: a faithful move starts (and says so), a cut is still refused. Real servers: the
 * run's PostgreSQL and a cluster of this file's own behind one loopback address.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Ed25519KeyPair } from "@acp/core";
import { openServerStores } from "@acp/server";
import { join } from "node:path";
import {
  atPort,
  restoreDump,
  sqlOn,
  startOwnCluster,
  switchableAddress,
  type OwnCluster,
  type SwitchableAddress,
} from "../../../store/test/postgres/moved-cluster.js";
import { createTestDatabase, postgresTestUrl, type TestDatabase } from "../../../store/test/postgres/test-database.js";
import { envFor, fixtureHome, tempRoot } from "../home-fixture.js";
import { runCli } from "../run.js";
import { serveFailure, startServe } from "../serve-fixture.js";

const root = tempRoot("serve-moved-database");
const dbs: TestDatabase[] = [];
let other: OwnCluster | undefined;
let address: SwitchableAddress | undefined;

beforeAll(async () => {
  other = await startOwnCluster();
  address = await switchableAddress(Number(new URL(postgresTestUrl()).port));
}, 600_000);
afterAll(async () => {
  await address?.close();
  for (const db of dbs) await db.drop();
  await other?.stop();
  root.cleanup();
}, 120_000);

interface Check {
  readonly status: string;
  readonly name: string;
  readonly detail: string;
}

async function anchorCheck(env: Record<string, string>): Promise<Check | undefined> {
  const r = await runCli(["doctor", "--json"], { env });
  return (JSON.parse(r.stdout) as { checks: Check[] }).checks.find((c) => c.name === "audit anchor");
}

/**
 * A node of `home` (its keys) on a new database reached through the switchable address: a few events and its
 * final signed checkpoint, anchored in the home; then the database is dumped and restored on the other
 * cluster, `cut` rows from the chain's end there, and the address pointed at it. The URL, unchanged.
 */
async function movedUnderTheNode(home: string, key: Ed25519KeyPair, cut: boolean): Promise<string> {
  const db = await createTestDatabase();
  dbs.push(db);
  const forward = address as SwitchableAddress;
  const cluster = other as OwnCluster;
  forward.pointAt(Number(new URL(postgresTestUrl()).port));
  const url = atPort(db.url, forward.port);
  const stores = await openServerStores({
    storageUrl: url,
    statePath: join(home, "state.db"),
    auditPath: join(home, "audit.jsonl"),
    clock: () => new Date(),
    keys: key,
  });
  for (const tool of ["read_a", "send_b", "read_c"])
    await stores.auditLog.append({ event_type: "policy_evaluated", tool, decision: "accept" });
  await stores.close(); // the final checkpoint, this home's anchor
  await restoreDump(db.url, cluster.url);
  if (cut) {
    await sqlOn(
      atPort(db.url, cluster.port),
      "DELETE FROM acp_audit_events WHERE seq >= (SELECT max(seq) FROM acp_audit_events WHERE event_type = 'checkpoint')",
    );
  }
  forward.pointAt(cluster.port);
  return url;
}

describe("acp serve on a storage URL that now reaches another database", () => {
  it("a dump restored on a new server, its last rows cut: acp doctor fails, acp serve stops naming both; accepting the move still refuses the cut", async () => {
    const { home, key } = fixtureHome(root.dir);
    const url = await movedUnderTheNode(home, key, true);
    const env = { ...envFor(home), ACP_STORAGE_URL: url };

    const check = await anchorCheck(env);
    expect(check?.status).toBe("fail");
    expect(check?.detail).toMatch(
      /^acp serve here stops \(audit_anchor_database_changed\): the audit chain in PostgreSQL: /,
    );
    expect(check?.detail).toMatch(
      /now reaches another database \(cluster \d+, database `acp_t_[0-9a-f]+`, schema `public`\)/,
    );

    const refused = await serveFailure(home, ["--port", "0"], env);
    expect(refused?.exitCode).toBe(1);
    expect(refused?.message).toMatch(
      /^ACP_STORAGE_URL: cannot open the state in postgres:\/\/acp@127\.0\.0\.1:\d+\/acp_t_/,
    );
    expect(refused?.message).toMatch(
      /the storage URL \(`acp@127\.0\.0\.1:\d+\/acp_t_[0-9a-f]+`\) now reaches another database \(cluster (\d+), .*\) than the one this home last anchored through it \(cluster (?!\1)\d+, /,
    );
    expect(refused?.message).toContain("start once with `acp serve --accept-moved-database`");

    const accepted = await serveFailure(home, ["--port", "0", "--accept-moved-database"], env);
    expect(accepted?.exitCode).toBe(1);
    expect(accepted?.message).toMatch(/it no longer has row \d+, this node's signed checkpoint/);
    // the next start too, with or without the flag: the carried anchor stays
    expect((await serveFailure(home, ["--port", "0"], env))?.message).toMatch(/it no longer has row \d+/);
  });

  it("a database moved on purpose: accepted once, the node starts held to the old anchor and says so; later starts need nothing", async () => {
    const { home, key } = fixtureHome(root.dir);
    const url = await movedUnderTheNode(home, key, false);
    const env = { ...envFor(home), ACP_STORAGE_URL: url };
    expect((await serveFailure(home, ["--port", "0"], env))?.message).toContain("now reaches another database");

    const moved = startServe(home, ["--port", "0", "--accept-moved-database"], env);
    await moved.ready;
    moved.stop();
    await moved.done;
    const said = moved.output().stderr;
    expect(said).toMatch(/accepted as moved \(--accept-moved-database\): carried its anchor \S+ over to \S+/);
    expect(said).not.toContain("verified from row 1"); // not a first start: held to the carried checkpoint

    const later = startServe(home, ["--port", "0"], env);
    await later.ready;
    later.stop();
    await later.done;
    expect(later.output().stderr).not.toContain("now reaches");
    expect((await anchorCheck(env))?.status).toBe("ok");
  });
});
