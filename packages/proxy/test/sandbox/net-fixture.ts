/**
 * Test fixtures with real namespaces: a target network namespace joined to the host by a veth pair, with a
 * plain-HTTP stand-in on its address (the "outside" the sandbox must not reach directly, and the allowed
 * egress host), plus a scratch ACP home outside the directories the sandbox covers anyway.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo, type Server } from "node:net";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { SandboxRunOptions } from "../../src/index.js";

const ip = (...args: string[]): void => {
  const r = spawnSync("ip", args, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`ip ${args.join(" ")}: ${r.stderr.trim()}`);
};

/** A network namespace on a veth pair with HTTP servers on `address:8080` and `address:8081`. */
export interface TargetNamespace {
  readonly name: string;
  readonly address: string;
  stop(): void;
}

const STAND_IN = `
const http = require("node:http");
const dgram = require("node:dgram");
let up = 0;
for (const port of [8080, 8081]) {
  http.createServer((req, res) => res.end("hello from egress " + port)).listen(port, process.argv[1], () => {
    if (++up === 2) process.stdout.write("ready\\n");
  });
}
dgram.createSocket("udp4").bind(9999, process.argv[1]);
`;

/** Creates the target namespace; `stop()` deletes it (also registered for process exit). */
export async function createTargetNamespace(): Promise<TargetNamespace> {
  const tag = randomBytes(3).toString("hex");
  const name = `acp-sbx-test-${tag}`;
  const hostEnd = `acpv${tag}h`;
  const nsEnd = `acpv${tag}n`;
  const subnet = `10.213.${randomBytes(1)[0] ?? 7}`;
  const address = `${subnet}.2`;
  let server: ChildProcess | undefined;
  const stop = (): void => {
    server?.kill("SIGKILL");
    spawnSync("ip", ["netns", "del", name]);
    spawnSync("ip", ["link", "del", hostEnd]);
    process.off("exit", stop);
  };
  process.on("exit", stop);
  try {
    ip("netns", "add", name);
    ip("link", "add", hostEnd, "type", "veth", "peer", "name", nsEnd);
    ip("link", "set", nsEnd, "netns", name);
    ip("addr", "add", `${subnet}.1/30`, "dev", hostEnd);
    ip("link", "set", hostEnd, "up");
    ip("netns", "exec", name, "ip", "addr", "add", `${address}/30`, "dev", nsEnd);
    ip("netns", "exec", name, "ip", "link", "set", nsEnd, "up");
    ip("netns", "exec", name, "ip", "link", "set", "lo", "up");
    const child = spawn("ip", ["netns", "exec", name, process.execPath, "-e", STAND_IN, address], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    server = child;
    await new Promise<void>((resolve, reject) => {
      child.stdout.once("data", () => resolve());
      child.once("exit", (code) => reject(new Error(`stand-in exited ${String(code)}`)));
    });
  } catch (err) {
    stop();
    throw err;
  }
  return { name, address, stop };
}

/** A listener on the host's 127.0.0.1 (which the sandbox must not reach). */
export async function listenHostLoopback(): Promise<{ port: number; server: Server }> {
  const server = createServer((s) => s.end("host loopback\n"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return { port: (server.address() as AddressInfo).port, server };
}

/** The secret files of an ACP home, with known contents. */
export const HOME_FILES = ["keys/private.key", "vault.json", "policy.yml", "audit.jsonl"] as const;

/** A scratch directory under /srv (not covered by the sandbox's /tmp and /run), optionally owned by `uid`. */
export function scratchDir(prefix: string, uid?: number): { path: string; remove(): void } {
  mkdirSync("/srv", { recursive: true });
  const path = mkdtempSync(join("/srv", prefix));
  if (uid !== undefined) chownSync(path, uid, uid);
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Fills `home` with the secret files; returns their contents. */
export function fillHome(home: string, uid?: number): Record<string, string> {
  mkdirSync(join(home, "keys"), { recursive: true, mode: 0o700 });
  const contents: Record<string, string> = {};
  for (const file of HOME_FILES) {
    contents[file] = `secret ${file} ${randomBytes(8).toString("hex")}\n`;
    writeFileSync(join(home, file), contents[file] ?? "", { mode: 0o600 });
    if (uid !== undefined) chownSync(join(home, file), uid, uid);
  }
  if (uid !== undefined) chownSync(join(home, "keys"), uid, uid);
  return contents;
}

/**
 * Options of one sandboxed run that reaches nothing but its own files: no MCP upstream (port 9, discard),
 * no egress allowed (every ask expires), audit and log dropped, no signal handling. `given` fills in the
 * rest (argv, isolation, home, env, cwd, writable, …).
 */
export function quietRun(
  given: Pick<SandboxRunOptions, "argv" | "isolation" | "home" | "env" | "cwd"> & Partial<SandboxRunOptions>,
): SandboxRunOptions {
  return {
    mcpTarget: { host: "127.0.0.1", port: 9 },
    egress: { allow: [], broker: { ask: () => Promise.resolve({ kind: "expired" }) } },
    audit: { record: () => undefined },
    log: () => undefined,
    signals: { on: () => undefined, off: () => undefined },
    ...given,
  };
}
