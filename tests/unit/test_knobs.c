/*
 * Unit tests of harness/agent/knobs.c against a fake root made with mkdtemp: the
 * path allow-list, knob_set/knob_restore_all on a plain file (one struct
 * knobs context below that root serves every test), the features
 * file (a token the kernel lacks is refused, restoring writes the inverse
 * token), the preempt choice file, readback mismatches, knob_restore_to
 * keeping the oldest changes, and features_has.
 *
 * In a fake root a write replaces the file's content (O_TRUNC), unlike the
 * kernel's files: after writing a features token the file holds just that
 * token, and after writing "full" to the preempt file it holds "full", which
 * has no "(current)" choice and so reads back as a mismatch. The tests use
 * exactly that to exercise the mismatch path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/agent/knobs.h"
#include "harness/util/strbuf.h"
#include "tests/unit/tap.h"

static char root[64];
static struct knobs knobs;      /* the undo stack under test, below root */

static const char *const features_list =
	"GENTLE_FAIR_SLEEPERS START_DEBIT NO_NEXT_BUDDY LAST_BUDDY CACHE_HOT_BUDDY "
	"WAKEUP_PREEMPTION NO_HRTICK NO_HRTICK_DL NO_DOUBLE_TICK NONTASK_CAPACITY TTWU_QUEUE "
	"NO_SIS_PROP SIS_UTIL NO_WARN_DOUBLE_CLOCK NO_RT_PUSH_IPI NO_RT_RUNTIME_SHARE NO_LB_MIN "
	"ATTACH_AGE_LOAD WA_IDLE WA_WEIGHT WA_BIAS UTIL_EST UTIL_EST_FASTUP NO_LATENCY_WARN "
	"NI_RANDOM ALT_PERIOD BASE_SLICE \n";

static void mkdirs(const char *rel)
{
	char *p = xstrfmt("%s%s", root, rel);
	for (char *s = p + strlen(root) + 1; *s; s++) {
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	}
	mkdir(p, 0755);
	free(p);
}

/* write a file below the root, creating its directories */
static void put(const char *rel, const char *content)
{
	char *dir = xstrdup(rel);
	*strrchr(dir, '/') = '\0';
	mkdirs(dir);
	free(dir);
	char *p = xstrfmt("%s%s", root, rel);
	FILE *f = fopen(p, "w");
	if (!f) {
		printf("#   cannot create %s: %s\n", p, strerror(errno));
		exit(1);
	}
	fputs(content, f);
	fclose(f);
	free(p);
}

/* the file's whole content (caller frees) */
static char *get(const char *rel)
{
	struct strbuf sb = STRBUF_INIT;
	char *p = xstrfmt("%s%s", root, rel);
	if (strbuf_read_file(&sb, p, 0))
		strbuf_addstr(&sb, "(unreadable)");
	free(p);
	return strbuf_detach(&sb, NULL);
}

static void check_file(const char *rel, const char *expect)
{
	char *c = get(rel);
	CHECK_STR(c, expect);
	free(c);
}

static void reset_tree(void)
{
	put("/proc/sys/kernel/sched_schedstats", "0\n");
	put("/proc/sys/kernel/sched_rt_runtime_us", "950000\n");
	put("/sys/kernel/debug/sched/migration_cost_ns", "500000\n");
	put("/sys/kernel/debug/sched/features", features_list);
	put("/sys/kernel/debug/sched/preempt", "none (voluntary) full \n");
}

static void rm_tree(const char *dir)
{
	char *cmd = xstrfmt("rm -rf '%s'", dir);
	if (system(cmd))
		printf("#   cleanup of %s failed\n", dir);
	free(cmd);
}

