export { createMemoryPinStore, createFilePinStore, type PinStore, type ToolPin } from "./pin-store.js";
export { comparePins, pinTool, type PinnableTool, type ToolChange } from "./compare-pins.js";
export { createToolPinning, type ToolPinning } from "./tool-pinning.js";
