#!/usr/bin/env bash
# All benchmarks (not tests): measurement neutrality of cyclictest through
# schedlab, and sl-pingpong against perf bench sched pipe.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== measurement neutrality (cyclictest by hand vs through schedlab)"
bench/neutrality.sh "${ROUNDS:-6}" "${DURATION_S:-5}"
echo
echo "== sl-pingpong vs perf bench sched pipe"
bench/pingpong-vs-perf.sh
