import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { openAuditLog } from "../../src/index.js";
import { describeAuditLog } from "./audit-log.case.js";

const dir = mkdtempSync(join(tmpdir(), "acp-audit-case-"));
let n = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeAuditLog("jsonl file", async (options) => {
  const path = join(dir, `audit-${++n}.jsonl`);
  const log = await openAuditLog(path, options);
  return {
    log,
    lines: () => {
      const text = readFileSync(path, "utf8");
      return Promise.resolve(text === "" ? [] : text.slice(0, -1).split("\n"));
    },
  };
});
