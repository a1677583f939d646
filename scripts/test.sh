#!/usr/bin/env bash
# Sets up and runs the whole test suite (debug build). Long soak runs are opt-in:
#   LOGSTORE_CRASH_CYCLES=1000 scripts/test.sh    # the kill -9 crash campaign, 1000 cycles
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build --build-tests
swift test --skip-build
# FORMAT.md audit: an independent reader written from FORMAT.md alone must agree with the engine.
bash tools/check_format.sh "$(swift build --show-bin-path)/ustore"
