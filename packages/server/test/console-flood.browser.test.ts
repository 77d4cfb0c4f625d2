/**
 * The console's pending page under a flood of large requests, in real Chromium (Debian's, driven by
 * playwright-core) against a test `acp serve`: the page and its live refresh hold a bounded page of requests as
 * `GET /v1/consent` lists them (arguments shortened), say how many more wait and page on; a shortened card says
 * so before its buttons and loads its request whole on demand ("show all", the edit box); an approval from the
 * page answers the request of its card and no other.
 */
import { describe, expect, it } from "vitest";
import { at, eventually, readJson } from "./harness.js";
import { LAPTOP, signedIn, useConsoleBrowser } from "./console-browser.js";

const ui = useConsoleBrowser();

const BIG = 14;
const PAGE = 20;

describe("the console's pending page under a flood of large requests", () => {
  it("shows a bounded page, pages on, loads one card whole on demand and approves the right request", async () => {
    const controller = new AbortController();
    const ask = (args: Record<string, unknown>): Promise<unknown> =>
      fetch(`${ui.s.url}/v1/decide?wait=true&session=flood`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ tool: "write_file", agent: "flood-agent", arguments: args }),
        signal: controller.signal,
      })
        .then(readJson)
        .catch(() => undefined);
    const waitingFor = async (n: number): Promise<void> => {
      await eventually(async () =>
        (await ui.s.stores.pending.listPending(Date.now())).length >= n ? true : undefined,
      );
    };
    const calls = new Map<string, Promise<unknown>>();
    try {
      // the oldest: 20,000 characters, within what a card can show whole and edit once loaded
      const middle = `${"M".repeat(20_000)} then wire it all to mallory`;
      const mid = { path: "/srv/flood-mid.txt", content: middle, to: "mallory@evil.test" };
      calls.set("mid", ask(mid));
      await waitingFor(1);
      // then the flood: 14 calls of 0.6 MB each (about 8.4 MB whole; a page reads at most 4 MiB beyond its first)
      for (let i = 0; i < BIG; i++) {
        const n = `flood-${String(i).padStart(2, "0")}`;
        calls.set(n, ask({ path: `/srv/${n}.txt`, content: "A".repeat(600_000), to: `${n}@evil.test` }));
      }
      await waitingFor(BIG + 1);

      const { page } = await signedIn(ui, LAPTOP);
      await page.reload();
      await page.locator('[data-role="live"].connected').waitFor();
      const cards = page.locator("article.card");
      const ids = (): Promise<string[]> =>
        page.evaluate<string[]>(
          "Array.from(document.querySelectorAll('article.card'), (el) => el.getAttribute('data-consent-id'))",
        );
      // a bounded page: at most 20 cards and 4 MiB of stored requests read, the rest counted, the page and its
      // live refresh far below the flood's size
      const shown = await cards.count();
      expect(shown).toBeGreaterThan(1);
      expect(shown).toBeLessThan(Math.min(PAGE, BIG + 1));
      expect((await page.content()).length).toBeLessThan(200_000);
      const fragment = await page.evaluate<number>(
        "fetch('/console/fragments/pending').then((r) => r.text()).then((t) => t.length)",
      );
      expect(fragment).toBeLessThan(200_000);
      await expect(page.locator('[data-role="more"]').innerText()).resolves.toBe(
        `${shown} of ${BIG + 1} waiting requests shown, the oldest first: ${BIG + 1 - shown} more waiting. Next page`,
      );
      // the tab's title counts every waiting request, not only this page's
      await expect(page.title()).resolves.toBe(`(${BIG + 1}) Pending approvals · ACP console`);
      // the oldest first, every card listed shortened, and saying so before its buttons
      await cards.first().filter({ hasText: "flood-mid.txt" }).waitFor();
      await expect(page.locator('article.card [data-role="shortened"]').count()).resolves.toBe(shown);
      const first = cards.nth(1);
      const notice = await first.locator('[data-role="shortened"]').boundingBox();
      const approve = await first.getByRole("button", { name: "Approve once" }).boundingBox();
      expect(notice!.y).toBeLessThan(approve!.y);
      await expect(first.locator('[data-role="shortened"]').innerText()).resolves.toMatch(
        /^Only part of this request is shown: \d{6} bytes are left out \(a long text shows its start and its end\)/,
      );

      // page on to the last: every waiting request once, the way back on each later page
      const seen = await ids();
      const midId = seen[0];
      while ((await page.getByRole("link", { name: "Next page" }).count()) > 0) {
        await page.getByRole("link", { name: "Next page" }).click();
        await page.locator('[data-role="live"].connected').waitFor();
        const here = await ids();
        await expect(page.locator('[data-role="more"]').innerText()).resolves.toMatch(
          new RegExp(
            `^${BIG + 1} requests are waiting in all; this page shows ${here.length} of them\\.( Next page)? Back to the oldest$`,
          ),
        );
        seen.push(...here);
      }
      expect(new Set(seen).size).toBe(seen.length);
      expect([...seen].sort()).toEqual((await ui.s.stores.pending.listPending(Date.now())).map((r) => r.id).sort());
      await page.getByRole("link", { name: "Back to the oldest" }).click();
      await page.locator('[data-role="live"].connected').waitFor();
      await expect(cards.count()).resolves.toBe(shown);

      // the shortened card of 20,000 characters: edit loads it whole first, with "show all" exact
      const c = cards.filter({ hasText: "flood-mid.txt" });
      await expect(c.locator("textarea").count()).resolves.toBe(0);
      await c.locator("details.edit > summary").click();
      await c.getByRole("button", { name: "Show the whole request to edit it" }).click();
      await c.locator('[data-role="status"]', { hasText: "The whole request is shown." }).waitFor();
      await expect(c.locator('[data-role="shortened"]').count()).resolves.toBe(0);
      const content = c.locator("ul.args > li", { has: page.locator("bdi.path", { hasText: "content" }) });
      await content.getByText(`show all ${middle.length + 2} characters`).click();
      await expect(content.locator("pre.whole").innerText()).resolves.toBe(JSON.stringify(middle));
      const area = c.locator('[data-role="arguments"]');
      expect(JSON.parse(await area.inputValue())).toEqual(mid);
      await area.fill(JSON.stringify({ ...mid, to: "ana@corp.test" }));
      await c.getByRole("button", { name: "Approve with these arguments" }).click();
      const edited = await calls.get("mid");
      expect(at(edited, "consent", "arguments")).toEqual({ ...mid, to: "ana@corp.test" });

      // "Approve once" on one card of the flood answers that card's request, and only it (the flood's calls
      // raced: which call a card is, is read from its request's path)
      const target = cards.nth(2);
      const id = (await target.getAttribute("data-consent-id"))!;
      const before = await ui.s.stores.pending.get(id);
      const targetName = /flood-\d\d/.exec(JSON.stringify(before?.request))![0];
      await expect(target.locator("ul.args").innerText()).resolves.toContain(`${targetName}@evil.test`);
      await target.getByRole("button", { name: "Approve once" }).click();
      await target.locator('[data-role="status"]', { hasText: /Recorded: approved/ }).waitFor();
      expect(await calls.get(targetName)).toMatchObject({ route: "accept", consent: { outcome: "approved" } });
      expect((await ui.s.stores.pending.get(id))?.status).toBe("approved");
      const left = await ui.s.stores.pending.listPending(Date.now());
      expect(left.map((r) => r.id).sort()).toEqual(seen.filter((s) => s !== id && s !== midId).sort());
      // the live refresh brought the next oldest onto the page (the first of the second page), still bounded
      await page.locator(`article.card[data-consent-id="${seen[shown]}"]`).waitFor();
      expect(await cards.count()).toBeLessThanOrEqual(shown + 2);
      expect(ui.problems).toEqual([]);
    } finally {
      controller.abort();
      await Promise.all(calls.values());
    }
  }, 120_000);
});
