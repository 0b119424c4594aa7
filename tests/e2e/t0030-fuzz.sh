#!/usr/bin/env bash
# timeout: 600 (the clang build of the library is most of it: 60 s quiet, 210 s on a loaded 2-core machine)
# The fuzz targets (fuzz/, docs in fuzz/README.md) build, each runs for a
# few seconds without a crash, and every input that once crashed one
# (tests/data/fuzz/TARGET/) is replayed; and scripts/fuzz.sh does fail,
# naming target and input, when a target crashes, both while fuzzing and
# while replaying (a planted crash in fuzz_selftest).
. "$(dirname "$0")/lib.sh"
require clang:clang libclang-rt-14-dev:/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a
secs=${SCHEDLAB_FUZZ_SECONDS:-4}
check "the fuzz targets build (make fuzz-build)" make -s -j2 fuzz-build
expect_exit 0 "every target fuzzed for $secs s and every saved input replayed: no crash" scripts/fuzz.sh "$secs"
cat "$TMP/out" | sed 's/^/# /'
for t in plan reply parsers hist select tasksched trace outfile; do
	contains "... $t ran" "$TMP/out" "fuzz $t: "
done
contains "... the saved inputs were replayed" "$TMP/out" "fuzz parsers: replayed"
mkdir -p "$TMP/seeds/selftest" "$TMP/saved/selftest"
printf 'PLANTED CRASH' >"$TMP/seeds/selftest/boom"
FUZZ_SEEDS=$TMP/seeds FUZZ_SAVED=$TMP/none expect_exit 1 "a crash while fuzzing fails the run" scripts/fuzz.sh 2 selftest
contains "... naming the target" "$TMP/out" "fuzz selftest: CRASH"
printf 'PLANTED CRASH' >"$TMP/saved/selftest/old-crash"
FUZZ_SEEDS=$TMP/none FUZZ_SAVED=$TMP/saved expect_exit 1 "a saved input that crashes again fails the replay" scripts/fuzz.sh 0 selftest
contains "... naming the input" "$TMP/out" "CRASH replaying $TMP/saved/selftest/old-crash"
rm -f build/fuzz/crashes/selftest-*
done_testing
