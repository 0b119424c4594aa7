/*
 * HTML escaping, once, for every page schedlab writes: the report
 * (harness/results/report_html.c, report_night.c, report_bisect.c) and
 * serve's site (harness/serve) render the same stored text the same way.
 * Markup characters become entities, control characters are shown as
 * their pictures (ESC as U+241B, DEL as U+2421; newline and tab kept),
 * invalid UTF-8 becomes U+FFFD. The result is valid UTF-8, fit for text
 * and for a quoted attribute alike.
 */
#ifndef SL_UTIL_HTML_H
#define SL_UTIL_HTML_H

#include "harness/util/strbuf.h"

/* s escaped onto o; NULL adds nothing */
void html_esc(struct strbuf *o, const char *s);
/* html_esc of a formatted text */
void html_escf(struct strbuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
