/**
 * `acp run` as a real process (built `bin/acp.js`, real wiring): as an unprivileged user (userns picked by
 * auto), under a kernel that refuses user namespaces, and stopped by a real SIGINT.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { createTargetNamespace, scratchDir, type TargetNamespace } from "../../proxy/test/sandbox/net-fixture.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const PROBE = join(ROOT, "packages/proxy/test/sandbox/fixtures/probe.mjs");
const MCP_CLIENT = join(ROOT, "packages/proxy/test/sandbox/fixtures/mcp-client.mjs");
const TTY_PROBE = join(ROOT, "packages/proxy/test/sandbox/fixtures/tty-probe.py");
// Debian's python3 (not a user-level shim under /root, which the unprivileged agent cannot read)
const PYTHON = "/usr/bin/python3";
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");
const USER = "cloudsdk";
const uid = Number(execFileSync("id", ["-u", USER], { encoding: "utf8" }).trim());

let target: TargetNamespace;
let work: { path: string; remove(): void };
let home: string;

/** Runs `acp ARGS` as `user` (via runuser) with a clean environment; resolves with status and stderr. */
function acp(args: string[], options: { user?: string; wrap?: string[] } = {}) {
  const env = [
    "PATH=" + (process.env["PATH"] ?? ""),
    `HOME=${work.path}`,
    `ACP_HOME=${home}`,
    "ACP_PASSPHRASE=pw-7a7a7a7a",
  ];
  const inner = ["env", "-i", ...env, process.execPath, ACP, ...args];
  const argv =
    options.user !== undefined ? ["runuser", "-u", options.user, "--", ...inner] : [...(options.wrap ?? []), ...inner];
  return spawnSync(argv[0] ?? "", argv.slice(1), { encoding: "utf8", cwd: work.path, timeout: 60_000 });
}

