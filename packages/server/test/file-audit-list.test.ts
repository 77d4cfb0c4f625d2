/**
 * The audit file's pages (`GET /v1/audit`, the console's audit page) are read backwards from the end of
 * the file, one chunk at a time, instead of the whole file; the pages are the same as before.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { buildAuditEvent, parseAuditLine, serializeAuditEvent, type AuditEventV02 } from "@acp/core";
import { createFileAuditTrail } from "../src/store/file-audit-trail.js";
import type { AuditEntry, AuditPage, AuditQuery } from "../src/store/types.js";

const dir = mkdtempSync(join(tmpdir(), "acp-audit-list-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The listing as it was before 26 Nov 2026 (the whole file read and split), the reference. */
function listBefore(text: string, query: AuditQuery): AuditPage {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const matches = (event: AuditEventV02, needle: string | null): boolean => {
    if (query.eventType !== undefined && event.event_type !== query.eventType) return false;
    if (query.tool !== undefined && event.tool !== query.tool) return false;
    if (query.agent !== undefined && event.agent !== query.agent) return false;
    if (query.decision !== undefined && event.decision !== query.decision) return false;
    if (query.requestId !== undefined && event.request_id !== query.requestId) return false;
    return needle === null || JSON.stringify(event).toLowerCase().includes(needle);
  };
  const needle = query.q === undefined || query.q === "" ? null : query.q.toLowerCase();
  const events: AuditEntry[] = [];
  let index = Math.min(lines.length, (query.before ?? lines.length + 1) - 1) - 1;
  for (; index >= 0 && events.length < query.limit; index--) {
    const parsed = parseAuditLine(lines[index] ?? "");
    if (parsed.ok && matches(parsed.value, needle)) events.push({ line: index + 1, event: parsed.value });
  }
  const next = index >= 0 && events.length === query.limit ? index + 2 : null;
  return { events, total: lines.length, next };
}

const tools = ["send_email", "read_file", "Delete_Repo"];
const line = (i: number): string =>
  serializeAuditEvent(
    buildAuditEvent(
      {
        event_type: i % 3 === 0 ? "policy_evaluated" : "tool_call_intercepted",
        tool: tools[i % tools.length] ?? null,
        agent: i % 2 === 0 ? "claude" : "codex",
        decision: i % 4 === 0 ? "ask" : "accept",
        metadata: { n: i, note: "é".repeat(i % 5) },
      },
      { id: `ae_${i}`, timestamp: "2026-01-15T12:00:00.000Z", previousEventHash: null },
    ),
  );

describe("the audit file's pages", () => {
  it("are the pages the whole-file listing gave, for any file (garbage and empty lines, a torn end) and query", async () => {
    const path = join(dir, "audit.jsonl");
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.nat(40).map(line), fc.constant(""), fc.constant("{torn"), fc.constant("not json")), {
          maxLength: 40,
        }),
        fc.boolean(),
        fc.record(
          {
            limit: fc.integer({ min: 1, max: 6 }),
            before: fc.integer({ min: 0, max: 45 }),
            eventType: fc.constantFrom("policy_evaluated", "tool_call_intercepted"),
            tool: fc.constantFrom(...tools),
            agent: fc.constantFrom("claude", "codex"),
            decision: fc.constantFrom("ask", "accept"),
            q: fc.constantFrom("", "delete", "é", "ae_1"),
          },
          { requiredKeys: ["limit"] },
        ),
        async (lines, newline, query) => {
          const text = lines.join("\n") + (newline && lines.length > 0 ? "\n" : "");
          writeFileSync(path, text);
          // a trail of its own: one kept across these rewrites would continue its count from the last file
          // when its last line happens to be at the same place (file-audit-count.test.ts)
          const trail = createFileAuditTrail(path);
          expect(await trail.list(query)).toEqual(listBefore(readFileSync(path, "utf8"), query));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("lists a missing file as empty", async () => {
    const trail = createFileAuditTrail(join(dir, "missing.jsonl"));
    expect(await trail.list({ limit: 10 })).toEqual({ events: [], total: 0, next: null });
  });
});
