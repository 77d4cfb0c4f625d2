import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { scanFaq } from "../src/content/content-scan.js";
import { renderSafeMarkdown } from "../src/content/safe-markdown.js";
import {
  at,
  createSandbox,
  num,
  SAMPLE_FAQ,
  startProvider,
  str,
  type Agent,
  type Provider,
  type Res,
} from "./harness.js";

let p: Provider | undefined;
afterEach(async () => p?.close());

const faqWith = (answer: string, question = "How do I get help?"): Record<string, unknown> => ({
  title: "Acme help",
  description: "Questions people ask",
  questions: [{ question, answer }],
});

/** Creates a draft FAQ through the API and tries to publish it. */
async function tryPublish(pr: Provider, a: Agent, faq: Record<string, unknown>): Promise<Res> {
  const f = await pr.req("api.localhost", "POST", "/v1/faqs", { json: faq, headers: a.auth });
  if (f.status !== 201) throw new Error(`faq failed: ${f.status} ${f.body}`);
  return pr.req("api.localhost", "POST", `/v1/faqs/${str(f.json(), "faq_id")}/publish`, { headers: a.auth });
}

const expectFlagged = (r: Res, kind: string): void => {
  expect(r.status).toBe(422);
  expect(at(r.json(), "error.code")).toBe("claim_content_flagged");
  expect(at(r.json(), "error.kind")).toBe(kind);
};

