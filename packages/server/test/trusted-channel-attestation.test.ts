/**
 * `acp serve` takes a trusted-channel attestation with `POST /v1/decide` (`graph.attestation`): one that
 * verifies with a configured key lets a `trusted_channel_required` action through, its tier still applying;
 * a forged, stale or unknown-key one, or none, is BLOCKED; the same one again is refused as replayed, also by
 * the service restarted on the same `state.db` (the ledger is the spent-nonce table); a malformed one is 400,
 * nothing decided. (Several nodes on one PostgreSQL: postgres/trusted-channel-nodes.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EmbeddedServer } from "@acp/server";
import { at, openTestServerAt, readJson, testKeys } from "./harness.js";
import { PRUNE, PRUNE_CALL, attest, checkingPipeline, decideAt, trustedChannelPipeline } from "./trusted-channel.js";

let home: string;
let node: EmbeddedServer;
let url: string;
// the same service keys across the restart: the audit chain it signs goes on
const keys = testKeys();

function open(): Promise<{ node: EmbeddedServer; url: string }> {
  return openTestServerAt(home, {
    pipeline: trustedChannelPipeline,
    anyServerPipeline: trustedChannelPipeline,
    simulationPipeline: checkingPipeline(),
    recheckPipeline: checkingPipeline(),
    keys,
  });
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "acp-trusted-channel-"));
  ({ node, url } = await open());
});
afterAll(async () => {
  await node.close();
  rmSync(home, { recursive: true, force: true });
});

async function decided(body: unknown): Promise<{ route: unknown; codes: unknown[] }> {
  const res = await decideAt(url, body);
  expect(res.status).toBe(200);
  const answer = await readJson(res);
  const reasons = at(answer, "decision", "reasons") as { code: unknown }[];
  return { route: at(answer, "route"), codes: reasons.map((r) => r.code) };
}

describe("a trusted-channel attestation sent to acp serve", () => {
  it("lets a trusted-channel action through when it verifies, and its tier still applies", async () => {
    const autonomous = await decided({ ...PRUNE_CALL, graph: { ...PRUNE, attestation: attest() } });
    expect(autonomous.route).toBe("accept");
    expect(autonomous.codes).toContain("trusted_channel_verified");
    const consolidate = { domain: "self_modification", action: "consolidate_daily_to_memory" };
    const call = { tool: "consolidate", arguments: { day: "2026-11-28" } };
    const asked = await decided({ ...call, graph: { ...consolidate, attestation: attest(consolidate, call) } });
    expect(asked.route).toBe("ask");
    expect(asked.codes).toEqual(expect.arrayContaining(["approval_required", "trusted_channel_verified"]));
  });

  it("blocks a forged, stale or unknown-key attestation, and a call without one", async () => {
    const good = attest();
    const cases: [string, unknown][] = [
      ["attestation_invalid", { ...good, hmac: "0".repeat(64) }],
      ["attestation_invalid", attest(PRUNE, { ...PRUNE_CALL, arguments: { older_than_days: 1 } })],
      ["attestation_stale", attest(PRUNE, PRUNE_CALL, { timestamp: new Date(Date.now() - 600_000) })],
      ["attestation_unknown_key", attest(PRUNE, PRUNE_CALL, { keyId: "other" })],
      ["attestation_invalid", attest(PRUNE, PRUNE_CALL, { secret: "not-the-configured-secret-0123" })],
    ];
    for (const [code, attestation] of cases) {
      const answer = await decided({ ...PRUNE_CALL, graph: { ...PRUNE, attestation } });
      expect([code, answer.route, answer.codes]).toEqual([code, "refuse", [code]]);
    }
    const bare = await decided({ ...PRUNE_CALL, graph: PRUNE });
    expect([bare.route, bare.codes]).toEqual(["refuse", ["trusted_channel_required"]]);
    // none of those spent the good one
    expect((await decided({ ...PRUNE_CALL, graph: { ...PRUNE, attestation: good } })).route).toBe("accept");
  });

  it("refuses the same attestation again, also after the service restarts on the same state.db", async () => {
    const attestation = attest();
    const body = { ...PRUNE_CALL, graph: { ...PRUNE, attestation } };
    expect((await decided(body)).route).toBe("accept");
    const again = await decided(body);
    expect([again.route, again.codes[0]]).toEqual(["refuse", "attestation_replayed"]);
    await node.close();
    ({ node, url } = await open());
    const restarted = await decided(body);
    expect([restarted.route, restarted.codes[0]]).toEqual(["refuse", "attestation_replayed"]);
  });

  it("answers a malformed attestation 400 naming the field, nothing decided", async () => {
    const good = attest();
    const { hmac: _hmac, ...withoutHmac } = good;
    void _hmac;
    const bad: [string, string, unknown][] = [
      ["invalid_body", "body/graph/attestation: must have required property 'hmac'", withoutHmac],
      ["invalid_body", "body/graph/attestation/hmac", { ...good, hmac: good.hmac.toUpperCase() }],
      ["invalid_body", "body/graph/attestation/hmac", { ...good, hmac: good.hmac.slice(1) }],
      ["invalid_body", "body/graph/attestation/timestamp", { ...good, timestamp: "yesterday" }],
      ["invalid_body", "body/graph/attestation/timestamp", { ...good, timestamp: "2026-11-29T08:00:00" }],
      ["invalid_body", "body/graph/attestation/key_id", { ...good, key_id: "Channel Key" }],
      ["invalid_body", "body/graph/attestation/key_id", { ...good, key_id: 7 }],
      ["invalid_body", "body/graph/attestation", "channel:2026-11-29T08:00:00Z:abc"],
      ["unknown_field", "body/graph/attestation: unknown field `signature`", { ...good, signature: "x" }],
    ];
    const before = at(await readJson(await fetch(`${url}/v1/audit`)), "total");
    for (const [code, message, attestation] of bad) {
      const res = await decideAt(url, { ...PRUNE_CALL, graph: { ...PRUNE, attestation } });
      const body = await readJson(res);
      expect([message, res.status, at(body, "error", "code")]).toEqual([message, 400, code]);
      expect(String(at(body, "error", "message"))).toContain(message);
    }
    expect(at(await readJson(await fetch(`${url}/v1/audit`)), "total")).toBe(before);
    // the well-formed one was not spent by any of them
    expect((await decided({ ...PRUNE_CALL, graph: { ...PRUNE, attestation: good } })).route).toBe("accept");
  });

  it("is published in the OpenAPI document, with the fields it takes", async () => {
    const doc = await readJson(await fetch(`${url}/openapi.json`));
    const body = at(doc, "paths", "/v1/decide", "post", "requestBody", "content", "application/json", "schema");
    const attestation = at(body, "properties", "graph", "properties", "attestation");
    expect(at(attestation, "required")).toEqual(["key_id", "timestamp", "hmac"]);
    expect(at(attestation, "additionalProperties")).toBe(false);
    expect(at(attestation, "properties", "hmac", "pattern")).toBe("^[0-9a-f]{64}$");
  });
});
