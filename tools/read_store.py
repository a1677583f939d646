#!/usr/bin/env python3
"""Independent reader of a LogStore directory, written from FORMAT.md alone.

Usage:
  read_store.py [KEYS] DIR            live keys as JSON lines, sorted by (space, key bytes)
  read_store.py --records [KEYS] DIR  every valid record of every segment read, in
                                      segment-id then file order
  read_store.py --check-snapshot DIR  compare index.snapshot with the segments; exit 1 on
                                      any disagreement
  read_store.py --dao-indexes DIR     check the DAO index checkpoint (every block) against the
                                      rows; one JSON line per table; exit 1 on any disagreement
  read_store.py --selftest [--format FORMAT.md]
                                      check FORMAT.md's test vectors and worked examples
Options:
  --now MS      the "current time" for expiry, in ms since 1970 (default: the clock)
  --format PATH FORMAT.md to use for --selftest (default: ../FORMAT.md next to this script)
Keys (FORMAT.md, "Keys"), for reading encrypted values; any number of them:
  --key-hex HEX [--key-id N]   a 32-byte AES-256 key as 64 hex digits; its key id (default 1)
  --app-key STRING [--key-id N]
                               a key derived from STRING with HKDF-SHA256 as FORMAT.md says
  --key ID:HEX                 the same as --key-hex HEX --key-id ID
  A --key-id belongs to the --key-hex / --app-key just before it (or, given first, just
  after it). A key whose check value (record `keycheck/ID` in space 0xFFFFFFFF) does not
  match is refused: exit 2, "wrong key for key id ID"; so is a key id retired by a finished
  rekey (record `rekeyed/ID`). While a rekey is unfinished (record `rekey`), one of its two
  keys is enough: the other is unwrapped from the rekey record (FORMAT.md, "Rekeying").

Output: each line has "value_base64", the value as an application reads it (AES-GCM
opened, zstd frame decompressed; null for a tombstone or a value that cannot be decoded),
and "stored_base64", the value bytes as stored. A value that cannot be decoded (no key for
its key id, a custom crypt, failed authentication, a bad zstd frame, a missing Python
package) is never guessed at: its line has "value_base64": null and "error": the reason,
and for a live key the reason is also reported on stderr. --records lines also carry
"key_id" (encrypted records) and "raw_length" (compressed records).

Problems found while reading (corrupt ranges, torn tails, dropped incomplete batches,
unreadable files, undecodable live values, ...) are written to stderr, one per line,
prefixed "read_store: ". The reader never changes anything in the directory.

Python 3.11, standard library only for plain stores; decryption needs the `cryptography`
package (AESGCM) and decompression the `zstandard` package, each imported only when a
record needs it.
"""

import base64
import hashlib
import hmac
import json
import os
import re
import sys
import time

MASK64 = (1 << 64) - 1

# ---------------------------------------------------------------------------
# CRC-32C (Castagnoli), reflected polynomial 0x82F63B78, init/xorout 0xFFFFFFFF.

def _make_crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table

_CRC_TABLE = _make_crc_table()


def _make_slice_tables():
    # slicing-by-8: T[k][b] is the CRC state after byte b followed by k zero bytes
    tables = [_CRC_TABLE]
    for k in range(1, 8):
        prev = tables[-1]
        tables.append([(prev[i] >> 8) ^ _CRC_TABLE[prev[i] & 0xFF] for i in range(256)])
    return tables

_T = _make_slice_tables()


