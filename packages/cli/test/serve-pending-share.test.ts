/**
 * `serve.pending_per_caller` and `--pending-per-caller`: consent requests one caller may have waiting. Checked
 * as every `serve:` key is (exit 4), the flag as every flag (exit 2), and handed to the service: a caller
 * beyond its share is refused (`caller_pending_full`) while its first requests wait.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkServeConfig } from "../src/wiring/serve-config.js";
import { freshHome, serveFailure, startServe } from "./serve-fixture.js";

describe("serve.pending_per_caller", () => {
  it("takes a whole number from 1 to 1000, and refuses anything else", () => {
    expect(checkServeConfig({ serve: { pending_per_caller: 40 } })).toEqual({
      ok: true,
      value: { pendingPerCaller: 40 },
    });
    expect(checkServeConfig({ serve: { pending_per_caller: "1000" } })).toEqual({
      ok: true,
      value: { pendingPerCaller: 1000 },
    });
    for (const bad of [0, 1001, 2.5, "many", true]) {
      const checked = checkServeConfig({ serve: { pending_per_caller: bad } });
      expect(checked.ok ? [] : checked.problems).toEqual([
        `serve.pending_per_caller: \`${String(bad)}\` is not a whole number of consent requests from 1 to 1000`,
      ]);
    }
  });

  it("a bad flag is exit 2, a bad config value exit 4, before anything listens", async () => {
    const flag = await serveFailure(freshHome(), ["--port", "0", "--pending-per-caller", "0"]);
    expect(flag?.exitCode).toBe(2);
    expect(flag?.message).toContain("--pending-per-caller: `0` is not a whole number of consent requests");
    const home = freshHome();
    writeFileSync(join(home, "config.yml"), 'version: "1"\nserve:\n  pending_per_caller: -3\n');
    const config = await serveFailure(home, ["--port", "0"]);
    expect(config?.exitCode).toBe(4);
    expect(config?.message).toContain("serve.pending_per_caller: `-3` is not a whole number");
  });

  it("the flag wins over the config: one waiting request, the next refused caller_pending_full", async () => {
    const home = freshHome();
    writeFileSync(join(home, "config.yml"), 'version: "1"\nserve:\n  pending_per_caller: 5\n');
    const serve = startServe(home, ["--port", "0", "--pending-per-caller", "1"]);
    const { url } = await serve.ready;
    const withdraw = new AbortController();
    try {
      const ask = (n: number, signal?: AbortSignal): Promise<Response> =>
        fetch(`${url}/v1/decide?wait=true`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ tool: "write_file", arguments: { path: `/tmp/share-${n}` } }),
          ...(signal !== undefined ? { signal } : {}),
        });
      const first = ask(1, withdraw.signal).catch(() => undefined);
      // the first request waits for a person (listed), then the second is refused unasked
      for (;;) {
        const listed = (await (await fetch(`${url}/v1/consent`)).json()) as { requests: unknown[] };
        if (listed.requests.length === 1) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      const second = (await (await ask(2)).json()) as { route: string; decision: { reasons: { code: string }[] } };
      expect(second.route).toBe("refuse");
      expect(second.decision.reasons[0]?.code).toBe("caller_pending_full");
      withdraw.abort();
      await first;
    } finally {
      serve.stop();
      await serve.done;
    }
  });
});
