/**
 * A file of ACP's home with another name (a hard link) elsewhere on its file system: the covers hide the home's
 * paths, not that name, so `acp run` refuses before the agent starts (`sandbox_home_linked`). Real hard links
 * in temporary directories; real namespaces for the runs.
 */
import { existsSync, linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSandboxed } from "../../src/index.js";
import { homeFileLinked, linkedHomeFiles } from "../../src/sandbox/home-links.js";
import { fillHome, quietRun, scratchDir } from "./net-fixture.js";

let work: { path: string; remove(): void };
beforeAll(() => void (work = scratchDir("acp-sbx-links-")));
afterAll(() => work?.remove());

let n = 0;
/** A filled home and a directory beside it (on the same file system), both fresh. */
function homeAndElsewhere(): { home: string; elsewhere: string; files: Record<string, string> } {
  const dir = join(work.path, `case-${++n}`);
  const home = join(dir, "acp");
  const elsewhere = join(dir, "elsewhere");
  const files = fillHome(home);
  mkdirSync(elsewhere);
  return { home, elsewhere, files };
}

describe("linkedHomeFiles", () => {
  it("finds each file of the home with another name, at the top, in keys/ and in claim/", () => {
    const { home, elsewhere } = homeAndElsewhere();
    expect(linkedHomeFiles(home)).toEqual([]);
    writeFileSync(join(home, "vault.json"), "{}\n", { mode: 0o600 });
    writeFileSync(join(home, "memory.key"), "k\n", { mode: 0o600 });
    mkdirSync(join(home, "claim"), { mode: 0o700 });
    writeFileSync(join(home, "claim", "provider.key"), "p\n", { mode: 0o600 });
    linkSync(join(home, "vault.json"), join(elsewhere, "v"));
    linkSync(join(home, "vault.json"), join(elsewhere, "v2"));
    linkSync(join(home, "keys", "private.key"), join(elsewhere, "k"));
    linkSync(join(home, "claim", "provider.key"), join(elsewhere, "p"));
    expect(linkedHomeFiles(home)).toEqual([
      { path: join(home, "vault.json"), links: 3 },
      { path: join(home, "keys", "private.key"), links: 2 },
      { path: join(home, "claim", "provider.key"), links: 2 },
    ]);
  });

  it("finds the consent graph's review record with another name (it decides consent decay)", () => {
    const { home, elsewhere } = homeAndElsewhere();
    writeFileSync(join(home, "consent-graph.reviews.json"), '{"version": 1, "domains": {}}\n', { mode: 0o600 });
    linkSync(join(home, "consent-graph.reviews.json"), join(elsewhere, "r"));
    expect(linkedHomeFiles(home)).toEqual([{ path: join(home, "consent-graph.reviews.json"), links: 2 }]);
  });

  it("a missing file, a symbolic link or a file with one name is not one", () => {
    const { home, elsewhere } = homeAndElsewhere();
    writeFileSync(join(elsewhere, "target"), "x");
    linkSync(join(elsewhere, "target"), join(elsewhere, "target2")); // a linked file the home only points at
    symlinkSync(join(elsewhere, "target"), join(home, "pins.json"));
    expect(linkedHomeFiles(home)).toEqual([]);
    expect(linkedHomeFiles(join(work.path, "no-such-home"))).toEqual([]);
  });

  it("the refusal names the file, how many other names, and the find -samefile that shows them", () => {
    const { home, elsewhere } = homeAndElsewhere();
    writeFileSync(join(home, "memory.key"), "k\n", { mode: 0o600 });
    linkSync(join(home, "memory.key"), join(elsewhere, "m"));
    const err = homeFileLinked(home);
    expect(err?.code).toBe("sandbox_home_linked");
    const file = join(home, "memory.key");
    expect(err?.message).toContain(`\`${file}\`, a file of ACP's home, has 1 other name (a hard link)`);
    expect(err?.help).toMatch(new RegExp(`^find the other name with \`find /\\S* -xdev -samefile ${file}\``));
    expect(homeFileLinked(homeAndElsewhere().home)).toBeUndefined();
  });
});

// Reads `elsewhere/v` (another name of the home's vault) and says what it saw.
const READER = `require("node:fs").writeFileSync("seen", (() => { try { return require("node:fs").readFileSync(process.argv[1], "utf8"); } catch (e) { return e.code; } })())`;

describe.each(["netns", "userns"] as const)("isolation %s", (level) => {
  it("refuses to start when a file of the home has another name the agent could read; nothing runs", async () => {
    const { home, elsewhere } = homeAndElsewhere();
    const project = join(elsewhere, "..", `project-${level}`);
    mkdirSync(project);
    linkSync(join(home, "keys", "private.key"), join(elsewhere, "v"));
    const run = runSandboxed(
      quietRun({
        argv: [process.execPath, "-e", READER, join(elsewhere, "v")],
        isolation: level,
        home,
        env: { PATH: process.env["PATH"] },
        cwd: project,
      }),
    );
    // Before: the agent started and read the private key through the other name (`seen` held it).
    await expect(run).rejects.toMatchObject({ code: "sandbox_home_linked" });
    await expect(run).rejects.toThrow(
      `\`${join(home, "keys", "private.key")}\`, a file of ACP's home, has 1 other name`,
    );
    expect(existsSync(join(project, "seen"))).toBe(false);
  });

  it("starts when every file of the home has one name (the home stays hidden)", async () => {
    const { home, elsewhere } = homeAndElsewhere();
    const project = join(elsewhere, "..", `plain-${level}`);
    mkdirSync(project);
    const result = await runSandboxed(
      quietRun({
        argv: [process.execPath, "-e", READER, join(home, "keys", "private.key")],
        isolation: level,
        home,
        env: { PATH: process.env["PATH"] },
        cwd: project,
      }),
    );
    expect(result.exitCode).toBe(0);
    expect(readFileSync(join(project, "seen"), "utf8")).toBe("ENOENT");
  });
});

it("with no isolation (the home not hidden at all) a linked file is no reason to refuse", async () => {
  const { home, elsewhere } = homeAndElsewhere();
  linkSync(join(home, "vault.json"), join(elsewhere, "v"));
  const result = await runSandboxed(
    quietRun({ argv: ["true"], isolation: "none", home, env: { PATH: process.env["PATH"] }, cwd: elsewhere }),
  );
  expect(result.exitCode).toBe(0);
});
