import { spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { freshHome, serveFailure, startServe } from "./serve-fixture.js";

const sealedRoot = tempRoot("serve-sealed");
afterAll(sealedRoot.cleanup);

describe("acp serve", () => {
  it("listens, prints a one-time console link, and `acp console-link` prints a fresh one", async () => {
    const home = freshHome();
    const serve = startServe(home, ["--port", "0"]);
    const ready = await serve.ready;
    expect((await fetch(`${ready.url}/healthz`)).status).toBe(200);
    expect(serve.output().stdout).toContain(ready.consoleLink);
    expect(serve.output().stderr).toContain("no keys in $ACP_HOME");
    expect(existsSync(join(home, "serve.json"))).toBe(true);

    const link = await runCli(["console-link"], { env: { HOME: "/nonexistent", ACP_HOME: home }, now: new Date() });
    expect(link.code).toBe(0);
    const fresh = link.stdout.trim();
    expect(fresh.startsWith(`${ready.url}/console/login?token=`)).toBe(true);
    expect(fresh).not.toBe(ready.consoleLink);
    const token = new URL(fresh).searchParams.get("token") ?? "";
    const signIn = (): Promise<Response> =>
      fetch(`${ready.url}/console/login`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token }).toString(),
        redirect: "manual",
      });
    const first = await signIn();
    expect(first.status).toBe(303);
    const cookie = first.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toMatch(/Secure/);
    expect((await signIn()).status).toBe(401);

    serve.stop();
    await serve.done;
    expect(existsSync(join(home, "serve.json"))).toBe(false);
  });

  it("refuses to bind beyond loopback without a bearer token", async () => {
    const home = freshHome();
    const serve = startServe(home, ["--port", "0", "--bind", "0.0.0.0"]);
    await expect(serve.done).rejects.toThrow(/beyond loopback/);
  });

  it("refuses a short or unsendable ACP_BRIDGE_TOKEN before it listens (exit 4), without echoing it", async () => {
    for (const [token, message] of [
      ["hunter2", /ACP_BRIDGE_TOKEN is too short \(7 characters\).*at least 16.*openssl rand -hex 32/],
      ["a token with spaces in it", /ACP_BRIDGE_TOKEN has characters a client cannot send/],
    ] as const) {
      const home = freshHome();
      const err = await serveFailure(home, ["--port", "0"], { ACP_BRIDGE_TOKEN: token });
      expect(err?.message).toMatch(message);
      expect(err?.message).not.toContain(token);
      expect(err?.exitCode).toBe(4);
      expect(existsSync(join(home, "serve.json"))).toBe(false);
    }
  });

  it("answers the API with the token from ACP_BRIDGE_TOKEN", async () => {
    const home = freshHome();
    const serve = startServe(home, ["--port", "0"], { ACP_BRIDGE_TOKEN: "cli-token-0123456789abcdef" });
    const ready = await serve.ready;
    const call = (token: string): Promise<Response> =>
      fetch(`${ready.url}/v1/decide`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ tool: "read_file", arguments: {} }),
      });
    expect((await call("cli-token-0123456789abcdef")).status).toBe(200);
    expect((await call("wrong")).status).toBe(401);
    serve.stop();
    await serve.done;
  });
});

