#!/usr/bin/env bash
# Sets up a single-host LAVA instance on this Debian 12 machine, without
# questions, for the lava target's end-to-end test: PostgreSQL, lava-server
# (gunicorn on 127.0.0.1 only, no apache), the scheduler, one local
# lava-worker, a `qemu` device type with $LAVA_DEVICES devices whose
# device dictionaries turn KVM off (TCG: nested KVM does not boot a guest
# here), and a superuser with an API token.
#
# Idempotent: a second run finds every piece set up (and running) and only
# starts what is not running. The daemons are started in the background
# with pid files under $LAVA_STATE (no systemd needed); `setup.sh stop`
# stops exactly those pids.
#
# Prints, on its last line, `url=<http://...> token_file=<path>` and writes
# the same as shell assignments to $LAVA_STATE/env.
#
# Ports, all on 127.0.0.1: LAVA_PORT (default 8100) the web server and API,
# LAVA_PORT+1 lava-publisher's websocket, LAVA_EVENT_PORT (default 5500) its
# ZMQ event stream. LAVA_DEVICES (default 2), LAVA_STATE (default
# /var/lib/schedlab-lava).
set -euo pipefail

PORT="${LAVA_PORT:-8100}"
NDEV="${LAVA_DEVICES:-2}"
STATE="${LAVA_STATE:-/var/lib/schedlab-lava}"
USERNAME=schedlab
WORKER=schedlab-worker
URL="http://127.0.0.1:$PORT"
DEVDIR=/etc/lava-server/dispatcher-config/devices

