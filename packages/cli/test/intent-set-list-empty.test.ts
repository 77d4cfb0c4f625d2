import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const root = tempRoot("intent-set-list");
afterAll(root.cleanup);

describe("acp intent set --list with no session yet", () => {
  it("says a session is listed from its first tool call, so a proxy that only listed tools is not a mystery", async () => {
    const { home } = fixtureHome(root.dir);
    const live = await runCli(["intent", "set", "--list"], { env: envFor(home) });
    expect(live).toMatchObject({ code: 0, stderr: "" });
    expect(live.stdout).toBe(
      "no live sessions (a session of acp proxy or acp run is listed from its first tool call or plan)\n",
    );
    const all = await runCli(["intent", "set", "--list", "--all"], { env: envFor(home) });
    expect(all.stdout).toMatch(/^no sessions recorded \(a session of acp proxy or acp run is listed from its first/);
    const json = await runCli(["intent", "set", "--list", "--json"], { env: envFor(home) });
    expect(JSON.parse(json.stdout)).toEqual([]);
  });
});
