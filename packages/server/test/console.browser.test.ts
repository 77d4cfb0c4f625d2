/**
 * The web console in real Chromium (Debian's, driven by playwright-core): an agent's call waits, a person
 * signs in with the one-time link and answers in the page, and the agent's call completes. Screenshots of
 * each page go to test-artifacts/console/.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LINK_TTL_MS } from "@acp/server";
import { ARTIFACTS, CHROMIUM, FLAGS, ensureChromium } from "./console-browser.js";
import { at, readJson, startTestServer, type TestServer } from "./harness.js";

let s: TestServer;
let profile: string;
let browser: BrowserContext;
let page: Page;
const cspViolations: string[] = [];

beforeAll(async () => {
  ensureChromium();
  s = await startTestServer();
  profile = mkdtempSync(join(tmpdir(), "acp-chromium-"));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 390, height: 844 },
  });
  page = browser.pages()[0] ?? (await browser.newPage());
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await s?.close();
  if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
});

/** An agent's call that waits for a person: `POST /v1/decide?wait=true`. */
function agentCall(tool: string, args: Record<string, unknown>): Promise<unknown> {
  return fetch(`${s.url}/v1/decide?wait=true&session=browser-test`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ tool, agent: "mail-assistant", arguments: args }),
  }).then(readJson);
}

function card(tool: string) {
  return page.locator("article.card", { has: page.locator("code.tool", { hasText: tool }) });
}

describe("web console in Chromium", () => {
  it("signs in with the one-time link", async () => {
    const token = await s.stores.consoleAuth.createLink(Date.now(), LINK_TTL_MS);
    await page.goto(`${s.url}/console/login?token=${token}`);
    await page.getByRole("button", { name: "Sign in" }).click();
    // the redirect's #key=… fragment is taken into this origin's storage and out of the address
    await page.waitForURL(/\/console\/pending$/);
    await expect(page.locator("h1").textContent()).resolves.toBe("Pending approvals");
    const key = await page.evaluate<string | null>('window.localStorage.getItem("acp-console-key")');
    expect(key?.length ?? 0).toBeGreaterThan(20);
    // no page the service serves holds it (what a stolen cookie reads)
    const served = await page.evaluate<string>("fetch(window.location.href).then((r) => r.text())");
    expect(served).toContain("Pending approvals");
    expect(served).not.toContain(key);
    await expect(page.locator('form.signout input[name="csrf"]').inputValue()).resolves.toBe(key);
    const cookies = await browser.cookies(s.url);
    const session = cookies.find((c) => c.name === "acp_console");
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe("Strict");
  });

  it("approves a waiting call in the page and the agent's call completes", async () => {
    const waiting = agentCall("write_file", { path: "/tmp/report.txt", api_token: "sk-live-123" });
    const c = card("write_file");
    await c.waitFor({ timeout: 15_000 });
    await expect(c.locator("pre.json").textContent()).resolves.not.toContain("sk-live-123");
    await expect(c.locator("ul.reasons").textContent()).resolves.toContain("ask-writes");
    await page.screenshot({ path: join(ARTIFACTS, "pending.png"), fullPage: true });
    await c.getByRole("button", { name: "Approve once" }).click();
    const answer = await waiting;
    expect(answer).toMatchObject({ route: "accept", consent: { outcome: "approved", scope: "once" } });
    expect(at(answer, "consent", "arguments", "api_token")).toBe("sk-live-123");
  });

  it("approves with edited arguments shown as a diff", async () => {
    const waiting = agentCall("write_file", { path: "/etc/passwd", content: "x" });
    const c = card("write_file").filter({ hasText: "/etc/passwd" });
    await c.waitFor({ timeout: 15_000 });
    await c.locator("details.edit summary").click();
    const area = c.locator('textarea[data-role="arguments"]');
    await area.fill(JSON.stringify({ path: "/tmp/safe.txt", content: "x" }, null, 2));
    await expect(c.locator('[data-role="diff"]').textContent()).resolves.toContain('+ path: "/tmp/safe.txt"');
    await page.screenshot({ path: join(ARTIFACTS, "pending-edit-diff.png"), fullPage: true });
    await c.getByRole("button", { name: "Approve with these arguments" }).click();
    const answer = await waiting;
    expect(answer).toMatchObject({ route: "accept", consent: { arguments: { path: "/tmp/safe.txt", content: "x" } } });
  });

  it("a denial with a reason shows on the agent's side", async () => {
    const waiting = agentCall("delete_file", { path: "/tmp/important" });
    const c = card("delete_file");
    await c.waitFor({ timeout: 15_000 });
    await c.locator('input[data-role="reason"]').fill("not without a backup");
    await c.getByRole("button", { name: "Deny" }).click();
    const answer = await waiting;
    expect(answer).toMatchObject({ route: "refuse", consent: { outcome: "denied" } });
    expect(at(answer, "consent", "reason")).toContain("not without a backup");
  });

  it("shows the audit trail with the chain verified, searchable", async () => {
    await s.stores.auditLog.flush();
    await page.goto(`${s.url}/console/audit?tool=delete_file`);
    await expect(page.locator('[data-role="chain-status"]').textContent()).resolves.toContain("Chain verified");
    await expect(page.locator("tbody").textContent()).resolves.toContain("consent_denied");
    await page.screenshot({ path: join(ARTIFACTS, "audit.png"), fullPage: true });
  });

  it("simulates a request and shows the route and the deciding rule", async () => {
    await page.goto(`${s.url}/console/simulate`);
    await page
      .locator("#sim-request")
      .fill(JSON.stringify({ tool: "pay_invoice", category: "financial", arguments: {} }));
    await page.getByRole("button", { name: "Simulate" }).click();
    const result = page.locator('[data-role="sim-result"]');
    await result.locator("h2").waitFor();
    await expect(result.textContent()).resolves.toContain("Route: refuse");
    await expect(result.textContent()).resolves.toContain("policy:refuse-financial");
    await page.screenshot({ path: join(ARTIFACTS, "simulate.png"), fullPage: true });
    expect(cspViolations).toEqual([]);
  });

  it("refuses a console state change without the CSRF token", async () => {
    const status = await page.evaluate(async () => {
      const res = await fetch("/console/api/simulate", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ tool: "read_file", arguments: {} }),
      });
      return res.status;
    });
    expect(status).toBe(403);
  });
});
