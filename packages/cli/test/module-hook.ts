import { writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Writes a Node module hook into `dir` and returns the file to pass as `node --import FILE`: `resolve` is the
 * body of the hook's `resolve(specifier, context, next)` (it runs in the hooks' own thread, and must return
 * what `next` resolves, or throw); `imports` are the module's import lines.
 */
export function moduleHook(dir: string, name: string, resolve: string, imports = ""): string {
  const hooks = join(dir, `${name}-hooks.mjs`);
  writeFileSync(hooks, `${imports}export async function resolve(specifier, context, next) {\n${resolve}\n}\n`);
  const register = join(dir, `${name}-register.mjs`);
  writeFileSync(register, `import { register } from "node:module";\nregister(${JSON.stringify(`file://${hooks}`)});\n`);
  return register;
}
