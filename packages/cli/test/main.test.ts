import { describe, expect, it } from "vitest";
import { runCli } from "./run.js";

describe("acp", () => {
  it("prints help that names the exit codes and exits 0", async () => {
    const out = await runCli(["--help"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("Exit codes: 0 ok, 1 error, 2 usage, 3 refused/not allowed, 4 invalid input");
  });
  it("exits 2 on an unknown command", async () => {
    const out = await runCli(["nope"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("unknown command");
  });
});
