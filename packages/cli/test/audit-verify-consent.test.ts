import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { actionHash, sealAuditLine, type AuditEventV02 } from "@acp/core";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");

const POLICY = `version: "1"
default_action: deny
rules:
  - id: echo-asks
    match: { tool: echo }
    action: ask
    timeout: 60
`;

/**
 * Values a call may hold (arguments refuse strings over 1,000,000 characters) that make the consent event's
 * line longer than an audit line holds (1 MiB): the longest is cut to its length and SHA-256.
 */
const LONG = "y".repeat(999_000);
const NOTE = "z".repeat(60_000);

/** A value the default redaction rules replace (a GitHub token's shape). */
const SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

async function waitForPending(env: Record<string, string>): Promise<string> {
  for (let i = 0; i < 400; i++) {
    const out = await runCli(["pending", "--json"], { env, now: new Date() });
    const rows = JSON.parse(out.stdout || "[]") as { id: string }[];
    if (rows[0] !== undefined) return rows[0].id;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("no pending consent request appeared");
}

function readEvents(file: string): AuditEventV02[] {
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as AuditEventV02);
}

/** The events (checkpoints left out) chained and hashed again, as one who rewrites a log without the key would. */
function rechain(events: readonly AuditEventV02[]): string {
  let previous: string | null = null;
  const lines: string[] = [];
  for (const event of events) {
    if (event.event_type === "checkpoint") continue;
    const { event_hash: _hash, ...body } = event;
    void _hash;
    const sealed = sealAuditLine({ ...body, previous_event_hash: previous });
    previous = sealed.event.event_hash;
    lines.push(sealed.line);
  }
  return `${lines.join("\n")}\n`;
}

interface VerifyJson {
  valid: boolean;
  consentResponses: {
    checked: number;
    unchecked: number;
    notCheckable: { line: number; why: string; signatureChecked?: boolean }[];
  } | null;
  problem: { code: string; line: number } | null;
}

