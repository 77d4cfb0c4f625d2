// The npm-shrinkwrap.json of the released package (pack-release.mjs): the third-party packages the CLI and
// the @acp/* packages it carries need at run time, each at the version, integrity and place in the tree the
// repository's package-lock.json gave it, so installing the package gets the versions we tested rather than
// the newest in range on the day (npm honours a shrinkwrap inside a published package; a package-lock.json
// there it ignores).
//
// A workspace's dependency resolves as node would from that workspace's folder (packages/core/node_modules/X,
// then node_modules/X); the package is one folder, so a workspace's own node_modules/ moves to the package's
// node_modules/. Two packages that would land on one path at different versions, or any package that would
// then resolve a dependency to another version than in the checkout, stop the pack: the shrinkwrap says
// exactly what was tested, or there is none.

/** Fields of a lock entry that describe the package (not how the checkout came to need it: dev, peer, …). */
const KEPT = [
  "version",
  "resolved",
  "integrity",
  "license",
  "dependencies",
  "optionalDependencies",
  "peerDependencies",
  "peerDependenciesMeta",
  "bin",
  "engines",
  "os",
  "cpu",
  "libc",
  "hasInstallScript",
  "optional",
];

/** The folder above `path` (a lock path: "" is the root), as node walks up: `a/node_modules/b` -> `a`. */
function parent(path) {
  const parts = path.split("/");
  parts.pop();
  if (parts.at(-1)?.startsWith("@")) parts.pop();
  if (parts.at(-1) === "node_modules") parts.pop();
  return parts.join("/");
}

/** The lock path `name` resolves to from the folder `from`, as node's lookup would, or undefined. */
export function resolveIn(packages, from, name) {
  for (let dir = from; ; dir = parent(dir)) {
    const candidate = `${dir === "" ? "" : `${dir}/`}node_modules/${name}`;
    if (packages[candidate] !== undefined) return candidate;
    if (dir === "") return undefined;
  }
}

/**
 * The dependencies npm installs for a lock entry: name -> whether the package may be missing. An optional
 * peer is left out: npm installs it only when something else depends on it (and then it comes by that edge).
 */
function edges(entry) {
  const out = new Map();
  for (const name of Object.keys(entry.dependencies ?? {})) out.set(name, false);
  for (const name of Object.keys(entry.optionalDependencies ?? {})) out.set(name, true);
  for (const name of Object.keys(entry.peerDependencies ?? {}))
    if (!out.has(name) && entry.peerDependenciesMeta?.[name]?.optional !== true) out.set(name, false);
  return out;
}

/**
 * The shrinkwrap of the package whose root manifest is `root`.
 *
 * @param lock the repository's package-lock.json (lockfileVersion 2 or 3)
 * @param root the manifest the package ships (name, version, dependencies, bundleDependencies, …)
 * @param declarers each workspace whose dependencies the package carries: its lock path (`packages/core`)
 *   and its manifest
 * @param bundled the bundled @acp/* packages: name -> the manifest each ships with
 * @param fail throws with a message
 */
export function buildShrinkwrap(lock, root, declarers, bundled, fail) {
  const packages = lock.packages;
  if (packages === undefined || lock.lockfileVersion < 2)
    fail("package-lock.json has no `packages` (lockfileVersion 2 or 3): run npm install with npm 7 or newer");
  const workspaceDirs = new Set(Object.entries(packages).flatMap(([, e]) => (e.link ? [e.resolved] : [])));
  /** lock path -> path in the package */
  const placed = new Map();
  /** lock path -> [dependency name, lock path it resolves to] */
  const resolved = new Map();
  const place = (path) => {
    if (placed.has(path)) return false;
    const workspace = [...workspaceDirs].find((dir) => path.startsWith(`${dir}/`));
    const to = workspace === undefined ? path : path.slice(workspace.length + 1);
    if (!to.startsWith("node_modules/")) fail(`cannot place ${path} in the package`);
    placed.set(path, to);
    return true;
  };
  const lookUp = (from, name, optional, who) => {
    const path = resolveIn(packages, from, name);
    if (path === undefined) {
      if (optional) return undefined;
      fail(`${who} needs ${name}, which package-lock.json does not hold: run npm install`);
    }
    const entry = packages[path];
    if (entry.link) {
      if (name.startsWith("@acp/")) return undefined; // carried in the package
      fail(`${who} needs ${name}, a link in package-lock.json (${entry.resolved}), not a package of the registry`);
    }
    return path;
  };

  const pending = [];
  const rootEdges = [];
  for (const { dir, manifest } of declarers)
    for (const name of Object.keys(manifest.dependencies ?? {})) {
      if (name.startsWith("@acp/")) continue;
      const path = lookUp(dir, name, false, manifest.name);
      rootEdges.push([name, path]);
      if (place(path)) pending.push(path);
    }
  while (pending.length > 0) {
    const path = pending.pop();
    const deps = [];
    for (const [name, optional] of edges(packages[path])) {
      const to = lookUp(path, name, optional, `${path} (package-lock.json)`);
      if (to === undefined) continue;
      deps.push([name, to]);
      if (place(to)) pending.push(to);
    }
    resolved.set(path, deps);
  }

  const out = {
    "": {
      name: root.name,
      version: root.version,
      license: root.license,
      dependencies: root.dependencies,
      bundleDependencies: root.bundleDependencies,
      // as npm writes it (`bin/acp.js`, not `./bin/acp.js`), so an install in place leaves the file as it is
      bin: root.bin && Object.fromEntries(Object.entries(root.bin).map(([k, v]) => [k, v.replace(/^\.\//, "")])),
      engines: root.engines,
    },
  };
  const from = {};
  for (const [path, to] of [...placed].sort(([, a], [, b]) => a.localeCompare(b))) {
    const entry = Object.fromEntries(
      KEPT.filter((k) => packages[path][k] !== undefined).map((k) => [k, packages[path][k]]),
    );
    const there = out[to];
    if (there !== undefined && (there.version !== entry.version || there.integrity !== entry.integrity))
      fail(`${from[to]} (${there.version}) and ${path} (${entry.version}) would both be ${to} in the package`);
    out[to] = entry;
    from[to] = path;
  }
  // the same tree from the package's root: each package finds the version it found in the checkout
  for (const [name, path] of rootEdges)
    if (resolveIn(out, "", name) !== placed.get(path))
      fail(`${name} would resolve to ${resolveIn(out, "", name)} in the package, not ${placed.get(path)}`);
  for (const [path, deps] of resolved)
    for (const [name, to] of deps)
      if (resolveIn(out, placed.get(path), name) !== placed.get(to))
        fail(
          `${path} would find ${name} at ${resolveIn(out, placed.get(path), name)} in the package, not ${placed.get(to)}`,
        );
  for (const [name, manifest] of bundled)
    out[`node_modules/${name}`] = {
      version: manifest.version,
      license: manifest.license,
      inBundle: true,
      ...(Object.keys(manifest.dependencies ?? {}).length > 0 ? { dependencies: manifest.dependencies } : {}),
    };
  const sorted = Object.fromEntries(
    Object.entries(out).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))),
  );
  return { name: root.name, version: root.version, lockfileVersion: 3, requires: true, packages: sorted };
}
