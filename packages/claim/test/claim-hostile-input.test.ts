import { afterEach, describe, expect, it } from "vitest";
import { FAILURE_BODY } from "../src/index.js";
import { at, createSandbox, num, shape, solve, str, startProvider, type Provider } from "./harness.js";

let p: Provider | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

const sandboxRows = (q: Provider): number =>
  (q.db.prepare("SELECT count(*) AS n FROM claim_sandboxes").get() as { n: number }).n;

/** A solved creation challenge, as the JSON text of its `admission` member. */
async function solvedAdmission(q: Provider): Promise<string> {
  const c = (await q.req("api.localhost", "GET", "/v1/sandboxes/challenge")).json();
  const challenge = str(c, "challenge");
  return JSON.stringify({ type: "proof_of_work", challenge, nonce: solve(challenge, num(c, "difficulty")) });
}

describe("hostile input to sandbox creation: a clear 400, nothing stored, the challenge still unspent", () => {
  it("metadata nested 100 000 levels deep (objects or arrays) is a 400, not a 500 from a stack overflow", async () => {
    p = await startProvider();
    const admission = await solvedAdmission(p);
    for (const deep of [
      `${"[".repeat(100_000)}${"]".repeat(100_000)}`,
      `{"a":${'{"a":'.repeat(100_000)}1${"}".repeat(100_001)}`,
    ]) {
      const r = await p.req("api.localhost", "POST", "/v1/sandboxes", {
        rawJson: `{"admission":${admission},"metadata":${deep}}`,
      });
      expect(r.status).toBe(400);
      expect(at(r.json(), "error.code")).toBe("claim_invalid_request");
    }
    expect(sandboxRows(p)).toBe(0);
    const ok = await p.req("api.localhost", "POST", "/v1/sandboxes", { rawJson: `{"admission":${admission}}` });
    expect(ok.status).toBe(201);
  });

  it("metadata that is not an object, holds a lone surrogate or is over 2 KB of UTF-8 is a 400 naming `metadata`", async () => {
    p = await startProvider();
    const admission = await solvedAdmission(p);
    for (const metadata of [
      "5",
      "[]",
      "null",
      '"x"',
      '{"a":"\\ud800"}',
      '{"\\udc00":1}',
      `{"a":"${"é".repeat(1500)}"}`,
    ]) {
      const r = await p.req("api.localhost", "POST", "/v1/sandboxes", {
        rawJson: `{"admission":${admission},"metadata":${metadata}}`,
      });
      expect([metadata, r.status]).toEqual([metadata, 400]);
      expect(str(r.json(), "error.message")).toContain("`metadata`");
    }
    expect(sandboxRows(p)).toBe(0);
    const ok = await p.req("api.localhost", "POST", "/v1/sandboxes", {
      rawJson: `{"admission":${admission},"metadata":{"agent":"demo","tags":["a","😀"],"n":{"deep":[1,2]}}}`,
    });
    expect(ok.status).toBe(201);
  });
});

describe("hostile FAQ text: a clear 400, nothing stored or changed", () => {
  it("a lone surrogate in any text field, or a control character (NUL included) in an answer, is a 400 naming the field", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const q = (question: string, answer: string): string => `[{"question":"${question}","answer":"${answer}"}]`;
    const cases: [string, string][] = [
      ["title", `{"title":"Acme \\ud800 help","questions":${q("What?", "A tool.")}}`],
      ["description", `{"title":"Acme","description":"\\udfff","questions":${q("What?", "A tool.")}}`],
      ["question", `{"title":"Acme","questions":${q("What\\udbff?", "A tool.")}}`],
      ["answer", `{"title":"Acme","questions":${q("What?", "A \\udc00 tool.")}}`],
      ["answer", `{"title":"Acme","questions":${q("What?", "A\\u0000tool.")}}`],
      ["answer", `{"title":"Acme","questions":${q("What?", "A\\u001btool.")}}`],
    ];
    for (const [field, rawJson] of cases) {
      const r = await p.req("api.localhost", "POST", "/v1/faqs", { rawJson, headers: a.auth });
      expect([rawJson, r.status, at(r.json(), "error.code")]).toEqual([rawJson, 400, "claim_invalid_request"]);
      expect(str(r.json(), "error.message")).toContain(`\`${field}\``);
    }
    expect((await p.req("api.localhost", "GET", "/v1/faqs", { headers: a.auth })).json()).toEqual({ faqs: [] });

    // Tabs, line breaks and pairs of surrogates (emoji) are text like any other.
    const ok = await p.req("api.localhost", "POST", "/v1/faqs", {
      json: { title: "Acme 😀", questions: [{ question: "What?", answer: "A\ttool.\r\n\n- 😀" }] },
      headers: a.auth,
    });
    expect(ok.status).toBe(201);
    const faqId = str(ok.json(), "faq_id");
    const qId = str(ok.json(), "questions.0.id");
    const patch = await p.req("api.localhost", "PATCH", `/v1/faqs/${faqId}/questions/${qId}`, {
      rawJson: '{"answer":"now\\u0000hidden"}',
      headers: a.auth,
    });
    expect(patch.status).toBe(400);
    const after = await p.req("api.localhost", "GET", `/v1/faqs/${faqId}`, { headers: a.auth });
    expect(str(after.json(), "questions.0.answer")).toBe("A\ttool.\r\n\n- 😀");
  });
});

