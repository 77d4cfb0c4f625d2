import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyAuditChain, type AuditEventV02, type AuditVerification } from "@acp/core";
import { readAnchor } from "../../src/audit/index.js";

/** A temporary home for one test file; `cleanup` removes every directory made. */
export function tempHomes(): { make: () => string; cleanup: () => void } {
  const dirs: string[] = [];
  return {
    make: () => {
      const dir = mkdtempSync(join(tmpdir(), "acp-audit-"));
      dirs.push(dir);
      return dir;
    },
    cleanup: () => {
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An Ed25519 key pair and the raw public key as hex. */
export function keyPair(): { privateKey: KeyObject; publicKey: KeyObject; publicHex: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const x = publicKey.export({ format: "jwk" }).x ?? "";
  return { privateKey, publicKey, publicHex: Buffer.from(x, "base64url").toString("hex") };
}

/** A clock that advances one millisecond per reading. */
export function steppingClock(start = Date.UTC(2026, 0, 15, 12, 0, 0)): () => Date {
  let t = start;
  return () => new Date(t++);
}

/** The log's complete lines (dropping the empty string after the final newline). */
export function readLines(path: string): string[] {
  const lines = readFileSync(path, "utf8").split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/** The log's events, parsed. */
export function readEvents(path: string): AuditEventV02[] {
  return readLines(path).map((l) => JSON.parse(l) as AuditEventV02);
}

/** Verifies a log file with its anchor and, when given, a public key. */
export function verifyFile(path: string, publicKey?: KeyObject): AuditVerification {
  const anchor = readAnchor(path);
  return verifyAuditChain(readLines(path), {
    ...(publicKey === undefined ? {} : { publicKey }),
    ...(anchor === undefined ? {} : { anchor }),
  });
}
