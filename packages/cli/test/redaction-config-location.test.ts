import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadRedactionRules } from "../src/wiring/redaction-config.js";

const home = mkdtempSync(join(tmpdir(), "acp-redaction-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe("redaction.values a config may not hold", () => {
  it("are refused when the config is read, each at its FILE:LINE:COL", () => {
    const config = join(home, "config.yml");
    writeFileSync(config, 'version: "1"\nredaction:\n  values:\n    - "ok-[0-9]+"\n    - "(a)\\\\1"\n');
    let message = "";
    try {
      loadRedactionRules(home);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(
      new RegExp(`^${config.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:5:7: \`redaction\\.values\\.1\`: backreference`),
    );
  });
});
