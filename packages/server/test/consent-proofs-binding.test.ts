/**
 * The service's consent proofs (`createConsentProofs`, the broker's sign and verify in `acp serve`): a signed
 * response verifies only against the request it answers, its id as well as its nonce (§6.3 4), only when it
 * was given by the request's expiry, and a single-use approval only when it ends with its request (§6.3 5) —
 * the checks acp proxy's verifier makes (core's `verifyConsentProof` with `answers`).
 */
import { describe, expect, it } from "vitest";
import { createMemoryNonceStore, ed25519KeyPairFromSeed } from "@acp/core";
import type { ConsentRequestV02, UnsignedConsentResponseV02 } from "@acp/proxy";
import { createConsentProofs } from "../src/index.js";

const keys = ed25519KeyPairFromSeed(new Uint8Array(32).fill(5));
const now = new Date("2026-01-15T12:00:10.000Z");
const args = { path: "/tmp/x", content: "hello" };

const request: ConsentRequestV02 = {
  type: "consent_request",
  version: "0.2.0",
  id: "cr_0123456789abcdef0123456789abcdef",
  timestamp: "2026-01-15T12:00:00.000Z",
  expires_at: "2026-01-15T12:05:00.000Z",
  agent: { id: "agent-1", name: "agent", command: "node agent.js" },
  action: {
    tool: "write_file",
    server: "fs",
    category: "write",
    risk_level: "medium",
    parameters: args,
    description: "write a file",
  },
  policy: { rule_id: "r1", rule_name: "ask-writes", required_level: "medium" },
  nonce: "n_00000000-0000-4000-8000-000000000001",
};

const unsigned: UnsignedConsentResponseV02 = {
  type: "consent_response",
  version: "0.2.0",
  request_id: request.id,
  timestamp: now.toISOString(),
  decision: "approved",
  approver: { id: "console:alice", channel: "console" },
  modifications: null,
  conditions: { valid_until: request.expires_at, single_use: true, scope: "once" },
  nonce: request.nonce,
};

describe("acp serve's consent proofs", () => {
  it("verify a response against the request it answers, and refuse it for another request with the same nonce", async () => {
    const proofs = createConsentProofs(keys);
    const response = await proofs.sign({ response: unsigned, request, arguments: args });
    expect(await proofs.verify({ response, request, arguments: args, now })).toBe(true);
    const other = { ...request, id: "cr_fedcba9876543210fedcba9876543210" };
    expect(await proofs.verify({ response, request: other, arguments: args, now })).toBe(false);
  });

  it("spend no nonce for a response refused as answering another request", async () => {
    const nonces = createMemoryNonceStore();
    const proofs = createConsentProofs(keys, nonces);
    const response = await proofs.sign({ response: unsigned, request, arguments: args });
    const other = { ...request, id: "cr_fedcba9876543210fedcba9876543210" };
    expect(await proofs.verify({ response, request: other, arguments: args, now })).toBe(false);
    expect(nonces.size).toBe(0);
    expect(await proofs.verify({ response, request, arguments: args, now })).toBe(true);
    expect(nonces.size).toBe(1);
  });

  it("refuse an answer given after its request expired, spending no nonce (a session approval that would outlive it)", async () => {
    const nonces = createMemoryNonceStore();
    const proofs = createConsentProofs(keys, nonces);
    const late = new Date(Date.parse(request.expires_at) + 1_000);
    const session = {
      ...unsigned,
      timestamp: late.toISOString(),
      conditions: { valid_until: "2026-01-16T00:00:00.000Z", single_use: false, scope: "session", session_id: "s" },
    } as const;
    const response = await proofs.sign({ response: session, request, arguments: args });
    expect(await proofs.verify({ response, request, arguments: args, now: late })).toBe(false);
    expect(nonces.size).toBe(0);
    // the same approval given in time verifies, and outlives its request as a session approval may
    const inTime = await proofs.sign({
      response: { ...session, timestamp: now.toISOString() },
      request,
      arguments: args,
    });
    expect(await proofs.verify({ response: inTime, request, arguments: args, now: late })).toBe(true);
  });

  it("refuse a single-use approval signed to last past its request, spending no nonce", async () => {
    const nonces = createMemoryNonceStore();
    const proofs = createConsentProofs(keys, nonces);
    for (const conditions of [
      { valid_until: "2026-01-15T13:00:00.000Z", single_use: true, scope: "once" },
      { valid_until: "2026-01-15T12:05:00.001Z", single_use: true, scope: "once" },
    ] as const) {
      const response = await proofs.sign({ response: { ...unsigned, conditions }, request, arguments: args });
      expect(await proofs.verify({ response, request, arguments: args, now })).toBe(false);
    }
    expect(nonces.size).toBe(0);
  });

  it("verify the approved action as the real arguments with the person's modifications", async () => {
    const proofs = createConsentProofs(keys, createMemoryNonceStore());
    const modified = {
      ...unsigned,
      decision: "approved_with_modifications",
      modifications: { content: "bye" },
    } as const;
    const response = await proofs.sign({ response: modified, request, arguments: args });
    const other = { ...args, path: "/tmp/y" };
    expect(await proofs.verify({ response, request, arguments: other, now })).toBe(false);
    expect(await proofs.verify({ response, request, arguments: args, now })).toBe(true);
  });

  it("fail as the nonce store fails, rather than reading its failure as a spent nonce", async () => {
    const broken = { spend: () => Promise.reject(new Error("database is locked")) };
    const proofs = createConsentProofs(keys, broken);
    const response = await proofs.sign({ response: unsigned, request, arguments: args });
    await expect(proofs.verify({ response, request, arguments: args, now })).rejects.toThrow("database is locked");
  });
});
