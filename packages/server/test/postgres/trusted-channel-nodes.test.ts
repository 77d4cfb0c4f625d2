/**
 * Two `acp serve` nodes on one PostgreSQL share the trusted-channel attestations already used (the spent-nonce
 * table): an attestation one node took is refused as replayed by the other, and of the same attestation sent
 * to both at once exactly one is taken. With a ledger per process, each node took it once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddedServer } from "@acp/server";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { at, openTestServerAt, readJson, testKeys } from "../harness.js";
import { PRUNE, PRUNE_CALL, attest, checkingPipeline, decideAt, trustedChannelPipeline } from "../trusted-channel.js";

const db = useTestDatabase();
const homes: string[] = [];
const nodes: { node: EmbeddedServer; url: string }[] = [];
beforeAll(async () => {
  const keys = testKeys(); // one deployment: the nodes sign with the same service key
  for (let i = 0; i < 2; i++) {
    const home = mkdtempSync(join(tmpdir(), `acp-trusted-nodes-${i}-`));
    homes.push(home);
    nodes.push(
      await openTestServerAt(home, {
        storageUrl: db.url,
        keys,
        pipeline: trustedChannelPipeline,
        anyServerPipeline: trustedChannelPipeline,
        simulationPipeline: checkingPipeline(),
        recheckPipeline: checkingPipeline(),
      }),
    );
  }
});
afterAll(async () => {
  for (const { node } of nodes) await node.close();
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

async function routeAt(url: string, body: unknown): Promise<[unknown, unknown]> {
  const res = await decideAt(url, body);
  expect(res.status).toBe(200);
  const answer = await readJson(res);
  return [at(answer, "route"), at(answer, "decision", "reasons", 0, "code")];
}

function urlOf(i: number): string {
  const url = nodes[i]?.url;
  if (url === undefined) throw new Error(`no node ${i}`);
  return url;
}

describe("a trusted-channel attestation and two serve nodes on one PostgreSQL", () => {
  it("is taken by one node and refused as replayed by the other", async () => {
    const body = { ...PRUNE_CALL, graph: { ...PRUNE, attestation: attest() } };
    expect(await routeAt(urlOf(0), body)).toEqual(["accept", "autonomous_action"]);
    expect(await routeAt(urlOf(1), body)).toEqual(["refuse", "attestation_replayed"]);
    expect(await routeAt(urlOf(0), body)).toEqual(["refuse", "attestation_replayed"]);
    // a fresh attestation of the same call is taken, by either node
    const fresh = {
      ...PRUNE_CALL,
      graph: { ...PRUNE, attestation: attest(PRUNE, PRUNE_CALL, { timestamp: new Date(Date.now() + 1) }) },
    };
    expect(await routeAt(urlOf(1), fresh)).toEqual(["accept", "autonomous_action"]);
  });

  it("is taken exactly once when sent to both nodes at the same time", async () => {
    for (let round = 0; round < 5; round++) {
      const stamp = new Date(Date.now() + 10 + round);
      const body = { ...PRUNE_CALL, graph: { ...PRUNE, attestation: attest(PRUNE, PRUNE_CALL, { timestamp: stamp }) } };
      const answers = await Promise.all([0, 1, 0, 1].map((i) => routeAt(urlOf(i), body)));
      expect(answers.filter(([route]) => route === "accept")).toHaveLength(1);
      expect(answers.filter(([, code]) => code === "attestation_replayed")).toHaveLength(3);
    }
  });
});
