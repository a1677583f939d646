#!/usr/bin/env python3
"""The comparisons of tools/check_format.sh: read_store.py's output against ustore's.

  check_format_compare.py records WORK PREFIX NOW_MS
      Compares WORK/PREFIX-dump.jsonl (`ustore dump`) with WORK/PREFIX-records.jsonl
      (`read_store.py --records`) and WORK/PREFIX-live.jsonl (`read_store.py DIR`): the stored
      bytes of every record; the decoded value of every record ustore dump could decode (it
      decodes only a key's newest record, with the one key it was given); the live keys. Every
      record must be decoded by read_store.py, which is given every key.
  check_format_compare.py get-all WORK PREFIX USTORE STORE KEYID=OPTIONS...
      Runs `ustore get` for every live key of WORK/PREFIX-live.jsonl and checks it returns
      exactly read_store.py's decoded value. OPTIONS are the ustore key options (separated by
      spaces) for records of that key id; KEYID `plain` for records without one. Also checks
      that the store holds every combination of the value flags for each key id given.
Exit status 0 when everything agrees, 1 otherwise; differences go to stderr.
"""

import base64
import json
import subprocess
import sys


def load(work, prefix, name):
    with open("%s/%s-%s" % (work, prefix, name)) as f:
        return [json.loads(line) for line in f if line.strip()]


class Comparison:
    def __init__(self, prefix):
        self.prefix = prefix
        self.bad = 0

    def difference(self, message):
        self.bad += 1
        print("DIFFERENCE: %s: %s" % (self.prefix, message), file=sys.stderr)

    def rows(self, title, a, b, an="read_store", bn="ustore"):
        if a == b:
            print("ok: %s: %s: %d rows agree" % (self.prefix, title, len(a)))
            return
        self.difference("%s: %s %d rows, %s %d rows" % (title, an, len(a), bn, len(b)))
        sa, sb = set(a), set(b)
        for x in sorted(sa - sb, key=repr)[:20]:
            print("  only in %s: %s" % (an, x), file=sys.stderr)
        for x in sorted(sb - sa, key=repr)[:20]:
            print("  only in %s: %s" % (bn, x), file=sys.stderr)
        if sa == sb:
            print("  same rows, different order or multiplicity", file=sys.stderr)


def compare_records(work, prefix, now):
    c = Comparison(prefix)
    dump, live, records = (load(work, prefix, n) for n in ("dump.jsonl", "live.jsonl", "records.jsonl"))
    common = ("segment", "offset", "space", "key_base64", "sequence", "flags")
    c.rows("--records vs ustore dump (every record, value as stored)",
           [tuple(r[f] for f in common) + (r["stored_base64"],) for r in records],
           [tuple(r[f] for f in common) + (r["value_base64"],) for r in dump])
    if len(records) == len(dump):
        decoded = not_decoded = 0
        for r, d in zip(records, dump):
            if d["value_decoded_base64"] is not None:
                decoded += 1
                if r["value_base64"] != d["value_decoded_base64"]:
                    c.difference("segment %d offset %d: read_store decodes %r, ustore dump %r"
                                 % (r["segment"], r["offset"], r["value_base64"], d["value_decoded_base64"]))
            elif "error" in d:
                not_decoded += 1
        print("ok: %s: decoded values compared on the %d record(s) ustore dump decoded (%d it "
              "could not decode)" % (prefix, decoded, not_decoded))
    errors = [r for r in records if "error" in r]
    if errors:
        c.difference("read_store.py could not decode %d record(s), e.g. %s" % (len(errors), errors[:3]))
    if any(r["value_base64"] is not None for r in records if r["flags"] & 1):
        c.difference("read_store.py gives a tombstone a value")

    # live keys: dump's `live` (the keydir points at it) minus records expired now
    def expired(r):
        return r.get("expiresAt") is not None and r["expiresAt"] <= now
    want = [r for r in dump if r["live"] and not r["tombstone"] and not expired(r)]
    want.sort(key=lambda r: (r["space"], base64.b64decode(r["key_base64"])))
    fields = ("space", "key_base64", "sequence")
    c.rows("read_store DIR vs live, unexpired records of ustore dump (value as stored)",
           [tuple(r[f] for f in fields) + (r["stored_base64"],) for r in live],
           [tuple(r[f] for f in fields) + (r["value_base64"],) for r in want])
    print("   (%d record(s) marked live by ustore dump have expired and are excluded)"
          % sum(1 for r in dump if r["live"] and expired(r)))
    keys = [(r["space"], r["key_base64"]) for r in dump if r["live"]]
    if len(keys) != len(set(keys)):
        c.difference("ustore dump marks two records of one key live")
    return c.bad


def get_all(work, prefix, ustore, store, key_options):
    c = Comparison(prefix)
    records, live = load(work, prefix, "records.jsonl"), load(work, prefix, "live.jsonl")
    # the store holds what it should: each value-flag combination under each key id given
    combos = {(r["flags"] & 0x18, r.get("key_id")) for r in records if not r["flags"] & 1}
    wanted = {(0x08, None)} | {(flags, k) for k in key_options if k is not None for flags in (0x10, 0x18)}
    for flags, key_id in sorted(wanted - combos, key=repr):
        c.difference("no record has value flags %#x%s" % (flags, "" if key_id is None else " under key id %d" % key_id))
    by_id = {(r["space"], r["key_base64"], r["sequence"]): r for r in records}
    transformed = 0
    for r in live:
        rec = by_id[(r["space"], r["key_base64"], r["sequence"])]
        transformed += bool(rec["flags"] & 0x18)
        key = base64.b64decode(r["key_base64"]).decode("utf-8")
        options = key_options.get(rec.get("key_id"), key_options.get(None, []))
        run = subprocess.run([ustore, "get", store, key, "--space", str(r["space"])] + options, capture_output=True)
        want = None if r["value_base64"] is None else base64.b64decode(r["value_base64"])
        if run.returncode != 0 or run.stdout != want:
            c.difference("space %d key %r: ustore get exited %d (%s) with %r, read_store.py decoded %r"
                         % (r["space"], key, run.returncode, run.stderr.decode().strip(), run.stdout[:60],
                            want[:60] if want else want))
    if not c.bad:
        print("ok: %s: all %d live values read_store.py decoded equal `ustore get` (%d compressed or "
              "encrypted)" % (prefix, len(live), transformed))
    return c.bad


def main(argv):
    if len(argv) == 4 and argv[0] == "records":
        return 1 if compare_records(argv[1], argv[2], int(argv[3])) else 0
    if len(argv) >= 5 and argv[0] == "get-all":
        key_options = {}
        for spec in argv[5:]:
            key_id, _, options = spec.partition("=")
            key_options[None if key_id == "plain" else int(key_id)] = options.split()
        return 1 if get_all(argv[1], argv[2], argv[3], argv[4], key_options) else 0
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
