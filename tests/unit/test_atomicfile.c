/*
 * Unit tests for harness/util/atomicfile.c, the writer of every output path
 * a user names (report --out, export --out): a new file, a regular file
 * replaced with its mode kept, a symlink written through to its target (and
 * a dangling one creating it), a character device written through with its
 * errors reported (/dev/full), and a directory, FIFO and socket refused
 * without a byte written or a file left beside them. Runs in a scratch
 * folder under TMPDIR.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness/util/atomicfile.h"
#include "tests/unit/tap.h"

static char dir[256];

static char *at(const char *name)
{
	static char buf[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void spit(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(s, f);
		fclose(f);
	}
}

/* the files in dir whose name starts with '.', which the writer's
 * temporary files do: none may be left behind */
static int leftovers(void)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	if (d)
		closedir(d);
	return n;
}

static mode_t mode_of(const char *path)
{
	struct stat st;
	return stat(path, &st) ? (mode_t)-1 : st.st_mode;
}

TEST(new_file)
{
	struct strbuf err = STRBUF_INIT;
	mode_t um = umask(022);
	CHECK(outfile_write(at("new.html"), "hello", 5, &err) == 0);
	umask(um);
	CHECK_STR(slurp(at("new.html")), "hello");
	CHECK((mode_of(at("new.html")) & 0777) == 0644);
	CHECK(S_ISREG(mode_of(at("new.html"))));
	CHECK(leftovers() == 0);
	strbuf_release(&err);
}

TEST(regular_keeps_mode)
{
	struct strbuf err = STRBUF_INIT;
	spit(at("private.html"), "old");
	chmod(at("private.html"), 0600);
	CHECK(outfile_write(at("private.html"), "new content", 11, &err) == 0);
	CHECK_STR(slurp(at("private.html")), "new content");
	CHECK((mode_of(at("private.html")) & 07777) == 0600);
	CHECK(leftovers() == 0);
	strbuf_release(&err);
}

TEST(symlink_followed)
{
	struct strbuf err = STRBUF_INIT;
	spit(at("real.html"), "old");
	chmod(at("real.html"), 0640);
	unlink(at("link.html"));
	CHECK(symlink("real.html", at("link.html")) == 0);
	CHECK(outfile_write(at("link.html"), "through", 7, &err) == 0);
	struct stat st;
	CHECK(lstat(at("link.html"), &st) == 0 && S_ISLNK(st.st_mode));
	CHECK_STR(slurp(at("real.html")), "through");
	CHECK((mode_of(at("real.html")) & 07777) == 0640);
	CHECK(leftovers() == 0);
	strbuf_release(&err);
}

TEST(dangling_symlink_creates_target)
{
	struct strbuf err = STRBUF_INIT;
	unlink(at("dangle"));
	unlink(at("made.html"));
	CHECK(symlink("made.html", at("dangle")) == 0);
	CHECK(outfile_write(at("dangle"), "made", 4, &err) == 0);
	struct stat st;
	CHECK(lstat(at("dangle"), &st) == 0 && S_ISLNK(st.st_mode));
	CHECK_STR(slurp(at("made.html")), "made");
	strbuf_release(&err);
}

TEST(char_device_written_through)
{
	struct strbuf err = STRBUF_INIT;
	struct stat before, after;
	CHECK(stat("/dev/null", &before) == 0);
	CHECK(outfile_write("/dev/null", "x", 1, &err) == 0);
	CHECK(stat("/dev/null", &after) == 0);
	CHECK(S_ISCHR(after.st_mode) && after.st_rdev == before.st_rdev);
	CHECK((after.st_mode & 07777) == (before.st_mode & 07777));
	/* /dev/full: ENOSPC is reported, the device stays a device */
	char big[65536];
	memset(big, 'x', sizeof(big));
	CHECK(outfile_write("/dev/full", big, sizeof(big), &err) == -1);
	CHECK_CONTAINS(err.buf, "No space left on device");
	CHECK(stat("/dev/full", &after) == 0 && S_ISCHR(after.st_mode));
	strbuf_reset(&err);
	CHECK(outfile_write("/dev/full", "small", 5, &err) == -1);
	CHECK_CONTAINS(err.buf, "No space left on device");
	strbuf_release(&err);
}

