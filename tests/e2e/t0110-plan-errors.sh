#!/usr/bin/env bash
# End-to-end: bad plans are rejected before anything runs, with exit 2 and a
# message naming the file and line:column (syntax) or the JSON path. And a
# refused command creates no file: not a database for a read-only command
# or a --resume on a path that does not exist, nor for a run refused before
# anything is stored, nor a journal beside a --db that is not a file, nor
# for --help or a refused option of any command with a database.
. "$(dirname "$0")/lib.sh"
hold_local_target   # its local sessions never wait inside the script (lib.sh)

bad() { # NAME EXPECTED-TEXT PLAN-TEXT
	printf '%s\n' "$3" >"$TMP/bad.json"
	expect_exit 2 "$1: exit 2" schedlab plan "$TMP/bad.json"
	contains "$1: message" "$TMP/err" "$2"
}
bad "syntax error" "bad.json:3:" '{ "name": "x",
  "workloads": [
    {"type": "hackbench",, }
  ] }'
bad "unknown top-level key" 'repetition: unknown key (valid: name, target, targets, switch, repetitions, seed, order, schedstat, matrix, workloads)' \
	'{"repetition": 3, "workloads": [{"type": "hackbench"}]}'
bad "wrong type by JSON path" 'workloads[1].duration_s: must be a positive integer' \
	'{"workloads": [{"type": "hackbench"}, {"type": "cyclictest", "duration_s": "ten"}]}'
bad "out of range" 'workloads[0].priority: must be a non-negative integer no larger than 99' \
	'{"workloads": [{"type": "cyclictest", "priority": 120}]}'
bad "unknown workload key" 'workloads[0].groupz: unknown key (valid: type, groups' \
	'{"workloads": [{"type": "hackbench", "groupz": 3}]}'
bad "unknown workload type" 'workloads[0].type: unknown workload "hackbenchh" (valid: cyclictest, hackbench' \
	'{"workloads": [{"type": "hackbenchh"}]}'
bad "missing workloads" 'workloads: missing' '{"name": "x"}'
bad "bad enum" 'workloads[0].transport: must be one of "socket", "pipe"' \
	'{"workloads": [{"type": "hackbench", "transport": "tcp"}]}'
bad "bad preempt mode" 'matrix.preempt[1]: "fulll" is not valid (valid: none, voluntary, full, lazy, laziest)' \
	'{"matrix": {"preempt": ["none", "fulll"]}, "workloads": [{"type": "hackbench"}]}'
bad "cmdline quoting trick" "matrix.cmdline[0]: character '\"' is not allowed" \
	'{"matrix": {"cmdline": ["quiet \"init=/bin/sh\""]}, "workloads": [{"type": "hackbench"}]}'
bad "cmdline newline" "matrix.cmdline[0]: character '\\n' is not allowed" \
	'{"matrix": {"cmdline": ["quiet\ninit=/bin/sh"]}, "workloads": [{"type": "hackbench"}]}'
bad "preempt in cmdline" 'matrix.cmdline[0]: set preempt= with matrix.preempt' \
	'{"matrix": {"cmdline": ["preempt=full"]}, "workloads": [{"type": "hackbench"}]}'
bad "bad knob key" 'matrix.knobs[0].features: unknown key (valid: sched_features, tunables, sysctl)' \
	'{"matrix": {"knobs": [{"features": ["X"]}]}, "workloads": [{"type": "hackbench"}]}'
bad "bad feature token" 'matrix.knobs[0].sched_features[0]: must be a feature name' \
	'{"matrix": {"knobs": [{"sched_features": ["ttwu queue"]}]}, "workloads": [{"type": "hackbench"}]}'
bad "sysctl path escape" 'matrix.knobs[0].sysctl.../../etc/x: not a valid sysctl' \
	'{"matrix": {"knobs": [{"sysctl": {"../../etc/x": 1}}]}, "workloads": [{"type": "hackbench"}]}'
