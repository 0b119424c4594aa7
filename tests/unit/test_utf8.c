/*
 * Unit tests of harness/util/utf8.c and of strbuf_tail's cut: workload
 * output crosses the protocol as JSON, which takes only valid UTF-8, so
 * invalid bytes are replaced (never the whole text dropped) and a tail
 * never starts inside a character. Also strbuf_read_regular, how the agent
 * reads the files a tool wrote: a FIFO there hung it, a symlink was
 * followed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/util/strbuf.h"
#include "harness/util/utf8.h"
#include "tests/unit/tap.h"

static char *scrubbed(const char *in, size_t n, size_t *bad)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_add(&sb, in, n);
	*bad = utf8_scrub(&sb);
	return strbuf_detach(&sb, NULL);
}

TEST(valid_text_untouched)
{
	size_t bad;
	const char *t = "plain, é, €, 𝄞, and a NUL-free end";
	char *s = scrubbed(t, strlen(t), &bad);
	CHECK(bad == 0);
	CHECK_STR(s, t);
	free(s);
}

TEST(invalid_sequences_replaced)
{
	static const struct {
		const char *in;
		size_t n;
		const char *out;
		size_t bad;
	} cases[] = {
		{ "a\xff" "b", 3, "a\xEF\xBF\xBD" "b", 1 },             /* never valid */
		{ "\xc3", 1, "\xEF\xBF\xBD", 1 },                       /* cut short */
		{ "\xe2\x82" "x", 3, "\xEF\xBF\xBD" "x", 1 },           /* cut short, 3-byte */
		{ "\xc0\xaf", 2, "\xEF\xBF\xBD", 1 },                   /* overlong '/' */
		{ "\xed\xa0\x80", 3, "\xEF\xBF\xBD", 1 },               /* a surrogate */
		{ "\xf4\x90\x80\x80", 4, "\xEF\xBF\xBD", 1 },           /* above U+10FFFF */
		{ "\x80\x80" "ok", 4, "\xEF\xBF\xBD" "ok", 1 },         /* stray continuations */
		{ "\xff\xfe", 2, "\xEF\xBF\xBD\xEF\xBF\xBD", 2 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t bad;
		char *s = scrubbed(cases[i].in, cases[i].n, &bad);
		CHECK_STR(s, cases[i].out);
		CHECK(bad == cases[i].bad);
		free(s);
	}
}

TEST(tail_never_splits_a_character)
{
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0; i < 100; i++)
		strbuf_addstr(&sb, "é€");  /* 2 + 3 bytes */
	for (size_t max = 1; max < 40; max++) {
		struct strbuf t = STRBUF_INIT;
		strbuf_add(&t, sb.buf, sb.len);
		strbuf_tail(&t, max);
		size_t bad = utf8_scrub(&t);
		CHECK(bad == 0);
		CHECK(t.len <= max);
		CHECK(t.len + 3 > max); /* no more than a character short */
		strbuf_release(&t);
	}
	strbuf_release(&sb);
}

TEST(read_regular_refuses_fifo_and_symlink)
{
	char dir[] = "/tmp/sl-test-utf8-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char *fifo = xstrfmt("%s/fifo", dir), *link = xstrfmt("%s/link", dir),
	     *plain = xstrfmt("%s/plain", dir);
	CHECK(mkfifo(fifo, 0600) == 0);
	FILE *f = fopen(plain, "w");
	fputs("data", f);
	fclose(f);
	CHECK(symlink(plain, link) == 0);
	struct strbuf sb = STRBUF_INIT;
	const char *why;
	CHECK(strbuf_read_regular(&sb, fifo, 0, &why) == -1); /* returns, does not block */
	CHECK_STR(why, "not a regular file");
	CHECK(strbuf_read_regular(&sb, link, 0, &why) == -1);
	CHECK_STR(why, "a symlink");
	CHECK(sb.len == 0);
	CHECK(strbuf_read_regular(&sb, plain, 0, &why) == 0);
	CHECK_STR(sb.buf, "data");
	char *missing = xstrfmt("%s/missing", dir);
	CHECK(strbuf_read_regular(&sb, missing, 0, &why) == -1 && errno == ENOENT);
	unlink(fifo);
	unlink(link);
	unlink(plain);
	rmdir(dir);
	free(fifo);
	free(link);
	free(plain);
	free(missing);
	strbuf_release(&sb);
}

int main(void)
{
	RUN(valid_text_untouched);
	RUN(invalid_sequences_replaced);
	RUN(tail_never_splits_a_character);
	RUN(read_regular_refuses_fifo_and_symlink);
	return tap_done();
}
