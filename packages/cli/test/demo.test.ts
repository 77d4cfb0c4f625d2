import { execFile } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { demoOutcome } from "../src/commands/demo.js";
import { runCli } from "./run.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");

interface DemoJson {
  stopped: boolean;
  audit_intact: boolean;
  audit_events: number;
  without_acp: { sent: { to: string }[] };
  with_acp: { sent: { to: string }[]; steps: { tool: string; ok: boolean; arguments: { to?: string } }[] };
  consent_response: { decision: string; proof: { signature: string } } | null;
  reasons: { source: string; message: string }[];
  session_asks: {
    tool: string;
    to: string | null;
    decision: string | null;
    reasons: { source: string; code: string }[];
  }[];
}

describe("acp demo", () => {
  beforeAll(async () => {
    if (!existsSync(join(ROOT, "packages/cli/dist/demo/servers/mail-server.js"))) {
      await promisify(execFile)("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT }).catch(() => undefined);
    }
  }, 180_000);

  it("shows the inbox leaving without ACP and stopped, signed and audited with ACP", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [ACP, "demo", "--json"], {
      cwd: ROOT,
      env: { PATH: process.env["PATH"] ?? "", HOME: "/nonexistent-home" },
      timeout: 120_000,
    });
    const out = JSON.parse(stdout) as DemoJson;
    expect(out.without_acp.sent.map((m) => m.to)).toContain("mark@attacker.example");
    expect(out.with_acp.sent.map((m) => m.to)).toEqual(["me@example.com"]);
    const exfiltration = out.with_acp.steps.find(
      (s) => s.tool === "send_email" && s.arguments.to === "mark@attacker.example",
    );
    expect(exfiltration?.ok).toBe(false);
    expect(out.with_acp.steps.find((s) => s.tool === "read_events")?.ok).toBe(true);
    expect(out.consent_response?.decision).toBe("denied");
    expect(out.consent_response?.proof.signature).toMatch(/^[0-9a-f]{128}$/);
    expect(out.audit_intact).toBe(true);
    // the person sees the semantic question of the session runtime, not only a rule name
    expect(out.reasons.map((r) => r.message)).toContain(
      "text from `calendar.read_events` wants to send email to `mark@attacker.example`",
    );
    expect(out.stopped).toBe(true);
    // the starter `session:` settings of `acp init`: after the invite, the calls the policy allows ask too;
    // the scripted person approves reading the inbox and the mail to the user, and the summary goes out
    expect(out.session_asks.map((a) => [a.tool, a.to, a.decision])).toEqual([
      ["list_inbox", null, "approved"],
      ["send_email", "me@example.com", "approved"],
    ]);
    for (const ask of out.session_asks) {
      expect(ask.reasons.find((r) => r.source === "session")?.code).toBe("instructions_seen");
    }
    expect(out.with_acp.steps.map((s) => [s.tool, s.ok])).toEqual([
      ["read_events", true],
      ["list_inbox", true],
      ["send_email", false],
      ["send_email", true],
    ]);
  }, 120_000);

  it("tells the story: what the session settings asked, and why the inbox did not leave", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [ACP, "demo"], {
      cwd: ROOT,
      env: { PATH: process.env["PATH"] ?? "", HOME: "/nonexistent-home" },
      timeout: 120_000,
    });
    expect(stdout).toMatch(/✔ list_inbox {3}ask session → approved by the person/);
    expect(stdout).toMatch(/✘ send_email → mark@attacker\.example {3}ask policy:mail-to-anyone-else/);
    expect(stdout).toMatch(/✔ send_email → me@example\.com {3}ask session → approved by the person/);
    expect(stdout).toContain("The starter `session:` settings of `acp init`");
    expect(stdout).toContain("mail that left: me@example.com\n");
    expect(stdout).toContain("With ACP it did not.");
    // and what to do next, as the last line
    expect(stdout.trimEnd().split("\n").at(-1)).toBe(
      "Next: `acp demo --interactive` to answer yourself; `acp init`, then `acp proxy --upstream '…'` in front of your MCP server (`acp docs guides/proxy`).",
    );
  }, 120_000);

  it("a person who approved the hijacked mail (--interactive) is told so, not that the demo misbehaved", () => {
    const approved = demoOutcome({ stopped: false, approvedByPerson: true, interactive: true });
    expect(approved[0]).toBe(
      "You approved the mail to mark@attacker.example, so your inbox left: ACP stopped the call and asked, and the person has the last word.",
    );
    expect(approved.join("\n")).not.toContain("did not show the expected outcome");
    expect(demoOutcome({ stopped: false, approvedByPerson: false, interactive: false })[0]).toContain(
      "did not show the expected outcome: that is a bug",
    );
    expect(demoOutcome({ stopped: true, approvedByPerson: false, interactive: true })[1]).toMatch(/^Next: `acp init`/);
  });

  it("what to do next points at a page installed with acp, not at the repository's README", () => {
    for (const interactive of [true, false]) {
      const next = demoOutcome({ stopped: true, approvedByPerson: false, interactive })[1] ?? "";
      expect(next).toContain("(`acp docs guides/proxy`)");
      expect(next).not.toContain("README");
    }
  });

  it("--keep keeps a home whose key opens with the passphrase it prints", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [ACP, "demo", "--keep", "--json"], {
      cwd: ROOT,
      env: { PATH: process.env["PATH"] ?? "", HOME: "/nonexistent-home" },
      timeout: 120_000,
    });
    const kept = JSON.parse(stdout) as { home: string; passphrase: string };
    try {
      expect(kept.passphrase.length).toBeGreaterThan(16);
      const doctor = await runCli(["doctor", "--json"], {
        env: { HOME: "/nonexistent-home", ACP_HOME: kept.home, ACP_PASSPHRASE: kept.passphrase },
      });
      const checks = (JSON.parse(doctor.stdout) as { checks: { name: string; status: string }[] }).checks;
      expect(checks.filter((c) => c.status === "fail").map((c) => c.name)).not.toContain("private key");
      expect(checks.some((c) => /key/.test(c.name) && c.status === "ok")).toBe(true);
    } finally {
      rmSync(dirname(kept.home), { recursive: true, force: true });
    }
  }, 120_000);

  it("--interactive without a terminal stops at once with exit 2 instead of waiting for an answer", async () => {
    const out = await runCli(["demo", "--interactive"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("--interactive asks you at the terminal, and there is none");
    expect(out.stdout).toBe("");
  });
});