def crc32c(data, start=0, end=None):
    if end is None:
        end = len(data)
    crc = 0xFFFFFFFF
    mv = memoryview(data)[start:end]
    n = len(mv)
    n8 = n - n % 8
    t0, t1, t2, t3, t4, t5, t6, t7 = _T
    frm = int.from_bytes
    for i in range(0, n8, 8):
        w = frm(mv[i:i + 8], "little") ^ crc
        crc = (t7[w & 0xFF] ^ t6[(w >> 8) & 0xFF] ^ t5[(w >> 16) & 0xFF] ^ t4[(w >> 24) & 0xFF]
               ^ t3[(w >> 32) & 0xFF] ^ t2[(w >> 40) & 0xFF] ^ t1[(w >> 48) & 0xFF] ^ t0[w >> 56])
    t = _CRC_TABLE
    for b in mv[n8:]:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def crc32c_bytewise(data):
    """The plain one-byte-at-a-time definition, used by --selftest to check crc32c()."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF

# ---------------------------------------------------------------------------
# Little-endian integers and varints.

def u16(d, p):
    return d[p] | (d[p + 1] << 8)


def u32(d, p):
    return int.from_bytes(d[p:p + 4], "little")


def u64(d, p):
    return int.from_bytes(d[p:p + 8], "little")


class Truncated(Exception):
    pass


class BadVarint(Exception):
    pass


def read_varint(d, p, end):
    """Unsigned LEB128, at most 10 bytes, value must fit in 64 bits.
    Returns (value, new position). Raises Truncated / BadVarint."""
    v = 0
    shift = 0
    for i in range(10):
        if p >= end:
            raise Truncated()
        b = d[p]
        p += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            if v > MASK64:
                raise BadVarint()
            return v, p
        shift += 7
    raise BadVarint()


def zigzag_decode(z):
    # inverse of (d << 1) ^ (d >> 63) on 64 bits (arithmetic shift)
    return (z >> 1) ^ -(z & 1)

# ---------------------------------------------------------------------------
# The key hash.

K0 = 0x9E3779B97F4A7C15
K1 = 0xC2B2AE3D27D4EB4F
K2 = 0x165667B19E3779F9
K3 = 0xD6E8FEB86659FD93


def _fold(a, b):
    p = (a & MASK64) * (b & MASK64)
    return (p & MASK64) ^ (p >> 64)


def _le64(d, p, n):
    return int.from_bytes(bytes(d[p:p + n]), "little")


def hash64(data, seed):
    n = len(data)
    h = (seed & MASK64) ^ _fold(K0 ^ n, K1)
    p = 0
    r = n
    while r > 16:
        h = _fold(_le64(data, p, 8) ^ K1, _le64(data, p + 8, 8) ^ h)
        p += 16
        r -= 16
    if r > 8:
        a = _le64(data, p, 8)
        b = _le64(data, p + 8, r - 8)
    else:
        a = _le64(data, p, r)
        b = 0
    h = _fold(a ^ K2, b ^ h ^ K3)
    return _fold(h ^ K0, n ^ K1)


def key_hash(space, key):
    return hash64(key, (space * 0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D) & MASK64)


def tag_of(space, key):
    t = key_hash(space, key) >> 32
    return t if t != 0 else 1

# ---------------------------------------------------------------------------
# Problem reporting.

class Reporter:
    def __init__(self, stream=sys.stderr, quiet=False):
        self.stream = stream
        self.quiet = quiet
        self.lines = []

    def __call__(self, msg):
        self.lines.append(msg)
        if not self.quiet:
            print("read_store: " + msg, file=self.stream)

# ---------------------------------------------------------------------------
# Segments.

SEG_MAGIC = b"USEG"
SEG_HEADER_SIZE = 32

F_TOMBSTONE = 0x01
F_EXPIRY = 0x02
F_BATCH = 0x04
F_COMPRESSED = 0x08
F_ENCRYPTED = 0x10
F_CUSTOM = 0x20
F_PURGEABLE = 0x40
F_FOLLOWER = 0x80

MAX_KEY = 65536
MAX_VALUE = 1 << 30


class Record:
    __slots__ = ("segment", "offset", "length", "flags", "sequence", "space", "key",
                 "value", "expiry", "key_id", "nonce", "raw_length", "checksum", "aad")

    @property
    def end(self):
        return self.offset + self.length

    def is_tombstone(self):
        return bool(self.flags & F_TOMBSTONE)

    def is_expired(self, now_ms):
        return bool(self.flags & F_EXPIRY) and self.expiry <= now_ms


def parse_record(d, off, end, segment=0):
    """Returns a Record if the bytes at `off` are a valid record (FORMAT.md Recovery step 1),
    else None. `end` is the end of the readable bytes (file length)."""
    # cheap pre-checks: 4-byte checksum, flags, then first byte of the sequence
    if off + 6 > end:
        return None
    flags = d[off + 4]
    if (flags & F_ENCRYPTED) and (flags & F_CUSTOM):
        return None
    if d[off + 5] == 0:      # sequence 0 (or a non-canonical varint starting with 0x00)
        return None
    try:
        p = off + 5
        seq, p = read_varint(d, p, end)
        space, p = read_varint(d, p, end)
        klen, p = read_varint(d, p, end)
        vlen, p = read_varint(d, p, end)
        if seq == 0 or space >= (1 << 32) or klen > MAX_KEY or vlen > MAX_VALUE:
            return None
        if (flags & F_TOMBSTONE) and vlen != 0:
            return None
        expiry = None
        key_id = None
        nonce = None
        raw_length = None
        if flags & F_EXPIRY:
            if p + 8 > end:
                return None
            expiry = u64(d, p)
            p += 8
        if flags & F_ENCRYPTED:
            key_id, p = read_varint(d, p, end)
            if p + 12 > end:
                return None
            nonce = bytes(d[p:p + 12])
            p += 12
        if flags & F_COMPRESSED:
            raw_length, p = read_varint(d, p, end)
    except (Truncated, BadVarint):
        return None
    rec_end = p + klen + vlen
    if rec_end > end:
        return None
    stored = u32(d, off)
    if crc32c(d, off + 4, rec_end) != stored:
        return None
    r = Record()
    r.segment = segment
    r.offset = off
    r.length = rec_end - off
    r.flags = flags
    r.sequence = seq
    r.space = space
    r.key = bytes(d[p:p + klen])
    r.value = bytes(d[p + klen:rec_end])
    r.expiry = expiry
    r.key_id = key_id
    r.nonce = nonce
    r.raw_length = raw_length
    r.checksum = stored
    # FORMAT.md, Values: AAD = (flags AND 0x7B) || record[5 ..< end of key]
    r.aad = bytes([flags & 0x7B]) + bytes(d[off + 5:p + klen]) if flags & F_ENCRYPTED else None
    return r


class SegmentHeader:
    __slots__ = ("version", "header_size", "segment_id", "flags", "created", "reserved",
                 "checksum", "checksum_ok")


def parse_segment_header(d):
    """Returns (header or None, problem string or None)."""
    if len(d) < SEG_HEADER_SIZE:
        return None, "shorter than the 32-byte header (%d bytes)" % len(d)
    if bytes(d[0:4]) != SEG_MAGIC:
        return None, "bad magic %s" % bytes(d[0:4]).hex()
    h = SegmentHeader()
    h.version = u16(d, 4)
    h.header_size = u16(d, 6)
    h.segment_id = u32(d, 8)
    h.flags = u32(d, 12)
    h.created = u64(d, 16)
    h.reserved = u32(d, 24)
    h.checksum = u32(d, 28)
    h.checksum_ok = crc32c(d, 0, 28) == h.checksum
    if not h.checksum_ok:
        return None, "header checksum mismatch (stored %08x, computed %08x)" % (
            h.checksum, crc32c(d, 0, 28))
    if h.version not in (1, 2):
        return None, "unknown segment format version %d" % h.version
    if h.header_size != SEG_HEADER_SIZE:
        return None, "header size %d, version %d says 32" % (h.header_size, h.version)
    return h, None


class SegmentScan:
    def __init__(self):
        self.name = ""
        self.segment_id = 0
        self.header = None
        self.file_length = 0
        self.records = []           # every valid record, file order
        self.applied = []           # records of complete batches (usable)
        self.dropped = []           # records of incomplete batches
        self.corrupt = []           # (start, end) ranges skipped
        self.content_end = 0        # end of the last valid record read
        self.tail = None            # None, ("clean", off) or ("torn", off)
        self.is_active = False


def scan_records(d, segment_id, start, end, name, report, active_hint=None, batches=True):
    """Recovery steps 1-3 over d[start:end]. Returns a SegmentScan (without header)."""
    s = SegmentScan()
    s.name = name
    s.segment_id = segment_id
    s.file_length = end
    off = start
    pending = []
    orphan = [False]   # dropping followers of a batch whose first record was lost

    def drop_pending(why):
        if pending:
            report("%s: incomplete batch of %d record(s) at offsets %s (sequences %s) "
                   "dropped: %s" % (name, len(pending), ",".join(str(r.offset) for r in pending),
                                    ",".join(str(r.sequence) for r in pending), why))
            s.dropped.extend(pending)
            pending.clear()

    content_end = start
    while off < end:
        rec = parse_record(d, off, end, segment_id)
        if rec is not None:
            s.records.append(rec)
            if not batches:
                # compaction output: batch flags are ignored
                s.applied.append(rec)
            elif rec.flags & F_FOLLOWER:
                if pending and pending[-1].sequence + 1 == rec.sequence:
                    if rec.flags & F_BATCH:
                        pending.append(rec)
                    else:
                        s.applied.extend(pending)
                        s.applied.append(rec)
                        pending.clear()
                else:
                    drop_pending("its next record is missing")
                    if not orphan[0]:
                        report("%s: records of a batch whose start was lost dropped from offset %d"
                               % (name, rec.offset))
                    orphan[0] = True
                    s.dropped.append(rec)
            else:
                drop_pending("its last record is missing")
                orphan[0] = False
                if rec.flags & F_BATCH:
                    pending.append(rec)
                else:
                    s.applied.append(rec)
            off = rec.end
            content_end = off
            continue
        # not a valid record: search forward for the next one
        nxt = None
        zeros_from = None
        q = off + 1
        # fast path: if everything from `off` on is zero, no record can start there
        if d.count(0, off, end) == end - off:
            zeros_from = off
        else:
            while q < end:
                # a record's 6th byte (first byte of its sequence) is never 0
                if q + 5 < end and d[q + 5] == 0:
                    q += 1
                    continue
                r2 = parse_record(d, q, end, segment_id)
                if r2 is not None:
                    nxt = q
                    break
                q += 1
        if nxt is None:
            zero_tail = zeros_from is not None
            if zero_tail:
                s.tail = ("clean", off)
            else:
                s.tail = ("torn", off)
                report("%s: torn tail: %d byte(s) from offset %d to %d are not a valid record "
                       "and not all zero" % (name, end - off, off, end))
            break
        report("%s: corrupt bytes %d..<%d (%d bytes) skipped" % (name, off, nxt, nxt - off))
        s.corrupt.append((off, nxt))
        drop_pending("followed by corrupt bytes at offset %d" % off)
        off = nxt
    else:
        s.tail = ("clean", end)
    drop_pending("not followed by the end of its batch (segment content ends at offset %d)"
                 % content_end)
    s.content_end = content_end
    return s


def is_lost_write(d, lo, hi):
    """FORMAT.md "Recovery" rule 2: zero bytes from `lo`, or from a multiple of 512 inside
    [lo, hi), up to the next multiple of 512, that multiple not past `hi`."""
    start = lo
    while start < hi:
        boundary = (start // 512 + 1) * 512
        if boundary > hi:
            return False
        if d.count(0, start, boundary) == boundary - start:
            return True
        start = boundary
    return False


def read_segment_file(path, segment_id, name, report, limit=None):
    """Reads and scans one segment file. Returns SegmentScan or None when unreadable.
    `limit`: only consider bytes [0, limit) (used for snapshot coverage)."""
    try:
        with open(path, "rb") as f:
            d = f.read()
    except OSError as e:
        report("%s: unreadable: %s" % (name, e))
        return None
    if len(d) == 0 or d.count(0) == len(d):
        report("%s: file is entirely zero bytes (%d bytes): a crash between creating the "
               "segment and writing its header; an opener would remove it, skipped" % (name, len(d)))
        return None
    h, problem = parse_segment_header(d)
    if h is None:
        report("%s: header unreadable (%s): segment skipped" % (name, problem))
        return None
    if h.segment_id != segment_id:
        # FORMAT.md: the header's id "equals the id in the file name"; it does not say what a
        # reader does otherwise. Treated as an unreadable header (skipped, as the engine does).
        report("%s: header unreadable (header says segment id %d, file name says %d): segment "
               "skipped" % (name, h.segment_id, segment_id))
        return None
    if h.flags & ~1:
        report("%s: segment flags %#x have bits other than bit 0 set" % (name, h.flags))
    if h.reserved != 0:
        report("%s: reserved header field is %#x, not 0" % (name, h.reserved))
    end = len(d) if limit is None else min(limit, len(d))
    s = scan_records(d, segment_id, SEG_HEADER_SIZE, end, name, report, batches=not (h.flags & 1))
    s.header = h
    s.file_length = len(d)
    return s

# ---------------------------------------------------------------------------
# Directory, compaction commit file.

# FORMAT.md says "8 lowercase hexadecimal digits"; upper-case names are accepted with a warning
# (the document does not say what a reader does with them).
SEG_RE = re.compile(r"^([0-9a-fA-F]{8})\.seg$")
TMP_RE = re.compile(r"^([0-9a-fA-F]{8})\.seg\.tmp$")


def parse_commit_file(d):
    """Returns ((outputs, inputs), None) or (None, problem)."""
    if len(d) < 20:
        return None, "too short (%d bytes)" % len(d)
    if bytes(d[0:4]) != b"UCMP":
        return None, "bad magic %s" % bytes(d[0:4]).hex()
    stored = u32(d, len(d) - 4)
    computed = crc32c(d, 0, len(d) - 4)
    if stored != computed:
        return None, "checksum mismatch (stored %08x, computed %08x)" % (stored, computed)
    version = u16(d, 4)
    if version != 1:
        return None, "unknown version %d" % version
    if u16(d, 6) != 0:
        pass  # reserved; tolerated
    n = u32(d, 8)
    m = u32(d, 12)
    if len(d) != 16 + 4 * n + 4 * m + 4:
        return None, "length %d does not match N=%d, M=%d (expected %d)" % (
            len(d), n, m, 16 + 4 * n + 4 * m + 4)
    outs = [u32(d, 16 + 4 * i) for i in range(n)]
    ins = [u32(d, 16 + 4 * n + 4 * i) for i in range(m)]
    return (outs, ins), None


def parse_sync_mark_file(d):
    """FORMAT.md "The sync mark file": the valid slot with the latest place, as
    (segment, offset, next_sequence), or None."""
    best = None
    for at in (0, 512):
        if len(d) < at + 32 or bytes(d[at:at + 4]) != b"USYN" or u16(d, at + 4) != 1:
            continue
        if crc32c(d, at, at + 28) != u32(d, at + 28):
            continue
        mark = (u32(d, at + 8), u32(d, at + 12), u64(d, at + 16))
        if best is None or mark[:2] > best[:2]:
            best = mark
    return best


class Store:
    def __init__(self, directory, report):
        self.dir = directory
        self.report = report
        self.seg_files = {}      # id -> name (.seg)
        self.tmp_files = {}      # id -> name (.seg.tmp)
        self.commit = None       # (outputs, inputs) when a valid COMPACTION exists
        self.read_set = {}       # id -> file name actually read
        self.scans = {}          # id -> SegmentScan
        self.active_id = None

    def list_dir(self):
        try:
            names = sorted(os.listdir(self.dir))
        except OSError as e:
            raise SystemExit("read_store: cannot list %s: %s" % (self.dir, e))
        for n in names:
            m = SEG_RE.match(n) or TMP_RE.match(n)
            if m and m.group(1) != m.group(1).lower():
                self.report("%s: segment file name is not lowercase hexadecimal as FORMAT.md "
                            "says; read anyway" % n)
            m = SEG_RE.match(n)
            if m:
                sid = int(m.group(1), 16)
                if sid in self.seg_files:
                    self.report("%s and %s name the same segment id %d: the second is ignored"
                                % (self.seg_files[sid], n, sid))
                    continue
                if sid == 0:
                    self.report("%s: segment id 0 (ids start at 1); read anyway" % n)
                self.seg_files[sid] = n
                continue
            m = TMP_RE.match(n)
            if m:
                self.tmp_files[int(m.group(1), 16)] = n
        cpath = os.path.join(self.dir, "COMPACTION")
        if os.path.exists(cpath):
            try:
                with open(cpath, "rb") as f:
                    cd = f.read()
                self.commit, problem = parse_commit_file(cd)
                if self.commit is None:
                    self.report("COMPACTION: not valid (%s): ignored; its .tmp outputs are "
                                "uncommitted leftovers, the inputs are kept" % problem)
            except OSError as e:
                self.report("COMPACTION: unreadable: %s: ignored" % e)

    def choose_segments(self):
        read = dict(self.seg_files)
        if self.commit is not None:
            outs, ins = self.commit
            missing = [o for o in outs if o not in self.seg_files and o not in self.tmp_files]
            for o in outs:
                if o not in read and o in self.tmp_files:
                    read[o] = self.tmp_files[o]
            if missing:
                self.report("COMPACTION: valid, but output segment(s) %s exist under neither "
                            "name: inputs are read too rather than skipped"
                            % ",".join("%08x" % o for o in missing))
            else:
                skipped = [i for i in ins if i in read and i not in outs]
                for i in skipped:
                    del read[i]
                self.report("COMPACTION: valid commit file (outputs %s, inputs %s): an opener "
                            "would finish it; reading outputs, skipping inputs %s" % (
                                ",".join("%08x" % o for o in outs) or "-",
                                ",".join("%08x" % i for i in ins) or "-",
                                ",".join("%08x" % i for i in skipped) or "-"))
        for tid, n in sorted(self.tmp_files.items()):
            if read.get(tid) != n:
                self.report("%s: uncommitted compaction leftover (no valid COMPACTION names it): "
                            "ignored" % n)
        self.read_set = read
        return read

    def load(self):
        self.list_dir()
        for sid, name in sorted(self.choose_segments().items()):
            s = read_segment_file(os.path.join(self.dir, name), sid, name, self.report)
            if s is not None:
                self.scans[sid] = s
        # the active segment: the newest (highest id) segment whose flags bit 0 is clear
        cands = [sid for sid, s in self.scans.items() if not (s.header.flags & 1)]
        self.active_id = max(cands) if cands else None
        # FORMAT.md "Recovery" rule 2: in the active segment, corrupt bytes that are a lost
        # write (zero from their start, or from a multiple of 512 in them, up to the next
        # multiple of 512, not past their end) end the segment's content there.
        if self.active_id is not None:
            a = self.scans[self.active_id]
            path = os.path.join(self.dir, a.name)
            with open(path, "rb") as f:
                d = f.read()
            for (lo, hi) in a.corrupt:
                if is_lost_write(d, lo, hi):
                    self.report("%s: corrupt bytes %d..<%d are a lost write: the active segment's "
                                "content ends there (the records after it are cut)" % (a.name, lo, hi))
                    cut = read_segment_file(path, self.active_id, a.name, lambda _: None, limit=lo)
                    if cut is not None:
                        self.scans[self.active_id] = cut
                    break
        self.point_in_time()
        for sid, s in self.scans.items():
            s.is_active = sid == self.active_id
            if s.tail and s.tail[0] == "torn":
                self.report("%s: the torn tail is in %s segment: %s" % (
                    s.name, "the active" if s.is_active else "a sealed",
                    "an opener would zero it from offset %d and append there"
                    % s.content_end if s.is_active else "left as dead bytes"))
        return self

    def point_in_time(self):
        """FORMAT.md "Recovery", rules 6-8, in a store with a version 2 segment: from the
        watermark (SYNCMARK) on, the writes of the write-path segments must follow each other;
        the log ends at the first that does not, or at the first problem, and every record
        after that, in that segment and every later write-path segment, is dropped. (The index
        snapshot is not used here, so its coverage is not a watermark.)"""
        if not any(s.header.version == 2 for s in self.scans.values()):
            return
        mark = None
        mpath = os.path.join(self.dir, "SYNCMARK")
        if os.path.exists(mpath):
            with open(mpath, "rb") as f:
                mark = parse_sync_mark_file(f.read())
        if mark is None:
            self.report("SYNCMARK: no valid slot: the watermark is the start of the log")
            mark = (0, 0, 1)
        watermark = (mark[0], mark[1])
        write_path = sorted(sid for sid, s in self.scans.items() if not (s.header.flags & 1))
        crossed = False
        expected = None
        end = None
        for sid in write_path:
            s = self.scans[sid]
            if end is not None:
                if s.applied:
                    self.report("%s: every record dropped: it follows the end of the log" % s.name)
                s.dropped.extend(s.applied)
                s.applied = []
                continue
            # the segment's writes and problems in file order
            items = []
            write = []
            for r in s.applied:
                if not (r.flags & F_FOLLOWER) and write:
                    items.append((write[0].offset, "write", write))
                    write = []
                write.append(r)
            if write:
                items.append((write[0].offset, "write", write))
            for (lo, _hi) in s.corrupt:
                items.append((lo, "corrupt", None))
            for r in s.dropped:
                items.append((r.offset, "dropped", None))
            if s.tail and s.tail[0] == "torn":
                items.append((s.tail[1], "torn", None))
            items.sort(key=lambda item: item[0])
            for (off, kind, recs) in items:
                if kind != "write":
                    if (sid, off) >= watermark:
                        end = (sid, off)
                        self.report("%s: the log ends at offset %d (%s bytes after the synced part)"
                                    % (s.name, off, kind))
                        break
                    continue
                if not crossed and (sid, off) >= watermark:
                    crossed = True
                    expected = mark[2] if (mark[0] == 0 or mark[0] in write_path) else None
                if crossed and expected is not None and recs[0].sequence != expected:
                    end = (sid, off)
                    self.report("%s: the log ends at offset %d: the write there has sequence %d, "
                                "not %d (a write before it was lost)" % (s.name, off, recs[0].sequence, expected))
                    break
                expected = recs[-1].sequence + 1
            if end is not None and end[0] == sid:
                cut = [r for r in s.applied if r.offset >= end[1]]
                s.applied = [r for r in s.applied if r.offset < end[1]]
                s.dropped.extend(cut)

    def all_records(self):
        for sid in sorted(self.scans):
            for r in self.scans[sid].records:
                yield r

    def applied_records(self):
        for sid in sorted(self.scans):
            for r in self.scans[sid].applied:
                yield r


def newest_by_key(records, report=None):
    """Highest-sequence rule. Returns {(space, key): Record}."""
    best = {}
    for r in records:
        k = (r.space, r.key)
        b = best.get(k)
        if b is None or r.sequence > b.sequence:
            best[k] = r
        elif r.sequence == b.sequence and report is not None and (
                r.flags != b.flags or r.value != b.value or r.expiry != b.expiry):
            report("key space %d key %s: two different records with sequence %d "
                   "(segment %d offset %d and segment %d offset %d); keeping the first"
                   % (r.space, base64.b64encode(r.key).decode(), r.sequence,
                      b.segment, b.offset, r.segment, r.offset))
    return best


def live_records(best, now_ms):
    out = []
    for k, r in best.items():
        if r.is_tombstone() or r.is_expired(now_ms):
            continue
        out.append(r)
    out.sort(key=lambda r: (r.space, r.key))
    return out

# ---------------------------------------------------------------------------
# Values: keys, AES-256-GCM and zstd (FORMAT.md, "Values: compression and encryption",
# "Keys", "Nonces").

KEYCHECK_SPACE = 0xFFFFFFFF
KEYCHECK_MESSAGE = b"UnifiedStorage.LogStore.v1 key check"
HKDF_SALT = b"UnifiedStorage.LogStore.v1 salt"
HKDF_INFO = b"UnifiedStorage default key"
AES_KEY_SIZE = 32
GCM_NONCE_SIZE = 12
GCM_TAG_SIZE = 16
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def hkdf_sha256(ikm, salt, info, length):
    """HKDF (RFC 5869) with SHA-256: extract, then expand to `length` bytes."""
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    okm, block, counter = b"", b"", 1
    while len(okm) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        okm += block
        counter += 1
    return okm[:length]


def derive_key(app_key):
    """The 32-byte key FORMAT.md derives from an application key string."""
    return hkdf_sha256(app_key.encode("utf-8"), HKDF_SALT, HKDF_INFO, AES_KEY_SIZE)


def key_check_value(key):
    """The 16-byte check value a store keeps for a key: HMAC-SHA256(key, message)[:16]."""
    return hmac.new(key, KEYCHECK_MESSAGE, hashlib.sha256).digest()[:16]


def keycheck_record_key(key_id):
    return b"keycheck/%d" % key_id


class CannotDecode(Exception):
    """A value that this reader cannot turn back into what the application stored."""


class WrongKey(Exception):
    def __init__(self, key_id):
        Exception.__init__(self, "wrong key for key id %d: it does not match the store's check "
                                 "value (record keycheck/%d in space 0xFFFFFFFF)" % (key_id, key_id))
        self.key_id = key_id


def aes_gcm_open(key, nonce, sealed, aad, key_id=None):
    """AES-256-GCM decryption of `sealed` (ciphertext || 16-byte tag). The plaintext is
    returned only when the tag verifies."""
    if len(sealed) < GCM_TAG_SIZE:
        raise CannotDecode("encrypted value of %d bytes is shorter than the 16-byte GCM tag"
                           % len(sealed))
    try:
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:
        raise CannotDecode("cannot decrypt: the Python package 'cryptography' is not installed")
    try:
        return AESGCM(key).decrypt(nonce, sealed, aad)
    except InvalidTag:
        raise CannotDecode("AES-GCM authentication failed%s: the record was altered or the key "
                           "is not the one it was written with"
                           % ("" if key_id is None else " under key id %d" % key_id))


def zstd_decompress(frame, raw_length, dictionaries=None):
    """One zstd frame whose declared content size must be `raw_length`, decompressed to
    exactly `raw_length` bytes (so no frame expands further than its record says). A frame
    that names a dictionary id (FORMAT.md, "Compression dictionaries") needs that dictionary
    from `dictionaries` ({id: dictionary bytes})."""
    try:
        import zstandard
    except ImportError:
        raise CannotDecode("cannot decompress: the Python package 'zstandard' is not installed")
    if raw_length > MAX_VALUE:
        raise CannotDecode("raw length %d is over the 2^30-byte limit" % raw_length)
    if frame[:4] != ZSTD_MAGIC:
        raise CannotDecode("compressed value does not start with the zstd magic 28 b5 2f fd")
    try:
        parameters = zstandard.get_frame_parameters(frame)
        declared = parameters.content_size
    except zstandard.ZstdError as e:
        raise CannotDecode("bad zstd frame header: %s" % e)
    dictionary = None
    if parameters.dict_id:
        data = (dictionaries or {}).get(parameters.dict_id)
        if data is None:
            raise CannotDecode("compressed with dictionary %d, which the store does not hold"
                               % parameters.dict_id)
        dictionary = zstandard.ZstdCompressionDict(data)
    if declared != raw_length:
        raise CannotDecode("zstd frame declares a content size of %s, the record's raw length "
                           "is %d" % ("no" if declared in (-1, 2**64 - 1) else declared, raw_length))
    d = zstandard.ZstdDecompressor(dict_data=dictionary) if dictionary else zstandard.ZstdDecompressor()
    try:
        try:
            out = d.decompress(frame, max_output_size=raw_length, allow_extra_data=False)
        except TypeError:   # zstandard < 0.23: no allow_extra_data; check by hand
            obj = d.decompressobj()
            out = obj.decompress(frame)
            if not obj.eof or obj.unused_data:
                raise CannotDecode("compressed value is not exactly one zstd frame")
    except zstandard.ZstdError as e:
        raise CannotDecode("zstd frame does not decompress: %s" % e)
    if len(out) != raw_length:
        raise CannotDecode("zstd frame decompressed to %d bytes, raw length is %d"
                           % (len(out), raw_length))
    return out


def decode_value(r, keys, dictionaries=None):
    """The value an application stored with record `r`: (bytes, None), or (None, reason).
    A tombstone has no value: (None, None). `keys`: {key id: 32-byte key}."""
    if r.is_tombstone():
        return None, None
    if r.flags & F_CUSTOM:
        return None, ("custom crypt (flag 0x20): the value was transformed by the application's "
                      "own function, which nothing in the file describes")
    value = r.value
    try:
        if r.flags & F_ENCRYPTED:
            key = keys.get(r.key_id)
            if key is None:
                raise CannotDecode("encrypted under key id %d, and no key was given for it"
                                   % r.key_id)
            value = aes_gcm_open(key, r.nonce, value, r.aad, r.key_id)
        if r.flags & F_COMPRESSED:
            value = zstd_decompress(value, r.raw_length, dictionaries)
    except CannotDecode as e:
        return None, str(e)
    return value, None


def check_keys(best, keys, report):
    """Checks the keys given against the store (FORMAT.md, "Keys" and "Rekeying") and returns
    them, plus any key unwrapped from a rekey record. Raises WrongKey for a key whose check
    value does not match and RetiredKey for a key id a finished rekey retired. `best`:
    newest_by_key of the store's records. Reports keys it cannot check."""
    def live(key):
        r = best.get((KEYCHECK_SPACE, key))
        return None if r is None or r.is_tombstone() else r

    def check(key_id, key, origin):
        r = live(keycheck_record_key(key_id))
        if r is None:
            report("key id %d%s: the store holds no check value for it; used unchecked" % (key_id, origin))
        elif r.flags & (F_COMPRESSED | F_ENCRYPTED | F_CUSTOM):
            report("key id %d%s: its check value record is not plain (flags %#x); used unchecked"
                   % (key_id, origin, r.flags))
        elif not hmac.compare_digest(r.value, key_check_value(key)):
            raise WrongKey(key_id)

    keys = dict(keys)
    for key_id in sorted(keys):
        check(key_id, keys[key_id], "")
        retired = live(b"rekeyed/%d" % key_id)
        if retired is not None:
            raise RetiredKey(key_id, u32(retired.value, 0) if len(retired.value) == 4 else None)
    r = live(b"rekey")
    if r is not None:
        try:
            old_id, new_id, old_key, new_key = parse_rekey_record(r.value, keys)
        except CannotDecode as e:
            report("rekey record (sequence %d): %s" % (r.sequence, e))
        else:
            report("rekey record: a rekey from key id %d to key id %d is unfinished" % (old_id, new_id))
            for key_id, key in ((old_id, old_key), (new_id, new_key)):
                if key_id not in keys and key is not None:
                    check(key_id, key, " (unwrapped from the rekey record)")
                    keys[key_id] = key
    return keys


