#!/usr/bin/env bash
# Installs the system libraries the package links (libzstd, libcrypto; libsqlite3 for the
# tests' SQL oracle only) and the Python packages
# tools/read_store.py decrypts and decompresses with (cryptography, zstandard) when they are
# missing. Safe to run again: it does nothing when everything is there.
set -euo pipefail

missing=()
for pkg in libzstd-dev libssl-dev libsqlite3-dev sqlite3; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
PY=${PYTHON:-python3}
if ! "$PY" -c 'import cryptography, zstandard' >/dev/null 2>&1; then
  echo "setup: installing the Python packages cryptography and zstandard"
  "$PY" -m pip install --quiet cryptography zstandard
fi
command -v swift >/dev/null || { echo "setup: swift is not on PATH (need Swift 6)"; exit 1; }
