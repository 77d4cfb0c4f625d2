import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ClaimServer } from "@acp/claim";
import { serveClaim } from "../src/commands/claim.js";
import type { CliContext } from "../src/context.js";
import { runCli } from "./run.js";

let server: ClaimServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function context(home: string): { ctx: CliContext; stderr: () => string } {
  let err = "";
  const ctx: CliContext = {
    exitCode: 0,
    io: {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (err += s) },
      readStdin: () => Promise.resolve(""),
      stdinIsTTY: false,
      env: { ACP_HOME: home, HOME: home },
      cwd: home,
      now: () => new Date(),
    },
  };
  return { ctx, stderr: () => err };
}

const FAQ = {
  title: "Widget FAQ",
  questions: [{ question: "Does it work?", answer: "Yes, see [docs](https://example.com)." }],
};

describe("acp claim", () => {
  it("serve + publish + link: discovery to a published FAQ and a claim link, one call each; sandbox saved 0600; log has no secrets", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-claim-"));
    const { ctx, stderr } = context(home);
    const started = await serveClaim(ctx, { port: "0", difficulty: "8", db: join(home, "state.db") });
    server = started.server;
    expect(statSync(join(home, "claim", "provider.key")).mode & 0o777).toBe(0o600);
    const provider = `http://api.localhost:${started.port}`;
    writeFileSync(join(home, "faq.json"), JSON.stringify(FAQ));
    const env = { ACP_HOME: home, HOME: home };
    const pub = await runCli(["claim", "publish", "--provider", provider, "--file", join(home, "faq.json"), "--json"], {
      env,
    });
    expect(pub.stderr).toBe("");
    expect(pub.code).toBe(0);
    const out = JSON.parse(pub.stdout) as { sandbox_id: string; published_url: string };
    expect(out.published_url).toMatch(new RegExp(`^http://[a-z2-7]{26}\\.pub\\.localhost:${started.port}/widget-faq$`));
    const saved = join(home, "claim", "sandboxes", `${out.sandbox_id}.json`);
    expect(statSync(saved).mode & 0o777).toBe(0o600);
    const link = await runCli(["claim", "link", out.sandbox_id, "--json"], { env });
    expect(link.code).toBe(0);
    const l = JSON.parse(link.stdout) as { claim_code: string; claim_url: string };
    expect(l.claim_code).toMatch(/^ACP-/);
    expect(l.claim_url).toBe(`http://admin.localhost:${started.port}/claim`);
    const token = (JSON.parse(readFileSync(saved, "utf8")) as { token: string }).token;
    expect(stderr()).toContain('"action":"faq.publish"');
    expect(stderr()).not.toContain(token);
    expect(stderr()).not.toContain(l.claim_code);
  });

  it("create-faq makes a draft and a single-use preview link", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-claim-"));
    const { ctx } = context(home);
    const started = await serveClaim(ctx, { port: "0", difficulty: "8", db: join(home, "state.db") });
    server = started.server;
    const r = await runCli(
      ["claim", "create-faq", "--provider", `http://api.localhost:${started.port}`, "--file", "-"],
      {
        env: { ACP_HOME: home, HOME: home },
        stdin: JSON.stringify(FAQ),
      },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        `preview \\(single use, until .*\\): http://preview\\.localhost:${started.port}/exchange\\?code=acp_exch_`,
      ),
    );
  });

  it("bad input: invalid FAQ is exit 4 with the provider's message; unknown saved sandbox and bad flags are clear errors", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-claim-"));
    const { ctx } = context(home);
    const started = await serveClaim(ctx, { port: "0", difficulty: "8", db: join(home, "state.db") });
    server = started.server;
    const env = { ACP_HOME: home, HOME: home };
    const bad = await runCli(
      ["claim", "publish", "--provider", `http://api.localhost:${started.port}`, "--file", "-"],
      {
        env,
        stdin: JSON.stringify({ title: "x", questions: [{ question: "q", answer: "<svg onload=alert(1)>" }] }),
      },
    );
    expect(bad.code).toBe(4);
    expect(bad.stderr).toContain("svg is not allowed");
    const missing = await runCli(["claim", "link", "sbx_AAAAAAAAAAAAAAAAAAAAAA"], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no saved sandbox `sbx_AAAAAAAAAAAAAAAAAAAAAA`");
    const notJson = await runCli(["claim", "publish", "--provider", "http://api.localhost:1", "--file", "-"], {
      env,
      stdin: "{",
    });
    expect(notJson.code).toBe(4);
    await expect(serveClaim(ctx, { port: "70000" })).rejects.toThrow(
      "--port: `70000` is not an integer from 0 to 65535",
    );
  });

  it("--help teaches with examples", async () => {
    const r = await runCli(["claim", "serve", "--help"]);
    expect(r.stdout).toContain("acp claim serve --port 8080");
    expect(r.stdout).toContain("admin.localhost:8080/claim");
  });
});
