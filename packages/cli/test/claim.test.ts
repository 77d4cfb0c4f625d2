import { request } from "node:http";
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
    // an id that names no saved sandbox is invalid input, as an unknown id is for `acp approve`
    expect(missing.code).toBe(4);
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

  it("publish without --provider, or with a --sandbox that is no sandbox id, is a usage error (exit 2), as create-faq and link", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-claim-"));
    const env = { ACP_HOME: home, HOME: home };
    const faq = JSON.stringify({ title: "x", questions: [] });
    for (const command of ["publish", "create-faq"]) {
      const out = await runCli(["claim", command, "--file", "-"], { env, stdin: faq });
      expect(out).toMatchObject({
        code: 2,
        stderr:
          "acp: missing --provider URL (the API origin, e.g. http://api.localhost:8080), or set ACP_CLAIM_PROVIDER\n",
      });
    }
    const bad = await runCli(["claim", "publish", "--sandbox", "nope", "--file", "-"], { env, stdin: faq });
    expect(bad).toMatchObject({ code: 2, stderr: "acp: `nope` is not a sandbox id (sbx_…)\n" });
    expect((await runCli(["claim", "link", "nope"], { env })).code).toBe(2);
  });

  it("--help teaches with examples", async () => {
    const r = await runCli(["claim", "serve", "--help"]);
    expect(r.stdout).toContain("acp claim serve --port 8080");
    expect(r.stdout).toContain("admin.localhost:8080/claim");
  });

  it("issuer keygen + issue, serve --admission issuer-required: publish with --admission-token works, without one the provider refuses (exit 3)", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-claim-"));
    const env = { ACP_HOME: home, HOME: home };
    const kg = await runCli(["claim", "issuer", "keygen", "--json"], { env });
    expect(kg.code).toBe(0);
    const k = JSON.parse(kg.stdout) as { kid: string; public_key: string; key_file: string };
    expect(statSync(k.key_file).mode & 0o777).toBe(0o600);
    expect((await runCli(["claim", "issuer", "keygen"], { env })).code).toBe(2); // no silent overwrite
    writeFileSync(
      join(home, "claim", "config.yml"),
      `admission:\n  issuers:\n    - kid: ${k.kid}\n      public_key: ${k.public_key}\n      name: test\n`,
    );
    const { ctx } = context(home);
    const started = await serveClaim(ctx, {
      port: "0",
      difficulty: "8",
      db: join(home, "state.db"),
      admission: "issuer-required",
    });
    server = started.server;
    expect(started.server.admissionMode).toBe("issuer-required");
    const provider = `http://api.localhost:${started.port}`;
    const tokenFile = join(home, "agent.token");
    const issued = await runCli(
      ["claim", "issuer", "issue", "--subject", "agent-42", "--audience", provider, "--out", tokenFile, "--json"],
      { env, now: new Date() },
    );
    expect(issued.code).toBe(0);
    expect(JSON.parse(issued.stdout)).toMatchObject({ kid: k.kid, subject: "agent-42", uses: 1 });
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    writeFileSync(join(home, "faq.json"), JSON.stringify(FAQ));
    const args = ["claim", "publish", "--provider", provider, "--file", join(home, "faq.json"), "--json"];
    const ok = await runCli([...args, "--admission-token", tokenFile], { env });
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    const reused = await runCli([...args, "--admission-token", tokenFile], { env });
    expect(reused.code).toBe(3);
    const none = await runCli(args, { env });
    expect(none.code).toBe(3);
    expect(none.stderr).toContain("claim provider: provider admits only agents with an admission token");
    const viaEnv = await runCli(["claim", "issuer", "issue", "--subject", "agent-43", "--audience", provider], {
      env,
      now: new Date(),
    });
    const fromEnv = await runCli(args, { env: { ...env, ACP_CLAIM_ADMISSION_TOKEN: viaEnv.stdout.trim() } });
    expect(fromEnv.code).toBe(0);
  });

  it("claim config and issuer flags: every config problem is exit 4 naming the key; bad modes and flags are usage errors", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-claim-"));
    const env = { ACP_HOME: home, HOME: home };
    const { ctx } = context(home);
    const cfg = join(home, "claim.yml");
    writeFileSync(cfg, "admission:\n  mode: open\n  issuers:\n    - kid: k1\n      public_key: nope\n  colour: red\n");
    const err = await serveClaim(ctx, { port: "0", config: cfg }).catch((e: Error & { code?: number }) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain('admission.mode: unknown mode `"open"`');
    expect((err as Error).message).toContain("admission.issuers[0].public_key");
    expect((err as Error).message).toContain("admission.colour: unknown key `colour`");
    await expect(serveClaim(ctx, { port: "0", admission: "anything" })).rejects.toThrow("--admission: unknown mode");
    await expect(serveClaim(ctx, { port: "0", admission: "issuer-required" })).rejects.toThrow(
      "needs a trusted issuer",
    );
    const noKey = await runCli(["claim", "issuer", "issue", "--subject", "a", "--audience", "http://x"], { env });
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toContain("acp claim issuer keygen");
    const badTtl = await runCli(
      ["claim", "issuer", "issue", "--subject", "a", "--audience", "http://x", "--ttl", "forever"],
      { env },
    );
    expect(badTtl.code).toBe(2);
    const badAud = await runCli(["claim", "issuer", "issue", "--subject", "a", "--audience", "x"], { env });
    expect(badAud.code).toBe(2);
    const help = await runCli(["claim", "issuer", "issue", "--help"]);
    expect(help.stdout).toContain("--admission-token agent-42.token");
  });

  it("takedown and reputation: the operator takes a published FAQ down while the provider runs, then reads and resets the creator's score; bad targets are clear errors", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-claim-"));
    const { ctx } = context(home);
    const dbPath = join(home, "state.db");
    const started = await serveClaim(ctx, { port: "0", difficulty: "8", db: dbPath });
    server = started.server;
    const env = { ACP_HOME: home, HOME: home };
    writeFileSync(join(home, "faq.json"), JSON.stringify(FAQ));
    const pub = await runCli(
      [
        "claim",
        "publish",
        "--provider",
        `http://api.localhost:${started.port}`,
        "--file",
        join(home, "faq.json"),
        "--json",
      ],
      { env },
    );
    const url = (JSON.parse(pub.stdout) as { published_url: string }).published_url;
    const host = new URL(url).host;
    expect((await get(started.port, host, "/widget-faq")).status).toBe(200);
    const down = await runCli(["claim", "takedown", url, "--db", dbPath, "--json"], { env, now: new Date() });
    expect(down.stderr).toBe("");
    expect(down.code).toBe(0);
    expect(JSON.parse(down.stdout)).toMatchObject({ state: "deleted", reputation_charged: true });
    expect((await get(started.port, host, "/widget-faq")).status).toBe(404);
    const again = await runCli(["claim", "takedown", url, "--db", dbPath], { env, now: new Date() });
    expect(again.code).toBe(3);
    expect(again.stderr).toContain("no published sandbox behind that handle");
    const bad = await runCli(["claim", "takedown", "https://example.com/"], { env });
    expect(bad.code).toBe(2);

    // The creator's range was charged as for flagged content; the operator can read and reset it.
    const rep = await runCli(["claim", "reputation", "127.0.0.1", "--db", dbPath, "--json"], { env, now: new Date() });
    expect(rep.code).toBe(0);
    expect(JSON.parse(rep.stdout)).toEqual({
      sources: [{ key: "range:127.0.0.0/24", score: 30, extra_bits: 2, refused_for_seconds: 0 }],
    });
    const reset = await runCli(["claim", "reputation", "127.0.0.0/24", "--reset", "--db", dbPath], { env });
    expect(reset.stdout).toContain("1 score removed");
    const after = await runCli(["claim", "reputation", "range:127.0.0.0/24", "--db", dbPath], { env });
    expect(after.stdout.trim()).toBe("range:127.0.0.0/24: score 0, +0 bits");
    expect((await runCli(["claim", "reputation", "nonsense", "--db", dbPath], { env })).code).toBe(2);
  });
});

describe("acp claim serve host flags", () => {
  it("--api-host/--admin-host/--preview-host/--preview-admin-host/--pub-suffix route each surface by its configured name", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-claim-"));
    const { ctx } = context(home);
    const started = await serveClaim(ctx, {
      port: "0",
      db: join(home, "state.db"),
      apiHost: "api.example.com",
      adminHost: "admin.example.com",
      previewHost: "preview.example.net",
      previewAdminHost: "preview-admin.example.net",
      pubSuffix: "faq.example.net",
    });
    server = started.server;
    const port = started.port;
    expect((await get(port, `api.example.com:${port}`, "/.well-known/agent-access")).status).toBe(200);
    expect((await get(port, `admin.example.com:${port}`, "/claim")).status).toBe(200);
    expect((await get(port, `api.localhost:${port}`, "/.well-known/agent-access")).status).toBe(404);
    expect((await get(port, `admin.localhost:${port}`, "/claim")).status).toBe(404);
  });
});

/** GET `path` from the provider on 127.0.0.1 with a Host header (published origins are `{handle}.pub.localhost`). */
function get(port: number, host: string, path: string): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const r = request({ host: "127.0.0.1", port, path, headers: { host } }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0 }));
    });
    r.on("error", reject);
    r.end();
  });
}
