/*
 * Unit tests for harness/agent/frame.c, the frame lines that carry the
 * agent's batch-mode replies through a lab system's console log: round
 * trips of short, empty, multi-part and binary messages; frames wrapped in a
 * LAVA YAML log line; and the decoder's refusals (a flipped character, a
 * missing or repeated part, a bad header, an oversized part, a message cut
 * off at the end of the log), each counted as corrupt and never delivered.
 */
#include <stdio.h>
#include <string.h>

#include "harness/agent/frame.h"
#include "tests/unit/tap.h"

struct got {
	int n;
	unsigned seq[8];
	struct strbuf msg[8];
};

static int on_msg(void *ctx, unsigned seq, const char *msg, size_t len)
{
	struct got *g = ctx;
	if (g->n < 8) {
		g->seq[g->n] = seq;
		strbuf_init(&g->msg[g->n], 0);
		strbuf_add(&g->msg[g->n], msg, len);
	}
	g->n++;
	return 0;
}

static void got_release(struct got *g)
{
	for (int i = 0; i < g->n && i < 8; i++)
		strbuf_release(&g->msg[i]);
	g->n = 0;
}

/* feed text line by line */
static void feed(struct frame_dec *d, const char *text)
{
	const char *p = text;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		frame_dec_line(d, p, n);
		p += n + (e ? 1 : 0);
	}
}

TEST(base64_known)
{
	struct strbuf s = STRBUF_INIT, d = STRBUF_INIT;
	frame_b64_encode((const unsigned char *)"foobar", 6, &s);
	CHECK_STR(s.buf, "Zm9vYmFy");
	strbuf_reset(&s);
	frame_b64_encode((const unsigned char *)"fo", 2, &s);
	CHECK_STR(s.buf, "Zm8=");
	CHECK(frame_b64_decode("Zm8=", 4, &d) == 0);
	CHECK_STR(d.buf, "fo");
	CHECK(frame_b64_decode("Zm8", 3, &d) == -1);
	CHECK(frame_b64_decode("Z=8A", 4, &d) == -1);
	CHECK(frame_b64_decode("Zm\"A", 4, &d) == -1);
	strbuf_release(&s);
	strbuf_release(&d);
}

TEST(round_trip_short_and_empty)
{
	struct strbuf out = STRBUF_INIT;
	frame_encode(0, "{\"id\":1}", 8, &out);
	frame_encode(1, "", 0, &out);
	CHECK(!memcmp(out.buf, "SLB1 0 1/1 ", 11));
	struct got g = { 0 };
	struct frame_dec d;
	frame_dec_init(&d, on_msg, &g);
	feed(&d, out.buf);
	CHECK(g.n == 2);
	CHECK(g.seq[0] == 0 && g.seq[1] == 1);
	CHECK_STR(g.msg[0].buf, "{\"id\":1}");
	CHECK(g.msg[1].len == 0);
	CHECK(d.corrupt == 0);
	CHECK(frame_dec_finish(&d) == 0);
	got_release(&g);
	frame_dec_release(&d);
	strbuf_release(&out);
}

/* a message of several parts, with binary bytes, inside LAVA YAML lines and
 * with kernel messages between the parts */
TEST(multi_part_in_yaml_log)
{
	size_t len = FRAME_CHUNK * 3 + 17;
	char *msg = xmalloc(len);
	for (size_t i = 0; i < len; i++)
		msg[i] = (char)(i * 7 + 3);
	struct strbuf fr = STRBUF_INIT, log = STRBUF_INIT;
	frame_encode(5, msg, len, &fr);
	const char *p = fr.buf;
	int lines = 0;
	while (*p) {
		const char *e = strchr(p, '\n');
		strbuf_addf(&log, "- {\"dt\": \"2026-12-04T06:37:30.58\", \"lvl\": \"target\", "
				  "\"msg\": \"%.*s\"}\n", (int)(e - p), p);
		strbuf_addstr(&log, "[    4.3] random: crng init done\n");
		p = e + 1;
		lines++;
	}
	CHECK(lines == 4);
	struct got g = { 0 };
	struct frame_dec d;
	frame_dec_init(&d, on_msg, &g);
	feed(&d, log.buf);
	CHECK(g.n == 1);
	CHECK(g.n == 1 && g.msg[0].len == len && !memcmp(g.msg[0].buf, msg, len));
	CHECK(d.corrupt == 0);
	got_release(&g);
	frame_dec_release(&d);
	strbuf_release(&fr);
	strbuf_release(&log);
	free(msg);
}

