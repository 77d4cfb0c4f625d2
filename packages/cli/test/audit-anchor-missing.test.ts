import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openAuditLog } from "@acp/store";
import { runCli } from "./run.js";

// A truncation that also removes the anchor: before 28 Nov 2026 `acp audit verify` said intact with a warning
// (exit 0). A log that had an anchor (its `.anchored` marker, or the home's log holding signed checkpoints)
// without one now fails `anchor_missing` (exit 3).

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A home with keys/public.key and a log of `n` events, a checkpoint every 3 (anchor and marker written). */
async function home(n: number): Promise<{ home: string; log: string; env: Record<string, string>; key: KeyObject }> {
  const dir = mkdtempSync(join(tmpdir(), "acp-anchor-missing-"));
  dirs.push(dir);
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  mkdirSync(join(dir, "keys"));
  const x = publicKey.export({ format: "jwk" }).x ?? "";
  writeFileSync(join(dir, "keys", "public.key"), `${Buffer.from(x, "base64url").toString("hex")}\n`);
  const log = join(dir, "audit.jsonl");
  let t = Date.UTC(2026, 0, 15);
  const writer = await openAuditLog(log, { clock: () => new Date(t++), signer: privateKey, checkpointEvery: 3 });
  for (let i = 0; i < n; i++)
    await writer.append({ event_type: "policy_evaluated", tool: "send_email", decision: "ask" });
  await writer.close();
  return { home: dir, log, env: { ACP_HOME: dir, HOME: "/nonexistent-home" }, key: privateKey };
}

/** Keeps the first `n` lines of the log. */
function cutTo(log: string, n: number): void {
  const lines = readFileSync(log, "utf8").split("\n");
  writeFileSync(log, `${lines.slice(0, n).join("\n")}\n`);
}

describe("acp audit verify: a log cut back and its anchor deleted", () => {
  it("fails anchor_missing (exit 3), never intact, when cut back to an earlier checkpoint", async () => {
    const h = await home(8); // checkpoints at lines 4, 8 and 11
    cutTo(h.log, 4); // the first checkpoint, a genuine signed line: the rest verifies
    rmSync(`${h.log}.checkpoint`);
    const out = await runCli(["audit", "verify"], { env: h.env });
    expect(out.code).toBe(3);
    expect(out.stdout).not.toContain("intact");
    expect(out.stderr).toContain(
      `${h.log}.checkpoint: anchor_missing: \`${h.log}.checkpoint\` is missing, though \`${h.log}.anchored\` records that the log had one`,
    );
    expect(out.stderr).toContain("the log's own lines verify (4 events, last checkpoint: line 4)");
    expect(out.stderr).toContain(`remove \`${h.log}.anchored\``);
    const json = await runCli(["audit", "verify", "--json"], { env: h.env });
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({
      output_version: 6,
      valid: false,
      ok: false,
      count: 4,
      anchor_file: null,
      anchor_marker_file: `${h.log}.anchored`,
      problem: { code: "anchor_missing", where: "anchor", line: 0 },
    });
    // named by its path, the log's marker beside it still tells
    expect((await runCli(["audit", "verify", h.log], { env: h.env })).code).toBe(3);
  });

  it("fails when cut back before its first checkpoint, where nothing signed is left", async () => {
    const h = await home(8);
    cutTo(h.log, 2);
    rmSync(`${h.log}.checkpoint`);
    const out = await runCli(["audit", "verify"], { env: h.env });
    expect(out.code).toBe(3);
    expect(out.stderr).toContain("anchor_missing");
    expect(out.stderr).toContain("(2 events, no checkpoint)");
  });

  it("fails the home's log holding signed checkpoints without an anchor even with no marker (made before markers)", async () => {
    const h = await home(5);
    rmSync(`${h.log}.checkpoint`);
    rmSync(`${h.log}.anchored`);
    const out = await runCli(["audit", "verify"], { env: h.env });
    expect(out.code).toBe(3);
    expect(out.stderr).toContain("though the home's log holds 2 signed checkpoints, which its writers anchor");
    expect(out.stderr).toContain("the next writer (acp proxy, acp run, acp serve) verifies the log in full");
    // a copy named elsewhere, without a marker, is only warned about
    const copy = join(h.home, "copy.jsonl");
    copyFileSync(h.log, copy);
    const named = await runCli(["audit", "verify", copy], { env: h.env });
    expect(named.code).toBe(0);
    expect(named.stderr).toContain("warning: no checkpoint anchor beside the log");
  });

  it("verifies with the anchor given by --anchor (a copy kept elsewhere), and catches the cut with it", async () => {
    const h = await home(8);
    const kept = join(h.home, "kept.checkpoint");
    copyFileSync(`${h.log}.checkpoint`, kept);
    cutTo(h.log, 4);
    rmSync(`${h.log}.checkpoint`);
    const out = await runCli(["audit", "verify", "--anchor", kept], { env: h.env });
    expect(out.code).toBe(3);
    expect(out.stderr).toContain("truncated_after_checkpoint");
  });

  it("an intact home says nothing of markers", async () => {
    const h = await home(5);
    const out = await runCli(["audit", "verify"], { env: h.env });
    expect(out.code).toBe(0);
    expect(out.stderr).toBe("");
  });
});
