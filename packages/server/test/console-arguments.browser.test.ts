/**
 * How the web console's pending card shows a request's arguments, in real Chromium (Debian's, driven by
 * playwright-core) against a test `acp serve`: one value a line in the card itself (no box to scroll), a long
 * value by its start and its end with its hidden middle said and a control to show it whole, and each path and
 * value laid out on its own (a `<bdi dir="ltr">`), so right-to-left text cannot make a key read as a value. Screenshots go to
 * test-artifacts/console/.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ARTIFACTS, LAPTOP, agentCall, signedIn, useConsoleBrowser } from "./console-browser.js";

const ui = useConsoleBrowser();

describe("the console's arguments in Chromium", () => {
  it("shows every value on screen before the buttons, a long one by its ends with 'show all', each isolated", async () => {
    const { page } = await signedIn(ui, LAPTOP);
    const body = `${"A".repeat(20_000)} then wire it all to mallory`;
    const waiting = agentCall(ui, "write_file", {
      path: "/srv/arguments-view.txt",
      content: body,
      "\u05d0": "\u05d1",
      to: "mallory@evil.test",
    });
    const c = page.locator("article.card").filter({ hasText: "arguments-view.txt" });
    await c.waitFor();
    const line = (path: string) => c.locator("ul.args > li", { has: page.locator("bdi.path", { hasText: path }) });

    // the recipient after 20,000 characters is on the card, above the buttons, within one screen of the heading
    await c.locator("h2").scrollIntoViewIfNeeded();
    const heading = await c.locator("h2").boundingBox();
    const recipient = await line("to").boundingBox();
    const approve = await c.getByRole("button", { name: "Approve once" }).boundingBox();
    expect(recipient!.y).toBeGreaterThan(heading!.y);
    expect(recipient!.y).toBeLessThan(approve!.y);
    expect(recipient!.y - heading!.y).toBeLessThan(LAPTOP.height);
    await expect(line("to").locator("bdi.value").innerText()).resolves.toBe('"mallory@evil.test"');

    // the long value shows its start and its end, says how much is hidden, and shows it all on request
    const content = line("content");
    const shown = await content.locator("bdi.value").innerText();
    expect(shown).toMatch(/^"A+…\[(\d+) characters not shown\]…A+ then wire it all to mallory"$/);
    const hidden = Number(/\[(\d+) characters/.exec(shown)?.[1]);
    expect(shown.length - `…[${hidden} characters not shown]…`.length + hidden).toBe(body.length + 2);
    // listed shortened (20,000 characters): the card says so before its buttons, and loads the request whole
    // for this card on demand, where "show all" opens the value exactly
    const notice = await c.locator('[data-role="shortened"]').boundingBox();
    expect(notice!.y).toBeLessThan(approve!.y);
    await expect(content.getByText(/show all/).count()).resolves.toBe(0);
    await c.getByRole("button", { name: "Show the whole request" }).click();
    await c.locator('[data-role="status"]', { hasText: "The whole request is shown." }).waitFor();
    await expect(c.locator('[data-role="shortened"]').count()).resolves.toBe(0);
    const whole = content.locator("pre.whole");
    await expect(whole.isVisible()).resolves.toBe(false);
    await content.getByText(`show all ${body.length + 2} characters`).click();
    await expect(whole.isVisible()).resolves.toBe(true);
    await expect(whole.innerText()).resolves.toBe(JSON.stringify(body));

    // a Hebrew key and value: each in its own left-to-right isolate, the key drawn left of the value
    await expect(line("\u05d0").locator("bdi.path").getAttribute("dir")).resolves.toBe("ltr");
    const hebrew = line("\u05d0");
    const key = await hebrew.locator("bdi.path").boundingBox();
    const value = await hebrew.locator("bdi.value").boundingBox();
    expect(key!.x + key!.width).toBeLessThanOrEqual(value!.x);
    await expect(hebrew.innerText()).resolves.toBe('["\u05d0"]: "\u05d1"');

    await page.screenshot({ path: join(ARTIFACTS, "arguments-laptop.png") });
    await c.getByRole("button", { name: "Deny" }).click();
    await waiting;
    expect(ui.problems).toEqual([]);
  });
});
