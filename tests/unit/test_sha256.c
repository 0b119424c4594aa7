/*
 * Unit tests of harness/util/sha256.c: the digest of FIPS 180-4's examples
 * and HMAC-SHA256 against the test vectors of RFC 4231 (section 4), the
 * keyed hash of schedlab serve's CSRF values.
 */
#include <string.h>

#include "harness/util/sha256.h"
#include "tests/unit/tap.h"

static void hex_of(const unsigned char *d, size_t n, char *hex)
{
	static const char x[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		hex[2 * i] = x[d[i] >> 4];
		hex[2 * i + 1] = x[d[i] & 15];
	}
	hex[2 * n] = 0;
}

/* the HMAC of msg under key, as hex; n: how many bytes of it (case 5 is
 * truncated to 128 bits) */
static const char *hmac_hex(const void *key, size_t klen, const void *msg, size_t mlen, size_t n)
{
	static char hex[65];
	unsigned char d[32];
	hmac_sha256(key, klen, msg, mlen, d);
	hex_of(d, n, hex);
	return hex;
}

TEST(sha256_fips_examples)
{
	char hex[65];
	sha256_hex_of("abc", 3, hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	sha256_hex_of("", 0, hex);
	CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(hmac_rfc4231)
{
	unsigned char k[131], m[50];
	/* 1: a 20-byte key of 0x0b, "Hi There" */
	memset(k, 0x0b, 20);
	CHECK_STR(hmac_hex(k, 20, "Hi There", 8, 32),
		  "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	/* 2: a key shorter than the block, "Jefe" */
	CHECK_STR(hmac_hex("Jefe", 4, "what do ya want for nothing?", 28, 32),
		  "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	/* 3: 20 bytes 0xaa, 50 bytes 0xdd */
	memset(k, 0xaa, 20);
	memset(m, 0xdd, 50);
	CHECK_STR(hmac_hex(k, 20, m, 50, 32),
		  "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
	/* 4: a key of 0x01..0x19, 50 bytes 0xcd */
	for (int i = 0; i < 25; i++)
		k[i] = (unsigned char)(i + 1);
	memset(m, 0xcd, 50);
	CHECK_STR(hmac_hex(k, 25, m, 50, 32),
		  "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
	/* 5: truncated to 128 bits */
	memset(k, 0x0c, 20);
	CHECK_STR(hmac_hex(k, 20, "Test With Truncation", 20, 16),
		  "a3b6167473100ee06e0c796c2955552b");
	/* 6 and 7: a key of 131 bytes, longer than the block: hashed first */
	memset(k, 0xaa, 131);
	const char *m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
	CHECK_STR(hmac_hex(k, 131, m6, strlen(m6), 32),
		  "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
	const char *m7 = "This is a test using a larger than block-size key and a larger "
			 "than block-size data. The key needs to be hashed before being used "
			 "by the HMAC algorithm.";
	CHECK_STR(hmac_hex(k, 131, m7, strlen(m7), 32),
		  "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

int main(void)
{
	RUN(sha256_fips_examples);
	RUN(hmac_rfc4231);
	return tap_done();
}
