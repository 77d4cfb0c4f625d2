/**
 * Content is attacker-controlled and every check of it runs on the provider's one event loop (§9.6: adversarial
 * automation, not good faith): the input checks of an FAQ create, the content scan of a publication, and the
 * rendering of a published page any visitor may load. Each must take time linear in the text. Patterns that
 * backtracked took 24 s to accept one FAQ of 50 answers of `<` and spaces, 25 s to scan it, and 12 s to render a
 * page of answers made of `[` — each request blocking every other one for that long.
 *
 * Each check runs in a worker thread, stopped if it has not answered within {@link DEADLINE_MS}: a bound about 50
 * times what the linear checks take here (≤ 110 ms), and below what the backtracking ones took (6 s to 26 s). It
 * decides whether a check ends at all in reasonable time, not how fast it is.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasImage, markdownLinks, renderSafeMarkdown, unsafeMarkdownReason } from "../src/content/safe-markdown.js";

const DEADLINE_MS = 5_000;
const dir = mkdtempSync(join(tmpdir(), "acp-claim-linear-"));
const script = join(dir, "content-linear-worker.mjs");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  await build({
    entryPoints: [fileURLToPath(new URL("./content-linear-worker.ts", import.meta.url))],
    outfile: script,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "error",
  });
});

/** Runs `check` on 50 answers made of `answer` in a worker: its answer, or "no answer within the deadline". */
function bounded(check: "parse" | "scan" | "page", answer: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(script, { workerData: { check, answer } });
    const timer = setTimeout(() => {
      void worker.terminate();
      resolve(`no answer within ${DEADLINE_MS} ms`);
    }, DEADLINE_MS);
    worker.once("message", (m: string) => {
      clearTimeout(timer);
      void worker.terminate();
      resolve(m);
    });
    worker.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

/** Answers just under the 10 KB limit that made the old patterns backtrack. */
const HOSTILE = {
  "`<` and spaces": `x <${" ".repeat(10_200)}`,
  "`<` and tabs and spaces": `x <${" \t".repeat(5_100)}`,
  "`![` repeated": "![".repeat(5_100),
  "`[` repeated": "[".repeat(10_200),
  "one Latin word": "a".repeat(10_200),
  "Latin and Cyrillic words, each one script": "pay \u0440\u0430\u0443 ".repeat(900),
  "one word, Latin letters and combining marks": "e\u0301".repeat(3_300),
} as const;

describe("§9.6 / §23: content checks take time linear in attacker-controlled text", () => {
  for (const [name, answer] of Object.entries(HOSTILE)) {
    it(
      `an FAQ of 50 answers of ${name} is checked at input, scanned and rendered as a 5-FAQ page, each promptly`,
      async () => {
        expect(await bounded("parse", answer)).toBe("accepted");
        // The same answer 50 times (numbered) is not spam by repetition; nothing else in it is a finding.
        expect(await bounded("scan", answer)).toBe("clean");
        expect(await bounded("page", answer)).toMatch(/^\d+ characters$/);
      },
      4 * DEADLINE_MS,
    );
  }
});

describe("the linear checks refuse and render what the old patterns did", () => {
  it("svg and raw html tags are refused however much space is inside the tag", () => {
    const pad = " ".repeat(50_000);
    expect(unsafeMarkdownReason(`<${pad}svg>`)).toBe("svg is not allowed");
    expect(unsafeMarkdownReason(`<${pad}/${pad}svg>`)).toBe("svg is not allowed");
    expect(unsafeMarkdownReason(`< /\tscript>`)).toBe("raw html is not allowed");
    expect(unsafeMarkdownReason(`<${pad}IFRAME src=x>`)).toBe("raw html is not allowed");
    expect(unsafeMarkdownReason(`a < b and c / d`)).toBeUndefined();
  });

  it("image syntax is found exactly where /!\\[[^\\]]*\\]\\(/ finds it (every string of a small alphabet up to 7 long)", () => {
    const old = /!\[[^\]]*\]\(/;
    const alphabet = ["!", "[", "]", "(", "a", "\n"];
    const differ: string[] = [];
    let checked = 0;
    const walk = (s: string): void => {
      if (hasImage(s) !== old.test(s)) differ.push(s);
      checked += 1;
      if (s.length < 7) for (const c of alphabet) walk(s + c);
    };
    walk("");
    expect(checked).toBe((6 ** 8 - 1) / 5);
    expect(differ).toEqual([]);
    expect(unsafeMarkdownReason(`${"![".repeat(50_000)}x](https://example.com/a.png)`)).toBe(
      "images are not allowed (no external images)",
    );
  });

  it("links render as before; a `[` before a link's label is text, and a target holding `[` is no link", () => {
    expect(renderSafeMarkdown("See [the docs](https://example.com/docs).")).toBe(
      '<p>See <a href="https://example.com/docs" rel="nofollow noopener noreferrer ugc">the docs</a>.</p>',
    );
    expect(renderSafeMarkdown("[x [the docs](https://example.com/docs)")).toBe(
      '<p>[x <a href="https://example.com/docs" rel="nofollow noopener noreferrer ugc">the docs</a></p>',
    );
    expect(renderSafeMarkdown("[a](https://example.com/[b](https://example.com/c)")).toBe(
      '<p>[a](https://example.com/<a href="https://example.com/c" rel="nofollow noopener noreferrer ugc">b</a></p>',
    );
    expect(markdownLinks("[x [the docs](https://example.com/docs)").map((l) => [l.label, l.href])).toEqual([
      ["the docs", "https://example.com/docs"],
    ]);
  });
});
