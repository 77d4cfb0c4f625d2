import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  createRedactor,
  DEFAULT_REDACTION,
  NO_PATTERNS,
  REDACTED,
  redactAuditInput,
  redactSecrets,
  restoreRedacted,
  type AuditEventInput,
} from "../../src/index.js";
import { isWellFormedString } from "../../src/audit/audit-json.js";
import { canary, filler, plantIn, secretKeyName, secretShapedValue } from "./planted.js";

describe("the one redactor", () => {
  const redact = createRedactor();

  it("replaces values under secret-looking key names, case-insensitively, at any depth", () => {
    const out = redact({
      parameters: {
        to: "a@example.com",
        GitHub_Token: "ghx-123",
        nested: [{ password: "hunter2" }, { "Proxy-Authorization": "x" }],
        client_secret: { a: 1 },
        api_key: "k",
        pass: "p",
        smtp_passphrase: "pp",
        session_cookie: "c",
      },
    });
    expect(out).toEqual({
      parameters: {
        to: "a@example.com",
        GitHub_Token: REDACTED,
        nested: [{ password: REDACTED }, { "Proxy-Authorization": REDACTED }],
        client_secret: { a: REDACTED }, // walked: its shape stays readable, every value in it is hidden
        api_key: REDACTED,
        pass: REDACTED,
        smtp_passphrase: REDACTED,
        session_cookie: REDACTED,
      },
    });
  });

  it("replaces secret-shaped substrings in any string value and keeps the rest", () => {
    const out = redact({
      header: "Bearer abcdefghijklmnop.qrs",
      note: "use sk-abcdef1234567890 for the call",
      list: ["ghp_abcdefghijklmnopqrstuvwxyz0123", "plain"],
    });
    expect(out).toEqual({
      header: `Bearer ${REDACTED}`, // the scheme word stays readable; only the credential is hidden
      note: `use ${REDACTED} for the call`,
      list: [REDACTED, "plain"],
    });
  });

  it("hides the password of a URL and keeps its scheme, user, host and path readable", () => {
    expect(
      redact({
        hook: "https://bob:hunter2@example.com/hook?x=1",
        db: "connect to postgres://acp:s3cr3t-pw@db.internal:5432/acp now",
        plain: "https://example.com/a:b@c and mailto:x@example.com and user@host:path",
      }),
    ).toEqual({
      hook: `https://bob:${REDACTED}@example.com/hook?x=1`,
      db: `connect to postgres://acp:${REDACTED}@db.internal:5432/acp now`,
      plain: "https://example.com/a:b@c and mailto:x@example.com and user@host:path",
    });
  });

  it("returns the same reference when nothing matches and never mutates its input", () => {
    const input = { a: { b: ["c", 1, null, true] } };
    const snapshot = JSON.stringify(input);
    expect(redact(input)).toBe(input);
    const secret = { a: { password: "p" } };
    redact(secret);
    expect(secret.a.password).toBe("p");
    expect(JSON.stringify(input)).toBe(snapshot);
  });

  it("follows configured patterns and a configured placeholder", () => {
    const custom = createRedactor({ keys: ["pin", "x-*"], values: [/\d{4}-\d{4}/] }, { placeholder: "[x]" });
    expect(custom({ pin: "1234", "X-Trace": "t", token: "kept", card: "card 1234-5678 ok" })).toEqual({
      pin: "[x]",
      "X-Trace": "[x]",
      token: "kept",
      card: "card [x] ok",
    });
  });

  it("replaces known secret values in strings, key names and numbers, read anew on every call", () => {
    let known: string[] = [];
    const withVault = createRedactor(NO_PATTERNS, { secrets: () => known });
    expect(withVault({ s: "abc-canary-1" })).toEqual({ s: "abc-canary-1" });
    known = ["canary-1", "424242"];
    expect(withVault({ s: "abc-canary-1", "canary-1": 1, n: 94242420 })).toEqual({
      s: `abc-${REDACTED}`,
      [REDACTED]: 1,
      n: REDACTED,
    });
  });

  it("replaces a known secret in the spellings a server echoes it in: JSON, percent-encoded, base64", () => {
    const secret = 'k3y+/pa"ss\\wörd=';
    const r = createRedactor(NO_PATTERNS, { secrets: () => [secret] });
    const json = JSON.stringify({ api_key: secret }); // an upstream's JSON text: `"k3y+/pa\"ss\\\\wörd="`
    const pythonJson = json.replace("ö", "\\u00f6"); // json.dumps with ensure_ascii
    const url = `GET https://api.example/v1?key=${encodeURIComponent(secret)} failed: 401`;
    const lowerHex = url.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
    const form = `key=${encodeURIComponent("a b ").replace(/%20/g, "+")}`;
    for (const text of [json, pythonJson, url, lowerHex]) {
      const out = r(text) as string;
      expect(out).toContain(REDACTED);
      expect(out).not.toMatch(/pa|ss|w.rd|%C3%B6|u00f6/i);
    }
    expect(createRedactor(NO_PATTERNS, { secrets: () => ["a b "] })(form)).toBe(`key=${REDACTED}`);
    // a `Basic` header an upstream dumps: the secret after a user name of each length modulo 3
    for (const user of ["u", "us", "use"]) {
      const header = `Authorization: Basic ${Buffer.from(`${user}:${secret}`).toString("base64")}`;
      const out = r(header) as string;
      expect(out).toContain(REDACTED);
      // what is left of the base64 is the user name and a character or two at each edge
      expect(out.replace("Authorization: Basic ", "").replace(REDACTED, "").length).toBeLessThanOrEqual(8);
      const urlSafe = header.replace(/\+/g, "-").replace(/\//g, "_");
      expect(r(urlSafe)).toContain(REDACTED);
    }
  });

  it("replaces a known secret of several lines whatever its line breaks, also JSON-escaped", () => {
    const pem = "-----BEGIN KEY-----\nAAAAB3NzaC1yc2EAAAADAQABAAABAQ\nC7vbqajDhA6ovF0xyzQ\n-----END KEY-----";
    const r = createRedactor(NO_PATTERNS, { secrets: () => [pem] });
    const crlf = pem.replace(/\n/g, "\r\n");
    for (const text of [`key: ${crlf}`, JSON.stringify({ key: crlf }), `key: ${pem}`]) {
      const out = r(text) as string;
      expect(out).not.toContain("AAAAB3NzaC1yc2EAAAADAQABAAABAQ");
      expect(out).toContain(REDACTED);
    }
  });

  it("does not hide text that only shares a short base64 run with a short secret", () => {
    const r = createRedactor(NO_PATTERNS, { secrets: () => ["abc"] });
    const other = Buffer.from("xabcx").toString("base64");
    expect(r(`data ${other}`)).toBe(`data ${other}`);
  });

  it("replaces cycles and values nested too deep instead of failing", () => {
    const loop: Record<string, unknown> = { a: "x" };
    loop["self"] = loop;
    expect(redact(loop)).toEqual({ a: "x", self: REDACTED });
    const shallow = createRedactor(DEFAULT_REDACTION, { maxDepth: 2 });
    expect(shallow({ a: { b: { c: { d: 1 } } } })).toEqual({ a: { b: { c: REDACTED } } });
  });

  it("keeps a `__proto__` key an own property", () => {
    const input = JSON.parse('{"__proto__": {"token": "t"}}') as unknown;
    const out = redact(input) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, "__proto__")).toBe(true);
    expect(JSON.stringify(out)).toBe(`{"__proto__":{"token":"${REDACTED}"}}`);
  });

  it("still applies back-references and unicode patterns (no merged quick test)", () => {
    const r = createRedactor({ keys: [], values: [/(x)\1{3}/, /é+/u, /\bsk-[a-z]{4}/] });
    expect(r("a xxxx b ééé sk-abcd")).toBe(`a ${REDACTED} b ${REDACTED} ${REDACTED}`);
  });

  it("redactSecrets hides known values only with empty rules", () => {
    expect(redactSecrets({ token: "t", note: "say s3cr3t!" }, ["s3cr3t"], NO_PATTERNS)).toEqual({
      token: "t",
      note: `say ${REDACTED}!`,
    });
  });

  it("redacts an audit input's metadata and string fields, leaving credential names alone", () => {
    const input: AuditEventInput = {
      event_type: "credential_injected",
      tool: "create_issue",
      policy_rule: "Bearer abcdefghijklmnop",
      metadata: { credential: "github_token", parameters: { auth: "Bearer abcdefghijklmnop" } },
    };
    const out = redactAuditInput(input, redact);
    expect(out).toEqual({
      event_type: "credential_injected",
      tool: "create_issue",
      policy_rule: `Bearer ${REDACTED}`,
      metadata: { credential: "github_token", parameters: { auth: `Bearer ${REDACTED}` } },
    });
    const clean: AuditEventInput = { event_type: "tool_call_intercepted", tool: "t", metadata: { a: 1 } };
    expect(redactAuditInput(clean, redact)).toBe(clean);
  });

  it.each(["request_id", "agent", "tool", "category", "risk_level", "decision", "policy_rule"] as const)(
    "redacts an audit input's `%s`, leaving the other fields and the input as they were",
    (field) => {
      const input: AuditEventInput = {
        event_type: "policy_evaluated",
        request_id: "cr_1",
        agent: "a",
        tool: "t",
        category: "c",
        risk_level: "low",
        decision: "ask",
        policy_rule: "r",
        metadata: { n: 1 },
      };
      const planted = { ...input, [field]: "use sk-abcdef1234567890" };
      const out = redactAuditInput(planted, redact);
      expect(out).toEqual({ ...input, [field]: `use ${REDACTED}` });
      expect(planted[field]).toBe("use sk-abcdef1234567890");
    },
  );
});

