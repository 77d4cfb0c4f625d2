import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "./run.js";

const dir = fileURLToPath(new URL("../../../examples/attacks/", import.meta.url));

interface Expectation {
  readonly class: string;
  readonly intent: string;
  readonly calls: Readonly<Record<string, "accept" | "stopped">>;
  readonly why: string;
}

const expected = (
  JSON.parse(readFileSync(join(dir, "expected.json"), "utf8")) as { traces: Record<string, Expectation> }
).traces;

const THREAT_CLASSES = [
  "indirect prompt injection",
  "confused deputy",
  "cross-tool escalation",
  "instruction smuggling",
  "benign look-alike",
];

interface Line {
  readonly trace: string;
  readonly index: number;
  readonly route: string;
  readonly reasons: readonly { source: string; code: string }[];
}

async function replay(trace: string, intent: string): Promise<Line[]> {
  const argv = ["replay", "--policy", "policy.yml", "--session-settings", "session.yml", "--intent", intent, trace];
  const out = await runCli(argv, { cwd: dir });
  expect(out.stderr.startsWith("replayed 1 trace"), out.stderr).toBe(true);
  expect(out.code).toBe(0);
  return out.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);
}

describe("examples/attacks", () => {
  it("records an expected outcome for every trace, and every threat class has traces", () => {
    const traces = readdirSync(dir).filter((f) => f.endsWith(".jsonl"));
    expect(traces.sort()).toEqual(Object.keys(expected).sort());
    for (const cls of THREAT_CLASSES) expect(Object.values(expected).some((e) => e.class === cls)).toBe(true);
  });

  for (const [trace, want] of Object.entries(expected)) {
    it(`${want.class}: ${trace} — ${want.why}`, async () => {
      const lines = await replay(trace, want.intent);
      const got = Object.fromEntries(lines.map((l) => [String(l.index), l.route === "accept" ? "accept" : "stopped"]));
      expect(got).toEqual(want.calls);
      for (const line of lines.filter((l) => l.route !== "accept")) {
        expect(line.reasons.some((r) => r.source === "session" || r.source === "policy")).toBe(true);
      }
    });
  }

  it("stops every attacker call with the session's reasons even with the open intent", async () => {
    const attacks = Object.entries(expected).filter(([, e]) => e.class !== "benign look-alike");
    const argv = ["replay", "--policy", "policy.yml", "--session-settings", "session.yml", ...attacks.map(([t]) => t)];
    const out = await runCli(argv, { cwd: dir });
    expect(out.code).toBe(0);
    const lines = out.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Line);
    const stopped = lines.filter((l) => expected[l.trace]?.calls[String(l.index)] === "stopped");
    const leaks = stopped.filter((l) => l.route === "accept").map((l) => `${l.trace}#${l.index}`);
    // Without an intent only provenance and transitions judge; what the intent alone stopped may pass.
    const intentOnly = [
      "ipi-calendar-exfil.jsonl#5",
      "cross-tool-calendar-to-inbox.jsonl#3",
      "ipi-webpage-payment.jsonl#3",
    ];
    expect(leaks.filter((l) => !intentOnly.includes(l))).toEqual([]);
  });
});
