import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../src/main.js";
import { runCli } from "./run.js";

const WRITE_MISSING_CONFIRMATION = {
  tool_name: "send_email",
  tool_category: "write",
  authorization_state: "user_claimed",
  evidence_refs: ["draft_id:123"],
  risk_domain: "customer_support",
  proposed_arguments: { to: "customer@example.com" },
  recommended_route: "accept",
};
const PUBLIC_READ = {
  tool_name: "search_docs",
  tool_category: "public_read",
  authorization_state: "none",
  evidence_refs: [],
  risk_domain: "research",
  proposed_arguments: { query: "Agent Action Contract v1" },
  recommended_route: "accept",
};

const dir = mkdtempSync(join(tmpdir(), "acp-check-"));
function file(name: string, content: string | Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

interface Envelope {
  gate_decision: string;
  recommended_action: string;
  hard_blockers: string[];
  validation_errors: { code: string; path: unknown[]; line?: number }[];
  architecture_decision: { route: string };
}
const envelopeOf = (stdout: string): Envelope => JSON.parse(stdout) as Envelope;

describe("acp check", () => {
  it("exits 0 and prints a passing envelope when the tool may execute (stdin)", async () => {
    const out = await runCli(["check"], { stdin: JSON.stringify(PUBLIC_READ) });
    expect(out.code).toBe(0);
    expect(envelopeOf(out.stdout)).toMatchObject({
      gate_decision: "pass",
      recommended_action: "accept",
      hard_blockers: [],
    });
    expect(out.stderr).toBe("");
  });

  it("exits 3 when the tool may not execute, naming the route and blockers on stderr", async () => {
    const out = await runCli(["check", "-"], { stdin: JSON.stringify(WRITE_MISSING_CONFIRMATION) });
    expect(out.code).toBe(3);
    expect(envelopeOf(out.stdout)).toMatchObject({ gate_decision: "fail", recommended_action: "ask" });
    expect(out.stderr).toBe("acp check: route `ask`: missing_confirmation_for_write\n");
  });

  it("reads a file argument", async () => {
    const path = file("private.json", JSON.stringify({ ...PUBLIC_READ, tool_category: "private_read" }));
    const out = await runCli(["check", path]);
    expect(out.code).toBe(3);
    expect(envelopeOf(out.stdout).recommended_action).toBe("defer");
  });

  it("resolves a relative file against the working directory", async () => {
    file("relative.json", JSON.stringify(PUBLIC_READ));
    const out = await runCli(["check", "relative.json"], { cwd: dir });
    expect(out.code).toBe(0);
  });

  it("exits 4 on schema errors, printing the envelope and one stderr line per problem with its path", async () => {
    const event = { ...PUBLIC_READ, tool_category: "wirte", evidence_refs: [{ source_id: "x", kind: "nope" }] };
    const out = await runCli(["check"], { stdin: JSON.stringify(event) });
    expect(out.code).toBe(4);
    const envelope = envelopeOf(out.stdout);
    expect(envelope.recommended_action).toBe("refuse");
    expect(envelope.validation_errors.map((i) => i.code)).toEqual(["unknown_tool_category", "contract_invalid_value"]);
    expect(out.stderr.split("\n")).toEqual([
      "acp check: <stdin>: tool_category: unknown tool category `wirte` (expected public_read, private_read, write or unknown) (did you mean `write`)",
      "acp check: <stdin>: evidence_refs[0].kind: unknown evidence kind `nope` (expected user_message, assistant_message, tool_result, policy, auth_event, approval, system_state, audit_record or other)",
      "",
    ]);
  });

  it("exits 4 on malformed JSON with FILE:LINE:COL", async () => {
    const path = file("broken.json", '{\n  "tool_name": "x",\n  oops\n}');
    const out = await runCli(["check", path]);
    expect(out.code).toBe(4);
    expect(envelopeOf(out.stdout).validation_errors[0]).toMatchObject({ code: "contract_malformed_json", line: 3 });
    expect(out.stderr).toBe(`acp check: ${path}:3:3: malformed JSON: unexpected character \`o\`\n`);
  });

  it("exits 4 on an event that gives a field twice (JSON.parse would keep the last, public_read)", async () => {
    const text = JSON.stringify(PUBLIC_READ).replace('"tool_category"', '"tool_category":"unknown","tool_category"');
    const out = await runCli(["check"], { stdin: text });
    expect(out.code).toBe(4);
    expect(envelopeOf(out.stdout)).toMatchObject({ recommended_action: "refuse" });
    expect(envelopeOf(out.stdout).validation_errors[0]).toMatchObject({
      code: "contract_duplicate_key",
      path: ["tool_category"],
    });
  });

  it("exits 4 on arguments that cannot be carried exactly (an integer beyond 2^53-1, a lone surrogate)", async () => {
    for (const [args, code] of [
      ['{"id":1234567890123456789}', "contract_unsafe_integer"],
      ['{"q":"\\ud800"}', "contract_not_canonical"],
    ] as const) {
      const text = JSON.stringify(PUBLIC_READ).replace('{"query":"Agent Action Contract v1"}', args);
      const out = await runCli(["check"], { stdin: text });
      expect(out.code).toBe(4);
      expect(envelopeOf(out.stdout).validation_errors[0]?.code).toBe(code);
    }
  });

  it("exits 4 on an empty stdin", async () => {
    const out = await runCli(["check"], { stdin: "" });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain("malformed JSON: unexpected end of input");
  });

  it("exits 4 on an oversized file without reading it whole", async () => {
    const path = file("big.json", `{"tool_name":"${"x".repeat(1024 * 1024 + 10)}"}`);
    const out = await runCli(["check", path]);
    expect(out.code).toBe(4);
    expect(out.stderr).toBe(`acp check: ${path}: event is larger than the 1048576-byte limit\n`);
    expect(envelopeOf(out.stdout).validation_errors[0]?.code).toBe("contract_too_large");
  });

  it("exits 4 on oversized stdin", async () => {
    const out = await runCli(["check"], { stdin: " ".repeat(1024 * 1024 + 1) });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain("larger than the 1048576-byte limit");
  });

  it("exits 4 on a file that is not UTF-8", async () => {
    const out = await runCli(["check", file("latin1.json", new Uint8Array([0x7b, 0xff, 0x7d]))]);
    expect(out.code).toBe(4);
    expect(out.stderr).toContain("not valid UTF-8");
  });

  it("exits 1 on a file that cannot be read", async () => {
    const out = await runCli(["check", join(dir, "missing.json")]);
    expect(out.code).toBe(1);
    expect(out.stdout).toBe("");
    expect(out.stderr).toBe(`acp: cannot read \`${join(dir, "missing.json")}\`: no such file\n`);
    expect((await runCli(["check", dir])).code).toBe(1);
  });

  it("prints one line with --compact", async () => {
    const out = await runCli(["check", "--compact"], { stdin: JSON.stringify(PUBLIC_READ) });
    expect(out.stdout.trim().split("\n")).toHaveLength(1);
    expect(envelopeOf(out.stdout).gate_decision).toBe("pass");
  });

  it("explains itself in --help with a document example and the exit codes", async () => {
    const out = await runCli(["check", "--help"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('"tool_name":"send_email"');
    expect(out.stdout).toContain("0  the tool may execute");
    expect(out.stdout).toContain("4  the event is invalid");
  });

  it("the example in --help routes ask and exits 3", async () => {
    const help = (await runCli(["check", "--help"])).stdout;
    const example = /echo '(.*)' > event.json/.exec(help)?.[1] ?? "";
    const out = await runCli(["check"], { stdin: example });
    expect(out.code).toBe(3);
    expect(envelopeOf(out.stdout).architecture_decision.route).toBe("ask");
  });
});

describe("acp check at a terminal", () => {
  it("exits 2 with a hint instead of waiting for input when stdin is a terminal and no FILE is given", async () => {
    let stderr = "";
    const code = await run(["check"], {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (stderr += s) },
      readStdin: () => Promise.reject(new Error("must not read a terminal")),
      stdinIsTTY: true,
      env: {},
      cwd: dir,
      now: () => new Date("2026-01-15T12:00:00Z"),
    });
    expect(code).toBe(2);
    expect(stderr).toBe("acp: no event given: pass FILE, or pipe the event JSON on stdin (see --help)\n");
  });
});
