/**
 * The web console as a careful person uses it, in real Chromium (Debian's, driven by playwright-core),
 * answering requests: hostile text in what an agent sends, secrets, edits the protocol cannot express, two
 * tabs, a request that expires while the page is open, a session that ends — and no console error or CSP
 * violation on any page. Screenshots go to test-artifacts/console/. (Sign-in, keyboard, phone, audit and
 * simulator pages: console-pages.browser.test.ts.)
 */
import { join } from "node:path";
import { STARTER_POLICY } from "@acp/store";
import { describe, expect, it } from "vitest";
import { SESSION_COOKIE } from "@acp/server";
import {
  ARTIFACTS,
  BIDI,
  LAPTOP,
  PHONE,
  agentCall,
  card,
  noHorizontalScroll,
  pendingId,
  signedIn,
  useConsoleBrowser,
} from "./console-browser.js";
import { at, eventually } from "./harness.js";

/** The starter policy with one rule whose requests expire after 8 seconds (the expiry test; room for a loaded machine to show the card and type first). */
const POLICY = STARTER_POLICY.replace(
  /^rules:\n/m,
  'rules:\n  - id: quick-ask\n    match:\n      tool: "quick_*"\n    action: ask\n    timeout: 8\n',
);

const ui = useConsoleBrowser(POLICY);

