/** The terminal consent channel: a prompt on the controlling terminal. */
export { createTerminalChannel, type TerminalChannelOptions } from "./terminal-channel.js";
export { openControllingTerminal, type TerminalStreams } from "./tty.js";
export {
  decidedBy,
  formatRequestForTerminal,
  parseTerminalCommand,
  printable,
  type TerminalCommand,
} from "./format.js";
