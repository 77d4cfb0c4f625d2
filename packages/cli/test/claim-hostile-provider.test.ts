import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sendJson, startStandIn, type StandInProvider } from "../../claim/test/stand-in-provider.js";
import { runCli } from "./run.js";

// `acp claim` as an agent against a hostile stand-in provider on 127.0.0.1: the provider's text never reaches
// the terminal raw, and an answer the client refuses is an error (exit 1), not the provider refusing (exit 3).

let p: StandInProvider | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

async function publish(q: StandInProvider): Promise<{ code: number; stdout: string; stderr: string }> {
  const home = mkdtempSync(join(tmpdir(), "acp-claim-hostile-"));
  writeFileSync(join(home, "faq.json"), JSON.stringify({ title: "Widget FAQ" }));
  return runCli(["claim", "publish", "--provider", q.url, "--file", join(home, "faq.json")], {
    env: { ACP_HOME: home, HOME: home },
  });
}

describe("acp claim publish against a hostile provider", () => {
  it("shows a provider's error message with its escape sequences escaped (exit 3: the provider refused)", async () => {
    p = await startStandIn();
    p.route("POST /v1/faqs", (_req, res) =>
      sendJson(res, 403, { error: { code: "forbidden", message: "\u001b[2J\u001b[Hall clear\u0007\u009b31m" } }),
    );
    const r = await publish(p);
    expect(r.code).toBe(3);
    expect(r.stderr).not.toMatch(RAW_CONTROL);
    expect(r.stderr).toContain("\\u001b[2J");
    expect(r.stdout).toBe("");
  });

  it("refuses a 60-bit proof-of-work before any work, naming the limit (exit 1, not the provider refusing)", async () => {
    p = await startStandIn();
    p.route("GET /v1/sandboxes/challenge", (_req, res) =>
      sendJson(res, 200, { challenge: "c1", difficulty: 60, algorithm: "sha256_leading_zeros" }),
    );
    const r = await publish(p);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("60 bits");
    expect(r.stderr).toContain("at most 28");
    expect(r.stderr).toContain("claim_difficulty_refused");
    expect(p.seen).not.toContain("POST /v1/sandboxes");
  });

  it("does not save a sandbox whose id the provider made up, and says the provider gave it (exit 1, not usage)", async () => {
    p = await startStandIn();
    p.route("POST /v1/sandboxes", (_req, res) =>
      sendJson(res, 201, {
        id: "../../../../tmp/owned",
        public_handle: "h",
        expires_at: "2026-03-03T12:00:00.000Z",
        agent_token: { token: "t", token_type: "Bearer" },
      }),
    );
    const r = await publish(p);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("claim provider: sandbox id `../../../../tmp/owned`");
  });
});

describe("acp claim against a plain-http provider that is not this machine", () => {
  it("refuses it before any request (exit 2, naming --insecure-http), saving nothing", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-claim-insecure-"));
    writeFileSync(join(home, "faq.json"), JSON.stringify({ title: "Widget FAQ" }));
    for (const command of ["publish", "create-faq"]) {
      const r = await runCli(
        ["claim", command, "--provider", "http://provider.invalid:8080", "--file", join(home, "faq.json")],
        { env: { ACP_HOME: home, HOME: home } },
      );
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        "refusing plain http to `provider.invalid`, which is not this machine: agent tokens and claim codes would cross the network unencrypted",
      );
      expect(r.stderr).toContain("--insecure-http");
      expect(r.stdout).toBe("");
    }
    expect(readdirSync(home)).toEqual(["faq.json"]);
  });
});
