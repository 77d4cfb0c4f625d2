#!/usr/bin/env node
// Precision and recall of the session runtime's `detectInstructions` on a labelled corpus we wrote in the
// styles of public prompt-injection data sets (direct overrides, e-mails, web pages, reviews, documents,
// chat, tool output, obfuscation) and of ordinary text full of benign imperatives (recipes, support e-mails,
// manuals, TODO lists). `node bench/instruction-detection/run.mjs [--json]` after `npm run build`.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as core from "@acp/core";

/** Reads the corpus: one `{id, label: "injected"|"benign", style, text}` per line. */
export function readCorpus(path = fileURLToPath(new URL("./corpus.jsonl", import.meta.url))) {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l, i) => {
      const item = JSON.parse(l);
      if (item.label !== "injected" && item.label !== "benign") throw new Error(`corpus line ${i + 1}: bad label`);
      return item;
    });
}

/** Scores a detector (`text -> {contains_instructions, score}`) on the corpus. */
export function scoreDetector(detect, corpus) {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let tn = 0;
  const misses = [];
  const falseAlarms = [];
  for (const item of corpus) {
    const report = detect(item.text);
    const flagged = report.contains_instructions === true;
    if (item.label === "injected") {
      if (flagged) tp++;
      else {
        fn++;
        misses.push({ id: item.id, style: item.style, score: report.score });
      }
    } else if (flagged) {
      fp++;
      falseAlarms.push({ id: item.id, style: item.style, score: report.score });
    } else tn++;
  }
  const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 1 : tp / (tp + fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { items: corpus.length, tp, fp, fn, tn, precision, recall, f1, misses, falseAlarms };
}

function main() {
  if (typeof core.detectInstructions !== "function") {
    process.stderr.write("instruction-detection: this build has no detectInstructions (the session runtime)\n");
    process.exit(1);
  }
  const result = scoreDetector((text) => core.detectInstructions(text), readCorpus());
  if (process.argv.includes("--json")) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  const p = (x) => `${(100 * x).toFixed(1)}%`;
  process.stdout.write(
    `items ${result.items} (injected ${result.tp + result.fn}, benign ${result.tn + result.fp})\n` +
      `precision ${p(result.precision)}  recall ${p(result.recall)}  F1 ${p(result.f1)}  ` +
      `(TP ${result.tp}, FP ${result.fp}, FN ${result.fn}, TN ${result.tn})\n`,
  );
  for (const m of result.misses) process.stdout.write(`  missed       ${m.id} (${m.style}) score ${m.score}\n`);
  for (const f of result.falseAlarms) process.stdout.write(`  false alarm  ${f.id} (${f.style}) score ${f.score}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