TEST(path_allow_list)
{
	CHECK(knob_path_allowed("/proc/sys/kernel/sched_schedstats"));
	CHECK(knob_path_allowed("/sys/kernel/debug/sched/features"));
	CHECK(knob_path_allowed("/sys/kernel/debug/sched/migration_cost_ns"));
	CHECK(knob_path_allowed("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"));
	CHECK(knob_path_allowed("/sys/kernel/debug/sched/..x"));   /* a name, not a parent */
	/* the prefixes themselves are directories, not knobs */
	CHECK(!knob_path_allowed("/proc/sys/kernel/"));
	CHECK(!knob_path_allowed("/sys/kernel/debug/sched/"));
	/* outside */
	CHECK(!knob_path_allowed("/proc/sys/vm/swappiness"));
	CHECK(!knob_path_allowed("/etc/passwd"));
	CHECK(!knob_path_allowed("/proc/sys/kernelx/y"));
	CHECK(!knob_path_allowed("/sys/kernel/debug/schedx"));
	CHECK(!knob_path_allowed("proc/sys/kernel/sched_schedstats"));   /* relative */
	CHECK(!knob_path_allowed(""));
	CHECK(!knob_path_allowed(NULL));
	/* escapes */
	CHECK(!knob_path_allowed("/proc/sys/kernel/../../../etc/shadow"));
	CHECK(!knob_path_allowed("/sys/kernel/debug/sched/../../../../etc/passwd"));
	CHECK(!knob_path_allowed("/proc/sys/kernel/random/.."));
	CHECK(!knob_path_allowed("/proc/sys/kernel/./hostname"));
	CHECK(!knob_path_allowed("/proc/sys/kernel/a\nb"));
	CHECK_STR(knob_allowed_prefixes(),
		  "/sys/kernel/debug/sched/, /proc/sys/kernel/, /sys/devices/system/cpu/, "
		  "/sys/kernel/tracing/instances/schedlab-*, "
		  "/sys/kernel/debug/tracing/instances/schedlab-*");
}

TEST(features_has_tokens)
{
	const char *l = "A NO_B CC TTWU_QUEUE\nNO_HRTICK ";
	CHECK(features_has(l, "A"));
	CHECK(features_has(l, "NO_B"));
	CHECK(!features_has(l, "B"));          /* only inside NO_B */
	CHECK(!features_has(l, "NO_A"));
	CHECK(!features_has(l, "C"));          /* only inside CC */
	CHECK(features_has(l, "CC"));
	CHECK(features_has(l, "TTWU_QUEUE"));  /* ends at a newline */
	CHECK(features_has(l, "NO_HRTICK"));   /* after a newline */
	CHECK(!features_has(l, "HRTICK"));
	CHECK(!features_has(l, "TTWU"));
	CHECK(!features_has("", "A"));
	CHECK(!features_has(l, ""));           /* used to loop forever */
	CHECK(features_has(features_list, "BASE_SLICE"));
	CHECK(features_has(features_list, "NO_SIS_PROP"));
	CHECK(!features_has(features_list, "SIS_PROP"));
}

TEST(plain_set_and_restore)
{
	struct strbuf err = STRBUF_INIT;
	json_t *info = NULL;
	reset_tree();
	CHECK(knob_pending(&knobs) == 0);
	CHECK(knob_set(&knobs, "/proc/sys/kernel/sched_schedstats", "1", &info, &err) == 0);
	CHECK_STR(err.buf, "");
	CHECK(info != NULL);
	CHECK_STR(json_string_value(json_object_get(info, "path")), "/proc/sys/kernel/sched_schedstats");
	CHECK_STR(json_string_value(json_object_get(info, "old")), "0");
	CHECK_STR(json_string_value(json_object_get(info, "new")), "1");
	CHECK_STR(json_string_value(json_object_get(info, "readback")), "1");
	json_decref(info);
	check_file("/proc/sys/kernel/sched_schedstats", "1");
	CHECK(knob_pending(&knobs) == 1);
	struct strbuf out = STRBUF_INIT;
	CHECK(knob_get(&knobs, "/proc/sys/kernel/sched_schedstats", &out, &err) == 0);
	CHECK_STR(out.buf, "1");
	strbuf_release(&out);
	CHECK(knob_restore_all(&knobs, &err) == 0);
	CHECK_STR(err.buf, "");
	CHECK(knob_pending(&knobs) == 0);
	check_file("/proc/sys/kernel/sched_schedstats", "0");   /* trimmed old content */
	/* restoring with nothing recorded is a no-op */
	CHECK(knob_restore_all(&knobs, &err) == 0);
	strbuf_release(&err);
}

