import { execFile, execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openAuditLog } from "@acp/store";

// Spawned (not in-process): a command that reads such a file to its end blocks in a sync read, which
// would hang the test process instead of failing the test.
const ACP = fileURLToPath(new URL("../bin/acp.js", import.meta.url));
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

interface Outcome {
  readonly code: number | "killed";
  readonly stdout: string;
  readonly stderr: string;
}

function acp(args: readonly string[], env: Record<string, string>): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [ACP, ...args],
      { env: { ...env, PATH: process.env["PATH"] ?? "" }, timeout: 20_000, killSignal: "SIGKILL" },
      (err, stdout, stderr) => {
        const e = err as (Error & { code?: unknown; killed?: boolean }) | null;
        const code = e === null ? 0 : e.killed === true ? "killed" : typeof e.code === "number" ? e.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/**
 * A named pipe fed 8 MiB and then held open, never ended: to a reader it looks like `/dev/zero` (a file
 * that never ends) without the memory a test of `/dev/zero` would cost if the reader did read on.
 */
function endlessPipe(dir: string): { path: string; close: () => void } {
  const path = join(dir, `endless-${dirs.length}-${Math.random().toString(16).slice(2)}`);
  execFileSync("mkfifo", [path]);
  const stream = createWriteStream(path);
  stream.on("error", () => undefined); // the reader stops early: EPIPE
  stream.write(Buffer.alloc(8 * 1024 * 1024, 0x61));
  return { path, close: () => stream.destroy() };
}

async function home(): Promise<{ dir: string; log: string; env: Record<string, string>; publicHex: string }> {
  const dir = mkdtempSync(join(tmpdir(), "acp-cli-endless-"));
  dirs.push(dir);
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  mkdirSync(join(dir, "keys"));
  const publicHex = Buffer.from(publicKey.export({ format: "jwk" }).x ?? "", "base64url").toString("hex");
  writeFileSync(join(dir, "keys", "public.key"), `${publicHex}\n`);
  const log = join(dir, "audit.jsonl");
  let t = Date.UTC(2026, 0, 15);
  const writer = await openAuditLog(log, { clock: () => new Date(t++), signer: privateKey, checkpointEvery: 3 });
  for (let i = 0; i < 4; i++) await writer.append({ event_type: "policy_evaluated", tool: "send_email" });
  await writer.close();
  return { dir, log, env: { ACP_HOME: dir, HOME: "/nonexistent-home" }, publicHex };
}

/** Runs `acp ARGS(pipe)` against a fresh home with an endless pipe in it, and closes the pipe after. */
async function acpWithPipe(
  args: (pipe: string, h: Awaited<ReturnType<typeof home>>) => string[],
): Promise<Outcome & { pipe: string }> {
  const h = await home();
  const pipe = endlessPipe(h.dir);
  try {
    return { ...(await acp(args(pipe.path, h), h.env)), pipe: pipe.path };
  } finally {
    pipe.close();
  }
}

describe("an input file that never ends (/dev/zero, a stuck pipe) is not read on", () => {
  it("acp audit verify --anchor: the anchor is refused as too long, exit 3", async () => {
    const out = await acpWithPipe((pipe, h) => ["audit", "verify", h.log, "--anchor", pipe]);
    expect(out.code).toBe(3);
    expect(out.stderr).toContain(`${out.pipe}: not_json: line longer than`);
  });

  it("acp audit verify --public-key: not a key, exit 4", async () => {
    const out = await acpWithPipe((pipe, h) => ["audit", "verify", h.log, "--public-key", pipe]);
    expect(out.code).toBe(4);
    expect(out.stderr).toContain("public key is not 64 hex digits");
  });

  it("acp proof verify: the proof file is refused as larger than 1 MiB", async () => {
    const out = await acpWithPipe((pipe, h) => ["proof", "verify", pipe, "--public-key", h.publicHex]);
    expect(out.code).toBe(3);
    expect(out.stderr).toContain("is larger than 1 MiB");
  });

  it("a pipe with no writer where the home keeps its key or the anchor is refused at once, not waited on", async () => {
    const h = await home();
    const key = join(h.dir, "keys", "public.key");
    rmSync(key);
    execFileSync("mkfifo", [key]);
    const proof = await acp(["proof", "verify", join(h.dir, "bundle.json")], h.env);
    expect(proof.code).toBe(1);
    expect(proof.stderr).toContain("not a regular file");
    const anchor = `${h.log}.checkpoint`;
    rmSync(anchor);
    execFileSync("mkfifo", [anchor]);
    const copy = join(h.dir, "public-key-copy");
    writeFileSync(copy, h.publicHex);
    const audit = await acp(["audit", "verify", "--public-key", copy], h.env);
    expect(audit.code).toBe(1);
    expect(audit.stderr).toContain(`cannot read anchor \`${anchor}\`: not a regular file`);
  });

  it("a pipe with no writer as serve.json: acp console-link says no service is running, not waited on", async () => {
    const h = await home();
    execFileSync("mkfifo", [join(h.dir, "serve.json")]);
    const out = await acp(["console-link", "--as", "alice"], h.env);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("no running `acp serve` found");
  });
});
