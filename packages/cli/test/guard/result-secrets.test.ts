import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import { checkResultSecrets } from "../../src/guard/result-secrets.js";

const SECRET = "tok_live_5ecret_7731";
const secrets = (): readonly string[] => [SECRET];
const shown = (value: unknown): unknown => {
  const checked = checkResultSecrets(secrets, value);
  if (checked.kind !== "shown") throw new Error(`withheld: ${checked.why}`);
  return checked.value;
};
const withheld = (value: unknown): string => {
  const checked = checkResultSecrets(secrets, value);
  if (checked.kind !== "withheld") throw new Error("shown");
  return checked.why;
};

class Receipt {
  constructor(readonly token: string) {}
}

describe("checkResultSecrets: a vault value is replaced wherever a result can hold it", () => {
  it("in strings, plain objects, arrays and key names, as before", () => {
    expect(shown(`Bearer ${SECRET}`)).toBe("Bearer [REDACTED]");
    expect(shown({ a: [SECRET], [SECRET]: 1 })).toEqual({ a: ["[REDACTED]"], "[REDACTED]": 1 });
  });

  it("in a Map's keys and values, and a Set, each kept a Map and a Set", () => {
    const map = shown(
      new Map<unknown, unknown>([
        ["auth", `Bearer ${SECRET}`],
        [SECRET, { nested: new Set([SECRET]) }],
      ]),
    );
    expect(map).toBeInstanceOf(Map);
    const entries = [...(map as Map<unknown, unknown>)];
    expect(entries[0]).toEqual(["auth", "Bearer [REDACTED]"]);
    expect(entries[1]?.[0]).toBe("[REDACTED]");
    const nested = (entries[1]?.[1] as { nested: Set<unknown> }).nested;
    expect(nested).toBeInstanceOf(Set);
    expect([...nested]).toEqual(["[REDACTED]"]);
  });

  it("in a Buffer, a Uint8Array and an ArrayBuffer: the secret's bytes replaced, each kept of its kind", () => {
    const buffer = shown({ body: Buffer.from(`{"token":"${SECRET}"}`) }) as { body: Buffer };
    expect(Buffer.isBuffer(buffer.body)).toBe(true);
    expect(buffer.body.toString()).toBe('{"token":"[REDACTED]"}');
    const view = shown(new TextEncoder().encode(`x ${SECRET} y`));
    expect(view).toBeInstanceOf(Uint8Array);
    expect(new TextDecoder().decode(view as Uint8Array)).toBe("x [REDACTED] y");
    const raw = shown(new TextEncoder().encode(SECRET).buffer);
    expect(raw).toBeInstanceOf(ArrayBuffer);
    expect(Buffer.from(raw as ArrayBuffer).toString()).toBe("[REDACTED]");
    // base64 of the secret inside the bytes, as a Basic header dumped to a body
    const basic = shown(Buffer.from(`Authorization: Basic ${Buffer.from(`user:${SECRET}`).toString("base64")}`));
    expect((basic as Buffer).toString()).toMatch(/^Authorization: Basic [A-Za-z0-9+/=]{0,8}\[REDACTED\]/);
  });

  it("in symbol-keyed and non-enumerable properties, in shared and cyclic references", () => {
    const key = Symbol("k");
    const hidden: Record<string | symbol, unknown> = { [key]: SECRET };
    Object.defineProperty(hidden, "quiet", { value: SECRET, enumerable: false });
    const out = shown(hidden) as Record<string | symbol, unknown>;
    expect(out[key]).toBe("[REDACTED]");
    expect(out["quiet"]).toBe("[REDACTED]");
    const shared = { token: SECRET };
    const cyclic: Record<string, unknown> = { a: shared, b: shared };
    cyclic["self"] = cyclic;
    const copy = shown(cyclic) as Record<string, unknown>;
    expect(copy["a"]).toEqual({ token: "[REDACTED]" });
    expect(copy["a"]).toBe(copy["b"]);
    expect(copy["self"]).toBe(copy);
  });

  it("returns the same result when it holds no secret, class instances included", () => {
    const result = { when: new Date(0), list: [1, 2], map: new Map([["a", 1]]), bytes: Buffer.from("hi") };
    expect(shown(result)).toBe(result);
    const receipt = new Receipt("nothing secret");
    expect(checkResultSecrets(undefined, receipt)).toEqual({ kind: "shown", value: receipt });
  });

  it("withholds what it cannot look inside: a class instance, a function, a getter, a wide typed array with a secret", () => {
    expect(withheld({ receipt: new Receipt(SECRET) })).toContain("`Receipt`");
    expect(withheld(new Receipt("nothing secret"))).toContain("`Receipt`");
    expect(withheld({ later: () => SECRET })).toContain("function");
    expect(
      withheld({
        get token() {
          return SECRET;
        },
      }),
    ).toContain("getter");
    expect(withheld(new Uint16Array(Buffer.from(SECRET, "utf16le").buffer.slice(0)))).toContain("Uint16Array");
    expect(withheld(new Float64Array(new TextEncoder().encode(`${SECRET}xxxx`).buffer))).toContain("Float64Array");
  });

  it("passes a wide typed array without a secret as it is", () => {
    const numbers = new Float64Array([1.5, 2.5]);
    expect(shown({ numbers })).toEqual({ numbers });
  });
});
