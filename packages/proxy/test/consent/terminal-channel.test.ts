import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import {
  createConsentBroker,
  createTerminalChannel,
  formatRequestForTerminal,
  parseTerminalCommand,
  type ConsentRequestV02,
} from "../../src/consent/index.js";
import { runChannelCase, type ChannelHarness } from "./channel.case.js";
import { ManualTime, countingRandom, createTestProofs, makeAsk, eventually } from "./fixtures.js";
import { recordDeliveries } from "./recording.js";

function fakeTerminal(): {
  input: PassThrough;
  output: () => string;
  open: () => { input: PassThrough; output: PassThrough; close: () => void };
} {
  const input = new PassThrough();
  const output = new PassThrough();
  let text = "";
  output.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  return { input, output: () => text, open: () => ({ input, output, close: () => input.end() }) };
}

function terminalHarness(time: ManualTime): Promise<ChannelHarness> {
  const tty = fakeTerminal();
  const { channel, requests } = recordDeliveries(createTerminalChannel({ open: tty.open, clock: time.clock }));
  const type = (line: string): Promise<void> => {
    tty.input.write(`${line}\n`);
    return Promise.resolve();
  };
  return Promise.resolve({
    channel,
    deliveries: () => requests.length,
    shown: async (index) => {
      const request = await eventually(() => requests[index]);
      const text = await eventually(() => {
        const all = tty.output();
        const start = all.indexOf(`ACP consent request ${request.id}`);
        return start >= 0 && all.indexOf("[a]pprove", start) > 0 ? all.slice(start) : null;
      });
      return { id: request.id, nonce: request.nonce, text };
    },
    approve: (_shown, scope = "once") => type(scope === "session" ? "s" : "a"),
    approveWithModifications: (_shown, modifications) =>
      type(`e\n${JSON.stringify({ ...makeAsk().arguments, api_token: "[redacted]", ...modifications })}`),
    deny: () => type("d not today"),
    forge: async () => {
      await type("maybe");
      await type("f forever");
      await type("e\n{not json");
      await eventually(() => tty.output().includes("not valid JSON"));
    },
    settledAs: (shown) =>
      eventually(() => new RegExp(`\\(${shown.id}: ([^\\n]+)\\)\\n`).exec(tty.output())?.[1] ?? null),
    close: async () => {
      await channel.close?.();
    },
  });
}

runChannelCase("terminal", terminalHarness, {
  canModify: true,
  editRefusedAs:
    /approved with edits, but the edited arguments are refused by policy rule `no-etc`: rule `no-etc` matched: deny \(path \/etc\/shadow, with Bearer \[redacted\]\)/,
});

