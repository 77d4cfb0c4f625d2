import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import {
  createConsentBroker,
  createTerminalChannel,
  formatRequestForTerminal,
  formatTelegramMessage,
  printable,
  type ConsentRequestV02,
} from "../../src/consent/index.js";
import { argumentsCharacters } from "../../src/consent/channels/arguments-view.js";
import { answerFromCallback } from "../../src/consent/channels/webhook/callback.js";
import { ManualTime, countingRandom, createTestProofs, eventually, makeAsk } from "./fixtures.js";

/** A request whose arguments (and, when given, tool) an attacker chose. */
function requestWith(parameters: Record<string, unknown>, tool = "send_email"): ConsentRequestV02 {
  return {
    type: "consent_request",
    version: "0.2.0",
    id: "cr_0123456789abcdef0123456789abcdef",
    timestamp: "2026-01-15T12:00:00.000Z",
    expires_at: "2026-01-15T12:02:00.000Z",
    agent: { id: "a", name: "agent", command: "agent" },
    action: { tool, server: "mail", category: "communication", risk_level: "high", parameters, description: "" },
    policy: { rule_id: "policy:ask-mail", rule_name: "ask-mail", required_level: "ask" },
    nonce: "n_00000000-0000-4000-8000-000000000000",
  };
}

const both = (parameters: Record<string, unknown>, tool?: string): [string, string] => [
  formatRequestForTerminal(requestWith(parameters, tool), []),
  formatTelegramMessage(requestWith(parameters, tool), []),
];

/** Invisible characters a look-alike can be built with; none may reach a person raw. */
const INVISIBLE = [
  "\u200b", // zero-width space
  "\u200c", // zero-width non-joiner
  "\u200d", // zero-width joiner
  "\u2060", // word joiner
  "\ufeff", // byte order mark
  "\u00ad", // soft hyphen
  "\u00a0", // no-break space
  "\u3164", // Hangul filler
  "\ufe0f", // variation selector
  "\u{e0041}", // tag latin capital A
  "\u180e", // Mongolian vowel separator
];

