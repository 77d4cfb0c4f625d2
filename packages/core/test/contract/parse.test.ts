import { describe, expect, it } from "vitest";
import { checkToolPrecheck, MAX_CONTRACT_EVENT_BYTES, parseContractEventJson } from "../../src/contract/index.js";

describe("parseContractEventJson", () => {
  it("parses JSON text", () => {
    expect(parseContractEventJson('{"a":[1,2]}')).toEqual({ ok: true, value: { a: [1, 2] } });
  });

  it("reports malformed JSON with line and column, without quoting the input", () => {
    const result = parseContractEventJson('{\n  "a": 1,\n  "secret": sk_live_123\n}');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues[0]).toMatchObject({ code: "contract_malformed_json", line: 3, column: 13 });
    expect(result.issues[0]?.message).toMatch(/^malformed JSON/);
    expect(result.issues[0]?.message).not.toContain("sk_live");
  });

  it("refuses text over the size cap without parsing it", () => {
    const big = `{"a":"${"x".repeat(MAX_CONTRACT_EVENT_BYTES)}"}`;
    expect(parseContractEventJson(big)).toEqual({
      ok: false,
      issues: [{ code: "contract_too_large", path: [], message: "event is larger than the 1048576-byte limit" }],
    });
  });

  it("counts UTF-8 bytes, not characters, against the cap", () => {
    const multibyte = `"${"é".repeat(MAX_CONTRACT_EVENT_BYTES / 2)}"`;
    expect(multibyte.length).toBeLessThan(MAX_CONTRACT_EVENT_BYTES);
    expect(parseContractEventJson(multibyte).ok).toBe(false);
    expect(parseContractEventJson(`"${"é".repeat(1000)}"`).ok).toBe(true);
  });
});

describe("parseContractEventJson error positions", () => {
  it.each([
    ["{", 1, 2, "unexpected end of input"],
    ['{"a" 1}', 1, 6, "unexpected character `1`"],
    ['{"a":1,}', 1, 8, "unexpected character `}`"],
    ["[1,2]]", 1, 6, "unexpected character `]`"],
    ['{"a":"x\ny"}', 1, 8, "unexpected character `U+000A`"],
    ['{"a":tru}', 1, 6, "unexpected character `t`"],
    ['{"a":[1,\n  {"b": nul}]}', 2, 9, "unexpected character `n`"],
    ["", 1, 1, "unexpected end of input"],
    ['"\\x"', 1, 3, "unexpected character `x`"],
  ])("%j fails at line %i column %i", (text, line, column, what) => {
    const result = parseContractEventJson(text);
    expect(result).toEqual({
      ok: false,
      issues: [{ code: "contract_malformed_json", path: [], message: `malformed JSON: ${what}`, line, column }],
    });
  });

  it("parses absurdly deep nesting without crashing; the check then refuses it as too deep", () => {
    const text = `{"proposed_arguments":${"[".repeat(400_000)}${"]".repeat(400_000)}}`;
    const parsed = parseContractEventJson(text);
    const envelope = checkToolPrecheck(parsed.ok ? parsed.value : null);
    expect(envelope.recommended_action).toBe("refuse");
    if (parsed.ok) expect(envelope.validation_errors[0]?.message).toBe("event has no JSON form: nested too deeply");
    else expect(parsed.issues[0]?.message).toBe("event is nested too deeply to parse");
  });

  it("finds the error in deeply nested text without exhausting the stack", () => {
    const text = `${"[".repeat(200_000)}x${"]".repeat(200_000)}`;
    const result = parseContractEventJson(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues[0]).toMatchObject({ line: 1, column: 200_001 });
  });
});
