/**
 * The directories the sandbox covers (`/tmp`, `/run`, `/var/tmp`, `/dev/shm`) with real namespaces: an agent
 * whose program lies under one still runs, and only the directory holding it is brought back, not the rest
 * of the covered directory with the Unix sockets that lead out of the sandbox (tmux, X11, D-Bus, databases).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSandboxed } from "../../src/index.js";
import { quietRun, scratchDir } from "./net-fixture.js";

// Runs inside: tries the host's socket under /tmp, reads a file beside it, writes what happened beside itself.
// (The host's paths come in the environment: a path named on the command line is brought back on purpose.)
const AGENT = `
import { connect } from "node:net";
import { readFileSync, writeFileSync } from "node:fs";
const [out] = process.argv.slice(2);
const { HOST_SOCKET: socket, HOST_FILE: beside } = process.env;
const result = {};
result.socket = await new Promise((resolve) => {
  const s = connect(socket);
  s.once("connect", () => (s.destroy(), resolve("connected")));
  s.once("error", (err) => resolve(err.code));
});
try { result.beside = readFileSync(beside, "utf8"); } catch (err) { result.beside = err.code; }
writeFileSync(out, JSON.stringify(result));
`;

let work: { path: string; remove(): void };
let outside: string;
let server: Server;
let reached = 0;

beforeAll(async () => {
  work = scratchDir("acp-sbx-roots-");
  // a service of the host with its socket under /tmp, like tmux (/tmp/tmux-UID/default) or X11
  outside = mkdtempSync("/tmp/acp-sbx-host-");
  writeFileSync(join(outside, "note.txt"), "host file\n");
  server = createServer((s) => {
    reached++;
    s.on("error", () => undefined);
    s.end("outside the sandbox\n");
  });
  await new Promise<void>((resolve) => server.listen(join(outside, "service.sock"), () => resolve()));
});

afterAll(() => {
  server?.close();
  if (outside !== undefined) rmSync(outside, { recursive: true, force: true });
  work?.remove();
});

describe.each(["netns", "userns"] as const)("isolation %s", (level) => {
  it.each([
    ["a working directory outside", false],
    ["its working directory under /tmp too", true],
  ])("an agent under /tmp (%s) runs, but the rest of /tmp stays covered", async (_, cwdUnderTmp) => {
    const agentDir = mkdtempSync("/tmp/acp-sbx-agent-");
    const cwd = cwdUnderTmp ? mkdtempSync("/tmp/acp-sbx-cwd-") : work.path;
    try {
      const script = join(agentDir, "agent.mjs");
      writeFileSync(script, AGENT);
      // written through the working directory (under /tmp or not): the agent's program directory comes back
      // read-only, like the rest of the host outside the working directory
      const out = "out.json";
      const options = quietRun({
        argv: [process.execPath, script, out],
        isolation: level,
        home: join(work.path, "home"),
        env: {
          PATH: process.env["PATH"],
          HOST_SOCKET: join(outside, "service.sock"),
          HOST_FILE: join(outside, "note.txt"),
        },
        cwd,
      });
      expect(await runSandboxed(options)).toEqual({ level, exitCode: 0 });
      expect(JSON.parse(readFileSync(resolve(cwd, out), "utf8"))).toEqual({ socket: "ENOENT", beside: "ENOENT" });
      expect(reached).toBe(0);
    } finally {
      rmSync(agentDir, { recursive: true, force: true });
      if (cwdUnderTmp) rmSync(cwd, { recursive: true, force: true });
    }
  });
  it("an agent started in /tmp itself works in an empty /tmp of its own: the host's sockets and files stay covered", async () => {
    const agentDir = mkdtempSync("/tmp/acp-sbx-agent-");
    try {
      const script = join(agentDir, "agent.mjs");
      writeFileSync(script, AGENT);
      // written to a --writable directory: what the agent leaves in its working directory is its own tmpfs
      const out = join(work.path, `out-in-tmp-${level}.json`);
      const logged: string[] = [];
      const options = quietRun({
        argv: [process.execPath, script, out],
        isolation: level,
        home: join(work.path, "home"),
        env: {
          PATH: process.env["PATH"],
          HOST_SOCKET: join(outside, "service.sock"),
          HOST_FILE: join(outside, "note.txt"),
        },
        cwd: "/tmp",
        writable: [work.path],
      });
      expect(await runSandboxed({ ...options, log: (line) => logged.push(line) })).toEqual({ level, exitCode: 0 });
      expect(JSON.parse(readFileSync(out, "utf8"))).toEqual({ socket: "ENOENT", beside: "ENOENT" });
      expect(reached).toBe(0);
      expect(logged.join("\n")).toContain("the working directory `/tmp` is shared by every program on this host");
    } finally {
      rmSync(agentDir, { recursive: true, force: true });
    }
  });
});
