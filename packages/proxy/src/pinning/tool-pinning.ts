import {
  changedFields,
  comparePins,
  pinTool,
  pinnedDefinition,
  type PinnableTool,
  type ToolChange,
} from "./compare-pins.js";
import type { PinStore, ToolPin } from "./pin-store.js";
import { whyTextHidden } from "../aggregate/hidden-text.js";

/** Tool pinning for the running proxy: records first sightings, holds changed tools until accepted. */
export interface ToolPinning {
  /** Compares a server's listing with its pins; records new tools; returns (and holds) the changed ones. */
  observe(server: string, tools: readonly PinnableTool[]): Promise<readonly ToolChange[]>;
  /** The unaccepted change of one tool, if any. */
  changeOf(server: string, tool: string): ToolChange | undefined;
  /**
   * Why the server's last listing could not be checked against its pins (its pins could not be read or
   * written), or undefined once a check succeeded: until then a changed tool cannot be told from the pinned
   * one, so every call to the server's tools must ask (fail closed).
   */
  uncheckedBecause(server: string): string | undefined;
  /**
   * The definition of a listed tool that the agent is served and its calls are decided with (annotations):
   * the tool as listed, or — while it is held, or when it differs from its pin and the listing was not
   * compared yet — its pinned definition (every field as first seen; a stand-in when the pin kept no values).
   */
  served(server: string, tool: PinnableTool): PinnableTool;
  /**
   * Why a listed tool is not served at all, or undefined: the pinned definition {@link served} would give it
   * hides text from a person (`whyTextHidden`: tag characters, bidi controls, … in any string or member name;
   * a pin recorded before such definitions were refused), as the listing refuses a definition that does. It
   * is left out until a person accepts its new definition (or the server lists the pinned one again).
   */
  withheld(server: string, tool: PinnableTool): string | undefined;
  /**
   * A person accepted the new definition: pin it and stop holding the tool. What is pinned is the change as
   * first held (the one `changeOf` showed), even if the server listed another definition since.
   */
  accept(server: string, tool: string): Promise<void>;
}

/** Options of {@link createToolPinning}. */
export interface ToolPinningOptions {
  readonly store: PinStore;
  readonly now: () => Date;
  /** Accept every changed definition as it is seen (`acp proxy --accept-tool-changes`). */
  readonly acceptChanges?: boolean;
  /** A held tool was accepted by a person (the agent should list tools again: its definition changed). */
  readonly onAccept?: (server: string, tool: string) => void;
  /** A tool is not served: its pinned definition hides text ({@link ToolPinning.withheld}); once per pin. */
  readonly onWithheld?: (server: string, tool: string, why: string) => void;
}

const EPOCH = new Date(0);

/**
 * Most tools pinned for one server. Pins are never forgotten (a tool that went away and comes back must be
 * compared with what it was), so an upstream that lists new names at every listing would grow `pins.json`
 * (rewritten whole at every check) without bound; past this, its further new tools are not pinned and every
 * call to its tools asks (`uncheckedBecause`), as when its pins cannot be read.
 */
export const MAX_PINS_PER_SERVER = 2_000;

/** Whether two pins are the same record (as loaded again from the store). */
function samePin(a: ToolPin, b: ToolPin): boolean {
  return (
    a.pinned_at === b.pinned_at &&
    a.input_schema_hash === b.input_schema_hash &&
    a.description === b.description &&
    JSON.stringify(a.field_hashes ?? null) === JSON.stringify(b.field_hashes ?? null)
  );
}

