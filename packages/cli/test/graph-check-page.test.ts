import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCli } from "./run.js";

// docs/reference/cli/graph-check.md shows a transcript run from the repository root: each `$ acp graph check …`
// line prints, on stdout, exactly the lines shown under it (a reader copies the command it suggests).

const root = fileURLToPath(new URL("../../../", import.meta.url));
const page = readFileSync(`${root}docs/reference/cli/graph-check.md`, "utf8");

interface Step {
  readonly argv: string[];
  readonly shown: string[];
}

/** The `$ acp …` lines of the page's code blocks (a trailing `# comment` dropped) and the lines under each. */
function transcript(): Step[] {
  const steps: Step[] = [];
  for (const block of page.matchAll(/```\n([\s\S]*?)```/g)) {
    for (const line of (block[1] ?? "").split("\n")) {
      if (line.startsWith("$ acp ")) {
        const command = line.slice("$ acp ".length).replace(/\s+#.*$/, "");
        steps.push({ argv: command.split(/\s+/), shown: [] });
      } else if (line !== "" && steps.length > 0) steps.at(-1)?.shown.push(line);
    }
  }
  return steps;
}

describe("the acp graph check page", () => {
  const steps = transcript();

  it("shows three runs: VISIBLE, BLOCKED and a decayed domain", () => {
    expect(steps.map((s) => s.argv.slice(0, 4).join(" "))).toEqual([
      "graph check imessage send_vip",
      "graph check self_modification modify_soul_md",
      "graph check email read",
    ]);
  });

  for (const [i, step] of steps.entries()) {
    it(`prints what it shows for \`acp ${step.argv.join(" ")}\``, async () => {
      const out = await runCli(step.argv, { cwd: root, env: { HOME: "/nonexistent-home" } });
      expect(out.stdout.trimEnd().split("\n"), `step ${i + 1}`).toEqual(step.shown);
    });
  }
});
