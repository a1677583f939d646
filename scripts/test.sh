#!/usr/bin/env bash
# Sets up and runs the whole test suite (debug build): every test once, then the store tests
# (LogStoreTests) again with encrypted + compressed stores (LOGSTORE_TEST_MODE, see
# Tests/LogStoreTests/TestSupport.swift), the concurrency tests under ThreadSanitizer, the
# FORMAT.md audit, a short run of every fuzzer, the DocC catalog build, and the benchmark harness
# in its quick size.
# Every stage runs even when an earlier one fails; the exit status is non-zero if any failed.
# Long soak runs are opt-in:
#   LOGSTORE_ALL_MODES=1 scripts/test.sh         # store tests in the encrypted and compressed modes alone too
#   LOGSTORE_CRASH_CYCLES=1000 scripts/test.sh    # the kill -9 crash campaign, 1000 cycles
#   FILES_CRASH_CYCLES=200 scripts/test.sh        # kill -9 during file replacement (Files), 200 cycles
#   DAO_MIGRATION_CRASH_CYCLES=200 swift test --filter DAOMigrationCrashTests  # kill -9 during schema upgrades (DAO)
#   FUZZ_RUNS=10000000 scripts/test.sh            # every fuzzer for 10 million executions
#   POWERLOSS_CUTS=0 POWERLOSS_OUTCOMES=5 swift test --filter PowerLoss   # every power-loss cut point (RELIABILITY.md)
#   SQLLOGICTEST_ALL=1 swift test --filter SQLLogicTests.testWholeCorpus  # all of ../shared/sqllogictest (CONFORMANCE.md)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build --build-tests
failed=()
LOGSTORE_TEST_MODE=plain swift test --skip-build || failed+=("plain")
# encrypted+compressed covers both value paths at once; LOGSTORE_ALL_MODES=1 also runs each alone.
modes="encrypted+compressed"
[ "${LOGSTORE_ALL_MODES:-0}" = "1" ] && modes="encrypted compressed encrypted+compressed"
for mode in $modes; do
    echo "=== LogStoreTests with LOGSTORE_TEST_MODE=$mode"
    LOGSTORE_TEST_MODE=$mode swift test --skip-build --filter LogStoreTests || failed+=("$mode")
done
# ThreadSanitizer over the concurrency tests (readers/writers/compaction, durable writers, close
# while busy, preferences hammering and user switching, the keydir walked in two parts at once,
# and the tests named Concurrency* of every module). Its own build directory; TSan exits
# non-zero when it reports a race.
# TSAN_FILTER overrides the selection (TSAN_FILTER=. runs the whole suite under TSan).
tsan_filter=${TSAN_FILTER:-"Concurrency|UserSwitching|StickySync|SpaceWalk|WalkedInTwoParts|SealPipeline"}
if swift build --build-tests --sanitize=thread --scratch-path .build-tsan; then
    echo "=== ThreadSanitizer: $tsan_filter"
    TSAN_OPTIONS="halt_on_error=1" swift test --skip-build --sanitize=thread --scratch-path .build-tsan --filter "$tsan_filter" || failed+=("tsan")
else
    failed+=("tsan-build")
fi
# FORMAT.md audit: an independent reader written from FORMAT.md alone must agree with the engine.
bash tools/check_format.sh "$(swift build --show-bin-path)/ustore" || failed+=("check_format")
# Every libFuzzer target briefly (FUZZ_RUNS=10000000 scripts/fuzz.sh is the long campaign).
FUZZ_RUNS=${FUZZ_RUNS:-30000} bash scripts/fuzz.sh || failed+=("fuzz")
# The DocC catalog (Sources/UnifiedStorage/UnifiedStorage.docc) builds, warnings as errors (~30 s).
swift package --disable-sandbox generate-documentation --target UnifiedStorage --warnings-as-errors > .build/docc.log 2>&1 \
    || { tail -20 .build/docc.log; failed+=("docs"); }
(cd Benchmarks && swift run -c release logstore-bench --quick) || failed+=("benchmarks")
if [ ${#failed[@]} -gt 0 ]; then
    echo "test.sh: failed: ${failed[*]}" >&2
    exit 1
fi
