/*
 * Unit tests of the console excerpt a lost run or a failed boot keeps
 * (harness/util/kconsole.c): the first kernel report is found behind a
 * timestamp, kept ahead of the last lines when they no longer show it, not
 * repeated when they do, and an ordinary boot log has no report at all.
 */
#include "harness/util/kconsole.h"
#include "tests/unit/tap.h"

static const char boot[] =
	"[    2.367653] Run /init as init process\n"
	"schedlab-init: up at 2.49 s\n"
	"schedlab-init: starting schedlab-agent --tty /dev/ttyS1\n";

TEST(no_report_in_a_boot_log)
{
	CHECK(kconsole_first_report(boot, strlen(boot)) == -1);
	struct strbuf sb = STRBUF_INIT;
	kconsole_excerpt(boot, strlen(boot), 2, 30, &sb);
	CHECK_STR(sb.buf, "schedlab-init: up at 2.49 s\n"
			  "schedlab-init: starting schedlab-agent --tty /dev/ttyS1\n");
	strbuf_release(&sb);
	kconsole_excerpt("", 0, 2, 30, &sb);
	CHECK(sb.len == 0);
	strbuf_release(&sb);
}

TEST(a_stall_header_before_the_tail_is_kept)
{
	struct strbuf t = STRBUF_INIT;
	strbuf_addstr(&t, boot);
	long at = (long)t.len;
	strbuf_addstr(&t, "[  116.870001] rcu: INFO: rcu_sched self-detected stall on CPU\n");
	for (int i = 0; i < 50; i++)
		strbuf_addf(&t, "[  116.8761%02d] R%02d: ffff888004a5c8c0\n", i, i);
	strbuf_addstr(&t, "[  116.876525]  </TASK>\n");
	CHECK(kconsole_first_report(t.buf, t.len) == at);

	struct strbuf sb = STRBUF_INIT;
	kconsole_excerpt(t.buf, t.len, 5, 3, &sb);
	CHECK_STR(sb.buf, "--- first kernel report ---\n"
			  "[  116.870001] rcu: INFO: rcu_sched self-detected stall on CPU\n"
			  "[  116.876100] R00: ffff888004a5c8c0\n"
			  "[  116.876101] R01: ffff888004a5c8c0\n"
			  "[...]\n--- last lines ---\n"
			  "[  116.876146] R46: ffff888004a5c8c0\n"
			  "[  116.876147] R47: ffff888004a5c8c0\n"
			  "[  116.876148] R48: ffff888004a5c8c0\n"
			  "[  116.876149] R49: ffff888004a5c8c0\n"
			  "[  116.876525]  </TASK>\n");
	strbuf_release(&sb);

	/* the whole report fits before the tail: no "[...]" */
	kconsole_excerpt(t.buf, t.len, 5, 100, &sb);
	CHECK(strstr(sb.buf, "[...]") == NULL);
	CHECK(strstr(sb.buf, "R45: ffff888004a5c8c0\n--- last lines ---\n[  116.876146] R46") != NULL);
	strbuf_release(&sb);

	/* the tail shows the header itself: the report is not repeated */
	kconsole_excerpt(t.buf, t.len, 53, 30, &sb);
	CHECK(strstr(sb.buf, "first kernel report") == NULL);
	CHECK(strncmp(sb.buf, "schedlab-init: starting", 23) == 0);
	strbuf_release(&sb);
	strbuf_release(&t);
}

TEST(each_kind_of_report)
{
	static const char *const lines[] = {
		"[   22.1] watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [hackbench:99]\n",
		"[   22.1] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n",
		"[  242.1] INFO: task kworker/0:1:12 blocked for more than 120 seconds.\n",
		"[    1.0] BUG: kernel NULL pointer dereference, address: 0000000000000000\n",
		"[    1.0] kernel BUG at mm/slub.c:1234!\n",
		"[    1.0] general protection fault, probably for non-canonical address\n",
		"[    1.0] WARNING: CPU: 1 PID: 1 at kernel/smp.c:912 smp_call_function_many_cond\n",
		"[    1.0] Kernel panic - not syncing: VFS: Unable to mount root fs\n",
		"Kernel panic - not syncing: Attempted to kill init!\n",
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct strbuf t = STRBUF_INIT;
		strbuf_addf(&t, "%s%s", boot, lines[i]);
		CHECK(kconsole_first_report(t.buf, t.len) == (long)strlen(boot));
		strbuf_release(&t);
	}
	/* a report's words inside another line are not a report */
	const char *other = "[    1.0] clocksource: Marking clocksource 'tsc' as unstable (BUG: no)\n";
	CHECK(kconsole_first_report(other, strlen(other)) == -1);
	/* a text cut inside a line with no newline at all */
	const char *cut = "[ 1.0] BUG: soft";
	CHECK(kconsole_first_report(cut, strlen(cut)) == 0);
	struct strbuf sb = STRBUF_INIT;
	kconsole_excerpt(cut, strlen(cut), 1, 1, &sb);
	CHECK_STR(sb.buf, cut);
	strbuf_release(&sb);
}

int main(void)
{
	RUN(no_report_in_a_boot_log);
	RUN(a_stall_header_before_the_tail_is_kept);
	RUN(each_kind_of_report);
	return tap_done();
}