TEST(directory_refused)
{
	struct strbuf err = STRBUF_INIT;
	mkdir(at("adir"), 0755);
	CHECK(outfile_write(at("adir"), "x", 1, &err) == -1);
	CHECK_CONTAINS(err.buf, "is a directory");
	CHECK(S_ISDIR(mode_of(at("adir"))));
	strbuf_reset(&err);
	CHECK(outfile_check(at("adir"), &err) == -1);
	CHECK(leftovers() == 0);
	strbuf_release(&err);
}

TEST(fifo_refused)
{
	struct strbuf err = STRBUF_INIT;
	unlink(at("fifo"));
	CHECK(mkfifo(at("fifo"), 0644) == 0);
	/* no reader: an open would block; the refusal must come first */
	alarm(20);
	CHECK(outfile_write(at("fifo"), "x", 1, &err) == -1);
	alarm(0);
	CHECK_CONTAINS(err.buf, "is a FIFO");
	CHECK(S_ISFIFO(mode_of(at("fifo"))));
	/* and through a symlink */
	unlink(at("fifolink"));
	CHECK(symlink("fifo", at("fifolink")) == 0);
	strbuf_reset(&err);
	CHECK(outfile_check(at("fifolink"), &err) == -1);
	CHECK_CONTAINS(err.buf, "the symlink leads to");
	CHECK(leftovers() == 0);
	strbuf_release(&err);
}

TEST(socket_refused)
{
	struct strbuf err = STRBUF_INIT;
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", at("sock"));
	unlink(a.sun_path);
	CHECK(s >= 0 && bind(s, (struct sockaddr *)&a, sizeof(a)) == 0);
	CHECK(outfile_write(at("sock"), "x", 1, &err) == -1);
	CHECK_CONTAINS(err.buf, "is a socket");
	close(s);
	strbuf_release(&err);
}

TEST(missing_folder_and_empty_path)
{
	struct strbuf err = STRBUF_INIT;
	CHECK(outfile_write(at("nosuch/x.html"), "x", 1, &err) == -1);
	CHECK_CONTAINS(err.buf, "nosuch/x.html");
	strbuf_reset(&err);
	CHECK(outfile_write("", "x", 1, &err) == -1);
	CHECK_CONTAINS(err.buf, "empty output path");
	strbuf_release(&err);
}

TEST(abort_leaves_target)
{
	struct strbuf err = STRBUF_INIT;
	spit(at("keep.html"), "keep");
	struct outfile o;
	CHECK(outfile_open(&o, at("keep.html"), &err) == 0);
	fputs("half", o.fp);
	CHECK(leftovers() == 1);
	outfile_abort(&o);
	CHECK_STR(slurp(at("keep.html")), "keep");
	CHECK(leftovers() == 0);
	strbuf_release(&err);
}

TEST(read_only_file_refused)
{
	if (geteuid() == 0)
		return;	/* root may write anything: nothing to refuse */
	struct strbuf err = STRBUF_INIT;
	spit(at("ro.html"), "ro");
	chmod(at("ro.html"), 0444);
	CHECK(outfile_write(at("ro.html"), "x", 1, &err) == -1);
	CHECK_STR(slurp(at("ro.html")), "ro");
	strbuf_release(&err);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/sl-atomicfile-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(new_file);
	RUN(regular_keeps_mode);
	RUN(symlink_followed);
	RUN(dangling_symlink_creates_target);
	RUN(char_device_written_through);
	RUN(directory_refused);
	RUN(fifo_refused);
	RUN(socket_refused);
	RUN(missing_folder_and_empty_path);
	RUN(abort_leaves_target);
	RUN(read_only_file_refused);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
	return tap_done();
}