TEST(restore_newest_first)
{
	struct strbuf err = STRBUF_INIT;
	reset_tree();
	CHECK(knob_set(&knobs, "/sys/kernel/debug/sched/migration_cost_ns", "1", NULL, &err) == 0);
	CHECK(knob_set(&knobs, "/sys/kernel/debug/sched/migration_cost_ns", "2", NULL, &err) == 0);
	check_file("/sys/kernel/debug/sched/migration_cost_ns", "2");
	CHECK(knob_pending(&knobs) == 2);
	/* newest first: "1" is written back, then "500000"; oldest first would end at "1" */
	CHECK(knob_restore_all(&knobs, &err) == 0);
	check_file("/sys/kernel/debug/sched/migration_cost_ns", "500000");
	strbuf_release(&err);
}

TEST(restore_to_keeps_oldest)
{
	struct strbuf err = STRBUF_INIT;
	reset_tree();
	CHECK(knob_set(&knobs, "/proc/sys/kernel/sched_schedstats", "1", NULL, &err) == 0);
	CHECK(knob_set(&knobs, "/proc/sys/kernel/sched_rt_runtime_us", "-1", NULL, &err) == 0);
	CHECK(knob_set(&knobs, "/sys/kernel/debug/sched/migration_cost_ns", "0", NULL, &err) == 0);
	CHECK(knob_pending(&knobs) == 3);
	CHECK(knob_restore_to(&knobs, 1, &err) == 0);
	CHECK(knob_pending(&knobs) == 1);
	check_file("/proc/sys/kernel/sched_schedstats", "1");             /* kept */
	check_file("/proc/sys/kernel/sched_rt_runtime_us", "950000");     /* undone */
	check_file("/sys/kernel/debug/sched/migration_cost_ns", "500000"); /* undone */
	/* keep larger than the stack: nothing happens */
	CHECK(knob_restore_to(&knobs, 5, &err) == 0);
	CHECK(knob_pending(&knobs) == 1);
	/* negative keep means zero */
	CHECK(knob_restore_to(&knobs, -3, &err) == 0);
	CHECK(knob_pending(&knobs) == 0);
	check_file("/proc/sys/kernel/sched_schedstats", "0");
	CHECK_STR(err.buf, "");
	strbuf_release(&err);
}

/* each context has its own stack: unwinding one leaves the other's
 * changes in force; knobs_release drops records without writing */
TEST(contexts_are_independent)
{
	struct strbuf err = STRBUF_INIT;
	struct knobs other;
	reset_tree();
	knobs_init(&other, root);
	CHECK(knob_set(&knobs, "/proc/sys/kernel/sched_schedstats", "1", NULL, &err) == 0);
	CHECK(knob_set(&other, "/proc/sys/kernel/sched_rt_runtime_us", "-1", NULL, &err) == 0);
	CHECK(knob_pending(&knobs) == 1);
	CHECK(knob_pending(&other) == 1);
	CHECK(knob_restore_all(&other, &err) == 0);
	CHECK(knob_pending(&knobs) == 1);
	check_file("/proc/sys/kernel/sched_schedstats", "1");
	check_file("/proc/sys/kernel/sched_rt_runtime_us", "950000");
	CHECK(knob_set(&other, "/sys/kernel/debug/sched/migration_cost_ns", "7", NULL, &err) == 0);
	knobs_release(&other);
	CHECK(knob_pending(&other) == 0);
	check_file("/sys/kernel/debug/sched/migration_cost_ns", "7");
	CHECK(knob_restore_all(&knobs, &err) == 0);
	check_file("/proc/sys/kernel/sched_schedstats", "0");
	CHECK_STR(err.buf, "");
	strbuf_release(&err);
}

