import { isAlias, isMap, isPair, isScalar, isSeq, type Node } from "yaml";

/** What {@link checkAliasExpansion} found wrong: the alias at fault, and why. */
export type AliasExpansionFault =
  | { readonly kind: "too_large"; readonly alias: Node; readonly total: number }
  | { readonly kind: "recursive"; readonly alias: Node; readonly name: string };

/**
 * How many YAML values the document's aliases stand for, summed over every alias (an alias counts each value
 * of the node its anchor names, and an alias inside that node counts so too), against `limit`. The reader
 * reads an alias's node again at each alias, so a rule list of `*r` repeated reads `&r`'s node each time:
 * without a bound, a 400 KB file of one anchored rule with 20,000 `args` and 2,000 `*r` made 40 million
 * values and ran the process out of memory. Returns the first alias past the limit, or one inside the
 * node its own anchor names (`&r { match: *r }`, which no policy means), or `undefined`.
 *
 * One post-order walk over the document, each node once (an alias's size is its anchor's, known by then,
 * since an anchor comes before its aliases); recursion as deep as the document's nesting, which the loader
 * has bounded. `aliases` maps each known alias to its anchor's node; an unknown alias counts one.
 */
export function checkAliasExpansion(
  root: unknown,
  aliases: ReadonlyMap<Node, Node>,
  limit: number,
): AliasExpansionFault | undefined {
  const sizes = new Map<unknown, number>();
  let expanded = 0;
  let fault: AliasExpansionFault | undefined;
  const sizeOf = (node: unknown): number => {
    if (fault !== undefined || node === null || node === undefined) return 0;
    if (isAlias(node)) {
      const target = aliases.get(node);
      if (target === undefined) return 1;
      const size = sizes.get(target);
      if (size === undefined) {
        fault = { kind: "recursive", alias: node, name: node.source };
        return 0;
      }
      expanded += size;
      if (expanded > limit) fault = { kind: "too_large", alias: node, total: expanded };
      return size;
    }
    let size = 1;
    if (isMap(node) || isSeq(node)) {
      for (const item of node.items as unknown[]) {
        if (isPair(item)) size += sizeOf(item.key) + sizeOf(item.value);
        else size += sizeOf(item);
      }
    } else if (!isScalar(node)) return 0;
    sizes.set(node, size);
    return size;
  };
  sizeOf(root);
  return fault;
}
