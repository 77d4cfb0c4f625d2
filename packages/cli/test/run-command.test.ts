/**
 * `acp run` in-process with a scripted wiring (accept-all decide, a recording broker and audit): the level is
 * reported and audited, `none` warns, an MCP SDK client inside calls tools over HTTP and stdio, the exit
 * status passes through, and bad input stops with the cause and the fix.
 */
import { EventEmitter } from "node:events";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Command, CommanderError } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Decision } from "@acp/core";
import type { ConsentAsk, IsolationProbe } from "@acp/proxy";
import type { CliContext } from "../src/context.js";
import { CliError } from "../src/exit-codes.js";
import { registerRun } from "../src/commands/run.js";
import { createProxyWiring } from "../src/wiring/proxy-wiring.js";
import type { ProxyWiring } from "../src/commands/proxy.js";
import { scratchDir } from "../../proxy/test/sandbox/net-fixture.js";
import { envFor, fixtureHome, PASSPHRASE } from "./home-fixture.js";
import { runCli } from "./run.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");
const MCP_CLIENT = join(ROOT, "packages/proxy/test/sandbox/fixtures/mcp-client.mjs");

const ACCEPT: Decision = {
  route: "accept",
  action: "allow",
  rule: "policy:allow-all",
  category: "read",
  risk_level: "low",
  reasons: [],
  verdicts: [],
};

let work: { path: string; remove(): void };
beforeAll(() => void (work = scratchDir("acp-run-cli-")));
afterAll(() => work.remove());

async function acpRun(
  args: string[],
  options: {
    probe?: IsolationProbe;
    seen?: Map<string, unknown>;
    env?: Record<string, string>;
    agents?: unknown[];
  } = {},
) {
  let stderr = "";
  const audit: [string, Record<string, unknown>][] = [];
  const asks: ConsentAsk[] = [];
  const ctx: CliContext = {
    io: {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (stderr += s) },
      readStdin: () => Promise.resolve(""),
      stdinIsTTY: false,
      env: {
        PATH: process.env["PATH"] ?? "",
        HOME: work.path,
        ACP_HOME: join(work.path, "home"),
        ACP_PASSPHRASE: "pw-123456",
        ...options.env,
      },
      cwd: work.path,
      now: () => new Date(),
    },
    exitCode: 0,
  };
  // what each wiring part was given as the config in use
  const saw = (part: string, given: { config?: unknown }): void => void options.seen?.set(part, given.config);
  const wiring: ProxyWiring = {
    createDecide: (o) => (saw("decide", o), () => Promise.resolve(ACCEPT)),
    createBroker: (o) => (
      saw("broker", o),
      options.agents?.push(o.agent),
      { ask: (a) => (asks.push(a), Promise.resolve({ kind: "expired" })) }
    ),
    createAudit: (o) => (saw("audit", o), { record: (type, fields) => void audit.push([type, fields]) }),
    createCredentials: (o) => (saw("credentials", o), undefined),
    createObserver: (o) => (saw("observer", o), undefined),
    createPlans: (o) => (saw("plans", o), undefined),
    // the home's secrets as the real wiring opens them (its key, from ACP_PASSPHRASE)
    createSecretValues: async (o) => {
      const real = createProxyWiring(ctx);
      try {
        return await (real.createSecretValues?.(o) ?? Promise.resolve({ values: [] }));
      } finally {
        await real.close();
      }
    },
  };
  const program = new Command("acp")
    .exitOverride()
    .configureOutput({ writeErr: (s) => (stderr += s), writeOut: () => undefined });
  registerRun(program, ctx, {
    wiring,
    signals: new EventEmitter(),
    ...(options.probe ? { probe: options.probe } : {}),
  });
  program.commands.forEach((c) => c.exitOverride().configureOutput({ writeErr: (s) => (stderr += s) }));
  let code: number;
  try {
    await program.parseAsync(["run", ...args], { from: "user" });
    code = ctx.exitCode;
  } catch (err) {
    if (err instanceof CliError) {
      stderr += `acp: ${err.message}\n`;
      code = err.exitCode;
    } else if (err instanceof CommanderError) code = 2;
    else throw err;
  }
  return { code, stderr, audit, asks };
}