bad "an ssh option that runs a local command" 'target.ssh_options[1]: ProxyCommand is not an option schedlab passes to ssh' \
	'{"target": {"type": "ssh", "host": "h", "ssh_options": ["StrictHostKeyChecking=no", "ProxyCommand=sh -c x"]}, "workloads": [{"type": "hackbench"}]}'
bad "... in any spelling" 'target.ssh_options[0]: localcommand is not an option' \
	'{"target": {"type": "ssh", "host": "h", "ssh_options": ["localcommand=touch x"]}, "workloads": [{"type": "hackbench"}]}'
bad "a sysctl that runs a program as root" 'matrix.knobs[0].sysctl.core_pattern: schedlab never writes this knob: a "|program" value runs' \
	'{"matrix": {"knobs": [{"sysctl": {"core_pattern": "|/tmp/x"}}]}, "workloads": [{"type": "hackbench"}]}'
bad "modprobe too" 'matrix.knobs[0].sysctl.modprobe: schedlab never writes this knob' \
	'{"matrix": {"knobs": [{"sysctl": {"modprobe": "/tmp/x"}}]}, "workloads": [{"type": "hackbench"}]}'
bad "a one-way switch" 'matrix.knobs[0].sysctl.kexec_load_disabled: schedlab never writes this knob: one-way' \
	'{"matrix": {"knobs": [{"sysctl": {"kexec_load_disabled": 1}}]}, "workloads": [{"type": "hackbench"}]}'
bad "load of a non-load type" 'workloads[0].load.type: "cyclictest" cannot be used as load' \
	'{"workloads": [{"type": "cyclictest", "load": {"type": "cyclictest"}}]}'
bad "duplicate key" 'duplicate object key' '{"name": "a", "name": "b", "workloads": [{"type": "hackbench"}]}'
bad "unknown target type" 'target.type: unknown target "vmware"' \
	'{"target": {"type": "vmware"}, "workloads": [{"type": "hackbench"}]}'

# plan size (issue 33): a small file whose matrix multiplies out to 10^12
# runs is refused by its product, before the expansion is allocated; the
# address space is capped at 1 GiB so that allocating it cannot pass
python3 -c '
import json
print(json.dumps({"repetitions": 10000,
  "matrix": {"cmdline": ["a%d" % i for i in range(1000)],
             "knobs": [{"tunables": {"k%d" % i: 1}} for i in range(1000)]},
  "workloads": [{"type": "hackbench"}] * 100}))' >"$TMP/huge.json"
expect_exit 2 "a huge expansion: exit 2" bash -c 'ulimit -v 1048576; exec schedlab plan "$1"' - "$TMP/huge.json"
contains "a huge expansion: the product and the limit named" "$TMP/err" \
	"huge.json: matrix: expands to 1000 boot configurations x 10000 repetitions = 10000000 boots; the limit is 100000 boots (docs/plan-format.md)"
python3 -c '
import json
print(json.dumps({"repetitions": 10,
  "matrix": {"knobs": [{"tunables": {"k%d" % i: 1}} for i in range(1000)]},
  "workloads": [{"type": "hackbench"}] * 101}))' >"$TMP/huge.json"
expect_exit 2 "too many runs: exit 2" bash -c 'ulimit -v 1048576; exec schedlab plan "$1"' - "$TMP/huge.json"
contains "too many runs: the product and the limit named" "$TMP/err" \
	"matrix: expands to 1 boot configurations x 1000 knob sets x 101 workloads x 10 repetitions = 1010000 runs; the limit is 1000000 runs"
python3 -c '
import json
print(json.dumps({"matrix": {"kernel": ["/k%d" % i for i in range(1000)],
  "preempt": ["none", "full"], "cmdline": ["a%d" % i for i in range(51)]},
  "workloads": [{"type": "hackbench"}]}))' >"$TMP/huge.json"
expect_exit 2 "too many boot configurations: exit 2" schedlab plan "$TMP/huge.json"
contains "too many boot configurations: named" "$TMP/err" \
	"matrix: expands to 1000 kernels x 2 preempt modes x 51 cmdlines = 102000 boot configurations; the limit is 100000 boots"
