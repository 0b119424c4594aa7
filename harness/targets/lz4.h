/*
 * LZ4 in the legacy frame format ("lz4 -l"), the one the kernel's initramfs
 * unpacker reads with CONFIG_RD_LZ4: the magic 0x184C2102 (little-endian),
 * then blocks of at most 8 MiB of input, each a little-endian 32-bit
 * compressed size and an independent LZ4 block. Decompressing under an
 * emulated CPU (qemu TCG) is about as fast as copying the plain archive and
 * much faster than gunzip (docs/qemu.md), and the archive a guest keeps for
 * kexec is a third of the size.
 *
 * The blocks are liblz4's (the reference implementation, deterministic:
 * equal input gives equal bytes, which the initramfs cache relies on),
 * made by its high-compression coder (LZ4HC): the same format, decoded as
 * fast or faster, and 17% smaller for Debian's vmlinux (13.8 MB instead of
 * 16.6), which is what a kexec copies around several times. It costs about
 * 1 s of one core for a 50 MB archive, once per cached archive. This module
 * only frames the blocks. The decompressor checks every bound and is
 * there for tests and for reading an archive back.
 */
#ifndef SL_LZ4_H
#define SL_LZ4_H

#include <stddef.h>

#include "harness/util/strbuf.h"

#define LZ4_LEGACY_MAGIC 0x184C2102u
#define LZ4_LEGACY_BLOCK (8u << 20)
/* LZ4HC's level: 9 is its default; 12 saves 0.4% more at 4 times the time */
#define LZ4_LEGACY_LEVEL 9

/* append the legacy frame of src[0..len) to out */
void lz4_legacy_compress(const void *src, size_t len, struct strbuf *out);
/* append what the legacy frame in src[0..len) holds to out; -1 with a
 * message when it is not a well-formed frame */
int lz4_legacy_decompress(const void *src, size_t len, struct strbuf *out, struct strbuf *err);

/* one LZ4 block: compress n bytes into dst (room for lz4_block_bound(n));
 * returns the compressed size. Exposed for tests. */
size_t lz4_block_bound(size_t n);
size_t lz4_block_compress(const unsigned char *src, size_t n, unsigned char *dst);
/* decompress a block of n bytes into out (at most cap bytes); -1 when malformed */
int lz4_block_decompress(const unsigned char *src, size_t n, size_t cap, struct strbuf *out);

#endif