describe("§23.2 content abuse: published content is scanned (black box, over HTTP)", () => {
  it("MUST §23.2 credential harvesting is refused at publish; the sandbox stays unpublished", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const r = await tryPublish(
      p,
      a,
      faqWith(
        "To keep your account open, please enter your password and card number at [our portal](https://acme.example/x).",
      ),
    );
    expectFlagged(r, "credential_harvesting");
    expect(str(r.json(), "error.message")).toBe(
      "content refused: content asks readers for a password, code or card details",
    );
    const s = await p.req("api.localhost", "GET", `/v1/sandboxes/${a.id}`, { headers: a.auth });
    expect(at(s.json(), "status")).toBe("active");
    // Zero-width characters and compatibility forms do not hide it.
    for (const hidden of [
      "Reply with your pa\u200bss\u200bword to continue.",
      "Just send us the ＳＥＥＤ ＰＨＲＡＳＥ of your wallet.",
    ])
      expectFlagged(await tryPublish(p, await createSandbox(p), faqWith(hidden)), "credential_harvesting");
  });

  it("MUST §23.2 no invisible character hides a request for a password: joiners, variation selectors, fillers, tags", async () => {
    // In mode `pow`: eight flagged sources in a row would otherwise be refused for their reputation.
    p = await startProvider({ admissionPolicy: { mode: "pow" } });
    for (const invisible of ["\u034f", "\ufe0f", "\u3164", "\u{e0020}", "\u180e", "\u115f", "\u2061", "\u{1d173}"]) {
      const answer = `To continue, enter your pass${invisible}word at [our portal](https://acme.example/x).`;
      const r = await tryPublish(p, await createSandbox(p), faqWith(answer));
      expect([JSON.stringify(invisible), r.status]).toEqual([JSON.stringify(invisible), 422]);
      expectFlagged(r, "credential_harvesting");
    }
    // The same scan in memory, for what the input checks refuse before it (C1 controls, bidirectional overrides).
    const body = (answer: string): Parameters<typeof scanFaq>[0] => ({
      title: "Acme",
      slug: "acme",
      description: "",
      settings: { theme: "auto", accent_color: "#000000", show_search: true, show_feedback: false },
      questions: [{ id: "q_1", question: "How?", answer, order: 0 }],
    });
    expect(scanFaq(body("Please enter your pass\u0085word."))?.kind).toBe("credential_harvesting");
    // Line breaks and tabs still separate words (they are whitespace, not invisible).
    expect(scanFaq(body("Please enter your\npassword."))?.kind).toBe("credential_harvesting");
    expect(scanFaq(body("We will never\task you to enter your\r\npassword."))).toBeUndefined();
  });

  it("MUST §23.2 phishing copy (account threat + urgency + brand + link) is refused", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const r = await tryPublish(
      p,
      a,
      faqWith(
        "Your PayPal account has been suspended. Verify your account within 24 hours: [restore access](https://restore.example/x)",
        "Why can't I log in?",
      ),
    );
    expectFlagged(r, "phishing");
  });

  it("MUST §23.2 links to shorteners, bare IPs, punycode look-alikes, executables and deceptive link text are refused", async () => {
    p = await startProvider();
    const cases: [string, string][] = [
      ["[docs](https://bit.ly/3abcd)", "links through url shorteners are not allowed"],
      ["[login](https://192.168.1.10/login)", "links to bare ip addresses are not allowed"],
      ["[shop](https://xn--pypal-4ve.com/)", "links to punycode (look-alike) domains are not allowed"],
      [
        "[installer](https://downloads.example.com/setup.exe)",
        "links to executable or archive downloads are not allowed",
      ],
      [
        "[https://paypal.com/login](https://evil.example/login)",
        "a link's text names a different domain than its target",
      ],
    ];
    for (const [answer, why] of cases) {
      const a = await createSandbox(p);
      const r = await tryPublish(p, a, faqWith(`See ${answer}.`));
      expectFlagged(r, "malicious_link");
      expect(str(r.json(), "error.message")).toBe(`content refused: ${why}`);
    }
  });

  it("MUST §23.2 a word mixing Latin letters with Cyrillic, Greek or Armenian look-alikes is refused as phishing (title, question, answer, as shown)", async () => {
    // Each published on the old code: no check saw a disguised `pаypal` or `pаsswоrd`, which also hid the word from
    // the credential and brand checks.
    p = await startProvider();
    const cases: Record<string, unknown>[] = [
      { ...faqWith("We can help."), title: "P\u0430ypal help" },
      faqWith("Type your p\u0430ssw\u043erd in the form: [form](https://acme.example/form)."),
      faqWith("Yes.", "Do I need an \u0391pple ID?"),
      faqWith("Sign in with your Go\u0585gle account."),
      faqWith("Log in at p**\u0430**ypal to continue."),
    ];
    for (const faq of cases) {
      const a = await createSandbox(p);
      const r = await tryPublish(p, a, faq);
      expectFlagged(r, "phishing");
      expect(str(r.json(), "error.message")).toBe(
        "content refused: a word mixes latin letters with look-alike cyrillic, greek or armenian ones (a disguised name or word)",
      );
    }
  });

  it("§23.2 text in one script per word publishes: Russian, Greek, Latin names beside them, µm and kΩ", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const r = await tryPublish(p, a, {
      title: "Помощь по Acme",
      description: "Η εφαρμογή Acme: ερωτήσεις",
      questions: [
        {
          question: "Как сбросить пароль?",
          answer: "Откройте Settings → Security и нажмите **Reset** (iPhone-у тоже).",
        },
        { question: "Какой фильтр?", answer: "Фильтр 10 µm, резистор 5 kΩ, λ = 500 nm." },
      ],
    });
    expect(r.status).toBe(200);
  });

  it("MUST §23.2 Markdown emphasis or code inside a word does not hide it: the scan reads the text as the page shows it", async () => {
    // `pass**word**` shows as "password": the scan read the raw text, where no word "password" was.
    p = await startProvider({ admissionPolicy: { mode: "pow" } });
    const cases: [string, string][] = [
      ["Please enter your pass**word** at the portal.", "credential_harvesting"],
      ["Reply with your p`assw`ord.", "credential_harvesting"],
      ["Send us your **seed** phr*ase*.", "credential_harvesting"],
      ["Your acc**ount** has been sus*pended*. Act now: [verify](https://acme.example/v) with Pay**Pal**.", "phishing"],
    ];
    for (const [answer, kind] of cases) {
      const r = await tryPublish(p, await createSandbox(p), faqWith(answer));
      expect([answer, r.status]).toEqual([answer, 422]);
      expectFlagged(r, kind);
    }
    // Every way of marking part of the word up is caught (in memory: the same scan).
    const body = (answer: string): Parameters<typeof scanFaq>[0] => ({
      title: "Acme",
      slug: "acme",
      description: "",
      settings: { theme: "auto", accent_color: "#000000", show_search: true, show_feedback: false },
      questions: [{ id: "q_1", question: "How?", answer, order: 0 }],
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 7 }),
        fc.integer({ min: 1, max: 8 }),
        fc.constantFrom("**", "*", "`"),
        (i, j, mark) => {
          const [a, b] = [Math.min(i, j), Math.max(i, j)];
          fc.pre(a < b);
          const word = "password";
          const answer = `Please enter your ${word.slice(0, a)}${mark}${word.slice(a, b)}${mark}${word.slice(b)} now.`;
          expect(scanFaq(body(answer))?.kind, answer).toBe("credential_harvesting");
        },
      ),
    );
  });

  it("MUST §23.2 a link whose text runs over two lines is scanned as the page shows it, on one line", async () => {
    // A paragraph's lines are joined before links are drawn: the scan used to look for links line by line and
    // let through every link whose text held a line break (shortener, bare IP, deceptive text...).
    p = await startProvider({ admissionPolicy: { mode: "pow" } });
    const cases: [string, string][] = [
      ["Get it [from\nhere](https://bit.ly/3abcd).", "links through url shorteners are not allowed"],
      [
        "Sign in at [paypal.com\nsign-in](https://evil.example/login).",
        "a link's text names a different domain than its target",
      ],
      ["Log in [over\r\nhere](https://192.168.1.10/login).", "links to bare ip addresses are not allowed"],
    ];
    for (const [answer, why] of cases) {
      const r = await tryPublish(p, await createSandbox(p), faqWith(answer));
      expect([answer, r.status]).toEqual([answer, 422]);
      expectFlagged(r, "malicious_link");
      expect(str(r.json(), "error.message")).toBe(`content refused: ${why}`);
    }
  });

  it("MUST §23.2 spam: known spam patterns, link farms and stuffed repeats are refused", async () => {
    p = await startProvider();
    const links = Array.from({ length: 11 }, (_, i) => `[l${i}](https://site${i}.example/)`).join(" ");
    const same = "Buy now and save, the best offer on the internet today.";
    const cases: Record<string, unknown>[] = [
      faqWith("Join our crypto giveaway: send 0.1 BTC and receive double back."),
      faqWith(links),
      {
        title: "Offers",
        questions: Array.from({ length: 5 }, (_, i) => ({ question: `Offer ${i}?`, answer: same })),
      },
    ];
    for (const faq of cases) expectFlagged(await tryPublish(p, await createSandbox(p), faq), "spam");
  });

  it("§23.2 ordinary help text about passwords, locked accounts and links publishes", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const r = await tryPublish(p, a, {
      title: "Acme help",
      questions: [
        {
          question: "How do I reset my password?",
          answer:
            "Open Settings → Security and choose **Reset password**. We will never ask you to send your password by email. See [acme.example/help](https://acme.example/help).",
        },
        { question: "What if my account is locked?", answer: "Contact [support](https://acme.example/support)." },
        { question: "Where is my data?", answer: "In the EU; data: 5 GB per user." },
      ],
    });
    expect(r.status).toBe(200);
  });

  it("MUST §23.2 editing published content passes the same scan; the live page keeps the old content", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const f = await p.req("api.localhost", "POST", "/v1/faqs", { json: SAMPLE_FAQ, headers: a.auth });
    const id = str(f.json(), "faq_id");
    const pub = await p.req("api.localhost", "POST", `/v1/faqs/${id}/publish`, { headers: a.auth });
    const host = `${str(pub.json(), "new_handle")}.pub.localhost`;
    const add = await p.req("api.localhost", "POST", `/v1/faqs/${id}/questions`, {
      json: {
        question: "How do I pay?",
        answer: "Please confirm your credit card number and CVV here: [pay](https://acme.example/pay)",
      },
      headers: a.auth,
    });
    expectFlagged(add, "credential_harvesting");
    const edit = await p.req("api.localhost", "PATCH", `/v1/faqs/${id}`, {
      json: { description: "Your Netflix account is on hold. Act now: [update billing](https://billing.example/)" },
      headers: a.auth,
    });
    expect(edit.status).toBe(422);
    const live = await p.req(host, "GET", "/acme-help");
    expect(live.status).toBe(200);
    expect(live.body).toContain("What is Acme?");
    expect(live.body).not.toContain("CVV");
  });

  it("SHOULD §23.3 content similarity: the same FAQ published from a 4th sandbox within 24 h is refused as spam", async () => {
    p = await startProvider();
    for (let i = 0; i < 3; i++) expect((await tryPublish(p, await createSandbox(p), SAMPLE_FAQ)).status).toBe(200);
    const r = await tryPublish(p, await createSandbox(p), { ...SAMPLE_FAQ, title: "Different title, same body" });
    expectFlagged(r, "spam");
    expect(str(r.json(), "error.message")).toBe(
      "content refused: the same content is already published from several sandboxes",
    );
    p.advance(24 * 3_600_000 + 1);
    expect((await tryPublish(p, await createSandbox(p), SAMPLE_FAQ)).status).toBe(200);
  });

  it("SHOULD §23.3 a publication whose store write fails is not counted: later same content is not flagged", async () => {
    p = await startProvider();
    const write = vi.spyOn(p.server.store, "publishFaq").mockRejectedValue(new Error("disk I/O error"));
    // Three sandboxes try to publish the content; the store write fails each time (500, nothing stored).
    for (let i = 0; i < 3; i++) expect((await tryPublish(p, await createSandbox(p), SAMPLE_FAQ)).status).toBe(500);
    expect(write).toHaveBeenCalledTimes(3);
    write.mockRestore();
    // The old index had recorded all three: this 4th sandbox was refused as spam for content published nowhere.
    expect((await tryPublish(p, await createSandbox(p), SAMPLE_FAQ)).status).toBe(200);
  });

  it("SHOULD §23.3 an edit of published content whose store write fails is not counted either", async () => {
    p = await startProvider();
    const common = faqWith("The same answer everywhere.");
    for (let i = 0; i < 3; i++) {
      const a = await createSandbox(p);
      const f = await p.req("api.localhost", "POST", "/v1/faqs", { json: faqWith(`Ours ${i}.`), headers: a.auth });
      const url = `/v1/faqs/${str(f.json(), "faq_id")}`;
      expect((await p.req("api.localhost", "POST", `${url}/publish`, { headers: a.auth })).status).toBe(200);
      const q = str(f.json(), "questions.0.id");
      const write = vi.spyOn(p.server.store, "updateFaq").mockRejectedValueOnce(new Error("database is locked"));
      const edit = await p.req("api.localhost", "PATCH", `${url}/questions/${q}`, {
        json: { answer: "The same answer everywhere." },
        headers: a.auth,
      });
      expect(edit.status).toBe(500);
      expect(write).toHaveBeenCalledOnce();
      write.mockRestore();
    }
    expect((await tryPublish(p, await createSandbox(p), common)).status).toBe(200);
  });

  it("MUST §23.2 publication is rate limited per sandbox (429), before anything is published", async () => {
    p = await startProvider({ publishPerSandboxPerHour: 2 });
    const a = await createSandbox(p);
    const f = await p.req("api.localhost", "POST", "/v1/faqs", { json: SAMPLE_FAQ, headers: a.auth });
    const url = `/v1/faqs/${str(f.json(), "faq_id")}/publish`;
    expect((await p.req("api.localhost", "POST", url, { headers: a.auth })).status).toBe(200);
    expect((await p.req("api.localhost", "POST", url, { headers: a.auth })).status).toBe(200);
    expect((await p.req("api.localhost", "POST", url, { headers: a.auth })).status).toBe(429);
    p.advance(3_600_000 + 180_000); // a sliding window forgets a hit one slice (1/20) after it has passed
    expect((await p.req("api.localhost", "POST", url, { headers: a.auth })).status).toBe(200);
  });

  it("MUST §11.2/§23.2 flagged content raises its source's proof-of-work difficulty (behavioural throttling)", async () => {
    p = await startProvider({ admission: { baseDifficulty: 8, maxDifficulty: 20 } });
    const before = num((await p.req("api.localhost", "GET", "/v1/sandboxes/challenge")).json(), "difficulty");
    expectFlagged(
      await tryPublish(p, await createSandbox(p), faqWith("Enter your password here.")),
      "credential_harvesting",
    );
    const provider = p;
    const difficulty = async (): Promise<number> =>
      num((await provider.req("api.localhost", "GET", "/v1/sandboxes/challenge")).json(), "difficulty");
    // +2 bits for an hour (in memory) and +2 from the persistent reputation (30 points, raise at 10: +2 bits for about 42 h, then +1 for 72 h more).
    expect(await difficulty()).toBe(before + 4);
    p.advance(3_600_000 + 180_000); // a sliding window forgets a hit one slice (1/20) after it has passed
    expect(await difficulty()).toBe(before + 2);
  });

  it("the in-memory surcharge alone in admission mode `pow` (no persistent reputation)", async () => {
    p = await startProvider({ admission: { baseDifficulty: 8, maxDifficulty: 20 }, admissionPolicy: { mode: "pow" } });
    const before = num((await p.req("api.localhost", "GET", "/v1/sandboxes/challenge")).json(), "difficulty");
    expectFlagged(
      await tryPublish(p, await createSandbox(p), faqWith("Enter your password here.")),
      "credential_harvesting",
    );
    expect(num((await p.req("api.localhost", "GET", "/v1/sandboxes/challenge")).json(), "difficulty")).toBe(before + 2);
  });
});

