import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";

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
  }, 120_000);
});
