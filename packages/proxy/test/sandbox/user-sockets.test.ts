/**
 * The user's pathname Unix sockets outside the covered directories are not reachable from inside the sandbox
 * (real namespaces, as root): an SSH ControlMaster socket under `~/.ssh`, gpg-agent under `~/.gnupg`, Docker
 * Desktop's `~/.docker/desktop/docker.sock`, a socket elsewhere in the home, the ssh-agent `SSH_AUTH_SOCK`
 * names and a bus under `$XDG_RUNTIME_DIR` each lead past the network namespace and the egress allow list.
 * Each is a real listener here; the host still reaches them, the agent is refused (or, in the home's socket
 * directories and the runtime directory, covered whole, does not find them). `acp run`'s own bridge,
 * in a `--bridge-dir` under the home, keeps working.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { connect, createServer, type AddressInfo, type Server } from "node:net";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSandboxed } from "../../src/index.js";
import { findUserSockets } from "../../src/sandbox/home-sockets.js";
import { quietRun, scratchDir } from "./net-fixture.js";

// Runs inside: connects to each socket and to the MCP bridge, reports each outcome as JSON in argv[1].
const AGENT = `
const net = require("node:net");
const http = require("node:http");
const fs = require("node:fs");
const [out, raw] = process.argv.slice(1);
const paths = JSON.parse(raw);
const r = {};
const tryOne = (p) => new Promise((resolve) => {
  const s = net.connect(p);
  s.on("connect", () => { s.destroy(); resolve("connected"); });
  s.on("error", (e) => resolve(e.code));
});
const bridge = () => new Promise((resolve) => {
  http.get(process.env.ACP_MCP_URL, (res) => {
    let body = "";
    res.on("data", (d) => (body += d));
    res.on("end", () => resolve(body));
  }).on("error", (e) => resolve(e.code));
});
(async () => {
  for (const [name, p] of Object.entries(paths)) r[name] = await tryOne(p);
  r.bridge = await bridge();
  fs.writeFileSync(out, JSON.stringify(r));
})();
`;

let work: { path: string; remove(): void };
let home: string;
let sockets: Record<string, string>;
const listeners: Server[] = [];
let target: HttpServer;

async function listen(path: string): Promise<void> {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const server = createServer((s) => {
    // a client that closes at once (the host's probe) resets the answer: not an error of the test's
    s.on("error", () => undefined);
    s.end("outside\n");
  });
  await new Promise<void>((resolve) => server.listen(path, () => resolve()));
  listeners.push(server);
}

function hostConnects(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.on("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.on("error", () => resolve(false));
  });
}

beforeAll(async () => {
  work = scratchDir("acp-sbx-socks-");
  home = join(work.path, "home");
  sockets = {
    ssh_master: join(home, ".ssh", "cm-socket"),
    gpg_agent: join(home, ".gnupg", "S.gpg-agent"),
    docker: join(home, ".docker", "desktop", "docker.sock"),
    in_home: join(home, "project", "run", "server.sock"),
    ssh_agent: join(work.path, "agent", "agent.42"),
    runtime_bus: join(work.path, "runtime", "bus"),
  };
  for (const path of Object.values(sockets)) await listen(path);
  target = createHttpServer((_req, res) => res.end("bridge ok"));
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", () => resolve()));
});

afterAll(async () => {
  for (const s of listeners) s.close();
  await new Promise<void>((resolve) => target.close(() => resolve()));
  work?.remove();
});

describe("findUserSockets", () => {
  it("finds the sockets in the home, SSH_AUTH_SOCK's and the runtime directory's, and skips what it is told", () => {
    const bridge = join(home, "bridge-skip");
    const env = { HOME: home, SSH_AUTH_SOCK: sockets["ssh_agent"], XDG_RUNTIME_DIR: join(work.path, "runtime") };
    const found = findUserSockets({ env, skip: [join(home, ".gnupg"), bridge] });
    for (const [name, path] of Object.entries(sockets)) {
      if (name === "gpg_agent") expect(found).not.toContain(path);
      else expect(found).toContain(path);
    }
  });
});

describe.each(["netns", "userns"] as const)("isolation %s as root", (level) => {
  it("the agent cannot connect to the user's sockets; the host can, and the bridge works", async () => {
    const cwd = join(work.path, `cwd-${level}`);
    const bridgeDir = join(home, `bridge-${level}`);
    mkdirSync(cwd);
    mkdirSync(bridgeDir, { mode: 0o700 });
    // a server's socket in the agent's (writable) working directory, outside the home
    const inCwd = join(cwd, "db", ".s.PGSQL.5432");
    await listen(inCwd);
    const paths = { ...sockets, in_cwd: inCwd };
    const out = join(cwd, "out.json");
    const options = quietRun({
      argv: [process.execPath, "-e", AGENT, out, JSON.stringify(paths)],
      isolation: level,
      home: join(work.path, "acp-home"),
      env: {
        PATH: process.env["PATH"],
        HOME: home,
        SSH_AUTH_SOCK: sockets["ssh_agent"],
        XDG_RUNTIME_DIR: join(work.path, "runtime"),
      },
      cwd,
      bridgeDir,
      mcpTarget: { host: "127.0.0.1", port: (target.address() as AddressInfo).port },
    });
    expect(await runSandboxed(options)).toEqual({ level, exitCode: 0 });
    const result = JSON.parse(readFileSync(out, "utf8")) as Record<string, string>;
    // refused (the empty read-only file over each: EACCES to write to it, or ECONNREFUSED), never connected;
    // $XDG_RUNTIME_DIR and the home's socket directories (~/.ssh, ~/.gnupg, ~/.docker) are covered whole with
    // a tmpfs of the agent's own, so what is there is not there at all
    const gone = ["runtime_bus", "ssh_master", "gpg_agent", "docker"];
    for (const name of Object.keys(paths)) {
      expect(gone.includes(name) ? ["ENOENT"] : ["EACCES", "ECONNREFUSED"], name).toContain(result[name]);
    }
    expect(result["bridge"]).toBe("bridge ok");
    // the listeners are live: outside the sandbox, each one answers
    for (const path of Object.values(paths)) expect(await hostConnects(path)).toBe(true);
  });
});
