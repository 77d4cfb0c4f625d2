import { comparePins, type PinnableTool, type ToolChange } from "./compare-pins.js";
import type { PinStore } from "./pin-store.js";

/** Tool pinning for the running proxy: records first sightings, holds changed tools until accepted. */
export interface ToolPinning {
  /** Compares a server's listing with its pins; records new tools; returns (and holds) the changed ones. */
  observe(server: string, tools: readonly PinnableTool[]): Promise<readonly ToolChange[]>;
  /** The unaccepted change of one tool, if any. */
  changeOf(server: string, tool: string): ToolChange | undefined;
  /** A person accepted the new definition: pin it and stop holding the tool. */
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
}

/** Creates the tool-pinning state of one proxy. */
export function createToolPinning(options: ToolPinningOptions): ToolPinning {
  const held = new Map<string, ToolChange>();
  const key = (server: string, tool: string): string => `${server}\u0000${tool}`;
  return {
    async observe(server, tools) {
      const pins = await options.store.load(server);
      const { fresh, changes } = comparePins(pins, tools, options.now());
      const accepted = options.acceptChanges === true ? changes.map((c) => c.after) : [];
      if (fresh.length + accepted.length > 0) await options.store.save(server, [...fresh, ...accepted]);
      for (const tool of tools) held.delete(key(server, tool.name));
      if (options.acceptChanges === true) return changes;
      for (const change of changes) held.set(key(server, change.tool), change);
      return changes;
    },
    changeOf: (server, tool) => held.get(key(server, tool)),
    async accept(server, tool) {
      const change = held.get(key(server, tool));
      if (change === undefined) return;
      await options.store.save(server, [{ ...change.after, pinned_at: options.now().toISOString() }]);
      held.delete(key(server, tool));
      options.onAccept?.(server, tool);
    },
  };
}
