/*
 * Unit tests of harness/targets/lz4.h (liblz4's blocks in the legacy frame), the LZ4 legacy frame the qemu target's
 * initramfs is written in: round trips of empty, tiny (all literals),
 * repetitive (long matches, overlapping copies), incompressible and
 * multi-block (> 8 MiB) input; the frame layout (magic, little-endian block
 * sizes); the block rules every decoder relies on (the last 5 bytes are
 * literals, no match starts in the last 12); determinism; and the
 * decompressor refusing cut-off, corrupt and foreign input. The kernel
 * reading the same bytes is covered by tests/e2e/t0500-qemu-boot.sh.
 */
#include <stdint.h>

#include "harness/targets/lz4.h"
#include "tests/unit/tap.h"

static uint64_t rng = 88172645463325252ull;

static unsigned char next_byte(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (unsigned char)rng;
}

/* compress, check the frame, decompress, compare */
static void roundtrip(const unsigned char *in, size_t len, size_t *packed)
{
	struct strbuf z = STRBUF_INIT, back = STRBUF_INIT, err = STRBUF_INIT;
	lz4_legacy_compress(in, len, &z);
	CHECK(z.len >= 4);
	CHECK((unsigned char)z.buf[0] == 0x02 && (unsigned char)z.buf[1] == 0x21 &&
	      (unsigned char)z.buf[2] == 0x4C && (unsigned char)z.buf[3] == 0x18);
	CHECK(lz4_legacy_decompress(z.buf, z.len, &back, &err) == 0);
	CHECK(back.len == len);
	CHECK(back.len == len && (!len || !memcmp(back.buf, in, len)));
	if (err.len)
		printf("#   %s\n", err.buf);
	if (packed)
		*packed = z.len;
	strbuf_release(&z);
	strbuf_release(&back);
	strbuf_release(&err);
}

TEST(roundtrip_small_and_empty)
{
	size_t n;
	roundtrip((const unsigned char *)"", 0, &n);
	CHECK(n == 4); /* the magic, no block */
	roundtrip((const unsigned char *)"a", 1, NULL);
	roundtrip((const unsigned char *)"hello, world", 12, NULL);
	roundtrip((const unsigned char *)"abcabcabcabcabcabcabcabcabcabc", 30, NULL);
}

TEST(roundtrip_repetitive_compresses)
{
	static unsigned char buf[300000];
	size_t n;
	memset(buf, 'x', sizeof(buf)); /* one long overlapping match */
	roundtrip(buf, sizeof(buf), &n);
	CHECK(n < sizeof(buf) / 100);
	for (size_t i = 0; i < sizeof(buf); i++) /* a text-like pattern */
		buf[i] = (unsigned char)("the quick brown fox "[i % 20] + (i / 4096 % 3));
	roundtrip(buf, sizeof(buf), &n);
	CHECK(n < sizeof(buf) / 10);
}

TEST(roundtrip_incompressible)
{
	static unsigned char buf[100000];
	size_t n;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = next_byte();
	roundtrip(buf, sizeof(buf), &n);
	CHECK(n <= lz4_block_bound(sizeof(buf)) + 8);
}

TEST(multi_block)
{
	size_t len = LZ4_LEGACY_BLOCK + LZ4_LEGACY_BLOCK / 2 + 17, n;
	unsigned char *buf = malloc(len);
	struct strbuf z = STRBUF_INIT;
	for (size_t i = 0; i < len; i++)
		buf[i] = i % 1000 < 500 ? (unsigned char)(i / 1000) : next_byte();
	roundtrip(buf, len, &n);
	/* two blocks: magic, size, block, size, block */
	lz4_legacy_compress(buf, len, &z);
	const unsigned char *p = (const unsigned char *)z.buf + 4;
	uint32_t b1 = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		      (uint32_t)p[3] << 24;
	CHECK(4 + 4 + b1 + 4 < z.len);
	p += 4 + b1;
	uint32_t b2 = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		      (uint32_t)p[3] << 24;
	CHECK(4 + 4 + b1 + 4 + b2 == z.len);
	strbuf_release(&z);
	free(buf);
}

/* the end-of-block rules, by walking the sequences of a block */
TEST(block_end_rules)
{
	static unsigned char in[5000], out[6000];
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i % 7); /* matches up to the very end */
	size_t n = lz4_block_compress(in, sizeof(in), out), pos = 0, ip = 0;
	size_t last_match_start = 0, last_lit = 0;
	while (ip < n) {
		unsigned token = out[ip++];
		size_t lit = token >> 4, ml = token & 15;
		if (lit == 15)
			do
				lit += out[ip];
			while (out[ip++] == 255);
		ip += lit;
		pos += lit;
		last_lit = lit;
		if (ip == n)
			break;
		ip += 2;
		if (ml == 15)
			do
				ml += out[ip];
			while (out[ip++] == 255);
		last_match_start = pos;
		pos += ml + 4;
	}
	CHECK(pos == sizeof(in));
	CHECK(last_lit >= 5);
	CHECK(last_match_start + 12 <= sizeof(in));
}

TEST(deterministic)
{
	static unsigned char buf[50000];
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(next_byte() % 4);
	lz4_legacy_compress(buf, sizeof(buf), &a);
	lz4_legacy_compress(buf, sizeof(buf), &b);
	CHECK(a.len == b.len && !memcmp(a.buf, b.buf, a.len));
	strbuf_release(&a);
	strbuf_release(&b);
}

TEST(decompress_refuses_bad_input)
{
	static unsigned char buf[20000];
	struct strbuf z = STRBUF_INIT, out = STRBUF_INIT, err = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i % 13 < 6 ? i % 13 : next_byte());
	lz4_legacy_compress(buf, sizeof(buf), &z);

	CHECK(lz4_legacy_decompress("\x1f\x8b\x08\x00", 4, &out, &err) == -1); /* gzip */
	CHECK_CONTAINS(err.buf, "not a legacy frame");
	strbuf_reset(&err);
	CHECK(lz4_legacy_decompress(z.buf, z.len - 1, &out, &err) == -1); /* cut off */
	CHECK(err.len > 0);
	strbuf_reset(&err);
	CHECK(lz4_legacy_decompress(z.buf, 6, &out, &err) == -1); /* size cut off */
	strbuf_reset(&err);
	/* an offset pointing before the start of the output */
	const unsigned char bad[] = { 0x02, 0x21, 0x4C, 0x18, 6, 0, 0, 0, 0x10, 'a', 0x09, 0x00,
				      0x10, 'b' };
	CHECK(lz4_legacy_decompress(bad, sizeof(bad), &out, &err) == -1);
	CHECK_CONTAINS(err.buf, "malformed block");
	strbuf_reset(&err);
	/* the whole frame is fine after all those refusals */
	strbuf_reset(&out);
	CHECK(lz4_legacy_decompress(z.buf, z.len, &out, &err) == 0);
	CHECK(out.len == sizeof(buf) && !memcmp(out.buf, buf, sizeof(buf)));
	strbuf_release(&z);
	strbuf_release(&out);
	strbuf_release(&err);
}

int main(void)
{
	RUN(roundtrip_small_and_empty);
	RUN(roundtrip_repetitive_compresses);
	RUN(roundtrip_incompressible);
	RUN(multi_block);
	RUN(block_end_rules);
	RUN(deterministic);
	RUN(decompress_refuses_bad_input);
	return tap_done();
}