describe("the redactor's memory of short strings and key names", () => {
  // strings from a small alphabet collide in the cache and repeat; some are secret-shaped or known secrets
  const piece = fc.oneof(
    fc.stringMatching(/^[a-e_ -]{0,12}$/),
    fc.constantFrom("sk-abcdefgh123", "Bearer abcdefgh12", "token", "my_password", "canary-1", "x".repeat(70)),
  );
  const text = fc.array(piece, { minLength: 1, maxLength: 3 }).map((parts) => parts.join(""));

  it("gives every string and key the result a fresh redactor gives, while the known secrets change", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(text, text, fc.constantFrom(0, 1, 2)), { minLength: 1, maxLength: 60 }),
        (steps) => {
          const lists = [[], ["canary-1"], ["abc", "canary-1"]];
          let known: readonly string[] = lists[0] as string[];
          const longLived = createRedactor(DEFAULT_REDACTION, { secrets: () => known });
          for (const [value, key, list] of steps) {
            known = lists[list] as string[];
            const fresh = createRedactor(DEFAULT_REDACTION, { secrets: () => known });
            expect(longLived(value)).toBe(fresh(value));
            expect(longLived({ [key]: value })).toEqual(fresh({ [key]: value }));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("gives the same results when the source hands out a new array with the same values on every call", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(text, text, fc.constantFrom(0, 1, 2, 3)), { minLength: 1, maxLength: 60 }),
        (steps) => {
          // 3: the same values as 2 in another order (longest first either way)
          const lists = [[], ["canary-1"], ["abc", "canary-1"], ["canary-1", "abc", "abc"]];
          let known: readonly string[] = lists[0] as string[];
          const copying = createRedactor(DEFAULT_REDACTION, { secrets: () => [...known] });
          for (const [value, key, list] of steps) {
            known = lists[list] as string[];
            const fresh = createRedactor(DEFAULT_REDACTION, { secrets: () => known });
            expect(copying(value)).toBe(fresh(value));
            expect(copying({ [key]: value })).toEqual(fresh({ [key]: value }));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("forgets a string's result when the list of known secrets changes", () => {
    let known: string[] = [];
    const r = createRedactor(NO_PATTERNS, { secrets: () => known });
    expect(r("id-canary-1")).toBe("id-canary-1");
    known = ["canary-1"];
    expect(r("id-canary-1")).toBe(`id-${REDACTED}`);
    known = [];
    expect(r("id-canary-1")).toBe("id-canary-1");
  });
});

describe("a planted secret never survives the redactor (property)", () => {
  it("under a secret-looking key name", () => {
    fc.assert(
      fc.property(fc.jsonValue(), secretKeyName, canary, (doc, key, secret) => {
        expect(JSON.stringify(redact(plantIn(doc, key, secret)))).not.toContain(secret);
        expect(JSON.stringify(redactSecrets(plantIn(doc, key, secret), []))).not.toContain(secret);
      }),
    );
  });

  it("as a secret-shaped value inside any text", () => {
    fc.assert(
      fc.property(fc.jsonValue(), secretShapedValue, filler, filler, (doc, shaped, before, after) => {
        const planted = plantIn(doc, "note", `${before} ${shaped.text} ${after}`);
        const escaped = JSON.stringify(shaped.secret).slice(1, -1);
        expect(JSON.stringify(redact(planted))).not.toContain(escaped);
        expect(JSON.stringify(redactSecrets(planted, []))).not.toContain(escaped);
      }),
    );
  });

  it("as a known vault value anywhere: in text, as a key, inside an array", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ minLength: 6 }), filler, (doc, secret, before) => {
        fc.pre(!REDACTED.includes(secret) && !secret.includes(REDACTED));
        const r = createRedactor(NO_PATTERNS, { secrets: () => [secret] });
        const planted = { ...plantIn(doc, "note", `${before}${secret}!`), [secret]: [secret] };
        const escaped = JSON.stringify(secret).slice(1, -1);
        expect(JSON.stringify(r(planted))).not.toContain(escaped);
        expect(JSON.stringify(redactSecrets(planted, [secret], NO_PATTERNS))).not.toContain(escaped);
      }),
    );
  });

  it("as a known vault value in an upstream's JSON text or URL: escaped or percent-encoded", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 6, unit: "binary" }), filler, (secret, before) => {
        fc.pre(!REDACTED.includes(secret) && !secret.includes(REDACTED) && isWellFormedString(secret));
        const r = createRedactor(NO_PATTERNS, { secrets: () => [secret] });
        const escaped = JSON.stringify(secret).slice(1, -1);
        const ascii = escaped.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
        const percent = encodeURIComponent(secret);
        for (const spelling of [escaped, ascii, percent]) {
          expect(r(`${before}${spelling}!`)).not.toContain(spelling);
        }
      }),
    );
  });

  const redact = createRedactor();
});