/** Creates the tool-pinning state of one proxy. */
export function createToolPinning(options: ToolPinningOptions): ToolPinning {
  const held = new Map<string, ToolChange>();
  // servers whose last check failed, and why
  const unchecked = new Map<string, string>();
  // the pins of each server as last loaded or written here: what `served` compares a listing with
  const known = new Map<string, Map<string, ToolPin>>();
  // whether each listed tool object differs from the pin it was last compared with (a listing's objects are
  // kept until the next listing): a call or a tools/list compares once per pin, not once per request
  const compared = new WeakMap<PinnableTool, { readonly pin: ToolPin; readonly differs: boolean }>();
  const differs = (pin: ToolPin, tool: PinnableTool): boolean => {
    const last = compared.get(tool);
    if (last?.pin === pin) return last.differs;
    const result = changedFields(pin, pinTool(tool, EPOCH)).length > 0;
    compared.set(tool, { pin, differs: result });
    return result;
  };
  const key = (server: string, tool: string): string => `${server}\u0000${tool}`;
  /** The pin whose definition a listed tool is served (held, or differing and not compared yet), if not its own. */
  const servedPin = (server: string, tool: PinnableTool): ToolPin | undefined => {
    const change = held.get(key(server, tool.name));
    if (change !== undefined) return change.before;
    const pin = known.get(server)?.get(tool.name);
    return pin !== undefined && differs(pin, tool) ? pin : undefined;
  };
  // what each pin served in a tool's stead hides (null: nothing), read once per pin
  const hidden = new WeakMap<ToolPin, string | null>();
  const remember = (server: string, pins: readonly ToolPin[]): void => {
    const map = known.get(server) ?? new Map<string, ToolPin>();
    for (const pin of pins) map.set(pin.name, pin);
    known.set(server, map);
  };
  /** Compares a server's listing with its pins, holds the changed tools, records the new ones. */
  const check = async (server: string, tools: readonly PinnableTool[]): Promise<readonly ToolChange[]> => {
    const pins = await options.store.load(server);
    const compared = comparePins(pins, tools, options.now());
    const { changes, upgraded } = compared;
    const room = Math.max(0, MAX_PINS_PER_SERVER - pins.size);
    const fresh = compared.fresh.slice(0, room);
    const unpinned = compared.fresh.length - fresh.length;
    const accepted = options.acceptChanges === true ? changes.map((c) => c.after) : [];
    // held (and remembered) before the pins are written: a failed write must not let a change through
    const earlier = new Map<string, ToolChange>();
    for (const tool of tools) {
      const k = key(server, tool.name);
      const change = held.get(k);
      if (change !== undefined) earlier.set(k, change);
      held.delete(k);
    }
    if (options.acceptChanges !== true) {
      for (const change of changes) {
        // a change held from the same pin stays as first held: a person may be looking at it, and approving
        // pins what they were shown, never a definition the server swapped in meanwhile (the next listing
        // after that holds the newer one)
        const first = earlier.get(key(server, change.tool));
        held.set(
          key(server, change.tool),
          first !== undefined && samePin(first.before, change.before) ? first : change,
        );
      }
    }
    known.set(server, new Map(pins));
    const recorded = [...fresh, ...upgraded, ...accepted];
    remember(server, recorded);
    if (recorded.length > 0) await options.store.save(server, recorded);
    if (unpinned > 0) {
      throw new Error(
        `${unpinned} new tool${unpinned === 1 ? " is" : "s are"} not pinned: the server has ${MAX_PINS_PER_SERVER} pinned tools, the most kept for one server`,
      );
    }
    return changes;
  };
  return {
    async observe(server, tools) {
      try {
        const changes = await check(server, tools);
        unchecked.delete(server);
        return changes;
      } catch (err) {
        unchecked.set(server, err instanceof Error ? err.message : String(err));
        throw err;
      }
    },
    uncheckedBecause: (server) => unchecked.get(server),
    changeOf: (server, tool) => held.get(key(server, tool)),
    served(server, tool) {
      const pin = servedPin(server, tool);
      return pin === undefined ? tool : pinnedDefinition(pin);
    },
    withheld(server, tool) {
      const pin = servedPin(server, tool);
      if (pin === undefined) return undefined;
      let why = hidden.get(pin);
      if (why === undefined) {
        why = whyTextHidden(pinnedDefinition(pin)) ?? null;
        hidden.set(pin, why);
        if (why !== null) options.onWithheld?.(server, tool.name, why);
      }
      return why ?? undefined;
    },
    async accept(server, tool) {
      const change = held.get(key(server, tool));
      if (change === undefined) return;
      const pin = { ...change.after, pinned_at: options.now().toISOString() };
      await options.store.save(server, [pin]);
      remember(server, [pin]);
      held.delete(key(server, tool));
      options.onAccept?.(server, tool);
    },
  };
}
