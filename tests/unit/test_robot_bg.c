/*
 * Unit tests of the background bisections' bookkeeping
 * (harness/orchestrate/robot_bg.h) that need no schedlab binary and no
 * store: the folder's checks (made 0700; refused when others may enter it
 * or when it is a link), a record of an earlier starter read back (running
 * while its pid is that process, its end recorded as unknown once it has
 * gone, a process of the same pid but another start time is not it; a
 * reader writes nothing), and
 * the log's tail (this start's output only, cut at a line's start), and
 * what another local user may plant (issue 51's first item): a record
 * naming any file as its log, a log that is a link, a record or folder of
 * another user's, a folder swapped or chmod'ed after the start, a folder
 * that appears only after a reader's start. The uid checks need root
 * (chown to nobody); t0866 plants them as nobody against a running serve.
 * t0862 starts real ones through schedlab serve.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/orchestrate/robot_bg.h"
#include "harness/util/proc.h"
#include "harness/util/rmtree.h"
#include "tests/unit/tap.h"

static char root[] = "/tmp/test-robot-bg-XXXXXX";

static char *path(const char *name)
{
	return xstrfmt("%s/%s", root, name);
}

static void put(const char *name, const char *text)
{
	char *p = path(name);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	free(p);
}

static struct robot_bg *open_bg(const char *dir, int create, struct strbuf *err)
{
	struct robot_bg_opts o = { .dbpath = "lab.db", .out_dir = dir, .state_dir = dir };
	struct robot_bg *bg = NULL;
	strbuf_reset(err);
	if (robot_bg_open(&o, create, &bg, err))
		return NULL;
	return bg;
}

TEST(folder_checks)
{
	struct strbuf err = STRBUF_INIT;
	char *d = path("state"), *open_d = path("open"), *link = path("link");
	/* without create, a missing folder is no error: nothing started */
	struct robot_bg *bg = open_bg(d, 0, &err);
	CHECK(bg != NULL);
	struct robot_bg_job j;
	CHECK(bg && robot_bg_get(bg, 1, &j) == 0);
	robot_bg_close(bg);
	/* made 0700 */
	CHECK((bg = open_bg(d, 1, &err)) != NULL);
	struct stat st;
	CHECK(stat(d, &st) == 0 && (st.st_mode & 07777) == 0700);
	robot_bg_close(bg);
	/* a folder others may enter is refused, saying how to fix it */
	CHECK(mkdir(open_d, 0755) == 0 && chmod(open_d, 0755) == 0);
	CHECK(open_bg(open_d, 1, &err) == NULL);
	CHECK(strstr(err.buf, "mode 0755") && strstr(err.buf, "chmod 700"));
	/* a link is not followed */
	CHECK(symlink(d, link) == 0);
	CHECK(open_bg(link, 1, &err) == NULL);
	CHECK(strstr(err.buf, "not a folder") != NULL);
	free(d);
	free(open_d);
	free(link);
	strbuf_release(&err);
}

/* a record as an earlier serve left it: group 5, started as pid/start */
static void record(long pid, unsigned long long start, long long log_from)
{
	char *log = path("state/group-5.log");
	char *t = xstrfmt("{\"group\": 5, \"alert\": 9, \"pid\": %ld, \"pid_start\": \"%llu\","
			  " \"started_at\": \"2026-12-07T01:00:00Z\", \"command\": \"schedlab alerts"
			  " bisect 9\", \"log\": \"%s\", \"log_from\": %lld, \"ended_at\": null,"
			  " \"exit_code\": null, \"signal\": null, \"how\": null}",
			  pid, start, log, log_from);
	put("state/group-5.json", t);
	free(t);
	free(log);
}

