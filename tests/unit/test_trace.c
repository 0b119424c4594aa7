/*
 * Unit tests of the scheduler-trace summary (analysis/trace.c): a real
 * trace captured on this host (a tracefs instance with sched_switch,
 * sched_waking, sched_wakeup and sched_migrate_task on while hackbench -g 2
 * -l 100 ran, kernel 6.18; tests/data/trace-host-hackbench.txt, its first
 * 3000 events) and one from Debian's 6.1 in a qemu guest (the file
 * schedlab-trace.txt of a traced hackbench run of the qemu target, 3000
 * events from hackbench's start; tests/data/trace-guest-debian-6.1-
 * hackbench.txt), whose counts were checked with grep; hand-made traces with
 * known latencies, comm names with spaces, the window cut, and garbage
 * rejected with its line number.
 */
#include "analysis/trace.h"
#include "tests/unit/tap.h"

static int parse_s(const char *t, double win, struct trace_summary *s, char *err)
{
	return trace_parse(t, strlen(t), win, s, err, 200);
}

TEST(real_host_trace)
{
	char *t = testdata_slurp("trace-host-hackbench.txt");
	CHECK(t != NULL);
	if (!t)
		return;
	struct trace_summary s;
	char err[200] = "";
	CHECK(parse_s(t, 0, &s, err) == 0);
	CHECK_STR(err, "");
	/* grep -c ': sched_switch:', ': sched_migrate_task:',
	   -E 'prev_state=R\+? ==>' */
	CHECK(s.switches == 1380);
	CHECK(s.migrations == 36);
	CHECK(s.preemptions == 541);
	CHECK(s.events == 1380 + 36 + 792 + 792);
	CHECK(s.other == 0 && s.lost == 0);
	/* every wakeup that reached a CPU in the trace has one latency */
	CHECK(s.wakeups > 100 && s.wakeups <= 792);
	CHECK(s.lat_p50_us > 0 && s.lat_p50_us <= s.lat_p99_us && s.lat_p99_us <= s.lat_max_us);
	CHECK(s.lat_max_us < 1e6);
	int hb = 0;
	for (size_t i = 0; i < s.ntasks; i++)
		hb += !strcmp(s.tasks[i].comm, "hackbench") && s.tasks[i].wakeups > 0;
	CHECK(hb >= 10);
	CHECK(s.span_s > 0 && s.span_s < 1);
	json_t *j = trace_summary_json(&s, 5);
	CHECK(json_array_size(json_object_get(j, "tasks")) <= 5);
	CHECK(json_integer_value(json_object_get(j, "switches")) == 1380);
	json_decref(j);
	/* the last 10 ms only: fewer events, all in the window */
	struct trace_summary w;
	CHECK(parse_s(t, 0.010, &w, err) == 0);
	CHECK(w.events > 0 && w.events < s.events);
	CHECK(w.span_s <= 0.010 + 1e-9);
	trace_summary_release(&w);
	trace_summary_release(&s);
	free(t);
}

TEST(real_guest_trace)
{
	char *t = testdata_slurp("trace-guest-debian-6.1-hackbench.txt");
	CHECK(t != NULL);
	if (!t)
		return;
	struct trace_summary s;
	char err[200] = "";
	CHECK(parse_s(t, 0, &s, err) == 0);
	CHECK_STR(err, "");
	CHECK(s.switches == 1291);
	CHECK(s.migrations == 193);
	/* grep -cE 'prev_state=R\+? ==>' says 519, of which 41 are the idle
	   task (prev_pid=0), which is no preemption */
	CHECK(s.preemptions == 519 - 41);
	CHECK(s.events == 1291 + 193 + 758 + 758);
	CHECK(s.wakeups > 100 && s.wakeups <= 758);
	CHECK(s.lat_p50_us > 0 && s.lat_p50_us <= s.lat_p99_us && s.lat_p99_us <= s.lat_max_us);
	int agent = 0;
	for (size_t i = 0; i < s.ntasks; i++)
		agent |= !strcmp(s.tasks[i].comm, "schedlab-agent") && s.tasks[i].pid == 97;
	CHECK(agent);
	trace_summary_release(&s);
	free(t);
}

