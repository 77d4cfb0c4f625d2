/**
 * The web console's pages in real Chromium (Debian's, driven by playwright-core): sign-in with the keyboard,
 * JavaScript off, a stream that drops, a service that cannot be reached, keyboard-only use, phone width, the
 * audit trail (filters, a tampered chain) and the policy simulator — and no console error or CSP violation
 * on any page. Screenshots go to test-artifacts/console/.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LINK_TTL_MS, SESSION_COOKIE, SESSION_TTL_MS } from "@acp/server";
import {
  ARTIFACTS,
  LAPTOP,
  PHONE,
  agentCall,
  card,
  noHorizontalScroll,
  pendingId,
  signedIn,
  watch,
  useConsoleBrowser,
} from "./console-browser.js";
import { at, startTestServer, type TestServer } from "./harness.js";

const ui = useConsoleBrowser();

describe("console review in Chromium: sign-in, keyboard, phone, audit and simulator pages", () => {
  it("signs in from the link with the keyboard alone (the button has the focus), as the name the link carries", async () => {
    ui.problems = [];
    const context = await ui.browser.newContext({ viewport: PHONE });
    ui.contexts.push(context);
    context.on("page", (page) => watch(ui, page));
    const page = await context.newPage();
    const token = await ui.s.stores.consoleAuth.createLink(Date.now(), LINK_TTL_MS, "alice");
    await page.goto(`${ui.s.url}/console/login?token=${token}`);
    // autofocus is applied at the page's next rendering step, which may come after `load` on a busy machine
    await expect
      .poll(() => page.evaluate<string | null>("document.activeElement ? document.activeElement.tagName : null"), {
        timeout: 10_000,
      })
      .toBe("BUTTON");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/console\/pending$/);
    // the link named who signs in (acp console-link --as alice): the page says so
    await expect(page.locator("header .signed-in-as").innerText()).resolves.toBe("signed in as alice");
    await page.screenshot({ path: join(ARTIFACTS, "review-phone-signed-in.png") });
    expect(ui.problems).toEqual([]);
  });

  it("says that it needs JavaScript when it is off", async () => {
    ui.problems = [];
    const context = await ui.browser.newContext({ viewport: LAPTOP, javaScriptEnabled: false });
    ui.contexts.push(context);
    const { id } = await ui.s.stores.consoleAuth.createSession(Date.now(), SESSION_TTL_MS);
    await context.addCookies([{ name: SESSION_COOKIE, value: id, url: ui.s.url, httpOnly: true, sameSite: "Strict" }]);
    const page = await context.newPage();
    await page.goto(`${ui.s.url}/console/pending`);
    await expect(page.locator("main").innerText()).resolves.toContain("This console needs JavaScript");
  });

  it("says when the page is not live, and catches up when it reconnects", async () => {
    const { page } = await signedIn(ui);
    let streamDown = true;
    await page.route("**/console/events", (route) => (streamDown ? route.abort() : route.continue()));
    await page.reload();
    await page.locator('[data-role="live"]', { hasText: "Not live" }).waitFor();
    const waiting = agentCall(ui, "write_file", { path: "/srv/while-offline.txt" });
    await pendingId(ui, "write_file", "while-offline");
    streamDown = false;
    await page.locator('[data-role="live"].connected', { hasText: "Live:" }).waitFor({ timeout: 20_000 });
    const c = card(page, "write_file").filter({ hasText: "while-offline" });
    await c.waitFor();
    await c.getByRole("button", { name: "Deny" }).click();
    await waiting;
  });

  it("says plainly when an answer could not reach the service, and lets the person try again", async () => {
    const { page } = await signedIn(ui);
    const waiting = agentCall(ui, "write_file", { path: "/srv/unreachable.txt" });
    const c = card(page, "write_file").filter({ hasText: "unreachable" });
    await c.waitFor();
    let down = true;
    await page.route("**/console/api/consent/*", (route) => (down ? route.abort() : route.continue()));
    await c.getByRole("button", { name: "Approve once" }).click();
    await c.locator('[data-role="status"]', { hasText: /^Could not reach acp serve/ }).waitFor();
    down = false;
    await c.getByRole("button", { name: "Approve once" }).click();
    expect(await waiting).toMatchObject({ route: "accept" });
  });

  it("is usable with the keyboard alone: every control is labelled, focus stays on the answered card", async () => {
    const { page } = await signedIn(ui);
    const waiting = agentCall(ui, "write_file", { path: "/srv/keyboard.txt" });
    const c = card(page, "write_file").filter({ hasText: "keyboard" });
    await c.waitFor();
    for (const control of await c.locator("input, select, textarea, button, summary").all()) {
      const name = (await control.getAttribute("aria-label")) ?? (await control.textContent()) ?? "";
      expect(name.trim()).not.toBe("");
    }
    // the list is not a live region (its countdowns tick every second); new requests are announced once
    await expect(page.locator("#pending-list").getAttribute("aria-live")).resolves.toBeNull();
    await expect(page.locator("[aria-live] [data-role='expires']").count()).resolves.toBe(0);
    await page
      .locator('[data-role="announce"][aria-live="polite"]', {
        hasText: /New request.*keyboard|wants to run write_file/,
      })
      .waitFor();
    let reached = false;
    for (let i = 0; i < 200 && !reached; i++) {
      await page.keyboard.press("Tab");
      reached = (await c.locator("button:focus", { hasText: "Approve once" }).count()) === 1;
    }
    expect(reached).toBe(true);
    await page.keyboard.press("Enter");
    expect(await waiting).toMatchObject({ route: "accept", consent: { outcome: "approved" } });
    await c.locator('[data-role="status"]', { hasText: /Recorded/ }).waitFor();
    expect(await c.locator(":focus").count()).toBe(1);
    expect(ui.problems).toEqual([]);
  });

  it("fits a phone: no horizontal scroll on any page and every button on screen", async () => {
    const { page } = await signedIn(ui, PHONE);
    const long = "x".repeat(5000);
    const waiting = agentCall(ui, `write_${"y".repeat(200)}`, { path: `/srv/${long}`, note: "word ".repeat(3000) });
    const c = page.locator("article.card").filter({ hasText: "yyyy" });
    await c.waitFor();
    for (const button of await c.locator("button").all()) {
      await button.scrollIntoViewIfNeeded();
      const box = await button.boundingBox();
      expect(box).not.toBeNull();
      expect(box!.x).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);
    }
    await noHorizontalScroll(page);
    // 20,000 characters of arguments scroll in their own box: the buttons stay within two screens of the heading
    const heading = await c.locator("h2").boundingBox();
    const approve = await c.getByRole("button", { name: "Approve once" }).boundingBox();
    expect(approve!.y - heading!.y).toBeLessThan(2 * PHONE.height);
    await page.screenshot({ path: join(ARTIFACTS, "review-phone-pending.png") });
    await c.getByRole("button", { name: "Deny" }).click();
    await waiting;
    for (const path of ["/console/audit", "/console/simulate"]) {
      await page.goto(`${ui.s.url}${path}`);
      await noHorizontalScroll(page);
      if (path === "/console/audit") {
        // each event reads as "label value" lines, not eight columns a few letters wide
        const tool = await page.locator('tbody td[data-label="Tool"]').first().boundingBox();
        expect(tool!.width).toBeGreaterThan(PHONE.width / 2);
      }
      await page.screenshot({ path: join(ARTIFACTS, `review-phone-${path.split("/")[2]}.png`), fullPage: true });
    }
    expect(ui.problems).toEqual([]);
  });

  it("filters the audit trail by an event type picked from the known ones, with the decisions suggested", async () => {
    const { page } = await signedIn(ui);
    await ui.s.stores.auditLog.flush();
    await page.goto(`${ui.s.url}/console/audit`);
    await page.getByLabel("Event type").selectOption("consent_denied");
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForURL(/event_type=consent_denied/);
    const events = await page.locator('tbody td[data-label="Event"]').allInnerTexts();
    expect(events.length).toBeGreaterThan(0);
    expect(new Set(events)).toEqual(new Set(["consent_denied"]));
    await expect(page.getByLabel("Event type").inputValue()).resolves.toBe("consent_denied");
    // the whole event, for who answered and why
    const details = page.locator("tbody details").first();
    await details.locator("summary").click();
    const event = JSON.parse(await details.locator("pre").innerText()) as Record<string, unknown>;
    expect(event["event_type"]).toBe("consent_denied");
    expect(at(event, "metadata", "consent_response", "approver", "id")).toBe("console");
    expect(typeof at(event, "metadata", "reason")).toBe("string");
    const suggested: (string | null)[] = [];
    for (const option of await page.locator("datalist#audit-decisions option").all()) {
      suggested.push(await option.getAttribute("value"));
    }
    expect(suggested).toEqual(expect.arrayContaining(["accept", "ask", "refuse", "approved", "denied", "expired"]));
    await expect(page.getByLabel("Decision").getAttribute("list")).resolves.toBe("audit-decisions");
    expect(ui.problems).toEqual([]);
  });

  it("says an invalid simulator request is invalid, and names the deciding rule of a valid one", async () => {
    const { page } = await signedIn(ui);
    await page.goto(`${ui.s.url}/console/simulate`);
    const area = page.locator("#sim-request");
    const result = page.locator('[data-role="sim-result"]');
    await area.fill('{"tool": "read_file"');
    await page.getByRole("button", { name: "Simulate" }).click();
    await expect(result.innerText()).resolves.toMatch(/^Invalid JSON/);
    await area.fill(JSON.stringify({ tool: "read_file", arguments: {}, bogus: 1 }));
    await page.getByRole("button", { name: "Simulate" }).click();
    await result.locator("h2").waitFor();
    await expect(result.innerText()).resolves.toMatch(/not a valid action request/);
    await expect(result.innerText()).resolves.toContain("unknown request field `bogus`");
    await expect(result.innerText()).resolves.not.toMatch(/defaults applied/);
    await area.fill(JSON.stringify({ tool: "write_file", arguments: { path: "/x" } }));
    await page.getByRole("button", { name: "Simulate" }).click();
    await result.locator("h2", { hasText: "Route: ask" }).waitFor();
    await expect(result.innerText()).resolves.toContain("Deciding rule: policy:ask-writes");
    await page.screenshot({ path: join(ARTIFACTS, "review-simulate.png"), fullPage: true });
    expect(ui.problems).toEqual([]);
  });
});
describe("console audit page with a tampered chain", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  it("links to the first broken event when it is on an older page, and shows an unreadable line", async () => {
    for (let i = 0; i < 110; i++) {
      const res = await fetch(`${t.url}/v1/decide`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ tool: "read_file", arguments: { path: `/srv/${i}` } }),
      });
      expect(res.status).toBe(200);
    }
    await t.stores.auditLog.flush();
    const file = join(t.home, "audit.jsonl");
    const lines = readFileSync(file, "utf8").split("\n");
    expect(lines.length).toBeGreaterThan(105);
    lines[2] = `#${lines[2]!.slice(1)}`; // line 3 is no longer JSON (same length: the writer keeps its size)
    writeFileSync(file, lines.join("\n"));
    ui.problems = [];
    const context = await ui.browser.newContext({ viewport: LAPTOP });
    ui.contexts.push(context);
    context.on("page", (page) => watch(ui, page));
    const { id } = await t.stores.consoleAuth.createSession(Date.now(), SESSION_TTL_MS);
    await context.addCookies([{ name: SESSION_COOKIE, value: id, url: t.url, httpOnly: true, sameSite: "Strict" }]);
    const page = await context.newPage();
    await page.goto(`${t.url}/console/audit`);
    await expect(page.locator('[data-role="chain-status"]').innerText()).resolves.toMatch(/BROKEN.*line 3/);
    await page.getByRole("link", { name: /first broken event/i }).click();
    const row = page.locator("tr.broken");
    await row.waitFor();
    await expect(row.innerText()).resolves.toMatch(/^3\s/);
    await expect(row.innerText()).resolves.toMatch(/not_json|unreadable/i);
    await page.screenshot({ path: join(ARTIFACTS, "review-audit-broken.png"), fullPage: true });
    await page.getByRole("link", { name: /newest/i }).click();
    await page.waitForURL(/\/console\/audit$/);
    expect(ui.problems).toEqual([]);
  });
});
