/*
 * Unit tests of the background bisections' bookkeeping
 * (harness/orchestrate/robot_bg.h) that need no schedlab binary and no
 * store: the folder's checks (made 0700; refused when others may enter it
 * or when it is a link), a record of an earlier starter read back (running
 * while its pid is that process, its end recorded as unknown once it has
 * gone, a process of the same pid but another start time is not it; a
 * reader writes nothing), and
 * the log's tail (this start's output only, cut at a line's start).
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
	char *t = robot_bg_log_tail(&j, 4096);
	CHECK_STR(t, "==== this start\nline one\nline two\n");   /* this start's only */
	free(t);
	t = robot_bg_log_tail(&j, 12);
	CHECK_STR(t, "line two\n");   /* cut: from the next line's start */
	free(t);
	free(j.log_path);
	j.log_path = path("state/nothing.log");
	t = robot_bg_log_tail(&j, 100);
	CHECK_STR(t, "");
	free(t);
	robot_bg_job_free(&j);
	robot_bg_close(bg);
	free(d);
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
	rm_tree(root);
	return tap_done();
}
