import { describe, expect, it } from "vitest";
import { runCli } from "./run.js";

describe("acp", () => {
  it("prints help that names the exit codes and exits 0", async () => {
    const out = await runCli(["--help"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("Exit codes: 0 ok, 1 error, 2 usage, 3 refused/not allowed, 4 invalid input");
  });
  it("--help says where to start: the demo, init, the proxy drop-in, answering asks, and per-command help", async () => {
    const out = await runCli(["--help"]);
    const start = out.stdout.slice(out.stdout.indexOf("Start here:"));
    for (const line of [
      "acp demo ",
      "acp init ",
      "acp proxy --upstream '",
      "acp pending, acp approve ID",
      "acp COMMAND --help",
    ])
      expect(start).toContain(line);
  });
  it("`acp help`, `acp help COMMAND` and `acp policy help validate` print help on stdout and exit 0", async () => {
    for (const argv of [["help"], ["help", "proxy"], ["help", "policy"], ["policy", "help", "validate"]]) {
      const out = await runCli(argv);
      expect(out.code, argv.join(" ")).toBe(0);
      expect(out.stdout, argv.join(" ")).toMatch(/^Usage: acp /);
      expect(out.stderr, argv.join(" ")).toBe("");
    }
  });
  it("`acp` or `acp policy` without a command is a usage error: help on stderr, exit 2", async () => {
    for (const argv of [[], ["policy"], ["graph"]]) {
      const out = await runCli(argv);
      expect(out.code, argv.join(" ")).toBe(2);
      expect(out.stdout, argv.join(" ")).toBe("");
      expect(out.stderr, argv.join(" ")).toMatch(/^Usage: acp/);
    }
  });
  it("exits 2 on an unknown command", async () => {
    const out = await runCli(["nope"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("unknown command");
  });
  it("`acp help NAME` of no command says so, with the closest command: exit 2, not the whole help", async () => {
    const bogus = await runCli(["help", "bogus"]);
    expect(bogus).toEqual({ code: 2, stdout: "", stderr: "acp: unknown command `bogus`: see `acp --help`\n" });
    const typo = await runCli(["help", "polcy"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe("acp: unknown command `polcy` (did you mean `policy`?): see `acp --help`\n");
    const nested = await runCli(["policy", "help", "simulat"]);
    expect(nested.code).toBe(2);
    expect(nested.stderr).toBe(
      "acp: unknown command `policy simulat` (did you mean `policy simulate`?): see `acp policy --help`\n",
    );
    const known = await runCli(["help", "init"]);
    expect(known.code).toBe(0);
    expect(known.stdout).toMatch(/^Usage: acp init/);
  });
});
