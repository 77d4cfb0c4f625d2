/**
 * The human side in real Chromium (Debian's, driven by playwright-core): the preview exchange form (static,
 * no script; only the button press consumes the code) and the claim page, whose in-page script solves the
 * proof-of-work bound to the typed code with WebCrypto. `*.localhost` resolves to loopback in Chromium.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, publishFaq, str, startProvider, type Agent, type Provider } from "./harness.js";

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
