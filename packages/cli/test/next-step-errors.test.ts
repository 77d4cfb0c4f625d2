import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "./run.js";

// A fresh, empty home: what a new user has before the first call, the first test file or the first secret.
const home = mkdtempSync(join(tmpdir(), "acp-next-step-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const env = { HOME: home, ACP_HOME: home };

describe("an error a new user meets says what to do next", () => {
  it("acp audit verify and acp audit tail before anything was audited: no log yet, who writes it (exit 1)", async () => {
    const log = join(home, "audit.jsonl");
    for (const argv of [
      ["audit", "verify"],
      ["audit", "tail"],
    ]) {
      const out = await runCli(argv, { env, cwd: home });
      expect(out.code, argv.join(" ")).toBe(1);
      expect(out.stderr).toBe(
        `acp: no audit log yet at \`${log}\`: acp proxy and acp serve write it with the first call (or name a log FILE)\n`,
      );
    }
    const named = await runCli(["audit", "verify", "copy.jsonl"], { env, cwd: home });
    expect(named.stderr).toBe(`acp: cannot read audit log \`${join(home, "copy.jsonl")}\`: no such file\n`);
  });

  it("acp policy test without a path when the home has no policy.test.yml: name one (exit 1)", async () => {
    const out = await runCli(["policy", "test"], { env, cwd: home });
    expect(out.code).toBe(1);
    expect(out.stderr).toBe(
      `acp: cannot read test file \`${join(home, "policy.test.yml")}\`: no such file (acp init writes none: name a test file or a directory of *.test.yml files)\n`,
    );
  });

  it("acp intent new with a template nothing resembles lists the templates (exit 2)", async () => {
    const out = await runCli(["intent", "new", "-t", "bogus"], { env, cwd: home });
    expect(out.code).toBe(2);
    expect(out.stderr).toBe(
      "acp: unknown template `bogus` (expected one of summarise-my-day, triage-my-inbox, pay-a-bill; see --list)\n",
    );
  });

  it("acp approve / deny of an id nobody asked: where to look (exit 4)", async () => {
    const id = `cr_${"0".repeat(32)}`;
    for (const argv of [
      ["approve", id],
      ["deny", id],
    ]) {
      const out = await runCli(argv, { env, cwd: home });
      expect(out.code).toBe(4);
      expect(out.stderr).toBe(`acp: no pending consent request \`${id}\` (see \`acp pending\`)\n`);
    }
  });

  it("acp console-link before any acp serve: how to start one, and that it prints a link itself (exit 1)", async () => {
    const out = await runCli(["console-link"], { env, cwd: home });
    expect(out.code).toBe(1);
    expect(out.stderr).toBe(
      `acp: no running \`acp serve\` found in \`${home}\` (no serve.json): start it with \`acp serve\` (it prints a first sign-in link itself), then run this for more\n`,
    );
  });
});
