import { afterEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../store/test/postgres/test-database.js";
import { FAILURE_BODY, openClaimPostgres } from "../../src/index.js";
import { createSandbox, startProvider, str, type Provider } from "../harness.js";

let p: Provider | undefined;
let db: TestDatabase | undefined;
afterEach(async () => {
  await p?.close(); // closes the PostgreSQL pool too
  p = undefined;
  await db?.drop();
  db = undefined;
});

const backends = {
  SQLite: async (): Promise<Provider> => startProvider(),
  PostgreSQL: async (): Promise<Provider> => {
    db = await createTestDatabase();
    return startProvider({ postgres: await openClaimPostgres(db.url) });
  },
};

for (const [name, start] of Object.entries(backends)) {
  describe(`hostile ids in agent API paths, on ${name}: the one failure answer, nothing changed`, () => {
    it("an FAQ or question id holding a NUL character, or of any other shape, is not found (PostgreSQL answered 500)", async () => {
      p = await start();
      const a = await createSandbox(p);
      const f = await p.req("api.localhost", "POST", "/v1/faqs", {
        json: { title: "Acme", questions: [{ question: "What?", answer: "A tool." }] },
        headers: a.auth,
      });
      const faqId = str(f.json(), "faq_id");
      const qId = str(f.json(), "questions.0.id");
      for (const [method, path] of [
        ["DELETE", "/v1/faqs/%00"],
        ["DELETE", `/v1/faqs/${faqId}%00`],
        ["GET", "/v1/faqs/%00"],
        ["PATCH", "/v1/faqs/%00"],
        ["POST", "/v1/faqs/%00/publish"],
        ["POST", "/v1/content/%00/publish"],
        ["DELETE", `/v1/faqs/${faqId}/questions/%00`],
        ["DELETE", "/v1/faqs/..%2F..%2Fetc%2Fpasswd"],
      ] as const) {
        const r = await p.req("api.localhost", method, path, {
          headers: a.auth,
          ...(method === "PATCH" ? { json: { title: "x" } } : {}),
        });
        expect([method, path, r.status, r.body]).toEqual([method, path, 404, FAILURE_BODY]);
      }
      const still = await p.req("api.localhost", "GET", `/v1/faqs/${faqId}`, { headers: a.auth });
      expect(still.status).toBe(200);
      expect(str(still.json(), "questions.0.id")).toBe(qId);
    });
  });
}
