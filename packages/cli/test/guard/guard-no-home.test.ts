import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isGuardRefusal, openGuard } from "../../src/guard/index.js";
import { tempRoot } from "../home-fixture.js";

// openGuard on a default home that does not exist yet: a call that asks has nobody to ask (no terminal, no
// `acp pending`), and the refusal says what to do in the guard's own terms: there is no acp to start again.

const root = tempRoot("guard-no-home");
afterAll(() => root.cleanup());

describe("openGuard before acp init", () => {
  it("refuses a call that asks, saying to run acp init and open the guard again", async () => {
    const home = join(root.dir, "acp");
    const saved = process.env["ACP_HOME"];
    process.env["ACP_HOME"] = home;
    try {
      const acp = await openGuard({ log: () => undefined });
      const send = acp.guard("send_email", () => Promise.resolve("sent"), { server: "mail" });
      const refusal = await send({ to: "bob@example.com" }).then(
        () => undefined,
        (err: unknown) => err,
      );
      await acp.close();
      expect(isGuardRefusal(refusal)).toBe(true);
      const message = (refusal as Error).message;
      expect(message).toContain(`no ACP home at \`${home}\``);
      expect(message).toContain("(run `acp init`, then open the guard again)");
      expect(message).not.toContain("start acp again");
      // the guard made no home of its own
      expect(existsSync(home)).toBe(false);
    } finally {
      if (saved === undefined) delete process.env["ACP_HOME"];
      else process.env["ACP_HOME"] = saved;
    }
  });
});