TEST(refused_writes_record_nothing)
{
	struct strbuf err = STRBUF_INIT;
	json_t *info = (json_t *)1;
	reset_tree();
	CHECK(knob_set(&knobs, "/etc/passwd", "x", &info, &err) == -1);
	CHECK(info == NULL);
	CHECK_CONTAINS(err.buf, "/etc/passwd: not an allowed knob path (allowed: /sys/kernel/debug/sched/");
	strbuf_reset(&err);
	CHECK(knob_set(&knobs, "/proc/sys/kernel/../../../etc/passwd", "x", NULL, &err) == -1);
	CHECK_CONTAINS(err.buf, "not an allowed knob path");
	strbuf_reset(&err);
	CHECK(knob_set(&knobs, "/proc/sys/kernel/sched_schedstats", "1\n0", NULL, &err) == -1);
	CHECK_CONTAINS(err.buf, "/proc/sys/kernel/sched_schedstats: invalid value");
	strbuf_reset(&err);
	CHECK(knob_set(&knobs, "/proc/sys/kernel/sched_schedstats", NULL, NULL, &err) == -1);
	CHECK_CONTAINS(err.buf, "invalid value");
	strbuf_reset(&err);
	CHECK(knob_set(&knobs, "/proc/sys/kernel/no_such_knob", "1", NULL, &err) == -1);
	CHECK_STR(err.buf, "/proc/sys/kernel/no_such_knob: cannot read: No such file or directory");
	strbuf_reset(&err);
	CHECK(knob_get(&knobs, "/etc/hostname", NULL, &err) == -1);
	CHECK_CONTAINS(err.buf, "/etc/hostname: not an allowed knob path");
	strbuf_reset(&err);
	CHECK(knob_pending(&knobs) == 0);
	check_file("/proc/sys/kernel/sched_schedstats", "0\n");   /* untouched */
	strbuf_release(&err);
}

TEST(features_unknown_token)
{
	struct strbuf err = STRBUF_INIT;
	reset_tree();
	CHECK(knob_set(&knobs, "/sys/kernel/debug/sched/features", "NO_FOO_BAR", NULL, &err) == -1);
	CHECK_STR(err.buf, "sched feature FOO_BAR: unsupported by this kernel");
	strbuf_reset(&err);
	CHECK(knob_set(&knobs, "/sys/kernel/debug/sched/features", "FOO_BAR", NULL, &err) == -1);
	CHECK_STR(err.buf, "sched feature FOO_BAR: unsupported by this kernel");
	strbuf_reset(&err);
	/* a part of a known name is not a known name */
	CHECK(knob_set(&knobs, "/sys/kernel/debug/sched/features", "NO_TTWU", NULL, &err) == -1);
	CHECK_STR(err.buf, "sched feature TTWU: unsupported by this kernel");
	strbuf_reset(&err);
	/* one token at a time */
	CHECK(knob_set(&knobs, "/sys/kernel/debug/sched/features", "NO_HRTICK WA_IDLE", NULL,
		       &err) == -1);
	CHECK_CONTAINS(err.buf, "(one feature token at a time)");
	strbuf_reset(&err);
	CHECK(knob_set(&knobs, "/sys/kernel/debug/sched/features", "", NULL, &err) == -1);
	CHECK_CONTAINS(err.buf, "unsupported by this kernel");
	CHECK(knob_pending(&knobs) == 0);
	check_file("/sys/kernel/debug/sched/features", features_list);
	strbuf_release(&err);
}

TEST(features_set_and_inverse_restore)
{
	struct strbuf err = STRBUF_INIT;
	json_t *info = NULL;
	reset_tree();
	/* TTWU_QUEUE is on: turning it off records "TTWU_QUEUE" as the undo */
	CHECK(knob_set(&knobs, "/sys/kernel/debug/sched/features", "NO_TTWU_QUEUE", &info, &err) == 0);
	CHECK_STR(err.buf, "");
	CHECK_STR(json_string_value(json_object_get(info, "old")), "TTWU_QUEUE");
	CHECK_STR(json_string_value(json_object_get(info, "new")), "NO_TTWU_QUEUE");
	CHECK_STR(json_string_value(json_object_get(info, "readback")), "NO_TTWU_QUEUE");
	json_decref(info);
	check_file("/sys/kernel/debug/sched/features", "NO_TTWU_QUEUE");
	CHECK(knob_restore_all(&knobs, &err) == 0);
	check_file("/sys/kernel/debug/sched/features", "TTWU_QUEUE");

	/* HRTICK is off (NO_HRTICK): turning it on records "NO_HRTICK" */
	reset_tree();
	CHECK(knob_set(&knobs, "/sys/kernel/debug/sched/features", "HRTICK", &info, &err) == 0);
	CHECK_STR(json_string_value(json_object_get(info, "old")), "NO_HRTICK");
	json_decref(info);
	CHECK(knob_restore_all(&knobs, &err) == 0);
	check_file("/sys/kernel/debug/sched/features", "NO_HRTICK");

	/* setting the state it already has still records its own token as the undo */
	reset_tree();
	CHECK(knob_set(&knobs, "/sys/kernel/debug/sched/features", "WA_IDLE", &info, &err) == 0);
	CHECK_STR(json_string_value(json_object_get(info, "old")), "WA_IDLE");
	json_decref(info);
	CHECK(knob_restore_all(&knobs, &err) == 0);
	check_file("/sys/kernel/debug/sched/features", "WA_IDLE");
	strbuf_release(&err);
}

