#!/usr/bin/env python3
"""Decrypts a UnifiedStorage encrypted file (FORMAT.md, "Encrypted files"), written from
FORMAT.md alone. Needs the `cryptography` package (scripts/setup.sh installs it).

usage: tools/decrypt_file.py FILE STORAGE-KEY-HEX > plaintext
Exit status 0 with the plaintext on stdout; 1 with a message naming the failing segment."""
import hashlib, hmac, struct, sys
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.exceptions import InvalidTag

def hkdf_sha256(secret, salt, info, length=32):
    prk = hmac.new(salt, secret, hashlib.sha256).digest()
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out, counter = out + block, counter + 1
    return out[:length]

def decrypt(data, storage_key):
    header = data[:72]
    if len(header) < 72 or header[:8] != b"USFILEGC" or header[8] != 1:
        raise ValueError("not a version 1 encrypted file")
    segment_size = struct.unpack_from("<I", header, 12)[0]
    salt, prefix = header[16:48], header[48:55]
    key = hkdf_sha256(storage_key, salt, b"UnifiedStorage.Files.v1 file key")
    if hmac.new(key, header[:56], hashlib.sha256).digest()[:16] != header[56:72]:
        raise ValueError("wrong key (or altered header)")
    body, stored = data[72:], segment_size + 16
    count = max(1, -(-len(body) // stored))
    aead, plain = AESGCM(key), bytearray()
    for i in range(count):
        nonce = prefix + struct.pack(">I", i) + bytes([1 if i == count - 1 else 0])
        try:
            plain += aead.decrypt(nonce, body[i * stored:(i + 1) * stored], header)
        except InvalidTag:
            raise ValueError(f"segment {i} at byte {72 + i * stored} failed authentication")
    return bytes(plain)

if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        sys.stdout.buffer.write(decrypt(open(sys.argv[1], "rb").read(), bytes.fromhex(sys.argv[2])))
    except ValueError as error:
        sys.exit(f"{sys.argv[1]}: {error}")
