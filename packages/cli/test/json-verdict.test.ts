import { generateKeyPairSync } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openAuditLog } from "@acp/store";
import { runCli } from "./run.js";
import { tempRoot } from "./home-fixture.js";

const root = tempRoot("json-verdict");
afterAll(root.cleanup);

const examples = fileURLToPath(new URL("../../../examples/verify/", import.meta.url));

/** A home with keys/public.key and a signed audit log of three events. */
async function auditHome(): Promise<{ log: string; env: Record<string, string> }> {
  const home = join(root.dir, "audit-home");
  mkdirSync(join(home, "keys"), { recursive: true });
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const x = publicKey.export({ format: "jwk" }).x ?? "";
  writeFileSync(join(home, "keys", "public.key"), `${Buffer.from(x, "base64url").toString("hex")}\n`);
  const log = join(home, "audit.jsonl");
  let t = Date.UTC(2026, 0, 15);
  const writer = await openAuditLog(log, { clock: () => new Date(t++), signer: privateKey, checkpointEvery: 2 });
  for (let i = 0; i < 3; i++)
    await writer.append({ event_type: "policy_evaluated", tool: "send_email", decision: "ask" });
  await writer.close();
  return { log, env: { ACP_HOME: home, HOME: "/nonexistent-home" } };
}

/** The verdict of one `--json` run: `valid` (and `ok` where a command printed it before `valid`). */
async function verdict(
  argv: readonly string[],
  env?: Record<string, string>,
): Promise<{ code: number; json: Record<string, unknown> }> {
  const out = await runCli([...argv, "--json"], env === undefined ? {} : { env });
  return { code: out.code, json: JSON.parse(out.stdout) as Record<string, unknown> };
}

describe("every validating or verifying command says its verdict in `valid` with --json", () => {
  it("acp audit verify: valid true when intact (exit 0), false when tampered (exit 3); ok kept, the same", async () => {
    const h = await auditHome();
    const intact = await verdict(["audit", "verify"], h.env);
    expect(intact.code).toBe(0);
    expect(intact.json).toMatchObject({ valid: true, ok: true, output_version: 6 });
    const lines = readFileSync(h.log, "utf8").split("\n");
    lines[1] = (lines[1] ?? "").replace('"decision":"ask"', '"decision":"accept"');
    writeFileSync(h.log, lines.join("\n"));
    const tampered = await verdict(["audit", "verify"], h.env);
    expect(tampered.code).toBe(3);
    expect(tampered.json).toMatchObject({ valid: false, ok: false });
  });

  it("acp policy verify: valid true when every invariant holds (exit 0), false when one is broken (exit 3)", async () => {
    const files = (name: string): string[] => [
      "--policy",
      join(examples, name, "policy.yml"),
      "--intent",
      join(examples, name, "intent.json"),
    ];
    const good = await verdict([
      "policy",
      "verify",
      ...files("good"),
      "--session-settings",
      join(examples, "good", "session.yml"),
      "--depth",
      "2",
    ]);
    expect(good.code).toBe(0);
    expect(good.json).toMatchObject({ valid: true, outcome: "verified" });
    const broken = await verdict(["policy", "verify", ...files("accepts-send"), "--depth", "2"]);
    expect(broken.code).toBe(3);
    expect(broken.json).toMatchObject({ valid: false, outcome: "violated" });
  });

  it("acp policy verify: valid null when the model is too large (exit 1): nothing is claimed", async () => {
    const out = await verdict([
      "policy",
      "verify",
      "--policy",
      join(examples, "good", "policy.yml"),
      "--intent",
      join(examples, "good", "intent.json"),
      "--max-states",
      "3",
    ]);
    expect(out.code).toBe(1);
    expect(out.json).toMatchObject({ valid: null, outcome: "too_large" });
  });

  it("acp policy validate and acp graph lint: the same key, true and false", async () => {
    const policy = join(root.dir, "policy.yml");
    writeFileSync(policy, 'version: "1"\ndefault_action: ask\nrules: []\n');
    expect(await verdict(["policy", "validate", policy])).toMatchObject({ code: 0, json: { valid: true } });
    writeFileSync(policy, 'version: "1"\ndefault_action: alow\nrules: []\n');
    expect(await verdict(["policy", "validate", policy])).toMatchObject({ code: 4, json: { valid: false } });
    const graph = join(root.dir, "graph.json");
    writeFileSync(graph, '{"email": {"autonomous": ["read"], "requires_approval": ["send"], "blocked": []}}');
    expect(await verdict(["graph", "lint", graph])).toMatchObject({ code: 0, json: { valid: true, ok: true } });
    writeFileSync(graph, '{"email": {"autonomous": ["read"], "requires_approval": ["read"], "blocked": []}}');
    expect(await verdict(["graph", "lint", graph])).toMatchObject({ code: 4, json: { valid: false, ok: false } });
  });
});
