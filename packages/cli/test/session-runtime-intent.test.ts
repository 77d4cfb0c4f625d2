import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalJson, ed25519KeyPairFromSeed } from "@acp/core";
import { createLiveSessionStore, openStateDb, type LiveSessionStore } from "@acp/store";
import { createIntentSync } from "../src/wiring/session-intent-sync.js";
import { signIntentUpdate } from "../src/wiring/intent-update.js";
import { createProxySessionRuntime } from "../src/wiring/session-runtime.js";

const INTENT_A = { goal: "echo things back", allowed_actions: ["everything.echo"] };
const INTENT_B = { goal: "echo and add", allowed_actions: ["everything.echo", "everything.get-sum"] };
const SUM = { server: "everything", tool: "get-sum", arguments: { a: 1, b: 2 } };
const ECHO = { server: "everything", tool: "echo", arguments: { message: "hi" } };
const NOW = new Date("2026-01-15T12:00:00Z");

function setup() {
  const key = ed25519KeyPairFromSeed(randomBytes(32));
  const store = createLiveSessionStore(openStateDb(":memory:"));
  const audit: { type: string; fields: Record<string, unknown> }[] = [];
  const sync = createIntentSync({
    store,
    publicKeyHex: key.publicKeyHex,
    now: () => NOW,
    pid: process.pid,
    audit: (type, fields) => void audit.push({ type, fields }),
  });
  const runtime = createProxySessionRuntime({
    intent: INTENT_A,
    trustedServers: [],
    classify: [],
    now: () => NOW,
    intentSync: sync,
  });
  return { key, store, audit, runtime };
}

function queue(
  store: LiveSessionStore,
  privateKey: ReturnType<typeof ed25519KeyPairFromSeed>["privateKey"],
  intent: object,
) {
  return store.queueUpdate("s1", NOW.getTime(), (seq, session) =>
    signIntentUpdate(privateKey, session, seq, { ...intent }, { by: "cli:tester", issuedAt: NOW.toISOString() }),
  );
}

async function route(runtime: ReturnType<typeof setup>["runtime"], request: object): Promise<string | undefined> {
  const verdict = await runtime.sourceFor("s1").evaluate(request as never, NOW);
  return verdict?.route;
}

describe("the proxy's session runtime applies a person's signed intent update before the next call", () => {
  it("applies a signed update: the refused call passes, old tokens are refused, the audit names both hashes", async () => {
    const { key, store, audit, runtime } = setup();
    expect(await route(runtime, SUM)).toBe("refuse");
    const session = runtime.sessionOf("s1");
    const oldToken = session?.issueToken(ECHO);
    const fromHash = session?.intentHash;
    expect(queue(store, key.privateKey, INTENT_B).ok).toBe(true);
    expect(await route(runtime, SUM)).toBe("accept");
    expect(session?.intent?.version).toBe(2);
    const used = session?.authorize(oldToken, ECHO);
    expect(used).toMatchObject({ ok: false, code: "token_revoked" });
    const event = audit.find((e) => e.type === "intent_updated");
    expect(event?.fields).toMatchObject({
      session_id: "s1",
      from_hash: fromHash,
      to_hash: session?.intentHash,
      to_version: 2,
    });
    expect(store.get("s1")).toMatchObject({ intentVersion: 2, intentHash: session?.intentHash });
    expect(store.updates("s1")[0]?.status).toBe("applied");
  });

  it("refuses an update signed with another key: nothing changes, the refusal is settled and audited", async () => {
    const { store, audit, runtime } = setup();
    await route(runtime, ECHO);
    const stranger = ed25519KeyPairFromSeed(randomBytes(32));
    queue(store, stranger.privateKey, INTENT_B);
    expect(await route(runtime, SUM)).toBe("refuse");
    expect(runtime.sessionOf("s1")?.intent?.version).toBe(1);
    expect(store.updates("s1")[0]).toMatchObject({ status: "rejected" });
    expect(store.updates("s1")[0]?.outcome).toContain("intent_update_signature_invalid");
    expect(audit.map((e) => e.type)).toEqual(["intent_update_refused"]);
  });

  it("refuses a payload edited after signing and one signed for another session", async () => {
    const { key, store, runtime } = setup();
    await route(runtime, ECHO);
    store.queueUpdate("s1", 1, (seq, session) => {
      const signed = signIntentUpdate(key.privateKey, session, seq, INTENT_B, { by: "cli:t", issuedAt: "x" });
      const edited = { ...signed.payload, intent: { ...INTENT_B, allowed_actions: ["**"] } };
      return { payloadJson: canonicalJson(edited), signature: signed.signature };
    });
    store.queueUpdate("s1", 2, (_seq, session) =>
      signIntentUpdate(key.privateKey, { ...session, id: "other" }, 2, INTENT_B, { by: "cli:t", issuedAt: "x" }),
    );
    expect(await route(runtime, SUM)).toBe("refuse");
    // the later update is the one looked at; the earlier is superseded
    const [first, second] = store.updates("s1");
    expect(first?.status).toBe("superseded");
    expect(second?.outcome).toContain("intent_update_mismatch");
    expect(await route(runtime, SUM)).toBe("refuse");
    store.queueUpdate("s1", 3, (seq, session) => {
      const signed = signIntentUpdate(key.privateKey, session, seq, INTENT_B, { by: "cli:t", issuedAt: "x" });
      return { payloadJson: signed.payloadJson.replace("echo and add", "echo and ADD"), signature: signed.signature };
    });
    expect(await route(runtime, SUM)).toBe("refuse");
    expect(store.updates("s1")[2]?.outcome).toContain("intent_update_signature_invalid");
    expect(runtime.sessionOf("s1")?.intent?.version).toBe(1);
  });

  it("without a home key to verify with, every update is refused", async () => {
    const store = createLiveSessionStore(openStateDb(":memory:"));
    const sync = createIntentSync({ store, publicKeyHex: null, now: () => NOW, pid: 1 });
    const runtime = createProxySessionRuntime({
      intent: INTENT_A,
      trustedServers: [],
      classify: [],
      now: () => NOW,
      intentSync: sync,
    });
    await route(runtime, ECHO);
    queue(store, ed25519KeyPairFromSeed(randomBytes(32)).privateKey, INTENT_B);
    expect(await route(runtime, SUM)).toBe("refuse");
    expect(store.updates("s1")[0]?.status).toBe("rejected");
  });

  it("a session closed by the agent's disconnect is recorded as ended", async () => {
    const { key, store, runtime } = setup();
    await route(runtime, ECHO);
    runtime.observer.closed?.("s1");
    expect(store.get("s1")?.status).toBe("closed");
    expect(queue(store, key.privateKey, INTENT_B)).toMatchObject({ ok: false, code: "session_finished" });
  });
});
