#!/usr/bin/env bash
# timeout: 240
# End-to-end: sl-pgbench run by hand (as root: the server runs as nobody),
# its hostile cases (issue 41), each in its own folder:
#   - a run folder of mode 1777 (/tmp-like) keeps its mode, and a 0700 one
#     is 0700 again after the run (it got the search bits for nobody only
#     while the run lasted; it was left at 0711, and /tmp so too);
#   - SIGKILL of sl-pgbench while pgbench runs leaves no System V segment
#     of its server (the interlock segment is marked for removal once the
#     server is ready: it was left behind, owner nobody);
#   - a run folder without room for --scale is refused before anything is
#     made, naming the room it has and the room it needs;
#   - a disk that fills during `pgbench -i` (a tmpfs in a mount namespace of
#     the test's own, filled by a pgbench wrapper to 22 MiB below full: the
#     server PANICs when it needs a new WAL segment, and pgbench says only
#     "PQputline failed") fails with the server's reason, "No space left on
#     device" from postgres.log, in sl-pgbench's last line (the run's error).
# No speed is asserted.
. "$(dirname "$0")/lib.sh"
require postgresql-15:/usr/lib/postgresql/15/bin/postgres \
	postgresql-15:/usr/lib/postgresql/15/bin/pgbench util-linux:unshare util-linux:fallocate
require_built bin/sl-pgbench
LEFTOVER_NAMES+=(postgres pgbench sl-pgbench initdb)
SLPG=$PWD/bin/sl-pgbench
if [ "$(id -u)" != 0 ]; then
	skip "sl-pgbench as root" "not root: the server's user and the mount namespace need it"
	done_testing
	exit
fi
chmod 0711 "$TMP" # the server's user reaches the run folders below it

# ---- SIGKILL in a folder of mode 1777 ----------------------------------------------
OPEN=$TMP/open
mkdir "$OPEN" && chmod 1777 "$OPEN"
(cd "$OPEN" && exec "$SLPG" --mode select --duration 60 >out 2>err) &
pid=$!
CLEANUP_CMDS+=("kill -9 $pid")
bench="" end=$((SECONDS + 120))
while [ $SECONDS -lt $end ] && [ -z "$bench" ]; do
	bench=$(ours ' -T 60 ' | grep -m1 '/pgbench ' || true)
	sleep 0.2
done
shmid=$(sed -n 7p "$OPEN/pg/data/postmaster.pid" 2>/dev/null | awk '{print $2}')
if [ -n "$bench" ] && [ -n "$shmid" ]; then
	ok "pgbench under way, the server's System V segment is $shmid"
else
	not_ok "pgbench under way" "bench='$bench' shmid='$shmid'" "$(cat "$OPEN/err")"
fi
# should it be left behind (the defect), it goes at the end: ours, no one attached
[ -n "$shmid" ] && CLEANUP_CMDS+=("ipcs -m | awk '\$2 == $shmid && \$3 == \"nobody\" && \$6 == 0' | grep -q . && ipcrm -m $shmid")
equals "... the run folder keeps its mode 1777 while it runs" "$(stat -c %a "$OPEN")" 1777
kill -9 $pid
wait $pid 2>/dev/null
# the postmaster and pgbench die with sl-pgbench (PR_SET_PDEATHSIG), the
# backends when they see their postmaster gone: the segment goes with the
# last of them (up to 60 s on a busy host)
for i in $(seq 600); do
	ipcs -m | awk '{print $2}' | grep -qx -- "$shmid" || break
	sleep 0.1
done
check "SIGKILL of sl-pgbench leaves no System V segment of its server" \
	bash -c "test -n '$shmid' && ! ipcs -m | awk '{print \$2}' | grep -qx -- '$shmid'"
no_leftovers "... nor a process"
equals "... and the folder's mode is still 1777" "$(stat -c %a "$OPEN")" 1777
rm -rf "$OPEN/pg"

# ---- a tmpfs of our own: no room for the scale; the disk full during the load --------
MNT=$TMP/mnt
mkdir "$MNT"
cat >"$TMP/full.sh" <<'E'
# in a mount namespace of its own: the tmpfs vanishes with it
set -e
M=$1 SLPG=$2
mount -t tmpfs -o size=300m,mode=0755 tmpfs "$M"
mkdir "$M/small" "$M/bin" "$M/run"
cd "$M/small"
set +e
"$SLPG" --scale 100 >out 2>err
echo "small: exit $?; $(tail -n 1 err)"
[ -e initdb.txt ] && echo "small: initdb ran"
[ -e pg ] && echo "small: pg/ left"
set -e
# the real programs, and a pgbench that fills the disk before the load
for p in initdb postgres; do ln -s "/usr/lib/postgresql/15/bin/$p" "$M/bin/$p"; done
cat >"$M/bin/pgbench" <<'W'
#!/bin/sh
if [ "$1" = -i ]; then
	free=$(df --output=avail -B1 . | tail -n 1)
	fallocate -l $((free - 22 * 1048576)) pg/fill
fi
exec /usr/lib/postgresql/15/bin/pgbench "$@"
W
chmod 0755 "$M/bin/pgbench"
chmod 0700 "$M/run"
cd "$M/run"
set +e
"$SLPG" --bindir "$M/bin" --scale 2 --duration 1 >out 2>err
echo "full: exit $?; $(grep '^sl-pgbench: ' err | tail -n 1)"
echo "full: mode $(stat -c %a .)"
echo "full: pgbench said $(grep -c 'pgbench: error: ' pgbench-init.txt)"
E
if ! unshare -m --propagation private mount -t tmpfs -o size=1m tmpfs "$MNT" 2>"$TMP/ns.err"; then
	skip "a tmpfs in a mount namespace of our own" "cannot make one here: $(head -c 200 "$TMP/ns.err")"
	done_testing
	exit
fi
timeout 200 unshare -m --propagation private bash "$TMP/full.sh" "$MNT" "$SLPG" >"$TMP/full.out" 2>&1
equals "the namespace's script ran to its end" "$?" 0
contains "no room for --scale 100: refused, naming the room it has and needs" "$TMP/full.out" \
	"small: exit 1; sl-pgbench: the run folder $MNT/small has 300 MiB free; --scale 100 needs about 2752 MiB"
if grep -q "small: initdb ran\|small: pg/ left" "$TMP/full.out"; then
	not_ok "... before anything was made" "$(cat "$TMP/full.out")"
else
	ok "... before anything was made"
fi
contains "the disk full during pgbench -i: the run fails" "$TMP/full.out" "full: exit 1; sl-pgbench: pgbench -i failed"
line=$(grep '^full: exit' "$TMP/full.out")
case "$line" in
*"pgbench -i failed (the server's log, postgres.log: "*"No space left on device"*)
	ok "... its error is the server's reason from postgres.log: No space left on device" ;;
*) not_ok "... its error is the server's reason from postgres.log: No space left on device" "$line" ;;
esac
contains "... pgbench failed too (its own message is the rest of the line)" "$TMP/full.out" "full: pgbench said 1"
contains "a run folder of mode 0700 is 0700 again after the run" "$TMP/full.out" "full: mode 700"
no_leftovers "no postgres, pgbench or sl-pgbench left"
done_testing
