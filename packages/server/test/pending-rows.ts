/** Consent requests a dead node (or a killed service) left in the pending table, for the expiry sweep's tests. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import type { ServerStores } from "@acp/server";
import type { NewPendingConsent } from "@acp/store";

/**
 * Temporary homes for a test file, and the stores opened in them: `home()` makes one, `keep(stores)` closes
 * the stores after the file's tests; both are removed then.
 */
export function tempHomes(prefix: string): { home(): string; keep(stores: ServerStores): ServerStores } {
  const dirs: string[] = [];
  const opened: ServerStores[] = [];
  afterAll(async () => {
    for (const s of opened) await s.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  return {
    home: () => {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
    keep: (stores) => {
      opened.push(stores);
      return stores;
    },
  };
}

/** A request of `agent-7` for `fs/write_file`, made two minutes before it expires at `expiresAtMs`. */
export function leftBehindRow(id: string, expiresAtMs: number): NewPendingConsent {
  return {
    id,
    nonce: `n_${id}`,
    sessionId: "s",
    server: "fs",
    tool: "write_file",
    request: {
      id,
      agent: { id: "agent-7" },
      action: { tool: "write_file", server: "fs", category: "write", risk_level: "medium" },
      policy: { rule_id: "policy:ask-writes" },
    },
    reasons: [],
    createdAtMs: expiresAtMs - 120_000,
    expiresAtMs,
  };
}