TEST(record_of_an_earlier_starter)
{
	struct strbuf err = STRBUF_INIT;
	char *d = path("state");
	struct robot_bg *bg = open_bg(d, 1, &err);
	CHECK(bg != NULL);
	if (!bg)
		return;
	struct robot_bg_job j;
	/* this very process stands for a bisection that still runs */
	record((long)getpid(), proc_start_time(getpid()), 0);
	CHECK(robot_bg_get(bg, 5, &j) == 1);
	CHECK(j.running && !j.ended_at && !j.how && j.alert == 9 && j.pid == (long)getpid());
	CHECK_STR(j.started_at, "2026-12-07T01:00:00Z");
	robot_bg_job_free(&j);
	/* the same pid with another start time is another process */
	record((long)getpid(), proc_start_time(getpid()) + 1, 0);
	CHECK(robot_bg_get(bg, 5, &j) == 1);
	CHECK(!j.running && j.ended_at && j.exit_code == -1);
	CHECK(j.how && strstr(j.how, "its exit status is unknown"));
	robot_bg_job_free(&j);
	/* a process that has ended (reaped here) */
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	unsigned long long start = proc_start_time(pid);
	waitpid(pid, NULL, 0);
	record((long)pid, start ? start : 1, 0);
	CHECK(robot_bg_get(bg, 5, &j) == 1);
	CHECK(!j.running && j.how && strstr(j.how, "unknown"));
	robot_bg_job_free(&j);
	/* the end is written back: read again, the same */
	CHECK(robot_bg_get(bg, 5, &j) == 1);
	CHECK(!j.running && j.ended_at && strstr(j.how, "unknown"));
	robot_bg_job_free(&j);
	robot_bg_close(bg);
	/* a reader (a read-only serve) says so too, and writes nothing */
	record((long)pid, start ? start : 1, 0);
	CHECK((bg = open_bg(d, 0, &err)) != NULL);
	CHECK(bg && robot_bg_get(bg, 5, &j) == 1 && !j.running && strstr(j.how, "unknown"));
	robot_bg_job_free(&j);
	struct strbuf rec = STRBUF_INIT;
	char *rp = path("state/group-5.json");
	CHECK(strbuf_read_file(&rec, rp, 0) >= 0 && strstr(rec.buf, "\"ended_at\": null"));
	free(rp);
	strbuf_release(&rec);
	robot_bg_close(bg);
	free(d);
	strbuf_release(&err);
}

TEST(log_tail)
{
	struct strbuf err = STRBUF_INIT;
	char *d = path("state");
	struct robot_bg *bg = open_bg(d, 1, &err);
	CHECK(bg != NULL);
	if (!bg)
		return;
	static const char earlier[] = "==== an earlier start\nits output\n";
	put("state/group-5.log", "==== an earlier start\nits output\n"
				 "==== this start\nline one\nline two\n");
	record((long)getpid(), proc_start_time(getpid()), (long long)strlen(earlier));
	struct robot_bg_job j;
	CHECK(robot_bg_get(bg, 5, &j) == 1);
	char *t = robot_bg_log_tail(bg, &j, 4096);
	CHECK_STR(t, "==== this start\nline one\nline two\n");   /* this start's only */
	free(t);
	t = robot_bg_log_tail(bg, &j, 12);
	CHECK_STR(t, "line two\n");   /* cut: from the next line's start */
	free(t);
	/* no log: nothing, whatever the record says */
	char *lp = path("state/group-5.log");
	CHECK(unlink(lp) == 0);
	t = robot_bg_log_tail(bg, &j, 100);
	CHECK_STR(t, "");
	free(t);
	free(lp);
	robot_bg_job_free(&j);
	robot_bg_close(bg);
	free(d);
	strbuf_release(&err);
}


#define NOBODY 65534

/* a record of group 5 that says it runs (this process) and names `log` */
static void planted_record(const char *dir, const char *log)
{
	char *t = xstrfmt("{\"group\": 5, \"alert\": 9, \"pid\": %ld, \"pid_start\": \"%llu\","
			  " \"started_at\": \"2026-12-07T01:00:00Z\", \"command\": \"x\","
			  " \"log\": \"%s\", \"log_from\": 0, \"ended_at\": null}",
			  (long)getpid(), proc_start_time(getpid()), log);
	char *name = xstrfmt("%s/group-5.json", dir);
	put(name, t);
	free(name);
	free(t);
}

