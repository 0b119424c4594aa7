/*
 * Session ownership (owner.h): a controller is named by pid + the pid's
 * start time + host + boot id, so that neither a reused pid nor a reboot
 * of the machine makes a dead controller look alive.
 */
#include "harness/orchestrate/owner.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness/util/proc.h"

static void read_boot_id(char *buf, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	buf[0] = 0;
	if (!strbuf_read_file(&sb, "/proc/sys/kernel/random/boot_id", 256)) {
		strbuf_trim(&sb);
		snprintf(buf, n, "%s", sb.buf);
	}
	strbuf_release(&sb);
}

void owner_self(struct db_owner *me)
{
	memset(me, 0, sizeof(*me));
	me->pid = getpid();
	me->start = (long long)proc_start_time(getpid());
	if (gethostname(me->host, sizeof(me->host) - 1))
		snprintf(me->host, sizeof(me->host), "unknown");
	read_boot_id(me->boot, sizeof(me->boot));
}

int owner_alive(const struct db_owner *o)
{
	struct db_owner me;
	owner_self(&me);
	if (strcmp(o->host, me.host))
		return 1; /* another machine: cannot tell */
	if (strcmp(o->boot, me.boot))
		return 0; /* this machine rebooted since */
	/* (proc_start_time is 0 for a pid that is gone: never a match, even
	   for a row whose start is 0) */
	unsigned long long start = o->pid > 0 ? proc_start_time((pid_t)o->pid) : 0;
	return start && (long long)start == o->start;
}

int owner_claim(struct db *db, int64_t sid, int take_over, const char *prefix,
		struct strbuf *err)
{
	struct db_owner me, held;
	owner_self(&me);
	int rc = db_session_claim(db, sid, &me, owner_alive, take_over, &held);
	if (rc < 0) {
		strbuf_addf(err, "database: %s", db_errmsg(db));
		return -1;
	}
	if (rc == 1) {
		int here = !strcmp(held.host, me.host);
		strbuf_addf(err, "session %lld is being run by pid %lld on %s since %s; ", (long long)sid,
			    held.pid, held.host, held.since);
		if (here)
			strbuf_addf(err, "two controllers on one session would store its runs twice: "
				    "wait for it to end or stop it (kill %lld) and resume then",
				    held.pid);
		else
			strbuf_addstr(err, "schedlab cannot tell from here whether it still runs: "
				      "if it does not, resume with --take-over");
		return 1;
	}
	int same = held.pid == me.pid && held.start == me.start && !strcmp(held.host, me.host);
	if (held.pid && !same)
		fprintf(stderr, "%ssession %lld: taking over from pid %lld on %s (owner since %s), "
			"%s\n", prefix ? prefix : "", (long long)sid, held.pid, held.host, held.since,
			take_over && owner_alive(&held) ? "as --take-over asks"
							: "which no longer runs");
	return 0;
}

int owner_release(struct db *db, int64_t sid, struct strbuf *err)
{
	struct db_owner me;
	owner_self(&me);
	if (db_session_release(db, sid, &me)) {
		strbuf_addf(err, "database: %s", db_errmsg(db));
		return -1;
	}
	return 0;
}