const shellQuote = (arg: string): string => `'${arg.replaceAll("'", `'\\''`)}'`;

/**
 * Runs `acp ARGS` inside a fresh pseudo-terminal (util-linux `script`), so `acp` has a controlling
 * terminal the way it has when a person starts it by hand.
 */
function acpInTerminal(args: string[], user?: string) {
  const env = [
    "PATH=" + (process.env["PATH"] ?? ""),
    `HOME=${work.path}`,
    `ACP_HOME=${home}`,
    "ACP_PASSPHRASE=pw-7a7a7a7a",
  ];
  const command = ["env", "-i", ...env, process.execPath, ACP, ...args].map(shellQuote).join(" ");
  const script = ["script", "--quiet", "--return", "--command", command, "/dev/null"];
  const argv = user !== undefined ? ["runuser", "-u", user, "--", ...script] : script;
  return spawnSync(argv[0] ?? "", argv.slice(1), { encoding: "utf8", cwd: work.path, timeout: 60_000 });
}

beforeAll(async () => {
  execFileSync("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT, stdio: "ignore" });
  target = await createTargetNamespace();
  work = scratchDir("acp-run-bin-", uid);
  home = join(work.path, "home");
  const init = acp(["init", "--no-passphrase"], { user: USER });
  expect(init.status, init.stderr).toBe(0);
  writeFileSync(join(home, "policy.yml"), 'version: "1"\ndefault_action: allow\n');
  const config = (parse(readFileSync(join(home, "config.yml"), "utf8")) ?? {}) as Record<string, unknown>;
  writeFileSync(join(home, "config.yml"), stringify({ ...config, defaults: { timeout_seconds: 2 } }));
  if (!existsSync(join(home, "vault.json"))) writeFileSync(join(home, "vault.json"), '{"version":1,"data":"secret"}\n');
}, 120_000);

afterAll(() => {
  target?.stop();
  work?.remove();
});

describe("acp run as an unprivileged user", () => {
  it("auto picks userns; every way out fails; allowed egress works; other hosts ask network.connect", () => {
    const out = join(work.path, "probe.json");
    const config = JSON.stringify({
      hostPort: 1,
      target: target.address,
      allowedPort: 8080,
      deniedPort: 8081,
      home,
      secret: "pw-7a7a7a7a",
    });
    const r = acp(["run", "--allow-egress", `${target.address}:8080`, "--", process.execPath, PROBE, out, config], {
      user: USER,
    });
    expect(r.stderr).toContain("isolation userns (picked by --isolation auto)");
    expect(r.status, r.stderr).toBe(0);
    const probe = JSON.parse(readFileSync(out, "utf8")) as Record<string, { ok: boolean; error?: string }>;
    for (const way of ["tcp_host_loopback", "tcp_outside", "udp_outside", "dns", "umount_home"]) {
      expect(probe[way], way).toMatchObject({ ok: false });
    }
    for (const file of ["keys/private.key", "vault.json", "policy.yml", "audit.jsonl"]) {
      expect(probe[`read ${file}`], file).toMatchObject({ ok: false });
      expect(probe[`write ${file}`], file).toMatchObject({ ok: false });
      expect(readFileSync(join(home, file), "utf8")).not.toContain("tampered");
    }
    expect(probe["env_secret"]).toEqual([]);
    expect(probe["egress_allowed"]).toEqual({ ok: true, value: "hello from egress 8080" });
    expect(probe["egress_denied"]).toMatchObject({ ok: false });
    const audit = readFileSync(join(home, "audit.jsonl"), "utf8");
    expect(audit).toContain('"event_type":"sandbox_started"');
    // the wired broker was asked (only it answers `expired`), nobody answered within 2 s: refused
    expect(audit).toMatch(
      /"event_type":"sandbox_egress_refused".*"port":8081,"reason":"[^"]*nobody answered \(expired\)/,
    );
    expect(audit).toContain('"event_type":"sandbox_egress"');
  });

  it("an MCP SDK client inside lists and calls tools through the wired proxy over HTTP", () => {
    const out = join(work.path, "mcp.json");
    const r = acp(["run", "-u", EVERYTHING, "--", process.execPath, MCP_CLIENT, out, "http"], { user: USER });
    expect(r.status, r.stderr).toBe(0);
    const answer = JSON.parse(readFileSync(out, "utf8")) as { tools: string[]; echo: { content: { text: string }[] } };
    expect(answer.tools).toContain("echo");
    expect(answer.echo.content[0]?.text).toContain("hello over http");
  });
});

describe("acp run: the terminal where approvals are answered", () => {
  it.each([
    ["netns", "root", undefined],
    ["userns", USER, USER],
  ] as const)(
    "under %s (as %s) the agent keeps the terminal as stdin but cannot open /dev/tty or push keystrokes",
    (level, _who, user) => {
      expect(existsSync(PYTHON), `${PYTHON} (Debian's python3) is needed by this test`).toBe(true);
      // root without capabilities cannot write into cloudsdk's directory: root's agent writes into root's,
      // made writable with --writable (the host outside the working directory is read-only)
      const dir = user === undefined ? scratchDir("acp-run-tty-") : null;
      const out = join(dir?.path ?? work.path, `tty-${level}.json`);
      const writable = dir !== null ? ["--writable", dir.path] : [];
      const r = acpInTerminal(["run", "--isolation", level, ...writable, "--", PYTHON, TTY_PROBE, out], user);
      expect(r.status, r.stdout + r.stderr).toBe(0);
      const probe = JSON.parse(readFileSync(out, "utf8")) as Record<string, unknown>;
      dir?.remove();
      // the probe ran on a real terminal: a failure below is the sandbox's doing, not a missing terminal
      expect(probe["stdin_is_tty"]).toBe(true);
      expect(probe["open_dev_tty"]).toEqual({ ok: false, error: "ENXIO" });
      expect(probe["tiocsti_stdin"]).toEqual({ ok: false, error: "EPERM" });
      expect(probe["tiocsti_stdout"]).toEqual({ ok: false, error: "EPERM" });
    },
  );

  it("the same probe outside acp run can do both (the test would notice a sandbox that does nothing)", () => {
    const out = join(work.path, "tty-outside.json");
    const r = spawnSync("script", ["--quiet", "--return", "--command", `${PYTHON} ${TTY_PROBE} ${out}`, "/dev/null"], {
      encoding: "utf8",
      cwd: work.path,
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const probe = JSON.parse(readFileSync(out, "utf8")) as Record<string, unknown>;
    expect(probe["open_dev_tty"]).toEqual({ ok: true, error: null });
    expect(probe["tiocsti_stdin"]).toEqual({ ok: true, error: null });
  });
});

