/**
 * Real Chromium (Debian's, driven by playwright-core) against a test `acp serve`, for the console's browser
 * tests: the launch flags, the screenshot folder, and for the review tests one server and browser per file
 * with signed-in profiles whose console errors, page errors and CSP reports are collected.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { SESSION_COOKIE, SESSION_TTL_MS } from "@acp/server";
import { eventually, readJson, startTestServer, type TestServer } from "./harness.js";

export const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
export const ARTIFACTS = join(ROOT, "test-artifacts", "console");
export const CHROMIUM = "/usr/bin/chromium";
export const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
export const PHONE = { width: 390, height: 844 };
export const LAPTOP = { width: 1280, height: 800 };

/** Installs Debian's chromium when it is missing and makes the screenshot folder. */
export function ensureChromium(): void {
  if (!existsSync(CHROMIUM)) execFileSync("bash", [join(ROOT, "scripts", "ensure-chromium.sh")], { stdio: "inherit" });
  mkdirSync(ARTIFACTS, { recursive: true });
}

/** The state of one test file: its server, its browser, and what its pages reported. */
export interface ConsoleBrowser {
  s: TestServer;
  browser: Browser;
  /** Console errors, page errors and CSP reports of the current test's pages. */
  problems: string[];
  readonly contexts: BrowserContext[];
}

/** Starts a server on `policy` and Chromium for this file (closed after it); every test's profiles are closed after it. */
export function useConsoleBrowser(policy?: string): ConsoleBrowser {
  const ui = { problems: [] as string[], contexts: [] as BrowserContext[] } as unknown as ConsoleBrowser;
  beforeAll(async () => {
    ensureChromium();
    ui.s = await startTestServer(policy !== undefined ? { policy } : {});
    ui.browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  }, 600_000);
  afterEach(async () => {
    for (const c of ui.contexts.splice(0)) {
      // a route handler still running when its page closes must not fail the run
      for (const p of c.pages()) await p.unrouteAll({ behavior: "ignoreErrors" });
      await c.close();
    }
  });
  afterAll(async () => {
    await ui.browser?.close();
    await ui.s?.close();
  });
  return ui;
}

/** Collects a page's console errors, page errors and CSP reports into `ui.problems`. */
export function watch(ui: ConsoleBrowser, page: Page): Page {
  page.on("console", (m) => {
    if (m.type() === "error" || /Content Security Policy/i.test(m.text())) ui.problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => ui.problems.push(`pageerror: ${e.message}`));
  return page;
}

/** A browser profile signed in with a fresh session (its cookie set as the sign-in would set it). */
export async function signedIn(
  ui: ConsoleBrowser,
  viewport = LAPTOP,
  initScript?: string,
): Promise<{ context: BrowserContext; page: Page; sessionId: string }> {
  ui.problems = [];
  const context = await ui.browser.newContext({ viewport });
  ui.contexts.push(context);
  context.on("page", (page) => watch(ui, page));
  if (initScript !== undefined) await context.addInitScript(initScript);
  const { id, session } = await ui.s.stores.consoleAuth.createSession(Date.now(), SESSION_TTL_MS);
  await context.addCookies([{ name: SESSION_COOKIE, value: id, url: ui.s.url, httpOnly: true, sameSite: "Strict" }]);
  // what a sign-in leaves in this origin's storage: the session's key (the console's CSRF token)
  // (the init script runs on every page, about:blank too, whose storage is closed)
  await context.addInitScript(
    `if (window.location.origin === ${JSON.stringify(new URL(ui.s.url).origin)}) window.localStorage.setItem("acp-console-key", ${JSON.stringify(session.csrfToken)})`,
  );
  const page = await context.newPage();
  await page.goto(`${ui.s.url}/console/pending`);
  await page.locator('[data-role="live"].connected').waitFor();
  return { context, page, sessionId: id };
}

/** An agent's call that waits for a person. */
export function agentCall(
  ui: ConsoleBrowser,
  tool: string,
  args: Record<string, unknown>,
  agent = "mail-assistant",
): Promise<unknown> {
  return fetch(`${ui.s.url}/v1/decide?wait=true&session=review`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ tool, agent, arguments: args }),
  }).then(readJson);
}

export function card(page: Page, tool: string) {
  return page.locator("article.card", { has: page.locator("code.tool", { hasText: tool }) });
}

/** The id of the pending request for `tool` whose arguments mention `text` (a test's own request). */
export async function pendingId(ui: ConsoleBrowser, tool: string, text: string): Promise<string> {
  return eventually(
    async () =>
      (await ui.s.stores.pending.listPending(Date.now())).find(
        (r) => r.tool === tool && JSON.stringify(r.request).includes(text),
      )?.id,
  );
}

export async function noHorizontalScroll(page: Page): Promise<void> {
  const [scroll, client] = await page.evaluate<[number, number]>(
    "[document.documentElement.scrollWidth, document.documentElement.clientWidth]",
  );
  expect(scroll).toBeLessThanOrEqual(client);
}

/** Bidirectional and zero-width characters (shown escaped by the console, never raw). */
export const BIDI = /[\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/;
