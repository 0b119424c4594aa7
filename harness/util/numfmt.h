/*
 * How schedlab prints a number for a person (tables, progress lines): the
 * same everywhere, so that a value reads the same in a progress line and
 * in the table that shows it later. And the moments it writes and takes
 * (utc_now; a date given as --since or a page's since=).
 */
#ifndef SL_UTIL_NUMFMT_H
#define SL_UTIL_NUMFMT_H

#include <stddef.h>

/* "-" when not finite, no decimals from 1e4 on (10000, not 1e+04), else
 * 4 significant digits */
void fmt_num(char *buf, size_t n, double v);

/* now in UTC as the store and the pages write a moment,
 * "2026-12-07T01:02:03Z"; the caller frees it */
char *utc_now(void);

/* a date a person gives (the commands' --since, serve's since=):
 * YYYY-MM-DD, optionally followed by T or a space and a time; what the
 * messages say is valid is DATE_ARG_FORMAT */
#define DATE_ARG_FORMAT "YYYY-MM-DD[THH:MM:SS]"
int date_arg_valid(const char *s);

#endif
