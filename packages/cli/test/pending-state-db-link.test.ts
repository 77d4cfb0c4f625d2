import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./run.js";

const root = mkdtempSync(join(tmpdir(), "acp-pending-link-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("acp pending with a state.db that is a dangling symbolic link", () => {
  it("fails naming the link instead of saying nothing is pending", async () => {
    const home = mkdtempSync(join(root, "home-"));
    const statePath = join(home, "state.db");
    symlinkSync(join(root, "gone", "state.db"), statePath);
    const out = await runCli(["pending"], { env: { ACP_HOME: home } });
    expect(out.code).toBe(1);
    expect(out.stdout).not.toContain("no pending consent requests");
    expect(out.stderr).toContain(`\`${statePath}\` is a symbolic link: a home file must be a regular file you own`);
  });
});