# a tool's option through a workload parameter (issue 33): stress-ng takes
# the stressor as "--NAME", so only stressor names are accepted
bad "a stress-ng option as stressor" 'workloads[0].stressor: "log-file" is not a stress-ng stressor (valid: a name `stress-ng --stressors` lists' \
	'{"workloads": [{"type": "stress-ng", "stressor": "log-file"}]}'
bad "... as a load's stressor" 'workloads[0].load.stressor: "all" is not a stress-ng stressor' \
	'{"workloads": [{"type": "cyclictest", "load": {"type": "stress-ng", "stressor": "all"}}]}'
for s in temp-path job seq - --cpu; do
	bad "stressor $s" "workloads[0].stressor: \"$s\" is not a stress-ng stressor" \
		"{\"workloads\": [{\"type\": \"stress-ng\", \"stressor\": \"$s\"}]}"
done
bad "an rtla option as cpus" 'workloads[0].cpus: "--help" is not a CPU list' \
	'{"workloads": [{"type": "timerlat", "cpus": "--help"}]}'
bad "a jbb option as nice" 'workloads[0].nice: "--mix=1" must be integers' \
	'{"workloads": [{"type": "jbb", "nice": "--mix=1"}]}'
# what schedlab run writes into the plan it stores is not taken from a plan
# file (issue 33): "image" skipped the checks of the repository and patches,
# a made-up "commit" was built under the ref's name
bad "a git kernel's image set by hand" 'matrix.kernel[0].image: set by schedlab run in the plan it stores' \
	'{"target": {"type": "qemu"}, "matrix": {"kernel": {"git": "/nonexistent", "ref": "v1", "image": "/etc", "patches": ["/nonexistent.patch"]}}, "workloads": [{"type": "hackbench"}]}'
bad "a git kernel's commit set by hand" 'matrix.kernel[1].commit: set by schedlab run' \
	'{"target": {"type": "qemu"}, "matrix": {"kernel": ["/k", {"git": "/tmp", "ref": "v1", "commit": "0123456789abcdef0123456789abcdef01234567", "describe": "v1"}]}, "workloads": [{"type": "hackbench"}]}'
bad "a variant's image set by hand" 'matrix.kernel[0].image: set by schedlab run' \
	'{"target": {"type": "qemu"}, "matrix": {"kernel": {"variant": ["hz1000"], "image": "/etc"}}, "workloads": [{"type": "hackbench"}]}'
# a metric the workload does not have is refused before anything runs
# (issue 33): sequential repetitions ran every round and decided nothing,
# bisect checked out and built first
bad "a sequential metric that does not exist" 'repetitions.metrics[0]: "nosuch" is not a metric of hackbench (valid: time_s, ' \
	'{"repetitions": {"max": 5, "until": "decided", "metrics": ["hackbench.nosuch"]}, "workloads": [{"type": "hackbench"}]}'
printf '%s\n' '{"repetitions": {"max": 5, "until": "decided", "metrics": ["timerlat.irq_lat_p99_cpu3_us", "rtapp.ctl_misses"]}, "workloads": [{"type": "timerlat"}, {"type": "rtapp", "tasks": [{"name": "ctl", "run_us": 100, "period_us": 1000}]}]}' >"$TMP/seqm.json"
expect_exit 0 "... a per-CPU or per-task metric is one" schedlab plan "$TMP/seqm.json"
git init -q "$TMP/repo" && (cd "$TMP/repo" && echo a >f && git add f &&
	git -c user.name=t -c user.email=t@t commit -qm a)
: >"$TMP/vmlinuz"
printf '{"target": {"type": "qemu", "kernel": "%s"}, "matrix": {"kernel": {"git": "%s", "ref": "HEAD"}}, "workloads": [{"type": "hackbench"}]}\n' \
	"$TMP/vmlinuz" "$TMP/repo" >"$TMP/bisect.json"
expect_exit 2 "bisect --metric that does not exist: exit 2" \
	schedlab bisect --plan "$TMP/bisect.json" --good HEAD --bad HEAD --metric hackbench.nosuch --db "$TMP/b.db"
