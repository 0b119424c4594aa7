/*
 * Unit tests of the wakeup-placement evidence: the /proc/<pid>/sched parser
 * and the dump sums (analysis/tasksched.c) on real files (this host's 6.18
 * kernel without CONFIG_SCHEDSTATS, Debian 6.1 in a qemu guest with
 * schedstats on), the older "se.statistics." names, missing fields, garbage
 * and huge values; and the task_* metrics and notes the native drivers make
 * of a dump (workloads/placement.c).
 */
#include <stdint.h>

#include "analysis/tasksched.h"
#include "tests/unit/tap.h"
#include "workloads/placement.h"
#include "workloads/workload.h"

static int parse_s(const char *text, struct task_sched *t, char *err)
{
	return task_sched_parse(text, strlen(text), t, err, 200);
}

/* the "=== self-sched" section of the guest snapshot: `cat /proc/self/sched`
 * in Debian's 6.1 guest with schedstats on */
TEST(real_guest_6_1)
{
	char *snap = testdata_slurp("guest-debian-6.1-snapshot.txt");
	CHECK(snap != NULL);
	if (!snap)
		return;
	char *b = strstr(snap, "=== self-sched\n"), *e = b ? strstr(b, "=== topology") : NULL;
	CHECK(b && e);
	if (!b || !e) {
		free(snap);
		return;
	}
	b += strlen("=== self-sched\n");
	struct task_sched t;
	char err[200] = "";
	CHECK(task_sched_parse(b, (size_t)(e - b), &t, err, sizeof(err)) == 0);
	CHECK_STR(err, "");
	CHECK_STR(t.comm, "cat");
	CHECK(t.pid == 175 && t.threads == 1);
	for (int f = 0; f < TS_NFIELDS; f++)
		CHECK(task_sched_has(&t, f));
	CHECK(t.v[TS_SUM_EXEC] == 2335221);          /* 2.335221 ms */
	CHECK(t.v[TS_WAIT_COUNT] == 1 && t.v[TS_WAKEUPS] == 0);
	free(snap);
}

/* a real file of this host (6.18, no CONFIG_SCHEDSTATS): the schedstat
 * fields are missing, not 0 */
TEST(real_host_no_schedstats)
{
	char *s = testdata_slurp("proc-sched-6.18-host.txt");
	CHECK(s != NULL);
	if (!s)
		return;
	struct task_sched t;
	char err[200] = "";
	CHECK(parse_s(s, &t, err) == 0);
	CHECK_STR(err, "");
	CHECK(task_sched_has(&t, TS_NR_MIGRATIONS) && task_sched_has(&t, TS_NR_SWITCHES));
	CHECK(!task_sched_has(&t, TS_WAKEUPS) && !task_sched_has(&t, TS_WAIT_SUM) &&
	      !task_sched_has(&t, TS_WAKEUPS_AFFINE));
	free(s);
}

TEST(older_prefixes)
{
	const char *txt =
		"sl-jbb (42, #threads: 7)\n"
		"---------------------------------------------------------\n"
		"se.nr_migrations                  :                    3\n"
		"se.statistics.wait_sum            :           123.456789\n"
		"se.statistics.wait_count          :                   10\n"
		"se.statistics.nr_wakeups          :                   20\n"
		"se.statistics.nr_wakeups_affine   :                   12\n"
		"stats.nr_wakeups_local            :                    5\n"
		"se.statistics.iowait_sum          :                    7\n";
	struct task_sched t;
	char err[200] = "";
	CHECK(parse_s(txt, &t, err) == 0);
	CHECK_STR(err, "");
	CHECK(t.pid == 42 && t.threads == 7);
	CHECK(t.v[TS_WAIT_SUM] == 123456789ull);
	CHECK(t.v[TS_IOWAIT_SUM] == 7000000ull);      /* "7" ms */
	CHECK(t.v[TS_WAKEUPS_AFFINE] == 12 && t.v[TS_WAKEUPS_LOCAL] == 5 && t.v[TS_WAKEUPS] == 20);
	CHECK(t.v[TS_NR_MIGRATIONS] == 3 && t.v[TS_WAIT_COUNT] == 10);
	CHECK(!task_sched_has(&t, TS_WAKEUPS_REMOTE));   /* missing stays missing */
	/* a comm with spaces and parentheses */
	CHECK(parse_s("a (b) c (9, #threads: 1)\nnr_wakeups : 1\n", &t, err) == 0);
	CHECK_STR(t.comm, "a (b) c");
	/* no header at all is tolerated; unknown fields are skipped */
	CHECK(parse_s("nr_wakeups : 1\nse.future_field : 17\nnuma_preferred_nid : -1\n", &t,
		      err) == 0);
	CHECK(t.v[TS_WAKEUPS] == 1 && t.pid == -1);
}