describe("acp serve: a request's annotations are the caller's claim", () => {
  it("cannot loosen a decision (readOnlyHint on run_migration), only tighten one (destructiveHint on read_file)", async () => {
    const home = freshHome();
    const serve = startServe(home, ["--port", "0"], { ACP_BRIDGE_TOKEN: "cli-token-0123456789abcdef" });
    try {
      const ready = await serve.ready;
      const route = async (body: unknown): Promise<unknown> => {
        const res = await fetch(`${ready.url}/v1/decide`, {
          method: "POST",
          headers: { authorization: "Bearer cli-token-0123456789abcdef", "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        return ((await res.json()) as { route?: unknown }).route;
      };
      // the starter policy asks before run_migration (write); a readOnlyHint the caller adds was read as the
      // server's word and accepted by allow-reads
      expect(await route({ tool: "run_migration", arguments: {} })).toBe("ask");
      expect(await route({ tool: "run_migration", arguments: {}, annotations: { readOnlyHint: true } })).toBe("ask");
      expect(await route({ tool: "read_file", arguments: {} })).toBe("accept");
      expect(await route({ tool: "read_file", arguments: {}, annotations: { destructiveHint: true } })).not.toBe(
        "accept",
      );
    } finally {
      serve.stop();
      await serve.done;
    }
  });
});

describe("acp serve: the agents' token asks, only the approvers' token answers", () => {
  const AGENT = "cli-agent-token-0123456789";
  const APPROVER = "cli-approver-token-0123456789";

  /** A `write_file` call waiting for a person (the starter policy asks), and its consent request's id. */
  async function waitingWrite(url: string): Promise<{ id: string; call: Promise<Response> }> {
    const call = fetch(`${url}/v1/decide?wait=true`, {
      method: "POST",
      headers: { authorization: `Bearer ${AGENT}`, "content-type": "application/json" },
      body: JSON.stringify({ tool: "write_file", arguments: { path: "/tmp/x" } }),
    });
    for (;;) {
      const res = await fetch(`${url}/v1/consent?status=pending`, { headers: { authorization: `Bearer ${AGENT}` } });
      const { requests } = (await res.json()) as { requests: { id: string }[] };
      if (requests[0] !== undefined) return { id: requests[0].id, call };
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  function answer(url: string, id: string, token: string): Promise<Response> {
    return fetch(`${url}/v1/consent/${id}/response`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ decision: "denied", reason: "checked" }),
    });
  }

  it("takes ACP_APPROVER_TOKEN for answers and refuses ACP_BRIDGE_TOKEN there (403)", async () => {
    const home = freshHome();
    const serve = startServe(home, ["--port", "0"], { ACP_BRIDGE_TOKEN: AGENT, ACP_APPROVER_TOKEN: APPROVER });
    const ready = await serve.ready;
    const { id, call } = await waitingWrite(ready.url);
    const self = await answer(ready.url, id, AGENT);
    expect(self.status).toBe(403);
    expect(((await self.json()) as { error: { code: string } }).error.code).toBe("approver_token_required");
    expect((await answer(ready.url, id, APPROVER)).status).toBe(200);
    expect(((await (await call).json()) as { route: string }).route).toBe("refuse");
    expect(serve.output().stderr).not.toContain("no approvers' token");
    serve.stop();
    await serve.done;
  });

  it("without an approvers' token says where consent is answered, and the API answers nothing", async () => {
    const home = freshHome();
    const serve = startServe(home, ["--port", "0"], { ACP_BRIDGE_TOKEN: AGENT });
    const ready = await serve.ready;
    expect(serve.output().stderr).toContain(
      "no approvers' token (ACP_APPROVER_TOKEN) configured: consent is answered in the console, with acp approve or a channel",
    );
    const { id, call } = await waitingWrite(ready.url);
    const res = await answer(ready.url, id, AGENT);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("consent_api_token_required");
    serve.stop();
    await serve.done;
    await call.catch(() => undefined);
  });

  it("refuses one token for both, or an approvers' token it would not take, before it listens (exit 4), unechoed", async () => {
    for (const [env, message] of [
      [
        { ACP_BRIDGE_TOKEN: AGENT, ACP_APPROVER_TOKEN: AGENT },
        /is an agents' token: give approvers a token of their own/,
      ],
      [{ ACP_APPROVER_TOKEN: "hunter2" }, /ACP_APPROVER_TOKEN is too short \(7 characters\)/],
    ] as const) {
      const home = freshHome();
      const err = await serveFailure(home, ["--port", "0"], env);
      expect(err?.message).toMatch(message);
      expect(err?.message).not.toContain(env.ACP_APPROVER_TOKEN);
      expect(err?.exitCode).toBe(4);
      expect(existsSync(join(home, "serve.json"))).toBe(false);
    }
  });

  it("reads both tokens sealed in config.yml (acp config set-secret)", async () => {
    const { home } = fixtureHome(sealedRoot.dir);
    for (const [key, value] of [
      ["serve.bearer_token", AGENT],
      ["serve.approver_token", APPROVER],
    ] as const) {
      const sealed = await runCli(["config", "set-secret", key], { env: envFor(home), stdin: `${value}\n` });
      expect(sealed.code, sealed.stderr).toBe(0);
    }
    const serve = startServe(home, ["--port", "0"], envFor(home));
    const ready = await serve.ready;
    const { id, call } = await waitingWrite(ready.url);
    expect((await answer(ready.url, id, AGENT)).status).toBe(403);
    expect((await answer(ready.url, id, APPROVER)).status).toBe(200);
    await call;
    serve.stop();
    await serve.done;
    const doctor = await runCli(["doctor"], { env: envFor(home) });
    expect(doctor.stdout).toContain("approvers' token sealed in config.yml");
  });
});

describe("acp serve: agents' tokens that name their agent (serve.agent_tokens)", () => {
  it("reads each sealed token; a request made with one is recorded under its agent", async () => {
    const { home } = fixtureHome(sealedRoot.dir);
    const short = await runCli(["config", "set-secret", "serve.agent_tokens.ci_bot"], {
      env: envFor(home),
      stdin: "short\n",
    });
    expect(short.code).toBe(4);
    for (const [name, value] of [
      ["agent_tokens.ci_bot", "ci-bot-token-0123456789abcdef"],
      ["agent_tokens.support", "support-token-0123456789abcdef"],
      ["approver_tokens.pager", "pager-token-0123456789abcdef"],
    ] as const) {
      const sealed = await runCli(["config", "set-secret", `serve.${name}`], {
        env: envFor(home),
        stdin: `${value}\n`,
      });
      expect(sealed.code, sealed.stderr).toBe(0);
    }
    expect(readFileSync(join(home, "config.yml"), "utf8")).not.toContain("ci-bot-token-0123456789abcdef");
    // named tokens alone close the API: it may listen beyond loopback
    const serve = startServe(home, ["--port", "0", "--bind", "0.0.0.0", "--insecure-plain-http"], envFor(home));
    const ready = await serve.ready;
    const local = ready.url.replace("0.0.0.0", "127.0.0.1");
    const decide = (token: string, body: unknown): Promise<Response> =>
      fetch(`${local}/v1/decide`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect((await decide("ci-bot-token-0123456789abcdef", { tool: "read_named", arguments: {} })).status).toBe(200);
    const claimed = await decide("support-token-0123456789abcdef", {
      tool: "read_named",
      arguments: {},
      agent: "ci_bot",
    });
    expect(claimed.status).toBe(403);
    expect((await fetch(`${local}/v1/audit?limit=1`)).status).toBe(401);
    // the named approver answers; the audit names it
    const waiting = fetch(`${local}/v1/decide?wait=true`, {
      method: "POST",
      headers: { authorization: "Bearer ci-bot-token-0123456789abcdef", "content-type": "application/json" },
      body: JSON.stringify({ tool: "write_file", arguments: { path: "/tmp/named" } }),
    });
    const pager = { authorization: "Bearer pager-token-0123456789abcdef", "content-type": "application/json" };
    const id = await vi.waitFor(
      async () => {
        const list = (await (await fetch(`${local}/v1/consent?status=pending`, { headers: pager })).json()) as {
          requests: { id: string }[];
        };
        if (list.requests[0] === undefined) throw new Error("not yet");
        return list.requests[0].id;
      },
      { timeout: 10_000, interval: 20 },
    );
    const answered = await fetch(`${local}/v1/consent/${id}/response`, {
      method: "POST",
      headers: pager,
      body: JSON.stringify({ decision: "approved" }),
    });
    expect(answered.status).toBe(200);
    expect(((await (await waiting).json()) as { route: string }).route).toBe("accept");
    serve.stop();
    await serve.done;
    const audit = readFileSync(join(home, "audit.jsonl"), "utf8");
    expect(audit).toContain('"agent":"ci_bot"');
    const doctor = await runCli(["doctor", "--json"], { env: envFor(home) });
    expect(doctor.stdout).toContain("agents' tokens of ci_bot, support, approvers' tokens of pager");
    expect(audit).toContain('"id":"api:pager"');
    expect(doctor.stdout).not.toContain("ci-bot-token-0123456789abcdef");
    expect(audit).not.toContain("support-token");
  });

  it("stops (exit 4) on a bad agent name or a plain token, and doctor names a plain one", async () => {
    const home = freshHome();
    writeFileSync(join(home, "config.yml"), 'version: "1"\nserve:\n  agent_tokens:\n    "CI Bot": "x"\n');
    const bad = startServe(home, ["--port", "0"]);
    const badErr = (await bad.done.then(
      () => null,
      (e: unknown) => e,
    )) as { message: string; exitCode?: number } | null;
    expect(badErr?.message).toMatch(/`serve\.agent_tokens\.CI Bot`: an agent name is lowercase letters/);
    expect(badErr?.exitCode).toBe(4);
    const { home: keyed } = fixtureHome(sealedRoot.dir);
    writeFileSync(
      join(keyed, "config.yml"),
      'version: "1"\nserve:\n  agent_tokens:\n    ci_bot: "plain-token-0123456789abcdef"\n',
    );
    const plain = startServe(keyed, ["--port", "0"], envFor(keyed));
    const plainErr = (await plain.done.then(
      () => null,
      (e: unknown) => e,
    )) as { message: string; exitCode?: number } | null;
    expect(plainErr?.message).toMatch(/serve\.agent_tokens\.ci_bot/);
    expect(plainErr?.message).not.toContain("plain-token-0123456789abcdef");
    expect(plainErr?.exitCode).toBe(4);
    const doctor = await runCli(["doctor", "--json"], { env: envFor(keyed) });
    expect(doctor.stdout).toContain("plain secret in `serve.agent_tokens.ci_bot`");
    expect(doctor.stdout).not.toContain("plain-token-0123456789abcdef");
  });
});

describe("acp serve --public-url (behind a reverse proxy)", () => {
  it("makes the printed link and acp console-link with the public URL, and records it in serve.json", async () => {
    const home = freshHome();
    const serve = startServe(home, ["--port", "0", "--public-url", "https://acp.example.test/"]);
    const ready = await serve.ready;
    expect(ready.consoleLink.startsWith("https://acp.example.test/console/login?token=")).toBe(true);
    expect(serve.output().stdout).toContain("acp serve: public URL https://acp.example.test\n");
    expect(serve.output().stderr).toContain(
      "TLS ends in front of this service (public URL https://acp.example.test): keep the hop from the proxy to 127.0.0.1",
    );
    const state = JSON.parse(readFileSync(join(home, "serve.json"), "utf8")) as { url: string; public_url?: string };
    expect(state.public_url).toBe("https://acp.example.test");
    expect(state.url).toBe(ready.url);
    const link = await runCli(["console-link", "--json"], {
      env: { HOME: "/nonexistent", ACP_HOME: home, USER: "alice" },
      now: new Date(),
    });
    expect(link.code, link.stderr).toBe(0);
    expect((JSON.parse(link.stdout) as { url: string }).url).toMatch(
      /^https:\/\/acp\.example\.test\/console\/login\?token=/,
    );
    // the service answers a request addressed to the public host (what the proxy forwards)
    const res = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${ready.url}/readyz`, { headers: { host: "acp.example.test" } }, (r) => {
        r.resume();
        resolve(r.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    expect(res).toBe(200);
    serve.stop();
    await serve.done;
  });

  it("takes serve.public_url from config.yml, and --json prints it", async () => {
    const home = freshHome();
    writeFileSync(join(home, "config.yml"), 'version: "1"\nserve:\n  public_url: "http://acp.internal:8080"\n');
    const serve = startServe(home, ["--port", "0", "--json"]);
    const ready = await serve.ready;
    const printed = JSON.parse(serve.output().stdout) as { public_url: string | null; console_link: string };
    expect(printed.public_url).toBe("http://acp.internal:8080");
    expect(printed.console_link).toBe(ready.consoleLink);
    expect(ready.consoleLink.startsWith("http://acp.internal:8080/console/login?token=")).toBe(true);
    serve.stop();
    await serve.done;
  });

  it("refuses a public URL that is not an origin: the flag exit 2, config.yml exit 4, before it listens", async () => {
    const home = freshHome();
    const flag = startServe(home, ["--port", "0", "--public-url", "https://acp.example.test/acp"]);
    const flagErr = (await flag.done.then(
      () => null,
      (e: unknown) => e,
    )) as { message: string; exitCode?: number } | null;
    expect(flagErr?.message).toMatch(/--public-url: .*path, query or fragment/);
    expect(flagErr?.exitCode).toBe(2);
    writeFileSync(join(home, "config.yml"), 'version: "1"\nserve:\n  public_url: "ftp://acp.example.test"\n');
    const config = startServe(home, ["--port", "0"]);
    const configErr = (await config.done.then(
      () => null,
      (e: unknown) => e,
    )) as { message: string; exitCode?: number } | null;
    expect(configErr?.message).toMatch(/serve\.public_url: .*not an http:\/\/ or https:\/\/ URL/);
    expect(configErr?.exitCode).toBe(4);
    expect(existsSync(join(home, "serve.json"))).toBe(false);
  });
});

describe("acp serve: help and errors a platform team can act on", () => {
  it("--help says how to unlock the keys, make a token, which config keys and limits apply, and the exit codes", async () => {
    const out = await runCli(["serve", "--help"], { env: { HOME: "/nonexistent" } });
    expect(out.code).toBe(0);
    for (const text of [
      "ACP_PASSPHRASE",
      "openssl rand -hex 32",
      "acp config set-secret serve.bearer_token",
      "serve.port",
      "serve.bind",
      "serve.decision_audit",
      "1 MiB",
      "Exit codes:",
    ]) {
      expect(out.stdout).toContain(text);
    }
  });

  it("stops (exit 4) on an unknown key or a bad value in config.yml's serve: or storage: section, before it listens", async () => {
    const home = freshHome();
    writeFileSync(join(home, "config.yml"), 'version: "1"\nserve:\n  prot: 9000\n  decision_audit: later\n');
    const err = await serveFailure(home, ["--port", "0"]);
    expect(err?.exitCode).toBe(4);
    expect(err?.message).toContain("config.yml: serve.prot: unknown key (did you mean `serve.port`?)");
    expect(err?.message).toContain("serve.decision_audit: unknown value `later` (expected queued or durable)");
    expect(existsSync(join(home, "serve.json"))).toBe(false);
  });

  it("stops (exit 4) on a misspelt top-level key of config.yml, as acp proxy does", async () => {
    const home = freshHome();
    writeFileSync(join(home, "config.yml"), 'version: "1"\nredactoin:\n  keys: ["*token*"]\nserve:\n  port: 0\n');
    const err = await serveFailure(home, ["--port", "0"]);
    expect(err?.exitCode).toBe(4);
    expect(err?.message).toContain(
      `${join(home, "config.yml")}:3:3: unknown key \`redactoin\` (did you mean \`redaction\`?)`,
    );
    expect(existsSync(join(home, "serve.json"))).toBe(false);
  });

  it("listens on config.yml's serve.port and serve.bind (as checked by the same code acp doctor runs); --port wins", async () => {
    const free = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const home = freshHome();
    writeFileSync(
      join(home, "config.yml"),
      `version: "1"\nserve:\n  port: ${free}\n  bind: "127.0.0.1"\n  decision_audit: durable\n`,
    );
    const fromConfig = startServe(home, []);
    const ready = await fromConfig.ready;
    expect(new URL(ready.url).port).toBe(String(free));
    expect(new URL(ready.url).hostname).toBe("127.0.0.1");
    expect((await fetch(`${ready.url}/healthz`)).status).toBe(200);
    fromConfig.stop();
    await fromConfig.done;
    const flagged = startServe(home, ["--port", "0"]);
    expect(new URL((await flagged.ready).url).port).not.toBe(String(free));
    flagged.stop();
    await flagged.done;
  });

  it("names the TLS file it cannot read, and says what to do when the port is taken", async () => {
    const home = freshHome();
    const tls = startServe(home, ["--port", "0", "--tls-cert", "missing-cert.pem", "--tls-key", "missing-key.pem"]);
    await expect(tls.done).rejects.toThrow(/missing-cert\.pem.*ENOENT/);
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = String((taken.address() as { port: number }).port);
    try {
      const serve = startServe(freshHome(), ["--port", port]);
      await expect(serve.done).rejects.toThrow(/already in use.*--port/);
    } finally {
      taken.close();
    }
  });
});

describe("acp serve beyond loopback", () => {
  it("warns when it serves beyond loopback without TLS (token, links and cookies in clear text)", async () => {
    const home = freshHome();
    const serve = startServe(home, ["--port", "0", "--bind", "0.0.0.0", "--insecure-plain-http"], {
      ACP_BRIDGE_TOKEN: "cli-token-0123456789abcdef",
    });
    await serve.ready;
    serve.stop();
    await serve.done;
    expect(serve.output().stderr).toContain("without TLS");
    expect(serve.output().stderr).toContain("--tls-cert");
    const local = startServe(freshHome(), ["--port", "0"]);
    await local.ready;
    local.stop();
    await local.done;
    expect(local.output().stderr).not.toContain("without TLS");
  });
});

describe("acp console-link", () => {
  it("exits 1 when the service recorded in serve.json is no longer running (killed, not stopped)", async () => {
    const home = freshHome();
    const gone = spawnSync(process.execPath, ["-e", ""]).pid; // a process that has exited
    writeFileSync(
      join(home, "serve.json"),
      JSON.stringify({ url: "http://127.0.0.1:1", pid: gone, started_at: "2026-01-15T11:00:00Z", storage: "sqlite" }),
    );
    const out = await runCli(["console-link"], { env: { HOME: "/nonexistent", ACP_HOME: home } });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`pid ${gone}`);
    expect(out.stderr).toContain("is not running");
    expect(out.stdout).toBe("");
  });

  it("exits 1 when no service runs in the home", async () => {
    const home = freshHome();
    const out = await runCli(["console-link"], { env: { HOME: "/nonexistent", ACP_HOME: home } });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("no running `acp serve`");
  });
});
