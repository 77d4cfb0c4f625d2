// Deterministic generator of realistic policies and request streams for the policy benchmark.
// Every engine's child process calls it with the same size and seed, so all engines see the same rules
// and the same requests without shipping them between processes.
//
// A rule is engine-neutral: { id, tool?, server?, category?, args: { to?, path?, amount?, channel?,
// "options.mode"? }, action }. Globs use only `*` (and `/**` at the end of paths) so that picomatch (ours),
// Cedar `like` and Casbin's globMatch/keyMatch agree on every generated value.

/** mulberry32: a small seeded PRNG (deterministic across processes). */
export function createRandom(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  const pick = (list) => list[int(list.length)];
  return { next, int, pick, chance: (p) => next() < p };
}

const VERBS = [
  "read",
  "get",
  "list",
  "search",
  "write",
  "create",
  "update",
  "send",
  "delete",
  "remove",
  "deploy",
  "exec",
  "transfer",
  "pay",
  "publish",
  "post",
];
const BASE_NOUNS = [
  "file",
  "email",
  "issue",
  "pr",
  "repo",
  "message",
  "invoice",
  "page",
  "row",
  "table",
  "user",
  "ticket",
];
const BASE_SERVERS = ["github", "gmail", "slack", "filesystem", "stripe", "postgres", "jira", "notion"];
const ACTIONS = ["allow", "ask", "deny"];
const MODES = ["dry-run", "force", "normal"];

/** The vocabulary grows with the policy, as real large policies cover more tools, servers and domains. */
export function vocabulary(size) {
  const nouns = [...BASE_NOUNS];
  for (let i = 0; i < Math.ceil(size / 16); i++) nouns.push(`${BASE_NOUNS[i % BASE_NOUNS.length]}${i}`);
  const servers = [...BASE_SERVERS];
  for (let i = 0; i < Math.ceil(size / 50); i++) servers.push(`${i % 2 === 0 ? "prod" : "staging"}-svc${i}`);
  const domains = Math.max(8, Math.ceil(size / 4));
  const projects = Math.max(8, Math.ceil(size / 4));
  return { nouns, servers, domains, projects };
}

function randomArgs(rand, vocab, count) {
  const args = {};
  const keys = ["to", "path", "amount", "channel", "options.mode"];
  for (let i = 0; i < count; i++) {
    const key = rand.pick(keys);
    if (key === "to")
      args.to = rand.chance(0.3) ? `*@corp${rand.int(vocab.domains)}.com` : `ops@corp${rand.int(vocab.domains)}.com`;
    else if (key === "path") args.path = `/srv/proj${rand.int(vocab.projects)}/**`;
    else if (key === "amount") args.amount = rand.pick([10, 50, 100, 250, 1000, 5000]);
    else if (key === "channel") args.channel = `#team-${rand.int(vocab.projects)}`;
    else args["options.mode"] = rand.pick(MODES);
  }
  return args;
}

function toolName(rand, vocab) {
  return `${rand.pick(VERBS)}_${rand.pick(vocab.nouns)}`;
}

/** One rule of a given kind; the kind mix mirrors large generated policies (mostly specific rules). */
function makeRule(rand, vocab, id) {
  const roll = rand.next();
  const rule = { id, args: {}, action: rand.pick(ACTIONS) };
  if (roll < 0.45) {
    rule.tool = toolName(rand, vocab);
    rule.args = randomArgs(rand, vocab, 1 + rand.int(2));
  } else if (roll < 0.6) {
    rule.tool = toolName(rand, vocab);
    rule.server = rand.pick(vocab.servers);
  } else if (roll < 0.75) {
    // Prefix glob: `send_invoice*` (covers send_invoice, send_invoice12, …), sometimes with a server glob.
    rule.tool = `${toolName(rand, vocab)}*`;
    if (rand.chance(0.4)) rule.server = rand.chance(0.5) ? "prod-*" : rand.pick(vocab.servers);
  } else if (roll < 0.87) {
    // Suffix glob: `*_invoice7`, with an argument match.
    rule.tool = `*_${rand.pick(vocab.nouns)}`;
    if (rand.chance(0.5)) rule.args = randomArgs(rand, vocab, 1);
  } else if (roll < 0.97) {
    rule.server = rand.pick(vocab.servers);
    rule.tool = `${rand.pick(VERBS)}_${rand.pick(vocab.nouns)}*`;
    rule.args = randomArgs(rand, vocab, 1);
  } else {
    rule.server = rand.pick(vocab.servers);
  }
  return rule;
}

/** A fixed tail of broad rules, as real policies end: category rules and a catch-all per server family. */
function broadRules(startId) {
  return [
    { id: startId, category: "financial", server: "prod-*", args: {}, action: "deny" },
    { id: startId + 1, category: "read", args: {}, action: "allow" },
    { id: startId + 2, category: "communication", args: { to: "*@corp0.com" }, action: "allow" },
    { id: startId + 3, tool: "*", server: "staging-*", args: {}, action: "allow" },
    { id: startId + 4, tool: "*", args: { "options.mode": "force" }, action: "deny" },
  ];
}

/** `size` rules: specific rules first, five broad rules at the end. Ids are 1-based positions. */
export function generatePolicy(size, seed = 42) {
  const rand = createRandom(seed);
  const vocab = vocabulary(size);
  const tail = size >= 10 ? 5 : 0;
  const rules = [];
  for (let i = 1; i <= size - tail; i++) rules.push(makeRule(rand, vocab, i));
  rules.push(...broadRules(size - tail + 1).slice(0, tail));
  return { rules, defaultAction: "ask", vocab };
}

function concreteFor(rand, vocab, pattern, key) {
  if (key === "to") return pattern.startsWith("*") ? `u${rand.int(100)}${pattern.slice(1)}` : pattern;
  if (key === "path") return `${pattern.slice(0, -3)}/src/f${rand.int(100)}.ts`;
  return pattern;
}

function randomValue(rand, vocab, key) {
  if (key === "to") return `u${rand.int(100)}@corp${rand.int(vocab.domains)}.com`;
  if (key === "path") return `/srv/proj${rand.int(vocab.projects)}/src/f${rand.int(100)}.ts`;
  if (key === "amount") return rand.pick([10, 50, 100, 250, 1000, 5000]);
  if (key === "channel") return `#team-${rand.int(vocab.projects)}`;
  return rand.pick(MODES);
}

/** Requests: most aim at a rule (and satisfy its arguments about half the time), the rest are random. */
export function generateRequests(policy, count, seed = 7) {
  const rand = createRandom(seed);
  const { vocab, rules } = policy;
  const requests = [];
  for (let i = 0; i < count; i++) {
    const target = rand.chance(0.7) ? rand.pick(rules) : undefined;
    let tool = toolName(rand, vocab);
    let server = rand.pick(vocab.servers);
    if (target?.tool !== undefined && !target.tool.startsWith("*"))
      tool = target.tool.replace(/\*$/, rand.chance(0.5) ? "" : "12");
    else if (target?.tool !== undefined) tool = `${rand.pick(VERBS)}${target.tool.slice(1)}`;
    if (target?.server !== undefined && !target.server.endsWith("*")) server = target.server;
    const args = {};
    for (const key of ["to", "path", "amount", "channel", "options.mode"]) {
      const wanted = target?.args[key];
      const value =
        wanted !== undefined && rand.chance(0.6)
          ? concreteFor(rand, vocab, wanted, key)
          : randomValue(rand, vocab, key);
      if (key === "options.mode") args.options = { mode: value };
      else args[key] = value;
    }
    requests.push({ tool, server, arguments: args });
  }
  return requests;
}