describe("console review in Chromium", () => {
  it("shows bidi, zero-width and control characters escaped, and hostile markup as text", async () => {
    const { page } = await signedIn(ui, PHONE);
    // names with bidi or zero-width characters are refused before any request is made (invalid_request);
    // markup in names, and every character in arguments, still reach the card
    const tool = "write_<b>x</b>";
    const waiting = agentCall(
      ui,
      tool,
      {
        "<img src=x onerror=alert(1)>": "<script>alert(1)</script>",
        file: "invoice\u202Egpj.exe",
        bell: "a\u0007\u009b",
      },
      "<i>evil</i>",
    );
    const c = page.locator("article.card").filter({ hasText: "evil" });
    await c.waitFor();
    const heading = await c.locator("h2").innerText();
    expect(heading).not.toMatch(BIDI);
    expect(heading).toContain("<i>evil</i>");
    expect(heading).toContain("write_<b>x</b>");
    expect(heading).toContain("wants to run");
    const all = await c.innerText();
    expect(all).not.toMatch(BIDI);
    // eslint-disable-next-line no-control-regex -- no control character may reach the page
    expect(all).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(all).toContain("invoice\\u202egpj.exe");
    // and the card says so, as the terminal, Telegram and acp pending do
    expect(all).toContain("warning: invisible or control characters in arguments, shown as \\uXXXX escapes");
    expect(await page.locator("img").count()).toBe(0);
    await page.screenshot({ path: join(ARTIFACTS, "review-hostile-phone.png"), fullPage: true });
    await noHorizontalScroll(page);
    // the edit box holds the same escapes: it still parses to the agent's values
    await c.locator("details.edit summary").click();
    const area = c.locator('textarea[data-role="arguments"]');
    expect(await area.inputValue()).not.toMatch(BIDI);
    const edited = JSON.parse(await area.inputValue()) as Record<string, unknown>;
    // the diff escapes what the server escapes: a no-break space and a tag character too (one beyond U+FFFF)
    edited["bell"] = "quiet\u202E\u00a0\u{e0041}";
    await area.fill(JSON.stringify(edited));
    const diff = await c.locator('[data-role="diff"]').innerText();
    expect(diff).toContain("\\u202e\\u00a0\\udb40\\udc41");
    expect(diff).not.toMatch(/[\u00a0\u{e0041}]/u);
    expect(diff).not.toMatch(BIDI);
    await c.getByRole("button", { name: "Approve with these arguments" }).click();
    const answer = await waiting;
    expect(at(answer, "consent", "arguments")).toEqual({
      "<img src=x onerror=alert(1)>": "<script>alert(1)</script>",
      file: "invoice\u202Egpj.exe",
      bell: "quiet\u202E\u00a0\u{e0041}",
    });
    expect(ui.problems).toEqual([]);
  });

  it("says in plain words why ACP asks and what a session or time-window approval covers", async () => {
    const { page } = await signedIn(ui);
    const waiting = agentCall(ui, "write_file", { path: "/srv/words.txt" });
    const c = card(page, "write_file").filter({ hasText: "words.txt" });
    await c.waitFor();
    const reasons = await c.locator("ul.reasons").innerText();
    expect(reasons).toContain("Your policy's rule ask-writes matched this call; it says to ask a person first.");
    expect(reasons).not.toContain("`");
    await expect(c.locator(".hint").first().innerText()).resolves.toMatch(/exactly these arguments/);
    await expect(c.locator("text=agent session review").count()).resolves.toBe(1);
    await c.getByRole("button", { name: "Deny" }).click();
    await waiting;
    expect(ui.problems).toEqual([]);
  });

  it("approves for the agent session and for a while, and a denial's reason reaches the agent verbatim", async () => {
    const { page } = await signedIn(ui);
    const session = agentCall(ui, "write_file", { path: "/srv/session.txt" });
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
    expect(await agentCall(ui, "write_file", { path: "/srv/session.txt" })).toMatchObject({ route: "accept" });
    const before = Date.now();
    const windowed = agentCall(ui, "write_file", { path: "/srv/window.txt" });
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
    const denied = agentCall(ui, "write_file", { path: "/srv/deny.txt" });
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
    expect(ui.problems).toEqual([]);
  });

  it("never shows a secret, and an edit that leaves [redacted] as is keeps the real one", async () => {
    const { page } = await signedIn(ui);
    const secrets = {
      path: "/srv/secret.txt",
      api_key: "sk-live-0123456789abcdef",
      headers: { Authorization: "Bearer abcdef0123456789abcdef", "X-Trace": "1" },
      note: "the token is sk-live-fedcba9876543210",
    };
    const waiting = agentCall(ui, "write_file", secrets);
    const c = card(page, "write_file").filter({ hasText: "secret.txt" });
    await c.waitFor();
    const html = await c.innerHTML();
    for (const secret of ["sk-live-0123456789abcdef", "abcdef0123456789abcdef", "sk-live-fedcba9876543210"]) {
      expect(html).not.toContain(secret);
    }
    await c.locator("details.edit summary").click();
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
    expect(ui.problems).toEqual([]);
  });

  it("refuses an edit that removes an argument (modifications only replace or add), and marks added ones", async () => {
    const { page } = await signedIn(ui);
    const waiting = agentCall(ui, "write_file", { path: "/srv/a.txt", content: "x", mode: "0644" });
    const c = card(page, "write_file").filter({ hasText: "/srv/a.txt" });
    await c.waitFor();
    const id = await pendingId(ui, "write_file", "/srv/a.txt");
    await c.locator("details.edit summary").click();
    const area = c.locator('textarea[data-role="arguments"]');
    await area.fill(JSON.stringify({ path: "/srv/a.txt", content: "x" }));
    await expect(c.locator('[data-role="diff"]').innerText()).resolves.toMatch(/mode.*cannot be removed/);
    await c.getByRole("button", { name: "Approve with these arguments" }).click();
    await expect(c.locator('[data-role="status"]').innerText()).resolves.toMatch(/cannot be removed/);
    expect((await ui.s.stores.pending.get(id))?.status).toBe("pending");
    // adding a key is an override the protocol allows: the diff says it is new, the agent gets it
    await area.fill(JSON.stringify({ path: "/srv/a.txt", content: "x", mode: "0644", owner: "app" }));
    await expect(c.locator('[data-role="diff"]').innerText()).resolves.toMatch(/\+ owner: "app" \(new argument\)/);
    await area.fill("{ not json");
    await c.getByRole("button", { name: "Approve with these arguments" }).click();
    await expect(c.locator('[data-role="status"]').innerText()).resolves.toMatch(/^Invalid arguments/);
    await area.fill("[1, 2]");
    await c.getByRole("button", { name: "Approve with these arguments" }).click();
    await expect(c.locator('[data-role="status"]').innerText()).resolves.toMatch(/must be a JSON object/);
    expect((await ui.s.stores.pending.get(id))?.status).toBe("pending");
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
    expect(ui.problems).toEqual([]);
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
    const { page } = await signedIn(ui, LAPTOP, counter);
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
    const first = agentCall(ui, "write_file", { path: "/srv/race-first.txt" });
    await eventually(() => held);
    const second = agentCall(ui, "write_file", { path: "/srv/race-second.txt" });
    await card(page, "write_file").filter({ hasText: "race-first" }).waitFor();
    const late = card(page, "write_file").filter({ hasText: "race-second" });
    await late.waitFor();
    await late.getByRole("button", { name: "Deny" }).click();
    await card(page, "write_file").filter({ hasText: "race-first" }).getByRole("button", { name: "Deny" }).click();
    await Promise.all([first, second]);
    expect(ui.problems).toEqual([]);
  });

  it("keeps a card answered in another tab and says so; a late click gets a clear message", async () => {
    const { context, page: first } = await signedIn(ui);
    const second = await context.newPage();
    await second.goto(`${ui.s.url}/console/pending`);
    await second.locator('[data-role="live"].connected').waitFor();
    const waiting = agentCall(ui, "write_file", { path: "/srv/two-tabs.txt" });
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
    const csrf = await second.evaluate<string | null>('window.localStorage.getItem("acp-console-key")');
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
    expect(ui.problems).toEqual([
      "console: Failed to load resource: the server responded with a status of 409 (Conflict)",
    ]);
  });

  it("a click on a request another tab already answered says so (the page had not heard yet)", async () => {
    const { context, page: first } = await signedIn(ui);
    const second = await context.newPage();
    // the second tab hears nothing live: its card is still open when the person clicks
    await second.route("**/console/events", (route) => route.abort());
    const waiting = agentCall(ui, "write_file", { path: "/srv/late-click.txt" });
    await pendingId(ui, "write_file", "late-click");
    await second.goto(`${ui.s.url}/console/pending`);
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
    const { page } = await signedIn(ui);
    await page.route("**/console/api/consent/*", (route) => route.abort());
    const abort = new AbortController();
    const calls = [1, 2, 3].map((i) =>
      fetch(`${ui.s.url}/v1/decide?wait=true&session=review`, {
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
    const { page } = await signedIn(ui);
    const waiting = agentCall(ui, "quick_write", { path: "/srv/quick.txt" });
    const c = card(page, "quick_write");
    await c.waitFor();
    await c.locator("details.edit summary").click();
    await c.locator('textarea[data-role="arguments"]').fill('{"path": "/srv/edited.txt"}');
    expect(await waiting).toMatchObject({ route: "refuse", consent: { outcome: "expired" } });
    await c.locator('[data-role="status"]', { hasText: /expired/i }).waitFor();
    await expect(c.getByRole("button", { name: "Approve once" }).isDisabled()).resolves.toBe(true);
    await expect(c.locator('textarea[data-role="arguments"]').inputValue()).resolves.toContain("/srv/edited.txt");
    // no countdown frozen at its last tick: the time it was due
    await expect(c.locator('[data-role="expires"]').innerText()).resolves.toMatch(/^\d{4}-\d\d-\d\dT/);
    await page.screenshot({ path: join(ARTIFACTS, "review-expired.png"), fullPage: true });
    expect(ui.problems).toEqual([]);
  });

  it("tells the person when the session ended while the page was open", async () => {
    const { page, sessionId } = await signedIn(ui);
    await ui.s.stores.consoleAuth.deleteSession(sessionId);
    const waiting = agentCall(ui, "write_file", { path: "/srv/after-signout.txt" });
    await page.locator('[data-role="session-ended"]').waitFor();
    await expect(page.locator('[data-role="session-ended"]').innerText()).resolves.toMatch(/sign in again/i);
    // no card for a request the page could not load, and nothing answered
    await expect(card(page, "write_file").filter({ hasText: "after-signout" }).count()).resolves.toBe(0);
    const id = await pendingId(ui, "write_file", "after-signout");
    await ui.s.stores.pending.decide(
      id,
      "denied",
      { decision: "denied", approver: "test", nonce: (await ui.s.stores.pending.get(id))!.nonce },
      Date.now(),
    );
    ui.s.stores.changes.poke();
    await waiting;
    // the sign-out button of a page whose session ended signs out, it does not answer with a 403
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.locator("main", { hasText: /You are signed out/ }).waitFor();
    expect((await page.context().cookies(ui.s.url)).find((c) => c.name === SESSION_COOKIE)).toBeUndefined();
  });
});