describe("scanFaq on hostile input", () => {
  it("MUST §23.2 every link a page draws is one the scan checked: a drawn shortener link is always flagged (property)", () => {
    const piece = fc.constantFrom("[", "](", ")", "\n", "\n\n", " ", "a", "- ", "1. ", "# ", "```");
    const text = fc.array(piece, { maxLength: 6 }).map((x) => x.join(""));
    const label = fc.array(fc.constantFrom("a", " ", "\n", "- ", "# ", "["), { minLength: 1, maxLength: 6 });
    fc.assert(
      fc.property(text, label, text, (before, l, after) => {
        const answer = `${before}[${l.join("")}](https://bit.ly/x)${after}`;
        if (!renderSafeMarkdown(answer).includes('href="https://bit.ly/x"')) return;
        const body = {
          title: "t",
          slug: "t",
          description: "",
          settings: { theme: "auto", accent_color: "#000000", show_search: true, show_feedback: false },
          questions: [{ id: "q_1", question: "q?", answer, order: 0 }],
        } as const;
        expect(scanFaq(body), JSON.stringify(answer)).toBeDefined();
      }),
      { numRuns: 2000 },
    );
  });

  it("MUST §23.2 one Latin letter of a word swapped for its Cyrillic or Greek look-alike is always flagged (property)", () => {
    const swap: Readonly<Record<string, string>> = {
      a: "\u0430",
      e: "\u0435",
      o: "\u043e",
      p: "\u0440",
      c: "\u0441",
      x: "\u0445",
      y: "\u0443",
      i: "\u03b9",
      v: "\u03bd",
      T: "\u03a4",
    };
    const word = fc.stringMatching(/^[A-Za-z]{1,12}$/);
    fc.assert(
      fc.property(word, fc.constantFrom(...Object.keys(swap)), word, (before, letter, after) => {
        const answer = `Hello ${before}${swap[letter] ?? letter}${after} there.`;
        const body = {
          title: "t",
          slug: "t",
          description: "",
          settings: { theme: "auto", accent_color: "#000000", show_search: true, show_feedback: false },
          questions: [{ id: "q_1", question: "q?", answer, order: 0 }],
        } as const;
        expect(scanFaq(body)?.kind, JSON.stringify(answer)).toBe("phishing");
      }),
      { numRuns: 500 },
    );
  });

  it("never throws and is deterministic for arbitrary text (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), fc.string({ maxLength: 2000 }), (question, answer) => {
        const body = {
          title: "t",
          slug: "t",
          description: "",
          settings: { theme: "auto", accent_color: "#000000", show_search: true, show_feedback: false },
          questions: [{ id: "q_1", question, answer, order: 0 }],
        } as const;
        expect(scanFaq(body)).toEqual(scanFaq(body));
      }),
      { numRuns: 300 },
    );
  });
});
