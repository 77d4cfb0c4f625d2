/** The console records who approved: the name a sign-in link carries, shown on the page and in the audit. */
import { describe, expect, it } from "vitest";
import { runCli } from "./run.js";
import { freshHome, startServe } from "./serve-fixture.js";

describe("the console names who approved", () => {
  /** Signs in with a one-time link; the session cookie and the CSRF token and text of the pending page. */
  async function signIn(link: string): Promise<{ cookie: string; csrf: string; page: string }> {
    const url = new URL(link);
    const res = await fetch(`${url.origin}/console/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: url.searchParams.get("token") ?? "" }).toString(),
      redirect: "manual",
    });
    expect(res.status).toBe(303);
    const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const page = await (await fetch(`${url.origin}/console/pending`, { headers: { cookie } })).text();
    // the session's key comes once, in the redirect's fragment (no page holds it)
    const csrf = decodeURIComponent(/#key=(.+)$/.exec(res.headers.get("location") ?? "")?.[1] ?? "");
    return { cookie, csrf, page };
  }

  it("records the name of the link (acp console-link --as, else $USER) as the approver, and the page says who is signed in", async () => {
    const home = freshHome();
    const serve = startServe(home, ["--port", "0"], { USER: "alice" });
    const ready = await serve.ready;
    expect(serve.output().stdout).toContain("signs in as alice");
    const alice = await signIn(ready.consoleLink);
    expect(alice.page).toContain("signed in as alice");

    const link = await runCli(["console-link", "--as", "bob", "--json"], {
      env: { HOME: "/nonexistent", ACP_HOME: home, USER: "alice" },
      now: new Date(),
    });
    expect(link.code).toBe(0);
    const { url: bobLink, approver } = JSON.parse(link.stdout) as { url: string; approver: string };
    expect(approver).toBe("bob");
    const bob = await signIn(bobLink);
    expect(bob.page).toContain("signed in as bob");
    expect(bob.page).not.toContain("signed in as alice");

    const answered: Record<string, string> = {};
    for (const [who, session] of [
      ["alice", alice],
      ["bob", bob],
    ] as const) {
      const waiting = fetch(`${ready.url}/v1/decide?wait=true`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ tool: "write_file", arguments: { path: `/tmp/${who}` } }),
      });
      let id: string | undefined;
      while (id === undefined) {
        const list = (await (await fetch(`${ready.url}/v1/consent?status=pending`)).json()) as {
          requests: { id: string }[];
        };
        id = list.requests[0]?.id;
      }
      const answer = await fetch(`${ready.url}/console/api/consent/${id}`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie: session.cookie, "x-csrf-token": session.csrf },
        // alice approves, bob denies
        body: JSON.stringify(who === "alice" ? { decision: "approved" } : { decision: "denied", reason: "not now" }),
      });
      expect(answer.status).toBe(200);
      expect(await (await waiting).json()).toMatchObject(
        who === "alice"
          ? { route: "accept", consent: { outcome: "approved" } }
          : { route: "refuse", consent: { outcome: "denied", reason: "`bob` via console: not now" } },
      );
      answered[who] = id;
    }
    await ready.embedded.stores.auditLog.flush();
    for (const [who, id] of Object.entries(answered)) {
      const type = who === "alice" ? "consent_approved" : "consent_denied";
      const audit = (await (await fetch(`${ready.url}/v1/audit?request_id=${id}&event_type=${type}`)).json()) as {
        events: { event: { metadata: { consent_response: { approver: unknown } } } }[];
      };
      // the signed consent response in the chain names the person and the console
      expect(audit.events.map((e) => e.event.metadata.consent_response.approver)).toEqual([
        { id: `console:${who}`, channel: "console" },
      ]);
    }
    serve.stop();
    await serve.done;
  });

  it("refuses a name that is empty, too long or has other characters (exit 2), and writes no link", async () => {
    const home = freshHome();
    const serve = startServe(home, ["--port", "0"], { USER: "alice" });
    await serve.ready;
    for (const [name, message] of [
      ["", /--as: the approver name is empty/],
      ["x".repeat(65), /--as: the approver name is too long \(65 characters, at most 64\)/],
      ["eve <script>", /--as: the approver name `eve <script>` has characters other than/],
      ["-rf", /does not start with a letter or digit/],
    ] as const) {
      const out = await runCli(["console-link", "--as", name], { env: { HOME: "/nonexistent", ACP_HOME: home } });
      expect(out.code).toBe(2);
      expect(out.stderr).toMatch(message);
      expect(out.stdout).toBe("");
    }
    const badUser = await runCli(["console-link"], { env: { HOME: "/nonexistent", ACP_HOME: home, USER: "a b" } });
    expect(badUser.code).toBe(2);
    expect(badUser.stderr).toContain("pass --as NAME");
    serve.stop();
    await serve.done;
    const refused = startServe(freshHome(), ["--port", "0", "--console-as", "no way"]);
    await expect(refused.done).rejects.toThrow(/--console-as: the approver name `no way`/);
  });
});