class RetiredKey(Exception):
    def __init__(self, key_id, new_id):
        Exception.__init__(self, "key id %d was retired by a rekey%s (record rekeyed/%d in space "
                                 "0xFFFFFFFF): an opener refuses it" % (
                                     key_id, "" if new_id is None else " to key id %d" % new_id, key_id))
        self.key_id = key_id


REKEY_RECORD_SIZE = 128
REKEY_NEW_KEY_AAD = b"UnifiedStorage.LogStore.v1 rekey: new key"
REKEY_OLD_KEY_AAD = b"UnifiedStorage.LogStore.v1 rekey: old key"


def parse_rekey_record(value, keys):
    """The rekey record: old key id (u32), new key id (u32), the new key wrapped under the old
    one, the old key wrapped under the new one; a wrapped key is a 12-byte nonce, then the
    AES-256-GCM ciphertext of the 32-byte key and its tag. Returns (old id, new id, old key or
    None, new key or None), unwrapping whichever key `keys` lacks."""
    if len(value) != REKEY_RECORD_SIZE:
        raise CannotDecode("%d bytes, FORMAT.md says %d" % (len(value), REKEY_RECORD_SIZE))
    old_id, new_id = u32(value, 0), u32(value, 4)
    wrapped_new, wrapped_old = value[8:68], value[68:128]
    old_key, new_key = keys.get(old_id), keys.get(new_id)

    def unwrap(wrapped, wrapping_key, aad, what):
        try:
            key = aes_gcm_open(wrapping_key, wrapped[:GCM_NONCE_SIZE], wrapped[GCM_NONCE_SIZE:], aad)
        except CannotDecode as e:
            raise CannotDecode("cannot unwrap the %s: %s" % (what, e))
        if len(key) != AES_KEY_SIZE:
            raise CannotDecode("the unwrapped %s is %d bytes" % (what, len(key)))
        return key
    if old_key is not None and new_key is None:
        new_key = unwrap(wrapped_new, old_key, REKEY_NEW_KEY_AAD, "new key (id %d)" % new_id)
    elif new_key is not None and old_key is None:
        old_key = unwrap(wrapped_old, new_key, REKEY_OLD_KEY_AAD, "old key (id %d)" % old_id)
    return old_id, new_id, old_key, new_key

# ---------------------------------------------------------------------------
# Index snapshot.

class Snapshot:
    pass


def parse_snapshot_entries(d, p, end, count, capacity, s, space):
    """FORMAT.md: `count` entries of one table (slot gap varint, tag u32, segment id varint,
    record offset u32), slots restarting at -1. Appends to s.entries / s.slots / s.spaces and
    returns the position after them. Raises Truncated, BadVarint or ValueError."""
    prev_slot = -1
    for i in range(count):
        gap, p = read_varint(d, p, end)
        if p + 4 > end:
            raise Truncated()
        tag = u32(d, p)
        p += 4
        seg, p = read_varint(d, p, end)
        if p + 4 > end:
            raise Truncated()
        off = u32(d, p)
        p += 4
        slot = prev_slot + gap + 1
        if tag == 0:
            raise ValueError("entry %d: tag 0" % len(s.entries))
        if capacity and slot >= capacity:
            raise ValueError("slot %d beyond table capacity %d" % (slot, capacity))
        s.entries.append((tag, seg, off))
        s.slots.append(slot)
        s.spaces.append(space)
        prev_slot = slot
    return p


def align4096(n):
    return (n + 4095) // 4096 * 4096


