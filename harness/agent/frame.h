/*
 * Framed protocol lines for the agent's batch mode: how a reply gets from a
 * guest to the controller through a console log that a lab system (LAVA)
 * records and hands back later, with kernel messages between the lines.
 *
 * A console log is hostile to JSON: LAVA drops "\r" and ESC, folds empty
 * lines, and escapes `"` as `\"` without escaping `\` (so the original text
 * cannot be recovered), and a kernel message may land in the middle of a
 * line. So every protocol message (the banner, each reply) is sent as
 * base64 (no quote, no backslash) in one or more lines of the form
 *
 *   SLB1 <seq> <part>/<parts> <hash> <base64>
 *
 * seq counts messages from 0, part runs 1..parts, hash is the first 16 hex
 * digits of the SHA-256 of the whole message (identical on every part), and
 * each part carries at most FRAME_CHUNK bytes (4096 base64 characters; a
 * 4.5 KB console line was seen to survive LAVA intact). The prefix may
 * appear anywhere in a log line (a timestamp or a YAML wrapper before it),
 * and the frame ends at the first character that is not base64.
 *
 * The decoder treats the log as untrusted input: each header field is parsed
 * strictly, parts must come in order, a message is bounded (FRAME_MSG_MAX)
 * and only delivered when its hash matches; anything else is counted as a
 * corrupt frame and the partial message is dropped. Pure code, tested by
 * tests/unit/test_frame.c.
 */
#ifndef SL_FRAME_H
#define SL_FRAME_H

#include <stddef.h>

#include "harness/util/strbuf.h"

#define FRAME_PREFIX "SLB1 "
#define FRAME_CHUNK 3072                     /* raw bytes per line */
#define FRAME_MSG_MAX ((size_t)64 << 20)     /* longest message accepted */

/* append the frame lines of one message (each ending in '\n') to out */
void frame_encode(unsigned seq, const char *msg, size_t len, struct strbuf *out);
/* write them to fd; 0 ok, -1 write error */
int frame_write(int fd, unsigned seq, const char *msg, size_t len);

/* base64 (RFC 4648, padded); decode returns -1 on a bad character/length */
void frame_b64_encode(const unsigned char *in, size_t len, struct strbuf *out);
int frame_b64_decode(const char *in, size_t len, struct strbuf *out);

struct frame_dec {
	/* called for each complete, verified message (msg is NUL-terminated);
	 * a non-zero return stops frame_dec_line and is returned by it */
	int (*on_msg)(void *ctx, unsigned seq, const char *msg, size_t len);
	void *ctx;
	unsigned seq, parts, next_part; /* the message being assembled */
	int active;
	char hash[17];
	struct strbuf buf;
	unsigned messages;              /* delivered */
	unsigned corrupt;               /* frames rejected or messages dropped */
	struct strbuf last_error;       /* why the last one was rejected */
};

void frame_dec_init(struct frame_dec *d, int (*on_msg)(void *, unsigned, const char *, size_t),
		    void *ctx);
void frame_dec_release(struct frame_dec *d);
/* feed one log line (not necessarily NUL-terminated); lines without the
 * prefix are ignored; returns 0 or on_msg's non-zero value */
int frame_dec_line(struct frame_dec *d, const char *line, size_t len);
/* at the end of the log: a message still incomplete counts as corrupt;
 * returns the number of messages left incomplete (0 or 1) */
int frame_dec_finish(struct frame_dec *d);

#endif