contains "... named with the valid ones, before the range is looked at" "$TMP/err" \
	'--metric hackbench.nosuch: hackbench has no metric "nosuch" (valid: time_s, '
# a level no comparison can reach is refused up front (issue 33): with 50
# values a side the smallest Mann-Whitney p is 2/C(100,50) = 2e-29
(cd "$TMP/repo" && for i in 1 2 3; do echo $i >>f; git -c user.name=t -c user.email=t@t commit -qam c$i; done)
XDG_CACHE_HOME=$TMP/cache expect_exit 2 "bisect --alpha that nothing can reach: exit 2" \
	schedlab bisect --plan "$TMP/bisect.json" --good HEAD~3 --bad HEAD --metric hackbench.time_s \
	--alpha 1e-30 --repetitions 50 --max-repetitions 50 --db "$TMP/b2.db"
contains "... says why, with the smallest p and the alpha that would do" "$TMP/err" \
	"--alpha 1e-30: no commit could ever be decided: a difference counts when the Mann-Whitney p is below alpha / (5 steps x 1 looks) = 2e-31, and the smallest p of 50 values against 50 is 1.98e-29; give --alpha above 9.91e-29"
[ ! -e "$TMP/cache/schedlab/git" ] && ok "... before anything is checked out" || not_ok "... before anything is checked out"
# a lava target's token file is checked at plan time (issue 33): a FIFO
# hung the run, and a missing, empty, folder, shared or huge token file
# became a failed boot with a session stored
lava() { printf '{"target": {"type": "lava", "url": "http://127.0.0.1:9", "token_file": "%s", "user": "u", "device_type": "qemu"}, "workloads": [{"type": "hackbench"}]}\n' "$1" >"$TMP/lava.json"; }
tokbad() { # NAME TEXT FILE
	lava "$3"
	expect_exit 2 "token file $1: exit 2" timeout 60 schedlab plan "$TMP/lava.json"
	contains "token file $1: named" "$TMP/err" "lava.json: target.token_file: $3$2"
}
printf 'abcDEF123-_\n' >"$TMP/tok" && chmod 600 "$TMP/tok"
lava "$TMP/tok"
expect_exit 0 "a good token file" schedlab plan "$TMP/lava.json"
tokbad missing ": No such file or directory" "$TMP/notok"
: >"$TMP/tok0" && chmod 600 "$TMP/tok0"
tokbad empty " is empty (it must hold the API token)" "$TMP/tok0"
mkdir -p "$TMP/tokdir" && chmod 700 "$TMP/tokdir"
tokbad folder " is a folder (must be a file holding the API token)" "$TMP/tokdir"
mkfifo -m 600 "$TMP/tokfifo"
tokbad FIFO " is a FIFO (must be a file holding the API token)" "$TMP/tokfifo"
printf 'abc\n' >"$TMP/tok644" && chmod 644 "$TMP/tok644"
tokbad "readable by others" " is readable by group or others (mode 644; chmod 600 it)" "$TMP/tok644"
head -c 2000000 /dev/zero | tr '\0' a >"$TMP/tokbig" && chmod 600 "$TMP/tokbig"
tokbad "of 2 MB" " holds more than a token (2000000 bytes; a token is at most 255 characters)" "$TMP/tokbig"
printf 'abc def\n' >"$TMP/tokspace" && chmod 600 "$TMP/tokspace"
tokbad "with a space" " must hold one API token (one line of letters, digits, _ and -)" "$TMP/tokspace"
lava "$TMP/tokfifo"
expect_exit 2 "run with a FIFO token: exit 2" timeout 60 schedlab run "$TMP/lava.json" --db "$TMP/lava.db"
[ ! -e "$TMP/lava.db" ] || [ "$(sqlite3 "$TMP/lava.db" 'SELECT count(*) FROM session' 2>/dev/null || echo 0)" = 0 ] &&
	ok "... no session stored" || not_ok "... no session stored"