static const char hand[] =
	"# tracer: nop\n"
	"#\n"
	"          <idle>-0       [001] d..2.   100.000000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=my task-x next_pid=10 next_prio=120\n"
	"       my task-x-10      [001] d..2.   100.000100: sched_switch: prev_comm=my task-x prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n"
	"            srv-20      [000] d..3.   100.001000: sched_waking: comm=my task-x pid=10 prio=120 target_cpu=001\n"
	"            srv-20      [000] d..3.   100.001010: sched_wakeup: comm=my task-x pid=10 prio=120 target_cpu=001\n"
	"          <idle>-0       [001] d..2.   100.001050: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=my task-x next_pid=10 next_prio=120\n"
	"       my task-x-10      [001] d..2.   100.002000: sched_switch: prev_comm=my task-x prev_pid=10 prev_prio=120 prev_state=R+ ==> next_comm=srv next_pid=20 next_prio=120\n"
	"            srv-20      [001] d..2.   100.002500: sched_switch: prev_comm=srv prev_pid=20 prev_prio=120 prev_state=D ==> next_comm=my task-x next_pid=10 next_prio=120\n"
	"            srv-20      [001] d..3.   100.002600: sched_migrate_task: comm=srv pid=20 prio=120 orig_cpu=1 dest_cpu=0\n"
	"CPU:1 [LOST 7 EVENTS]\n"
	"            srv-20      [000] d..3.   100.003000: sched_wakeup: comm=srv pid=20 prio=120 target_cpu=000\n"
	"          <idle>-0       [000] d..2.   100.003200: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=srv next_pid=20 next_prio=120\n"
	"            srv-20      [000] ..... 100.003300: sys_enter: NR 1\n";

TEST(hand_made)
{
	struct trace_summary s;
	char err[200] = "";
	CHECK(parse_s(hand, 0, &s, err) == 0);
	CHECK_STR(err, "");
	CHECK(s.switches == 6);
	CHECK(s.preemptions == 1);   /* R+ of "my task-x"; the idle task's R is no preemption */
	CHECK(s.migrations == 1);
	CHECK(s.lost == 7 && s.other == 1);
	CHECK(s.wakeups == 2);
	/* waking 100.001000 -> on CPU 100.001050: 50 us (from waking, not wakeup);
	   srv: wakeup only, 100.003000 -> 100.003200: 200 us; the preempted
	   task's return at 100.002500 is no wakeup */
	CHECK_NEAR(s.lat_max_us, 200, 0.01);
	CHECK_NEAR(s.lat_p50_us, 50, 0.01);
	CHECK(s.ntasks >= 2);
	int found = 0;
	for (size_t i = 0; i < s.ntasks; i++)
		if (s.tasks[i].pid == 10) {
			found = 1;
			CHECK_STR(s.tasks[i].comm, "my task-x");
			CHECK(s.tasks[i].preemptions == 1 && s.tasks[i].switches == 3);
			CHECK_NEAR(s.tasks[i].lat_max_us, 50, 0.01);
		}
	CHECK(found);
	trace_summary_release(&s);
	/* window of the last 0.5 ms before 100.0033: only srv's wakeup */
	CHECK(parse_s(hand, 0.0005, &s, err) == 0);
	CHECK(s.wakeups == 1 && s.switches == 1 && s.migrations == 0);
	CHECK_NEAR(s.lat_max_us, 200, 0.01);
	trace_summary_release(&s);
}

TEST(garbage_rejected)
{
	struct trace_summary s;
	char err[200] = "";
	CHECK(parse_s("# x\nhello world\n", 0, &s, err) == -1);
	CHECK_CONTAINS(err, "line 2:");
	CHECK(parse_s("a-1 [000] d..2. 5.0: sched_switch: prev_comm=a prev_pid=x ==> next_comm=b next_pid=2\n",
		      0, &s, err) == -1);
	CHECK_CONTAINS(err, "line 1: sched_switch without");
	CHECK(parse_s("a-1 [000] d..2. zz: sched_wakeup: comm=a pid=1\n", 0, &s, err) == -1);
	CHECK_CONTAINS(err, "no timestamp");
	CHECK(parse_s("a-1 [000] d..2. 5.0: sched_wakeup: comm=a pid=-3 prio=1\n", 0, &s, err) == -1);
	CHECK(parse_s("a-1 [000] d..2. 9.0: sched_wakeup: comm=a pid=3 prio=1\n"
		      "a-1 [000] d..2. 5.0: sched_wakeup: comm=a pid=3 prio=1\n", 0, &s, err) == -1);
	CHECK_CONTAINS(err, "line 2: timestamp");
	/* empty text: nothing, no error */
	CHECK(parse_s("", 0, &s, err) == 0 && s.events == 0);
	trace_summary_release(&s);
}

int main(void)
{
	RUN(real_host_trace);
	RUN(real_guest_trace);
	RUN(hand_made);
	RUN(garbage_rejected);
	return tap_done();
}
