import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { parse } from "yaml";
import { createSession } from "@acp/core";
import { runCli } from "./run.js";
import { INTENT_TEMPLATES } from "../src/intent/templates.js";

describe("acp intent new", () => {
  it("lists every template with what it asks for", async () => {
    const out = await runCli(["intent", "new", "--list"]);
    expect(out.code).toBe(0);
    for (const t of INTENT_TEMPLATES) expect(out.stdout).toContain(t.name);
  });

  it("writes a valid intent with the values the person names, which the session runtime enforces", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-intent-"));
    const file = join(dir, "day.yml");
    const out = await runCli([
      "intent",
      "new",
      "-t",
      "summarise-my-day",
      "--trusted",
      "recipients=me@example.com",
      "-o",
      file,
    ]);
    expect(out.code).toBe(0);
    const intent = parse(readFileSync(file, "utf8")) as { trusted_values: { recipients: string[] } };
    expect(intent.trusted_values.recipients).toEqual(["me@example.com"]);
    const session = createSession({
      now: () => new Date("2026-03-02T10:00:00Z"),
      random: (n) => randomBytes(n),
      authorityKey: randomBytes(32),
      settings: { require_plan: false },
    });
    session.setIntent(intent);
    session.start();
    expect(session.evaluate({ server: "mail", tool: "delete_email", arguments: { id: "1" } }).route).toBe("refuse");
    expect(
      session.evaluate({ server: "mail", tool: "send_email", arguments: { to: "me@example.com", body: "hi" } }).route,
    ).toBe("accept");
  });

  it("every shipped template validates once its values are named", async () => {
    for (const t of INTENT_TEMPLATES) {
      const trusted = Object.keys(t.asks).map((name) => `${name}=value-for-${name}`);
      const out = await runCli(["intent", "new", "-t", t.name, ...trusted.flatMap((v) => ["--trusted", v])]);
      expect(out.code).toBe(0);
      expect(out.stdout).toContain("allowed_actions");
    }
  });

  it("names an unknown template with a suggestion, and refuses malformed --trusted (exit 2)", async () => {
    const typo = await runCli(["intent", "new", "-t", "pay-a-bil"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("did you mean `pay-a-bill`");
    expect((await runCli(["intent", "new", "-t", "pay-a-bill", "--trusted", "accounts"])).code).toBe(2);
  });

  it("says on stderr, naming the flag, when a value the template asks for is left empty (the intent is still written)", async () => {
    const out = await runCli(["intent", "new", "-t", "pay-a-bill"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("accounts: []");
    expect(out.stderr).toBe(
      "acp: notice: no `accounts` given (the IBAN or account the bill is paid to): the intent trusts none, so every call that uses one asks you; name it with --trusted accounts=VALUE\n",
    );
    const named = await runCli(["intent", "new", "-t", "pay-a-bill", "--trusted", "accounts=DE89370400440532013000"]);
    expect(named.stderr).toBe("");
    // a list the template calls optional may stay empty without a word
    expect((await runCli(["intent", "new", "-t", "triage-my-inbox"])).stderr).toBe("");
  });

  it("refuses a --trusted name the template does not ask for (a typo would leave the asked value empty), exit 2", async () => {
    const out = await runCli(["intent", "new", "-t", "pay-a-bill", "--trusted", "acounts=DE89370400440532013000"]);
    expect(out.code).toBe(2);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain(
      "the template asks for no `acounts` (did you mean `accounts`); it asks for `accounts`",
    );
    const far = await runCli(["intent", "new", "-t", "pay-a-bill", "--trusted", "foo=bar"]);
    expect(far.code).toBe(2);
    expect(far.stderr).toContain("asks for no `foo`; it asks for `accounts`");
  });
});
