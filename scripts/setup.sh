#!/usr/bin/env bash
# setup.sh - install what allot builds and tests with (Debian packages only;
# prometheus for promtool, which checks the /metrics exposition; clang and
# its runtime for the libFuzzer targets).
set -euo pipefail
pkgs=(build-essential cmake pkg-config curl ca-certificates python3 python3-kubernetes
      libmicrohttpd-dev libjansson-dev libsqlite3-dev libgnutls28-dev libcmocka-dev
      libcurl4-openssl-dev libyaml-dev prometheus clang libclang-rt-14-dev)
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
