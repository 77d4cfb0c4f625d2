/**
 * `acp audit verify` on the chain several `acp serve` nodes keep in PostgreSQL: without FILE and with a
 * storage URL (ACP_STORAGE_URL, --storage-url, storage.url) it reads the chain from the database, checks
 * the checkpoints with the home's public key, and names the first row that was edited (exit 3). Before,
 * it looked for `$ACP_HOME/audit.jsonl` only, and an operator on PostgreSQL had no offline check.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { testKeys } from "../../../server/test/harness.js";
import { runCli } from "../run.js";
import { runNodeOnce, runSql } from "./fixtures/node-chain.js";

const db = useTestDatabase();
const homes: string[] = [];
afterAll(() => {
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

/** A home holding only a public key (64 hex digits), as `acp init` writes it. */
function homeWithKey(publicKeyHex: string): string {
  const home = mkdtempSync(join(tmpdir(), "acp-verify-pg-"));
  homes.push(home);
  mkdirSync(join(home, "keys"), { recursive: true });
  writeFileSync(join(home, "keys", "public.key"), `${publicKeyHex}\n`);
  return home;
}

const keys = testKeys();

/** Writes a few events and a final signed checkpoint into the database, as a node does. */
async function writeChain(url: string, home?: string): Promise<void> {
  const dir = home ?? mkdtempSync(join(tmpdir(), "acp-verify-pg-node-"));
  homes.push(dir);
  await runNodeOnce(url, dir, keys);
}

describe("acp audit verify on the PostgreSQL chain", () => {
  it("verifies the chain of the storage URL, signatures included, and names an edited row", async () => {
    await writeChain(db.url);
    const home = homeWithKey(keys.publicKeyHex);
    const env = { ACP_HOME: home, HOME: home, ACP_STORAGE_URL: db.url };
    const ok = await runCli(["audit", "verify", "--json"], { env });
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    const parsed = JSON.parse(ok.stdout) as { ok: boolean; count: number; signaturesChecked: boolean; file: string };
    expect(parsed).toMatchObject({ ok: true, count: 4, signaturesChecked: true });
    expect(parsed.file).toMatch(/^postgres:\/\//);

    const plain = await runCli(["audit", "verify"], { env });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/intact: 4 events/);
    expect(plain.stderr).toMatch(/PostgreSQL keeps no anchor and this home has none for this database/);

    // a key that did not sign the checkpoints
    const other = homeWithKey(testKeys().publicKeyHex);
    const foreign = await runCli(["audit", "verify", "--storage-url", db.url], {
      env: { ACP_HOME: other, HOME: other },
    });
    expect(foreign.code).toBe(3);
    expect(foreign.stderr).toMatch(/bad_checkpoint_signature/);

    await runSql(db.url, "UPDATE acp_audit_events SET line = replace(line, 'send_b', 'send_x') WHERE seq = 2");
    const tampered = await runCli(["audit", "verify"], { env });
    expect(tampered.code).toBe(3);
    expect(tampered.stderr).toMatch(/^postgres:\/\/[^\n]*:2: hash_mismatch/);
  });

  it("checks the chain against --anchor, a checkpoint row's line kept elsewhere: rows cut after it are found", async () => {
    const own = await createTestDatabase();
    try {
      await writeChain(own.url);
      const client = new pg.Client({ connectionString: own.url });
      await client.connect();
      let line: string;
      try {
        const rows = await client.query<{ line: string }>(
          "SELECT line FROM acp_audit_events WHERE event_type = 'checkpoint' ORDER BY seq DESC LIMIT 1",
        );
        line = rows.rows[0]?.line ?? "";
      } finally {
        await client.end();
      }
      const home = homeWithKey(keys.publicKeyHex);
      const anchor = join(home, "kept-elsewhere.checkpoint");
      writeFileSync(anchor, `${line}\n`);
      const env = { ACP_HOME: home, HOME: home, ACP_STORAGE_URL: own.url };
      const ok = await runCli(["audit", "verify", "--anchor", anchor], { env });
      expect(ok.code).toBe(0);
      expect(ok.stdout).toContain("anchor: the log reaches the anchor's checkpoint (line 4)");
      expect(ok.stderr).toBe("");
      await runSql(own.url, "DELETE FROM acp_audit_events WHERE seq = 4");
      expect((await runCli(["audit", "verify"], { env })).code).toBe(0); // without it, the cut goes unseen
      const cut = await runCli(["audit", "verify", "--anchor", anchor], { env });
      expect(cut.code).toBe(3);
      expect(cut.stderr).toMatch(/:4: truncated_after_checkpoint/);
    } finally {
      await own.drop();
    }
  });

  it("checks the chain against the anchor a node keeps in the home for that database, without --anchor", async () => {
    const own = await createTestDatabase();
    try {
      const home = homeWithKey(keys.publicKeyHex);
      await writeChain(own.url, home); // the node's home: it keeps its anchor there
      const env = { ACP_HOME: home, HOME: home, ACP_STORAGE_URL: own.url };
      const ok = await runCli(["audit", "verify"], { env });
      expect(ok.code).toBe(0);
      expect(ok.stdout).toContain("anchor: the log reaches the anchor's checkpoint (line 4)");
      expect(ok.stderr).toBe("");
      await runSql(own.url, "DELETE FROM acp_audit_events WHERE seq = 4");
      const cut = await runCli(["audit", "verify", "--json"], { env });
      expect(cut.code).toBe(3);
      expect(cut.stdout).toMatch(/truncated_after_checkpoint/);
    } finally {
      await own.drop();
    }
  });

  it("an explicit FILE still wins over the storage URL", async () => {
    const home = homeWithKey(keys.publicKeyHex);
    const file = join(home, "copy.jsonl");
    writeFileSync(file, "");
    const res = await runCli(["audit", "verify", file], {
      env: { ACP_HOME: home, HOME: home, ACP_STORAGE_URL: db.url },
    });
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/copy\.jsonl: intact: 0 events/);
  });

  it("a database acp serve never ran on, or one that cannot be reached, is exit 1 without the password", async () => {
    const empty = await createTestDatabase();
    try {
      const home = homeWithKey(keys.publicKeyHex);
      const none = await runCli(["audit", "verify"], {
        env: { ACP_HOME: home, HOME: home, ACP_STORAGE_URL: empty.url },
      });
      expect(none.code).toBe(1);
      expect(none.stderr).toMatch(/no audit chain/);
      const url = new URL(empty.url);
      url.password = "hunter2-secret";
      url.port = "1";
      const down = await runCli(["audit", "verify"], {
        env: { ACP_HOME: home, HOME: home, ACP_STORAGE_URL: url.toString() },
      });
      expect(down.code).toBe(1);
      expect(down.stderr).toMatch(/cannot reach PostgreSQL/);
      expect(down.stderr).not.toContain("hunter2-secret");
    } finally {
      await empty.drop();
    }
  });
});
