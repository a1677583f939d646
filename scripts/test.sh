#!/usr/bin/env bash
# Sets up and runs the whole test suite (debug build): every test once, then the store tests
# (LogStoreTests) again with encrypted, compressed, and encrypted + compressed stores
# (LOGSTORE_TEST_MODE, see Tests/LogStoreTests/TestSupport.swift), then the FORMAT.md audit.
# Every stage runs even when an earlier one fails; the exit status is non-zero if any failed.
# Long soak runs are opt-in:
#   LOGSTORE_CRASH_CYCLES=1000 scripts/test.sh    # the kill -9 crash campaign, 1000 cycles
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build --build-tests
failed=()
LOGSTORE_TEST_MODE=plain swift test --skip-build || failed+=("plain")
for mode in encrypted compressed encrypted+compressed; do
    echo "=== LogStoreTests with LOGSTORE_TEST_MODE=$mode"
    LOGSTORE_TEST_MODE=$mode swift test --skip-build --filter LogStoreTests || failed+=("$mode")
done
# FORMAT.md audit: an independent reader written from FORMAT.md alone must agree with the engine.
bash tools/check_format.sh "$(swift build --show-bin-path)/ustore" || failed+=("check_format")
(cd Benchmarks && swift run -c release logstore-bench --quick) || failed+=("benchmarks")
if [ ${#failed[@]} -gt 0 ]; then
    echo "test.sh: failed: ${failed[*]}" >&2
    exit 1
fi