TEST(planted)
{
	struct strbuf err = STRBUF_INIT;
	char *d = path("mine"), *secret = path("secret"), *logp = path("mine/group-5.log");
	put("secret", "the secret\n");
	struct robot_bg *bg = open_bg(d, 1, &err);
	CHECK(bg != NULL);
	if (!bg)
		return;
	struct robot_bg_job j;
	/* the record's "log" is never opened: the log is the folder's */
	planted_record("mine", secret);
	CHECK(robot_bg_get(bg, 5, &j) == 1);
	CHECK_STR(j.log_path, logp);
	char *t = robot_bg_log_tail(bg, &j, 4096);
	CHECK_STR(t, "");
	free(t);
	/* nor a log that is a link to it */
	CHECK(symlink(secret, logp) == 0);
	t = robot_bg_log_tail(bg, &j, 4096);
	CHECK_STR(t, "");
	free(t);
	robot_bg_job_free(&j);
	/* a record of another group under this group's name is none */
	put("mine/group-6.json", "{\"group\": 5, \"pid\": 1, \"ended_at\": null}");
	CHECK(robot_bg_get(bg, 6, &j) == 0);
	/* the folder chmod'ed after the start: nothing read from it, no start */
	CHECK(chmod(d, 0755) == 0);
	CHECK(robot_bg_get(bg, 5, &j) == 0);
	CHECK(chmod(d, 0700) == 0);
	CHECK(robot_bg_get(bg, 5, &j) == 1);
	robot_bg_job_free(&j);
	if (geteuid() != 0) {
		printf("# skipped: the checks of another user's files need root (chown)\n");
		goto out;
	}
	/* a record another user owns, in this folder */
	char *rec = path("mine/group-5.json");
	CHECK(chown(rec, NOBODY, NOBODY) == 0);
	CHECK(robot_bg_get(bg, 5, &j) == 0);
	CHECK(chown(rec, 0, 0) == 0);
	free(rec);
	/* the folder swapped after the start for another user's, a running
	   record in it: the folder as checked is still the one read */
	char *old = path("mine.old"), *mine = path("mine/group-5.json");
	CHECK(unlink(mine) == 0);
	free(mine);
	CHECK(rename(d, old) == 0);
	CHECK(mkdir(d, 0700) == 0 && chown(d, NOBODY, NOBODY) == 0);
	planted_record("mine", secret);
	char *pr = path("mine/group-5.json");
	CHECK(chown(pr, NOBODY, NOBODY) == 0);
	CHECK(robot_bg_get(bg, 5, &j) == 0);
	free(pr);
	free(old);
	robot_bg_close(bg);
	/* a reader whose folder is another user's shows none ... */
	CHECK(open_bg(d, 0, &err) == NULL);
	CHECK(strstr(err.buf, "owned by uid 65534") != NULL);
	/* ... and so when it appears only after the reader's start */
	char *later = path("later");
	CHECK((bg = open_bg(later, 0, &err)) != NULL);
	CHECK(mkdir(later, 0700) == 0 && chown(later, NOBODY, NOBODY) == 0);
	planted_record("later", secret);
	CHECK(bg && robot_bg_get(bg, 5, &j) == 0);
	/* while one of this user's that appears later is read */
	CHECK(chown(later, 0, 0) == 0);
	CHECK(bg && robot_bg_get(bg, 5, &j) == 1 && j.running);
	robot_bg_job_free(&j);
	free(later);
out:
	robot_bg_close(bg);
	free(d);
	free(secret);
	free(logp);
	strbuf_release(&err);
}

int main(void)
{
	if (!mkdtemp(root)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	RUN(folder_checks);
	RUN(record_of_an_earlier_starter);
	RUN(log_tail);
	RUN(planted);
	rm_tree(root);
	return tap_done();
}
