/**
 * The console's sign-in link, session and CSRF rules over real HTTP: the link is one-time, ends after 15
 * minutes and survives link previews; every state change needs the session, the same origin and the CSRF
 * token; sign-out of an ended session signs out; over TLS the console's event stream also carries
 * Strict-Transport-Security.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LINK_TTL_MS, SESSION_COOKIE, SESSION_TTL_MS, TLS_SESSION_COOKIE, type EmbeddedServer } from "@acp/server";
import { eventually, openTestServerAt, startTestServer, type TestServer } from "./harness.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

const FORM = { "content-type": "application/x-www-form-urlencoded" };

function signIn(token: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${s.url}/console/login`, {
    method: "POST",
    redirect: "manual",
    headers: { ...FORM, origin: s.url, ...headers },
    body: new URLSearchParams({ token }).toString(),
  });
}

async function session(): Promise<{ cookie: string; csrf: string }> {
  const { id, session: opened } = await s.stores.consoleAuth.createSession(Date.now(), SESSION_TTL_MS);
  return { cookie: `${SESSION_COOKIE}=${id}`, csrf: opened.csrfToken };
}

describe("a stolen console cookie (browsers send a loopback host's cookies to every port)", () => {
  it("reads pages but answers nothing: the session's key comes only in the sign-in's redirect fragment", async () => {
    const token = await s.stores.consoleAuth.createLink(Date.now(), LINK_TTL_MS);
    const signedIn = await signIn(token);
    expect(signedIn.status).toBe(303);
    const key = decodeURIComponent(/#key=(.+)$/.exec(signedIn.headers.get("location") ?? "")?.[1] ?? "");
    expect(key.length).toBeGreaterThan(20);
    // what an agent's web server on another port of 127.0.0.1 receives when the person opens it
    const cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const pages = await Promise.all(
      ["/console/pending", "/console/audit", "/console/simulate", "/console/fragments/pending"].map(async (path) => {
        const res = await fetch(`${s.url}${path}`, { headers: { cookie } });
        return { path, status: res.status, text: await res.text() };
      }),
    );
    for (const page of pages) {
      expect(page.status, page.path).toBe(200);
      expect(page.text, page.path).not.toContain(key);
    }
    // everything a script can forge (cookie, Origin, Sec-Fetch-Site), with any token it can find or guess
    const answer = (csrf?: string): Promise<Response> =>
      fetch(`${s.url}/console/api/simulate`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          cookie,
          origin: s.url,
          "sec-fetch-site": "same-origin",
          ...(csrf !== undefined ? { "x-csrf-token": csrf } : {}),
        },
        body: JSON.stringify({ tool: "read_file", arguments: {} }),
      });
    expect((await answer()).status).toBe(403);
    expect((await answer("")).status).toBe(403);
    const signOut = await fetch(`${s.url}/console/logout`, {
      method: "POST",
      redirect: "manual",
      headers: { ...FORM, cookie, origin: s.url },
      body: new URLSearchParams({ csrf: "" }).toString(),
    });
    expect(signOut.status).toBe(403);
    // the browser that signed in holds the key: its answers go through
    expect((await answer(key)).status).toBe(200);
  });
});

describe("a request with very long arguments (an agent filling the console)", () => {
  it("is listed shortened, without an edit box, so the page stays small; its whole card is a CSRF-checked GET away", async () => {
    const big = "A".repeat(1_000_000);
    const controller = new AbortController();
    const ask = (path: string, content: string): Promise<unknown> =>
      fetch(`${s.url}/v1/decide?wait=true`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ tool: "write_file", arguments: { path, content } }),
        signal: controller.signal,
      }).catch(() => undefined);
    const waiting = [ask("/tmp/big.txt", big), ask("/tmp/small.txt", "hello")];
    // a no-break space in a recipient the listing leaves out (after the first 4,096 bytes of arguments)
    const late = fetch(`${s.url}/v1/decide?wait=true`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        tool: "write_file",
        arguments: {
          path: "/tmp/late.txt",
          pad: Array.from({ length: 1000 }, () => "word"),
          to: "ceo@corp.test\u00a0",
        },
      }),
      signal: controller.signal,
    }).catch(() => undefined);
    waiting.push(late);
    try {
      await eventually(async () => ((await s.stores.pending.listPending(Date.now())).length >= 3 ? true : undefined));
      const { cookie, csrf } = await session();
      const page = await (await fetch(`${s.url}/console/pending`, { headers: { cookie } })).text();
      expect(page.length).toBeLessThan(50_000);
      // the card says it shows a part, and how much is left out, before its buttons
      const bigCard = page.split("<article ").find((card) => card.includes("/tmp/big.txt")) ?? "";
      const omitted = Number(/Only part of this request is shown: (\d+) bytes are left out/.exec(bigCard)?.[1]);
      expect(omitted).toBeGreaterThan(999_000);
      expect(bigCard.indexOf('data-role="shortened"')).toBeGreaterThan(0);
      expect(bigCard.indexOf('data-role="shortened"')).toBeLessThan(bigCard.indexOf('data-action="approve"'));
      // the value by its ends, its hidden middle counted as in the request (not in the listed text)
      const hidden = Number(
        /<bdi dir="ltr" class="path">content<\/bdi>: <bdi dir="ltr" class="value">&quot;A+…\[(\d+) characters not shown\]…A+&quot;<\/bdi>/.exec(
          page,
        )?.[1],
      );
      expect(hidden).toBeGreaterThan(999_000);
      // the late card lists neither `to` nor its hidden character, and warns of it before its buttons
      const lateCard = page.split("<article ").find((card) => card.includes("/tmp/late.txt")) ?? "";
      expect(lateCard).toContain('data-role="shortened"');
      expect(lateCard).not.toContain("ceo@corp.test");
      expect(lateCard).toMatch(/data-role="warning">warning: invisible or control characters in arguments/);
      // one edit box: the short request's
      expect(page.match(/data-role="arguments"/g)?.length).toBe(1);
      expect(page).toContain("/tmp/small.txt");
      // the whole card, on demand: with the session's key only (the cookie reaches other local servers)
      const id = (await s.stores.pending.listPending(Date.now())).find((r) =>
        JSON.stringify(r.request).includes("big.txt"),
      )?.id;
      const whole = `${s.url}/console/fragments/consent/${id}`;
      expect((await fetch(whole, { headers: { cookie } })).status).toBe(403);
      expect(
        (await fetch(whole, { headers: { cookie, "x-csrf-token": csrf, origin: "http://evil.test" } })).status,
      ).toBe(403);
      const card = await (await fetch(whole, { headers: { cookie, "x-csrf-token": csrf } })).text();
      const length = Number(/(\d+) characters of arguments: too long to show whole/.exec(card)?.[1]);
      expect(length).toBeGreaterThan(1_000_000);
      expect(card).toContain("acp pending --json");
      expect(card).not.toContain('data-role="shortened"');
    } finally {
      controller.abort();
      await Promise.all(waiting);
    }
  });
});

describe("a page of pending approvals", () => {
  it("holds at most 20 requests, oldest first, says how many more wait and pages on (its live refresh too)", async () => {
    const controller = new AbortController();
    const asks = Array.from({ length: 23 }, (_, i) =>
      fetch(`${s.url}/v1/decide?wait=true`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ tool: "write_file", arguments: { path: `/tmp/many-${i}.txt` } }),
        signal: controller.signal,
      }).catch(() => undefined),
    );
    try {
      await eventually(async () => ((await s.stores.pending.listPending(Date.now())).length === 23 ? true : undefined));
      const oldest = (await s.stores.pending.listPending(Date.now())).map((r) => r.id);
      const { cookie } = await session();
      const get = async (path: string): Promise<string> =>
        (await fetch(`${s.url}${path}`, { headers: { cookie } })).text();
      const cards = (html: string): string[] =>
        [...html.matchAll(/<article class="card" data-consent-id="([^"]+)"/g)].map((m) => m[1] ?? "");
      let next = "";
      for (const path of ["/console/pending", "/console/fragments/pending", "/console/pending?after=nonsense"]) {
        const html = await get(path);
        expect(cards(html)).toEqual(oldest.slice(0, 20));
        expect(html).toContain("20 of 23 waiting requests shown, the oldest first: 3 more waiting.");
        next = /href="(\/console\/pending\?after=[^"]+)" data-role="next-page"/.exec(html)?.[1] ?? "";
        expect(next).not.toBe("");
      }
      expect(await get("/console/pending?after=nonsense")).toContain(
        "That page address is not one of this console&#39;s",
      );
      const after = next.replace("/console/pending", "/console/fragments/pending");
      for (const path of [next, after]) {
        const html = await get(path);
        expect(cards(html)).toEqual(oldest.slice(20));
        expect(html).toContain("23 requests are waiting in all; this page shows 3 of them.");
        expect(html).not.toContain('data-role="next-page"');
      }
    } finally {
      controller.abort();
      await Promise.all(asks);
    }
  });
});

describe("console sign-in link", () => {
  it("survives link previews (GET and HEAD spend nothing), then signs in once", async () => {
    const token = await s.stores.consoleAuth.createLink(Date.now(), LINK_TTL_MS);
    for (const method of ["GET", "GET", "HEAD"]) {
      const preview = await fetch(`${s.url}/console/login?token=${token}`, { method, redirect: "manual" });
      expect(preview.status).toBe(200);
      expect(preview.headers.get("set-cookie")).toBeNull();
    }
    const first = await signIn(token);
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toMatch(/^\/console\/pending#key=[A-Za-z0-9_%.~-]+$/);
    expect(first.headers.get("set-cookie")).toMatch(/HttpOnly; SameSite=Strict; Max-Age=43200$/);
    const again = await signIn(token);
    expect(again.status).toBe(401);
    expect(again.headers.get("set-cookie")).toBeNull();
    const text = await again.text();
    expect(text).toContain("invalid, already used or expired");
    expect(text).toContain("(console_link_invalid)");
  });

  it("ends the session a browser had when it signs in again (before: the old cookie stayed valid 12 hours)", async () => {
    const old = await session();
    expect((await fetch(`${s.url}/console/pending`, { headers: { cookie: old.cookie } })).status).toBe(200);
    const token = await s.stores.consoleAuth.createLink(Date.now(), LINK_TTL_MS);
    const again = await signIn(token, { cookie: old.cookie });
    expect(again.status).toBe(303);
    const fresh = (again.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    expect(fresh).not.toBe(old.cookie);
    expect((await fetch(`${s.url}/console/pending`, { headers: { cookie: old.cookie } })).status).toBe(401);
    expect((await fetch(`${s.url}/console/pending`, { headers: { cookie: fresh } })).status).toBe(200);
  });

  it("refuses an expired link, and a link posted from another origin (without spending it)", async () => {
    const expired = await s.stores.consoleAuth.createLink(Date.now() - LINK_TTL_MS - 1000, LINK_TTL_MS);
    expect((await signIn(expired)).status).toBe(401);
    const token = await s.stores.consoleAuth.createLink(Date.now(), LINK_TTL_MS);
    // another site's page is refused before the console looks (403 origin_not_allowed); a page of another
    // loopback port (an agent's dev server) passes that guard and is refused by the console's same-origin check
    for (const [origin, status] of [
      ["http://evil.example", 403],
      ["http://127.0.0.1:1", 401],
    ] as const) {
      const forged = await signIn(token, { origin });
      expect({ origin, status: forged.status }).toEqual({ origin, status });
      expect(forged.headers.get("set-cookie")).toBeNull();
    }
    expect((await signIn(token)).status).toBe(303);
  });
});

describe("console state changes", () => {
  it("each needs the session, the same origin and the CSRF token", async () => {
    const { cookie, csrf } = await session();
    const json = { "content-type": "application/json", cookie, origin: s.url };
    const calls: [string, string, Record<string, string>, string][] = [
      ["/console/api/simulate", "x-csrf-token", json, JSON.stringify({ tool: "read_file", arguments: {} })],
      ["/console/api/consent/cr_00000000000000000000000000000000", "x-csrf-token", json, '{"decision":"approved"}'],
    ];
    for (const [path, header, headers, body] of calls) {
      const post = (h: Record<string, string>) => fetch(`${s.url}${path}`, { method: "POST", headers: h, body });
      const withoutCookie = Object.fromEntries(Object.entries(headers).filter(([k]) => k !== "cookie"));
      const statuses = {
        "no session": (await post({ ...withoutCookie, [header]: csrf })).status,
        "no token": (await post(headers)).status,
        "wrong token": (await post({ ...headers, [header]: `${csrf}x` })).status,
        "foreign origin": (await post({ ...headers, [header]: csrf, origin: "http://evil.example" })).status,
        "null origin": (await post({ ...headers, [header]: csrf, origin: "null" })).status,
        "another loopback port": (await post({ ...headers, [header]: csrf, origin: "http://127.0.0.1:1" })).status,
      };
      expect({ path, statuses }).toEqual({
        path,
        statuses: {
          "no session": 401,
          "no token": 403,
          "wrong token": 403,
          "foreign origin": 403,
          "null origin": 403,
          "another loopback port": 403,
        },
      });
    }
    // an HTML form (which another site's page can post without a preflight) is no JSON call, even with the
    // session, the origin and the token (before: parsed, and the answer or simulation made)
    for (const [path] of calls) {
      const form = await fetch(`${s.url}${path}`, {
        method: "POST",
        headers: { ...FORM, cookie, origin: s.url, "x-csrf-token": csrf },
        body: "decision=approved&tool=read_file",
      });
      expect({ path, status: form.status }).toEqual({ path, status: 415 });
    }
    // sign-out: a forged one changes nothing, the session still works
    const forged = await fetch(`${s.url}/console/logout`, {
      method: "POST",
      headers: { ...FORM, cookie, origin: "http://evil.example" },
      body: new URLSearchParams({ csrf }).toString(),
    });
    expect(forged.status).toBe(403);
    const noToken = await fetch(`${s.url}/console/logout`, { method: "POST", headers: { ...FORM, cookie }, body: "" });
    expect(noToken.status).toBe(403);
    expect((await fetch(`${s.url}/console/pending`, { headers: { cookie } })).status).toBe(200);
  });

  it("signs out of a session that already ended (no 403 for the button of a page left open)", async () => {
    const { cookie, csrf } = await session();
    const out = () =>
      fetch(`${s.url}/console/logout`, {
        method: "POST",
        headers: { ...FORM, cookie, origin: s.url },
        body: new URLSearchParams({ csrf }).toString(),
      });
    const first = await out();
    expect(first.status).toBe(200);
    expect(first.headers.get("set-cookie")).toMatch(/Max-Age=0/);
    expect((await fetch(`${s.url}/console/pending`, { headers: { cookie } })).status).toBe(401);
    const second = await out();
    expect(second.status).toBe(200);
    expect(second.headers.get("set-cookie")).toMatch(/Max-Age=0/);
    expect(await second.text()).toContain("You are signed out.");
  });

  it("treats an expired session as no session: pages, the event stream and state changes", async () => {
    const { id, session: old } = await s.stores.consoleAuth.createSession(
      Date.now() - SESSION_TTL_MS - 1000,
      SESSION_TTL_MS,
    );
    const cookie = `${SESSION_COOKIE}=${id}`;
    const page = await fetch(`${s.url}/console/pending`, { headers: { cookie } });
    expect(page.status).toBe(401);
    expect(await page.text()).toContain(
      'You are not signed in, or your session ended. <small class="code">(console_session_required)</small>',
    );
    expect((await fetch(`${s.url}/console/events`, { headers: { cookie } })).status).toBe(401);
    const change = await fetch(`${s.url}/console/api/simulate`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie, origin: s.url, "x-csrf-token": old.csrfToken },
      body: JSON.stringify({ tool: "read_file", arguments: {} }),
    });
    expect(change.status).toBe(401);
  });

  it("shows one request's state to a session only", async () => {
    const id = "cr_00000000000000000000000000000000";
    expect((await fetch(`${s.url}/console/api/consent/${id}`)).status).toBe(401);
    const { cookie } = await session();
    const res = await fetch(`${s.url}/console/api/consent/${id}`, { headers: { cookie } });
    expect(res.status).toBe(404);
  });
});

describe("console audit filters", () => {
  it("says when a filter cannot be applied instead of silently showing every event", async () => {
    const { cookie } = await session();
    const long = await fetch(`${s.url}/console/audit?tool=${"x".repeat(300)}`, { headers: { cookie } });
    expect(long.status).toBe(200);
    expect(await long.text()).toContain("Not applied: tool (a filter is one value of at most 256 characters)");
    const twice = await fetch(`${s.url}/console/audit?decision=ask&decision=refuse`, { headers: { cookie } });
    expect(await twice.text()).toContain("Not applied: decision");
    const fine = await fetch(`${s.url}/console/audit?decision=ask`, { headers: { cookie } });
    expect(await fine.text()).not.toContain("Not applied");
  });
});

describe("console addresses", () => {
  it("redirects a page typed with a trailing slash and answers an unknown one with a page", async () => {
    const slash = await fetch(`${s.url}/console/audit/?tool=x`, { redirect: "manual" });
    expect(slash.status).toBe(303);
    expect(slash.headers.get("location")).toBe("/console/audit?tool=x");
    const unknown = await fetch(`${s.url}/console/nope`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await unknown.text()).toContain("No such page");
    // the API keeps its JSON answers
    expect((await fetch(`${s.url}/v1/nope`)).headers.get("content-type")).toMatch(/^application\/json/);
  });
});

describe("console over TLS", () => {
  let home: string;
  let server: EmbeddedServer;
  let url: string;
  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), "acp-console-tls-"));
    const made = spawnSync("openssl", [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      join(home, "key.pem"),
      "-out",
      join(home, "cert.pem"),
      "-subj",
      "/CN=localhost",
      "-days",
      "1",
    ]);
    if (made.status !== 0) throw new Error(`openssl: ${made.stderr.toString()}`);
    ({ node: server, url } = await openTestServerAt(home, {
      tls: { key: readFileSync(join(home, "key.pem")), cert: readFileSync(join(home, "cert.pem")) },
    }));
  });
  afterAll(async () => {
    await server?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("sends Strict-Transport-Security on the console's event stream", async () => {
    const { id } = await server.stores.consoleAuth.createSession(Date.now(), SESSION_TTL_MS);
    const headers = await new Promise<Record<string, string | string[] | undefined>>((resolve, reject) => {
      const req = request(
        `${url}/console/events`,
        { rejectUnauthorized: false, headers: { cookie: `${TLS_SESSION_COOKIE}=${id}` } },
        (res) => {
          res.once("data", () => {
            resolve({ status: String(res.statusCode), ...res.headers });
            res.destroy();
          });
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(headers["status"]).toBe("200");
    expect(headers["content-type"]).toMatch(/^text\/event-stream/);
    expect(headers["strict-transport-security"]).toBe("max-age=31536000");
  });
});
