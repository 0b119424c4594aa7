#!/usr/bin/env bash
# End-to-end: what each kernel offers, decided before anything runs.
# `schedlab plan` (and `schedlab run`, before anything is stored) on a plan
# crossing four kernel folders (configs of tests/data/kconfig/: 6.1, 6.1-rt,
# 6.13, a 7.0-like x86; Debian's 6.12 and 6.12-rt, laziest on the RT one)
# with every preempt mode: refused by default, naming
# each impossible pair and what that kernel offers; with
# "matrix": {"impossible": "drop"} the pairs are left out with a note and
# the rest expands. A config that is no config (a FIFO, a folder, random
# bytes) is refused naming it. No boot: the kernels are folders with a
# config and an empty vmlinuz.
# timeout: 60
. "$(dirname "$0")/lib.sh"
DATA=$(cd "$(dirname "$0")/../data/kconfig" && pwd)

for k in 6.1 6.1-rt 6.13 7.0 6.12 6.12-rt; do
	mkdir -p "$TMP/k/$k"
	cp "$DATA/$k.config" "$TMP/k/$k/config"
	: >"$TMP/k/$k/vmlinuz"
	printf '{"release": "%s-fixture", "image": "vmlinuz", "config": "config"}\n' "$k" \
		>"$TMP/k/$k/kernel.json"
done
plan() { # IMPOSSIBLE-JSON-MEMBER (may be empty)
	cat <<JSON
{"name": "offers", "target": {"type": "qemu", "kernel": "$TMP/k/6.1"},
 "matrix": {"kernel": ["$TMP/k/6.1", "$TMP/k/6.1-rt", "$TMP/k/6.13", "$TMP/k/7.0"],
            "preempt": ["none", "voluntary", "full", "lazy"]$1},
 "workloads": [{"type": "hackbench", "groups": 1, "loops": 10}]}
JSON
}

plan "" >"$TMP/refuse.json"
expect_exit 2 "impossible pairs: the plan is refused" schedlab plan "$TMP/refuse.json"
contains "the count of impossible boot configurations" "$TMP/err" \
	"matrix: 6 of 16 boot configurations ask a kernel for a preemption mode it does not offer"
contains "6.1 asked for lazy: named with its offer" "$TMP/err" \
	"kernel $TMP/k/6.1, preempt=lazy: it offers none, voluntary, full (PREEMPT_DYNAMIC, built voluntary; Linux 6.1), from $TMP/k/6.1/config"
contains "the RT kernel asked for none" "$TMP/err" \
	"kernel $TMP/k/6.1-rt, preempt=none: it offers full (PREEMPT_RT, no PREEMPT_DYNAMIC: only its built model, full; Linux 6.1)"
contains "the RT kernel asked for voluntary" "$TMP/err" "kernel $TMP/k/6.1-rt, preempt=voluntary: it offers full"
contains "the RT kernel asked for lazy" "$TMP/err" "kernel $TMP/k/6.1-rt, preempt=lazy: it offers full"
contains "the 7.0 kernel asked for none" "$TMP/err" \
	"kernel $TMP/k/7.0, preempt=none: it offers full, lazy (PREEMPT_DYNAMIC, built lazy; Linux 7.0)"
contains "the 7.0 kernel asked for voluntary" "$TMP/err" "kernel $TMP/k/7.0, preempt=voluntary: it offers full, lazy"
equals "6.13 offers all four: none of its pairs named" "$(grep -c "k/6.13," "$TMP/err")" 0
contains "the way out is named" "$TMP/err" '"impossible": "drop"'
expect_exit 2 "schedlab run refuses it too, before anything is stored" \
	schedlab run "$TMP/refuse.json" --db "$TMP/refused.db"
contains "run: the same message" "$TMP/err" "6 of 16 boot configurations"
check "run: no database made" test ! -e "$TMP/refused.db"

plan ', "impossible": "drop"' >"$TMP/drop.json"
expect_exit 0 "impossible: drop: the plan expands" schedlab plan "$TMP/drop.json"
contains "10 boot configurations left" "$TMP/out" "boot configurations (10):"
contains "a note per pair left out" "$TMP/out" \
	"note: left out (matrix.impossible \"drop\"): kernel $TMP/k/6.1-rt, preempt=none: it offers full"
contains "the summary note" "$TMP/out" "note: 6 boot configurations left out as impossible, 10 left"
equals "no boot configuration of the RT kernel but full" \
	"$(grep -c "kernel=$TMP/k/6.1-rt " "$TMP/out")" 1
contains "the RT kernel's full is kept" "$TMP/out" "kernel=$TMP/k/6.1-rt preempt=full"
contains "the 7.0 kernel's lazy is kept" "$TMP/out" "kernel=$TMP/k/7.0 preempt=lazy"
contains "6.13 keeps voluntary" "$TMP/out" "kernel=$TMP/k/6.13 preempt=voluntary"
equals "10 boots in the execution order" "$(grep -c '^  boot ' "$TMP/out")" 10
expect_exit 0 "drop: the qemu target's preflight agrees (plan --check: the RT kernel's full, the 7.0 kernel's lazy)" \
	schedlab plan "$TMP/drop.json" --check
# the target's kernel (no matrix.kernel), replaced by --target: checked again
printf '{"target": {"type": "qemu", "kernel": "%s"}, "matrix": {"preempt": ["voluntary"]}, "workloads": [{"type": "hackbench"}]}\n' \
	"$TMP/k/6.1" >"$TMP/target.json"
