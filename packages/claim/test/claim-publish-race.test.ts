/**
 * §23.2: what goes live is what the content scan saw. An edit and a publication of the same FAQ interleave
 * deterministically here: the store method the route calls last is wrapped so that the other request runs, over
 * real HTTP against the real SQLite store, between the route's read-and-scan and its write.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createSandbox, startProvider, str, type Agent, type Provider, type Res } from "./harness.js";

let p: Provider | undefined;
afterEach(async () => p?.close());

const CLEAN = "Open the app and press Help.";
const PHISHING =
  "To keep your account open, please enter your password and card number at [our portal](https://acme.example/x).";
const faqWith = (answer: string): Record<string, unknown> => ({
  title: "Acme help",
  questions: [{ question: "How do I get help?", answer }],
});

/** A draft FAQ with a clean answer: its publish and question URLs. */
async function draft(pr: Provider, a: Agent): Promise<{ faqId: string; publish: string; question: string }> {
  const f = await pr.req("api.localhost", "POST", "/v1/faqs", { json: faqWith(CLEAN), headers: a.auth });
  if (f.status !== 201) throw new Error(`faq failed: ${f.status} ${f.body}`);
  const faqId = str(f.json(), "faq_id");
  return {
    faqId,
    publish: `/v1/faqs/${faqId}/publish`,
    question: `/v1/faqs/${faqId}/questions/${str(f.json(), "questions.0.id")}`,
  };
}

const expectChanged = (r: Res): void => {
  expect(r.status).toBe(409);
  expect(str(r.json(), "error.code")).toBe("claim_content_changed");
};

describe("§23.2 publish scans and publishes the same bytes (TOCTOU)", () => {
  it("an edit landing between the publish's scan and its write is not published: 409, nothing goes live", async () => {
    const pr = (p = await startProvider());
    const a = await createSandbox(pr);
    const f = await draft(pr, a);
    const store = pr.server.store;
    const real = store.publishFaq.bind(store);
    let edit: Res | undefined;
    const write = vi.spyOn(store, "publishFaq").mockImplementationOnce(async (...args) => {
      // The draft is edited (unscanned: drafts are not scanned) after the publish route scanned the clean body.
      edit = await pr.req("api.localhost", "PATCH", f.question, { json: { answer: PHISHING }, headers: a.auth });
      return real(...args);
    });
    const pub = await pr.req("api.localhost", "POST", f.publish, { headers: a.auth });
    expect(write).toHaveBeenCalledOnce();
    write.mockRestore();
    expect(edit?.status).toBe(200);
    expectChanged(pub); // before: 200, and the phishing answer was live
    expect((await store.getFaq(a.id, f.faqId))?.status).toBe("draft");
    expect((await store.sandbox(a.id))?.state).toBe("active");
    expect(await store.listFaqs(a.id, true)).toEqual([]);
    // Publishing again scans what is stored now, and refuses it.
    const again = await pr.req("api.localhost", "POST", f.publish, { headers: a.auth });
    expect(again.status).toBe(422);
    expect(str(again.json(), "error.kind")).toBe("credential_harvesting");
    expect((await store.sandbox(a.id))?.state).toBe("active");
  });

  it("a draft edit (unscanned) whose FAQ is published before its write lands is refused: 409, the live page keeps the scanned body", async () => {
    const pr = (p = await startProvider());
    const a = await createSandbox(pr);
    const f = await draft(pr, a);
    const store = pr.server.store;
    const real = store.updateFaq.bind(store);
    let pub: Res | undefined;
    const write = vi.spyOn(store, "updateFaq").mockImplementationOnce(async (...args) => {
      // The edit route read the FAQ as a draft (so skipped the scan); the publication commits now.
      pub = await pr.req("api.localhost", "POST", f.publish, { headers: a.auth });
      return real(...args);
    });
    const edit = await pr.req("api.localhost", "PATCH", f.question, { json: { answer: PHISHING }, headers: a.auth });
    expect(write).toHaveBeenCalledOnce();
    write.mockRestore();
    expect(pub?.status).toBe(200);
    expectChanged(edit); // before: 200, and the phishing answer went live on the published page unscanned
    const live = await store.listFaqs(a.id, true);
    expect(live.map((x) => x.body.questions[0]?.answer)).toEqual([CLEAN]);
    const url = new URL(str(pub?.json(), "published_url"));
    const page = await pr.req(url.hostname, "GET", url.pathname);
    expect(page.body).toContain("Open the app and press Help.");
    expect(page.body).not.toContain("password");
    // Sent again, the edit meets a published FAQ: it is scanned, and refused.
    const again = await pr.req("api.localhost", "PATCH", f.question, { json: { answer: PHISHING }, headers: a.auth });
    expect(again.status).toBe(422);
    expect(str(again.json(), "error.kind")).toBe("credential_harvesting");
  });
});