/* the preempt file: writing "full" leaves "full" in a fake file, which has no
 * "(current)" choice: a readback mismatch, and the old choice is written back */
TEST(choice_readback_mismatch)
{
	struct strbuf err = STRBUF_INIT;
	json_t *info = (json_t *)1;
	reset_tree();
	CHECK(knob_set(&knobs, "/sys/kernel/debug/sched/preempt", "full", &info, &err) == -1);
	CHECK(info == NULL);
	CHECK_CONTAINS(err.buf, "/sys/kernel/debug/sched/preempt: wrote \"full\" but it reads back "
				"as \"full\"");
	CHECK(knob_pending(&knobs) == 0);
	check_file("/sys/kernel/debug/sched/preempt", "voluntary");   /* the old choice */
	strbuf_release(&err);
}

/* a mismatch undoes only its own change: an earlier one (a boot's preempt
 * mode kept with knob_restore_to) stays in force */
TEST(mismatch_keeps_earlier_changes)
{
	struct strbuf err = STRBUF_INIT;
	reset_tree();
	CHECK(knob_set(&knobs, "/proc/sys/kernel/sched_schedstats", "1", NULL, &err) == 0);
	CHECK(knob_pending(&knobs) == 1);
	CHECK(knob_set(&knobs, "/sys/kernel/debug/sched/preempt", "none", NULL, &err) == -1);
	CHECK_CONTAINS(err.buf, "reads back as \"none\"");
	CHECK(knob_pending(&knobs) == 1);
	check_file("/proc/sys/kernel/sched_schedstats", "1");
	check_file("/sys/kernel/debug/sched/preempt", "voluntary");
	strbuf_reset(&err);
	CHECK(knob_restore_all(&knobs, &err) == 0);
	check_file("/proc/sys/kernel/sched_schedstats", "0");
	strbuf_release(&err);
}

/* the 6.13 RT (and 7.0 x86) file "(full) lazy ": the current choice is
 * read from it like any other, lazy is written, and the fake file's
 * readback (no parentheses) puts full back */
TEST(choice_rt_lazy_file)
{
	struct strbuf err = STRBUF_INIT;
	reset_tree();
	put("/sys/kernel/debug/sched/preempt", "(full) lazy \n");
	CHECK(knob_set(&knobs, "/sys/kernel/debug/sched/preempt", "lazy", NULL, &err) == -1);
	CHECK_CONTAINS(err.buf, "wrote \"lazy\" but it reads back as \"lazy\"");
	CHECK(knob_pending(&knobs) == 0);
	check_file("/sys/kernel/debug/sched/preempt", "full");   /* the old choice */
	strbuf_release(&err);
}

TEST(choice_without_current_refused)
{
	struct strbuf err = STRBUF_INIT;
	reset_tree();
	put("/sys/kernel/debug/sched/preempt", "none voluntary full\n");
	CHECK(knob_set(&knobs, "/sys/kernel/debug/sched/preempt", "full", NULL, &err) == -1);
	CHECK_STR(err.buf, "/sys/kernel/debug/sched/preempt: cannot tell the current choice from "
			   "\"none voluntary full\"");
	CHECK(knob_pending(&knobs) == 0);
	check_file("/sys/kernel/debug/sched/preempt", "none voluntary full\n");
	strbuf_release(&err);
}

