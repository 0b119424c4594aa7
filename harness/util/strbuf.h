/*
 * strbuf: the one growable string type (modelled on git's strbuf.h), plus
 * strvec, a NULL-terminated vector of strings used for argv arrays.
 *
 * Invariants: after STRBUF_INIT or strbuf_init() `buf` is never NULL and is
 * always NUL-terminated; `len` excludes the NUL. strbuf_release() frees and
 * re-initialises, so a released buffer may be reused. Allocation failure
 * aborts (there is no sane recovery in a benchmark harness), everything else
 * reports errors to the caller.
 */
#ifndef SL_STRBUF_H
#define SL_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	size_t alloc;
	size_t len;
	char *buf;
};

extern char strbuf_slopbuf[];
#define STRBUF_INIT { 0, 0, strbuf_slopbuf }

void strbuf_init(struct strbuf *sb, size_t hint);
void strbuf_release(struct strbuf *sb);
char *strbuf_detach(struct strbuf *sb, size_t *len);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_reset(struct strbuf *sb);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
void strbuf_trim(struct strbuf *sb);
/* s for a terminal: every control character (a terminal escape in a note or
 * a commit subject) as \xNN, but a newline when keep_nl */
void strbuf_addprintable(struct strbuf *sb, const char *s, int keep_nl);
/* keep only the last `max` bytes, for stdout/stderr tails (fewer when that
 * would start inside a UTF-8 character) */
void strbuf_tail(struct strbuf *sb, size_t max);
/* read a whole file; -1 with errno set on failure */
int strbuf_read_file(struct strbuf *sb, const char *path, size_t max);
/* as strbuf_read_file, for a file someone else made: no symlink followed,
 * nothing but a regular file read (a FIFO would block for ever); -1 with
 * *why set (static text) when refused */
int strbuf_read_regular(struct strbuf *sb, const char *path, size_t max, const char **why);

struct strvec {
	const char **v;   /* NULL-terminated; entries owned by the strvec */
	size_t nr;
	size_t alloc;
};
#define STRVEC_INIT { NULL, 0, 0 }
void strvec_push(struct strvec *sv, const char *s);
void strvec_pushf(struct strvec *sv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void strvec_pushv(struct strvec *sv, const char *const *v);
void strvec_clear(struct strvec *sv);
/* a vector whose v is never NULL (empty argv) */
const char **strvec_argv(struct strvec *sv);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t sz);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