describe("hostile FAQ text: what would show differently from what is stored and scanned is refused", () => {
  it("DEL, a C1 control, or a bidirectional override, embedding or isolate in any text field is a 400 naming the field", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const cases: [string, Record<string, unknown>][] = [
      ["answer", { title: "Acme", questions: [{ question: "What?", answer: "Enter your pass\u0085word." }] }],
      ["answer", { title: "Acme", questions: [{ question: "What?", answer: "A\u007ftool." }] }],
      ["answer", { title: "Acme", questions: [{ question: "What?", answer: "\u202e.drowssap ruoy retne\u202c" }] }],
      ["title", { title: "Acme \u202d help", questions: [{ question: "What?", answer: "A tool." }] }],
      ["question", { title: "Acme", questions: [{ question: "What\u2066?\u2069", answer: "A tool." }] }],
      ["description", { title: "Acme", description: "\u202aembedded\u202c", questions: [] }],
    ];
    for (const [field, json] of cases) {
      const r = await p.req("api.localhost", "POST", "/v1/faqs", { json, headers: a.auth });
      expect([field, r.status, at(r.json(), "error.code")]).toEqual([field, 400, "claim_invalid_request"]);
      expect(str(r.json(), "error.message")).toContain(`\`${field}\``);
    }
    expect((await p.req("api.localhost", "GET", "/v1/faqs", { headers: a.auth })).json()).toEqual({ faqs: [] });
    // Right-to-left text needs none of them: Hebrew, Arabic and the implicit marks (LRM, RLM, ALM) are text.
    const ok = await p.req("api.localhost", "POST", "/v1/faqs", {
      json: { title: "עזרה", questions: [{ question: "ما هذا؟", answer: "כלי \u200f(tool)\u200e \u061c." }] },
      headers: a.auth,
    });
    expect(ok.status).toBe(201);
  });
});

describe("hostile paths: an id the router cannot decode, or longer than any id, is the one failure answer (§10)", () => {
  it("bad percent-encoding and a 5 000-character id answer exactly as an unknown id does: no echo of the path, every header", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const unknown = await p.req("api.localhost", "GET", "/v1/faqs/faq_0000000000000000000000", { headers: a.auth });
    expect(unknown.body).toBe(FAILURE_BODY);
    for (const [host, path] of [
      ["api.localhost", "/v1/faqs/%ED%A0%80"],
      ["api.localhost", "/v1/faqs/%E0%A4%A"],
      ["api.localhost", `/v1/faqs/${"a".repeat(5000)}`],
      ["api.localhost", `/v1/sandboxes/${"s".repeat(5000)}/claim`],
      ["preview.localhost", "/v1/faqs/%FF"],
    ] as const) {
      const r = await p.req(host, "GET", path, { headers: a.auth });
      expect([path.slice(0, 40), shape(r)]).toEqual([path.slice(0, 40), shape(unknown)]);
    }
  });
});

describe("a body that is not a JSON object: a clear 415 or 400 before anything is looked up or spent", () => {
  it("a solved creation sent as a form (`curl -d`), as text or as JSON that is not an object is refused as such, and the challenge still admits", async () => {
    p = await startProvider();
    const admission = await solvedAdmission(p);
    const body = `{"admission":${admission}}`;
    for (const [type, sent, status] of [
      ["application/x-www-form-urlencoded", body, 415],
      ["text/plain", body, 415],
      ["application/xml", "<a/>", 415],
      ["application/json", "null", 400],
      ["application/json", `[${body}]`, 400],
      ["application/json", '"x"', 400],
    ] as const) {
      const r = await p.req("api.localhost", "POST", "/v1/sandboxes", {
        headers: { "content-type": type, "content-length": String(Buffer.byteLength(sent)) },
        raw: sent,
      });
      expect([type, sent.slice(0, 10), r.status, at(r.json(), "error.code")]).toEqual([
        type,
        sent.slice(0, 10),
        status,
        "claim_invalid_request",
      ]);
      expect(str(r.json(), "error.message")).toMatch(status === 415 ? /application\/json/ : /JSON object/);
    }
    expect(sandboxRows(p)).toBe(0);
    const ok = await p.req("api.localhost", "POST", "/v1/sandboxes", { rawJson: body });
    expect(ok.status).toBe(201);
  });

  it("an authenticated call with a form body is the same 415, and changes nothing", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const r = await p.req("api.localhost", "POST", "/v1/faqs", {
      form: { title: "Acme", questions: "x" },
      headers: a.auth,
    });
    expect([r.status, at(r.json(), "error.code")]).toEqual([415, "claim_invalid_request"]);
    expect((await p.req("api.localhost", "GET", "/v1/faqs", { headers: a.auth })).json()).toEqual({ faqs: [] });
  });
});
