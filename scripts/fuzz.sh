#!/usr/bin/env bash
# Builds the libFuzzer targets of Fuzz/ (release, -sanitize=fuzzer) and runs each one.
#   bash scripts/fuzz.sh                      # every target, FUZZ_RUNS executions each (default 200000)
#   FUZZ_RUNS=10000000 bash scripts/fuzz.sh   # the issue's 10 million executions per target
#   FUZZ_TARGETS="fuzz-records" bash scripts/fuzz.sh
# Each target starts from its committed seeds (Fuzz/corpus/<name without fuzz->) and grows a
# working corpus in Fuzz/.work/ (not committed). A crash or hang stops the run with a non-zero
# exit; libFuzzer writes the input to Fuzz/findings/, to be turned into a regression test.
set -euo pipefail
cd "$(dirname "$0")/../Fuzz"
runs=${FUZZ_RUNS:-200000}
targets=${FUZZ_TARGETS:-"fuzz-records fuzz-snapshot fuzz-sql fuzz-sql-exec fuzz-config fuzz-expression"}
swift build -c release --sanitize=fuzzer -Xswiftc -parse-as-library
bin=$(swift build -c release --sanitize=fuzzer -Xswiftc -parse-as-library --show-bin-path)
mkdir -p findings
for target in $targets; do
    seeds=corpus/${target#fuzz-}
    work=.work/${target#fuzz-}
    mkdir -p "$work"
    echo "=== $target: $runs runs (seeds $seeds, corpus $work)"
    status=0
    "$bin/$target" -runs="$runs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix=findings/"$target"- "$work" "$seeds" > "$work.log" 2>&1 || status=$?
    grep -E "^(Done|stat::number_of_executed_units|==[0-9]+==|SUMMARY|artifact_prefix|Test unit written)" "$work.log" || true
    if [ "$status" -ne 0 ]; then
        tail -40 "$work.log"
        echo "fuzz.sh: $target failed (exit $status); the input is in Fuzz/findings/" >&2
        exit 1
    fi
done