describe("restoring what a person left redacted", () => {
  const redact = createRedactor(DEFAULT_REDACTION, { placeholder: "[redacted]" });

  it("puts back whole values and partly redacted strings, keeps edits", () => {
    const original = { token: "t", note: "use Bearer abcdefghijklmnop now", path: "/a", list: [{ api_key: "k" }] };
    const shown = redact(original) as Record<string, unknown>;
    expect(JSON.stringify(shown)).not.toMatch(/abcdefghijklmnop|"t"|"k"/);
    const edited = { ...shown, path: "/b" };
    expect(restoreRedacted(original, edited, redact, "[redacted]")).toEqual({ ...original, path: "/b" });
    const changed = { ...shown, note: "use [redacted] later" };
    expect(restoreRedacted(original, changed, redact, "[redacted]")).toMatchObject({ note: "use [redacted] later" });
  });

  it("puts back a string shown with its runs hidden under a secret-named key, and values inside a secret-named object", () => {
    const original = { token: "a b; c", client_secret: { cmd: "x y", n: 2 }, path: "/a" };
    const shown = redact(original) as Record<string, unknown>;
    expect(shown).toEqual({
      token: "[redacted] [redacted]; [redacted]",
      client_secret: { cmd: "[redacted] [redacted]", n: "[redacted]" },
      path: "/a",
    });
    expect(restoreRedacted(original, { ...shown, path: "/b" }, redact, "[redacted]")).toEqual({
      ...original,
      path: "/b",
    });
    // the same text elsewhere is no redacted string: kept as typed
    expect(restoreRedacted(original, { ...shown, path: "[redacted] [redacted]" }, redact, "[redacted]")).toMatchObject({
      path: "[redacted] [redacted]",
    });
  });
});