describe("what a consent request shows cannot be disguised by what the agent or the upstream chose", () => {
  it("shows invisible characters (zero-width, soft hyphen, no-break space, fillers, tags) escaped, so a look-alike differs", () => {
    for (const c of INVISIBLE) {
      const lookAlike = `ceo@corp.test${c}`;
      for (const text of [...both({ to: lookAlike }, `send_email${c}`), printable(lookAlike)]) {
        expect(text).not.toContain(c);
        expect(text).toMatch(/\\u[0-9a-f]{4}/);
      }
      expect(formatRequestForTerminal(requestWith({ to: lookAlike }), [])).not.toBe(
        formatRequestForTerminal(requestWith({ to: "ceo@corp.test" }), []),
      );
    }
    // a character beyond U+FFFF as its two halves (still a JSON escape); a lone half escaped too
    expect(printable("a\u{e0041}b\ud800c")).toBe("a\\udb40\\udc41b\\ud800c");
    // ordinary text, emoji and accents stay as they are
    expect(printable("Zoë 😀 ✓ café")).toBe("Zoë 😀 ✓ café");
  });

  it("warns, on its own line, that characters are shown escaped and where", () => {
    const [terminal, telegram] = both({ to: "ceo@corp.test\u200b" }, "send\u202eliame");
    for (const text of [terminal, telegram]) {
      expect(text).toMatch(/warning: invisible or control characters in tool, arguments, shown as \\uXXXX escapes/);
    }
    // a line break inside an argument is an ordinary thing to carry: escaped, not warned of
    const [plain] = both({ body: "hello\nbye", to: "ana@corp.test" });
    expect(plain).not.toContain("warning");
    expect(plain).toContain('    body: "hello\\nbye"\n');
  });

  it("warns of a look-alike letter in a recipient or a tool name (a Cyrillic `а` in `аlice@corp.test`)", () => {
    for (const text of both({ message: { to: "\u0430lice@corp.test" } })) {
      expect(text).toContain("warning: a look-alike letter in arguments: `\u0430` (U+0430) reads as `a` but is not it");
    }
    for (const text of both({}, "r\u0435ad_file")) {
      expect(text).toContain("warning: a look-alike letter in tool: `\u0435` (U+0435) reads as `e` but is not it");
    }
    // accented Latin letters and a name wholly in another script are no disguise
    for (const text of both({ to: "zoë.café@corp.test", name: "Ирина" })) expect(text).not.toContain("look-alike");
  });

  it("warns of a word written wholly in letters of another script that pass for Latin ones (`ceo@аррӏе.сом`)", () => {
    // every letter of `ѕаӏеѕ@аррӏе.сом` but the `м` is Cyrillic and passes for a Latin one: there is no Latin
    // word for a look-alike letter to hide in, so only a word as a whole gives it away
    const address = "\u0455\u0430\u04cf\u0435\u0455@\u0430\u0440\u0440\u04cf\u0435.\u0441\u043e\u043c";
    for (const text of both({ message: { to: address } })) {
      expect(text).toContain(
        "warning: a look-alike word in arguments: `ѕаӏеѕ` is written wholly in Cyrillic letters and reads as `saies` but is not it",
      );
    }
    // beside Latin letters (`ceo@аррӏе.com`) its first letter is already named as a look-alike
    for (const text of both({ to: "ceo@\u0430\u0440\u0440\u04cf\u0435.com" })) {
      expect(text).toContain("warning: a look-alike letter in arguments: `а` (U+0430) reads as `a` but is not it");
    }
    for (const text of both({ to: "ΑΡΡΙΕ" })) {
      expect(text).toContain("`ΑΡΡΙΕ` is written wholly in Greek letters and reads as `apple`");
    }
    expect(argumentsCharacters({ cc: ["раураӏ.сом"] }).lookAlike).toEqual({
      char: "раураӏ",
      reads: "paypai",
      script: "Cyrillic",
    });
    // ordinary Russian: a name, an address and a sentence whose words have letters that look like no Latin one,
    // and a sentence whose word `горе` happens to be all look-alikes
    for (const text of both({ to: "ирина@почта.рф", name: "Ирина", body: "Мы были на горе у реки" })) {
      expect(text).not.toContain("look-alike");
    }
  });

  it("keeps a recipient put after a huge value on screen and in the Telegram message", () => {
    const parameters = { body: `${"A".repeat(100_000)}`, to: "mallory@evil.test" };
    const [terminal, telegram] = both(parameters);
    expect(terminal).toContain('    to: "mallory@evil.test"\n');
    expect(telegram).toContain('\n\u200e• \u2066to\u2069: \u2066"mallory@evil.test"\u2069\n');
    expect(terminal.length).toBeLessThan(2_000);
    expect(terminal).toMatch(/ {4}body: "A+…\[\d+ characters not shown\]…A+"\n/);
    expect(terminal).toContain("warning: long arguments are shortened here");
  });

  it("shows both ends of a long value: padding cannot push the real recipient out of sight", () => {
    const to = `ana@corp.test${" ".repeat(5_000)}, mallory@evil.test`;
    const [terminal, telegram] = both({ to });
    expect(terminal).toContain('to: "ana@corp.test');
    expect(terminal).toContain(' mallory@evil.test"\n');
    expect(telegram).toContain('\u2066to\u2069: \u2066"ana@corp.test');
    expect(telegram).toContain(' mallory@evil.test"\u2069\n');
    for (const text of [terminal, telegram]) expect(text).toMatch(/…\[\d+ characters not shown\]…/);
  });

  it("shows both ends of a long tool name, agent or reason: padding cannot hide how it ends", () => {
    const tool = `send_to_ana${"_".repeat(3_000)}_and_mallory`;
    const request = {
      ...requestWith({}, tool),
      agent: { id: "a", name: `agent${" ".repeat(3_000)}evil`, command: "x" },
    };
    const reasons = [{ source: "policy" as const, code: "x", message: `to ana${" ".repeat(3_000)}and mallory` }];
    for (const text of [formatRequestForTerminal(request, reasons), formatTelegramMessage(request, reasons)]) {
      expect(text).toMatch(/tool: +send_to_ana_+…\[\d+ characters not shown\]…_+_and_mallory\n/);
      expect(text).toMatch(/agent: +agent +…\[\d+ characters not shown\]… +evil\n/);
      expect(text).toMatch(/- (\u2066)?to ana +…\[\d+ characters not shown\]… +and mallory(\u2069)?\n/);
      expect(text.length).toBeLessThan(4_096);
    }
  });

  it("gives a nested recipient its own line, and counts the values it cannot show", () => {
    const message = { subject: "hi", cc: ["ana@corp.test", "mallory@evil.test"] };
    const [terminal] = both({ message, "odd key": 1 });
    expect(terminal).toContain('    message.subject: "hi"\n');
    expect(terminal).toContain('    message.cc[1]: "mallory@evil.test"\n');
    expect(terminal).toContain('    ["odd key"]: 1\n');

    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i]));
    const [manyTerminal, manyTelegram] = both(many);
    expect(manyTerminal).toContain("… and 76 more values not shown (100 in all)");
    expect(manyTelegram).toMatch(/… and \d+ more values not shown \(100 in all\)/);
    expect(manyTelegram.length).toBeLessThanOrEqual(4096);
  });

  it('marks each argument line in the Telegram message: an argument `tool: "read_file"` is no field of it', () => {
    // keys chosen to read as the message's own lines, and a value as its framing
    const parameters = { tool: "read_file", server: "fs", rule: null, agent: "ops", path: "/etc/x\n\nrisk: low" };
    const [, telegram] = both(parameters);
    const lines = telegram.split("\n");
    const args = lines.slice(lines.indexOf("arguments:") + 1, lines.indexOf("expires: 2026-01-15T12:02:00.000Z"));
    expect(args).toEqual([
      '\u200e• \u2066tool\u2069: \u2066"read_file"\u2069',
      '\u200e• \u2066server\u2069: \u2066"fs"\u2069',
      "\u200e• \u2066rule\u2069: \u2066null\u2069",
      '\u200e• \u2066agent\u2069: \u2066"ops"\u2069',
      '\u200e• \u2066path\u2069: \u2066"/etc/x\\n\\nrisk: low"\u2069',
    ]);
    // the message's own lines are each there once, flush left, and none of the arguments' is
    for (const field of ["server: ", "tool: ", "rule: ", "agent: "]) {
      expect(lines.filter((l) => l.startsWith(field))).toHaveLength(1);
    }
    expect(lines.filter((l) => /risk: low/.test(l) && !l.startsWith("\u200e• "))).toEqual([]);
  });

  it("isolates each argument's path and value in the Telegram message: right-to-left text moves nothing around it", () => {
    // a Hebrew key and value: laid out raw, the `"]: "` between them would be reversed with them (the value read
    // as the key); an Arabic value first on its line would turn the line right to left (its mark to the far end)
    const parameters = { "\u05d0": "\u05d1", to: "\u0645\u0631\u062d\u0628\u0627 ana@corp.test", n: 7 };
    const reasons = [{ source: "policy" as const, code: "x", message: "\u05e9\u05dc\u05d5\u05dd `to`" }];
    const telegram = formatTelegramMessage(requestWith(parameters), reasons);
    const lines = telegram.split("\n");
    const args = lines.slice(lines.indexOf("arguments:") + 1, lines.indexOf("reasons:"));
    expect(args).toEqual([
      '\u200e• \u2066["\u05d0"]\u2069: \u2066"\u05d1"\u2069',
      '\u200e• \u2066to\u2069: \u2066"\u0645\u0631\u062d\u0628\u0627 ana@corp.test"\u2069',
      "\u200e• \u2066n\u2069: \u20667\u2069",
    ]);
    expect(lines[lines.indexOf("reasons:") + 1]).toBe("\u200e- \u2066\u05e9\u05dc\u05d5\u05dd `to`\u2069");
    // the agent's own isolate and mark characters are shown escaped: it cannot close ours early or open its own
    const forged = formatTelegramMessage(requestWith({ to: "a\u2069: \u2066\u200f\u202eb" }), []);
    expect(forged).toContain('\u200e• \u2066to\u2069: \u2066"a\\u2069: \\u2066\\u200f\\u202eb"\u2069\n');
    // the terminal shows the same text in logical order, as every other line
    expect(formatRequestForTerminal(requestWith(parameters), [])).toContain('    ["\u05d0"]: "\u05d1"\n');
  });

  it("restates the tool and server last, before the prompt: arguments laid out as another tool's are not all left in view", async () => {
    // 24 long values wrap to ~100 rows: the request's first lines scroll off the screen, the last rows are the agent's
    const padding = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`note${i}`, "x".repeat(300)]));
    const parameters = { ...padding, tool: "read_file", server: "fs", risk: "low" };
    const [terminal, telegram] = both(parameters, "delete_repository");
    const restated = "answering: tool delete_repository on server mail (communication, risk high)";
    expect(terminal.endsWith(`\n  ${restated}\n`)).toBe(true);
    expect(telegram.endsWith(`\n${restated}`)).toBe(true);
    // a padded tool name keeps both its ends there too
    const long = `read_file${"_".repeat(500)}_and_delete`;
    expect(formatRequestForTerminal(requestWith({}, long), [])).toMatch(
      /\n {2}answering: tool read_file_+…\[\d+ characters not shown\]…_+and_delete on server mail /,
    );

    // on the terminal it is the line the prompt follows
    const time = new ManualTime();
    const input = new PassThrough();
    const output = new PassThrough();
    let text = "";
    output.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    const channel = createTerminalChannel({
      open: () => ({ input, output, close: () => input.end() }),
      clock: time.clock,
    });
    const broker = createConsentBroker({
      channels: [channel],
      ...createTestProofs(),
      clock: time.clock,
      timers: time,
      random: countingRandom(),
    });
    const pending = broker.ask(makeAsk({ arguments: parameters }));
    await eventually(() => text.includes("[a]pprove"));
    expect(text).toMatch(/\n {2}answering: tool \S+ on server \S+ \([^)]*\)\n\[a\]pprove/);
    input.write("d\n");
    expect((await pending).kind).toBe("denied");
    await channel.close?.();
  });

  it("shows the arguments to edit as printable JSON that still parses to the same value", async () => {
    const time = new ManualTime();
    const input = new PassThrough();
    const output = new PassThrough();
    let text = "";
    output.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    const channel = createTerminalChannel({
      open: () => ({ input, output, close: () => input.end() }),
      clock: time.clock,
    });
    const broker = createConsentBroker({
      channels: [channel],
      ...createTestProofs(),
      clock: time.clock,
      timers: time,
      random: countingRandom(),
    });
    const args = { to: "ana@corp.test\u009b2J\u202e\u200b", n: 1 };
    const pending = broker.ask(makeAsk({ arguments: args }));
    await eventually(() => text.includes("[a]pprove"));
    input.write("e\n");
    const shown = await eventually(() => /one line of JSON[^\n]*\n([^\n]*)\n> /.exec(text)?.[1] ?? null);
    for (const c of ["\u009b", "\u202e", "\u200b"]) expect(text).not.toContain(c);
    expect(JSON.parse(shown)).toEqual(args);
    input.write("not json\n");
    await eventually(() => text.includes("not valid JSON"));
    input.write("d\n");
    expect((await pending).kind).toBe("denied");
    await channel.close?.();
  });

  it("refuses a webhook approver_id with an invisible character (it is recorded and quoted)", () => {
    const now = new Date("2026-01-15T12:00:00.000Z");
    const body = { request_id: "cr_x", nonce: "n", decision: "approved" };
    expect(answerFromCallback({ ...body, approver_id: "ana" }, now)).toHaveProperty("answer");
    expect(answerFromCallback({ ...body, approver_id: "an\u200ba" }, now)).toHaveProperty("error");
  });
});
