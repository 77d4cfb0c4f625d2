// The AgentDojo result as a Markdown table, one row per suite and a total.

function pct(n, d) {
  return d === 0 ? "–" : `${((100 * n) / d).toFixed(1)}%`;
}

function add(a, b) {
  const out = {};
  for (const key of Object.keys(a)) out[key] = a[key] + b[key];
  return out;
}

/** Formats `scoreAgentDojo`'s result as a Markdown table. */
export function formatTable(result, suites) {
  const attackKeys = Object.keys(result.attacks);
  const head = ["suite", "benign tasks", "no person", "needs a person", "refused"];
  for (const key of attackKeys) {
    head.push(`attacker calls stopped (${key})`, `of them consequential (${key})`, `cases defended (${key})`);
  }
  const lines = [`| ${head.join(" | ")} |`, `| ${head.map(() => "---").join(" | ")} |`];
  let totalB;
  const totalA = {};
  for (const suite of [...suites, "total"]) {
    const b = suite === "total" ? totalB : result.benign[suite].benign;
    if (suite !== "total") totalB = totalB === undefined ? { ...b } : add(totalB, b);
    const cells = [suite === "total" ? "**total**" : suite, b.tasks, `${b.noPerson} (${pct(b.noPerson, b.tasks)})`];
    cells.push(`${b.person} (${pct(b.person, b.tasks)})`, `${b.refused}`);
    for (const key of attackKeys) {
      const a = suite === "total" ? totalA[key] : result.attacks[key][suite].attacks;
      if (suite !== "total") totalA[key] = totalA[key] === undefined ? { ...a } : add(totalA[key], a);
      cells.push(`${a.stopped}/${a.injectionCalls} (${pct(a.stopped, a.injectionCalls)})`);
      cells.push(
        `${a.consequentialStopped}/${a.consequentialCalls} (${pct(a.consequentialStopped, a.consequentialCalls)})`,
      );
      cells.push(`${a.defended}/${a.measurable}`);
    }
    lines.push(`| ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}