# low-severity ones of issue 33
bad "cmdline double space" 'matrix.cmdline[0]: parameters are separated by single spaces' \
	'{"matrix": {"cmdline": ["quiet  nosmt"]}, "workloads": [{"type": "hackbench"}]}'
bad "cmdline over the limit" 'matrix.cmdline[0]: 100000 characters; the kernel takes a command line of at most 2048' \
	"{\"matrix\": {\"cmdline\": [\"$(head -c 100000 /dev/zero | tr '\0' a)\"]}, \"workloads\": [{\"type\": \"hackbench\"}]}"
bad "control characters in the name" 'name: must not contain control characters' \
	'{"name": "a\u001b[2Jb", "workloads": [{"type": "hackbench"}]}'
mkfifo "$TMP/plan.fifo"
expect_exit 2 "a FIFO as plan: exit 2" timeout 60 schedlab plan "$TMP/plan.fifo"
contains "... refused, not waited on" "$TMP/err" "plan.fifo: cannot read: a FIFO (a plan is a JSON file)"
truncate -s 17M "$TMP/big.json"
expect_exit 2 "a plan over 16 MiB: exit 2" schedlab plan "$TMP/big.json"
contains "... said so, with the limit" "$TMP/err" "big.json: the plan is too large (17825792 bytes; the limit is 16777216 bytes, 16 MiB)"
bad "ssh user with shell syntax" 'target.user: must be a user name (not starting with' \
	'{"target": {"type": "ssh", "host": "h", "user": "a;$(touch x)"}, "workloads": [{"type": "hackbench"}]}'
bad "ssh user with a quote" 'target.user: must be a user name' \
	'{"target": {"type": "ssh", "host": "h", "user": "a'"'"'b"}, "workloads": [{"type": "hackbench"}]}'
expect_exit 2 "missing file" schedlab plan "$TMP/nope.json"
contains "missing file: named" "$TMP/err" "nope.json: cannot read: No such file or directory"
expect_exit 2 "run refuses a bad plan too" schedlab run "$TMP/bad.json" --db "$TMP/db"
[ ! -e "$TMP/db" ] && ok "no database created for a bad plan" || not_ok "no database created for a bad plan"

# --resume with a number past 64 bits is refused, not read as the largest
printf '%s\n' '{"name": "one", "workloads": [{"type": "hackbench", "groups": 1, "loops": 10}]}' >"$TMP/one.json"
if schedlab run "$TMP/one.json" --db "$TMP/one.db" --quiet >/dev/null 2>&1; then
	expect_exit 2 "--resume out of range: exit 2" schedlab run --resume 99999999999999999999 --db "$TMP/one.db"
	contains "... named" "$TMP/err" 'session "99999999999999999999": not a session number (out of range)'
	# an empty selector selected every result
	expect_exit 2 "compare with an empty selector: exit 2" schedlab compare name=one '' --db "$TMP/one.db"
	contains "... refused, not read as everything" "$TMP/err" "selector B is empty: it would select every result"
else
	skip "--resume out of range, compare with an empty selector" "a local run is not possible here"
fi

# a valid plan: the expansion is shown, interleaved and deterministic
cat >"$TMP/good.json" <<'P'
{"name": "g", "repetitions": 3, "seed": 7,
 "matrix": {"knobs": [{}, {"sysctl": {"sched_rr_timeslice_ms": 90}}]},
 "workloads": [{"type": "hackbench"}, {"type": "stress-ng", "duration_s": 1}]}
P
expect_exit 0 "valid plan" schedlab plan "$TMP/good.json"
contains "expansion counts" "$TMP/out" "execution order (3 boots, 12 runs)"
contains "estimate shown" "$TMP/out" "estimated duration:"
schedlab plan --format json "$TMP/good.json" >"$TMP/a.json"
schedlab plan --format json "$TMP/good.json" >"$TMP/b.json"
check "expansion is deterministic for a seed" cmp -s "$TMP/a.json" "$TMP/b.json"
sed 's/"seed": 7/"seed": 8/' "$TMP/good.json" >"$TMP/good8.json"
schedlab plan --format json "$TMP/good8.json" >"$TMP/c.json"
if cmp -s "$TMP/a.json" "$TMP/c.json"; then not_ok "another seed shuffles differently"; else ok "another seed shuffles differently"; fi
check "every round runs each (knobs, workload) pair once" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for v in d["execution"]:
    pairs = sorted((r["knobs"], r["workload"]) for r in v["runs"])
    assert pairs == [(0,0),(0,1),(1,0),(1,1)], pairs
    assert all(r["rep"] == v["round"] for r in v["runs"])
