/*
 * UTF-8 validation after RFC 3629 (no overlong forms, no surrogates,
 * nothing above U+10FFFF); see utf8.h.
 */
#include "harness/util/utf8.h"

#include <string.h>

size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xBF; /* range of the second byte */
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return len;
}

size_t utf8_scrub(struct strbuf *sb)
{
	const unsigned char *s = (const unsigned char *)sb->buf;
	size_t n = sb->len, i = 0, bad = 0;
	while (i < n) {
		size_t l = utf8_seq_len(s + i, n - i);
		if (!l)
			break;
		i += l;
	}
	if (i == n)
		return 0; /* the usual case: valid, untouched */
	struct strbuf out = STRBUF_INIT;
	strbuf_add(&out, sb->buf, i);
	while (i < n) {
		size_t l = utf8_seq_len(s + i, n - i);
		if (l) {
			strbuf_add(&out, sb->buf + i, l);
			i += l;
		} else {
			strbuf_add(&out, "\xEF\xBF\xBD", 3); /* U+FFFD */
			bad++;
			i++;
			/* the continuation bytes of the broken sequence go with it */
			while (i < n && (s[i] & 0xC0) == 0x80)
				i++;
		}
	}
	strbuf_release(sb);
	*sb = out;
	return bad;
}
