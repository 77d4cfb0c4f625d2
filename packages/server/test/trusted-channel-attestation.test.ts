/**
 * `acp serve` and trusted-channel attestations: the service takes none over its API (a `graph` in
 * `/v1/decide` is `{ domain, action, confidence? }`; `/pre-tool-check` and the MCP tool carry no graph
 * target), so an action the consent graph holds to the trusted channel is BLOCKED `trusted_channel_required`
 * there, and an attestation sent anyway is 400 `unknown_field`, nothing decided or recorded: there is nothing
 * to replay through the service, even when the pipeline it is given holds trusted-channel keys. (Where an
 * attestation does reach a pipeline, its graph source refuses the same one twice: core's
 * attestation-replay.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createPipeline,
  createTrustedChannelAttestation,
  graphSource,
  parseConsentGraph,
  type ConsentGraph,
} from "@acp/core";
import type { EmbeddedServer } from "@acp/server";
import { at, openTestServerAt, readJson } from "./harness.js";

function graphOf(raw: unknown): ConsentGraph {
  const parsed = parseConsentGraph(JSON.stringify(raw));
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.value;
}

const graph = graphOf({
  self_modification: {
    autonomous: ["prune_stale_memory"],
    requires_approval: [],
    blocked: [],
    trusted_channel_required: ["prune_stale_memory"],
  },
});
const KEYS = { channel: "trusted-channel-secret-0123456789" };
const target = { domain: "self_modification", action: "prune_stale_memory" };
const call = { tool: "prune", arguments: { older_than_days: 30 } };

let home: string;
let node: EmbeddedServer;
let url: string;
beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "acp-trusted-channel-"));
  const pipeline = createPipeline([graphSource({ graph, context: { trustedChannelKeys: KEYS } })]);
  ({ node, url } = await openTestServerAt(home, {
    pipeline,
    simulationPipeline: pipeline,
    anyServerPipeline: pipeline,
    recheckPipeline: pipeline,
  }));
});
afterAll(async () => {
  await node.close();
  rmSync(home, { recursive: true, force: true });
});

function decide(body: unknown): Promise<Response> {
  return fetch(`${url}/v1/decide`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("trusted-channel attestations and acp serve", () => {
  it("takes no attestation over the API (400 unknown_field), so a trusted-channel action is BLOCKED there", async () => {
    const attestation = createTrustedChannelAttestation({
      ...target,
      call,
      keyId: "channel",
      secret: KEYS.channel,
      timestamp: new Date(),
    });
    const sent = await decide({ ...call, graph: { ...target, attestation } });
    expect(sent.status).toBe(400);
    expect(at(await readJson(sent), "error", "code")).toBe("unknown_field");
    const bare = await decide({ ...call, graph: target });
    expect(bare.status).toBe(200);
    const answer = await readJson(bare);
    expect(at(answer, "route")).toBe("refuse");
    expect(at(answer, "decision", "reasons", 0, "code")).toBe("trusted_channel_required");
  });
});
