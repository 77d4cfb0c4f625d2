/**
 * The human side in real Chromium (Debian's, driven by playwright-core): the preview exchange form (static,
 * no script; only the button press consumes the code) and the claim page, whose in-page script solves the
 * proof-of-work bound to the typed code with WebCrypto. `*.localhost` resolves to loopback in Chromium.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page, type Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createSandbox,
  humanClaim,
  publishFaq,
  SAMPLE_FAQ,
  str,
  startProvider,
  type Agent,
  type Provider,
} from "./harness.js";

const CHROMIUM = "/usr/bin/chromium";
const FLAGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"];

let p: Provider;
let a: Agent;
let profile: string;
let browser: BrowserContext;
let page: Page;
const consoleErrors: string[] = [];

beforeAll(async () => {
  p = await startProvider({ now: () => Date.now() });
  a = await createSandbox(p);
  await publishFaq(p, a);
  profile = mkdtempSync(join(tmpdir(), "acp-claim-chromium-"));
  browser = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS });
  page = browser.pages()[0] ?? (await browser.newPage());
  page.on("console", (m) => {
    if (m.type() === "error") consoleErrors.push(m.text());
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await p?.close();
  if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
});

describe.runIf(existsSync(CHROMIUM))("claim and preview pages in Chromium", () => {
  it("MUST §17.2 opening the exchange link consumes nothing; the button press does, once", async () => {
    const r = await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/preview`, { headers: a.auth, json: {} });
    const url = str(r.json(), "exchange_url");
    await page.goto(url);
    await page.reload();
    expect(await page.locator("script").count()).toBe(0);
    await page.getByRole("button", { name: "Open preview" }).click();
    await page.waitForURL(`http://preview.localhost:${p.port}/`);
    expect(await page.textContent("body")).toContain("What is Acme?");
    await page.goto(url);
    await page.getByRole("button", { name: "Open preview" }).click();
    expect(await page.textContent("body")).toContain('"code":"not_found"');
  });

  it("MUST §19.2 the claim page solves a fresh PoW bound to the code in the browser and opens the workspace", async () => {
    const r = await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/claim`, { headers: a.auth });
    const code = str(r.json(), "claim_code");
    await page.goto(str(r.json(), "claim_url"));
    await page.getByPlaceholder("ACP-XXXX-XXXX-XXXX-XXXX").fill(code.toLowerCase());
    await page.getByRole("button", { name: "Claim" }).click();
    await page.waitForURL(`http://admin.localhost:${p.port}/workspace`, { timeout: 60_000 });
    expect(await page.textContent("h1")).toBe("Your workspace");
    expect((await p.server.store.sandbox(a.id))?.state).toBe("claimed");
    expect(consoleErrors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
  }, 90_000);

  it("a double press on Claim runs one claim: one challenge, one verification, no failure counted", async () => {
    const b = await createSandbox(p);
    await publishFaq(p, b, { ...SAMPLE_FAQ, title: "Double press", questions: [{ question: "Q?", answer: "A." }] });
    const r = await p.req("api.localhost", "POST", `/v1/sandboxes/${b.id}/claim`, { headers: b.auth });
    const posts: string[] = [];
    const onRequest = (q: Request): void => {
      if (q.method() === "POST") posts.push(new URL(q.url()).pathname);
    };
    page.on("request", onRequest);
    await page.goto(str(r.json(), "claim_url"));
    await page.getByPlaceholder("ACP-XXXX-XXXX-XXXX-XXXX").fill(str(r.json(), "claim_code"));
    await page.getByRole("button", { name: "Claim" }).dblclick();
    await page.waitForURL(`http://admin.localhost:${p.port}/workspace`, { timeout: 60_000 });
    page.off("request", onRequest);
    // The old script ran a second claim beside the first: a second challenge, and a verification that failed
    // (the code was spent) and counted toward the range's lockout.
    expect(posts).toEqual(["/claim/challenge", "/claim/verify"]);
    expect((await p.server.store.sandbox(b.id))?.state).toBe("claimed");
  }, 90_000);

  it("without JavaScript the form says why it cannot claim, and pressing it again and again locks nobody out", async () => {
    const c = await createSandbox(p);
    await publishFaq(p, c, { ...SAMPLE_FAQ, title: "No script", questions: [{ question: "Q2?", answer: "A2." }] });
    const r = await p.req("api.localhost", "POST", `/v1/sandboxes/${c.id}/claim`, { headers: c.auth });
    const code = str(r.json(), "claim_code");
    const other = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
    try {
      const tab = await (await other.newContext({ javaScriptEnabled: false })).newPage();
      for (let i = 0; i < 7; i++) {
        await tab.goto(str(r.json(), "claim_url"));
        await tab.getByPlaceholder("ACP-XXXX-XXXX-XXXX-XXXX").fill(code);
        await tab.getByRole("button", { name: "Claim" }).click();
        await tab.waitForURL(`http://admin.localhost:${p.port}/claim/verify`);
        expect(await tab.textContent("h1")).toBe("This page needs JavaScript");
      }
      await tab.getByRole("link", { name: "go back to the claim page" }).click();
      await tab.waitForURL(`http://admin.localhost:${p.port}/claim`);
    } finally {
      await other.close();
    }
    // The old form's seven presses were seven failed verifications: the range was locked out (429).
    expect((await humanClaim(p, code)).verify.status).toBe(200);
  }, 90_000);

  it("a 429 on the claim page says when to try again, from Retry-After (not to check the code)", async () => {
    const limited = await startProvider({ now: () => Date.now(), claimPerIpPerHour: 1 });
    // A browser of its own, closed before the provider (whose close waits for the browser's idle connections).
    const other = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
    try {
      const tab = await other.newPage();
      await tab.goto(`http://admin.localhost:${limited.port}/claim`);
      await tab.getByPlaceholder("ACP-XXXX-XXXX-XXXX-XXXX").fill("ACP-AAAA-AAAA-AAAA-AAAA");
      // The challenge is the range's one claim request this hour; the verification is refused (both count).
      const answer = tab.waitForResponse((q) => new URL(q.url()).pathname === "/claim/verify");
      await tab.getByRole("button", { name: "Claim" }).click();
      const res = await answer;
      expect(res.status()).toBe(429);
      const minutes = Math.ceil(Number(res.headers()["retry-after"]) / 60);
      expect(minutes).toBeGreaterThan(60);
      await expect.poll(() => tab.textContent("#s")).toBe(`Too many attempts. Try again in ${minutes} minutes.`);
    } finally {
      await other.close();
      await limited.close();
    }
  }, 90_000);

  it("when the difficulty rises while the page works (409 claim_challenge_stale), the page solves a new challenge and claims", async () => {
    const rising = await startProvider({
      now: () => Date.now(),
      admission: { baseDifficulty: 8, maxDifficulty: 16, freeCreationsPerSource: 0 },
    });
    const other = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
    try {
      const b = await createSandbox(rising);
      await publishFaq(rising, b);
      const r = await rising.req("api.localhost", "POST", `/v1/sandboxes/${b.id}/claim`, { headers: b.auth });
      const tab = await other.newPage();
      const answers: string[] = [];
      tab.on("response", (q) => {
        if (q.request().method() === "POST") answers.push(`${new URL(q.url()).pathname} ${q.status()}`);
      });
      let raised = false;
      // Before the first verification leaves the browser, another creation from the range raises its difficulty.
      await tab.route("**/claim/verify", async (route) => {
        if (!raised) {
          raised = true;
          await createSandbox(rising);
        }
        await route.continue();
      });
      await tab.goto(`http://admin.localhost:${rising.port}/claim`);
      await tab.getByPlaceholder("ACP-XXXX-XXXX-XXXX-XXXX").fill(str(r.json(), "claim_code"));
      await tab.getByRole("button", { name: "Claim" }).click();
      await tab.waitForURL(`http://admin.localhost:${rising.port}/workspace`, { timeout: 60_000 });
      expect(answers).toEqual([
        "/claim/challenge 200",
        "/claim/verify 409",
        "/claim/challenge 200",
        "/claim/verify 200",
      ]);
      expect((await rising.server.store.sandbox(b.id))?.state).toBe("claimed");
    } finally {
      await other.close();
      await rising.close();
    }
  }, 90_000);

  it("MUST §21 the claim page cannot be framed", async () => {
    await page.setContent(`<iframe src="http://admin.localhost:${p.port}/claim"></iframe>`);
    await page.waitForTimeout(500);
    const frame = page.frames()[1];
    const text =
      frame === undefined
        ? ""
        : await frame
            .locator("body")
            .innerText({ timeout: 2000 })
            .catch(() => "");
    expect(text).not.toContain("Claim your workspace");
  });
});
