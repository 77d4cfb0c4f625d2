/**
 * The web console as a careful person uses it, in real Chromium (Debian's, driven by playwright-core):
 * hostile text in what an agent sends, edits the protocol cannot express, two tabs, a request that expires
 * while the page is open, a session that ends, keyboard-only use, phone width, a tampered audit chain, bad
 * simulator input, and no console error or CSP violation on any page. Screenshots go to
 * test-artifacts/console/.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { STARTER_POLICY } from "@acp/store";
import { LINK_TTL_MS, SESSION_COOKIE, SESSION_TTL_MS } from "@acp/server";
import { at, eventually, readJson, startTestServer, type TestServer } from "./harness.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ARTIFACTS = join(ROOT, "test-artifacts", "console");
const CHROMIUM = "/usr/bin/chromium";
const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const PHONE = { width: 390, height: 844 };
const LAPTOP = { width: 1280, height: 800 };

/** The starter policy with one rule whose requests expire after 8 seconds (the expiry test; room for a loaded machine to show the card and type first). */
const POLICY = STARTER_POLICY.replace(
  /^rules:\n/m,
  'rules:\n  - id: quick-ask\n    match:\n      tool: "quick_*"\n    action: ask\n    timeout: 8\n',
);

let s: TestServer;
let browserApp: Browser;
/** Console errors, page errors and CSP reports of the current test's pages. */
let problems: string[] = [];
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) execFileSync("bash", [join(ROOT, "scripts", "ensure-chromium.sh")], { stdio: "inherit" });
  mkdirSync(ARTIFACTS, { recursive: true });
  s = await startTestServer({ policy: POLICY });
  browserApp = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
}, 600_000);

afterEach(async () => {
  for (const c of contexts.splice(0)) {
    // a route handler still running when its page closes must not fail the run
    for (const p of c.pages()) await p.unrouteAll({ behavior: "ignoreErrors" });
    await c.close();
  }
});

afterAll(async () => {
  await browserApp?.close();
  await s?.close();
});

function watch(page: Page): Page {
  page.on("console", (m) => {
    if (m.type() === "error" || /Content Security Policy/i.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  return page;
}

/** A browser profile signed in with a fresh session (its cookie set as the sign-in would set it). */
async function signedIn(
  viewport = LAPTOP,
  initScript?: string,
): Promise<{ context: BrowserContext; page: Page; sessionId: string }> {
  problems = [];
  const context = await browserApp.newContext({ viewport });
  contexts.push(context);
  context.on("page", watch);
  if (initScript !== undefined) await context.addInitScript(initScript);
  const { id } = await s.stores.consoleAuth.createSession(Date.now(), SESSION_TTL_MS);
  await context.addCookies([{ name: SESSION_COOKIE, value: id, url: s.url, httpOnly: true, sameSite: "Strict" }]);
  const page = await context.newPage();
  await page.goto(`${s.url}/console/pending`);
  await page.locator('[data-role="live"].connected').waitFor();
  return { context, page, sessionId: id };
}

/** An agent's call that waits for a person. */
function agentCall(tool: string, args: Record<string, unknown>, agent = "mail-assistant"): Promise<unknown> {
  return fetch(`${s.url}/v1/decide?wait=true&session=review`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ tool, agent, arguments: args }),
  }).then(readJson);
}

function card(page: Page, tool: string) {
  return page.locator("article.card", { has: page.locator("code.tool", { hasText: tool }) });
}

/** The id of the pending request for `tool` whose arguments mention `text` (a test's own request). */
async function pendingId(tool: string, text: string): Promise<string> {
  return eventually(
    async () =>
      (await s.stores.pending.listPending(Date.now())).find(
        (r) => r.tool === tool && JSON.stringify(r.request).includes(text),
      )?.id,
  );
}

async function noHorizontalScroll(page: Page): Promise<void> {
  const [scroll, client] = await page.evaluate<[number, number]>(
    "[document.documentElement.scrollWidth, document.documentElement.clientWidth]",
  );
  expect(scroll).toBeLessThanOrEqual(client);
}