assert [v["round"] for v in d["execution"]] == [0, 1, 2]
' "$TMP/a.json"

# the keys' tables (harness/util/opts.h): the help that docs' tables are written from
expect_exit 0 "schedlab help plan" schedlab help plan
contains "... names the top-level keys with their defaults" "$TMP/out" 'order          enum   {interleaved|sequential}'
expect_exit 0 "schedlab help targets qemu --markdown" schedlab help targets qemu --markdown
contains "... a Markdown row a key" "$TMP/out" '| `cpus` | integer 1..256 |'
expect_exit 2 "schedlab help targets of an unknown target: exit 2" schedlab help targets vmware
contains "... naming the valid ones" "$TMP/err" 'help targets vmware: unknown target (valid: local, qemu, ssh, lava)'

# ---- a refused command creates no file ----
mkdir -p "$TMP/nofile"
cd "$TMP/nofile" || exit 1
for c in sessions "query SELECT" "trend --metric hackbench.time_s" "export"; do
	# shellcheck disable=SC2086
	expect_exit 2 "$c on a database that does not exist: exit 2" schedlab $c --db new.db
	contains "... naming the file" "$TMP/err" "new.db"
	if [ -e new.db ]; then not_ok "... and creates none"; rm -f new.db; else ok "... and creates none"; fi
