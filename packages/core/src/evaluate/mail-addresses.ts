/** Mail addresses written inside a longer value (`Boss <a@evil.com>`, a list), as a mail service reads them out. */
import { spendWork } from "../glob/index.js";
import { readingCost } from "./fast-glob.js";

/**
 * What ends a mail address written inside a longer value: white space, `<>,;:"'()[]`, `/` and another `@`
 * (`Boss <a@evil.com>`, `a@evil.com, me@corp.com`, `a@evil.com ` as a mail service reads them out).
 */
const ADDRESS_DELIMITER = /[\s<>,;:"'()[\]@/]/;

/** Whether a glob names a mail address (`*@evil.com`, `ann@corp.com`): it holds `@` and no `/` (a URL's user). */
export function isAddressPattern(pattern: string): boolean {
  return pattern.includes("@") && !pattern.includes("/");
}

/**
 * The mail addresses written in `leaf` when it is not one itself (`Boss <a@evil.com>` → `a@evil.com`), each
 * without a trailing dot (`a@evil.com.`, the root of DNS); empty for a value without `@` or that is one
 * address as it is. Linear: each character is read at most twice (the runs around each `@` stop at the next).
 */
export function addressesIn(leaf: string): string[] {
  if (!leaf.includes("@")) return [];
  spendWork(2 * readingCost(leaf));
  const out: string[] = [];
  for (let at = leaf.indexOf("@"); at !== -1; at = leaf.indexOf("@", at + 1)) {
    let start = at;
    while (start > 0 && !ADDRESS_DELIMITER.test(leaf[start - 1] as string)) start--;
    let end = at + 1;
    while (end < leaf.length && !ADDRESS_DELIMITER.test(leaf[end] as string)) end++;
    if (start === at || end === at + 1) continue;
    const address = leaf.slice(start, end).replace(/\.+$/, "");
    if (address !== leaf && address.length > at - start + 1) out.push(address);
  }
  return out;
}
