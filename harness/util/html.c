/*
 * The one HTML escaper (see html.h): a report and serve's site show the
 * same stored text alike.
 */
#include "harness/util/html.h"

#include <stdarg.h>
#include <string.h>

#include "harness/util/utf8.h"

void html_esc(struct strbuf *o, const char *s)
{
	if (!s)
		return;
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x80) {
			size_t l = utf8_seq_len((const unsigned char *)s + i, n - i);
			if (!l) {
				strbuf_addstr(o, "\xef\xbf\xbd");   /* U+FFFD */
				i++;
			} else {
				strbuf_add(o, s + i, l);
				i += l;
			}
			continue;
		}
		i++;
		switch (c) {
		case '&': strbuf_addstr(o, "&amp;"); break;
		case '<': strbuf_addstr(o, "&lt;"); break;
		case '>': strbuf_addstr(o, "&gt;"); break;
		case '"': strbuf_addstr(o, "&quot;"); break;
		case '\'': strbuf_addstr(o, "&#39;"); break;
		case '\n': strbuf_addch(o, '\n'); break;
		case '\t': strbuf_addch(o, '\t'); break;
		default:
			if (c < 0x20)   /* its picture: U+2400 + c, e.g. ESC as U+241B */
				strbuf_addf(o, "\xe2\x90%c", (char)(0x80 + c));
			else if (c == 0x7f)
				strbuf_addstr(o, "\xe2\x90\xa1");   /* U+2421 */
			else
				strbuf_addch(o, (char)c);
		}
	}
}

void html_escf(struct strbuf *o, const char *fmt, ...)
{
	struct strbuf t = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&t, fmt, ap);
	va_end(ap);
	html_esc(o, t.buf);
	strbuf_release(&t);
}
