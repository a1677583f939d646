#!/usr/bin/env bash
# Sets up, builds ustore in release mode and runs a short demo of the engine on a store in a
# temporary folder: writes, reads, deletes, lists, compacts, verifies, reopens.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release --product ustore
USTORE="$(swift build -c release --show-bin-path)/ustore"
STORE="$(mktemp -d)/demo-store"
trap 'rm -rf "$(dirname "$STORE")"' EXIT

step() { printf '\n$ %s\n' "$*"; "$@"; }
echo "demo store: $STORE"
step "$USTORE" put "$STORE" greeting "hello, world"
step "$USTORE" put "$STORE" user:1 '{"name":"ann"}'
step "$USTORE" put "$STORE" user:2 '{"name":"bob"}'
printf 'binary\x00value' | "$USTORE" put "$STORE" blob -
step "$USTORE" get "$STORE" greeting; echo
step "$USTORE" keys "$STORE" --prefix user:
step "$USTORE" put "$STORE" greeting "hello again"
step "$USTORE" delete "$STORE" user:2
step "$USTORE" keys "$STORE"
step "$USTORE" stats "$STORE"
step "$USTORE" compact "$STORE"
step "$USTORE" verify "$STORE"
step "$USTORE" dump "$STORE"
step "$USTORE" get "$STORE" greeting; echo
echo
echo "demo finished: every command above ran against a real store on disk."
