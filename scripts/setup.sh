#!/usr/bin/env bash
# setup.sh - install what allot builds and tests with (Debian packages;
# prometheus for promtool, which checks the /metrics exposition; clang and
# its runtime for the libFuzzer targets; chromium, and Node.js with npm when
# the machine has none, for the dashboard's browser test), then the browser
# test's npm packages (package-lock.json: playwright-core only, no browser
# download).
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(build-essential cmake pkg-config curl ca-certificates python3 python3-kubernetes
      libmicrohttpd-dev libjansson-dev libsqlite3-dev libgnutls28-dev libcmocka-dev
      libcurl4-openssl-dev libyaml-dev libjemalloc-dev prometheus clang libclang-rt-14-dev chromium)
# a Node.js already on the machine (e.g. one that ships npm itself) is kept:
# Debian's npm would conflict with it
command -v node >/dev/null || pkgs+=(nodejs)
command -v npm >/dev/null || pkgs+=(npm)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
command -v kubectl >/dev/null || echo "setup: warning: kubectl is not installed; the kubectl end-to-end tests need it" >&2

# npm ci when node_modules lacks playwright-core or was installed from
# another package-lock.json (its hash is kept beside the packages)
lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f node_modules/playwright-core/package.json ] ||
   [ "$(cat node_modules/.allot-lock.sha256 2>/dev/null)" != "$lock_hash" ]; then
  echo "setup: npm ci (the dashboard's browser test)"
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >/dev/null
  echo "$lock_hash" >node_modules/.allot-lock.sha256
fi