const BIDI = /[\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/;

describe("console review in Chromium", () => {
  it("shows bidi, zero-width and control characters escaped, and hostile markup as text", async () => {
    const { page } = await signedIn(PHONE);
    const tool = "write_\u202Eelif\u200B<b>x</b>";
    const waiting = agentCall(
      tool,
      {
        "<img src=x onerror=alert(1)>": "<script>alert(1)</script>",
        file: "invoice\u202Egpj.exe",
        bell: "a\u0007\u009b",
      },
      "<i>evil</i>\u202E",
    );
    const c = page.locator("article.card").filter({ hasText: "evil" });
    await c.waitFor();
    const heading = await c.locator("h2").innerText();
    expect(heading).not.toMatch(BIDI);
    expect(heading).toContain("\\u202e");
    expect(heading).toContain("<i>evil</i>");
    expect(heading).toContain("wants to run");
    const all = await c.innerText();
    expect(all).not.toMatch(BIDI);
    // eslint-disable-next-line no-control-regex -- no control character may reach the page
    expect(all).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(all).toContain("invoice\\u202egpj.exe");
    expect(await page.locator("img").count()).toBe(0);
    await page.screenshot({ path: join(ARTIFACTS, "review-hostile-phone.png"), fullPage: true });
    await noHorizontalScroll(page);
    // the edit box holds the same escapes: it still parses to the agent's values
    await c.locator("summary").click();
    const area = c.locator('textarea[data-role="arguments"]');
    expect(await area.inputValue()).not.toMatch(BIDI);
    const edited = JSON.parse(await area.inputValue()) as Record<string, unknown>;
    edited["bell"] = "quiet\u202E";
    await area.fill(JSON.stringify(edited));
    const diff = await c.locator('[data-role="diff"]').innerText();
    expect(diff).toContain("\\u202e");
    expect(diff).not.toMatch(BIDI);
    await c.getByRole("button", { name: "Approve with these arguments" }).click();
    const answer = await waiting;
    expect(at(answer, "consent", "arguments")).toEqual({
      "<img src=x onerror=alert(1)>": "<script>alert(1)</script>",
      file: "invoice\u202Egpj.exe",
      bell: "quiet\u202E",
    });
    expect(problems).toEqual([]);
  });

  it("says in plain words why ACP asks and what a session or time-window approval covers", async () => {
    const { page } = await signedIn();
    const waiting = agentCall("write_file", { path: "/srv/words.txt" });
    const c = card(page, "write_file").filter({ hasText: "words.txt" });
    await c.waitFor();
    const reasons = await c.locator("ul.reasons").innerText();
    expect(reasons).toContain("Your policy's rule ask-writes matched this call; it says to ask a person first.");
    expect(reasons).not.toContain("`");
    await expect(c.locator(".hint").first().innerText()).resolves.toMatch(/exactly these arguments/);
    await expect(c.locator("text=agent session review").count()).resolves.toBe(1);
    await c.getByRole("button", { name: "Deny" }).click();
    await waiting;
    expect(problems).toEqual([]);
  });

  it("approves for the agent session and for a while, and a denial's reason reaches the agent verbatim", async () => {
    const { page } = await signedIn();
    const session = agentCall("write_file", { path: "/srv/session.txt" });
    const a = card(page, "write_file").filter({ hasText: "session.txt" });
    await a.waitFor();
    // a tab left in the background shows how many requests wait
    await expect(page.title()).resolves.toMatch(/^\(\d+\) Pending approvals · ACP console$/);
    const waitingBefore = Number(/^\((\d+)\)/.exec(await page.title())![1]);
    await a.getByRole("button", { name: "Approve for this session" }).click();
    expect(await session).toMatchObject({ route: "accept", consent: { outcome: "approved", scope: "session" } });
    await a.locator('[data-role="status"]', { hasText: "Recorded" }).waitFor();
    const after = await page.title();
    expect(after).toBe(
      waitingBefore === 1
        ? "Pending approvals · ACP console"
        : `(${waitingBefore - 1}) Pending approvals · ACP console`,
    );
    // the same call in the same agent session runs without asking
    expect(await agentCall("write_file", { path: "/srv/session.txt" })).toMatchObject({ route: "accept" });
    const before = Date.now();
    const windowed = agentCall("write_file", { path: "/srv/window.txt" });
    const b = card(page, "write_file").filter({ hasText: "window.txt" });
    await b.waitFor();
    await b.getByLabel("approval window").selectOption("1h");
    await b.getByRole("button", { name: "Approve for a while" }).click();
    const answer = await windowed;
    expect(answer).toMatchObject({ route: "accept", consent: { outcome: "approved" } });
    const until = Date.parse(String(at(answer, "consent", "scope", "until")));
    expect(until).toBeGreaterThanOrEqual(before + 3_600_000 - 60_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 3_600_000 + 60_000);
    await b.locator('[data-role="status"]', { hasText: /Recorded: approved/ }).waitFor();
    const denied = agentCall("write_file", { path: "/srv/deny.txt" });
    const c = card(page, "write_file").filter({ hasText: "deny.txt" });
    await c.waitFor();
    const reason = 'Not before the 18:00 backup — ticket #42, "quoted" <b>as typed</b>';
    await c.getByLabel("deny reason").fill(`  ${reason}  `);
    // Enter in the reason field denies, as in a form
    await c.getByLabel("deny reason").press("Enter");
    const no = await denied;
    expect(no).toMatchObject({ route: "refuse", consent: { outcome: "denied" } });
    expect(String(at(no, "consent", "reason")).endsWith(`: ${reason}`)).toBe(true);
    await c.locator('[data-role="status"]', { hasText: /denied.*with your reason/ }).waitFor();
    expect(problems).toEqual([]);
  });

  it("never shows a secret, and an edit that leaves [redacted] as is keeps the real one", async () => {
    const { page } = await signedIn();
    const secrets = {
      path: "/srv/secret.txt",
      api_key: "sk-live-0123456789abcdef",
      headers: { Authorization: "Bearer abcdef0123456789abcdef", "X-Trace": "1" },
      note: "the token is sk-live-fedcba9876543210",
    };
    const waiting = agentCall("write_file", secrets);
    const c = card(page, "write_file").filter({ hasText: "secret.txt" });
    await c.waitFor();
    const html = await c.innerHTML();
    for (const secret of ["sk-live-0123456789abcdef", "abcdef0123456789abcdef", "sk-live-fedcba9876543210"]) {
      expect(html).not.toContain(secret);
    }
    await c.locator("summary").click();
    const area = c.locator('textarea[data-role="arguments"]');
    const shown = JSON.parse(await area.inputValue()) as { headers: Record<string, string>; path: string };
    expect(shown.headers["Authorization"]).toBe("[redacted]");
    shown.headers["X-Trace"] = "2";
    shown.path = "/srv/secret-2.txt";
    await area.fill(JSON.stringify(shown, null, 2));
    await c.getByRole("button", { name: "Approve with these arguments" }).click();
    expect(at(await waiting, "consent", "arguments")).toEqual({
      ...secrets,
      path: "/srv/secret-2.txt",
      headers: { Authorization: "Bearer abcdef0123456789abcdef", "X-Trace": "2" },
    });
    expect(problems).toEqual([]);
  });

  it("refuses an edit that removes an argument (modifications only replace or add), and marks added ones", async () => {
    const { page } = await signedIn();
    const waiting = agentCall("write_file", { path: "/srv/a.txt", content: "x", mode: "0644" });
    const c = card(page, "write_file").filter({ hasText: "/srv/a.txt" });
    await c.waitFor();
    const id = await pendingId("write_file", "/srv/a.txt");
    await c.locator("summary").click();
    const area = c.locator('textarea[data-role="arguments"]');
    await area.fill(JSON.stringify({ path: "/srv/a.txt", content: "x" }));
    await expect(c.locator('[data-role="diff"]').innerText()).resolves.toMatch(/mode.*cannot be removed/);
    await c.getByRole("button", { name: "Approve with these arguments" }).click();
    await expect(c.locator('[data-role="status"]').innerText()).resolves.toMatch(/cannot be removed/);
    expect((await s.stores.pending.get(id))?.status).toBe("pending");
    // adding a key is an override the protocol allows: the diff says it is new, the agent gets it
    await area.fill(JSON.stringify({ path: "/srv/a.txt", content: "x", mode: "0644", owner: "app" }));
    await expect(c.locator('[data-role="diff"]').innerText()).resolves.toMatch(/\+ owner: "app" \(new argument\)/);
    await area.fill("{ not json");
    await c.getByRole("button", { name: "Approve with these arguments" }).click();
    await expect(c.locator('[data-role="status"]').innerText()).resolves.toMatch(/^Invalid arguments/);
    await area.fill("[1, 2]");
    await c.getByRole("button", { name: "Approve with these arguments" }).click();
    await expect(c.locator('[data-role="status"]').innerText()).resolves.toMatch(/must be a JSON object/);
    expect((await s.stores.pending.get(id))?.status).toBe("pending");
    await area.fill(JSON.stringify({ path: "/srv/a.txt", content: "x", mode: "0644", owner: "app" }));
    await c.getByRole("button", { name: "Approve with these arguments" }).click();
    // the service judges an edited call again (a deny rule can still refuse it): the page does not promise it runs
    await c.locator('[data-role="status"]', { hasText: /judged by the policy again/ }).waitFor();
    expect(at(await waiting, "consent", "arguments")).toEqual({
      path: "/srv/a.txt",
      content: "x",
      mode: "0644",
      owner: "app",
    });
    expect(problems).toEqual([]);
  });

  it("shows a request announced while the list is being refreshed (a change is never dropped)", async () => {
    // counts the stream's consent events, before the console's own listener sees each one
    const counter = `(() => {
      const Original = window.EventSource;
      window.__consentEvents = 0;
      window.EventSource = class extends Original {
        constructor(url, options) {
          super(url, options);
          this.addEventListener("consent", () => { window.__consentEvents++; });
        }
      };
    })();`;
    const { page } = await signedIn(LAPTOP, counter);
    const events = () => page.evaluate<number>("window.__consentEvents");
    // hold the refresh that brings the first request until the stream has announced the second
    let held = false;
    await page.route("**/console/fragments/pending", async (route) => {
      if (held) return route.continue();
      const response = await route.fetch();
      const body = await response.text();
      if (!held && body.includes("race-first")) {
        // counted before the test may raise the second request (it waits for `held`)
        const seen = await events();
        held = true;
        await eventually(async () => (await events()) > seen);
      }
      await route.fulfill({ response, body });
    });
    const first = agentCall("write_file", { path: "/srv/race-first.txt" });
    await eventually(() => held);
    const second = agentCall("write_file", { path: "/srv/race-second.txt" });
    await card(page, "write_file").filter({ hasText: "race-first" }).waitFor();
    const late = card(page, "write_file").filter({ hasText: "race-second" });
    await late.waitFor();
    await late.getByRole("button", { name: "Deny" }).click();
    await card(page, "write_file").filter({ hasText: "race-first" }).getByRole("button", { name: "Deny" }).click();
    await Promise.all([first, second]);
    expect(problems).toEqual([]);
  });

  it("keeps a card answered in another tab and says so; a late click gets a clear message", async () => {
    const { context, page: first } = await signedIn();
    const second = await context.newPage();
    await second.goto(`${s.url}/console/pending`);
    await second.locator('[data-role="live"].connected').waitFor();
    const waiting = agentCall("write_file", { path: "/srv/two-tabs.txt" });
    const a = card(first, "write_file").filter({ hasText: "two-tabs" });
    const b = card(second, "write_file").filter({ hasText: "two-tabs" });
    await a.waitFor();
    await b.waitFor();
    await b.locator('input[data-role="reason"]').fill("I was about to deny");
    await a.getByRole("button", { name: "Approve once" }).click();
    expect(await waiting).toMatchObject({ route: "accept", consent: { outcome: "approved" } });
    await b.locator('[data-role="status"]', { hasText: /already approved/i }).waitFor();
    expect(await b.count()).toBe(1);
    await expect(b.getByRole("button", { name: "Deny" }).isDisabled()).resolves.toBe(true);
    await second.screenshot({ path: join(ARTIFACTS, "review-two-tabs.png"), fullPage: true });
    // an answer posted for a request another tab settled: a clear message, not a raw error code
    const id = await b.getAttribute("data-consent-id");
    const csrf = await second.locator('meta[name="csrf-token"]').getAttribute("content");
    const message = await second.evaluate(
      async ([consentId, token]) => {
        const res = await fetch(`/console/api/consent/${consentId}`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-csrf-token": token ?? "" },
          body: JSON.stringify({ decision: "denied" }),
        });
        return [res.status, ((await res.json()) as { error: { message: string } }).error.message] as const;
      },
      [id, csrf] as const,
    );
    expect(message[0]).toBe(409);
    expect(message[1]).toMatch(/already approved/);
    // Chromium logs every 4xx answer to fetch; the 409 asked for just above is the only one
    expect(problems).toEqual([
      "console: Failed to load resource: the server responded with a status of 409 (Conflict)",
    ]);
  });

  it("a click on a request another tab already answered says so (the page had not heard yet)", async () => {
    const { context, page: first } = await signedIn();
    const second = await context.newPage();
    // the second tab hears nothing live: its card is still open when the person clicks
    await second.route("**/console/events", (route) => route.abort());
    const waiting = agentCall("write_file", { path: "/srv/late-click.txt" });
    await pendingId("write_file", "late-click");
    await second.goto(`${s.url}/console/pending`);
    const a = card(first, "write_file").filter({ hasText: "late-click" });
    const b = card(second, "write_file").filter({ hasText: "late-click" });
    await a.waitFor();
    await b.waitFor();
    await a.getByRole("button", { name: "Approve once" }).click();
    expect(await waiting).toMatchObject({ route: "accept" });
    await b.getByLabel("deny reason").fill("too late");
    await b.getByRole("button", { name: "Deny" }).click();
    await b.locator('[data-role="status"]', { hasText: /^Already approved/ }).waitFor();
    await expect(b.getByRole("button", { name: "Deny" }).isDisabled()).resolves.toBe(true);
    await expect(b.getByLabel("deny reason").inputValue()).resolves.toBe("too late");
  });

  it("marks requests that end from the stream's events, even when asking about each one fails", async () => {
    const { page } = await signedIn();
    await page.route("**/console/api/consent/*", (route) => route.abort());
    const abort = new AbortController();
    const calls = [1, 2, 3].map((i) =>
      fetch(`${s.url}/v1/decide?wait=true&session=review`, {
        method: "POST",
        signal: abort.signal,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          tool: "write_file",
          agent: "mail-assistant",
          arguments: { path: `/srv/ended-${i}.txt` },
        }),
      }).catch(() => null),
    );
    const cards = page.locator("article.card").filter({ hasText: "/srv/ended-" });
    await cards.nth(2).waitFor();
    abort.abort();
    await Promise.all(calls);
    for (const i of [0, 1, 2]) {
      await cards
        .nth(i)
        .locator('[data-role="status"]', { hasText: /^Withdrawn/ })
        .waitFor();
    }
  });

  it("marks a request that expires while the page is open, keeping what the person typed", async () => {
    const { page } = await signedIn();
    const waiting = agentCall("quick_write", { path: "/srv/quick.txt" });
    const c = card(page, "quick_write");
    await c.waitFor();
    await c.locator("summary").click();
    await c.locator('textarea[data-role="arguments"]').fill('{"path": "/srv/edited.txt"}');
    expect(await waiting).toMatchObject({ route: "refuse", consent: { outcome: "expired" } });
    await c.locator('[data-role="status"]', { hasText: /expired/i }).waitFor();
    await expect(c.getByRole("button", { name: "Approve once" }).isDisabled()).resolves.toBe(true);
    await expect(c.locator('textarea[data-role="arguments"]').inputValue()).resolves.toContain("/srv/edited.txt");
    // no countdown frozen at its last tick: the time it was due
    await expect(c.locator('[data-role="expires"]').innerText()).resolves.toMatch(/^\d{4}-\d\d-\d\dT/);
    await page.screenshot({ path: join(ARTIFACTS, "review-expired.png"), fullPage: true });
    expect(problems).toEqual([]);
  });

  it("tells the person when the session ended while the page was open", async () => {
    const { page, sessionId } = await signedIn();
    await s.stores.consoleAuth.deleteSession(sessionId);
    const waiting = agentCall("write_file", { path: "/srv/after-signout.txt" });
    await page.locator('[data-role="session-ended"]').waitFor();
    await expect(page.locator('[data-role="session-ended"]').innerText()).resolves.toMatch(/sign in again/i);
    // no card for a request the page could not load, and nothing answered
    await expect(card(page, "write_file").filter({ hasText: "after-signout" }).count()).resolves.toBe(0);
    const id = await pendingId("write_file", "after-signout");
    await s.stores.pending.decide(
      id,
      "denied",
      { decision: "denied", approver: "test", nonce: (await s.stores.pending.get(id))!.nonce },
      Date.now(),
    );
    s.stores.changes.poke();
    await waiting;
    // the sign-out button of a page whose session ended signs out, it does not answer with a 403
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.locator("main", { hasText: /You are signed out/ }).waitFor();
    expect((await page.context().cookies(s.url)).find((c) => c.name === SESSION_COOKIE)).toBeUndefined();
  });

  it("signs in from the link with the keyboard alone (the button has the focus)", async () => {
    problems = [];
    const context = await browserApp.newContext({ viewport: PHONE });
    contexts.push(context);
    context.on("page", watch);
    const page = await context.newPage();
    const token = await s.stores.consoleAuth.createLink(Date.now(), LINK_TTL_MS);
    await page.goto(`${s.url}/console/login?token=${token}`);
    // autofocus is applied at the page's next rendering step, which may come after `load` on a busy machine
    await expect
      .poll(() => page.evaluate<string | null>("document.activeElement ? document.activeElement.tagName : null"), {
        timeout: 10_000,
      })
      .toBe("BUTTON");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/console\/pending$/);
    await page.screenshot({ path: join(ARTIFACTS, "review-phone-signed-in.png") });
    expect(problems).toEqual([]);
  });

  it("says that it needs JavaScript when it is off", async () => {
    problems = [];
    const context = await browserApp.newContext({ viewport: LAPTOP, javaScriptEnabled: false });
    contexts.push(context);
    const { id } = await s.stores.consoleAuth.createSession(Date.now(), SESSION_TTL_MS);
    await context.addCookies([{ name: SESSION_COOKIE, value: id, url: s.url, httpOnly: true, sameSite: "Strict" }]);
    const page = await context.newPage();
    await page.goto(`${s.url}/console/pending`);
    await expect(page.locator("main").innerText()).resolves.toContain("This console needs JavaScript");
  });

  it("says when the page is not live, and catches up when it reconnects", async () => {
    const { page } = await signedIn();
    let streamDown = true;
    await page.route("**/console/events", (route) => (streamDown ? route.abort() : route.continue()));
    await page.reload();
    await page.locator('[data-role="live"]', { hasText: "Not live" }).waitFor();
    const waiting = agentCall("write_file", { path: "/srv/while-offline.txt" });
    await pendingId("write_file", "while-offline");
    streamDown = false;
    await page.locator('[data-role="live"].connected', { hasText: "Live:" }).waitFor({ timeout: 20_000 });
    const c = card(page, "write_file").filter({ hasText: "while-offline" });
    await c.waitFor();
    await c.getByRole("button", { name: "Deny" }).click();
    await waiting;
  });

  it("says plainly when an answer could not reach the service, and lets the person try again", async () => {
    const { page } = await signedIn();
    const waiting = agentCall("write_file", { path: "/srv/unreachable.txt" });
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
    const { page } = await signedIn();
    const waiting = agentCall("write_file", { path: "/srv/keyboard.txt" });
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
    expect(problems).toEqual([]);
  });

  it("fits a phone: no horizontal scroll on any page and every button on screen", async () => {
    const { page } = await signedIn(PHONE);
    const long = "x".repeat(5000);
    const waiting = agentCall(`write_${"y".repeat(200)}`, { path: `/srv/${long}`, note: "word ".repeat(3000) });
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
      await page.goto(`${s.url}${path}`);
      await noHorizontalScroll(page);
      if (path === "/console/audit") {
        // each event reads as "label value" lines, not eight columns a few letters wide
        const tool = await page.locator('tbody td[data-label="Tool"]').first().boundingBox();
        expect(tool!.width).toBeGreaterThan(PHONE.width / 2);
      }
      await page.screenshot({ path: join(ARTIFACTS, `review-phone-${path.split("/")[2]}.png`), fullPage: true });
    }
    expect(problems).toEqual([]);
  });

  it("filters the audit trail by an event type picked from the known ones, with the decisions suggested", async () => {
    const { page } = await signedIn();
    await s.stores.auditLog.flush();
    await page.goto(`${s.url}/console/audit`);
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
    expect(problems).toEqual([]);
  });

  it("says an invalid simulator request is invalid, and names the deciding rule of a valid one", async () => {
    const { page } = await signedIn();
    await page.goto(`${s.url}/console/simulate`);
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
    expect(problems).toEqual([]);
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
    problems = [];
    const context = await browserApp.newContext({ viewport: LAPTOP });
    contexts.push(context);
    context.on("page", watch);
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
    expect(problems).toEqual([]);
  });
});
