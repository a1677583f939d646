#!/usr/bin/env bash
# Cross-checks tools/read_store.py (written from FORMAT.md alone) against the engine's own
# `ustore` tool on two stores built with a few hundred writes each: a plain one, and one with
# encrypted (keys given as hex, id 1, and derived from a string, id 2) and compressed values,
# every live value of which read_store.py must decode to exactly what `ustore get` returns.
# The comparisons are in check_format_compare.py. The second store needs the Python packages
# cryptography and zstandard (scripts/setup.sh installs them).
#
# usage: tools/check_format.sh PATH/TO/ustore [WORKDIR]
#   WORKDIR (optional) is kept afterwards; by default a temp dir is used and removed.
# Exit status: 0 when everything agrees, 1 on any difference or failed check, 64 on bad usage.
set -u -o pipefail

if [ $# -lt 1 ] || [ ! -x "$1" ]; then
    echo "usage: $0 PATH/TO/ustore [WORKDIR]" >&2
    exit 64
fi
USTORE=$1
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
READER="$HERE/read_store.py"
COMPARE="$HERE/check_format_compare.py"
PY=${PYTHON:-python3}

if [ $# -ge 2 ]; then
    WORK=$2; mkdir -p "$WORK"; KEEP=1
else
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/check_format.XXXXXX"); KEEP=0
fi
cleanup() { [ "$KEEP" = 1 ] || rm -rf "$WORK"; }
trap cleanup EXIT
STORE="$WORK/store"
rm -rf "$STORE"

FAILURES=0
fail() { echo "FAIL: $*" >&2; FAILURES=$((FAILURES + 1)); }
us() {  # run ustore, fail loudly on error
    if ! "$USTORE" "$@" >/dev/null 2>"$WORK/us.err"; then
        fail "ustore $* failed: $(cat "$WORK/us.err")"
    fi
}
us_stdin() {  # ustore put DIR KEY - [opts] < stdin
    if ! "$USTORE" "$@" >/dev/null 2>"$WORK/us.err"; then
        fail "ustore $* (value from stdin) failed: $(cat "$WORK/us.err")"
    fi
}

echo "building a store in $STORE with $USTORE ..."
# 1. plain puts in space 0
for i in $(seq 1 120); do us put "$STORE" "key$i" "value $i"; done
# 2. binary values (random bytes, NUL bytes, high bytes), read from stdin
for i in $(seq 1 40); do
    head -c $((i * 37 % 300 + 1)) /dev/urandom > "$WORK/v.bin"
    us_stdin put "$STORE" "bin$i" - < "$WORK/v.bin"
done
printf '\x00\x00\x00\x00\x00\x00\x00\x00' > "$WORK/v.bin"; us_stdin put "$STORE" "zeros" - < "$WORK/v.bin"
: > "$WORK/v.bin"; us_stdin put "$STORE" "empty-value" - < "$WORK/v.bin"
head -c 200000 /dev/urandom > "$WORK/v.bin"; us_stdin put "$STORE" "big" - < "$WORK/v.bin"
# 3. other key spaces, including a key that also exists in space 0
for i in $(seq 1 30); do us put "$STORE" "key$i" "space-$((i % 3 + 1)) value $i" --space $((i % 3 + 1)); done
us put "$STORE" "high" "in a large application space" --space 2147483647
us put "$STORE" "ключ-€" "non-ASCII key" --space 9
# 4. expiring values: some far in the future, some about to expire
for i in $(seq 1 10); do us put "$STORE" "ttl-long$i" "v$i" --expires-in 86400; done
for i in $(seq 1 5); do us put "$STORE" "ttl-short$i" "v$i" --expires-in 1; done
us put "$STORE" "key5" "replaced by an expiring value" --expires-in 1
# 5. overwrites and deletes
for i in $(seq 1 40); do us put "$STORE" "key$i" "overwritten $i"; done
for i in $(seq 30 60); do us delete "$STORE" "key$i"; done
for i in $(seq 1 10); do us delete "$STORE" "key$i" --space $((i % 3 + 1)); done
us delete "$STORE" "never-existed"
# 6. compaction, then more writes (overwrites of compacted keys, deletes, new keys)
sleep 2   # the short TTLs are now expired; compaction may drop them
if ! "$USTORE" compact "$STORE" > "$WORK/compact.json" 2>"$WORK/us.err"; then
    fail "ustore compact failed: $(cat "$WORK/us.err")"
fi
for i in $(seq 100 130); do us put "$STORE" "key$i" "after compaction $i"; done
for i in $(seq 1 5); do us delete "$STORE" "bin$i"; done
for i in $(seq 200 230); do us put "$STORE" "new$i" "new $i" --space 4; done
us put "$STORE" "key45" "resurrected after delete"
for i in $(seq 1 3); do us put "$STORE" "ttl-short$i" "short-lived again" --expires-in 1; done
sleep 2   # the second round of short TTLs expires too
# 7. overwrite some keys twice more in the active segment, so it holds dead records too
for i in $(seq 100 110); do us put "$STORE" "key$i" "overwritten again $i"; done
us delete "$STORE" "key100"
us put "$STORE" "last" "the final write"
echo "store files:"; ls -l "$STORE" | sed 's/^/  /'

# --- compare

# --- compare, store by store
# read_and_compare PREFIX STORE [read_store.py key options...]: `ustore dump` (with the
# options in DUMP_OPTIONS) and read_store.py (with the key options given) of STORE, compared
# by check_format_compare.py.
read_and_compare() {
    local prefix=$1 store=$2; shift 2
    NOW_MS=$($PY -c 'import time; print(int(time.time() * 1000))')
    if ! "$USTORE" dump "$store" "${DUMP_OPTIONS[@]}" > "$WORK/$prefix-dump.jsonl" 2>"$WORK/dump.err"; then
        fail "ustore dump ($prefix) failed: $(cat "$WORK/dump.err")"
    fi
    "$PY" "$READER" --now "$NOW_MS" "$@" "$store" > "$WORK/$prefix-live.jsonl" 2> "$WORK/$prefix-live.err" \
        || fail "read_store.py DIR ($prefix) exited $?"
    "$PY" "$READER" --records "$@" "$store" > "$WORK/$prefix-records.jsonl" 2> "$WORK/$prefix-records.err" \
        || fail "read_store.py --records ($prefix) exited $?"
    for f in "$prefix-live.err" "$prefix-records.err"; do
        if [ -s "$WORK/$f" ]; then fail "read_store.py reported problems on a healthy store:"; sed 's/^/  /' "$WORK/$f" >&2; fi
    done
    "$PY" "$COMPARE" records "$WORK" "$prefix" "$NOW_MS" || FAILURES=$((FAILURES + 1))
}
DUMP_OPTIONS=()
read_and_compare plain "$STORE"

echo "--- read_store.py --check-snapshot"
"$PY" "$READER" --now "$NOW_MS" --check-snapshot "$STORE" | sed 's/^/  /' \
    || fail "read_store.py --check-snapshot found a disagreement"
echo "--- read_store.py --selftest"
"$PY" "$READER" --selftest > "$WORK/selftest.out"; st=$?
sed 's/^/  /' "$WORK/selftest.out"
[ $st -eq 0 ] || fail "read_store.py --selftest failed"
! grep -q '^SKIPPED' "$WORK/selftest.out" || fail "read_store.py --selftest skipped checks (missing Python packages)"
echo "--- ustore verify"
"$USTORE" verify "$STORE" | sed 's/^/  /' || fail "ustore verify reported a problem"

# --- an encrypted + compressed store, keys as hex (id 1) and derived from a string (id 2):
# read_store.py must decode every live value to exactly what `ustore get` returns.
ENC="$WORK/enc-store"
rm -rf "$ENC"
if ! "$PY" -c 'import cryptography, zstandard' 2>/dev/null; then
    fail "the Python packages cryptography and zstandard are missing (scripts/setup.sh installs them)"
fi
KEY1=$("$PY" -c 'import os; print(os.urandom(32).hex())')
WRONG=$("$PY" -c 'import os; print(os.urandom(32).hex())')
APPKEY="check_format-application-key-$$"
K1=(--key-hex "$KEY1")                   # key id 1 is the default
K2=(--app-key "$APPKEY" --key-id 2)
Z=(--compress-level 5 --compress-threshold 64)
MARK=PLAINTEXT-MARKER                    # in every encrypted value; must appear in no segment
py_value() { "$PY" -c "import sys; sys.stdout.write($1)" > "$WORK/v.bin"; }

echo "building an encrypted + compressed store in $ENC ..."
# 1. short values: encrypted, below the compression threshold
for i in $(seq 1 25); do us put "$ENC" "ekey$i" "$MARK $i" "${K1[@]}" "${Z[@]}"; done
# 2. compressible values of ~100 B ... 11 KB: compressed, then encrypted
for i in $(seq 1 30); do
    py_value "'{\"$MARK\":$i,\"items\":[' + ','.join(['\"item\"'] * ($i * $i * 5 % 1600 + 15)) + ']}'"
    us_stdin put "$ENC" "doc$i" - "${K1[@]}" "${Z[@]}" < "$WORK/v.bin"
done
# 3. incompressible values: the frame is not kept, encrypted only; a big one; an empty one
for i in $(seq 1 10); do
    { printf '%s' "$MARK"; head -c $((i * 211 % 4000 + 70)) /dev/urandom; } > "$WORK/v.bin"
    us_stdin put "$ENC" "rand$i" - "${K1[@]}" "${Z[@]}" < "$WORK/v.bin"
done
py_value "'$MARK big ' * 40000"; us_stdin put "$ENC" "big-text" - "${K1[@]}" "${Z[@]}" < "$WORK/v.bin"
: > "$WORK/v.bin"; us_stdin put "$ENC" "empty-value" - "${K1[@]}" "${Z[@]}" < "$WORK/v.bin"
# 4. compressed, not encrypted (no key given)
for i in $(seq 1 10); do
    py_value "'plain compressible $i ' * 50"; us_stdin put "$ENC" "zplain$i" - "${Z[@]}" < "$WORK/v.bin"
done
# 5. other spaces, expiring values, overwrites, deletes; then compaction
for i in $(seq 1 12); do us put "$ENC" "ekey$i" "$MARK space $((i % 3 + 1))" --space $((i % 3 + 1)) "${K1[@]}"; done
# (the expiry is authenticated too: FORMAT.md, "Values", AAD)
for i in $(seq 1 5); do us put "$ENC" "ttl$i" "$MARK ttl $i" --expires-in 86400 "${K1[@]}" "${Z[@]}"; done
us put "$ENC" "ttl-short" "$MARK short" --expires-in 1 "${K1[@]}"
for i in $(seq 1 12); do
    py_value "'$MARK overwritten $i ' + 'x' * ($i * 10)"; us_stdin put "$ENC" "doc$i" - "${K1[@]}" "${Z[@]}" < "$WORK/v.bin"
done
for i in $(seq 18 25); do us delete "$ENC" "ekey$i" "${K1[@]}"; done
sleep 1
if ! "$USTORE" compact "$ENC" "${K1[@]}" "${Z[@]}" > "$WORK/compact.json" 2>"$WORK/us.err"; then
    fail "ustore compact (encrypted store) failed: $(cat "$WORK/us.err")"
fi
# 5b. a trained compression dictionary for space 7 (FORMAT.md, "Compression dictionaries"):
#     small values before training are stored raw, after it as frames naming the dictionary
for i in $(seq 1 60); do
    us put "$ENC" "order$i" "{\"id\":$i,\"type\":\"order\",\"status\":\"shipped\",\"currency\":\"EUR\",\"amount\":$((i % 97))}" --space 7 "${K1[@]}" "${Z[@]}"
done
us train "$ENC" --space 7 "${K1[@]}" --max-size 4096
for i in $(seq 61 90); do
    us put "$ENC" "order$i" "{\"id\":$i,\"type\":\"order\",\"status\":\"shipped\",\"currency\":\"EUR\",\"amount\":$((i % 97))}" --space 7 "${K1[@]}" --compress-level 5 --compress-threshold 32
done
# 6. after compaction: a second key, derived from a string with FORMAT.md's HKDF, as key id 2
for i in $(seq 1 10); do
    py_value "'$MARK app key $i ' * ($i * 7)"; us_stdin put "$ENC" "app$i" - "${K2[@]}" "${Z[@]}" < "$WORK/v.bin"
done
us put "$ENC" "doc2" "$MARK rewritten under key 2" "${K2[@]}"
for i in $(seq 26 30); do us put "$ENC" "ekey$i" "$MARK after compaction $i" "${K1[@]}" "${Z[@]}"; done
us delete "$ENC" "doc3" "${K1[@]}"
echo "store files:"; ls -l "$ENC" | sed 's/^/  /'

if grep -l "$MARK" "$ENC"/*.seg >/dev/null 2>&1; then
    fail "plaintext of an encrypted value found in: $(grep -l "$MARK" "$ENC"/*.seg | tr '\n' ' ')"
fi
DUMP_OPTIONS=("${K1[@]}")
read_and_compare enc "$ENC" "${K1[@]}" "${K2[@]}"
"$PY" "$COMPARE" get-all "$WORK" enc "$USTORE" "$ENC" "plain=${K1[*]}" "1=${K1[*]}" "2=${K2[*]}" \
    || FAILURES=$((FAILURES + 1))
# a wrong key is refused by both, naming its key id
out=$("$USTORE" get "$ENC" ekey1 --key-hex "$WRONG" 2>&1 >/dev/null); st=$?
[ $st -eq 2 ] && [[ "$out" == *"key id 1"* ]] || fail "ustore get with a wrong key: exit $st, $out"
out=$("$PY" "$READER" --key-hex "$WRONG" "$ENC" 2>&1 >/dev/null); st=$?
[ $st -eq 2 ] && [[ "$out" == *"key id 1"* ]] || fail "read_store.py with a wrong key: exit $st, $out"
out=$("$PY" "$READER" --app-key "not-$APPKEY" --key-id 2 "$ENC" 2>&1 >/dev/null); st=$?
[ $st -eq 2 ] && [[ "$out" == *"key id 2"* ]] || fail "read_store.py with a wrong application key: exit $st, $out"
echo "ok: enc: a wrong key is refused by ustore and read_store.py"
echo "--- read_store.py --check-snapshot (encrypted store)"
"$PY" "$READER" --check-snapshot "$ENC" | sed 's/^/  /' \
    || fail "read_store.py --check-snapshot found a disagreement in the encrypted store"
echo "--- ustore verify (encrypted store)"
"$USTORE" verify "$ENC" "${K1[@]}" | sed 's/^/  /' || fail "ustore verify reported a problem in the encrypted store"

if [ "$FAILURES" -ne 0 ]; then
    echo "check_format: $FAILURES failure(s) (work dir: $WORK)" >&2
    KEEP=1
    exit 1
fi
echo "check_format: all checks passed"
