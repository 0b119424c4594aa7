#!/usr/bin/env bash
# timeout: 120
# How the real agent stops a workload it must end early: the request's
# "stop_signal" ("TERM", the default, or "INT": rtla undoes its tracefs
# instance and osnoise settings only in its SIGINT handler, so a timerlat or
# osnoise run stopped with SIGTERM would leave a tracer running on the
# machine), then SIGKILL 2 s later (15 s after INT). A stand-in workload traps both signals
# and says which one came, on its stdout and in a file: for the run's
# timeout, for the controller going away (the agent's input ends; a ^C of
# the session on the ssh target) and for a value the agent must refuse.
# The harness's side (timerlat and osnoise ask for INT) is test_rtla's.
# Also: malformed requests are answered with the reason, line noise is not.
. "$(dirname "$0")/lib.sh"
require jq:jq
require_built bin/schedlab-agent

SAYS="$TMP/says"
script='trap "echo INT; echo INT >'"$SAYS"'; exit 0" INT; trap "echo TERM; echo TERM >'"$SAYS"'; exit 0" TERM; echo up; while :; do sleep 0.05; done'
# the same, taking 4 s to clean up after either signal (once: sh runs an
# INT trap again when a child it waits for dies of the same SIGINT)
slow='trap "trap \"\" INT TERM; echo INT; sleep 4; echo clean; exit 0" INT; trap "trap \"\" INT TERM; echo TERM; sleep 4; echo clean; exit 0" TERM; echo up; while :; do sleep 0.05; done'
exec_req() { # ID TIMEOUT [STOP_SIGNAL [SCRIPT]]
	local stop=""
	[ -n "${3:-}" ] && stop=',"stop_signal":"'$3'"'
	jq -cn --arg s "${4:-$script}" --argjson id "$1" --argjson t "$2" \
		'{id: $id, op: "exec", args: {argv: ["sh", "-c", $s], timeout_s: $t}}' |
		sed "s/}}\$/$stop}}/"
}

# one request at a time, each answered before the next (the agent stops a
# workload when its input ends)
coproc AG { schedlab-agent 2>"$TMP/agent.err"; }
ag_pid=$AG_PID ag_in=${AG[1]} ag_out=${AG[0]}
CLEANUP_CMDS+=("kill $ag_pid")
{
	read -r -t 10 line <&"$ag_out" && echo "$line"
	exec_req 1 0.5 >&"$ag_in"
	read -r -t 30 line <&"$ag_out" && echo "$line"
	exec_req 2 0.5 INT >&"$ag_in"
	read -r -t 30 line <&"$ag_out" && echo "$line"
	exec_req 3 0.5 KILL >&"$ag_in"
	read -r -t 30 line <&"$ag_out" && echo "$line"
	exec_req 5 0.5 TERM "$slow" >&"$ag_in"
	read -r -t 30 line <&"$ag_out" && echo "$line"
	exec_req 6 0.5 INT "$slow" >&"$ag_in"
	read -r -t 30 line <&"$ag_out" && echo "$line"
} >"$TMP/agent.out"
for i in 1 2 3 5 6; do grep "\"id\":$i," "$TMP/agent.out" >"$TMP/r$i"; done
contains "timeout, no stop_signal: the workload gets SIGTERM" "$TMP/r1" '"stdout":"up\nTERM\n"'
contains "... and the reply says it timed out" "$TMP/r1" '"timed_out":true'
contains "timeout, stop_signal INT: the workload gets SIGINT" "$TMP/r2" '"stdout":"up\nINT\n"'
contains "... and the reply says it timed out" "$TMP/r2" '"timed_out":true'
contains "stop_signal KILL is refused, naming the valid values" "$TMP/r3" \
	'exec: \"stop_signal\" must be \"TERM\" (the default) or \"INT\"'
contains "a slow cleanup after TERM is cut short by SIGKILL after 2 s" "$TMP/r5" '"signal":9,'
contains "... (what it printed is kept)" "$TMP/r5" '"stdout":"up\nTERM\n"'
contains "a slow cleanup after INT is let finish (15 s)" "$TMP/r6" '"stdout":"up\nINT\nclean\n"'
contains "... and it exits by itself" "$TMP/r6" '"exit_code":0,"signal":0,'
# the controller goes away while an INT workload runs
rm -f "$SAYS"
exec_req 4 60 INT >&"$ag_in"
for _ in $(seq 100); do [ -n "$(ours 'echo up; while')" ] && break; sleep 0.05; done
sleep 0.3
exec {ag_in}>&-
wait "$ag_pid"
equals "controller gone, stop_signal INT: the workload got SIGINT" "$(cat "$SAYS" 2>/dev/null)" INT
no_leftovers "no workload process left"

# requests the agent must answer with why they are not (issue 33): knob ops
# without their arguments, a line that opens an object but is no JSON; a
# line that is no JSON at all is a serial line's noise and gets no answer
printf '%s\n' '{"id":5,"op":"knob_get"}' '{"id":6,"op":"knob_set","args":{"path":"/proc/sys/kernel/x"}}' \
	'line noise' '{"id":9' '{"id":10,"op":"hello"}' | timeout 20 bin/schedlab-agent >"$TMP/mal.out" 2>/dev/null
contains "knob_get without a path: answered, naming the argument" "$TMP/mal.out" '{"id":5,"ok":false,"error":"args.path: missing or not a string"}'
contains "knob_set without a value: answered" "$TMP/mal.out" '{"id":6,"ok":false,"error":"args.value: missing or not a string"}'
contains "a malformed request: answered with where it breaks" "$TMP/mal.out" '{"id":null,"ok":false,"error":"malformed request: '
equals "line noise: no answer, and the next request is served" \
	"$(grep -c '"ok"' "$TMP/mal.out") $(grep -c '"id":10,"ok":true' "$TMP/mal.out")" "4 1"

# a run's seed (docs/virtual-time.md "Seeds"): the agent perturbs the run
# with it and says how, the same for the same seed, another for another; a
# seed out of range is refused naming the range
seed_req() { printf '{"id":%s,"op":"exec","args":{"argv":["true"],"timeout_s":10,"seed":%s}}\n' "$1" "$2"; }
{ seed_req 1 3788627092; seed_req 2 3788627092; seed_req 3 504368119; seed_req 4 4294967296; } |
	timeout 60 bin/schedlab-agent >"$TMP/seed.out" 2>/dev/null
spin() { jq -r "select(.id == $1) | .result.perturb | \"\(.seed) \(.spin)\"" "$TMP/seed.out"; }
s1=$(spin 1) s2=$(spin 2) s3=$(spin 3)
equals "seed 3788627092: perturbed, the same spin twice" "${s1%% *} $([ -n "${s1#* }" ] && [ "$s1" = "$s2" ] && echo same)" "3788627092 same"
[ -n "$s3" ] && [ "${s3#* }" != "${s1#* }" ] && ok "another seed, another spin ($s1; $s3)" ||
	not_ok "another seed, another spin" "$s1; $s3"
contains "a seed of 2^32 is refused, naming the range" "$TMP/seed.out" 'exec: \"seed\" must be an integer from 0 to 4294967295'
done_testing