describe("terminal channel specifics", () => {
  it("reports itself unavailable without a terminal, and the broker denies instead of hanging", async () => {
    const time = new ManualTime();
    const channel = createTerminalChannel({ open: () => null });
    expect(await channel.isAvailable()).toBe(false);
    const progress: string[] = [];
    const broker = createConsentBroker({
      channels: [channel],
      ...createTestProofs(),
      clock: time.clock,
      timers: time,
      random: countingRandom(),
    });
    const outcome = await broker.ask(makeAsk({ onProgress: (m) => progress.push(m) }));
    expect(outcome).toMatchObject({ kind: "denied", reason: "no consent channel is available" });
    expect(progress.join("\n")).toContain("`terminal` is unavailable");
  });

  it("approves for a time window typed as `f 10m`, recorded in the response", async () => {
    const time = new ManualTime();
    const tty = fakeTerminal();
    const channel = createTerminalChannel({ open: tty.open, clock: time.clock });
    const broker = createConsentBroker({
      channels: [channel],
      ...createTestProofs(),
      clock: time.clock,
      timers: time,
      random: countingRandom(),
    });
    const pending = broker.ask(makeAsk());
    await eventually(() => tty.output().includes("[a]pprove"));
    tty.input.write("f 10m\n");
    const outcome = await pending;
    expect(outcome).toMatchObject({ kind: "approved", scope: { until: "2026-01-15T12:10:00.000Z" } });
    if (outcome.kind === "approved") {
      expect(outcome.consentResponse).toMatchObject({
        conditions: { scope: "window", single_use: false, valid_until: "2026-01-15T12:10:00.000Z" },
      });
    }
    expect(await broker.ask(makeAsk({ sessionId: "another-session" }))).toMatchObject({ kind: "approved" });
    time.advance(10 * 60_000);
    const later = broker.ask(makeAsk());
    await eventually(() => tty.output().split("[a]pprove").length === 3);
    tty.input.write("d\n");
    expect((await later).kind).toBe("denied");
    await channel.close?.();
  });

  it("shows the time left to answer beside the expiry, as acp pending does", async () => {
    const time = new ManualTime();
    const tty = fakeTerminal();
    const channel = createTerminalChannel({ open: tty.open, clock: time.clock });
    const broker = createConsentBroker({
      channels: [channel],
      ...createTestProofs(),
      clock: time.clock,
      timers: time,
      random: countingRandom(),
    });
    const pending = broker.ask(makeAsk({ timeoutMs: 292_000 }));
    await eventually(() => tty.output().includes("[a]pprove"));
    expect(tty.output()).toMatch(/ACP consent request cr_\w+ \(expires 2026-01-15T12:04:52\.000Z, in 4m 52s\)\n/);
    tty.input.write("d\n");
    expect((await pending).kind).toBe("denied");
    await channel.close?.();
  });

  it("shows control characters from a tool name, the agent or a reason escaped: a hostile name cannot redraw the prompt", () => {
    const request = {
      id: "cr_00000000000000000000000000000001",
      expires_at: "2026-01-01T00:02:00.000Z",
      action: {
        server: "evil",
        tool: "send\u001b[2K\r\u001b[1A  tool:      read_file",
        category: "write",
        risk_level: "medium",
        parameters: { to: "x" },
      },
      policy: { rule_id: "policy:ask-writes" },
      agent: { name: "agent\u009b2J" },
    } as unknown as ConsentRequestV02;
    const reasons = [
      { source: "session", code: "x", message: "send to `a\u202eelpmaxe.rekcatta@b`\nserver: trusted" },
    ] as const;
    const text = formatRequestForTerminal(request, reasons);
    for (const c of ["\u001b", "\u009b", "\u202e", "\r"]) expect(text).not.toContain(c);
    expect(text).toContain("tool:      send\\u001b[2K\\u000d\\u001b[1A  tool:      read_file");
    expect(text).toContain("agent:     agent\\u009b2J");
    expect(text).toContain("- send to `a\\u202eelpmaxe.rekcatta@b`\\u000aserver: trusted");
    // the nine lines of the request, one argument, the warning that characters are shown escaped, what is answered
    expect(text.split("\n")).toHaveLength(14);
    expect(text).toContain("  ! warning: invisible or control characters in tool, agent, reasons, shown as");
  });

  it("names what asked: the rule, or the session runtime and its check when no rule did (not the policy's `default`)", () => {
    const request = (ruleId: string): ConsentRequestV02 =>
      ({
        id: "cr_00000000000000000000000000000002",
        expires_at: "2026-01-01T00:02:00.000Z",
        action: { server: "mail", tool: "send", category: "communication", risk_level: "high", parameters: {} },
        policy: { rule_id: ruleId },
        agent: { name: "agent" },
      }) as unknown as ConsentRequestV02;
    const session = [
      { source: "session", code: "provenance_tainted", message: "text from `mail.read` wants to send email to `x`" },
      { source: "policy", code: "rule_matched", message: "rule `allow-mail` matched: allow", rule: "allow-mail" },
    ] as const;
    const bySession = formatRequestForTerminal(request("default"), session);
    expect(bySession).toContain("  asked by:  session (provenance_tainted)\n");
    expect(bySession).not.toContain("rule:      default");
    // the policy's default action asking is still `default`; a rule is named as before
    const byDefault = [{ source: "policy", code: "default_action", message: "no rule matched: ask" }] as const;
    expect(formatRequestForTerminal(request("default"), byDefault)).toContain("  rule:      default\n");
    expect(formatRequestForTerminal(request("policy:ask-mail"), session)).toContain("  rule:      policy:ask-mail\n");
  });

  it("understands the answers a person types", () => {
    expect(parseTerminalCommand(" A ")).toEqual({ kind: "approve", scope: "once" });
    expect(parseTerminalCommand("session")).toEqual({ kind: "approve", scope: "session" });
    expect(parseTerminalCommand("f 2h")).toEqual({ kind: "window", duration: "2h" });
    expect(parseTerminalCommand("deny too risky")).toEqual({ kind: "deny", reason: "too risky" });
    expect(parseTerminalCommand("e")).toEqual({ kind: "edit" });
    expect(parseTerminalCommand("sure")).toEqual({ kind: "unknown", text: "sure" });
  });
});