expect_exit 0 "the target's 6.1 kernel offers voluntary" schedlab plan "$TMP/target.json"
expect_exit 2 "--target qemu:<7.0 kernel> asked for voluntary: refused" \
	schedlab plan "$TMP/target.json" --target "qemu:$TMP/k/7.0"
contains "--target: the pair and the offer named" "$TMP/err" \
	"kernel $TMP/k/7.0, preempt=voluntary: it offers full, lazy"
expect_exit 0 "drop: JSON" schedlab plan "$TMP/drop.json" --format json
equals "JSON: the pairs left out" \
	"$(jq -r '[.dropped_impossible[] | (.kernel | sub(".*/"; "")) + ":" + .preempt] | join(" ")' "$TMP/out")" \
	"6.1:lazy 6.1-rt:none 6.1-rt:voluntary 6.1-rt:lazy 7.0:none 7.0:voluntary"
equals "JSON: 10 boots" "$(jq '.boots | length' "$TMP/out")" 10

# every pair impossible: refused even with drop
sed 's/"preempt": \["none", "voluntary", "full", "lazy"\]/"preempt": ["none"]/; s|"kernel": \[[^]]*\]|"kernel": ["'"$TMP"'/k/6.1-rt", "'"$TMP"'/k/7.0"]|' \
	"$TMP/drop.json" >"$TMP/none.json"
expect_exit 2 "drop, but nothing left: refused" schedlab plan "$TMP/none.json"
contains "it says nothing would be left" "$TMP/err" "nothing would be left to run"

# a variant not built yet: decided once built (schedlab run), said by plan
printf '{"target": {"type": "qemu", "kernel": "%s"}, "matrix": {"kernel": [{"variant": ["hz1000"]}], "preempt": ["lazy"]}, "workloads": [{"type": "hackbench"}]}\n' \
	"$TMP/k/6.1" >"$TMP/variant.json"
expect_exit 0 "a variant not built yet: its offer is not known at plan time" schedlab plan "$TMP/variant.json"
contains "plan says when it is checked" "$TMP/out" \
	"note: variant:minimal:hz1000 is not built yet: the preemption modes asked of it are checked against its config once it is (schedlab run)"

# a kernel folder whose config is no config: a FIFO (never waited on), a
# folder, random bytes, is refused naming the file and what it is (issue
# 41: each was taken for "offer unknown" and the plan passed)
mkdir -p "$TMP/k/fifo" "$TMP/k/dir/config" "$TMP/k/rand"
mkfifo "$TMP/k/fifo/config"
head -c 4096 /dev/urandom >"$TMP/k/rand/config"
for k in fifo:"config is a FIFO, not a kernel config" \
	 dir:"config is a folder, not a kernel config" \
	 rand:"config is not a kernel config: "; do
	name=${k%%:*} want=${k#*:}
	: >"$TMP/k/$name/vmlinuz"
	printf '{"target": {"type": "qemu", "kernel": "%s"}, "matrix": {"preempt": ["lazy"]}, "workloads": [{"type": "hackbench"}]}\n' \
		"$TMP/k/$name" >"$TMP/$name.json"
	expect_exit 2 "a config that is $name: refused at once (exit 2, no hang)" \
		timeout 30 schedlab plan "$TMP/$name.json"
	contains "... naming the kernel, the file and what it is" "$TMP/err" "kernel $TMP/k/$name: $TMP/k/$name/$want"
done

# Debian's 6.12 and 6.12 RT (their real configs): laziest is offered by
# the RT kernel only (the RT patch set's model), lazy by neither but RT
cat >"$TMP/612.json" <<JSON
{"name": "offers-6.12", "target": {"type": "qemu", "kernel": "$TMP/k/6.12"},
 "matrix": {"kernel": ["$TMP/k/6.12", "$TMP/k/6.12-rt"],
            "preempt": ["none", "voluntary", "full", "lazy", "laziest"]},
 "workloads": [{"type": "hackbench", "groups": 1, "loops": 10}]}
JSON
expect_exit 2 "6.12 and 6.12-RT with every mode: refused" schedlab plan "$TMP/612.json"
contains "4 of 10 impossible" "$TMP/err" \
	"matrix: 4 of 10 boot configurations ask a kernel for a preemption mode it does not offer"
contains "6.12 asked for laziest: named with its offer" "$TMP/err" \
	"kernel $TMP/k/6.12, preempt=laziest: it offers none, voluntary, full (PREEMPT_DYNAMIC, built voluntary; Linux 6.12)"
contains "6.12-RT asked for none: its offer has laziest, built lazy" "$TMP/err" \
	"kernel $TMP/k/6.12-rt, preempt=none: it offers full, lazy, laziest (PREEMPT_RT, PREEMPT_DYNAMIC, built lazy; Linux 6.12)"
equals "6.12-RT's full, lazy and laziest are not named" "$(grep -cE "k/6.12-rt, preempt=(full|lazy|laziest):" "$TMP/err")" 0
sed 's/"laziest"\]}/"laziest"], "impossible": "drop"}/' "$TMP/612.json" >"$TMP/612drop.json"
expect_exit 0 "dropped: 6 boot configurations left" schedlab plan "$TMP/612drop.json"
contains "6.12-RT's laziest is kept" "$TMP/out" "kernel=$TMP/k/6.12-rt preempt=laziest"

bad_value() {
	plan ', "impossible": "skip"' >"$TMP/bad.json"
	expect_exit 2 "matrix.impossible: a bad value is refused" schedlab plan "$TMP/bad.json"
	contains "matrix.impossible: the valid values named" "$TMP/err" 'matrix.impossible: must be "refuse"'
}
bad_value
done_testing
