#!/usr/bin/env bash
# Cross-checks tools/read_store.py (written from FORMAT.md alone) against the engine's own
# `ustore` tool on a store built with a few hundred writes.
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
NOW_MS=$($PY -c 'import time; print(int(time.time() * 1000))')
if ! "$USTORE" dump "$STORE" > "$WORK/dump.jsonl" 2>"$WORK/dump.err"; then
    fail "ustore dump failed: $(cat "$WORK/dump.err")"
fi
"$PY" "$READER" --now "$NOW_MS" "$STORE" > "$WORK/live.jsonl" 2> "$WORK/live.err" \
    || fail "read_store.py DIR exited $?"
"$PY" "$READER" --records "$STORE" > "$WORK/records.jsonl" 2> "$WORK/records.err" \
    || fail "read_store.py --records exited $?"
for f in live.err records.err; do
    if [ -s "$WORK/$f" ]; then fail "read_store.py reported problems on a healthy store:"; sed 's/^/  /' "$WORK/$f" >&2; fi
done

"$PY" - "$WORK" "$NOW_MS" <<'EOF' || FAILURES=$((FAILURES + 1))
import base64, json, sys
work, now = sys.argv[1], int(sys.argv[2])
def load(name):
    with open(f"{work}/{name}") as f:
        return [json.loads(l) for l in f if l.strip()]
dump, live, records = load("dump.jsonl"), load("live.jsonl"), load("records.jsonl")
bad = 0
def diff(title, a, b, an, bn):
    global bad
    sa, sb = set(a), set(b)
    if a == b:
        print(f"ok: {title}: {len(a)} rows agree")
        return
    bad += 1
    print(f"DIFFERENCE: {title}: {an} {len(a)} rows, {bn} {len(b)} rows", file=sys.stderr)
    for x in sorted(sa - sb)[:20]: print(f"  only in {an}: {x}", file=sys.stderr)
    for x in sorted(sb - sa)[:20]: print(f"  only in {bn}: {x}", file=sys.stderr)
    if sa == sb: print("  same rows, different order or multiplicity", file=sys.stderr)

# all records: (segment, offset, space, key, value, sequence, flags), in file order
rec_fields = ("segment", "offset", "space", "key_base64", "value_base64", "sequence", "flags")
diff("--records vs ustore dump (every record)",
     [tuple(r[f] for f in rec_fields) for r in records],
     [tuple(r[f] for f in rec_fields) for r in dump], "read_store", "ustore")

# live keys: dump's `live` (the keydir points at it) minus records expired now
def expired(r):
    return r.get("expiresAt") is not None and r["expiresAt"] <= now
live_fields = ("space", "key_base64", "value_base64", "sequence")
want = [r for r in dump if r["live"] and not r["tombstone"] and not expired(r)]
want.sort(key=lambda r: (r["space"], base64.b64decode(r["key_base64"])))
diff("read_store DIR vs live, unexpired records of ustore dump",
     [tuple(r[f] for f in live_fields) for r in live],
     [tuple(r[f] for f in live_fields) for r in want], "read_store", "ustore")
n_exp = sum(1 for r in dump if r["live"] and expired(r))
print(f"   ({n_exp} record(s) marked live by ustore dump have expired and are excluded)")
# sanity: the dump itself has one live record per key at most
keys = [(r["space"], r["key_base64"]) for r in dump if r["live"]]
if len(keys) != len(set(keys)):
    bad += 1; print("DIFFERENCE: ustore dump marks two records of one key live", file=sys.stderr)
sys.exit(1 if bad else 0)
EOF

echo "--- read_store.py --check-snapshot"
"$PY" "$READER" --now "$NOW_MS" --check-snapshot "$STORE" | sed 's/^/  /' \
    || fail "read_store.py --check-snapshot found a disagreement"
echo "--- read_store.py --selftest"
"$PY" "$READER" --selftest | sed 's/^/  /' || fail "read_store.py --selftest failed"
echo "--- ustore verify"
"$USTORE" verify "$STORE" | sed 's/^/  /' || fail "ustore verify reported a problem"

if [ "$FAILURES" -ne 0 ]; then
    echo "check_format: $FAILURES failure(s) (work dir: $WORK)" >&2
    KEEP=1
    exit 1
fi
echo "check_format: all checks passed"
