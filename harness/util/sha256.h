/*
 * SHA-256 (FIPS 180-4) of byte streams, for content-addressed caches: the
 * initramfs cache key (harness/targets/initramfs.c) and the agent copied to
 * ssh targets by hash. Incremental: init, update any number of times, final.
 * And HMAC-SHA256 (RFC 2104) over it, for serve's CSRF values.
 */
#ifndef SL_SHA256_H
#define SL_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;
	unsigned char buf[64];
	size_t nbuf;
};
void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, unsigned char out[32]);
/* lowercase hex of the digest into hex[65] */
void sha256_hex(const unsigned char d[32], char hex[65]);
/* the digest (hex) of len bytes at data, in one call */
void sha256_hex_of(const void *data, size_t len, char hex[65]);
/* the digest (hex) of what fd reads from its offset to the end, the byte
 * count in *size (NULL: not wanted); fd is left open. -1 with errno set
 * when a read fails. */
/* HMAC-SHA256 (RFC 2104, FIPS 198-1) of msg under key (any length: a key
 * over 64 bytes is hashed first); the RFC 4231 vectors in test_sha256 */
void hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
		 unsigned char out[32]);
int sha256_fd(int fd, char hex[65], uint64_t *size);

#endif
