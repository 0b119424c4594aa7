# The repository behind the robot's synthetic history (t0820, t0860, t0862;
# the nights' SQL is robot-history.py's): sourced after lib.sh.
#   history_repo DIR NIGHTS
# makes a git repository in DIR with one commit a night and three on
# night 5 (files core.c, subjects "sched: night I change J", author Ann
# Author; SUBJECT[I], when set, is night I's subject), and sets COMMITS[I]
# to night I's last commit. The identity and
# an empty git configuration are exported for the test's later git calls.
export GIT_AUTHOR_NAME="Ann Author" GIT_AUTHOR_EMAIL=ann@example.org GIT_COMMITTER_NAME=t \
	GIT_COMMITTER_EMAIL=t@example.org GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
history_repo() {
	local dir=$1 nights=$2 i j k
	git init -q -b main "$dir" || return 1
	COMMITS=()
	for i in $(seq 1 "$nights"); do
		k=1
		[ "$i" = 5 ] && k=3
		for j in $(seq 1 $k); do
			echo "$i.$j" >"$dir/core.c"
			git -C "$dir" add core.c &&
				git -C "$dir" commit -qm "${SUBJECT[$i]:-sched: night $i change $j}" ||
				return 1
		done
		COMMITS[$i]=$(git -C "$dir" rev-parse HEAD)
	done
}
