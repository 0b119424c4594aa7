/*
 * Framed protocol lines for console logs (see frame.h): base64 chunks with a
 * sequence number, a part counter and a hash, encoded by the agent in batch
 * mode and decoded, strictly and bounded, by the controller from a lab
 * system's job log.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness/agent/frame.h"
#include "harness/util/sha256.h"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void frame_b64_encode(const unsigned char *in, size_t len, struct strbuf *out)
{
	strbuf_grow(out, (len + 2) / 3 * 4);
	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned)in[i] << 16;
		size_t n = len - i;
		if (n > 1)
			v |= (unsigned)in[i + 1] << 8;
		if (n > 2)
			v |= in[i + 2];
		char q[4] = { b64[(v >> 18) & 63], b64[(v >> 12) & 63],
			      n > 1 ? b64[(v >> 6) & 63] : '=', n > 2 ? b64[v & 63] : '=' };
		strbuf_add(out, q, 4);
	}
}

static int b64_val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int frame_b64_decode(const char *in, size_t len, struct strbuf *out)
{
	if (len % 4)
		return -1;
	for (size_t i = 0; i < len; i += 4) {
		int pad = 0;
		unsigned v = 0;
		for (int k = 0; k < 4; k++) {
			int c = (unsigned char)in[i + k], x;
			if (c == '=') {
				/* padding only in the last quad, at its end */
				if (i + 4 != len || k < 2)
					return -1;
				pad++;
				x = 0;
			} else {
				if (pad)
					return -1;
				x = b64_val(c);
				if (x < 0)
					return -1;
			}
			v = v << 6 | (unsigned)x;
		}
		char o[3] = { (char)(v >> 16), (char)(v >> 8), (char)v };
		strbuf_add(out, o, 3 - (size_t)pad);
	}
	return 0;
}

static void hash16(const char *msg, size_t len, char hex16[17])
{
	struct sha256 s;
	unsigned char d[32];
	char hex[65];
	sha256_init(&s);
	sha256_update(&s, msg, len);
	sha256_final(&s, d);
	sha256_hex(d, hex);
	memcpy(hex16, hex, 16);
	hex16[16] = '\0';
}

void frame_encode(unsigned seq, const char *msg, size_t len, struct strbuf *out)
{
	char h[17];
	hash16(msg, len, h);
	size_t parts = len ? (len + FRAME_CHUNK - 1) / FRAME_CHUNK : 1;
	for (size_t p = 0; p < parts; p++) {
		size_t off = p * FRAME_CHUNK, n = len - off < FRAME_CHUNK ? len - off : FRAME_CHUNK;
		strbuf_addf(out, FRAME_PREFIX "%u %zu/%zu %s ", seq, p + 1, parts, h);
		frame_b64_encode((const unsigned char *)msg + off, n, out);
		strbuf_addch(out, '\n');
	}
}

int frame_write(int fd, unsigned seq, const char *msg, size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	frame_encode(seq, msg, len, &sb);
	size_t off = 0;
	int rc = 0;
	while (off < sb.len) {
		ssize_t k = write(fd, sb.buf + off, sb.len - off);
		if (k < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			rc = -1;
			break;
		}
		off += (size_t)k;
	}
	strbuf_release(&sb);
	return rc;
}

/* ------------------------------------------------------------------ */
/* decoder                                                              */

void frame_dec_init(struct frame_dec *d, int (*on_msg)(void *, unsigned, const char *, size_t),
		    void *ctx)
{
	memset(d, 0, sizeof(*d));
	d->on_msg = on_msg;
	d->ctx = ctx;
	strbuf_init(&d->buf, 0);
	strbuf_init(&d->last_error, 0);
}

void frame_dec_release(struct frame_dec *d)
{
	strbuf_release(&d->buf);
	strbuf_release(&d->last_error);
}

static void reject(struct frame_dec *d, const char *why, unsigned seq)
{
	d->corrupt++;
	strbuf_reset(&d->last_error);
	strbuf_addf(&d->last_error, "frame of message %u: %s", seq, why);
	d->active = 0;
	strbuf_reset(&d->buf);
}

/* a decimal number of at most 9 digits at *p, then one space */
static int take_uint(const char **p, const char *end, char stop, unsigned *out)
{
	const char *s = *p;
	unsigned v = 0;
	int n = 0;
	while (s < end && *s >= '0' && *s <= '9' && n < 9) {
		v = v * 10 + (unsigned)(*s - '0');
		s++;
		n++;
	}
	if (!n || s >= end || *s != stop)
		return -1;
	*out = v;
	*p = s + 1;
	return 0;
}

int frame_dec_line(struct frame_dec *d, const char *line, size_t len)
{
	const char *end = line + len, *p = memmem(line, len, FRAME_PREFIX, strlen(FRAME_PREFIX));
	if (!p)
		return 0;
	p += strlen(FRAME_PREFIX);
	unsigned seq, part, parts;
	if (take_uint(&p, end, ' ', &seq) || take_uint(&p, end, '/', &part) ||
	    take_uint(&p, end, ' ', &parts)) {
		reject(d, "bad header", d->active ? d->seq : 0);
		return 0;
	}
	size_t max_parts = FRAME_MSG_MAX / FRAME_CHUNK;
	if (!part || !parts || part > parts || parts > max_parts) {
		reject(d, "bad part counter", seq);
		return 0;
	}
	char h[17];
	for (int i = 0; i < 16; i++, p++) {
		if (p >= end || !((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) {
			reject(d, "bad hash", seq);
			return 0;
		}
		h[i] = *p;
	}
	h[16] = '\0';
	if (p >= end || *p != ' ') {
		reject(d, "bad hash", seq);
		return 0;
	}
	p++;
	const char *b = p;
	while (p < end && (b64_val((unsigned char)*p) >= 0 || *p == '='))
		p++;
	size_t blen = (size_t)(p - b);
	if (blen > (FRAME_CHUNK / 3) * 4) {
		reject(d, "part too long", seq);
		return 0;
	}
	if (part == 1) {
		if (d->active)
			reject(d, "message cut off by the next one", d->seq);
		d->active = 1;
		d->seq = seq;
		d->parts = parts;
		d->next_part = 1;
		memcpy(d->hash, h, sizeof(h));
		strbuf_reset(&d->buf);
	} else if (!d->active || seq != d->seq || parts != d->parts || part != d->next_part ||
		   strcmp(h, d->hash)) {
		reject(d, "part out of order", seq);
		return 0;
	}
	if (frame_b64_decode(b, blen, &d->buf)) {
		reject(d, "bad base64", seq);
		return 0;
	}
	if (part < parts) {
		/* every part but the last is full */
		if (d->buf.len != (size_t)part * FRAME_CHUNK) {
			reject(d, "short part", seq);
			return 0;
		}
		d->next_part++;
		return 0;
	}
	char got[17];
	hash16(d->buf.buf, d->buf.len, got);
	if (strcmp(got, d->hash)) {
		reject(d, "hash mismatch", seq);
		return 0;
	}
	d->active = 0;
	d->messages++;
	int rc = d->on_msg ? d->on_msg(d->ctx, seq, d->buf.buf, d->buf.len) : 0;
	strbuf_reset(&d->buf);
	return rc;
}

int frame_dec_finish(struct frame_dec *d)
{
	if (!d->active)
		return 0;
	reject(d, "incomplete at the end of the log", d->seq);
	return 1;
}
