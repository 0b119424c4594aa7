# Synthetic history for the analysis and report tests (sourced; prints SQL).
# On a machine "syn" (kernel 6.1.0-syn, HZ 250):
#   nightly-01..20  nights (session.nightly, schema 15), preempt=full,
#                   hackbench time_s ~ 1.0 for 01..10 and ~ 1.2 (a 20%
#                   step) from 11 on, 3 repetitions each, with a
#                   latency_us histogram per run (10..19 us, from 11 on 10..29)
#   none-01..05     preempt=none, same workload (a second series)
# Session ids 101..125, one boot per session, runs 1001...
P='{"groups":2,"loops":200,"type":"hackbench"}'
gen() {
	echo "BEGIN;"
	echo "INSERT INTO machine (id, name, fingerprint) VALUES (100, 'syn', 'fp-syn');"
	echo "INSERT INTO kernel (id, release, config_hash, hz, sched_mc) VALUES (100, '6.1.0-syn', 'feedbeef', 250, 1);"
	local s=100 run=1000 i rep v day name pre hi
	for i in $(seq 1 25); do
		s=$((s + 1))
		if [ "$i" -le 20 ]; then
			name=$(printf 'nightly-%02d' "$i") pre=full night=1
		else
			name=$(printf 'none-%02d' $((i - 20))) pre=none night=0
		fi
		day=$(printf '2026-01-%02dT03:00:00.000Z' "$i")
		echo "INSERT INTO session (id, name, plan_json, tag, target, harness_version, status, started_at, nightly) VALUES ($s, 'syn', '{}', '$name', 'local', 'test', 'done', '$day', $night);"
		echo "INSERT INTO boot (id, session_id, seq, cfg, status, machine_id, kernel_id, preempt, cmdline) VALUES ($s, $s, 0, 0, 'ok', 100, 100, '$pre', 'root=/dev/vda');"
		for rep in 0 1 2; do
			run=$((run + 1))
			# deterministic noise of +-0.4%, a 20% step from nightly-11 on
			v=$(awk -v i="$i" -v r="$rep" 'BEGIN { b = (i > 10 && i <= 20) ? 1.2 : 1.0;
				printf "%.5f", b * (1 + 0.004 * (r - 1) + 0.001 * ((i * 7) % 3 - 1)) }')
			hi=$([ "$i" -gt 10 ] && [ "$i" -le 20 ] && echo 29 || echo 19)
			echo "INSERT INTO run (id, session_id, boot_id, seq, round, workload, params, knobs, rep, status, started_at) VALUES ($run, $s, $s, $rep, 0, 'hackbench', '$P', '{}', $rep, 'ok', '${day%Z}$rep');"
			echo "INSERT INTO metric (run_id, workload, name, value, unit, better) VALUES ($run, 'hackbench', 'time_s', $v, 's', 'lower');"
			echo "INSERT INTO metric (run_id, workload, name, value, unit, better) VALUES ($run, 'hackbench', 'loops', 200, 'count', 'none');"
			echo "INSERT INTO histogram (run_id, name, unit, data) VALUES ($run, 'latency_us', 'us', '{\"scheme\":\"linear\",\"nbuckets\":100,\"buckets\":[[10,50],[$hi,50]],\"overflow\":0,\"total\":100}');"
		done
	done
	echo "COMMIT;"
}
