/*
 * UTF-8 for text that crosses the protocol: workload output is whatever
 * bytes a program printed, and JSON strings must be valid UTF-8 (jansson
 * refuses anything else and the output would be lost). utf8_scrub replaces
 * every invalid sequence with U+FFFD in place. (A cut that never splits a
 * character is strbuf_tail's, in strbuf.c: strbuf needs nothing of this
 * file, which builds on it.)
 */
#ifndef SL_UTIL_UTF8_H
#define SL_UTIL_UTF8_H

#include <stddef.h>

#include "harness/util/strbuf.h"

/* length of the valid UTF-8 sequence at s[0..n), 0 when invalid */
size_t utf8_seq_len(const unsigned char *s, size_t n);
/* replace each invalid byte sequence with U+FFFD; the number replaced */
size_t utf8_scrub(struct strbuf *sb);

#endif