TEST(restore_failure_reported)
{
	struct strbuf err = STRBUF_INIT;
	reset_tree();
	CHECK(knob_set(&knobs, "/proc/sys/kernel/sched_rt_runtime_us", "-1", NULL, &err) == 0);
	CHECK(knob_set(&knobs, "/proc/sys/kernel/sched_schedstats", "1", NULL, &err) == 0);
	char *p = xstrfmt("%s/proc/sys/kernel/sched_rt_runtime_us", root);
	CHECK(unlink(p) == 0);   /* the knob vanished (a module unloaded) */
	free(p);
	CHECK(knob_restore_all(&knobs, &err) == 1);
	CHECK_STR(err.buf, "restore failed: /proc/sys/kernel/sched_rt_runtime_us: cannot open for "
			   "writing: No such file or directory");
	CHECK(knob_pending(&knobs) == 0);   /* the failed entry is dropped, the other restored */
	check_file("/proc/sys/kernel/sched_schedstats", "0");
	strbuf_release(&err);
}

static char *journal_of(pid_t pid)
{
	return xstrfmt("/run/schedlab/knobs-%d.json", (int)pid);
}

static int exists(const char *rel)
{
	char *p = xstrfmt("%s%s", root, rel);
	int e = access(p, F_OK) == 0;
	free(p);
	return e;
}

/* a child agent that changes path to value and then dies by SIGKILL (or,
 * with hold_fd >= 0, waits until that pipe closes before it dies) */
static pid_t child_agent(const char *path, const char *value, int ready_fd, int hold_fd,
			 int close_fd)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (close_fd >= 0)
			close(close_fd); /* the parent's end of the hold pipe */
		struct knobs k;
		struct strbuf e = STRBUF_INIT;
		knobs_init(&k, root);
		int rc = knob_set(&k, path, value, NULL, &e);
		if (ready_fd >= 0 && write(ready_fd, rc ? "E" : "K", 1) != 1)
			_exit(3);
		char c;
		if (hold_fd >= 0)
			while (read(hold_fd, &c, 1) > 0)
				;
		raise(SIGKILL); /* no restore, as an agent killed with -9 */
		_exit(2);
	}
	return pid;
}

/* the undo stack is on disk too: an agent killed with SIGKILL has its
 * changes played back by the next one; a live agent's journal is left
 * alone, and a path it changed is refused to others until it restores */
