/** The audit chain read from the JSONL file the writer appends to (`$ACP_HOME/audit.jsonl`). */
import { readFile } from "node:fs/promises";
import { parseAuditLine, verifyAuditChain, type AuditEventV02, type CheckpointPublicKey } from "@acp/core";
import { readAnchor } from "@acp/store";
import type { AuditEntry, AuditPage, AuditQuery, AuditTrail } from "./types.js";

/** Options of {@link createFileAuditTrail}. */
export interface FileAuditTrailOptions {
  /** Checkpoint signatures are checked with this key when given. */
  readonly publicKey?: CheckpointPublicKey;
}

async function readLines(path: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

function matches(event: AuditEventV02, query: AuditQuery, needle: string | null): boolean {
  if (query.eventType !== undefined && event.event_type !== query.eventType) return false;
  if (query.tool !== undefined && event.tool !== query.tool) return false;
  if (query.agent !== undefined && event.agent !== query.agent) return false;
  if (query.decision !== undefined && event.decision !== query.decision) return false;
  if (query.requestId !== undefined && event.request_id !== query.requestId) return false;
  return needle === null || JSON.stringify(event).toLowerCase().includes(needle);
}

/** Reads and verifies the chain at `path` on each call (the file is the truth; other processes append). */
export function createFileAuditTrail(path: string, options: FileAuditTrailOptions = {}): AuditTrail {
  return {
    async list(query): Promise<AuditPage> {
      const lines = await readLines(path);
      const needle = query.q === undefined || query.q === "" ? null : query.q.toLowerCase();
      const events: AuditEntry[] = [];
      let index = Math.min(lines.length, (query.before ?? lines.length + 1) - 1) - 1;
      for (; index >= 0 && events.length < query.limit; index--) {
        const parsed = parseAuditLine(lines[index] ?? "");
        if (parsed.ok && matches(parsed.value, query, needle)) events.push({ line: index + 1, event: parsed.value });
      }
      const next = index >= 0 && events.length === query.limit ? index + 2 : null;
      return { events, total: lines.length, next };
    },
    async verify() {
      const lines = await readLines(path);
      const anchor = readAnchor(path);
      return verifyAuditChain(lines, {
        ...(options.publicKey !== undefined ? { publicKey: options.publicKey } : {}),
        ...(anchor !== undefined ? { anchor } : {}),
      });
    },
  };
}