describe("acp run", () => {
  it("isolation none warns loudly and exits with the agent's status", async () => {
    const r = await acpRun(["--isolation", "none", "--", "sh", "-c", "exit 5"]);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain("WARNING: the agent runs WITHOUT A SANDBOX");
    expect(r.audit[0]).toEqual(["sandbox_started", expect.objectContaining({ isolation: "none" })]);
  });

  it("auto picks the strongest level (netns as root), says so and audits it; MCP over HTTP works inside", async () => {
    const out = join(work.path, "http.json");
    const r = await acpRun(["-u", EVERYTHING, "--", process.execPath, MCP_CLIENT, out, "http"]);
    expect(r.stderr).toContain("isolation netns (picked by --isolation auto)");
    expect(r.code).toBe(0);
    expect(r.audit.find(([t]) => t === "sandbox_started")?.[1]).toMatchObject({
      isolation: "netns",
      requested: "auto",
    });
    expect(r.audit.find(([t]) => t === "sandbox_exited")?.[1]).toMatchObject({ exit_code: 0 });
    const answer = JSON.parse(readFileSync(out, "utf8")) as { tools: string[]; echo: { content: { text: string }[] } };
    expect(answer.tools).toContain("echo");
    expect(answer.echo.content[0]?.text).toContain("hello over http");
  });

  it("--mcp-stdio speaks MCP on the agent's pipes under userns", async () => {
    const out = join(work.path, "stdio.json");
    const r = await acpRun([
      "--isolation",
      "userns",
      "--mcp-stdio",
      "-u",
      EVERYTHING,
      "--",
      process.execPath,
      MCP_CLIENT,
      out,
      "stdio",
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(out, "utf8"))).toMatchObject({ tools: expect.arrayContaining(["echo"]) as unknown });
  });

  it("keeps a variable holding a vault secret from the agent, whatever its name, and names the agent's command", async () => {
    const { home } = fixtureHome(work.path);
    const set = await runCli(["vault", "set", "GITHUB_TOKEN"], {
      env: envFor(home),
      stdin: "ghp_the_vault_value_42\n",
    });
    expect(set.code, set.stderr).toBe(0);
    const agents: unknown[] = [];
    const out = join(work.path, "agent-env.txt");
    const r = await acpRun(["--isolation", "none", "--", "sh", "-c", `env > ${out}`], {
      agents,
      env: { ACP_HOME: home, ACP_PASSPHRASE: PASSPHRASE, MY_GH: "ghp_the_vault_value_42", PLAIN_NOTE: "hello" },
    });
    expect(r.code, r.stderr).toBe(0);
    const env = readFileSync(out, "utf8");
    expect(env).not.toContain("ghp_the_vault_value_42");
    expect(env).toContain("PLAIN_NOTE=hello");
    expect(r.audit[0]?.[1]["env_removed"]).toContain("MY_GH");
    expect(agents).toEqual([{ id: "sh", name: "sh", command: `sh -c env > ${out}` }]);
    // without the passphrase the vault cannot be opened: said, and the run goes on
    const blind = await acpRun(["--isolation", "none", "--", "true"], {
      env: { ACP_HOME: home, ACP_PASSPHRASE: "", MY_GH: "ghp_the_vault_value_42" },
    });
    expect(blind.stderr).toMatch(
      /acp run: the home's key did not open: .*cannot be recognised and kept from the agent/,
    );
  });

  it("records the intent's digest with the start", async () => {
    // in ACP's home (covered inside), not the working directory: the agent must not be able to rewrite it
    const fs = await import("node:fs");
    fs.mkdirSync(join(work.path, "home"), { recursive: true });
    const intent = join(work.path, "home", "intent.yml");
    fs.writeFileSync(intent, 'goal: tidy the inbox\nallowed_actions: ["mail.*"]\n');
    const r = await acpRun(["--isolation", "none", "--intent", intent, "--", "true"]);
    expect(r.audit[0]?.[1]).toMatchObject({ intent_sha256: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) as unknown });
  });

  it("refuses an intent that does not validate, before anything starts (exit 4)", async () => {
    const intent = join(work.path, "bad-intent.yml");
    (await import("node:fs")).writeFileSync(intent, "goal: tidy the inbox\n");
    const r = await acpRun(["--isolation", "none", "--intent", intent, "--", "true"]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain("allowed_actions");
    expect(r.audit).toEqual([]);
  });
});

