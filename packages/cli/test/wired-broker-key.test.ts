/** acp proxy without a passphrase for the home's key: nobody is asked for an approval that cannot be signed. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createPendingConsentStore, openPendingConsentDb } from "@acp/store";
import type { Decision } from "@acp/core";
import { createWiredBroker } from "../src/wiring/consent-broker.js";
import { openHomeState } from "../src/wiring/home-state.js";

const home = mkdtempSync(join(tmpdir(), "acp-wired-broker-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

const decision: Decision = {
  route: "ask",
  action: "ask",
  rule: "policy:ask-writes",
  category: "write",
  risk_level: "medium",
  reasons: [],
  verdicts: [],
};

describe("a wired broker whose key cannot be opened", () => {
  it("refuses every ask at once, saying why, says so once at start, and puts nothing before a person", async () => {
    const lines: string[] = [];
    const state = openHomeState(home);
    const broker = createWiredBroker({
      state,
      terminal: false,
      clock: () => new Date("2026-01-15T12:00:00Z"),
      log: (l) => void lines.push(l),
      key: {
        get: () =>
          Promise.reject(
            new Error(
              "the private key is encrypted: no passphrase (set ACP_PASSPHRASE for the proxy to sign approvals)",
            ),
          ),
        seed: () => Promise.reject(new Error("no")),
        ephemeral: false,
      },
    });
    try {
      const outcome = await broker.ask({
        server: "fs",
        tool: "write_file",
        arguments: { path: "/tmp/x" },
        decision,
        sessionId: "s",
        timeoutMs: 60_000,
        signal: new AbortController().signal,
      });
      expect(outcome).toEqual({
        kind: "denied",
        reason:
          "approvals cannot be signed, so nobody was asked: the private key is encrypted: no passphrase (set ACP_PASSPHRASE for the proxy to sign approvals)",
      });
      expect(lines).toEqual([
        "approvals cannot be signed, so calls that ask are refused: the private key is encrypted: no passphrase (set ACP_PASSPHRASE for the proxy to sign approvals)",
      ]);
      const db = openPendingConsentDb(join(home, "state.db"));
      try {
        expect(createPendingConsentStore(db).listPending(Date.parse("2026-01-15T12:00:00Z"))).toEqual([]);
      } finally {
        db.close();
      }
    } finally {
      await broker.close();
      state.close();
    }
  });
});