done
expect_exit 2 "sessions with a bad option: exit 2" schedlab sessions --db new.db --bogus
if [ -e new.db ]; then not_ok "... and no database is made"; rm -f new.db; else ok "... and no database is made"; fi
# every command with a database (main opens it between the command's parse
# and its work, issue 41): --help and a refused option open and make none
for c in run sessions query compare trend check report bisect nightly alerts serve export; do
	expect_exit 0 "$c --help: exit 0" timeout 60 schedlab "$c" --help --db "$TMP/nofile/x.db"
	contains "... the usage" "$TMP/out" "usage: schedlab $c"
	expect_exit 2 "$c --no-such-option: exit 2" timeout 60 schedlab "$c" --no-such-option --db "$TMP/nofile/y.db"
	contains "... naming it" "$TMP/err" "no-such-option"
	equals "... and no file made" "$(ls -A)" ""
	rm -f -- "$TMP"/nofile/*
done
# the read-only ones (and the verbs that only read) on a missing database
for c in "compare a=1 b=2" "check --baseline a=1 --candidate b=1" report alerts "alerts show 1" serve; do
	# shellcheck disable=SC2086
	expect_exit 2 "$c on a database that does not exist: exit 2" timeout 60 schedlab $c --db new.db
	contains "... naming the file" "$TMP/err" "new.db"
	equals "... and creating none" "$(ls -A)" ""
	rm -f -- "$TMP"/nofile/*
done
# what writes to a stored database never makes one
for c in "alerts ack 1 --note x" "nightly --session 1 --no-bisect --out-dir $TMP/rep"; do
	# shellcheck disable=SC2086
	expect_exit 2 "$c on a database that does not exist: exit 2" schedlab $c --db new.db
	contains "... saying there is nothing stored" "$TMP/err" "new.db: no such file"
	equals "... and making none" "$(ls -A)" ""
	rm -f -- "$TMP"/nofile/*
done
expect_exit 2 "run --resume last on a database that does not exist: exit 2" schedlab run --resume last --db new.db
contains "... saying there is nothing to continue" "$TMP/err" "schedlab run: new.db: no such file"
expect_exit 2 "run --resume lab:last on a database that does not exist: exit 2" \
	schedlab run --resume lab:last --db new.db
expect_exit 2 "bisect --resume last on a database that does not exist: exit 2" \
	schedlab bisect --resume last --db new.db
contains "... saying there is nothing to continue" "$TMP/err" "schedlab bisect: new.db: no such file"
cat >"$TMP/preflight.json" <<'P'
{ "name": "refused", "matrix": {"knobs": [{"sysctl": {"no_such_sysctl_schedlab": 1}}]},
  "workloads": [{"type": "hackbench", "groups": 1, "loops": 10}] }
P
expect_exit 2 "a run the preflight refuses: exit 2" schedlab run "$TMP/preflight.json" --db new.db
contains "... saying why" "$TMP/err" "no_such_sysctl_schedlab"
equals "no file made by any of them" "$(ls -A)" ""
# an empty file is no store yet: the run goes as far as with none
: >empty.db
expect_exit 2 "a run the preflight refuses, --db an empty file: exit 2" schedlab run "$TMP/preflight.json" --db empty.db
contains "... saying why (not that the file is no database)" "$TMP/err" "no_such_sysctl_schedlab"
rm -f empty.db
cd - >/dev/null || exit 1
for c in "run $TMP/preflight.json" "run --resume last" sessions "bisect --resume last"; do
	# shellcheck disable=SC2086
	expect_exit 2 "$c --db /dev/null: exit 2" schedlab $c --db /dev/null
	contains "... not a regular file" "$TMP/err" "/dev/null: not a regular file"
done
expect_exit 2 "run --db FOLDER: exit 2" schedlab run "$TMP/preflight.json" --db "$TMP"
contains "... not a regular file" "$TMP/err" "$TMP: not a regular file"
if [ -e /dev/null-journal ] || [ -e /dev/null-wal ]; then
	not_ok "nothing made beside /dev/null" "$(ls -l /dev/null-*)"
else
	ok "nothing made beside /dev/null"
fi

# run --tag is a file name's part (nightly's report TAG.html): a path, a
# newline or a control character is refused before anything runs, with
# nightly --tag's check (issue 41)
for t in '../../../x' "$(printf 'a\nb')" "$(printf 'a\033b')" '..' 'a/b'; do
	expect_exit 2 "run --tag $(printf %q "$t"): exit 2" schedlab run "$TMP/preflight.json" --db "$TMP/tag.db" --tag "$t"
	contains "... naming what a tag may hold" "$TMP/err" "--tag: 1 to 64 letters, digits, . _ -"
done
check "... no database made" test ! -e "$TMP/tag.db"

# a variant's fragment path may name any file: its lines are never echoed,
# and a FIFO is refused without being read (issue 33)
printf 'root:SECRET-LINE-OF-A-FILE\n' >"$TMP/secret"
bad "a fragment path to a file that is not a fragment" "variant[0]: fragment $TMP/secret, line 1: expected CONFIG_X=value" \
	"{\"target\": {\"type\": \"qemu\", \"kernel\": \"$TMP/vmlinuz\"}, \"matrix\": {\"kernel\": {\"variant\": [\"$TMP/secret\"]}}, \"workloads\": [{\"type\": \"hackbench\"}]}"
if grep -q SECRET-LINE "$TMP/err"; then not_ok "... without printing the file's line" "$(cat "$TMP/err")"; else ok "... without printing the file's line"; fi
mkfifo "$TMP/frag.fifo"
printf '%s\n' "{\"target\": {\"type\": \"qemu\", \"kernel\": \"$TMP/vmlinuz\"}, \"matrix\": {\"kernel\": {\"variant\": [\"$TMP/frag.fifo\"]}}, \"workloads\": [{\"type\": \"hackbench\"}]}" >"$TMP/fifo.json"
timeout 60 schedlab plan "$TMP/fifo.json" >"$TMP/out" 2>"$TMP/err"
equals "a fragment path that is a FIFO is refused at once (exit 2, no hang)" "$?" 2
contains "... saying so" "$TMP/err" "frag.fifo: not a regular file"
done_testing
