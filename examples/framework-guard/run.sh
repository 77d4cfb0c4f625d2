#!/usr/bin/env bash
# The framework-guard example end to end, in a throwaway home: `bash examples/framework-guard/run.sh`
# from the repository root after `npm install` (--interactive to be the person yourself).
set -euo pipefail
cd "$(dirname "$0")/../.."
# from a checkout, or from the installed package of acp (its examples/ beside its bin/)
if [ -f packages/cli/bin/acp.js ]; then acp() { node packages/cli/bin/acp.js "$@"; }; else acp() { node bin/acp.js "$@"; }; fi
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
export ACP_HOME="$dir/acp" ACP_PASSPHRASE="framework-guard-example" EXAMPLE_WORLD="$dir"
acp init >/dev/null
printf 'tok_live_example_0042\n' | acp vault set BANK_TOKEN >/dev/null
node examples/framework-guard/agent.mjs "$@"
echo
acp audit verify
echo "what the bank received: $(cat "$dir/bank.jsonl")"
