/*
 * LZ4 blocks and the legacy frame (see lz4.h), over liblz4: the blocks are
 * liblz4's (LZ4_compress_HC at LZ4_LEGACY_LEVEL, LZ4_decompress_safe), this
 * file only frames them the way the kernel's initramfs unpacker reads them.
 */
#include "harness/targets/lz4.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <lz4hc.h>

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

size_t lz4_block_bound(size_t n)
{
	return (size_t)LZ4_compressBound((int)n);
}

size_t lz4_block_compress(const unsigned char *src, size_t n, unsigned char *dst)
{
	int c = LZ4_compress_HC((const char *)src, (char *)dst, (int)n, LZ4_compressBound((int)n),
				LZ4_LEGACY_LEVEL);
	return c > 0 ? (size_t)c : 0;
}

int lz4_block_decompress(const unsigned char *src, size_t n, size_t cap, struct strbuf *out)
{
	if (n > (size_t)INT32_MAX || cap > (size_t)INT32_MAX)
		return -1;
	strbuf_grow(out, cap);
	int d = LZ4_decompress_safe((const char *)src, out->buf + out->len, (int)n, (int)cap);
	if (d < 0)
		return -1;
	out->len += (size_t)d;
	out->buf[out->len] = 0;
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
