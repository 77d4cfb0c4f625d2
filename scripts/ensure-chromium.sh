#!/usr/bin/env bash
# Makes sure Debian's Chromium is at /usr/bin/chromium for the web-console browser tests
# (playwright-core drives it; we never run `playwright install`). Idempotent and fast when installed.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: /usr/bin/chromium is missing and apt-get is not available; install Chromium by hand" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "ensure-chromium: need root (or sudo) to install chromium" >&2
    exit 1
  fi
fi
echo "ensure-chromium: installing chromium with apt-get (once)" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2
$SUDO apt-get install -y -qq chromium >&2
test -x /usr/bin/chromium
