# Synthetic history for the analysis and report tests (sourced after lib.sh;
# gen prints SQL, its rows through tests/e2e/fixture.py).
# On a machine "syn" (kernel 6.1.0-syn, HZ 250):
#   nightly-01..20  nights (session.nightly, schema 15), preempt=full,
#                   hackbench time_s ~ 1.0 for 01..10 and ~ 1.2 (a 20%
#                   step) from 11 on, 3 repetitions each, with a
#                   latency_us histogram per run (10..19 us, from 11 on 10..29)
#   none-01..05     preempt=none, same workload (a second series)
# Session ids 101..125, one boot per session, runs 1001...
P='{"groups":2,"loops":200,"type":"hackbench"}'
gen() { gen_rows | fixture_sql; }
gen_rows() {
	fx machine id=100 name=syn fingerprint=fp-syn
	fx kernel id=100 release=6.1.0-syn config_hash=feedbeef hz=250 sched_mc=1
	local s=100 run=1000 i rep v day name pre hi
	for i in $(seq 1 25); do
		s=$((s + 1))
		if [ "$i" -le 20 ]; then
			name=$(printf 'nightly-%02d' "$i") pre=full night=1
		else
			name=$(printf 'none-%02d' $((i - 20))) pre=none night=0
		fi
		day=$(printf '2026-01-%02dT03:00:00.000Z' "$i")
		fx session id=$s name=syn tag="$name" started_at="$day" nightly=$night
		fx boot id=$s session_id=$s machine_id=100 kernel_id=100 preempt=$pre cmdline=root=/dev/vda
		for rep in 0 1 2; do
			run=$((run + 1))
			# deterministic noise of +-0.4%, a 20% step from nightly-11 on
			v=$(awk -v i="$i" -v r="$rep" 'BEGIN { b = (i > 10 && i <= 20) ? 1.2 : 1.0;
				printf "%.5f", b * (1 + 0.004 * (r - 1) + 0.001 * ((i * 7) % 3 - 1)) }')
			hi=$([ "$i" -gt 10 ] && [ "$i" -le 20 ] && echo 29 || echo 19)
			fx run id=$run session_id=$s boot_id=$s seq=$rep workload=hackbench params="$P" \
				rep=$rep started_at="${day%Z}$rep"
			fx metric run_id=$run workload=hackbench name=time_s value=$v unit=s better=lower
			fx metric run_id=$run workload=hackbench name=loops value=200 unit=count better=none
			fx histogram run_id=$run name=latency_us unit=us \
				data='{"scheme":"linear","nbuckets":100,"buckets":[[10,50],['"$hi"',50]],"overflow":0,"total":100}'
		done
	done
}
