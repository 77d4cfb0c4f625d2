export { createMemoryPinStore, createFilePinStore, type PinStore, type ToolPin } from "./pin-store.js";
export {
  MAX_PINNED_DEFINITION_BYTES,
  changedFields,
  comparePins,
  pinTool,
  pinnedDefinition,
  type PinnableTool,
  type ToolChange,
} from "./compare-pins.js";
export { createToolPinning, MAX_PINS_PER_SERVER, type ToolPinning } from "./tool-pinning.js";
