#!/usr/bin/env bash
# Run before `npm test` (root `pretest`): installs what the test suites need from the machine itself.
# Idempotent; returns at once when everything is there. Add further steps here, one script each.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/ensure-chromium.sh"