describe("acp audit verify checks the signed consent responses of a real proxy's log with the public key alone", () => {
  const root = tempRoot("audit-consent");
  let home = "";
  let env: Record<string, string> = {};
  let client: Client;

  async function answered(message: string, verb: "approve" | "deny", more: object = {}): Promise<void> {
    const call = client.callTool({ name: "echo", arguments: { message, ...more } }, undefined, { timeout: 60_000 });
    const id = await waitForPending(env);
    expect((await runCli([verb, id], { env, now: new Date() })).code).toBe(0);
    await call;
  }

  beforeAll(async () => {
    if (!existsSync(join(ROOT, "packages/cli/dist/wiring/proxy-wiring.js"))) {
      await promisify(execFile)("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT }).catch(() => undefined);
    }
    ({ home } = fixtureHome(root.dir));
    writeFileSync(join(home, "policy.yml"), POLICY);
    env = envFor(home);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ACP, "proxy", "--upstream", EVERYTHING, "--name", "everything"],
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stderr: "pipe",
    });
    client = new Client({ name: "consent-audit-agent", version: "1.0.0" });
    await client.connect(transport);
    await answered("hello from the agent", "approve");
    await answered("not this one", "deny");
    await answered(`use ${SECRET} please`, "approve");
    await answered(LONG, "approve", { note: NOTE });
    await client.close();
  }, 180_000);

  afterAll(() => root.cleanup());

  const publicKeyFile = (): string => join(home, "keys/public.key");
  const consentEvents = (): AuditEventV02[] =>
    readEvents(join(home, "audit.jsonl")).filter(
      (e) => e.event_type === "consent_approved" || e.event_type === "consent_denied",
    );

  /** The line (1-based, as verify counts them) of the `index`th consent outcome event. */
  const lineOf = (index: number): number => {
    const events = readEvents(join(home, "audit.jsonl"));
    const outcome = consentEvents()[index];
    return events.findIndex((e) => e.event_hash === outcome?.event_hash) + 1;
  };

  it("records the approved action beside each response, and the log verifies with the responses checked", async () => {
    const [approved, denied] = consentEvents();
    expect(approved?.metadata["consent_action"]).toEqual({
      server: "everything",
      tool: "echo",
      parameters: { message: "hello from the agent" },
    });
    expect(denied?.event_type).toBe("consent_denied");
    expect(denied?.metadata["consent_action"]).toEqual({
      server: "everything",
      tool: "echo",
      parameters: { message: "not this one" },
    });
    const out = await runCli(["audit", "verify", "--json"], { env });
    expect(out.code).toBe(0);
    const json = JSON.parse(out.stdout) as VerifyJson;
    expect(json.valid).toBe(true);
    expect(json.consentResponses).toEqual({
      checked: 2,
      unchecked: 2,
      notCheckable: [
        { line: lineOf(2), why: "withheld" },
        { line: lineOf(3), why: "omitted", signatureChecked: true },
      ],
    });
    const text = await runCli(["audit", "verify"], { env });
    expect(text.stdout).toContain("consent responses: 2 signatures checked");
    expect(text.stdout).toContain("2 not checkable:");
    // why each one could not be checked, with its line
    expect(text.stdout).toContain(
      `  1 at line ${lineOf(3)}: a value of the action was cut to fit the audit line: the signature verifies against the action hash recorded beside it, but the cut action cannot be matched to that hash\n`,
    );
    expect(text.stdout).toContain(
      `  1 at line ${lineOf(2)}: the action is withheld: redaction would have changed it, so nothing of it is recorded\n`,
    );
  });

  it("cuts a value longer than an audit line holds in the recorded action, so that response is not checkable", () => {
    const long = consentEvents()[3];
    expect(long?.event_type).toBe("consent_approved");
    const action = long?.metadata["consent_action"] as { parameters: { message: string } };
    expect(action.parameters.message).toMatch(/^\[omitted from the audit: 999000 characters, sha256:[0-9a-f]{64}\]$/);
    // the hash the signature is over, beside it: what the response is still checked by
    const hash = actionHash({ server: "everything", tool: "echo", parameters: { message: LONG, note: NOTE } });
    expect(long?.metadata["consent_action_hash"]).toBe(hash);
  });

  it("reports a cut event's consent response whose decision was edited in a re-hashed log", async () => {
    const events = readEvents(join(home, "audit.jsonl"));
    const cut = consentEvents()[3] as AuditEventV02;
    const at = events.findIndex((e) => e.event_hash === cut.event_hash);
    const response = cut.metadata["consent_response"] as Record<string, unknown>;
    const edited = [...events];
    edited[at] = { ...cut, metadata: { ...cut.metadata, consent_response: { ...response, decision: "denied" } } };
    const tampered = await verifyCopy("cut-decision.jsonl", rechain(edited));
    expect(tampered.code).toBe(3);
    expect(tampered.json.problem?.code).toBe("consent_signature_invalid");
  });

  it("withholds the action of a call holding a secret-shaped value, keeping nothing of it", () => {
    const secretEvent = consentEvents()[2];
    expect(secretEvent?.event_type).toBe("consent_approved");
    expect(secretEvent?.metadata["consent_action"]).toBeNull();
    expect(secretEvent?.metadata["consent_action_withheld"]).toBe("redacted");
    expect(secretEvent?.metadata).not.toHaveProperty("consent_action_hash");
    const log = readFileSync(join(home, "audit.jsonl"), "utf8");
    expect(log).not.toContain(SECRET);
    const hash = actionHash({ server: "everything", tool: "echo", parameters: { message: `use ${SECRET} please` } });
    expect(log).not.toContain(hash.slice("sha256:".length));
  });

  async function verifyCopy(name: string, text: string): Promise<{ code: number; json: VerifyJson }> {
    const file = join(root.dir, name);
    writeFileSync(file, text);
    const out = await runCli(["audit", "verify", file, "--public-key", publicKeyFile(), "--json"], { env });
    return { code: out.code, json: JSON.parse(out.stdout) as VerifyJson };
  }

  it("reports a consent response whose decision was edited in a re-hashed log: consent_signature_invalid, exit 3", async () => {
    const events = readEvents(join(home, "audit.jsonl"));
    // the copy re-hashed as it is verifies: only the edit below fails
    const intact = await verifyCopy("rechained.jsonl", rechain(events));
    expect(intact.code).toBe(0);
    expect(intact.json.consentResponses).toMatchObject({ checked: 2, unchecked: 2 });
    const at = events.findIndex((e) => e.event_type === "consent_denied");
    const denied = events[at] as AuditEventV02;
    const response = denied.metadata["consent_response"] as Record<string, unknown>;
    const edited = [...events];
    edited[at] = {
      ...denied,
      metadata: { ...denied.metadata, consent_response: { ...response, decision: "approved" } },
    };
    const tampered = await verifyCopy("decision.jsonl", rechain(edited));
    expect(tampered.code).toBe(3);
    expect(tampered.json.valid).toBe(false);
    expect(tampered.json.problem?.code).toBe("consent_signature_invalid");
  });

  it("reports a consent action whose parameters were edited in a re-hashed log", async () => {
    const events = readEvents(join(home, "audit.jsonl"));
    const at = events.findIndex((e) => e.event_type === "consent_approved");
    const approved = events[at] as AuditEventV02;
    const action = approved.metadata["consent_action"] as Record<string, unknown>;
    const edited = [...events];
    edited[at] = {
      ...approved,
      metadata: { ...approved.metadata, consent_action: { ...action, parameters: { message: "something else" } } },
    };
    const tampered = await verifyCopy("action.jsonl", rechain(edited));
    expect(tampered.code).toBe(3);
    expect(tampered.json.problem?.code).toBe("consent_signature_invalid");
    const line = edited.filter((e) => e.event_type !== "checkpoint").indexOf(edited[at]) + 1;
    expect(tampered.json.problem?.line).toBe(line);
  });
});
