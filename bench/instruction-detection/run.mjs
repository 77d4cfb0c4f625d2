#!/usr/bin/env node
// Precision and recall of the session runtime's `detectInstructions` on a labelled corpus we wrote in the
// styles of public prompt-injection data sets (direct overrides, e-mails, web pages, reviews, documents,
// chat, tool output, obfuscation) and of ordinary text full of benign imperatives (recipes, support e-mails,
// manuals, TODO lists). `node bench/instruction-detection/run.mjs [--json]` after `npm run build`.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
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

/** Groups corpus items by the family of their `style` (its first word: email, web, chat, …). */
export function scoreBySource(detect, corpus) {
  const groups = new Map();
  for (const item of corpus) {
    const source = item.id.split("-")[1] ?? "other";
    if (!groups.has(source)) groups.set(source, []);
    groups.get(source).push(item);
  }
  return [...groups].map(([source, items]) => ({ source, ...scoreDetector(detect, items) }));
}

/**
 * Third-party text: AgentDojo's tool outputs. Benign: every output of its benign traces (the environment's
 * default texts). Injected: the outputs of `attacks_important_instructions.jsonl` that carry an injection
 * vector (found by the `<INJECTION:` placeholder at the same event of `attacks.jsonl`). Returns undefined
 * when the benchmark folder is absent.
 */
export function agentDojoItems(dir) {
  const read = (f) =>
    readFileSync(join(dir, f), "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l));
  if (!existsSync(join(dir, "benign.jsonl"))) return undefined;
  const items = [];
  const seen = new Set();
  for (const line of read("benign.jsonl")) {
    for (const e of line.events) {
      if (e.type !== "tool_result" || seen.has(e.content)) continue;
      seen.add(e.content);
      items.push({ id: `agentdojo-benign-${items.length}`, label: "benign", style: line.suite, text: e.content });
    }
  }
  const placeholder = read("attacks.jsonl");
  const important = read("attacks_important_instructions.jsonl");
  important.forEach((line, i) => {
    line.events.forEach((e, j) => {
      const marked = placeholder[i]?.events[j]?.content;
      if (e.type !== "tool_result" || typeof marked !== "string" || !marked.includes("<INJECTION:")) return;
      if (seen.has(e.content)) return;
      seen.add(e.content);
      items.push({ id: `agentdojo-injected-${items.length}`, label: "injected", style: line.suite, text: e.content });
    });
  });
  return items;
}

function main() {
  if (typeof core.detectInstructions !== "function") {
    process.stderr.write("instruction-detection: this build has no detectInstructions (the session runtime)\n");
    process.exit(1);
  }
  const detect = (text) => core.detectInstructions(text);
  const corpus = readCorpus();
  const result = scoreDetector(detect, corpus);
  const bySource = scoreBySource(detect, corpus);
  const repo = fileURLToPath(new URL("../..", import.meta.url));
  const dir = process.env.ACP_AGENTDOJO_DIR ?? join(repo, "../shared/benchmarks/agentdojo");
  const dojoItems = agentDojoItems(dir);
  const dojo = dojoItems === undefined ? undefined : scoreDetector(detect, dojoItems);
  if (process.argv.includes("--json")) {
    process.stdout.write(`${JSON.stringify({ corpus: result, bySource, agentdojo: dojo ?? null }, null, 2)}\n`);
    return;
  }
  const p = (x) => `${(100 * x).toFixed(1)}%`;
  const line = (label, r) =>
    `${label}: items ${r.items} (injected ${r.tp + r.fn}, benign ${r.tn + r.fp})  precision ${p(r.precision)}  ` +
    `recall ${p(r.recall)}  F1 ${p(r.f1)}  (TP ${r.tp}, FP ${r.fp}, FN ${r.fn}, TN ${r.tn})\n`;
  process.stdout.write(line("corpus", result));
  for (const m of result.misses) process.stdout.write(`  missed       ${m.id} (${m.style}) score ${m.score}\n`);
  for (const f of result.falseAlarms) process.stdout.write(`  false alarm  ${f.id} (${f.style}) score ${f.score}\n`);
  process.stdout.write("\nby source (corpus):\n");
  for (const r of bySource) process.stdout.write(line(`  ${r.source}`, r));
  if (dojo !== undefined) process.stdout.write(`\n${line("AgentDojo tool outputs (third-party text)", dojo)}`);
  else process.stdout.write(`\n(no AgentDojo traces at \`${dir}\`: third-party row skipped)\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
