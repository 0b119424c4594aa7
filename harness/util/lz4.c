/*
 * LZ4 blocks and the legacy frame (see lz4.h). Block format: sequences of a
 * token (literal length in the high nibble, match length - 4 in the low
 * one; 15 means more length bytes of 255 follow, ended by one below 255),
 * the literals, a little-endian 16-bit offset back into the output and the
 * extra match length bytes. The last sequence is literals only. Rules every
 * decoder may rely on: the last 5 bytes are literals, and no match starts
 * within the last 12 bytes.
 */
#include "harness/util/lz4.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MINMATCH 4
#define LASTLITERALS 5
#define MFLIMIT 12
#define HASH_LOG 16
#define MAX_OFFSET 65535

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t hash4(uint32_t v)
{
	return (v * 2654435761u) >> (32 - HASH_LOG);
}

size_t lz4_block_bound(size_t n)
{
	return n + n / 255 + 16;
}

static unsigned char *put_len(unsigned char *op, size_t len)
{
	for (; len >= 255; len -= 255)
		*op++ = 255;
	*op++ = (unsigned char)len;
	return op;
}

/* literals [anchor, anchor + lit) and, when ml >= MINMATCH, a match */
static unsigned char *put_seq(unsigned char *op, const unsigned char *anchor, size_t lit,
			      size_t off, size_t ml)
{
	unsigned char *token = op++;
	*token = (unsigned char)((lit >= 15 ? 15 : lit) << 4);
	if (lit >= 15)
		op = put_len(op, lit - 15);
	memcpy(op, anchor, lit);
	op += lit;
	if (ml < MINMATCH)
		return op;
	*op++ = (unsigned char)(off & 0xff);
	*op++ = (unsigned char)(off >> 8);
	ml -= MINMATCH;
	*token |= (unsigned char)(ml >= 15 ? 15 : ml);
	if (ml >= 15)
		op = put_len(op, ml - 15);
	return op;
}

size_t lz4_block_compress(const unsigned char *src, size_t n, unsigned char *dst)
{
	const unsigned char *ip = src, *anchor = src, *end = src + n;
	unsigned char *op = dst;
	uint32_t *table;

	if (n < MFLIMIT + 1)
		return (size_t)(put_seq(op, anchor, n, 0, 0) - dst);
	table = calloc((size_t)1 << HASH_LOG, sizeof(*table));
	if (!table)
		abort();
	const unsigned char *mflimit = end - MFLIMIT, *matchlimit = end - LASTLITERALS;
	table[hash4(rd32(ip))] = 0;
	ip++;
	unsigned misses = 0;
	while (ip < mflimit) {
		uint32_t h = hash4(rd32(ip));
		const unsigned char *ref = src + table[h];
		table[h] = (uint32_t)(ip - src);
		if ((size_t)(ip - ref) > MAX_OFFSET || ref >= ip || rd32(ref) != rd32(ip)) {
			/* step faster through data that does not compress */
			ip += 1 + (misses++ >> 6);
			continue;
		}
		misses = 0;
		while (ip > anchor && ref > src && ip[-1] == ref[-1])
			ip--, ref--;
		size_t ml = MINMATCH;
		while (ip + ml < matchlimit && ip[ml] == ref[ml])
			ml++;
		op = put_seq(op, anchor, (size_t)(ip - anchor), (size_t)(ip - ref), ml);
		ip += ml;
		anchor = ip;
		if (ip < mflimit)
			table[hash4(rd32(ip - 2))] = (uint32_t)(ip - 2 - src);
	}
	free(table);
	return (size_t)(put_seq(op, anchor, (size_t)(end - anchor), 0, 0) - dst);
}

/* a length continued by bytes of 255; -1 past the end */
static int get_len(const unsigned char **ip, const unsigned char *end, size_t *len)
{
	unsigned char b;
	do {
		if (*ip >= end)
			return -1;
		b = *(*ip)++;
		*len += b;
	} while (b == 255);
	return 0;
}

/* the block at src into dst[0..cap): bytes written, or -1 when malformed */
static long block_decode(const unsigned char *src, size_t n, unsigned char *dst, size_t cap)
{
	const unsigned char *ip = src, *end = src + n;
	unsigned char *op = dst, *oend = dst + cap;

	if (!n)
		return -1;
	for (;;) {
		if (ip >= end)
			return -1;
		unsigned token = *ip++;
		size_t lit = token >> 4, ml = token & 15;
		if (lit == 15 && get_len(&ip, end, &lit))
			return -1;
		if (lit > (size_t)(end - ip) || lit > (size_t)(oend - op))
			return -1;
		memcpy(op, ip, lit);
		op += lit;
		ip += lit;
		if (ip == end) /* the last sequence: literals only */
			return op - dst;
		if (end - ip < 2)
			return -1;
		size_t off = (size_t)ip[0] | (size_t)ip[1] << 8;
		ip += 2;
		if (ml == 15 && get_len(&ip, end, &ml))
			return -1;
		ml += MINMATCH;
		if (!off || off > (size_t)(op - dst) || ml > (size_t)(oend - op))
			return -1;
		const unsigned char *m = op - off;
		if (off >= ml) {
			memcpy(op, m, ml);
			op += ml;
		} else {
			/* overlapping: the pattern repeats every off bytes */
			while (ml--)
				*op++ = *m++;
		}
	}
}

int lz4_block_decompress(const unsigned char *src, size_t n, size_t cap, struct strbuf *out)
{
	size_t base = out->len;
	strbuf_grow(out, cap);
	long k = block_decode(src, n, (unsigned char *)out->buf + base, cap);
	if (k < 0) {
		out->buf[base] = '\0';
		return -1;
	}
	out->len = base + (size_t)k;
	out->buf[out->len] = '\0';
	return 0;
}

static void put32(struct strbuf *out, uint32_t v)
{
	unsigned char b[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
			       (unsigned char)(v >> 24) };
	strbuf_add(out, b, 4);
}

void lz4_legacy_compress(const void *src, size_t len, struct strbuf *out)
{
	const unsigned char *p = src;
	unsigned char *dst = xmalloc(lz4_block_bound(LZ4_LEGACY_BLOCK));

	put32(out, LZ4_LEGACY_MAGIC);
	for (size_t off = 0; off < len; off += LZ4_LEGACY_BLOCK) {
		size_t n = len - off < LZ4_LEGACY_BLOCK ? len - off : LZ4_LEGACY_BLOCK;
		size_t c = lz4_block_compress(p + off, n, dst);
		put32(out, (uint32_t)c);
		strbuf_add(out, dst, c);
	}
	free(dst);
}

int lz4_legacy_decompress(const void *src, size_t len, struct strbuf *out, struct strbuf *err)
{
	const unsigned char *p = src, *end = p + len;

	if (len < 4 || le32(p) != LZ4_LEGACY_MAGIC) {
		strbuf_addstr(err, "lz4: not a legacy frame (no magic 0x184C2102)");
		return -1;
	}
	p += 4;
	while (p < end) {
		if (end - p < 4) {
			strbuf_addstr(err, "lz4: a block size is cut off");
			return -1;
		}
		uint32_t c = le32(p);
		p += 4;
		if (c == LZ4_LEGACY_MAGIC)
			continue; /* concatenated frames */
		if (c > (size_t)(end - p)) {
			strbuf_addf(err, "lz4: a block of %u bytes runs past the end", (unsigned)c);
			return -1;
		}
		if (lz4_block_decompress(p, c, LZ4_LEGACY_BLOCK, out) < 0) {
			strbuf_addstr(err, "lz4: a malformed block");
			return -1;
		}
		p += c;
	}
	return 0;
}
