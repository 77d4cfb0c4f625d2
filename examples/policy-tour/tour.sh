#!/usr/bin/env bash
# The policy tour: what ACP's decision core does, in one minute. Run from the repository root
# after `npm install`:  npm run tour
set -uo pipefail
cd "$(dirname "$0")/../.."
# from a checkout, or from the installed package of acp (its examples/ beside its bin/)
if [ -f packages/cli/bin/acp.js ]; then acp() { node packages/cli/bin/acp.js "$@"; }; else acp() { node bin/acp.js "$@"; }; fi
step() { printf '\n\033[1m$ acp %s\033[0m\n' "$*"; acp "$@"; printf '(exit %s)\n' "$?"; }
T=examples/policy-tour

echo "1. A policy is checked before it is used; every problem is named with its line and column."
step policy validate $T/policy.yml
step policy validate $T/broken-policy.yml

echo; echo "2. One request through the pipeline: the route, the deciding rule and why."
step policy simulate --policy $T/policy.yml --tool send_email --server mail --args '{"to":"mark@attacker.example"}'
step policy simulate --policy $T/policy.yml --tool deploy_site --server ci --at 2026-03-02T22:30:00Z

echo; echo "3. Decision tests: requests with the route and rule they must get."
step policy test $T/policy.test.yml

echo; echo "4. The consent graph: tiers, confidence, blocked actions."
step graph check imessage send_vip 0.9 --graph spec/examples/consent-graph.json
step graph check self_modification modify_soul_md 0.99 --graph spec/examples/consent-graph.json

echo; echo "5. The Agent Action Contract v1: a pre-tool-call event in, the envelope out."
step check $T/send-email.contract.json
