/**
 * The trusted channel end to end, as an operator sets it up: a key sealed with `acp config set-secret
 * serve.trusted_channel_keys.ops`, a consent graph in the home holding an action to the channel, and the
 * real `acp serve` judging `POST /v1/decide` with the attestation the channel's sender made with that key.
 * (The service's own tests build the pipeline by hand: packages/server/test/trusted-channel-*.test.ts.)
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createTrustedChannelAttestation } from "@acp/core";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";
import { startServe } from "./serve-fixture.js";

const root = tempRoot("serve-trusted-channel");
afterAll(root.cleanup);

const KEY = "5f0c1d6e8a9b2c3d4e5f60718293a4b5c6d7e8f9";
const GRAPH = {
  self_modification: {
    autonomous: ["prune_stale_memory"],
    requires_approval: [],
    blocked: [],
    trusted_channel_required: ["prune_stale_memory"],
  },
};
const TARGET = { domain: "self_modification", action: "prune_stale_memory" };
const CALL = { tool: "prune", arguments: { older_than_days: 30 } };

async function decide(url: string, body: unknown): Promise<{ route: string; codes: string[] }> {
  const res = await fetch(`${url}/v1/decide`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  const answer = (await res.json()) as { route: string; decision: { reasons: { code: string }[] } };
  return { route: answer.route, codes: answer.decision.reasons.map((r) => r.code) };
}

describe("acp serve with a sealed trusted-channel key", () => {
  it("lets the attested call through once, and blocks it without the attestation, forged or again", async () => {
    const { home } = fixtureHome(root.dir);
    const env = envFor(home);
    writeFileSync(join(home, "policy.yml"), 'version: "1"\ndefault_action: allow\n');
    writeFileSync(join(home, "consent-graph.json"), JSON.stringify(GRAPH));
    const sealed = await runCli(["config", "set-secret", "serve.trusted_channel_keys.ops"], { env, stdin: `${KEY}\n` });
    expect(sealed.code).toBe(0);
    // the key is in config.yml only sealed
    expect(readFileSync(join(home, "config.yml"), "utf8")).not.toContain(KEY);

    const serve = startServe(home, ["--port", "0"], env);
    try {
      const { url } = await serve.ready;
      const attest = (secret = KEY, call = CALL) =>
        createTrustedChannelAttestation({ ...TARGET, call, keyId: "ops", secret, timestamp: new Date() });

      // the policy allows everything: the graph holds the action to the channel
      const bare = await decide(url, { ...CALL, graph: TARGET });
      expect(bare.route).toBe("refuse");
      expect(bare.codes).toContain("trusted_channel_required");
      const forged = attest("not-the-sealed-key-0123456789abcdef");
      const byForged = await decide(url, { ...CALL, graph: { ...TARGET, attestation: forged } });
      expect([byForged.route, byForged.codes.includes("attestation_invalid")]).toEqual(["refuse", true]);
      // made for other arguments: not this call's
      const other = attest(KEY, { ...CALL, arguments: { older_than_days: 1 } });
      const byOther = await decide(url, { ...CALL, graph: { ...TARGET, attestation: other } });
      expect([byOther.route, byOther.codes.includes("attestation_invalid")]).toEqual(["refuse", true]);

      const good = attest();
      const through = await decide(url, { ...CALL, graph: { ...TARGET, attestation: good } });
      expect(through.route).toBe("accept");
      expect(through.codes).toContain("trusted_channel_verified");
      const again = await decide(url, { ...CALL, graph: { ...TARGET, attestation: good } });
      expect([again.route, again.codes.includes("attestation_replayed")]).toEqual(["refuse", true]);
    } finally {
      serve.stop();
      await serve.done;
    }
    // the key never reached the service's output
    expect(JSON.stringify(serve.output())).not.toContain(KEY);
  });
});