describe("acp run: the Docker recipe", () => {
  it("a client in a network namespace with only loopback reaches the proxy through acp-forward and the bridge", () => {
    // what `docker run --network none -v DIR:/run/acp` gives, built with unshare: loopback only, the bridge
    // directory visible; examples/docker/acp-forward.mjs is the in-container forwarder the guide ships
    const mine = scratchDir("acp-run-docker-");
    const bridge = join(mine.path, "bridge");
    const out = join(mine.path, "mcp.json");
    const ready = join(mine.path, "forward.log");
    const forward = join(ROOT, "examples/docker/acp-forward.mjs");
    const container = [
      "ip link set lo up",
      `${process.execPath} ${forward} ${bridge} 2>${ready} &`,
      `until grep -q listening ${ready}; do grep -q cannot ${ready} && exit 9; sleep 0.05; done`,
      `ACP_MCP_URL=http://127.0.0.1:47311/mcp ${process.execPath} ${MCP_CLIENT} ${out} http`,
    ].join("\n");
    const r = acp(
      [
        "run",
        "--isolation",
        "none",
        "--bridge-dir",
        bridge,
        "-u",
        EVERYTHING,
        "--",
        "unshare",
        "--net",
        "sh",
        "-c",
        container,
      ],
      {},
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain("WARNING");
    const answer = JSON.parse(readFileSync(out, "utf8")) as { tools: string[]; echo: { content: { text: string }[] } };
    expect(answer.tools).toContain("echo");
    expect(answer.echo.content[0]?.text).toContain("hello over http");
    mine.remove();
  });
});

describe("acp run: descriptors acp inherited", () => {
  it("a file and a host socket its parent left open do not reach the agent", async () => {
    // whoever starts acp may leave descriptors open without close-on-exec (a shell's `exec 9<file`, an IDE's
    // or a service manager's socket): here the home's vault and a TCP connection to the host's loopback
    const mine = scratchDir("acp-run-fds-");
    const received: string[] = [];
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    const server = createServer((s) => {
      s.on("data", (d: Buffer) => received.push(d.toString("utf8")));
      s.on("close", () => closed());
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const port = (server.address() as AddressInfo).port;
    const out = join(mine.path, "fds.json");
    const probe = [
      'const fs = require("node:fs");',
      "const r = {};",
      'try { r.vault = fs.readFileSync("/proc/self/fd/60", "utf8"); } catch (e) { r.vault = e.code; }',
      'try { fs.writeSync(61, "agent-was-here\\n"); r.socket = "written"; } catch (e) { r.socket = e.code; }',
      `fs.writeFileSync(${JSON.stringify(out)}, JSON.stringify(r));`,
    ].join("\n");
    const leak = 'exec 60<"$1" 61<>"/dev/tcp/127.0.0.1/$2"; shift 2; exec "$@"';
    try {
      const r = acp(["run", "--isolation", "netns", "--writable", mine.path, "--", process.execPath, "-e", probe], {
        wrap: ["bash", "-c", leak, "bash", join(home, "vault.json"), String(port)],
      });
      expect(r.status, r.stderr).toBe(0);
      await connectionClosed;
      expect(JSON.parse(readFileSync(out, "utf8"))).toEqual({ vault: "ENOENT", socket: "EBADF" });
      expect(received.join("")).toBe("");
    } finally {
      server.close();
      mine.remove();
    }
  });
});

describe("acp run: the kernel refuses", () => {
  it("user namespaces refused by the kernel: exit 1 naming the cause and the fix, nothing left behind", () => {
    const bridgeDir = join(work.path, "never-created");
    // a user namespace whose limit of nested user namespaces is 0: the kernel refuses, nothing global changes
    const wrap = ["unshare", "-r", "-m", "sh", "-c", 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"', "sh"];
    // root of that namespace cannot read the home (owned by an unmapped user): a config.yml that cannot be read
    // stops acp run (exit 1, `cannot read`), so it is given a readable empty config file instead
    const readable = mkdtempSync(join(tmpdir(), "acp-run-kernel-"));
    chmodSync(readable, 0o755);
    const config = join(readable, "config.yml");
    writeFileSync(config, 'version: "1"\n', { mode: 0o644 });
    const r = acp(["run", "--isolation", "userns", "--config", config, "--bridge-dir", bridgeDir, "--", "true"], {
      wrap,
    });
    rmSync(readable, { recursive: true, force: true });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("the kernel refused isolation `userns`");
    expect(r.stderr).toContain("user.max_user_namespaces");
    expect(existsSync(bridgeDir)).toBe(false);
  });
});

describe("acp run: Ctrl-C", () => {
  it("SIGINT to acp stops the whole agent tree and acp exits 130", async () => {
    const marker = `acp-run-bin-marker-${process.pid}`;
    // a directory root owns: the agent runs as root without capabilities, so it cannot write into cloudsdk's
    const mine = scratchDir("acp-run-sigint-");
    const started = join(mine.path, "started");
    const grandchild = `${process.execPath} -e 'process.on("SIGINT", () => {}); setInterval(() => {}, 1000)' ${marker}`;
    const child = spawn(
      "env",
      [
        "-i",
        `PATH=${process.env["PATH"] ?? ""}`,
        `ACP_HOME=${home}`,
        process.execPath,
        ACP,
        "run",
        "--isolation",
        "netns",
        "--",
        "sh",
        "-c",
        `${grandchild} & touch ${started}; wait`,
      ],
      { cwd: mine.path, stdio: "ignore" },
    );
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const alive = (): string[] =>
      readdirSync("/proc").filter((p) => {
        try {
          return /^\d+$/.test(p) && readFileSync(`/proc/${p}/cmdline`, "utf8").includes(marker);
        } catch {
          return false;
        }
      });
    try {
      while (!existsSync(started) || alive().length === 0) await new Promise((r) => setTimeout(r, 50));
      child.kill("SIGINT");
      expect(await exited).toBe(130);
    } finally {
      // a failed test must not leave the agent behind: SIGTERM lets acp take the tree down
      if (child.exitCode === null) child.kill("SIGTERM");
    }
    while (alive().length > 0) await new Promise((r) => setTimeout(r, 50));
    expect(alive()).toEqual([]);
    mine.remove();
  });
});
