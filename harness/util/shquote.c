/*
 * POSIX single-quote quoting for commands sent to ssh targets (see
 * shquote.h for the rules and why there is exactly one such function).
 */
#include "harness/util/shquote.h"

#include <string.h>

static int bare_ok(const char *w)
{
	if (!*w)
		return 0;
	/* '=' first would be fine for sh, but '~' or '#' first are not: keep a
	   short, obviously safe set */
	for (const char *p = w; *p; p++)
		if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') ||
		      ('0' <= *p && *p <= '9') || strchr("_@%+=:,./-", *p)))
			return 0;
	return 1;
}

void sh_quote(struct strbuf *out, const char *word)
{
	if (bare_ok(word)) {
		strbuf_addstr(out, word);
		return;
	}
	strbuf_addch(out, '\'');
	for (const char *p = word; *p; p++) {
		if (*p == '\'')
			strbuf_addstr(out, "'\\''");
		else
			strbuf_addch(out, *p);
	}
	strbuf_addch(out, '\'');
}

void sh_quote_argv(struct strbuf *out, const char *const *argv)
{
	for (size_t i = 0; argv && argv[i]; i++) {
		if (i)
			strbuf_addch(out, ' ');
		sh_quote(out, argv[i]);
	}
}