describe("acp run --config FILE", () => {
  it("hands every wiring part the config file in use, read and checked once", async () => {
    // outside the agent's working directory (work.path): acp run refuses a --config the agent could change
    const dir = scratchDir("acp-run-cli-config-");
    const file = join(dir.path, "run-config.yml");
    (await import("node:fs")).writeFileSync(file, 'version: "1"\ngraph:\n  threshold: 0.3\n');
    const seen = new Map<string, unknown>();
    const r = await acpRun(["--isolation", "none", "--config", file, "--", "true"], { seen }).finally(() =>
      dir.remove(),
    );
    expect(r.code).toBe(0);
    expect([...seen.keys()].sort()).toEqual(["audit", "broker", "credentials", "decide", "observer", "plans"]);
    const configs = new Set(seen.values());
    expect(configs.size).toBe(1);
    expect([...configs][0]).toMatchObject({ file: { path: file }, graph: { threshold: 0.3 } });
  });

  it("a FILE that does not exist: exit 1 naming it, nothing started", async () => {
    const r = await acpRun(["--isolation", "none", "--config", join(work.path, "no-such.yml"), "--", "true"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot read \`${join(work.path, "no-such.yml")}\``);
    expect(r.audit).toEqual([]);
  });
});

describe("acp run --max-cpu CPUS", () => {
  // the agent writes the quota of its own cgroup of the cpu hierarchy (cgroup v1 here)
  const quotaProbe = (out: string): string =>
    [
      'const fs = require("node:fs");',
      'const line = fs.readFileSync("/proc/self/cgroup", "utf8").split("\\n").find((l) => l.split(":")[1].split(",").includes("cpu"));',
      "fs.writeFileSync(" +
        JSON.stringify(out) +
        ', fs.readFileSync("/sys/fs/cgroup/cpu" + line.split(":")[2] + "/cpu.cfs_quota_us", "utf8").trim());',
    ].join("\n");

  it("caps the sandbox's CPU time: the agent's cgroup holds the quota, and sandbox_started records it", async () => {
    const fs = await import("node:fs");
    const out = join(work.path, "max-cpu.txt");
    const r = await acpRun(["--isolation", "netns", "--max-cpu", "0.5", "--", process.execPath, "-e", quotaProbe(out)]);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readFileSync(out, "utf8")).toBe("50000");
    expect(r.audit[0]?.[1]).toMatchObject({ max_cpu: 0.5 });
    expect(r.audit.find(([type]) => type === "sandbox_exited")?.[1]).toHaveProperty("cpu_throttled");
  });

  it("sandbox.max_cpu of the config file sets the cap; --max-cpu wins over it; a bad one stops before anything starts", async () => {
    const fs = await import("node:fs");
    const dir = scratchDir("acp-run-cli-cpu-config-");
    try {
      const file = join(dir.path, "config.yml");
      const out = join(work.path, "max-cpu-config.txt");
      fs.writeFileSync(file, 'version: "1"\nsandbox:\n  max_cpu: 1.5\n');
      const fromFile = await acpRun([
        "--isolation",
        "netns",
        "--config",
        file,
        "--",
        process.execPath,
        "-e",
        quotaProbe(out),
      ]);
      expect(fromFile.code, fromFile.stderr).toBe(0);
      expect(fs.readFileSync(out, "utf8")).toBe("150000");
      expect(fromFile.audit[0]?.[1]).toMatchObject({ max_cpu: 1.5 });
      const fromFlag = await acpRun(["--isolation", "netns", "--config", file, "--max-cpu", "0.25", "--", "true"]);
      expect(fromFlag.code, fromFlag.stderr).toBe(0);
      expect(fromFlag.audit[0]?.[1]).toMatchObject({ max_cpu: 0.25 });
      fs.writeFileSync(file, 'version: "1"\nsandbox:\n  max_cpu: 0\n');
      const bad = await acpRun(["--isolation", "netns", "--config", file, "--", "true"]);
      expect(bad.code).toBe(4);
      expect(bad.stderr).toContain(
        `${file}:3:12: \`sandbox.max_cpu\` must be a number of CPUs from 0.01 to 4096 (e.g. 1.5), not 0`,
      );
      expect(bad.audit).toEqual([]);
    } finally {
      dir.remove();
    }
  });

  it("without a cap asked for there is none: sandbox_started records null", async () => {
    const r = await acpRun(["--isolation", "netns", "--", "true"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.audit[0]?.[1]).toMatchObject({ max_cpu: null });
  });

  it("upstream flags as acp proxy takes them: a --name used twice, or a --trust naming no upstream, is exit 2, nothing started", async () => {
    // acp run renamed a --name already taken (`x` became `x-2`), so `server: x` rules matched another server
    const twice = await acpRun(["-u", EVERYTHING, "-u", EVERYTHING, "-n", "x", "-n", "x", "--", "true"]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain("upstream name `x` is used twice");
    expect(twice.audit).toEqual([]);
    const trust = await acpRun(["-u", EVERYTHING, "-n", "everything", "--trust", "evrything", "--", "true"]);
    expect(trust.code).toBe(2);
    expect(trust.stderr).toContain("--trust `evrything` names no upstream (the upstreams: `everything`;");
    expect(trust.audit).toEqual([]);
  });

  it("a --max-cpu that is not a number of CPUs from 0.01 to 4096: exit 2 naming it, nothing started", async () => {
    for (const bad of ["0", "0.001", "lots", "-1", "1/2", "5000"]) {
      const r = await acpRun(["--max-cpu", bad, "--", "true"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--max-cpu \`${bad}\` is not a number of CPUs from 0.01 to 4096`);
      expect(r.audit).toEqual([]);
    }
  });
});

describe("acp run --max-processes N", () => {
  it("caps the agent's processes: an agent starting more gets fewer, and acp says the cap was reached", async () => {
    const fs = await import("node:fs");
    const out = join(work.path, "max-processes.json");
    // 80 sleeps at once (a fork refused ends the loop's count there); synchronous calls only
    const probe = [
      'const fs = require("node:fs");',
      'const { spawn } = require("node:child_process");',
      "let started = 0;",
      'for (let i = 0; i < 80; i++) { const c = spawn("sleep", ["30"], { stdio: "ignore" }); c.on("error", () => undefined); if (c.pid !== undefined) started++; }',
      `setImmediate(() => { fs.writeFileSync(${JSON.stringify(out)}, String(started)); process.exit(0); });`,
    ].join("\n");
    const r = await acpRun(["--isolation", "netns", "--max-processes", "40", "--", process.execPath, "-e", probe]);
    expect(r.code, r.stderr).toBe(0);
    const started = Number(fs.readFileSync(out, "utf8"));
    expect(started).toBeGreaterThan(0);
    expect(started).toBeLessThan(40);
    expect(r.stderr).toContain("the agent reached its cap of 40 processes");
    expect(r.audit[0]?.[1]).toMatchObject({ max_processes: 40 });
  });

  it("sandbox.max_processes of the config file sets the cap; --max-processes wins over it", async () => {
    const fs = await import("node:fs");
    const dir = scratchDir("acp-run-cli-nproc-config-");
    try {
      const file = join(dir.path, "config.yml");
      fs.writeFileSync(file, 'version: "1"\nsandbox:\n  max_processes: 300\n');
      const fromFile = await acpRun(["--isolation", "netns", "--config", file, "--", "true"]);
      expect(fromFile.code, fromFile.stderr).toBe(0);
      expect(fromFile.audit[0]?.[1]).toMatchObject({ max_processes: 300 });
      const fromFlag = await acpRun(["--isolation", "netns", "--config", file, "--max-processes", "200", "--", "true"]);
      expect(fromFlag.code, fromFlag.stderr).toBe(0);
      expect(fromFlag.audit[0]?.[1]).toMatchObject({ max_processes: 200 });
      fs.writeFileSync(file, 'version: "1"\nsandbox:\n  max_processes: 0\n');
      const bad = await acpRun(["--isolation", "netns", "--config", file, "--", "true"]);
      expect(bad.code).toBe(4);
      expect(bad.stderr).toContain(`${file}:3:`);
      expect(bad.stderr).toContain("`sandbox.max_processes` must be a whole number of at least 1, not 0");
      expect(bad.audit).toEqual([]);
    } finally {
      dir.remove();
    }
  });

  it("a --max-processes that is not a whole number of at least 1: exit 2 naming it, nothing started", async () => {
    for (const bad of ["0", "-5", "ten", "1.5"]) {
      const r = await acpRun(["--max-processes", bad, "--", "true"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--max-processes \`${bad}\` is not a whole number of at least 1`);
      expect(r.audit).toEqual([]);
    }
  });
});

describe("acp run --max-memory SIZE", () => {
  it("sandbox.max_memory of the config file sets the memory cap; --max-memory wins over it; a bad one stops before anything starts", async () => {
    const fs = await import("node:fs");
    const dir = scratchDir("acp-run-cli-mem-config-");
    try {
      const file = join(dir.path, "config.yml");
      fs.writeFileSync(file, 'version: "1"\nsandbox:\n  max_memory: 512M\n');
      const fromFile = await acpRun(["--isolation", "netns", "--config", file, "--", "true"]);
      expect(fromFile.code, fromFile.stderr).toBe(0);
      expect(fromFile.audit[0]?.[1]).toMatchObject({ max_memory: 512 * 1024 ** 2 });
      fs.writeFileSync(file, 'version: "1"\nsandbox:\n  max_memory: 1073741824\n');
      const inBytes = await acpRun(["--isolation", "netns", "--config", file, "--", "true"]);
      expect(inBytes.audit[0]?.[1]).toMatchObject({ max_memory: 1024 ** 3 });
      const fromFlag = await acpRun(["--isolation", "netns", "--config", file, "--max-memory", "256M", "--", "true"]);
      expect(fromFlag.code, fromFlag.stderr).toBe(0);
      expect(fromFlag.audit[0]?.[1]).toMatchObject({ max_memory: 256 * 1024 ** 2 });
      fs.writeFileSync(file, 'version: "1"\nsandbox:\n  max_memory: 1M\n  max_processes: 0\n');
      const bad = await acpRun(["--isolation", "netns", "--config", file, "--", "true"]);
      expect(bad.code).toBe(4);
      expect(bad.stderr).toContain(
        `${file}:3:15: \`sandbox.max_memory\` must be a size of at least 32 MiB (bytes, or a whole number with K, M, G or T, e.g. 2G), not "1M"`,
      );
      // every problem at once
      expect(bad.stderr).toContain("`sandbox.max_processes` must be a whole number of at least 1, not 0");
      expect(bad.audit).toEqual([]);
    } finally {
      dir.remove();
    }
  });

  it("caps the sandbox's memory: an agent allocating past it is killed, and acp says so", async () => {
    // 256 MiB under a 64 MiB cap; the line is printed only when the allocation went through
    const r = await acpRun([
      "--isolation",
      "netns",
      "--max-memory",
      "64M",
      "--",
      "perl",
      "-e",
      'my $x = "a" x (256 * 1024 * 1024); print STDERR "allocated\\n";',
    ]);
    expect(r.code).toBe(137);
    expect(r.stderr).not.toContain("allocated");
    expect(r.stderr).toContain("the agent reached its memory cap of 64 MiB: the kernel killed");
    expect(r.audit[0]?.[1]).toMatchObject({ max_memory: 64 * 1024 * 1024 });
    const exited = r.audit.find(([type]) => type === "sandbox_exited")?.[1];
    expect(exited).toMatchObject({ exit_code: 137 });
    expect(exited?.["oom_kills"]).toBeGreaterThanOrEqual(1);
  });

  it("a --max-memory that is not a size of at least 32 MiB: exit 2 naming it, nothing started", async () => {
    for (const bad of ["0", "16M", "lots", "1.5G", "-1G"]) {
      const r = await acpRun(["--max-memory", bad, "--", "true"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--max-memory \`${bad}\` is not a size of at least 32 MiB`);
      expect(r.audit).toEqual([]);
    }
  });
});

describe("acp run --writable PATH", () => {
  it("under netns the agent writes in its working directory and a relative --writable, nowhere else", async () => {
    const fs = await import("node:fs");
    // a directory root owns outside the working directory (work.path) and outside /tmp
    const host = scratchDir("acp-run-cli-host-");
    const hostDir = host.path;
    fs.mkdirSync(join(work.path, "state"), { recursive: true });
    const out = join(work.path, "writable.json");
    const probe = [
      'const fs = require("node:fs");',
      "const r = {};",
      "const attempt = (k, f) => { try { f(); r[k] = 'ok'; } catch (e) { r[k] = e.code; } };",
      `attempt("host", () => fs.writeFileSync(${JSON.stringify(join(hostDir, "planted"))}, "x"));`,
      'attempt("state", () => fs.writeFileSync("state/kept", "x"));',
      `fs.writeFileSync(${JSON.stringify(out)}, JSON.stringify(r));`,
    ].join("\n");
    const r = await acpRun(["--isolation", "netns", "--writable", "state", "--", process.execPath, "-e", probe]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(fs.readFileSync(out, "utf8"))).toEqual({ host: "EROFS", state: "ok" });
    expect(fs.existsSync(join(hostDir, "planted"))).toBe(false);
    expect(r.audit[0]?.[1]).toMatchObject({ writable: [join(work.path, "state")] });
    host.remove();
  });

  it("a --writable inside ACP's home: exit 2 saying why, nothing started", async () => {
    const fs = await import("node:fs");
    fs.mkdirSync(join(work.path, "home", "keys"), { recursive: true });
    const r = await acpRun(["--writable", join(work.path, "home", "keys"), "--", "true"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`is inside ACP's home \`${join(work.path, "home")}\``);
    expect(r.stderr).toContain("policy, audit trail, keys and vault the agent must never change");
    expect(r.audit).toEqual([]);
  });

  it("a --writable that does not exist: exit 2 naming it", async () => {
    const r = await acpRun(["--writable", "no-such-dir", "--", "true"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--writable \`${join(work.path, "no-such-dir")}\` does not exist`);
  });
});

describe("acp run: bad input", () => {
  it("an unknown command: exit 2, named, nothing started", async () => {
    const r = await acpRun(["--", "no-such-agent-xyz", "--flag"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("command `no-such-agent-xyz` not found (check the spelling");
    expect(r.audit).toEqual([]);
    // looked up before the proxy starts: that line alone, no start-up lines of a proxy that would not be used
    expect(r.stderr).toBe(
      "acp: run: command `no-such-agent-xyz` not found (check the spelling, give an absolute path, or add its directory to PATH)\n",
    );
  });

  it("a bad --allow-egress: exit 2 with the expected form", async () => {
    const r = await acpRun(["--allow-egress", "example.com", "--", "true"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "--allow-egress: `example.com` is not HOST:PORT (write HOST:PORT, e.g. api.anthropic.com:443, *.openai.com:443 or 10.0.0.5:*)",
    );
    // named as the flag, not as an entry of config.yml's sandbox.allow_egress
    expect(r.stderr).not.toContain("allow_egress.");
  });

  it("an unknown isolation level is a usage error", async () => {
    expect((await acpRun(["--isolation", "chroot", "--", "true"])).code).toBe(2);
  });

  it("a kernel that refuses user namespaces: exit 1 naming the cause and the fix", async () => {
    const probe = {
      netns: { ok: false, why: "netns needs root" },
      userns: { ok: false, why: "unshare failed: Operation not permitted" },
    };
    const r = await acpRun(["--isolation", "userns", "--", "true"], { probe });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the kernel refused isolation `userns`: unshare failed: Operation not permitted");
    expect(r.stderr).toContain("--isolation none");
  });

  it("a file of ACP's home with another name (a hard link) elsewhere: exit 1 naming it and the find -samefile, nothing started", async () => {
    const fs = await import("node:fs");
    const key = join(work.path, "home", "memory.key");
    const other = join(work.path, "not-the-home.key");
    fs.mkdirSync(join(work.path, "home"), { recursive: true });
    fs.writeFileSync(key, "secret\n", { mode: 0o600 });
    fs.linkSync(key, other);
    try {
      const r = await acpRun(["--isolation", "userns", "--", "true"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`\`${key}\`, a file of ACP's home, has 1 other name (a hard link)`);
      expect(r.stderr).toContain(`-xdev -samefile ${key}`);
      expect(r.audit).toEqual([]);
    } finally {
      fs.rmSync(other);
      fs.rmSync(key);
    }
  });

  it("a bridge socket in use: exit 1 naming the socket and the fix", async () => {
    const dir = join(work.path, "busy");
    (await import("node:fs")).mkdirSync(dir);
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(join(dir, "egress.sock"), () => resolve()));
    const r = await acpRun(["--isolation", "userns", "--bridge-dir", dir, "--", "true"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`bridge socket \`${join(dir, "egress.sock")}\` is in use by another process`);
    await new Promise((resolve) => holder.close(resolve));
  });
});
