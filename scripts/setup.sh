#!/usr/bin/env bash
# Installs the system libraries the package links (libzstd, libcrypto) when they are missing.
# Safe to run again: it does nothing when both are there.
set -euo pipefail

missing=()
for pkg in libzstd-dev libssl-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v swift >/dev/null || { echo "setup: swift is not on PATH (need Swift 6)"; exit 1; }
