/*
 * strbuf and strvec implementation; see strbuf.h for the invariants.
 */
#include "harness/util/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char strbuf_slopbuf[1];

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		abort();
	return p;
}

void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);
	if (!p)
		abort();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		abort();
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");
	if (!p)
		abort();
	return p;
}

char *xstrfmt(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return strbuf_detach(&sb, NULL);
}

void strbuf_init(struct strbuf *sb, size_t hint)
{
	sb->alloc = sb->len = 0;
	sb->buf = strbuf_slopbuf;
	if (hint)
		strbuf_grow(sb, hint);
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb, 0);
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
	char *r;
	if (!sb->alloc)
		strbuf_grow(sb, 0);
	r = sb->buf;
	if (len)
		*len = sb->len;
	strbuf_init(sb, 0);
	return r;
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;
	if (need <= sb->alloc)
		return;
	size_t n = sb->alloc ? sb->alloc : 64;
	while (n < need)
		n *= 2;
	if (!sb->alloc) {
		sb->buf = xmalloc(n);
		sb->buf[0] = '\0';
	} else {
		sb->buf = xrealloc(sb->buf, n);
	}
	sb->alloc = n;
}

void strbuf_reset(struct strbuf *sb)
{
	if (sb->alloc) {
		sb->len = 0;
		sb->buf[0] = '\0';
	}
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	strbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, int c)
{
	char ch = (char)c;
	strbuf_add(sb, &ch, 1);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	char probe[1];
	va_copy(cp, ap);
	int n = vsnprintf(probe, sizeof(probe), fmt, cp); /* the length it needs */
	va_end(cp);
	if (n < 0)
		return;
	strbuf_grow(sb, (size_t)n);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_trim(struct strbuf *sb)
{
	size_t start = 0;
	if (!sb->alloc)
		return;
	while (sb->len && (sb->buf[sb->len - 1] == ' ' || sb->buf[sb->len - 1] == '\n' ||
			   sb->buf[sb->len - 1] == '\t' || sb->buf[sb->len - 1] == '\r'))
		sb->len--;
	while (start < sb->len && (sb->buf[start] == ' ' || sb->buf[start] == '\n' ||
				   sb->buf[start] == '\t'))
		start++;
	memmove(sb->buf, sb->buf + start, sb->len - start);
	sb->len -= start;
	sb->buf[sb->len] = '\0';
}

/* the first offset >= off in s[0..n) that is not a UTF-8 continuation
 * byte (at most 3 bytes on): where a character begins */
static size_t char_start(const char *s, size_t n, size_t off)
{
	for (int k = 0; k < 3 && off < n && ((unsigned char)s[off] & 0xC0) == 0x80; k++)
		off++;
	return off;
}

void strbuf_tail(struct strbuf *sb, size_t max)
{
	if (sb->len <= max)
		return;
	/* never start inside a UTF-8 character: that would make the whole
	   text invalid for JSON */
	size_t from = char_start(sb->buf, sb->len, sb->len - max);
	max = sb->len - from;
	memmove(sb->buf, sb->buf + from, max);
	sb->len = max;
	sb->buf[sb->len] = '\0';
}

static int read_fd(struct strbuf *sb, int fd, size_t max);

int strbuf_read_regular(struct strbuf *sb, const char *path, size_t max, const char **why)
{
	*why = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	if (fd < 0) {
		*why = errno == ELOOP ? "a symlink" : strerror(errno);
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		close(fd);
		errno = EINVAL;
		return -1;
	}
	/* a regular file: blocking reads are fine again */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return read_fd(sb, fd, max);
}

int strbuf_read_file(struct strbuf *sb, const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	return read_fd(sb, fd, max);
}

/* read fd (closed here) into sb, up to max bytes (0: all) */
static int read_fd(struct strbuf *sb, int fd, size_t max)
{
	for (;;) {
		char tmp[8192];
		ssize_t n = read(fd, tmp, sizeof(tmp));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (n == 0)
			break;
		strbuf_add(sb, tmp, (size_t)n);
		if (max && sb->len >= max)
			break;
	}
	close(fd);
	if (!sb->alloc)
		strbuf_grow(sb, 0);
	return 0;
}

void strvec_push(struct strvec *sv, const char *s)
{
	if (sv->nr + 2 > sv->alloc) {
		sv->alloc = sv->alloc ? sv->alloc * 2 : 8;
		sv->v = xrealloc(sv->v, sv->alloc * sizeof(*sv->v));
	}
	sv->v[sv->nr++] = xstrdup(s);
	sv->v[sv->nr] = NULL;
}

void strvec_pushf(struct strvec *sv, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strvec_push(sv, sb.buf);
	strbuf_release(&sb);
}

void strvec_pushv(struct strvec *sv, const char *const *v)
{
	for (; v && *v; v++)
		strvec_push(sv, *v);
}

void strvec_clear(struct strvec *sv)
{
	for (size_t i = 0; i < sv->nr; i++)
		free((void *)sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->nr = sv->alloc = 0;
}

const char **strvec_argv(struct strvec *sv)
{
	if (!sv->v) {
		sv->alloc = 2;
		sv->v = xcalloc(sv->alloc, sizeof(*sv->v));
	}
	return sv->v;
}

void strbuf_addprintable(struct strbuf *sb, const char *s, int keep_nl)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if ((*p < 0x20 && !(keep_nl && *p == '\n')) || *p == 0x7f)
			strbuf_addf(sb, "\\x%02x", *p);
		else
			strbuf_addch(sb, *p);
	}
}
