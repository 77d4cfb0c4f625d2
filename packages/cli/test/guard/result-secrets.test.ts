import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import { checkResultSecrets, MAX_BYTES } from "../../src/guard/result-secrets.js";

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

  it("returns the same result when it holds no secret, unless asked for a snapshot; without secrets, class instances too", () => {
    const result = { when: new Date(0), list: [1, 2], map: new Map([["a", 1]]), bytes: Buffer.alloc(2, "hi") };
    expect(shown(result)).toBe(result);
    const receipt = new Receipt("nothing secret");
    expect(checkResultSecrets(undefined, receipt)).toEqual({ kind: "shown", value: receipt });
  });

  it("with `snapshot`, hands over a copy in memory of its own: what the function changes later does not reach it", () => {
    const bytes = Buffer.alloc(4, "ab");
    const result = Object.freeze({
      when: new Date(0),
      list: [1, "two", { three: 3 }],
      map: new Map([["a", { b: 1 }]]),
      set: new Set(["x"]),
      bytes,
      raw: new Uint8Array([1, 2]).buffer,
    });
    const checked = checkResultSecrets(secrets, result, true);
    const copy = (checked.kind === "shown" ? checked.value : undefined) as typeof result;
    expect(copy).not.toBe(result);
    expect(copy).toEqual(result);
    expect(Object.isFrozen(copy)).toBe(true);
    expect(Buffer.isBuffer(copy.bytes)).toBe(true);
    expect(copy.raw).toBeInstanceOf(ArrayBuffer);
    // the function writes a secret into what it returned, after the check
    result.list.push(SECRET);
    (result.map.get("a") as Record<string, unknown>)["token"] = SECRET;
    result.set.add(SECRET);
    bytes.write(SECRET.slice(0, 4));
    new Uint8Array(result.raw).set([9, 9]);
    const seen = JSON.stringify([
      copy.list,
      [...copy.map],
      [...copy.set],
      copy.bytes.toString(),
      [...new Uint8Array(copy.raw)],
    ]);
    expect(seen).not.toContain(SECRET.slice(0, 4));
    expect(seen).toBe(JSON.stringify([[1, "two", { three: 3 }], [["a", { b: 1 }]], ["x"], "abab", [1, 2]]));
    expect(checkResultSecrets(secrets, "text", true)).toEqual({ kind: "shown", value: "text" });
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

describe("checkResultSecrets: what a result hands out beyond its plain data", () => {
  it("a small Buffer from Node's pool whose `.buffer` holds a secret elsewhere is passed on as a copy", () => {
    const header = Buffer.from(`Authorization: Bearer ${SECRET}`);
    const body = Buffer.from("ok");
    expect(body.buffer).toBe(header.buffer); // both slices of the pool
    const out = shown({ body }) as { body: Buffer };
    expect(Buffer.isBuffer(out.body)).toBe(true);
    expect(out.body.toString()).toBe("ok");
    expect(Buffer.from(out.body.buffer).toString("latin1")).not.toContain(SECRET);
    const memory = new TextEncoder().encode(`${SECRET}|1.5`).buffer;
    const view = new Uint8Array(memory, SECRET.length + 1);
    const copied = shown(view) as Uint8Array;
    expect(new TextDecoder().decode(copied)).toBe("1.5");
    expect(copied.buffer.byteLength).toBe(3);
    const dates = new DataView(memory, SECRET.length + 1);
    expect((shown(dates) as DataView).buffer.byteLength).toBe(3);
  });

  it("properties of its own on a Buffer, a Date, a Map or a Set are checked and copied, their secrets replaced", () => {
    const body = Object.assign(Buffer.alloc(2, "ok"), { token: SECRET });
    const when = Object.assign(new Date(0), { note: `key ${SECRET}` });
    const map = Object.assign(new Map([["a", 1]]), { [SECRET]: 1 });
    const set = Object.assign(new Set([1]), { extra: [SECRET] });
    const out = shown({ body, when, map, set }) as Record<string, Record<string, unknown>>;
    expect(out["body"]?.["token"]).toBe("[REDACTED]");
    expect(Buffer.isBuffer(out["body"])).toBe(true);
    expect(out["when"]).toBeInstanceOf(Date);
    expect((out["when"] as unknown as Date).getTime()).toBe(0);
    expect(out["when"]?.["note"]).toBe("key [REDACTED]");
    expect(Object.keys(out["map"] ?? {})).toEqual(["[REDACTED]"]);
    expect(out["set"]?.["extra"]).toEqual(["[REDACTED]"]);
    expect(
      withheld(
        Object.defineProperty(new Date(0), "later", {
          get: () => SECRET,
        }),
      ),
    ).toContain("getter");
  });

  it("a typed array of too many elements to search for properties is passed on as a copy without them", () => {
    const big = Object.assign(new Uint8Array(70_000), { token: SECRET });
    const out = shown({ big }) as { big: Uint8Array & { token?: string } };
    expect(out.big).not.toBe(big);
    expect(out.big).toHaveLength(70_000);
    expect(out.big.token).toBeUndefined();
  });

  it("withholds a Proxy, a typed array of a kind of its own, and bytes too many to check", () => {
    expect(withheld({ data: new Proxy({ token: "nothing" }, {}) })).toContain("Proxy");
    class Tagged extends Uint8Array {}
    expect(withheld(new Tagged(2))).toContain("`Tagged` of a kind of its own");
    expect(withheld({ blob: new Uint8Array(new ArrayBuffer(MAX_BYTES + 1)) })).toContain("too many to check");
  });

  it("in a symbol's description, as a value or a key: a new symbol without it", () => {
    const out = shown({ tag: Symbol(`key ${SECRET}`), [Symbol.for(SECRET)]: 1 }) as Record<string | symbol, unknown>;
    expect((out["tag"] as symbol).description).toBe("key [REDACTED]");
    const keys = Object.getOwnPropertySymbols(out);
    expect(keys.map((k) => k.description)).toEqual(["[REDACTED]"]);
    expect(out[keys[0] as symbol]).toBe(1);
    const plain = Symbol("nothing");
    expect(shown({ plain })).toEqual({ plain });
  });

  it("says why it withholds without the secret, when a getter's name or a class's name is the secret", () => {
    const keyed = Object.defineProperty({}, SECRET, { get: () => 1, enumerable: true });
    expect(withheld(keyed)).toBe("it holds a getter (`[REDACTED]`), which cannot be checked");
    const Named = class {};
    Object.defineProperty(Named, "name", { value: `Session_${SECRET}` });
    expect(withheld({ session: new Named() })).not.toContain(SECRET);
  });
});

describe("checkResultSecrets: a secret split between the strings of an array, or an MCP result's text parts", () => {
  const [head, tail] = [SECRET.slice(0, 7), SECRET.slice(7)];

  it("reads an array's strings joined in order: the secret replaced where it starts, left out where it runs on", () => {
    expect(shown([`key ${head}`, tail, " ok"])).toEqual(["key [REDACTED]", "", " ok"]);
    // items that are not strings between them are no part of the text
    expect(shown([head, 5, { n: 1 }, tail.slice(0, 3), tail.slice(3)])).toEqual(["[REDACTED]", 5, { n: 1 }, "", ""]);
    // a secret spread over three items, nested arrays each a text of their own
    expect(shown({ lines: [[SECRET.slice(0, 3), SECRET.slice(3, 9), `${SECRET.slice(9)}!`], ["x"]] })).toEqual({
      lines: [["[REDACTED]", "", "!"], ["x"]],
    });
    // each one whole: no change, the same array
    const plain = ["tok", "_live"];
    expect(shown(plain)).toBe(plain);
  });

  it("reads the text parts of an MCP `content` array joined, each part keeping its other fields", () => {
    const result = {
      content: [
        { type: "text", text: `token: ${head}`, annotations: { audience: ["user"] } },
        { type: "image", data: "aGVsbG8=", mimeType: "image/png" },
        { type: "text", text: `${tail} (expires soon)` },
      ],
      isError: false,
    };
    expect(shown(result)).toEqual({
      content: [
        { type: "text", text: "token: [REDACTED]", annotations: { audience: ["user"] } },
        { type: "image", data: "aGVsbG8=", mimeType: "image/png" },
        { type: "text", text: " (expires soon)" },
      ],
      isError: false,
    });
  });

  it("finds a split secret in its other spellings (percent-encoded, JSON-escaped) and keeps shared parts shared", () => {
    const encoded = encodeURIComponent(SECRET).replace(/_/g, "%5F");
    expect(shown([`u=${encoded.slice(0, 5)}`, encoded.slice(5)])).toEqual(["u=[REDACTED]", ""]);
    const part = { type: "text", text: tail };
    const out = shown({ content: [{ type: "text", text: head }, part], again: part }) as {
      content: unknown[];
      again: unknown;
    };
    expect(out.content[1]).toEqual({ type: "text", text: "" });
    expect(out.again).toBe(out.content[1]);
  });

  it("withholds one text part that two lists would need replaced differently", () => {
    const part = { type: "text", text: tail };
    // in `a` it runs on a secret (left out), in `b` it only comes before one (shown)
    const b = [part, { type: "text", text: head }, { type: "text", text: tail }];
    expect(withheld({ a: [{ type: "text", text: head }, part], b })).toContain("one text part in two places");
    // where only one list needs it replaced, it is replaced in both (hidden once too many, never once too few)
    const out = shown({ a: [{ type: "text", text: head }, part], c: [part, { type: "text", text: "x" }] });
    expect(out).toEqual({
      a: [
        { type: "text", text: "[REDACTED]" },
        { type: "text", text: "" },
      ],
      c: [
        { type: "text", text: "" },
        { type: "text", text: "x" },
      ],
    });
  });

  it("does not join the values of different keys of an object (fields are no text order)", () => {
    const split = { a: head, b: tail };
    expect(shown(split)).toBe(split);
  });
});
