import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "./run.js";

const EXAMPLE = fileURLToPath(new URL("../../../spec/examples/consent-graph.json", import.meta.url));
let home: string;
let env: Record<string, string>;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "acp-graph-check-"));
  env = { HOME: home, ACP_HOME: home };
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const check = (...args: string[]) => runCli(["graph", "check", ...args, "--graph", EXAMPLE], { env });

describe("acp graph check", () => {
  it("imessage send_vip 0.9 prints VISIBLE -- proceed and notify, exit 0", async () => {
    const out = await check("imessage", "send_vip", "0.9");
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^VISIBLE -- proceed and notify: `imessage\.send_vip` requires approval/);
  });

  it("self_modification modify_soul_md 0.99 prints BLOCKED, exit 3", async () => {
    const out = await check("self_modification", "modify_soul_md", "0.99");
    expect(out.code).toBe(3);
    expect(out.stdout).toMatch(/^BLOCKED -- do not execute; alert the operator: /);
  });

  it("FORCED below the threshold and for an unreviewed autonomous tier, exit 3", async () => {
    expect((await check("email", "send", "0.5")).stdout).toMatch(/^FORCED -- ask first/);
    const decayed = await check("email", "read");
    expect(decayed.code).toBe(3);
    expect(decayed.stdout).toContain("never been reviewed");
  });

  it("AUTONOMOUS after a review, exit 0", async () => {
    expect((await runCli(["graph", "review", "--graph", EXAMPLE], { env })).code).toBe(0);
    const out = await check("email", "read");
    expect(out.stdout).toMatch(/^AUTONOMOUS -- execute and log/);
    expect(out.code).toBe(0);
  });

  it("an unclassified action is BLOCKED, exit 3", async () => {
    const out = await check("email", "wire_money", "1");
    expect(out.code).toBe(3);
    expect(out.stdout).toContain("unclassified actions are never allowed");
  });

  it("an invalid confidence or threshold exits 4", async () => {
    for (const bad of ["1.5", "abc", "-0.1", "NaN", ""]) {
      const out = await check("email", "send", bad);
      expect(out.code).toBe(4);
      expect(out.stderr).toContain("invalid confidence");
    }
    expect((await check("email", "send", "0.9", "--threshold", "2")).code).toBe(4);
  });

  it("honours --threshold and --proposal", async () => {
    expect((await check("email", "send", "0.9", "--threshold", "0.95")).code).toBe(3);
    const proposal = JSON.stringify({ diff: "-a\n+b", undo: "revert", proposed_at: "2026-01-15T12:00:00Z" });
    const out = await check("self_modification", "update_lessons_md", "0.99", "--proposal", proposal);
    expect(out.stdout).toMatch(/^FORCED -- defer until 2026-01-15T14:00:00.000Z, then ask/);
    // a one-off check sees the proposal now: an earlier proposed_at does not shorten the cooling period
    const backdated = JSON.stringify({ diff: "-a\n+b", undo: "revert", proposed_at: "2026-01-15T09:00:00Z" });
    const later = await check("self_modification", "update_lessons_md", "0.99", "--proposal", backdated);
    expect(later.code).toBe(3);
    expect(later.stdout).toMatch(/^FORCED -- defer until 2026-01-15T14:00:00.000Z, then ask/);
    expect(later.stdout).toContain("ACP first saw it at 2026-01-15T12:00:00.000Z");
    expect((await check("self_modification", "update_lessons_md", "0.99", "--proposal", "[]")).code).toBe(4);
  });

  it("--json prints the outcome", async () => {
    const out = await check("imessage", "send_vip", "0.9", "--json");
    expect(JSON.parse(out.stdout)).toMatchObject({ outcome: "VISIBLE", tier: "requires_approval", domain: "imessage" });
  });

  it("says how to create the default graph when it is missing, exit 1", async () => {
    const out = await runCli(["graph", "check", "email", "read"], { env });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`cannot read consent graph \`${join(home, "consent-graph.json")}\`: no such file`);
    // the hint writes a graph itself: an installed acp has no spec/ directory to copy from
    expect(out.stderr).not.toContain("spec/examples");
    expect(out.stderr).toContain(`> ${join(home, "consent-graph.json")}\``);
  });

  it("an invalid graph exits 4 with FILE:LINE:COL lines", async () => {
    const file = join(home, "bad.json");
    writeFileSync(file, '{"email": {"autonomus": []}}');
    const out = await runCli(["graph", "check", "email", "read", "--graph", file], { env });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain(`${file}:1:12: unknown key \`autonomus\` in \`email\` (did you mean \`autonomous\`)`);
  });

  it("a malformed review record is ignored with a warning (never reviewed)", async () => {
    writeFileSync(join(home, "consent-graph.reviews.json"), "{oops");
    const out = await check("email", "read");
    expect(out.code).toBe(3);
    expect(out.stderr).toContain("warning: ignoring review record");
  });

  it("--help teaches with examples", async () => {
    const out = await runCli(["graph", "check", "--help"], { env });
    expect(out.stdout).toContain("acp graph check imessage send_vip 0.9 --graph graph.json");
  });
});