static struct strbuf frames_of(unsigned seq, size_t len)
{
	struct strbuf fr = STRBUF_INIT;
	char *msg = xmalloc(len + 1);
	for (size_t i = 0; i < len; i++)
		msg[i] = (char)('a' + i % 26);
	frame_encode(seq, msg, len, &fr);
	free(msg);
	return fr;
}

static int decode_count(const char *text, unsigned *corrupt)
{
	struct got g = { 0 };
	struct frame_dec d;
	frame_dec_init(&d, on_msg, &g);
	feed(&d, text);
	frame_dec_finish(&d);
	int n = g.n;
	*corrupt = d.corrupt;
	got_release(&g);
	frame_dec_release(&d);
	return n;
}

TEST(refusals)
{
	unsigned corrupt;
	/* a flipped base64 character: hash mismatch */
	struct strbuf a = frames_of(0, 100);
	char *b = strrchr(a.buf, ' ') + 5;
	*b = *b == 'A' ? 'B' : 'A';
	CHECK(decode_count(a.buf, &corrupt) == 0 && corrupt == 1);
	strbuf_release(&a);

	/* a missing middle part */
	a = frames_of(1, FRAME_CHUNK * 2 + 5);
	char *l2 = strchr(a.buf, '\n') + 1, *l3 = strchr(l2, '\n') + 1;
	memmove(l2, l3, strlen(l3) + 1);
	CHECK(decode_count(a.buf, &corrupt) == 0 && corrupt >= 1);
	strbuf_release(&a);

	/* a repeated part */
	a = frames_of(2, FRAME_CHUNK * 2 + 5);
	l2 = strchr(a.buf, '\n') + 1;
	struct strbuf dup = STRBUF_INIT;
	strbuf_add(&dup, a.buf, (size_t)(l2 - a.buf));
	strbuf_addstr(&dup, a.buf);
	CHECK(decode_count(dup.buf, &corrupt) == 1 && corrupt == 1);
	strbuf_release(&dup);
	strbuf_release(&a);

	/* cut off at the end of the log */
	a = frames_of(3, FRAME_CHUNK + 5);
	*(strchr(a.buf, '\n') + 1) = '\0';
	CHECK(decode_count(a.buf, &corrupt) == 0 && corrupt == 1);
	strbuf_release(&a);

	/* bad headers */
	CHECK(decode_count("SLB1 x 1/1 0123456789abcdef QQ==\n", &corrupt) == 0 && corrupt == 1);
	CHECK(decode_count("SLB1 0 2/1 0123456789abcdef QQ==\n", &corrupt) == 0 && corrupt == 1);
	CHECK(decode_count("SLB1 0 0/1 0123456789abcdef QQ==\n", &corrupt) == 0 && corrupt == 1);
	CHECK(decode_count("SLB1 0 1/99999999 0123456789abcdef QQ==\n", &corrupt) == 0 &&
	      corrupt == 1);
	CHECK(decode_count("SLB1 0 1/1 0123456789ABCDEF QQ==\n", &corrupt) == 0 && corrupt == 1);
	CHECK(decode_count("SLB1 0 1/1 0123 QQ==\n", &corrupt) == 0 && corrupt == 1);
	CHECK(decode_count("SLB1 0 1/1 0123456789abcdef QQ\n", &corrupt) == 0 && corrupt == 1);

	/* a part longer than a chunk */
	struct strbuf big = STRBUF_INIT;
	strbuf_addstr(&big, "SLB1 0 1/1 0123456789abcdef ");
	for (int i = 0; i < FRAME_CHUNK / 3 * 4 + 4; i++)
		strbuf_addch(&big, 'A');
	CHECK(decode_count(big.buf, &corrupt) == 0 && corrupt == 1);
	strbuf_release(&big);

	/* lines without the prefix are ignored */
	CHECK(decode_count("SLB0 0 1/1 x\nhello\n", &corrupt) == 0 && corrupt == 0);
}

/* a message that follows a corrupt one still arrives */
TEST(recovers_after_corruption)
{
	struct strbuf a = frames_of(0, FRAME_CHUNK + 1), b = frames_of(1, 10);
	a.len = (size_t)(strchr(a.buf, '\n') + 1 - a.buf); /* first part only */
	a.buf[a.len] = '\0';
	strbuf_addstr(&a, b.buf);
	unsigned corrupt;
	CHECK(decode_count(a.buf, &corrupt) == 1 && corrupt == 1);
	strbuf_release(&a);
	strbuf_release(&b);
}

int main(void)
{
	RUN(base64_known);
	RUN(round_trip_short_and_empty);
	RUN(multi_part_in_yaml_log);
	RUN(refusals);
	RUN(recovers_after_corruption);
	return tap_done();
}
