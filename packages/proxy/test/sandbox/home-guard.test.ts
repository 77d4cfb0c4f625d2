/**
 * ACP's home inside the agent's working directory stays ACP's, with real namespaces: the agent cannot move a
 * directory between the working directory and the home (taking the home's cover with it) and put a home of
 * its own in its place; a home reached through a symbolic link the agent could change is refused.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSandboxed } from "../../src/index.js";
import { pinnedDirectories } from "../../src/sandbox/home-guard.js";
import { fillHome, quietRun, scratchDir } from "./net-fixture.js";

let work: { path: string; remove(): void };
beforeAll(() => void (work = scratchDir("acp-sbx-home-")));
afterAll(() => work?.remove());

// In its working directory: moves `state` (which holds ACP's home) away, plants a home of its own, and
// writes beside the home (allowed); says what happened in out.json.
const AGENT = `
const fs = require("node:fs");
const r = {};
const attempt = (name, fn) => { try { fn(); r[name] = "ok"; } catch (err) { r[name] = err.code; } };
attempt("move", () => fs.renameSync("state", "state-moved"));
attempt("remove", () => fs.rmSync("state", { recursive: true }));
attempt("plant", () => { fs.mkdirSync("state/acp", { recursive: true }); fs.writeFileSync("state/acp/policy.yml", "evil\\n"); });
attempt("beside", () => fs.writeFileSync("state/note.txt", "agent\\n"));
fs.writeFileSync("out.json", JSON.stringify(r));
`;

describe("pinnedDirectories", () => {
  it("names the directories strictly between a writable path holding the home and the home, outermost first", () => {
    expect(pinnedDirectories("/srv/p/a/b/acp", ["/srv/p", "/srv/p/a", "/elsewhere"])).toEqual([
      "/srv/p/a",
      "/srv/p/a/b",
    ]);
    expect(pinnedDirectories("/root/.acp", ["/root"])).toEqual([]);
    expect(pinnedDirectories("/root/.acp", ["/srv"])).toEqual([]);
  });
});

describe.each(["netns", "userns"] as const)("isolation %s", (level) => {
  it("the agent cannot move the directory holding ACP's home away and plant a home of its own", async () => {
    const project = join(work.path, `project-${level}`);
    const home = join(project, "state", "acp");
    mkdirSync(project);
    const files = fillHome(home);
    const result = await runSandboxed(
      quietRun({
        argv: [process.execPath, "-e", AGENT],
        isolation: level,
        home,
        env: { PATH: process.env["PATH"] },
        cwd: project,
      }),
    );
    expect(result.exitCode).toBe(0);
    const r = JSON.parse(readFileSync(join(project, "out.json"), "utf8")) as Record<string, string>;
    expect(r["move"]).toBe("EBUSY");
    expect(r["remove"]).not.toBe("ok");
    expect(r["plant"]).not.toBe("ok");
    expect(r["beside"]).toBe("ok");
    expect(existsSync(join(project, "state-moved"))).toBe(false);
    expect(readFileSync(join(home, "policy.yml"), "utf8")).toBe(files["policy.yml"]);
    expect(readFileSync(join(home, "keys/private.key"), "utf8")).toBe(files["keys/private.key"]);
  });

  it("refuses a home reached through a symbolic link in the working directory", async () => {
    const project = join(work.path, `linked-${level}`);
    const real = join(work.path, `real-home-${level}`);
    mkdirSync(project);
    fillHome(real);
    symlinkSync(real, join(project, ".acp"));
    const run = runSandboxed(
      quietRun({
        argv: [process.execPath, "-e", "require('fs').writeFileSync('ran', '')"],
        isolation: level,
        home: join(project, ".acp"),
        env: { PATH: process.env["PATH"] },
        cwd: project,
      }),
    );
    await expect(run).rejects.toMatchObject({
      code: "sandbox_home_writable",
      message: `ACP's home \`${join(project, ".acp")}\` is reached through the symbolic link \`${join(project, ".acp")}\`, which lies in \`${project}\`, writable to the agent: it could point the link at a home of its own (its own policy and keys), which acp would use from then on (set ACP_HOME to the home's real path \`${real}\`, or run the agent where it cannot change the link)`,
    });
    expect(existsSync(join(project, "ran"))).toBe(false);
  });
});
