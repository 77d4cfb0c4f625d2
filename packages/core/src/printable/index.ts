export { hasHiddenCharacters, printable, printableJsonText } from "./printable.js";
