import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { AuditMetadata } from "@acp/core";
import { openAuditLog } from "../../src/audit/index.js";
import { canary, filler, plantIn, secretKeyName, secretShapedValue } from "../../../core/test/redaction/planted.js";
import { steppingClock, tempHomes } from "./audit-fixture.js";

const homes = tempHomes();
afterAll(homes.cleanup);

/** The whole written log, after one event carrying the planted document. */
async function written(metadata: unknown, secrets: readonly string[] = []): Promise<string> {
  const path = join(homes.make(), "audit.jsonl");
  const log = await openAuditLog(path, { clock: steppingClock(), fsync: "batch", secrets: () => secrets });
  await log.append({
    event_type: "tool_call_intercepted",
    tool: "send_email",
    metadata: JSON.parse(JSON.stringify(metadata)) as AuditMetadata,
  });
  await log.close();
  return readFileSync(path, "utf8");
}

const RUNS = { numRuns: 25 };

describe("a planted secret never reaches the audit file (property)", () => {
  it("under a secret-looking key name", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 3 }), secretKeyName, canary, async (doc, key, secret) => {
        expect(await written(plantIn(doc, key, secret))).not.toContain(secret);
      }),
      RUNS,
    );
  });

  it("as a token, JWT, bearer credential or private key inside any text", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 3 }), secretShapedValue, filler, async (doc, shaped, before) => {
        const file = await written(plantIn(doc, "note", `${before} ${shaped.text} end`));
        expect(file).not.toContain(JSON.stringify(shaped.secret).slice(1, -1));
      }),
      RUNS,
    );
  });

  it("as a known vault value, in text or as a key", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 3 }), canary, async (doc, secret) => {
        const file = await written({ ...plantIn(doc, "note", `x${secret}y`), [secret]: [secret] }, [secret]);
        expect(file).not.toContain(secret);
      }),
      RUNS,
    );
  });
});
