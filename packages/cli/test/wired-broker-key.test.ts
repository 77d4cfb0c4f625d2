/**
 * The consent broker as acp proxy wires it: without a passphrase for the home's key nobody is asked for an
 * approval that cannot be signed; one session's calls waiting for a person are bounded, so an agent cannot
 * bury the person in questions.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createPendingConsentStore, openPendingConsentDb } from "@acp/store";
import { ed25519KeyPairFromSeed, type Decision } from "@acp/core";
import { PROXY_MAX_WAITING_PER_SESSION } from "@acp/proxy";
import { createWiredBroker } from "../src/wiring/consent-broker.js";
import { openHomeState } from "../src/wiring/home-state.js";
import { fixtureHome, tempRoot } from "./home-fixture.js";

// a home `acp init` made: a bare directory is not one, and keeps no state.db (pending requests) of its own
const root = tempRoot("wired-broker");
afterAll(root.cleanup);
const { home } = fixtureHome(root.dir);

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

describe("the wired broker of acp proxy and calls waiting for a person", () => {
  it(`lets ${PROXY_MAX_WAITING_PER_SESSION} calls of one session wait; the next is denied at once and never pending`, async () => {
    const state = openHomeState(home);
    const pair = ed25519KeyPairFromSeed(new Uint8Array(32).fill(7));
    const broker = createWiredBroker({
      state,
      terminal: false,
      clock: () => new Date("2026-01-15T12:00:00Z"),
      key: { get: () => Promise.resolve(pair), seed: () => Promise.reject(new Error("no")), ephemeral: false },
    });
    const stop = new AbortController();
    const ask = (sessionId: string, n: number) =>
      broker.ask({
        server: "fs",
        tool: "write_file",
        arguments: { path: `/tmp/${n}` },
        decision,
        sessionId,
        timeoutMs: 60_000,
        signal: stop.signal,
      });
    const db = openPendingConsentDb(join(home, "state.db"));
    const pending = (): number => createPendingConsentStore(db).listPending(Date.parse("2026-01-15T12:00:00Z")).length;
    try {
      const waiting = Array.from({ length: PROXY_MAX_WAITING_PER_SESSION }, (_, n) => ask("s", n));
      for (let i = 0; i < 200 && pending() < PROXY_MAX_WAITING_PER_SESSION; i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(pending()).toBe(PROXY_MAX_WAITING_PER_SESSION);
      const over = await ask("s", 99);
      expect(over).toEqual({
        kind: "denied",
        reason: `too many calls of this session are waiting for a person (${PROXY_MAX_WAITING_PER_SESSION}): answer or deny those first (\`acp pending\`)`,
      });
      expect(pending()).toBe(PROXY_MAX_WAITING_PER_SESSION);
      // another session still gets its question in
      const other = ask("t", 0);
      for (let i = 0; i < 200 && pending() < PROXY_MAX_WAITING_PER_SESSION + 1; i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(pending()).toBe(PROXY_MAX_WAITING_PER_SESSION + 1);
      stop.abort();
      expect(new Set((await Promise.all([...waiting, other])).map((o) => o.kind))).toEqual(new Set(["withdrawn"]));
    } finally {
      db.close();
      await broker.close();
      state.close();
    }
  });
});

describe("the wired broker names the agent acp run started", () => {
  it("puts the given agent (its command) in every consent request whose call names none", async () => {
    const state = openHomeState(home);
    const pair = ed25519KeyPairFromSeed(new Uint8Array(32).fill(9));
    const agent = { id: "run-agent", name: "my-agent", command: "node agent.js --task inbox" };
    const broker = createWiredBroker({
      state,
      terminal: false,
      clock: () => new Date("2026-01-15T12:00:00Z"),
      key: { get: () => Promise.resolve(pair), seed: () => Promise.reject(new Error("no")), ephemeral: false },
      agent,
    });
    const stop = new AbortController();
    const db = openPendingConsentDb(join(home, "state.db"));
    const requestOf = (): unknown =>
      createPendingConsentStore(db)
        .listPending(Date.parse("2026-01-15T12:00:00Z"))
        .find((r) => r.sessionId === "run-session")?.request;
    try {
      const asked = broker.ask({
        server: "fs",
        tool: "write_file",
        arguments: { path: "/tmp/x" },
        decision,
        sessionId: "run-session",
        timeoutMs: 60_000,
        signal: stop.signal,
      });
      for (let i = 0; i < 200 && requestOf() === undefined; i++) await new Promise((r) => setTimeout(r, 10));
      expect((requestOf() as { agent: unknown }).agent).toEqual(agent);
      stop.abort();
      expect((await asked).kind).toBe("withdrawn");
    } finally {
      db.close();
      await broker.close();
      state.close();
    }
  });
});

describe("the wired broker with no terminal to ask at", () => {
  it("says on stderr where the call waits and how to answer it (a client's log showed nothing)", async () => {
    const state = openHomeState(home);
    const lines: string[] = [];
    const pair = ed25519KeyPairFromSeed(new Uint8Array(32).fill(9));
    const broker = createWiredBroker({
      state,
      terminal: false,
      clock: () => new Date("2026-01-15T12:00:00Z"),
      log: (l) => void lines.push(l),
      key: { get: () => Promise.resolve(pair), seed: () => Promise.reject(new Error("no")), ephemeral: false },
    });
    const stop = new AbortController();
    try {
      const asked = broker.ask({
        server: "fs",
        tool: "write\u001b[2Jfile",
        arguments: { path: "/tmp/x" },
        decision,
        sessionId: "told-session",
        timeoutMs: 60_000,
        signal: stop.signal,
      });
      for (let i = 0; i < 200 && lines.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^`write\\u001b\[2Jfile` on `fs` waits for a person until 2026-01-15T12:01:00(\.000)?Z: `acp pending`, then `acp approve (cr_[A-Za-z0-9_-]+)` or `acp deny \2`$/,
      );
      stop.abort();
      expect((await asked).kind).toBe("withdrawn");
    } finally {
      await broker.close();
      state.close();
    }
  });
});
