/** Console sign-in links name who they sign in; a `state.db` made before that keeps working. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { checkApproverName, createSqliteConsoleAuthStore } from "@acp/server";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("console approver names", () => {
  it("accepts 1-64 letters, digits, . _ - @ starting with a letter or digit, and says what is wrong otherwise", () => {
    for (const ok of ["alice", "a", "alice.smith@example.com", "ops_2-b", "x".repeat(64)]) {
      expect(checkApproverName(ok)).toBeNull();
    }
    expect(checkApproverName("")).toBe("the approver name is empty");
    expect(checkApproverName("x".repeat(65))).toMatch(/too long \(65 characters, at most 64\)/);
    expect(checkApproverName("a b")).toMatch(/`a b` has characters other than/);
    expect(checkApproverName(".hidden")).toMatch(/does not start with a letter or digit/);
    // a control character is shown escaped, never raw
    expect(checkApproverName("a\u202eb")).toContain("a\\u202eb");
    expect(checkApproverName("a\nb")).toContain("a\\u000ab");
  });

  it("opens a state.db whose console tables predate the name: old links and sessions stay unnamed", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-console-approver-"));
    dirs.push(dir);
    const db = new Database(join(dir, "state.db"));
    db.exec(`
CREATE TABLE console_links (token_hash TEXT PRIMARY KEY, created_at_ms INTEGER NOT NULL, expires_at_ms INTEGER NOT NULL, used_at_ms INTEGER);
CREATE TABLE console_sessions (id_hash TEXT PRIMARY KEY, csrf_token TEXT NOT NULL, created_at_ms INTEGER NOT NULL, expires_at_ms INTEGER NOT NULL);
INSERT INTO console_sessions VALUES ('old', 'csrf', 0, 9999999999999);`);
    const store = createSqliteConsoleAuthStore(db);
    return (async () => {
      const now = Date.now();
      const token = await store.createLink(now, 60_000, "bob");
      expect(await store.redeemLink(token, now)).toEqual({ approver: "bob" });
      const { id } = await store.createSession(now, 60_000, "bob");
      expect((await store.getSession(id, now))?.approver).toBe("bob");
      db.close();
    })();
  });
});
