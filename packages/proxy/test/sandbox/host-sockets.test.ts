/**
 * Socket directories under /tmp stay covered: a working directory, a `--writable` path or a path on the agent's
 * command line that would bring back a tree holding a Unix socket, a FIFO, a device node or a directory named
 * like tmux's, the X server's or an ssh-agent's is refused, with real namespaces and a real host socket.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { checkWritablePaths, planNamespace, runSandboxed, SandboxError } from "../../src/index.js";
import { findHostChannel } from "../../src/sandbox/host-sockets.js";
import { quietRun, scratchDir } from "./net-fixture.js";

let work: { path: string; remove(): void };
const made: string[] = [];
const servers: Server[] = [];
let reached = 0;

beforeAll(() => void (work = scratchDir("acp-sbx-sockets-")));
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve));
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});
afterAll(() => work?.remove());

/** A fresh directory under /tmp (removed after the test). */
function tmpDir(prefix = "acp-sbx-sock-"): string {
  const dir = mkdtempSync(join("/tmp", prefix));
  made.push(dir);
  return dir;
}

/** A host service listening on a Unix socket at `path`. */
async function listenAt(path: string): Promise<void> {
  const server = createServer((s) => {
    reached++;
    s.on("error", () => undefined);
    s.end("outside the sandbox\n");
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(path, () => resolve()));
}

// connects to the socket named in $SOCK (relative to the working directory), writes what happened to $OUT
const AGENT = `
const { connect } = require("node:net");
const { writeFileSync } = require("node:fs");
const s = connect(process.env.SOCK);
const done = (r) => { try { writeFileSync(process.env.OUT, r); } catch {} process.exit(0); };
s.once("connect", () => (s.destroy(), done("connected")));
s.once("error", (err) => done(err.code));
`;

const plan = (argv: string[], cwd: string) =>
  planNamespace({
    argv,
    env: {},
    cwd,
    home: join(work.path, "home"),
    bridgeDir: work.path,
    setpriv: "/usr/bin/setpriv",
    ports: { mcp: 1, egress: 2 },
  });

describe("findHostChannel", () => {
  it("finds a socket and a FIFO anywhere in the tree; a plain tree has none", async () => {
    const plain = tmpDir();
    mkdirSync(join(plain, "src", "lib"), { recursive: true });
    writeFileSync(join(plain, "src", "lib", "main.js"), "");
    expect(findHostChannel(plain, "/tmp")).toBeUndefined();

    const withSocket = tmpDir();
    mkdirSync(join(withSocket, "a", "b"), { recursive: true });
    await listenAt(join(withSocket, "a", "b", "service.sock"));
    expect(findHostChannel(withSocket, "/tmp")).toEqual({
      path: join(withSocket, "a", "b", "service.sock"),
      what: "is a Unix socket",
    });
    // the socket named directly
    expect(findHostChannel(join(withSocket, "a", "b", "service.sock"), "/tmp")?.what).toBe("is a Unix socket");

    const withFifo = tmpDir();
    execFileSync("mkfifo", [join(withFifo, "commands")]);
    expect(findHostChannel(withFifo, "/tmp")?.what).toBe("is a named pipe (FIFO)");

    // deeper down, a socket directory's name is an agent's own (src/screen, ssh-client): only sockets count
    const project = tmpDir();
    mkdirSync(join(project, "src", "screen"), { recursive: true });
    mkdirSync(join(project, "ssh-client"));
    expect(findHostChannel(project, "/tmp")).toBeUndefined();
    expect(findHostChannel(join(project, "src", "screen"), "/tmp")).toBeUndefined();
  });

  it("refuses a socket directory by its name even while it is empty (tmux starts its server later)", () => {
    const tmux = `/tmp/tmux-${process.pid}${Date.now() % 100000}`;
    mkdirSync(tmux);
    made.push(tmux);
    expect(findHostChannel(tmux, "/tmp")?.path).toBe(tmux);
    expect(findHostChannel(join(tmux, "nested"), "/tmp")?.path).toBe(tmux);
  });

  it("refuses a tree bigger than the walk looks at (what was not looked at may be a socket)", () => {
    const big = tmpDir();
    for (let i = 0; i < 5; i++) writeFileSync(join(big, `f${i}`), "");
    expect(findHostChannel(big, "/tmp", 4)?.what).toBe(
      "holds more than 4 entries, too many to check that none is a socket",
    );
    expect(findHostChannel(big, "/tmp", 5)).toBeUndefined();
  });
});

describe("trees bound back from under /tmp", () => {
  it("refuses a --writable directory under /tmp that holds a socket, saying what and why", async () => {
    const dir = tmpDir();
    await listenAt(join(dir, "agent.sock"));
    const r = checkWritablePaths([dir], join(work.path, "home"));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues[0]?.message).toBe(
      `--writable \`${dir}\` would be bound back from the host's shared \`/tmp\`, but \`${join(dir, "agent.sock")}\` is a Unix socket: a program outside the sandbox listens there, and the agent could reach it`,
    );
    expect(r.issues[0]?.help).toContain("outside /tmp, /var/tmp and /dev/shm");
  });

  it("refuses a path on the agent's command line whose entry under /tmp is a socket directory", () => {
    const ssh = tmpDir("ssh-");
    const agent = join(ssh, `agent.${process.pid}`);
    writeFileSync(agent, ""); // named while ssh-agent is not listening yet: its directory is refused all the same
    let thrown: unknown;
    try {
      plan(["/bin/true", agent], work.path);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(SandboxError);
    expect((thrown as SandboxError).code).toBe("sandbox_host_sockets");
    expect((thrown as SandboxError).message).toBe(
      `\`${agent}\` on the agent's command line brings back \`${ssh}\` from the host's shared \`/tmp\`, but \`${ssh}\` is where programs keep their Unix sockets: a program outside the sandbox listens there, and the agent could reach it (keep the agent, its working directory and the paths it is given out of /tmp, /var/tmp and /dev/shm (e.g. under your home), or remove what is named)`,
    );
    // the agent's own checkout under /tmp still comes back
    const checkout = tmpDir();
    writeFileSync(join(checkout, "main.js"), "");
    expect(plan(["/bin/true", join(checkout, "main.js")], work.path).keep.map((k) => k.path)).toContain(checkout);
  });

  describe.each(["netns", "userns"] as const)("isolation %s", (level) => {
    it("refuses a working directory under /tmp holding a host's socket: the agent never starts", async () => {
      const cwd = tmpDir();
      await listenAt(join(cwd, "service.sock"));
      const out = join(work.path, `cwd-${level}.txt`);
      const run = runSandboxed(
        quietRun({
          argv: [process.execPath, "-e", AGENT],
          isolation: level,
          home: join(work.path, "home"),
          env: { PATH: process.env["PATH"], SOCK: "service.sock", OUT: out },
          cwd,
          writable: [work.path],
        }),
      );
      await expect(run).rejects.toMatchObject({ code: "sandbox_host_sockets" });
      expect(() => readFileSync(out, "utf8")).toThrow();
      expect(reached).toBe(0);
    });

    it("refuses a socket directory named on the command line (an ssh-agent's), so its socket is never reached", async () => {
      const ssh = tmpDir("ssh-");
      await listenAt(join(ssh, "agent.1"));
      const out = join(work.path, `argv-${level}.txt`);
      const run = runSandboxed(
        quietRun({
          argv: [process.execPath, "-e", AGENT, join(ssh, "agent.1")],
          isolation: level,
          home: join(work.path, "home"),
          env: { PATH: process.env["PATH"], SOCK: join(ssh, "agent.1"), OUT: out },
          cwd: work.path,
        }),
      );
      await expect(run).rejects.toMatchObject({ code: "sandbox_host_sockets" });
      expect(() => readFileSync(out, "utf8")).toThrow();
      expect(reached).toBe(0);
    });
  });
});
