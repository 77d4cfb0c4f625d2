import { existsSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openAuditLog } from "@acp/store";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { startServe } from "./serve-fixture.js";

const root = tempRoot("serve-reanchor");
afterAll(root.cleanup);

/** Runs `acp serve --port 0` until it listens, stops it, and returns what it wrote on stderr. */
async function serveOnce(home: string): Promise<string> {
  const serve = startServe(home, ["--port", "0"], envFor(home));
  await serve.ready;
  serve.stop();
  await serve.done;
  return serve.output().stderr;
}

describe("acp serve's audit log found with signed checkpoints and no anchor", () => {
  it("says so in one line, as acp proxy does, once it verified it and anchored it again", async () => {
    const { home, key } = fixtureHome(root.dir);
    const log = join(home, "audit.jsonl");
    const anchor = `${log}.checkpoint`;
    // a log written with the home's key (as acp proxy writes it), closed with a signed checkpoint
    const writer = await openAuditLog(log, { clock: () => new Date(), signer: key.privateKey });
    await writer.append({ event_type: "policy_evaluated", tool: "t", decision: "refuse" });
    await writer.close();
    const lines = readFileSync(log, "utf8").trimEnd().split("\n");
    expect(JSON.parse(lines.at(-1) ?? "{}")).toMatchObject({ event_type: "checkpoint" });
    expect(await serveOnce(home)).not.toContain("no anchor beside it"); // opened with its anchor: nothing said
    unlinkSync(anchor);
    unlinkSync(`${log}.anchored`); // moved without both (its marker left: refused, anchor-marker.test.ts)

    const stderr = await serveOnce(home);
    expect(existsSync(anchor)).toBe(true);
    expect(stderr.split("\n").filter((line) => line.includes("no anchor beside it"))).toEqual([
      `acp serve: the audit log ${log} had signed checkpoints but no anchor beside it: verified in full as ` +
        "`acp audit verify` does (every hash, link and checkpoint signature, with the home's public key) and " +
        `anchored again at its checkpoint on line ${lines.length} in ${anchor} (nothing after it); if you did not ` +
        "move or restore the log, find out why the anchor was missing",
    ]);
  });
});