say() { echo "lava-setup: $*" >&2; }
die() { echo "lava-setup: error: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (installs packages, starts daemons)"

alive() { [ -f "$STATE/$1.pid" ] && kill -0 "$(cat "$STATE/$1.pid")" 2>/dev/null; }

if [ "${1:-}" = stop ]; then
	for d in worker scheduler publisher gunicorn; do
		if alive "$d"; then
			say "stopping $d (pid $(cat "$STATE/$d.pid"))"
			kill "$(cat "$STATE/$d.pid")" || true
		fi
		rm -f "$STATE/$d.pid"
	done
	exit 0
fi

t0=$(date +%s)
mkdir -p "$STATE" "$STATE/log"
chmod 755 "$STATE"

# --- packages: PostgreSQL first and running, because lava-server's
# postinst creates its database and migrates it.
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
apt_install() {
	say "installing: $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" \
		>"$STATE/log/apt.log" 2>&1 || { tail -n 30 "$STATE/log/apt.log" >&2; die "apt-get install $* failed (log: $STATE/log/apt.log)"; }
}
for p in curl iproute2; do installed "$p" || apt_install "$p"; done
if ! installed postgresql; then
	apt_install postgresql
fi
pg_running() { pg_lsclusters -h 2>/dev/null | awk '$4 == "online"' | grep -q .; }
if ! pg_running; then
	cl=$(pg_lsclusters -h | awk 'NR == 1 { print $1, $2 }')
	[ -n "$cl" ] || die "no PostgreSQL cluster (pg_lsclusters is empty)"
	say "starting PostgreSQL cluster $cl"
	# shellcheck disable=SC2086
	pg_ctlcluster $cl start
fi
need=""
for p in lava-server lava-dispatcher lavacli; do installed "$p" || need="$need $p"; done
if [ -n "$need" ]; then
	# shellcheck disable=SC2086
	apt_install $need
fi
# a postinst that failed earlier (database down) is finished now
if dpkg -l lava-server lava-dispatcher | grep -q '^i[^i]'; then
	DEBIAN_FRONTEND=noninteractive dpkg --configure -a >>"$STATE/log/apt.log" 2>&1
fi
t_pkg=$(date +%s)

# --- events: the web app tells lava-publisher about every job change, the
# publisher tells the scheduler (ZMQ, loopback) and the worker (websocket
# on $PORT+1), so a job starts within a second or two instead of at the
# next 20 s polling round of each
EPORT=$((PORT + 1))
ZPORT="${LAVA_EVENT_PORT:-5500}"
want_settings=$(printf 'EVENT_NOTIFICATION: true\nEVENT_SOCKET: "tcp://127.0.0.1:%s"\n' "$ZPORT")
SETTINGS=/etc/lava-server/settings.d/50-schedlab-tests.yaml
if [ "$(cat "$SETTINGS" 2>/dev/null)" != "$want_settings" ]; then
	printf '%s\n' "$want_settings" >"$SETTINGS"
	# restart what read the old settings
	for d in worker scheduler publisher gunicorn; do
		if alive "$d"; then kill "$(cat "$STATE/$d.pid")" || true; sleep 1; fi
		rm -f "$STATE/$d.pid"
	done
fi

# --- the ports must be free or ours
listening() { ss -ltnH "sport = :$1" 2>/dev/null | grep -q .; }
if ! alive gunicorn && listening "$PORT"; then
	die "port $PORT is in use by something else (ss -ltnp 'sport = :$PORT'); set LAVA_PORT"
fi
if ! alive publisher && { listening "$EPORT" || listening "$ZPORT"; }; then
	die "port $EPORT or $ZPORT is in use by something else; set LAVA_PORT or LAVA_EVENT_PORT"
fi

manage() { lava-server manage "$@"; }
# listed PATTERN ARGS...: the output of `lava-server manage ARGS` has a line
# matching PATTERN (captured first: grep -q closing the pipe early would
# fail the pipeline under pipefail)
listed() {
	local pat="$1" out
	shift
	out=$(manage "$@" 2>/dev/null) || return 1
	printf '%s\n' "$out" | grep -q -- "$pat"
}

# --- web server: gunicorn bound to loopback only
if ! alive gunicorn; then
	say "starting gunicorn on 127.0.0.1:$PORT"
	install -d -o lavaserver -g lavaserver /var/log/lava-server
	/usr/bin/gunicorn3 lava_server.wsgi --log-level INFO \
		--log-file "$STATE/log/gunicorn.log" -u lavaserver -g lavaserver \
		--worker-class eventlet --workers 2 --bind "127.0.0.1:$PORT" \
		--timeout 120 --pid "$STATE/gunicorn.pid" --daemon
	for _ in $(seq 1 60); do
		curl -fsS -o /dev/null "$URL/api/v0.2/system/version/" 2>/dev/null && break
		sleep 0.5
	done
	curl -fsS -o /dev/null "$URL/api/v0.2/system/version/" ||
		die "gunicorn does not answer on $URL (log: $STATE/log/gunicorn.log)"
fi

if ! alive publisher; then
	say "starting lava-publisher (websocket 127.0.0.1:$EPORT, events tcp://127.0.0.1:$ZPORT)"
	setsid lava-server manage lava-publisher --level INFO --host 127.0.0.1 --port "$EPORT" \
		--log-file "$STATE/log/publisher.log" </dev/null >>"$STATE/log/publisher.out" 2>&1 &
	echo $! >"$STATE/publisher.pid"
fi

if ! alive scheduler; then
	say "starting lava-scheduler"
	setsid lava-server manage lava-scheduler --level INFO --event-url "tcp://127.0.0.1:$ZPORT" \
		--log-file "$STATE/log/scheduler.log" </dev/null >>"$STATE/log/scheduler.out" 2>&1 &
	echo $! >"$STATE/scheduler.pid"
fi

# --- user and token
if ! listed "^\* $USERNAME\$" users list; then
	say "creating superuser $USERNAME"
	manage users add --superuser --staff --passwd "$(head -c 18 /dev/urandom | base64)" "$USERNAME" >/dev/null
fi
tok_ok() {
	[ -s "$STATE/token" ] &&
		curl -fsS -o /dev/null -H "Authorization: Token $(cat "$STATE/token")" "$URL/api/v0.2/devices/" 2>/dev/null
}
if ! tok_ok; then
	say "creating an API token for $USERNAME"
	(umask 077; manage tokens add --user "$USERNAME" --description schedlab-tests | tail -n 1 | tr -d ' \n' >"$STATE/token.new")
	mv "$STATE/token.new" "$STATE/token"
	tok_ok || die "the new token is refused by $URL"
fi
chmod 600 "$STATE/token"

# --- worker, device type, devices
if ! listed "^\* $WORKER " workers list; then
	manage workers add --health ACTIVE "$WORKER" >/dev/null
fi
if ! listed '^\* qemu ' device-types list; then
	manage device-types add qemu >/dev/null
fi
for i in $(seq 1 "$NDEV"); do
	dev=$(printf 'schedlab-qemu-%02d' "$i")
	dict="$DEVDIR/$dev.jinja2"
	want=$(printf "{%% extends 'qemu.jinja2' %%}\n{%% set no_kvm = True %%}\n{%% set netdevice = 'user' %%}\n{%% set mac_addr = '52:54:00:12:35:%02x' %%}\n{%% set memory = 1024 %%}\n" "$i")
	if [ "$(cat "$dict" 2>/dev/null)" != "$want" ]; then
		printf '%s\n' "$want" >"$dict"
		chown lavaserver:lavaserver "$dict" 2>/dev/null || true
	fi
	if ! listed "^\* $dev " devices list -a; then
		manage devices add --device-type qemu --worker "$WORKER" "$dev" >/dev/null
	fi
	manage devices update --health GOOD "$dev" >/dev/null
done

if ! alive worker; then
	wtok=$(manage shell -c "from lava_scheduler_app.models import Worker; print(Worker.objects.get(hostname='$WORKER').token)" | tail -n 1)
	[ -n "$wtok" ] || die "no token for worker $WORKER"
	mkdir -p "$STATE/worker"
	(umask 077; printf '%s' "$wtok" >"$STATE/worker/token")
	say "starting lava-worker $WORKER"
	setsid /usr/bin/lava-worker --name "$WORKER" --url "$URL/" \
		--token-file "$STATE/worker/token" --worker-dir "$STATE/worker" \
		--ws-url "ws://127.0.0.1:$EPORT/ws/" \
		--ping-interval 2 --job-log-interval 2 --level INFO \
		--log-file "$STATE/log/worker.log" </dev/null >>"$STATE/log/worker.out" 2>&1 &
	echo $! >"$STATE/worker.pid"
fi

# --- wait until the worker is online and the devices are Idle
ok=""
for _ in $(seq 1 60); do
	st=$(curl -fsS -H "Authorization: Token $(cat "$STATE/token")" "$URL/api/v0.2/workers/$WORKER/" 2>/dev/null || true)
	if printf '%s' "$st" | grep -q '"state":"Online"'; then ok=1; break; fi
	sleep 1
done
[ -n "$ok" ] || die "worker $WORKER is not Online (log: $STATE/log/worker.log)"

printf 'LAVA_URL=%s\nLAVA_TOKEN_FILE=%s\nLAVA_USER=%s\n' "$URL" "$STATE/token" "$USERNAME" >"$STATE/env"
t1=$(date +%s)
say "ready in $((t1 - t0)) s (packages $((t_pkg - t0)) s)"
echo "url=$URL token_file=$STATE/token user=$USERNAME"
