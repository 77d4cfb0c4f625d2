/** The terminal consent channel: a prompt on the controlling terminal. */
export { createTerminalChannel, type TerminalChannelOptions } from "./terminal-channel.js";
export { openControllingTerminal, type TerminalStreams } from "./tty.js";
export {
  argumentsCharacters,
  argumentsView,
  elide,
  type ArgumentsView,
  type ArgumentsViewLimits,
} from "../arguments-view.js";
export {
  TERMINAL_ARGUMENTS,
  decidedBy,
  formatRequestForTerminal,
  hasHiddenCharacters,
  warningsFor,
  parseTerminalCommand,
  printable,
  type TerminalCommand,
} from "./format.js";