#define BAD(text, want)                                                          \
	do {                                                                     \
		struct task_sched t_;                                            \
		char e_[200] = "";                                               \
		CHECK(task_sched_parse(text, sizeof(text) - 1, &t_, e_, sizeof(e_)) == -1); \
		CHECK_CONTAINS(e_, want);                                        \
	} while (0)

TEST(garbage_rejected_with_line)
{
	BAD("x (1, #threads: 1)\n----\nnr_wakeups : 1\n\x01\x02 binary junk\n",
	    "line 4: not a \"name : value\" line");
	BAD("nr_wakeups : -1\n", "line 1: nr_wakeups: negative value");
	BAD("\nnr_wakeups_local : 1.5\n", "line 2: nr_wakeups_local: a count with a fraction");
	BAD("nr_wakeups : 1\nnr_wakeups : 2\n", "line 2: nr_wakeups: given twice");
	BAD("se.statistics.nr_wakeups : 1\nnr_wakeups : 2\n", "given twice");
	BAD("wait_sum : 12abc\n", "line 1: wait_sum: not a number");
	BAD("wait_sum : 1.1234567890\n", "more than 9 decimals");
	BAD("wait_sum : \n", "not a number");
	BAD("nr_wakeups : 1\nnr\"wakeups : 2\n", "line 2: invalid character");
	BAD("nr_wakeups : 1\0\n", "line 1: contains a NUL byte");
	BAD(" : 5\n", "empty field name");
	char longline[1200];
	memset(longline, 'a', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = 0;
	struct task_sched t;
	char err[200] = "";
	CHECK(parse_s(longline, &t, err) == -1);
	CHECK_CONTAINS(err, "line 1: longer than 512 bytes");
	char *big = calloc(1, TASK_SCHED_MAX_TEXT + 2);
	memset(big, '\n', TASK_SCHED_MAX_TEXT + 1);
	CHECK(task_sched_parse(big, TASK_SCHED_MAX_TEXT + 1, &t, err, sizeof(err)) == -1);
	CHECK_CONTAINS(err, "more than the 65536");
	free(big);
	CHECK(task_sched_parse(NULL, 0, &t, err, sizeof(err)) == -1);
}

TEST(huge_values)
{
	struct task_sched t;
	char err[200] = "";
	CHECK(parse_s("nr_wakeups : 18446744073709551615\n", &t, err) == 0);
	CHECK(t.v[TS_WAKEUPS] == UINT64_MAX);
	BAD("nr_wakeups : 18446744073709551616\n", "line 1: nr_wakeups: value out of range");
	BAD("nr_wakeups : 99999999999999999999999999\n", "value out of range");
	/* ms -> ns: the largest time that fits, and one beyond */
	CHECK(parse_s("wait_sum : 18446744073709.551615\n", &t, err) == 0);
	CHECK(t.v[TS_WAIT_SUM] == UINT64_MAX);
	BAD("wait_sum : 18446744073709.551616\n", "wait_sum: value out of range");
	BAD("wait_sum : 18446744073710.000000\n", "value out of range");
}

/* one task's file with the fields a dump test needs */
static void sched_text(char *buf, size_t n, int tid, unsigned long long w, unsigned long long l,
		       unsigned long long r, unsigned long long aff, unsigned long long att,
		       const char *wait_ms, unsigned long long wc)
{
	snprintf(buf, n,
		 "sl-pingpong (%d, #threads: 3)\n"
		 "-------------------------------------------------------------------\n"
		 "se.nr_migrations                             :                    %llu\n"
		 "wait_sum                                     :           %s\n"
		 "wait_count                                   :                    %llu\n"
		 "iowait_sum                                   :             0.000000\n"
		 "iowait_count                                 :                    0\n"
		 "nr_wakeups                                   :                    %llu\n"
		 "nr_wakeups_sync                              :                    %llu\n"
		 "nr_wakeups_migrate                           :                    %llu\n"
		 "nr_wakeups_local                             :                    %llu\n"
		 "nr_wakeups_remote                            :                    %llu\n"
		 "nr_wakeups_affine                            :                    %llu\n"
		 "nr_wakeups_affine_attempts                   :                    %llu\n"
		 "current_node=0, numa_group_id=0\n"
		 "numa_faults node=0 task_private=0 task_shared=0 group_private=0 group_shared=0\n",
		 tid, r, wait_ms, wc, w, w / 2, r, l, r, aff, att);
}

static char *dump_of(const char *const *parts)
{
	size_t n = 64;
	for (const char *const *p = parts; *p; p++)
		n += strlen(*p) + 1;
	char *d = calloc(1, n);
	strcpy(d, "schedlab-task-sched 1\n");
	for (const char *const *p = parts; *p; p++)
		strcat(d, *p);
	return d;
}

TEST(dump_sums)
{
	char a0[2048], a1[2048], b0[2048], b1[2048], c1[2048];
	sched_text(a0, sizeof(a0), 10, 100, 60, 40, 5, 10, "1.000000", 100);
	sched_text(a1, sizeof(a1), 10, 300, 160, 140, 25, 50, "3.500000", 300);
	sched_text(b0, sizeof(b0), 11, 10, 10, 0, 0, 0, "0.000000", 10);
	sched_text(b1, sizeof(b1), 11, 20, 15, 5, 2, 4, "0.250000", 20);
	sched_text(c1, sizeof(c1), 12, 7, 7, 0, 1, 1, "0.010000", 7);   /* born in the window */
	char h[6][40];
	snprintf(h[0], 40, "@@ start 10\n");
	snprintf(h[1], 40, "@@ start 11\n");
	snprintf(h[2], 40, "@@ end 10\n");
	snprintf(h[3], 40, "@@ end 11\n");
	snprintf(h[4], 40, "@@ end 12\n");
	const char *parts[] = { h[0], a0, h[1], b0, h[2], a1, h[3], b1, h[4], c1, NULL };
	char *d = dump_of(parts);
	struct task_sched_sum s;
	char err[200] = "";
	CHECK(task_sched_dump_sum(d, strlen(d), &s, err, sizeof(err)) == TS_DUMP_OK);
	CHECK_STR(err, "");
	CHECK(s.ntasks == 3 && s.nborn == 1);
	CHECK(s.v[TS_WAKEUPS] == 200 + 10 + 7);
	CHECK(s.v[TS_WAKEUPS_LOCAL] == 100 + 5 + 7 && s.v[TS_WAKEUPS_REMOTE] == 100 + 5);
	CHECK(s.v[TS_WAKEUPS_AFFINE] == 20 + 2 + 1 && s.v[TS_WAKEUPS_AFFINE_ATTEMPTS] == 40 + 4 + 1);
	CHECK(s.v[TS_WAIT_SUM] == 2500000 + 250000 + 10000);
	CHECK(s.v[TS_WAIT_COUNT] == 200 + 10 + 7);
	CHECK(task_sched_has((const struct task_sched *)&(struct task_sched){ .present = s.present },
			     TS_WAKEUPS_SYNC));
	CHECK(!((s.present >> TS_NR_SWITCHES) & 1));     /* not in these files: missing */

	/* the metrics the drivers store */
	json_t *files = json_pack("{s:s}", PLACEMENT_FILE, d);
	struct wl_output out = { .files = files };
	struct metric_set ms;
	metric_set_init(&ms);
	placement_parse(NULL, &out, &ms);
	CHECK(ms.note.len == 0);
	const struct metric *m = metric_find(&ms, "task_wakeups");
	CHECK(m && m->value == 217 && !strcmp(m->unit, "count"));
	m = metric_find(&ms, "task_local_wakeup_pct");
	CHECK(m && fabs(m->value - 100.0 * 112 / 217) < 1e-9);
	m = metric_find(&ms, "task_remote_wakeup_pct");
	CHECK(m && fabs(m->value - 100.0 * 105 / 217) < 1e-9);
	m = metric_find(&ms, "task_affine_wakeup_pct");
	CHECK(m && fabs(m->value - 100.0 * 23 / 45) < 1e-9);
	m = metric_find(&ms, "task_migrate_wakeup_pct");
	CHECK(m && fabs(m->value - 100.0 * 105 / 217) < 1e-9);
	m = metric_find(&ms, "task_wait_sum_ms");
	CHECK(m && fabs(m->value - 2.76) < 1e-9 && m->better == BETTER_NONE);
	m = metric_find(&ms, "task_wait_mean_us");
	CHECK(m && fabs(m->value - 2760.0 / 217) < 1e-9 && m->better == BETTER_LOWER);
	CHECK(metric_find(&ms, "task_files") && metric_find(&ms, "task_files")->value == 3);
	CHECK(metric_find(&ms, "task_iowait_count") && metric_find(&ms, "task_iowait_sum_ms"));
	CHECK(!metric_find(&ms, "task_wakeups_idle"));   /* never counted by the kernel */
	metric_set_release(&ms);
	json_decref(files);
	free(d);
}

static enum ts_dump_status dump_status(const char *d, char *err)
{
	struct task_sched_sum s;
	return task_sched_dump_sum(d, strlen(d), &s, err, 200);
}

TEST(dump_absent_and_bad)
{
	char a0[2048], a1[2048];
	sched_text(a0, sizeof(a0), 10, 100, 60, 40, 5, 10, "1.000000", 100);
	sched_text(a1, sizeof(a1), 10, 90, 50, 40, 5, 10, "1.000000", 100);
	char err[200];
	const char *p1[] = { "@@ start 10\n", a0, NULL };          /* exited in the window */
	char *d = dump_of(p1);
	CHECK(dump_status(d, err) == TS_DUMP_ABSENT);
	CHECK_CONTAINS(err, "task 10 has no end snapshot");
	free(d);
	const char *p2[] = { "@@ start 10\n", a0, "@@ end 10\n", a1, NULL };   /* backwards */
	d = dump_of(p2);
	CHECK(dump_status(d, err) == TS_DUMP_BAD);
	CHECK_CONTAINS(err, "task 10: nr_wakeups went backwards");
	free(d);
	const char *p3[] = { "@@ start 10 error No such file or directory\n", NULL };
	d = dump_of(p3);
	CHECK(dump_status(d, err) == TS_DUMP_ABSENT);
	CHECK_CONTAINS(err, "/proc/10/sched (start of the window): No such file or directory");
	free(d);
	const char *p4[] = { "@@ start 10\n", a0, "@@ truncated\n", NULL };
	d = dump_of(p4);
	CHECK(dump_status(d, err) == TS_DUMP_ABSENT);
	CHECK_CONTAINS(err, "size limit");
	free(d);
	const char *p5[] = { "@@ start 10\n", a0, "@@ start 10\n", a0, NULL };
	d = dump_of(p5);
	CHECK(dump_status(d, err) == TS_DUMP_BAD);
	CHECK_CONTAINS(err, "task 10: two start snapshots");
	free(d);
	const char *p6[] = { "@@ end 10\n", "x (10, #threads: 1)\n---\nnr_wakeups : 1\nbogus\n",
			     NULL };
	d = dump_of(p6);
	CHECK(dump_status(d, err) == TS_DUMP_BAD);
	CHECK_CONTAINS(err, "line 6 (task 10, end): not a \"name : value\" line");
	free(d);
	const char *p7[] = { "@@ middle 10\n", NULL };
	d = dump_of(p7);
	CHECK(dump_status(d, err) == TS_DUMP_BAD);
	CHECK_CONTAINS(err, "line 2: expected \"@@ start|end TID\"");
	free(d);
	const char *p8[] = { "garbage before any task\n", NULL };
	d = dump_of(p8);
	CHECK(dump_status(d, err) == TS_DUMP_BAD);
	free(d);
	const char *p9[] = { "@@ start 10\n", "@@ end 10\n", a0, NULL };
	d = dump_of(p9);
	CHECK(dump_status(d, err) == TS_DUMP_ABSENT);
	CHECK_CONTAINS(err, "/proc/10/sched (start of the window) was empty");
	free(d);
	CHECK(dump_status("not a dump\n", err) == TS_DUMP_BAD);
	CHECK_CONTAINS(err, "line 1: not a task-sched dump");
	CHECK(dump_status("schedlab-task-sched 1\n", err) == TS_DUMP_ABSENT);
	CHECK_CONTAINS(err, "no task");
}

/* real dumps of sl-pingpong (threads: 2 stages + client; procs: 1 stage +
 * client) and sl-jbb (2 workers, 1 injector, main) in Debian's 6.1 guest
 * with schedstats on (the plan of tests/e2e/t0530-qemu-placement.sh, captured
 * from its database);
 * the sums are what that run stored */
TEST(real_guest_dumps)
{
	static const struct {
		const char *file;
		int ntasks;
		uint64_t wakeups, local, remote, affine, attempts, migrate, wait_count;
	} want[] = {
		{ "task-sched-debian-6.1-pingpong.txt", 3, 626, 379, 247, 0, 0, 5, 1030 },
		{ "task-sched-debian-6.1-pingpong-procs.txt", 2, 2231, 74, 2157, 2114, 2114, 4, 2281 },
		{ "task-sched-debian-6.1-jbb.txt", 4, 428, 280, 148, 2, 21, 26, 566 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char *d = testdata_slurp(want[i].file);
		CHECK(d != NULL);
		if (!d)
			continue;
		struct task_sched_sum s;
		char err[200] = "";
		CHECK(task_sched_dump_sum(d, strlen(d), &s, err, sizeof(err)) == TS_DUMP_OK);
		CHECK_STR(err, "");
		CHECK(s.present == (1u << TS_NFIELDS) - 1);
		CHECK(s.ntasks == want[i].ntasks && s.nborn == 0);
		CHECK(s.v[TS_WAKEUPS] == want[i].wakeups);
		CHECK(s.v[TS_WAKEUPS_LOCAL] == want[i].local && s.v[TS_WAKEUPS_REMOTE] == want[i].remote);
		CHECK(s.v[TS_WAKEUPS_AFFINE] == want[i].affine);
		CHECK(s.v[TS_WAKEUPS_AFFINE_ATTEMPTS] == want[i].attempts);
		CHECK(s.v[TS_WAKEUPS_MIGRATE] == want[i].migrate);
		CHECK(s.v[TS_WAIT_COUNT] == want[i].wait_count);
		/* counted by no current kernel: why no metric is made of them */
		CHECK(s.v[TS_WAKEUPS_IDLE] == 0 && s.v[TS_WAKEUPS_PASSIVE] == 0);
		free(d);
	}
}

/* a real dump of Debian's 7.3 in a sealed guest (pingpong, schedstats
 * off): its "effective uclamp.min" (a field name with a space) was refused
 * as "invalid character in a field name", so 7.3 gave no placement evidence */
TEST(real_guest_7_3_uclamp)
{
	char *d = testdata_slurp("task-sched-debian-7.3-pingpong.txt");
	CHECK(d != NULL);
	if (!d)
		return;
	struct task_sched_sum s;
	char err[200] = "";
	CHECK(task_sched_dump_sum(d, strlen(d), &s, err, sizeof(err)) == TS_DUMP_OK);
	CHECK_STR(err, "");
	CHECK(s.ntasks == 3 && (s.present >> TS_NR_MIGRATIONS & 1) && (s.present >> TS_NR_SWITCHES & 1));
	free(d);
}

/* this host's real dump (no CONFIG_SCHEDSTATS): a note, and no metric */
TEST(placement_without_schedstats)
{
	char *d = testdata_slurp("task-sched-6.18-host.txt");
	CHECK(d != NULL);
	if (!d)
		return;
	struct task_sched_sum s;
	char err[200] = "";
	CHECK(task_sched_dump_sum(d, strlen(d), &s, err, sizeof(err)) == TS_DUMP_OK);
	CHECK(s.ntasks == 2 && (s.present >> TS_NR_MIGRATIONS & 1) && !(s.present >> TS_WAKEUPS & 1));
	json_t *files = json_pack("{s:s}", PLACEMENT_FILE, d);
	struct wl_output out = { .files = files };
	struct metric_set ms;
	metric_set_init(&ms);
	placement_parse(NULL, &out, &ms);
	CHECK(ms.nr == 0);
	CHECK_CONTAINS(ms.note.buf, "no wakeup-placement evidence: the tasks' /proc/<pid>/sched "
				    "have no schedstat fields");
	metric_set_release(&ms);
	json_decref(files);
	free(d);

	/* asked for, but no file came back; a garbage file */
	json_t *p = json_pack("{s:b}", "placement", 1);
	struct wl_output none = { .files = NULL };
	metric_set_init(&ms);
	placement_parse(p, &none, &ms);
	CHECK(ms.nr == 0);
	CHECK_CONTAINS(ms.note.buf, "the program wrote no task-sched.txt");
	files = json_pack("{s:s}", PLACEMENT_FILE, "schedlab-task-sched 1\n@@ end 5\nnr_wakeups : -3\n");
	out.files = files;
	placement_parse(p, &out, &ms);
	CHECK(ms.nr == 0);
	CHECK_CONTAINS(ms.note.buf, "; no wakeup-placement evidence: task-sched.txt rejected: "
				    "line 3 (task 5, end): nr_wakeups: negative value");
	metric_set_release(&ms);
	json_decref(files);
	/* exact counts only: a sum beyond 2^53 is not stored */
	metric_set_init(&ms);
	files = json_pack("{s:s}", PLACEMENT_FILE,
			  "schedlab-task-sched 1\n@@ end 5\nnr_wakeups : 9007199254740993\n");
	out.files = files;
	placement_parse(p, &out, &ms);
	CHECK(ms.nr == 0);
	CHECK_CONTAINS(ms.note.buf, "the sum of nr_wakeups is beyond 2^53");
	metric_set_release(&ms);
	json_decref(files);
	json_decref(p);
}

TEST(placement_argv)
{
	json_t *on = json_pack("{s:b}", "placement", 1), *off = json_pack("{s:b}", "placement", 0);
	struct wl_exec ex;
	wl_exec_init(&ex);
	placement_build(on, &ex);
	CHECK(ex.argv.nr == 1 && !strcmp(ex.argv.v[0], "--sched-out=task-sched.txt"));
	CHECK(ex.files.nr == 1 && !strcmp(ex.files.v[0], "task-sched.txt"));
	wl_exec_release(&ex);
	wl_exec_init(&ex);
	placement_build(off, &ex);
	CHECK(ex.argv.nr == 0 && ex.files.nr == 0);
	wl_exec_release(&ex);
	json_decref(on);
	json_decref(off);
}

int main(void)
{
	RUN(real_guest_6_1);
	RUN(real_host_no_schedstats);
	RUN(older_prefixes);
	RUN(garbage_rejected_with_line);
	RUN(huge_values);
	RUN(dump_sums);
	RUN(dump_absent_and_bad);
	RUN(real_guest_dumps);
	RUN(real_guest_7_3_uclamp);
	RUN(placement_without_schedstats);
	RUN(placement_argv);
	return tap_done();
}
