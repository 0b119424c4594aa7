/*
 * UTF-8 for text that crosses the protocol: workload output is whatever
 * bytes a program printed, and JSON strings must be valid UTF-8 (jansson
 * refuses anything else and the output would be lost). utf8_scrub replaces
 * every invalid sequence with U+FFFD in place; utf8_char_start finds where
 * a character begins so that a cut never splits one.
 */
#ifndef SL_UTIL_UTF8_H
#define SL_UTIL_UTF8_H

#include <stddef.h>

#include "harness/util/strbuf.h"

/* length of the valid UTF-8 sequence at s[0..n), 0 when invalid */
size_t utf8_seq_len(const unsigned char *s, size_t n);
/* replace each invalid byte sequence with U+FFFD; the number replaced */
size_t utf8_scrub(struct strbuf *sb);
/* the first offset >= off in s[0..n) that does not fall inside a
 * character (at most 3 bytes on) */
size_t utf8_char_start(const char *s, size_t n, size_t off);

#endif