def parse_snapshot_v3(d):
    """FORMAT.md, "Index snapshot version 3": metadata under its own CRC-32C, then each table's
    raw slot array (12-byte entries, tag 0 = empty) page-aligned, a CRC-32C per block of B slots.
    Every block is checked here (a reader of the whole file has no reason to be lazy)."""
    if len(d) < 60:
        return None, "too short for version 3 (%d bytes)" % len(d)
    meta_len = u32(d, 48)
    if meta_len < 60 or meta_len > len(d):
        return None, "metadata length %d impossible" % meta_len
    stored, computed = u32(d, meta_len - 4), crc32c(d, 0, meta_len - 4)
    if stored != computed:
        return None, "metadata checksum mismatch (stored %08x, computed %08x)" % (stored, computed)
    s = Snapshot()
    s.version = 3
    s.reserved0 = u16(d, 6)
    s.highest_sequence = u64(d, 8)
    s.next_segment_id = u32(d, 16)
    s.active_id = u32(d, 20)
    s.active_length = u32(d, 24)
    s.segment_count = u32(d, 28)
    s.entry_count = u64(d, 32)
    s.table_count = u32(d, 40)
    block = u32(d, 44)
    s.reserved1 = u32(d, 52)
    s.capacity = 0
    if block != 1024:
        return None, "slots per block %d, FORMAT.md says 1024" % block
    p = 56
    if p + 24 * s.segment_count + 24 * s.table_count > meta_len - 4:
        return None, "segment and table records run past the metadata"
    s.segments = []
    for i in range(s.segment_count):
        s.segments.append({"id": u32(d, p), "length": u32(d, p + 4), "live_bytes": u64(d, p + 8),
                           "record_count": u32(d, p + 16), "reserved": u32(d, p + 20)})
        p += 24
    s.entries, s.slots, s.spaces, s.tables = [], [], [], []
    records = []
    expected = align4096(meta_len)
    blocks = 0
    for t in range(s.table_count):
        space, capacity, count, reserved, offset = u32(d, p), u32(d, p + 4), u32(d, p + 8), u32(d, p + 12), u64(d, p + 16)
        p += 24
        if capacity < 64 or count < 1 or 4 * count > 3 * capacity or reserved:
            return None, "table %d (space %d): capacity %d, count %d impossible" % (t, space, capacity, count)
        if offset != expected:
            return None, "table %d (space %d): slots at %d, expected %d" % (t, space, offset, expected)
        if space in [r[0] for r in records]:
            return None, "space %d has two tables" % space
        records.append((space, capacity, count, offset, blocks))
        blocks += (capacity + block - 1) // block
        expected = align4096(offset + 12 * capacity)
    if p + 4 * blocks + 4 != meta_len:
        return None, "metadata length %d, its records and %d block checksums need %d" % (meta_len, blocks, p + 4 * blocks + 4)
    end = records[-1][3] + 12 * records[-1][1] if records else meta_len
    if len(d) != end:
        return None, "file is %d bytes, the tables end at %d" % (len(d), end)
    zero_from = meta_len
    for space, capacity, count, offset, first_block in records:
        if any(d[zero_from:offset]):
            return None, "padding before the slots of space %d is not zero" % space
        for j in range((capacity + block - 1) // block):
            lo = offset + 12 * j * block
            hi = offset + 12 * min((j + 1) * block, capacity)
            if crc32c(d, lo, hi) != u32(d, p + 4 * (first_block + j)):
                return None, "space %d: block %d checksum mismatch" % (space, j)
        found = 0
        for slot in range(capacity):
            q = offset + 12 * slot
            tag, seg, off = u32(d, q), u32(d, q + 4), u32(d, q + 8)
            if tag == 0:
                if seg or off:
                    return None, "space %d: empty slot %d has a location" % (space, slot)
                continue
            s.entries.append((tag, seg, off))
            s.slots.append(slot)
            s.spaces.append(space)
            found += 1
        if found != count:
            return None, "space %d: %d entries, its record says %d" % (space, found, count)
        s.tables.append((space, capacity, count))
        zero_from = offset + 12 * capacity
    if len(s.entries) != s.entry_count:
        return None, "tables hold %d entries, the header says %d" % (len(s.entries), s.entry_count)
    return s, None


def parse_snapshot(d):
    """Returns (Snapshot, None) or (None, problem). Versions 1, 2 and 3 (FORMAT.md, "The index
    snapshot"); `s.spaces[i]` is entry i's key space in versions 2 and 3, None in version 1."""
    if len(d) < 52:
        return None, "too short (%d bytes)" % len(d)
    if bytes(d[0:4]) != b"USNP":
        return None, "bad magic %s" % bytes(d[0:4]).hex()
    if u16(d, 4) == 3:
        return parse_snapshot_v3(d)
    stored = u32(d, len(d) - 4)
    computed = crc32c(d, 0, len(d) - 4)
    if stored != computed:
        return None, "checksum mismatch (stored %08x, computed %08x)" % (stored, computed)
    s = Snapshot()
    s.version = u16(d, 4)
    if s.version not in (1, 2):
        return None, "unknown version %d" % s.version
    s.reserved0 = u16(d, 6)
    s.highest_sequence = u64(d, 8)
    s.next_segment_id = u32(d, 16)
    s.active_id = u32(d, 20)
    s.active_length = u32(d, 24)
    s.segment_count = u32(d, 28)
    s.entry_count = u64(d, 32)
    # version 1: the single table's capacity; version 2: the table count
    s.capacity = u32(d, 40) if s.version == 1 else 0
    s.table_count = u32(d, 40) if s.version == 2 else 1
    s.reserved1 = u32(d, 44)
    end = len(d) - 4
    p = 48
    if p + 24 * s.segment_count > end:
        return None, "segment table (%d segments) runs past the end" % s.segment_count
    s.segments = []
    for i in range(s.segment_count):
        s.segments.append({"id": u32(d, p), "length": u32(d, p + 4), "live_bytes": u64(d, p + 8),
                           "record_count": u32(d, p + 16), "reserved": u32(d, p + 20)})
        p += 24
    s.entries = []
    s.slots = []
    s.spaces = []
    s.tables = []
    try:
        if s.version == 1:
            p = parse_snapshot_entries(d, p, end, s.entry_count, s.capacity, s, None)
        else:
            seen_spaces = set()
            for t in range(s.table_count):
                if p + 12 > end:
                    raise Truncated()
                space, capacity, count = u32(d, p), u32(d, p + 4), u32(d, p + 8)
                p += 12
                if count < 1:
                    return None, "table %d (space %d) has no entries" % (t, space)
                if space in seen_spaces:
                    return None, "space %d has two tables" % space
                seen_spaces.add(space)
                s.tables.append((space, capacity, count))
                p = parse_snapshot_entries(d, p, end, count, capacity, s, space)
            if len(s.entries) != s.entry_count:
                return None, "tables hold %d entries, the header says %d" % (len(s.entries), s.entry_count)
    except Truncated:
        return None, "entries run past the checksum (%d of %d parsed)" % (len(s.entries),
                                                                       s.entry_count)
    except BadVarint:
        return None, "entry %d: bad varint" % len(s.entries)
    except ValueError as problem:
        return None, str(problem)
    if p != end:
        return None, "%d unexplained byte(s) between the last entry and the checksum" % (end - p)
    return s, None


def check_snapshot(directory, now_ms, report):
    """Returns exit status (0 agree / no snapshot, 1 disagree). Prints findings on stdout."""
    out = []
    bad = []

    def say(msg):
        out.append(msg)
        print(msg)

    def fail(msg):
        bad.append(msg)
        print("DISAGREE: " + msg)

    path = os.path.join(directory, "index.snapshot")
    if not os.path.exists(path):
        say("no index.snapshot: nothing to check")
        return 0
    with open(path, "rb") as f:
        d = f.read()
    snap, problem = parse_snapshot(d)
    if snap is None:
        fail("index.snapshot unusable: %s (an opener would ignore it and read every segment)"
             % problem)
        return 1
    say("snapshot: version %d, highest sequence %d, next segment id %d, active %s length %d, "
        "%d segment(s), %d entries, capacity hint %d" % (
            snap.version, snap.highest_sequence, snap.next_segment_id,
            "none" if snap.active_id == 0xFFFFFFFF else str(snap.active_id),
            snap.active_length, snap.segment_count, snap.entry_count, snap.capacity))
    if snap.version == 1:
        say("note: a version 1 snapshot: the engine does not use it (it reads every segment); "
            "checked as written")
    if snap.reserved0 or snap.reserved1:
        say("note: reserved snapshot fields are not 0 (%#x, %#x)" % (snap.reserved0, snap.reserved1))

    store = Store(directory, report)
    store.list_dir()
    listed = {s["id"]: s for s in snap.segments}
    # --- "When a snapshot may be used"
    for sid, s in sorted(listed.items()):
        name = store.seg_files.get(sid)
        if name is None:
            fail("listed segment %08x.seg does not exist" % sid)
            continue
        flen = os.path.getsize(os.path.join(directory, name))
        if sid == snap.active_id:
            if flen < s["length"]:
                fail("active segment %s is %d bytes, shorter than the listed %d"
                     % (name, flen, s["length"]))
            if s["length"] != snap.active_length:
                fail("active segment %s: listed length %d differs from the header's active "
                     "segment length %d" % (name, s["length"], snap.active_length))
        elif flen != s["length"]:
            fail("sealed segment %s is %d bytes, listed as %d" % (name, flen, s["length"]))
        if sid >= snap.next_segment_id:
            fail("listed segment %08x is not below next segment id %d" % (sid, snap.next_segment_id))
    if snap.active_id != 0xFFFFFFFF and snap.active_id not in listed:
        fail("active segment id %d is not in the segment list" % snap.active_id)
    if len(listed) != len(snap.segments):
        fail("segment list has duplicate ids")
    for sid, name in sorted(store.seg_files.items()):
        if sid not in listed and sid < snap.next_segment_id:
            fail("unlisted segment %s has an id below next segment id %d" % (name, snap.next_segment_id))
    if bad:
        say("the snapshot is not usable: an opener would ignore it")

    # --- the state the snapshot covers: listed segments, the active one up to its listed length
    covered = {}
    for sid, s in sorted(listed.items()):
        name = store.seg_files.get(sid)
        if name is None:
            continue
        limit = s["length"] if sid == snap.active_id else None
        sc = read_segment_file(os.path.join(directory, name), sid, name, report, limit=limit)
        if sc is None:
            fail("listed segment %s is unreadable" % name)
            continue
        covered[sid] = sc
        nrec = len(sc.records)
        if s["record_count"] != nrec:
            say("note: %s: snapshot record count %d, segment holds %d valid record(s) in the "
                "covered range (FORMAT.md does not define this field precisely; not a failure)"
                % (name, s["record_count"], nrec))
    best = newest_by_key((r for sid in sorted(covered) for r in covered[sid].applied), report)
    by_loc = {}
    for sid, sc in covered.items():
        for r in sc.applied:
            by_loc[(sid, r.offset)] = r
    max_seq = max((r.sequence for sc in covered.values() for r in sc.records), default=0)
    if snap.highest_sequence < max_seq:
        fail("highest sequence %d is below a covered record's sequence %d"
             % (snap.highest_sequence, max_seq))

    seen_keys = {}
    tolerated = 0
    live_bytes = {}
    for i, (tag, sid, off) in enumerate(snap.entries):
        r = by_loc.get((sid, off))
        where = "entry %d (tag %08x, segment %d, offset %d)" % (i, tag, sid, off)
        if r is None:
            fail("%s: no valid, committed record starts there in the covered segments" % where)
            continue
        k = (r.space, r.key)
        kdesc = "space %d key %s" % (r.space, json.dumps(r.key.decode("utf-8", "replace")))
        if snap.spaces[i] is not None and snap.spaces[i] != r.space:
            fail("%s: in the table of space %d, but its record is in space %d" % (where, snap.spaces[i], r.space))
        t = tag_of(r.space, r.key)
        if t != tag:
            fail("%s: tag differs from the key hash tag %08x of its record (%s)" % (where, t, kdesc))
        if k in seen_keys:
            fail("%s: second entry for %s (first: entry %d)" % (where, kdesc, seen_keys[k]))
        seen_keys[k] = i
        if r.is_tombstone():
            fail("%s: points at a tombstone (%s)" % (where, kdesc))
        b = best[k]
        if b.sequence != r.sequence:
            fail("%s: points at sequence %d of %s, but the newest covered record is sequence %d "
                 "(segment %d offset %d)" % (where, r.sequence, kdesc, b.sequence, b.segment, b.offset))
        if r.is_expired(now_ms):
            tolerated += 1
            say("tolerated: %s: %s expired at %d ms (now %d); the snapshot has no timestamp, "
                "so it may have been live when written" % (where, kdesc, r.expiry, now_ms))
        live_bytes[sid] = live_bytes.get(sid, 0) + r.length
    for k, b in sorted(best.items()):
        if b.is_tombstone() or k in seen_keys:
            continue
        kdesc = "space %d key %s" % (k[0], json.dumps(k[1].decode("utf-8", "replace")))
        if b.is_expired(now_ms):
            tolerated += 1
            say("tolerated: expired %s (sequence %d) has no entry" % (kdesc, b.sequence))
            continue
        fail("live %s (sequence %d, segment %d offset %d) has no entry"
             % (kdesc, b.sequence, b.segment, b.offset))
    for sid, s in sorted(listed.items()):
        if sid in covered and s["live_bytes"] != live_bytes.get(sid, 0):
            say("note: %08x.seg: snapshot live bytes %d, entries point at %d record byte(s) there "
                "(FORMAT.md does not define this field precisely; not a failure)"
                % (sid, s["live_bytes"], live_bytes.get(sid, 0)))

    # --- what the snapshot does not cover (an opener replays it)
    uncovered = 0
    for sid, name in sorted(store.seg_files.items()):
        if sid in listed and sid != snap.active_id:
            continue
        sc = read_segment_file(os.path.join(directory, name), sid, name, lambda m: None)
        if sc is None:
            continue
        start = listed[sid]["length"] if sid in listed else 0
        uncovered += sum(1 for r in sc.records if r.offset >= start)
    if uncovered:
        say("note: %d record(s) are after the snapshot's coverage; an opener replays them" % uncovered)

    if bad:
        say("snapshot check FAILED: %d disagreement(s)" % len(bad))
        return 1
    say("snapshot OK: %d entries match the covered segments%s" % (
        len(snap.entries), " (%d expired key(s) tolerated)" % tolerated if tolerated else ""))
    return 0

# ---------------------------------------------------------------------------
# Output helpers.

# ---------------------------------------------------------------------------
# The DAO index checkpoint file `dao-indexes` (FORMAT.md, "DAO index checkpoint").

DAO_RIDS_PER_BLOCK = 384
DAO_ENTRIES_PER_BLOCK = 192


def parse_dao_indexes(d):
    """Returns (checkpoint, problem). checkpoint: dict with version, stamp and tables, each
    {space, name, rowids, indexes: [{name, entries: [bytes]}]}; every block (version 3) or the
    whole file (version 2) checked, as an opener that copies the file would. problem: why the
    file is unusable (None when it is usable)."""
    if len(d) < 12 or d[0:8] != b"USDAOIDX":
        return None, "too short or bad magic"
    version = u32(d, 8)
    if version not in (2, 3):
        return None, "format version %d" % version
    tables = []
    if version == 2:
        if len(d) < 28 or crc32c(d, 0, len(d) - 4) != u32(d, len(d) - 4):
            return None, "checksum mismatch"
        end = len(d) - 4
        stamp = u64(d, 12)
        count = u32(d, 20)
        p = 24
        for _ in range(count):
            space = u32(d, p); l = u32(d, p + 4); name = d[p + 8:p + 8 + l].decode(); p += 8 + l
            n = u64(d, p); p += 8
            if p + 8 * n > end:
                return None, "rowids past the end"
            rowids = [u64(d, p + 8 * i) - (1 << 64 if u64(d, p + 8 * i) >> 63 else 0) for i in range(n)]
            p += 8 * n
            indexes = []
            ic = u32(d, p); p += 4
            for _ in range(ic):
                l = u32(d, p); iname = d[p + 4:p + 4 + l].decode(); p += 4 + l
                m = u64(d, p); b = u64(d, p + 8); p += 16
                if p + 4 * m + b > end:
                    return None, "index %s past the end" % iname
                ends = [u32(d, p + 4 * i) for i in range(m)]
                p += 4 * m
                arena = d[p:p + b]; p += b
                entries, last = [], 0
                for e in ends:
                    if e < last + 8 or e > b:
                        return None, "bad entry offsets in index %s" % iname
                    entries.append(arena[last:e]); last = e
                if last != b or m != n:
                    return None, "bad entry offsets in index %s" % iname
                indexes.append({"name": iname, "entries": entries})
            if any(rowids[i] >= rowids[i + 1] for i in range(len(rowids) - 1)):
                return None, "rowids of space %d out of order" % space
            tables.append({"space": space, "name": name, "rowids": rowids, "indexes": indexes})
        if p != end:
            return None, "%d bytes after the last table" % (end - p)
        return {"version": 2, "stamp": stamp, "tables": tables}, None
    # Version 3: metadata, then the data; a checksum per block.
    if len(d) < 40:
        return None, "too short"
    stamp = u64(d, 12)
    meta = u32(d, 20)
    if meta < 40 or meta > len(d):
        return None, "metadata length %d outside the file" % meta
    if crc32c(d, 0, meta - 4) != u32(d, meta - 4):
        return None, "metadata checksum mismatch"
    if u32(d, 24) != DAO_RIDS_PER_BLOCK or u32(d, 28) != DAO_ENTRIES_PER_BLOCK:
        return None, "block sizes %d/%d" % (u32(d, 24), u32(d, 28))
    p = 36
    layout = []       # (table dict, [(index name, m, b)])
    blocks = 0
    for _ in range(u32(d, 32)):
        space = u32(d, p); l = u32(d, p + 4); name = d[p + 8:p + 8 + l].decode(); p += 8 + l
        n = u64(d, p); ic = u32(d, p + 8); p += 12
        blocks += (n + DAO_RIDS_PER_BLOCK - 1) // DAO_RIDS_PER_BLOCK
        idx = []
        for _ in range(ic):
            l = u32(d, p); iname = d[p + 4:p + 4 + l].decode(); p += 4 + l
            m = u64(d, p); b = u64(d, p + 8); p += 16
            if m != n or b < 8 * m or b > 0xFFFFFFFF:
                return None, "index %s: %d entries of %d bytes for %d rows" % (iname, m, b, n)
            blocks += (m + DAO_ENTRIES_PER_BLOCK - 1) // DAO_ENTRIES_PER_BLOCK
            idx.append((iname, m, b))
        layout.append(({"space": space, "name": name, "n": n}, idx))
        if p > meta - 4:
            return None, "tables past the metadata"
    if p + 4 * blocks != meta - 4:
        return None, "%d block checksums do not fill the metadata" % blocks
    sums = [u32(d, p + 4 * k) for k in range(blocks)]
    data = meta
    block = 0
    for table, idx in layout:
        n = table["n"]
        if data + 8 * n > len(d):
            return None, "data past the end of the file"
        raw = [u64(d, data + 8 * i) for i in range(n)]
        rowids = [v - (1 << 64) if v >> 63 else v for v in raw]
        for start in range(0, n, DAO_RIDS_PER_BLOCK):
            stop = min(start + DAO_RIDS_PER_BLOCK, n)
            if crc32c(d, data + 8 * start, data + 8 * stop) != sums[block]:
                return None, "rowid block %d failed its checksum" % block
            lo = start if start == 0 else start - 1
            if any(rowids[i] >= rowids[i + 1] for i in range(lo, stop - 1)):
                return None, "rowid block %d out of order" % block
            block += 1
        data += 8 * n
        indexes = []
        for iname, m, b in idx:
            if data + 4 * m + b > len(d):
                return None, "data past the end of the file"
            ends_at, arena_at = data, data + 4 * m
            ends = [u32(d, ends_at + 4 * i) for i in range(m)]
            entries = []
            for start in range(0, m, DAO_ENTRIES_PER_BLOCK):
                stop = min(start + DAO_ENTRIES_PER_BLOCK, m)
                first = 0 if start == 0 else ends[start - 1]
                last = first
                for i in range(start, stop):
                    if ends[i] < last + 8 or ends[i] > b:
                        return None, "entry block %d: bad end offsets" % block
                    entries.append(bytes(d[arena_at + last:arena_at + ends[i]]))
                    last = ends[i]
                crc = crc32c(d[ends_at + 4 * start:ends_at + 4 * stop] + d[arena_at + first:arena_at + last])
                if crc != sums[block]:
                    return None, "entry block %d failed its checksum" % block
                block += 1
            data += 4 * m + b
            indexes.append({"name": iname, "entries": entries})
        tables.append({"space": table["space"], "name": table["name"], "rowids": rowids, "indexes": indexes})
    if data != len(d):
        return None, "%d bytes after the last table" % (len(d) - data)
    return {"version": 3, "stamp": stamp, "tables": tables}, None


def read_dao_journal(live, space, ckpt, value_of):
    """The journal of the checkpoint (FORMAT.md "DAO index checkpoint", the journal): the
    records keyed `j`, stamp, sequence (both u64 big-endian) in the `dao.checkpoint` space,
    sequences 0, 1, 2, ... Returns ({space: {rowid: [entry per index] or None}}, None), or
    (None, why) when they do not fit the file."""
    prefix = b"j" + ckpt["stamp"].to_bytes(8, "big")
    keys = sorted(k for (sp, k) in live if sp == space and k.startswith(prefix))
    index_counts = {t["space"]: len(t["indexes"]) for t in ckpt["tables"]}
    named = {}
    for n, key in enumerate(keys):
        if key != prefix + n.to_bytes(8, "big"):
            return None, "record %d missing" % n
        try:
            v = value_of(live[(space, key)])
        except CannotDecode as e:
            return None, "record %d: %s" % (n, e)
        at = [0]

        def take(k):
            if at[0] + k > len(v):
                raise Truncated()
            at[0] += k
            return v[at[0] - k:at[0]]
        try:
            if take(1)[0] != 1:
                return None, "record %d: version %d" % (n, v[0])
            for _ in range(u32(take(4), 0)):
                tspace, x, rows = u32(take(4), 0), u32(take(4), 0), u32(take(4), 0)
                if index_counts.get(tspace) != x:
                    return None, "record %d names a table the checkpoint does not have" % n
                for _ in range(rows):
                    rowid = int.from_bytes(take(8), "little", signed=True)
                    flag = take(1)[0]
                    if rowid in named.setdefault(tspace, {}):   # per table: (key space, rowid)
                        return None, "record %d names row %d again" % (n, rowid)
                    if flag == 0:
                        named[tspace][rowid] = None
                    elif flag == 1:
                        named[tspace][rowid] = [bytes(take(u32(take(4), 0))) for _ in range(x)]
                    else:
                        return None, "record %d: row flag %d" % (n, flag)
            if at[0] != len(v):
                return None, "record %d: %d bytes after the last table" % (n, len(v) - at[0])
        except Truncated:
            return None, "record %d ends early" % n
    for tspace, rows in named.items():
        rowids = set(next(t["rowids"] for t in ckpt["tables"] if t["space"] == tspace))
        for rowid, entries in rows.items():
            if (rowid in rowids) != (entries is not None):
                return None, "row %d is not in the checkpoint as named" % rowid
    return named, None


def check_dao_indexes(directory, now_ms, report):
    """--dao-indexes: checks dao-indexes against the store's rows (FORMAT.md "DAO index
    checkpoint"): every block, the record naming its stamp, each table's rowids against the
    live row keys of its space and each index's entries (their row keys) against the rowids.
    One JSON line per table on stdout; exit 1 on any disagreement."""
    path = os.path.join(directory, "dao-indexes")
    if not os.path.exists(path):
        print(dumps({"dao_indexes": None}))
        return 0
    with open(path, "rb") as f:
        d = f.read()
    ckpt, problem = parse_dao_indexes(d)
    if ckpt is None:
        print("DISAGREE: dao-indexes unusable: %s (the engine rebuilds the indexes from the rows)" % problem)
        return 1
    store = Store(directory, report).load()
    best = newest_by_key(store.applied_records(), report)
    live = {(r.space, r.key): r for r in live_records(best, now_ms)}
    spaces = {}
    for (space, key), r in live.items():
        if space == KEYCHECK_SPACE and key.startswith(b"space/") and len(r.value) == 4:
            spaces[key[len(b"space/"):].decode("utf-8", "replace")] = u32(r.value, 0)
    bad = 0
    record = None
    # Compressed records (FORMAT.md "Values"; dictionaries are zdict/<id> records) are read
    # through decode_value; an encrypted store's DAO records need keys this mode does not take.
    dictionaries = {}
    for (space, key), r in live.items():
        if space == KEYCHECK_SPACE and key.startswith(b"zdict/"):
            try:
                dictionaries[int(key[len(b"zdict/"):].decode())] = r.value
            except ValueError:
                pass

    def value_of(r):
        value, error = decode_value(r, {}, dictionaries)
        if error is not None:
            raise CannotDecode(error)
        return value
    if "dao.checkpoint" in spaces:
        r = live.get((spaces["dao.checkpoint"], b"indexes"))
        try:
            record = value_of(r) if r is not None else None
        except CannotDecode as e:
            print("DISAGREE: the checkpoint record: %s" % e)
            return 1
    current = record is not None and len(record) == 9 and record[0] in (2, 3) and u64(record, 1) == ckpt["stamp"]
    journal = {}
    if current and record[0] == 3:
        journal, problem = read_dao_journal(live, spaces["dao.checkpoint"], ckpt, value_of)
        if journal is None:
            print("DISAGREE: the checkpoint's journal: %s (the engine rebuilds the indexes from the rows)" % problem)
            return 1
    print(dumps({"dao_indexes": ckpt["version"], "stamp": ckpt["stamp"], "current": current,
                 "journal_rows": sum(len(named) for named in journal.values())}))
    for t in ckpt["tables"]:
        named = journal.get(t["space"], {})
        if named:
            # The tables are the file with the journal applied: each named row's entries as the
            # checkpoint had them go, and the named rows live now come in (their entries are
            # the rows' own; only their rowids are checked here).
            live_ids = set()
            for rowid in named:
                key = ((rowid % (1 << 64)) ^ (1 << 63)).to_bytes(8, "big")
                if (t["space"], key) in live:
                    live_ids.add(rowid)
            kept = [r for r in t["rowids"] if r not in named]
            t = dict(t, rowids=sorted(kept + list(live_ids)))
            indexes = []
            for k, i in enumerate(t["indexes"]):
                old = set(e for entries in named.values() if entries is not None for e in [entries[k]])
                remaining = [e for e in i["entries"] if e not in old]
                if len(i["entries"]) - len(remaining) != len(old):
                    print("DISAGREE: the journal names an entry index %s does not have" % i["name"])
                    return 1
                indexes.append(dict(i, entries=remaining, added=sorted(live_ids)))
            t["indexes"] = indexes
        def signed(v):
            return v - (1 << 64) if v >> 63 else v
        # Row key: the rowid XOR 2^63, big-endian (FORMAT.md "DAO tables").
        stored = sorted(signed(int.from_bytes(key, "big") ^ (1 << 63)) for (space, key), r in live.items()
                        if space == t["space"] and len(key) == 8)
        line = {"space": t["space"], "table": t["name"], "rows": len(t["rowids"]),
                "indexes": [{"name": i["name"], "entries": len(i["entries"]) + len(i.get("added", []))} for i in t["indexes"]]}
        if current and stored != t["rowids"]:
            line["disagree"] = "rowids differ from the live row keys of space %d" % t["space"]
        for i in t["indexes"]:
            ids = sorted([signed(int.from_bytes(e[-8:], "big") ^ (1 << 63)) for e in i["entries"]] + i.get("added", []))
            if ids != t["rowids"] or any(i["entries"][k] >= i["entries"][k + 1] for k in range(len(i["entries"]) - 1)):
                line["disagree"] = "index %s: entries not in order or not one per rowid" % i["name"]
        if "disagree" in line:
            bad += 1
        print(dumps(line))
    return 1 if bad else 0


def b64(b):
    return base64.b64encode(b).decode("ascii")


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"))

# ---------------------------------------------------------------------------
# Self-test against FORMAT.md.

class SelfTestFailure(Exception):
    pass


def _module_available(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False


def selftest_values(doc, check, skip, hex_block):
    """FORMAT.md's "Values", "Keys" and "Nonces" sections and the worked example "Encrypted
    and compressed records": constants, the key check value, HKDF, and decryption and
    decompression of the two example records (and refusals of altered copies)."""
    flat = re.sub(r"\s+", " ", doc)   # prose wraps lines anywhere

    def doc_hex(pattern, what):
        m = re.search(pattern, flat)
        check(m is not None, "%s not found in FORMAT.md" % what)
        return bytes.fromhex(m.group(1)) if m else None

    def reseal(rec_bytes):   # recompute a record's CRC-32C after an edit
        rec_bytes = bytearray(rec_bytes)
        rec_bytes[0:4] = crc32c(rec_bytes, 4).to_bytes(4, "little")
        return bytes(rec_bytes)

    # --- constants the prose gives
    m = re.search(r"HMAC-SHA256\(key, ASCII `([^`]+)`\)", flat)
    check(m is not None and m.group(1).encode() == KEYCHECK_MESSAGE,
          "key check message: doc %r, reader %r" % (m and m.group(1), KEYCHECK_MESSAGE))
    check(re.search(r"key space 0xFFFFFFFF \(the engine's own\) whose key is the ASCII text "
                    r"`keycheck/` followed by the decimal key id \(`keycheck/1`\)", flat) is not None
          and keycheck_record_key(1) == b"keycheck/1" and KEYCHECK_SPACE == 0xFFFFFFFF,
          "key check record (space 0xFFFFFFFF, key keycheck/ID) not as the reader has it")
    m = re.search(r"\*\*HKDF-SHA256\*\* \(RFC 5869\): input keying material = the string's UTF-8 "
                  r"bytes, salt = ASCII `([^`]+)`, info = ASCII `([^`]+)`, length (\d+)", flat)
    check(m is not None, "HKDF derivation sentence not found in FORMAT.md")
    if m:
        check(m.group(1).encode() == HKDF_SALT and m.group(2).encode() == HKDF_INFO
              and int(m.group(3)) == AES_KEY_SIZE,
              "HKDF parameters: doc salt %r info %r length %s" % m.groups())
    m = re.search(r"`flags AND 0x([0-9A-Fa-f]{2})`", flat)
    check(m is not None and int(m.group(1), 16) == 0x7B == 0xFF & ~(F_BATCH | F_FOLLOWER),
          "the AAD's flag mask is not 0x7B = every bit but the batch bits 0x04 and 0x80")

    # --- HKDF-SHA256 itself: RFC 5869 test cases A.1 and A.3 (the document gives no vector
    # of its own for a derived key; tools/check_format.sh checks one against the engine)
    okm = hkdf_sha256(bytes([0x0B] * 22), bytes(range(13)), bytes(range(0xF0, 0xFA)), 42)
    check(okm.hex() == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf3400"
                       "7208d5b887185865", "HKDF-SHA256 fails RFC 5869 test case A.1")
    okm = hkdf_sha256(bytes([0x0B] * 22), b"", b"", 42)
    check(okm.hex() == "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d20"
                       "1395faa4b61a96c8", "HKDF-SHA256 fails RFC 5869 test case A.3")
    check(derive_key("x") == hkdf_sha256(b"x", HKDF_SALT, HKDF_INFO, 32) and len(derive_key("é")) == 32,
          "derive_key is not HKDF over the string's UTF-8 bytes")

    # --- the example key and its check value
    m = re.search(r"AES-256 key `00 01 02 \.\.\. 1f` \(the bytes 0 to 31\) as key id (\d+)", flat)
    check(m is not None, "the example key sentence not found")
    key_id = int(m.group(1)) if m else 1
    key = bytes(range(32))
    want = doc_hex(r"check value for key id 1 \(record `keycheck/1` in space 0xFFFFFFFF\) would be "
                   r"`([0-9a-f ]+)`", "the example key's check value")
    if want is not None:
        check(key_check_value(key) == want, "check value of key 0..31 is %s, doc says %s"
              % (key_check_value(key).hex(), want.hex()))

    # --- the encrypted record
    try:
        enc_lines, comp_lines = hex_block("encrypted"), hex_block("compressed")
    except SelfTestFailure as e:
        check(False, str(e))
        return
    image = bytearray(SEG_HEADER_SIZE)   # "as the first record of a store": offset 0x20
    for off, data, _ in enc_lines + comp_lines:
        check(off == len(image), "example hex line at %08x, the bytes before it end at %08x"
              % (off, len(image)))
        image += data
    image = bytes(image)
    enc = parse_record(image, SEG_HEADER_SIZE, len(image))
    check(enc is not None, "the encrypted example record does not parse or fails its CRC-32C")
    if enc is None:
        return
    nonce = doc_hex(r"nonce happened to be `([0-9a-f ]+)` `", "the example nonce's random prefix")
    counter = doc_hex(r"nonce happened to be `[0-9a-f ]+` `([0-9a-f ]+)`", "the example nonce's counter")
    check(enc.flags == F_ENCRYPTED and enc.sequence == 1 and enc.space == 0 and enc.key == b"secret"
          and enc.key_id == key_id and len(enc.value) == 5 + GCM_TAG_SIZE,
          "encrypted example: flags %#x seq %d space %d key %r key id %s value length %d"
          % (enc.flags, enc.sequence, enc.space, enc.key, enc.key_id, len(enc.value)))
    if nonce is not None and counter is not None:
        check(enc.nonce == nonce + counter and len(nonce) == 8 and u32(counter, 0) == 1,
              "example nonce %s is not the prefix %s + little-endian counter 1"
              % (enc.nonce.hex(), nonce.hex()))
    check(enc.value[-GCM_TAG_SIZE:] == enc_lines[-1][1], "the last 16 value bytes are not the tag line")
    aad = doc_hex(r"the AAD is `10` \(flags AND 0x7B\) followed by the record's bytes from "
                  r"offset 5 to the end of the key: `([0-9a-f ]+)`", "the example AAD")
    check(aad is not None and enc.aad == aad,
          "AAD built from the record %s differs from the doc's %s" % (enc.aad.hex(), aad and aad.hex()))
    want = doc_hex(r"the result is `([0-9a-f ]+)`", "the example plaintext")
    if not _module_available("cryptography"):
        skip("AES-GCM checks: the Python package 'cryptography' is not installed")
    else:
        value, error = decode_value(enc, {key_id: key})
        check(value == want == b"hello", "decrypting the example gives %r (%s), doc says %r"
              % (value, error, want))
        rec = image[enc.offset:enc.end]

        def decoded(edited, keys={key_id: key}):
            r = parse_record(edited, 0, len(edited))
            return decode_value(r, keys) if r is not None else (None, "does not parse")
        # the batch bits are outside the AAD (compaction clears them) ...
        for flags in (F_ENCRYPTED | F_FOLLOWER, F_ENCRYPTED | F_BATCH):
            edited = reseal(rec[:4] + bytes([flags]) + rec[5:])
            check(decoded(edited)[0] == b"hello", "flags %#x: batch bits must not be authenticated" % flags)
        # ... every other header byte, the key, the ciphertext and the tag are
        edits = {"purgeable flag": (4, F_ENCRYPTED | F_PURGEABLE), "sequence": (5, 2),
                 "key space": (6, 1), "nonce": (12, 9), "key": (22, ord("S")),
                 "ciphertext": (28, rec[28] ^ 1), "tag": (len(rec) - 1, rec[-1] ^ 1)}
        for what, (pos, byte) in edits.items():
            edited = reseal(rec[:pos] + bytes([byte]) + rec[pos + 1:])
            value, error = decoded(edited)
            check(value is None and "authentication failed" in (error or ""),
                  "a record with its %s changed still decrypts (%r)" % (what, value))
        check(decoded(rec, {key_id: bytes(32)})[0] is None, "the example decrypts under a wrong key")
        value, error = decoded(rec, {})
        check(value is None and "key id 1" in error, "no key: %r %r" % (value, error))

    # --- the compressed record
    comp = parse_record(image, enc.end, len(image))
    check(comp is not None and comp.offset == comp_lines[0][0],
          "the compressed example record does not parse at %08x" % enc.end)
    if comp is None:
        return
    m = re.search(r"A (\d+)-byte JSON value `([^`]+)` stored under \"(\w+)\"", flat)
    check(m is not None, "the compressed example's value sentence not found")
    json_value = m.group(2).encode() if m else b""
    check(comp.flags == F_COMPRESSED and comp.sequence == 2 and comp.key == (m.group(3).encode() if m else b"doc")
          and comp.raw_length == len(json_value) == (int(m.group(1)) if m else -1)
          and len(comp.value) == 39 and comp.value[:4] == ZSTD_MAGIC,
          "compressed example: flags %#x seq %d key %r raw length %s value length %d"
          % (comp.flags, comp.sequence, comp.key, comp.raw_length, len(comp.value)))
    quiet = Reporter(quiet=True)
    scan = scan_records(image, 1, SEG_HEADER_SIZE, len(image), "values-example", quiet)
    check(len(scan.applied) == 2 and not quiet.lines, "the two example records do not scan cleanly: %s"
          % quiet.lines)
    if not _module_available("zstandard"):
        skip("zstd checks: the Python package 'zstandard' is not installed")
        return
    value, error = decode_value(comp, {})
    check(value == json_value, "decompressing the example gives %r (%s)" % (value, error))
    rec = image[comp.offset:comp.end]
    raw_at = comp.end - comp.offset - len(comp.value) - len(comp.key) - 1   # raw length: 1-byte varint
    check(rec[raw_at] == 56, "raw length byte not where expected")
    for what, edited in (
            ("raw length 57", reseal(rec[:raw_at] + bytes([57]) + rec[raw_at + 1:])),
            ("raw length 55", reseal(rec[:raw_at] + bytes([55]) + rec[raw_at + 1:])),
            ("a byte after the frame", reseal(rec[:8] + bytes([40]) + rec[9:] + b"\x00")),
            ("a damaged frame", reseal(rec[:-3] + bytes([rec[-3] ^ 0xFF]) + rec[-2:]))):
        r = parse_record(edited, 0, len(edited))
        value, error = decode_value(r, {}) if r is not None else (None, "does not parse")
        check(value is None and error, "%s: a frame that does not match its record decoded to %r"
              % (what, value))


def selftest_rekey(doc, check, skip):
    """FORMAT.md's "Rekeying": the rekey record's layout and AAD texts, and the reader's use of
    it, on a rekey record built here as the section describes (the document has no example)."""
    flat = re.sub(r"\s+", " ", doc)
    m = re.search(r"the \*\*rekey record\*\*, key `rekey`, (\d+) bytes: old key id \(u32\), new key id "
                  r"\(u32\), then the new key wrapped under the old one, then the old key wrapped under "
                  r"the new one\. A wrapped key is a 12-byte random nonce followed by AES-256-GCM\(wrapping "
                  r"key, that nonce, AAD, the 32-byte key\) and its 16-byte tag, with AAD the ASCII text "
                  r"`([^`]+)` for the first and `([^`]+)` for the second", flat)
    check(m is not None, "the rekey record sentence not found in FORMAT.md")
    if m:
        check(int(m.group(1)) == REKEY_RECORD_SIZE == 4 + 4 + 2 * (12 + 32 + 16),
              "rekey record size: doc %s, reader %d" % (m.group(1), REKEY_RECORD_SIZE))
        check(m.group(2).encode() == REKEY_NEW_KEY_AAD and m.group(3).encode() == REKEY_OLD_KEY_AAD,
              "rekey AAD texts: doc %r %r" % (m.group(2), m.group(3)))
    check(re.search(r"writes `rekeyed/<old id>` \(decimal\), whose value is the new key id \(u32\)\. An "
                    r"opener that presents a key whose id has a `rekeyed/` record is refused", flat)
          is not None, "the rekeyed/<old id> sentence not found in FORMAT.md")
    if not _module_available("cryptography"):
        skip("rekey checks: the Python package 'cryptography' is not installed")
        return
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    old_key, new_key = bytes(range(32)), bytes(range(100, 132))

    def wrap(wrapping, key, aad, nonce):
        return nonce + AESGCM(wrapping).encrypt(nonce, key, aad)
    value = ((1).to_bytes(4, "little") + (2).to_bytes(4, "little")
             + wrap(old_key, new_key, REKEY_NEW_KEY_AAD, bytes(12))
             + wrap(new_key, old_key, REKEY_OLD_KEY_AAD, bytes([1] * 12)))

    def record(key, val, seq):
        r = Record()
        r.space, r.key, r.value, r.sequence, r.flags = KEYCHECK_SPACE, key, val, seq, 0
        return r
    best = {(KEYCHECK_SPACE, r.key): r for r in (
        record(b"keycheck/1", key_check_value(old_key), 1), record(b"keycheck/2", key_check_value(new_key), 2),
        record(b"rekey", value, 3))}
    quiet = Reporter(quiet=True)
    check(check_keys(best, {1: old_key}, quiet) == {1: old_key, 2: new_key},
          "the new key is not unwrapped from the rekey record with the old one")
    check(check_keys(best, {2: new_key}, quiet) == {1: old_key, 2: new_key},
          "the old key is not unwrapped from the rekey record with the new one")
    swapped = dict(best)
    swapped[(KEYCHECK_SPACE, b"rekey")] = record(b"rekey", value[:8] + value[68:] + value[8:68], 3)
    check(check_keys(swapped, {1: old_key}, quiet) == {1: old_key},
          "a wrapped key opened with the other direction's AAD")
    best[(KEYCHECK_SPACE, b"rekeyed/1")] = record(b"rekeyed/1", (2).to_bytes(4, "little"), 4)
    del best[(KEYCHECK_SPACE, b"rekey")]
    try:
        check_keys(best, {1: old_key}, quiet)
        check(False, "a key id retired by rekeyed/1 is not refused")
    except RetiredKey as e:
        check("key id 2" in str(e), "the refusal does not name the new key id: %s" % e)
    check(check_keys(best, {2: new_key}, quiet) == {2: new_key}, "the new key is refused after the rekey")


def selftest(format_path):
    failures = []
    passed = [0]
    skipped = []

    def skip(msg):
        skipped.append(msg)
        print("SKIPPED: " + msg)

    def check(cond, msg):
        if cond:
            passed[0] += 1
        else:
            failures.append(msg)
            print("FAIL: " + msg)

    with open(format_path, encoding="utf-8") as f:
        doc = f.read()

    # --- CRC-32C
    m = re.search(r"check value of the nine ASCII\s+bytes `123456789` is `0x([0-9A-Fa-f]{8})`", doc)
    check(m is not None, "CRC check value sentence not found in FORMAT.md")
    if m:
        check(crc32c(b"123456789") == int(m.group(1), 16),
              "crc32c('123456789') = %08x, doc says %s" % (crc32c(b"123456789"), m.group(1)))
    check(crc32c(b"") == 0, "crc32c of no bytes is not 0")
    if m:
        check(crc32c_bytewise(b"123456789") == int(m.group(1), 16), "bit-wise CRC-32C check value")
    sample = bytes((i * 131 + 7) & 0xFF for i in range(1000))
    for a, b_ in ((0, 1000), (3, 17), (5, 5), (1, 999), (0, 8), (2, 10)):
        check(crc32c(sample, a, b_) == crc32c_bytewise(sample[a:b_]),
              "sliced CRC-32C differs from the bit-wise one on bytes %d..<%d" % (a, b_))

    # --- hash64 vectors
    vecs = re.findall(r'hash64\("([^"]*)", 0\) =\s*\n?\s*0x([0-9a-fA-F]{16})', doc)
    check(len(vecs) == 5, "expected 5 hash64 test vectors in FORMAT.md, found %d" % len(vecs))
    for s, h in vecs:
        got = hash64(s.encode(), 0)
        check(got == int(h, 16), 'hash64("%s", 0) = %016x, doc says %s' % (s, got, h))

    # --- key hash vectors
    m = re.search(r'key hash of\s+"([^"]+)" in space (\d+) = `0x([0-9a-fA-F]{16})` \(tag '
                  r'`0x([0-9a-fA-F]{8})`\), in space (\d+) =\s*`0x([0-9a-fA-F]{16})`', doc)
    check(m is not None, "key-hash test vector sentence not found in FORMAT.md")
    if m:
        key = m.group(1).encode()
        s1, h1, t1, s2, h2 = int(m.group(2)), int(m.group(3), 16), int(m.group(4), 16), \
            int(m.group(5)), int(m.group(6), 16)
        check(key_hash(s1, key) == h1, "key hash(%s, space %d) = %016x, doc says %016x"
              % (key, s1, key_hash(s1, key), h1))
        check(tag_of(s1, key) == t1, "tag(%s, space %d) = %08x, doc says %08x"
              % (key, s1, tag_of(s1, key), t1))
        check(key_hash(s2, key) == h2, "key hash(%s, space %d) = %016x, doc says %016x"
              % (key, s2, key_hash(s2, key), h2))

    # --- zigzag (both directions, 64-bit)
    for dlt in (0, -1, 1, -2, 2, 2**31, -(2**32 - 1), 2**32 - 1):
        z = ((dlt << 1) ^ (dlt >> 63)) & MASK64
        check(zigzag_decode(z) == dlt, "zigzag round trip of %d" % dlt)
    check(((-1 << 1) ^ (-1 >> 63)) & MASK64 == 1, "zigzag(-1) != 1")

    # --- varint examples in the conventions
    check(read_varint(bytes([0x01]), 0, 1)[0] == 1, "varint 01 != 1")
    check(read_varint(bytes([0xAC, 0x02]), 0, 2)[0] == 300, "varint AC 02 != 300")

    # --- worked example hex dump
    def hex_block(name):
        mm = re.search(r"<!-- %s-hex-begin -->\s*```[^\n]*\n(.*?)```\s*<!-- %s-hex-end -->"
                       % (name, name), doc, re.S)
        if mm is None:
            raise SelfTestFailure("block %s-hex not found" % name)
        lines = []
        for line in mm.group(1).splitlines():
            if not line.strip():
                continue
            lm = re.match(r"^([0-9a-fA-F]{8}): ((?:[0-9a-fA-F]{2} )*[0-9a-fA-F]{2})(?:  (.*))?$", line)
            if lm is None:
                raise SelfTestFailure("unparsable hex line in %s block: %r" % (name, line))
            lines.append((int(lm.group(1), 16), bytes.fromhex(lm.group(2)), lm.group(3) or ""))
        return lines

    try:
        hdr_lines = hex_block("header")
        rec_lines = hex_block("records")
    except SelfTestFailure as e:
        check(False, str(e))
        hdr_lines, rec_lines = [], []
    image = bytearray()
    for off, data, comment in hdr_lines + rec_lines:
        check(off == len(image), "hex line at offset %08x, but the bytes before it end at %08x"
              % (off, len(image)))
        image += data
    m = re.search(r"`00000001\.seg`, (\d+) bytes", doc)
    check(m is not None, "segment size sentence not found")
    if m:
        check(len(image) == int(m.group(1)), "hex dump is %d bytes, prose says %s"
              % (len(image), m.group(1)))

    h, problem = parse_segment_header(image)
    check(h is not None, "worked-example header does not parse: %s" % problem)
    if h is not None:
        check(h.checksum_ok, "worked-example header checksum invalid")
        check(h.segment_id == 1 and h.flags == 0 and h.version == 2 and h.header_size == 32,
              "worked-example header fields: id %d flags %d version %d size %d"
              % (h.segment_id, h.flags, h.version, h.header_size))
        mc = re.search(r"created (\d+) ms", hdr_lines[-1][2] if hdr_lines else "")
        if mc:
            check(h.created == int(mc.group(1)), "created %d, comment says %s"
                  % (h.created, mc.group(1)))

    # --- the sync mark slot of the worked example: segment 1 durable to its end, next seq 6
    try:
        mark_lines = hex_block("syncmark")
        slot = b"".join(data for _, data, _ in mark_lines)
        check(len(slot) == 32, "sync mark slot is %d bytes, not 32" % len(slot))
        mark = parse_sync_mark_file(slot)
        check(mark is not None, "worked-example sync mark slot is not valid")
        check(mark == (1, len(image), 6), "worked-example sync mark is %s, expected (1, %d, 6)"
              % (mark, len(image)))
    except SelfTestFailure as e:
        check(False, str(e))

    quiet = Reporter(quiet=True)
    scan = scan_records(bytes(image), 1, 32, len(image), "worked-example", quiet)
    check(not quiet.lines, "problems decoding the worked example: %s" % quiet.lines)
    check(len(scan.records) == len(rec_lines) == 5,
          "expected 5 records, decoded %d (hex lines %d)" % (len(scan.records), len(rec_lines)))
    check([r.offset for r in scan.records] == [o for o, _, _ in rec_lines],
          "record offsets %s differ from the hex lines' offsets %s"
          % ([r.offset for r in scan.records], [o for o, _, _ in rec_lines]))
    recs = scan.records
    if len(recs) == 5:
        check([r.sequence for r in recs] == [1, 2, 3, 4, 5], "sequences are not 1..5")
        r1, r2, r3, r4, r5 = recs
        check(r1.key == b"greeting" and r1.value == b"hello" and r1.flags == 0 and r1.space == 0,
              "record 1 is not put greeting=hello")
        mchk = re.search(r"`([0-9a-f ]{11})` \| checksum \| 0x([0-9A-F]{8}) = CRC-32C of the (\d+) "
                         r"bytes that follow", doc)
        check(mchk is not None, "record 1 checksum table row not found")
        if mchk:
            check(r1.checksum == int(mchk.group(2), 16), "record 1 checksum %08x, doc %s"
                  % (r1.checksum, mchk.group(2)))
            check(r1.length - 4 == int(mchk.group(3)), "record 1 has %d bytes after its checksum, doc"
                  " says %s" % (r1.length - 4, mchk.group(3)))
        me = re.search(r"Date\(timeIntervalSince1970: ([0-9_]+)\)", doc)
        exp_ms = int(me.group(1).replace("_", "")) * 1000 if me else None
        check(r2.space == 7 and r2.key == b"session" and r2.value == b"1" and r2.flags == F_EXPIRY,
              "record 2 is not put session=1 space 7 with expiry")
        check(r2.expiry == 1893456000000 and r2.expiry == exp_ms,
              "record 2 expiry %s, expected 1893456000000 (= 2030-01-01T00:00:00Z, and the Swift "
              "call's %s)" % (r2.expiry, exp_ms))
        check(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(r2.expiry // 1000)) ==
              "2030-01-01T00:00:00Z", "record 2 expiry is not 2030-01-01")
        check(r3.is_tombstone() and r3.key == b"greeting" and r3.space == 0 and r3.value == b"",
              "record 3 is not a tombstone of greeting")
        check(r4.flags == F_BATCH and r4.key == b"a" and r4.value == b"1",
              "record 4 is not batch put a=1 with 0x04")
        check(r5.flags == F_FOLLOWER and r5.key == b"b" and r5.value == b"2", "record 5 is not the batch follower put b=2 with 0x80")

    def state(img, now):
        rep = Reporter(quiet=True)
        sc = scan_records(bytes(img), 1, 32, len(img), "t", rep)
        best = newest_by_key(sc.applied)
        return {(r.space, r.key): r.value for r in live_records(best, now)}, rep, sc

    before_2030 = 1893456000000 - 1
    live, _, _ = state(image, before_2030)
    check(live == {(0, b"a"): b"1", (0, b"b"): b"2", (7, b"session"): b"1"},
          "live keys before 2030: %r" % live)
    check((0, b"greeting") not in live, "greeting is not deleted")
    live, _, _ = state(image, 1893456000000)
    check(live == {(0, b"a"): b"1", (0, b"b"): b"2"},
          "at 2030-01-01 exactly session must have expired (\"at or before\"): %r" % live)

    # --- recovery rules on variations of the worked example
    if len(recs) == 5:
        # the file ending right after the batch's first record: it is dropped
        live, rep, sc = state(image[:recs[3].end], before_2030)
        check((0, b"a") not in live and len(sc.dropped) == 1,
              "a batch record followed by the end of the segment was not dropped")
        # reserved zero tail: clean end
        live, rep, sc = state(image + bytes(4096), before_2030)
        check(sc.tail == ("clean", len(image)) and not rep.lines and len(live) == 3,
              "zero tail is not a clean end")
        # garbage tail: torn
        live, rep, sc = state(image + b"\x01\x02\x03garbage" + bytes(100), before_2030)
        check(sc.tail and sc.tail[0] == "torn" and len(live) == 3, "garbage tail is not torn")
        # a corrupt byte inside record 2: skipped, resync at record 3
        bad = bytearray(image)
        bad[recs[1].offset + 12] ^= 0xFF
        live, rep, sc = state(bad, before_2030)
        check(sc.corrupt == [(recs[1].offset, recs[2].offset)] and (7, b"session") not in live
              and len(live) == 2, "corruption in record 2 not skipped precisely: %r %r"
              % (sc.corrupt, live))
        # corruption in the batch's last record: the batch's first record is dropped too
        bad = bytearray(image)
        bad[recs[4].offset + 9] ^= 0xFF
        live, rep, sc = state(bad + bytes(64), before_2030)
        check((0, b"a") not in live and (0, b"b") not in live and len(sc.dropped) == 1,
              "incomplete batch before a torn tail not dropped")
        # the "sixth byte" claim: first byte of every record's sequence is non-zero
        check(all(image[r.offset + 5] != 0 for r in recs), "a record's 6th byte is 0")

    # --- commit file and snapshot parsers on synthetic inputs (round trip of the layouts)
    body = b"UCMP" + (1).to_bytes(2, "little") + bytes(2) + (1).to_bytes(4, "little") + \
        (2).to_bytes(4, "little") + (5).to_bytes(4, "little") + (2).to_bytes(4, "little") + \
        (3).to_bytes(4, "little")
    c, problem = parse_commit_file(body + crc32c(body).to_bytes(4, "little"))
    check(c == ([5], [2, 3]), "commit file round trip: %r %r" % (c, problem))

    # FORMAT.md's version 2 example: key "a" in space 0 and "b" in space 7, both in segment 1.
    def table(space, slot, tag, offset):
        return space.to_bytes(4, "little") + (64).to_bytes(4, "little") + (1).to_bytes(4, "little") + \
            bytes([slot]) + tag.to_bytes(4, "little") + bytes([1]) + offset.to_bytes(4, "little")
    body = b"USNP" + (2).to_bytes(2, "little") + bytes(2) + (2).to_bytes(8, "little") + \
        (2).to_bytes(4, "little") + (1).to_bytes(4, "little") + (100).to_bytes(4, "little") + \
        (1).to_bytes(4, "little") + (2).to_bytes(8, "little") + (2).to_bytes(4, "little") + bytes(4) + \
        (1).to_bytes(4, "little") + (100).to_bytes(4, "little") + (80).to_bytes(8, "little") + \
        (2).to_bytes(4, "little") + bytes(4) + table(0, 3, 0xA1, 32) + table(7, 9, 0xB2, 64)
    snap, problem = parse_snapshot(body + crc32c(body).to_bytes(4, "little"))
    check(snap is not None and snap.entries == [(0xA1, 1, 32), (0xB2, 1, 64)] and snap.spaces == [0, 7]
          and snap.slots == [3, 9], "snapshot version 2 round trip: %r" % (problem,))
    snap, problem = parse_snapshot(body[:-1] + crc32c(body[:-1]).to_bytes(4, "little"))
    check(snap is None, "a truncated version 2 table is refused")

    # FORMAT.md's version 3 layout, built from its table: the same two keys, each space a table
    # of 64 slots (one block each) at the page offsets the format fixes.
    def slots_v3(slot, tag, offset):
        raw = bytearray(12 * 64)
        raw[12 * slot:12 * slot + 12] = tag.to_bytes(4, "little") + (1).to_bytes(4, "little") + offset.to_bytes(4, "little")
        return bytes(raw)
    tables_v3 = [(0, slots_v3(3, 0xA1, 32)), (7, slots_v3(9, 0xB2, 64))]
    meta_len = 56 + 24 + 24 * 2 + 4 * 2 + 4
    head = b"USNP" + (3).to_bytes(2, "little") + bytes(2) + (2).to_bytes(8, "little") + \
        (2).to_bytes(4, "little") + (1).to_bytes(4, "little") + (100).to_bytes(4, "little") + \
        (1).to_bytes(4, "little") + (2).to_bytes(8, "little") + (2).to_bytes(4, "little") + \
        (1024).to_bytes(4, "little") + meta_len.to_bytes(4, "little") + bytes(4) + \
        (1).to_bytes(4, "little") + (100).to_bytes(4, "little") + (80).to_bytes(8, "little") + \
        (2).to_bytes(4, "little") + bytes(4)
    head += (0).to_bytes(4, "little") + (64).to_bytes(4, "little") + (1).to_bytes(4, "little") + bytes(4) + (4096).to_bytes(8, "little")
    head += (7).to_bytes(4, "little") + (64).to_bytes(4, "little") + (1).to_bytes(4, "little") + bytes(4) + (8192).to_bytes(8, "little")
    head += b"".join(crc32c(t).to_bytes(4, "little") for _, t in tables_v3)
    head += crc32c(head).to_bytes(4, "little")
    file_v3 = head + bytes(4096 - len(head)) + tables_v3[0][1] + bytes(4096 - 768) + tables_v3[1][1]
    snap, problem = parse_snapshot(file_v3)
    check(snap is not None and snap.entries == [(0xA1, 1, 32), (0xB2, 1, 64)] and snap.spaces == [0, 7]
          and snap.slots == [3, 9], "snapshot version 3 round trip: %r" % (problem,))
    flipped = bytearray(file_v3)
    flipped[8192 + 12 * 9] ^= 1
    snap, problem = parse_snapshot(bytes(flipped))
    check(snap is None and "block 0" in problem, "a flipped slot byte fails its block checksum: %r" % (problem,))

    # --- values: keys, AES-256-GCM, zstd
    selftest_values(doc, check, skip, hex_block)
    selftest_rekey(doc, check, skip)

    skipped_note = ", %d group(s) skipped" % len(skipped) if skipped else ""
    if failures:
        print("selftest: %d check(s) FAILED, %d passed%s" % (len(failures), passed[0], skipped_note))
        return 1
    print("selftest: all %d checks passed%s" % (passed[0], skipped_note))
    return 0

# ---------------------------------------------------------------------------

def take_shared_lock(directory, report):
    """Behaves like FORMAT.md's read-only opener: flock(LOCK_SH | LOCK_NB) on LOCK, held until
    exit. Never creates LOCK. If a writer holds it, reads anyway (with a warning): the active
    segment may then change while it is read."""
    try:
        import fcntl
    except ImportError:
        return None
    path = os.path.join(directory, "LOCK")
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        report("LOCK: missing or unopenable; reading without a lock")
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        report("LOCK: held exclusively by a writer; reading anyway (results may be a moment's "
               "snapshot of a changing store)")
    return fd


class UsageError(Exception):
    pass


class KeyArguments:
    """Collects --key-hex / --app-key / --key-id / --key ID:HEX into {key id: key}. A --key-id
    belongs to the key just before it, or (given before any unpaired key) to the next one."""

    def __init__(self):
        self.pending = []       # [key id or None, key bytes, spelling], in order given
        self.waiting_id = None  # a --key-id given before its key

    def add_key(self, key, spelling, key_id=None):
        if key_id is None and self.waiting_id is not None:
            key_id, self.waiting_id = self.waiting_id, None
        self.pending.append([key_id, key, spelling])

    def add_id(self, text):
        key_id = parse_key_id(text)
        if self.pending and self.pending[-1][0] is None:
            self.pending[-1][0] = key_id
        elif self.waiting_id is None:
            self.waiting_id = key_id
        else:
            raise UsageError("two --key-id options with no key between them")

    def keys(self):
        if self.waiting_id is not None:
            raise UsageError("--key-id %d belongs to no --key-hex or --app-key" % self.waiting_id)
        out = {}
        for key_id, key, spelling in self.pending:
            key_id = 1 if key_id is None else key_id
            if key_id in out and out[key_id] != key:
                raise UsageError("two different keys for key id %d (%s)" % (key_id, spelling))
            out[key_id] = key
        return out


def parse_key_id(text):
    try:
        key_id = int(text, 10)
    except ValueError:
        raise UsageError("key id %r is not a decimal number" % text)
    if not 0 <= key_id < (1 << 32):
        raise UsageError("key id %d is not a 32-bit unsigned number" % key_id)
    return key_id


def parse_key_hex(text):
    if not re.fullmatch(r"[0-9a-fA-F]{64}", text):
        raise UsageError("a key must be 64 hexadecimal digits (32 bytes), got %d characters"
                         % len(text))
    return bytes.fromhex(text)


def main(argv):
    mode = "live"
    now_ms = None
    fmt = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "FORMAT.md")
    args = []
    key_args = KeyArguments()
    i = 0
    try:
        while i < len(argv):
            a = argv[i]
            takes_value = a in ("--now", "--format", "--key-hex", "--key-id", "--app-key", "--key")
            if takes_value and i + 1 >= len(argv):
                raise UsageError("%s needs a value" % a)
            if a == "--records":
                mode = "records"
            elif a == "--check-snapshot":
                mode = "check"
            elif a == "--dao-indexes":
                mode = "dao-indexes"
            elif a == "--selftest":
                mode = "selftest"
            elif a == "--now":
                i += 1
                now_ms = int(argv[i])
            elif a == "--format":
                i += 1
                fmt = argv[i]
            elif a == "--key-hex":
                i += 1
                key_args.add_key(parse_key_hex(argv[i]), "--key-hex")
            elif a == "--app-key":
                i += 1
                key_args.add_key(derive_key(argv[i]), "--app-key")
            elif a == "--key-id":
                i += 1
                key_args.add_id(argv[i])
            elif a == "--key":
                i += 1
                key_id, sep, hexkey = argv[i].partition(":")
                if not sep:
                    raise UsageError("--key takes ID:HEX")
                key_args.add_key(parse_key_hex(hexkey), "--key", parse_key_id(key_id))
            elif a in ("-h", "--help"):
                print(__doc__)
                return 0
            elif a.startswith("--"):
                raise UsageError("unknown option %s" % a)
            else:
                args.append(a)
            i += 1
        keys = key_args.keys()
    except (UsageError, ValueError) as e:
        print("read_store: %s" % e, file=sys.stderr)
        print(__doc__, file=sys.stderr)
        return 64
    if now_ms is None:
        now_ms = int(time.time() * 1000)
    if mode == "selftest":
        return selftest(fmt)
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 64
    directory = args[0]
    if not os.path.isdir(directory):
        print("read_store: %s is not a directory" % directory, file=sys.stderr)
        return 2
    report = Reporter()
    lock_fd = take_shared_lock(directory, report)
    if mode == "check":
        return check_snapshot(directory, now_ms, report)
    if mode == "dao-indexes":
        return check_dao_indexes(directory, now_ms, report)
    store = Store(directory, report).load()
    best = newest_by_key(store.applied_records(), report)
    try:
        keys = check_keys(best, keys, report)
    except (WrongKey, RetiredKey) as e:
        print("read_store: %s" % e, file=sys.stderr)
        return 2
    w = sys.stdout.write
    # FORMAT.md "Compression dictionaries": zdict/<id> records in the engine's key space.
    dictionaries = {}
    for (space, key), r in best.items():
        if space == KEYCHECK_SPACE and key.startswith(b"zdict/") and not r.is_tombstone():
            try:
                dictionaries[int(key[len(b"zdict/"):].decode())] = r.value
            except ValueError:
                report("record %r in the engine's key space is not a dictionary id" % key)

    def value_fields(r, obj):
        value, error = decode_value(r, keys, dictionaries)
        obj["value_base64"] = None if value is None else b64(value)
        obj["stored_base64"] = b64(r.value)
        if error is not None:
            obj["error"] = error
        return error

    if mode == "records":
        for r in store.all_records():
            obj = {"segment": r.segment, "offset": r.offset, "space": r.space,
                   "key_base64": b64(r.key), "sequence": r.sequence, "flags": r.flags}
            if r.key_id is not None:
                obj["key_id"] = r.key_id
            if r.raw_length is not None:
                obj["raw_length"] = r.raw_length
            value_fields(r, obj)
            w(dumps(obj) + "\n")
        return 0
    for r in live_records(best, now_ms):
        obj = {"space": r.space, "key_base64": b64(r.key), "sequence": r.sequence}
        error = value_fields(r, obj)
        if error is not None:
            report("space %d key %s (sequence %d): value not decoded: %s"
                   % (r.space, b64(r.key), r.sequence, error))
        w(dumps(obj) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
