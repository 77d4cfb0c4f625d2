import { spendWork, workEpoch } from "../glob/index.js";
import { foldName } from "../request/index.js";
import { readingCost } from "./fast-glob.js";

/** The word separators a key is read without: `file_path`, `file-path` and `filePath` are one key. */
const SEPARATORS = /[_-]/g;

/**
 * An argument key as a server may read it, for the rules that fail towards caution: folded as a tool name
 * is ({@link foldName}: any case, NFKC/NFD and full-width spellings, look-alike letters), without `_` or
 * `-` (`Path`, `PATH`, `ｐａｔｈ` and `pаth` with a Cyrillic `а` are `path`'s; `filePath`, `file-path` and
 * `FILE_PATH` are `file_path`'s): a server that reads keys in any case, or a model (pydantic) that takes
 * an alias in camel case, finds the argument under them.
 */
export function foldKey(key: string): string {
  return foldName(key).replace(SEPARATORS, "");
}

/** The folds of the keys segments rules name, made once for every decision. */
const segmentFolds = new Map<string, string>();
/** Segments whose folds are kept (a policy names far fewer). */
const MAX_SEGMENT_FOLDS = 4096;

function foldOfSegment(segment: string): string {
  let fold = segmentFolds.get(segment);
  if (fold === undefined) {
    fold = foldKey(segment);
    if (segmentFolds.size < MAX_SEGMENT_FOLDS) segmentFolds.set(segment, fold);
  }
  return fold;
}

/**
 * The own keys of each argument object read in this decision, by fold, each index made (and charged: a
 * step per key and its reading) once for every rule that reads it, and made again in the next decision.
 */
const kept = { epoch: -1, indexes: new WeakMap<object, ReadonlyMap<string, readonly string[]>>() };

function indexOf(record: Readonly<Record<string, unknown>>): ReadonlyMap<string, readonly string[]> {
  const epoch = workEpoch();
  if (kept.epoch !== epoch) {
    kept.epoch = epoch;
    kept.indexes = new WeakMap();
  }
  let index = kept.indexes.get(record);
  if (index === undefined) {
    const byFold = new Map<string, string[]>();
    for (const key of Object.keys(record)) {
      spendWork(1 + readingCost(key));
      const fold = foldKey(key);
      const keys = byFold.get(fold);
      if (keys === undefined) byFold.set(fold, [key]);
      else keys.push(key);
    }
    index = byFold;
    kept.indexes.set(record, index);
  }
  return index;
}

/**
 * The own keys of `record` that read as `segment` ({@link foldKey}), `segment` itself among them when it is
 * one: `path`, `Path` and `PATH` of `{"path": …, "Path": …, "PATH": …}` for the segment `path`.
 */
export function keysReadAs(record: Readonly<Record<string, unknown>>, segment: string): readonly string[] {
  return indexOf(record).get(foldOfSegment(segment)) ?? [];
}