TEST(journal_survives_the_agent)
{
	struct strbuf err = STRBUF_INIT, rep = STRBUF_INIT;
	reset_tree();
	char *mine = journal_of(getpid());
	CHECK(knob_set(&knobs, "/proc/sys/kernel/sched_schedstats", "1", NULL, &err) == 0);
	char *j = get(mine);
	CHECK(strstr(j, "\"path\":\"/proc/sys/kernel/sched_schedstats\"") != NULL);
	CHECK(strstr(j, "\"old\":\"0\"") != NULL);
	free(j);
	CHECK(knob_restore_all(&knobs, &err) == 0);
	CHECK(!exists(mine)); /* nothing pending, no journal */

	/* a dead agent's change */
	pid_t dead = child_agent("/proc/sys/kernel/sched_rt_runtime_us", "900000", -1, -1, -1);
	int st;
	CHECK(waitpid(dead, &st, 0) == dead && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	check_file("/proc/sys/kernel/sched_rt_runtime_us", "900000");
	char *theirs = journal_of(dead);
	CHECK(exists(theirs));
	CHECK(knobs_recover(&knobs, &rep) == 0);
	check_file("/proc/sys/kernel/sched_rt_runtime_us", "950000");
	char *want = xstrfmt("/proc/sys/kernel/sched_rt_runtime_us=950000 (left by agent %d)", (int)dead);
	CHECK_STR(rep.buf, want);
	free(want);
	CHECK(!exists(theirs));
	free(theirs);

	/* a live agent's change: left alone, and the path is refused to us */
	int ready[2], hold[2];
	CHECK(pipe(ready) == 0 && pipe(hold) == 0);
	pid_t live = child_agent("/sys/kernel/debug/sched/migration_cost_ns", "1", ready[1], hold[0],
				 hold[1]);
	close(ready[1]);
	close(hold[0]);
	char c = 0;
	CHECK(read(ready[0], &c, 1) == 1 && c == 'K');
	strbuf_reset(&rep);
	CHECK(knobs_recover(&knobs, &rep) == 0);
	CHECK_STR(rep.buf, "");
	check_file("/sys/kernel/debug/sched/migration_cost_ns", "1");
	knobs.others_wait_s = 0.2;
	CHECK(knob_set(&knobs, "/sys/kernel/debug/sched/migration_cost_ns", "7", NULL, &err) == -1);
	char *who = xstrfmt("changed by another schedlab agent (pid %d)", (int)live);
	CHECK(strstr(err.buf, who) != NULL);
	free(who);
	CHECK(knob_pending(&knobs) == 0);
	/* other paths are not held */
	strbuf_reset(&err);
	CHECK(knob_set(&knobs, "/proc/sys/kernel/sched_schedstats", "1", NULL, &err) == 0);
	CHECK(knob_restore_all(&knobs, &err) == 0);
	knobs.others_wait_s = 10;
	close(hold[1]); /* it dies now */
	CHECK(waitpid(live, &st, 0) == live);
	close(ready[0]);
	strbuf_reset(&rep);
	CHECK(knobs_recover(&knobs, &rep) == 0);
	check_file("/sys/kernel/debug/sched/migration_cost_ns", "500000");
	free(mine);
	strbuf_release(&err);
	strbuf_release(&rep);
}

/* a path below an allowed prefix that a symlink leads out of (sysfs has
 * many: cpu0/node0 -> ../../node/node0) is refused; so are the sysctls
 * that make the kernel run a program, however they are written */
TEST(escapes_and_denied_knobs)
{
	struct strbuf err = STRBUF_INIT;
	reset_tree();
	put("/sys/devices/system/node/node0/meminfo", "secret\n");
	mkdirs("/sys/devices/system/cpu/cpu0");
	char *link = xstrfmt("%s/sys/devices/system/cpu/cpu0/node0", root);
	CHECK(symlink("../../node/node0", link) == 0);
	free(link);
	CHECK(knob_set(&knobs, "/sys/devices/system/cpu/cpu0/node0/meminfo", "1", NULL, &err) == -1);
	CHECK_CONTAINS(err.buf, "resolves to /sys/devices/system/node/node0/meminfo, outside");
	check_file("/sys/devices/system/node/node0/meminfo", "secret\n");
	CHECK(knob_pending(&knobs) == 0);
	/* nor read through it (knob_get) */
	strbuf_reset(&err);
	struct strbuf got = STRBUF_INIT;
	CHECK(knob_get(&knobs, "/sys/devices/system/cpu/cpu0/node0/meminfo", &got, &err) == -1);
	CHECK_CONTAINS(err.buf, "resolves to /sys/devices/system/node/node0/meminfo, outside");
	CHECK(!strstr(got.buf, "secret"));
	strbuf_release(&got);
	strbuf_reset(&err);
	put("/proc/sys/kernel/core_pattern", "core\n");
	CHECK(knob_set(&knobs, "/proc/sys/kernel/core_pattern", "|/tmp/evil", NULL, &err) == -1);
	CHECK_CONTAINS(err.buf, "never written by schedlab");
	check_file("/proc/sys/kernel/core_pattern", "core\n");
	/* through a symlink to it */
	strbuf_reset(&err);
	char *l2 = xstrfmt("%s/proc/sys/kernel/cp", root);
	CHECK(symlink("core_pattern", l2) == 0);
	free(l2);
	CHECK(knob_set(&knobs, "/proc/sys/kernel/cp", "|/tmp/evil", NULL, &err) == -1);
	check_file("/proc/sys/kernel/core_pattern", "core\n");
	CHECK(knob_denied("/proc/sys/kernel/usermodehelper/bset") != NULL);
	CHECK(knob_denied("/proc/sys/kernel/sched_rr_timeslice_ms") == NULL);
	strbuf_release(&err);
}

/* a tracefs instance of our own: created and recorded, removed on
 * restore and by the next agent after a SIGKILL; other instances, the
 * global tracing files and an existing directory are refused */
TEST(tracefs_instance_dir)
{
	struct strbuf err = STRBUF_INIT, rep = STRBUF_INIT;
	const char *inst = "/sys/kernel/tracing/instances/schedlab-1";
	mkdirs("/sys/kernel/tracing/instances");
	put("/sys/kernel/tracing/tracing_on", "1\n");
	CHECK(knob_path_allowed(inst));
	CHECK(!knob_path_allowed("/sys/kernel/tracing/tracing_on"));
	CHECK(!knob_path_allowed("/sys/kernel/tracing/instances/other"));
	CHECK(knob_set(&knobs, "/sys/kernel/tracing/tracing_on", "0", NULL, &err) == -1);
	CHECK(knob_mkdir(&knobs, "/sys/kernel/tracing/instances/foo", &err) == -1);
	CHECK(knob_mkdir(&knobs, inst, &err) == 0);
	CHECK(exists(inst));
	CHECK(knob_pending(&knobs) == 1);
	char *jp = journal_of(getpid()), *j = get(jp);
	CHECK(strstr(j, "\"kind\":\"dir\"") != NULL);
	free(j);
	free(jp);
	put("/sys/kernel/tracing/instances/schedlab-1/buffer_size_kb", "1410\n");
	strbuf_reset(&err);
	CHECK(knob_set(&knobs, "/sys/kernel/tracing/instances/schedlab-1/buffer_size_kb", "4096",
		       NULL, &err) == 0);
	/* a fake tree cannot remove a directory with files (tracefs can):
	   the file goes back first, newest first */
	char *f = xstrfmt("%s/sys/kernel/tracing/instances/schedlab-1/buffer_size_kb", root);
	CHECK(knob_restore_to(&knobs, 1, &err) == 0);
	check_file("/sys/kernel/tracing/instances/schedlab-1/buffer_size_kb", "1410");
	unlink(f);
	free(f);
	CHECK(knob_restore_all(&knobs, &err) == 0);
	CHECK(!exists(inst));
	/* already there: not ours, refused, nothing recorded */
	mkdirs(inst);
	strbuf_reset(&err);
	CHECK(knob_mkdir(&knobs, inst, &err) == -1);
	CHECK_CONTAINS(err.buf, "cannot create");
	CHECK(knob_pending(&knobs) == 0);
	char *full = xstrfmt("%s%s", root, inst);
	rmdir(full);
	free(full);
	/* an agent killed with SIGKILL: the next one removes its instance */
	pid_t pid = fork();
	if (pid == 0) {
		struct knobs k;
		struct strbuf e = STRBUF_INIT;
		knobs_init(&k, root);
		if (knob_mkdir(&k, "/sys/kernel/tracing/instances/schedlab-2", &e))
			_exit(3);
		raise(SIGKILL);
		_exit(2);
	}
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st));
	CHECK(exists("/sys/kernel/tracing/instances/schedlab-2"));
	CHECK(knobs_recover(&knobs, &rep) == 0);
	CHECK(!exists("/sys/kernel/tracing/instances/schedlab-2"));
	check_file("/sys/kernel/tracing/tracing_on", "1\n");
	strbuf_release(&err);
	strbuf_release(&rep);
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/sl-test-knobs-XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	knobs_init(&knobs, root);
	RUN(path_allow_list);
	RUN(features_has_tokens);
	RUN(plain_set_and_restore);
	RUN(restore_newest_first);
	RUN(restore_to_keeps_oldest);
	RUN(contexts_are_independent);
	RUN(refused_writes_record_nothing);
	RUN(features_unknown_token);
	RUN(features_set_and_inverse_restore);
	RUN(choice_readback_mismatch);
	RUN(mismatch_keeps_earlier_changes);
	RUN(choice_without_current_refused);
	RUN(choice_rt_lazy_file);
	RUN(restore_failure_reported);
	RUN(journal_survives_the_agent);
	RUN(escapes_and_denied_knobs);
	RUN(tracefs_instance_dir);
	struct strbuf e = STRBUF_INIT;
	knob_restore_all(&knobs, &e);   /* undoes what a failed test left */
	knobs_release(&knobs);
	strbuf_release(&e);
	rm_tree(root);
	return tap_done();
}
