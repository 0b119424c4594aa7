/*
 * The excerpt of a kernel console stored with a lost run or a failed boot
 * (kconsole.h): its first kernel report and its last lines.
 */
#include "harness/util/kconsole.h"

#include <string.h>

/* the lines the kernel starts a report with (kernel/watchdog.c,
 * kernel/rcu/tree_stall.h, kernel/hung_task.c, lib/bug.c, kernel/panic.c,
 * arch/x86/kernel/dumpstack.c) */
static const char *const report_starts[] = {
	"watchdog: BUG: soft lockup",
	"watchdog: Watchdog detected hard LOCKUP",
	"rcu: INFO: ",
	"INFO: task ",
	"BUG: ",
	"kernel BUG at ",
	"Oops: ",
	"general protection fault",
	"WARNING: ",
	"------------[ cut here ]------------",
	"Kernel panic - not syncing",
	NULL,
};

/* the line's text after an optional "[ 12.345678] " timestamp */
static const char *after_stamp(const char *s, const char *end)
{
	if (s < end && *s == '[') {
		const char *c = memchr(s, ']', (size_t)(end - s));
		if (c && c - s < 20) {
			s = c + 1;
			while (s < end && *s == ' ')
				s++;
		}
	}
	return s;
}

long kconsole_first_report(const char *text, size_t len)
{
	const char *end = text + len;
	for (const char *line = text; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *eol = nl ? nl : end;
		const char *s = after_stamp(line, eol);
		for (int i = 0; report_starts[i]; i++) {
			size_t n = strlen(report_starts[i]);
			if ((size_t)(eol - s) >= n && !memcmp(s, report_starts[i], n))
				return line - text;
		}
		line = nl ? nl + 1 : end;
	}
	return -1;
}

/* the offset where the last n lines of text[0..len) begin (a final line
 * without a newline counts; trailing newlines are not lines of their own) */
static size_t tail_start(const char *text, size_t len, int n)
{
	size_t i = len;
	while (i > 0 && text[i - 1] == '\n')
		i--;
	int lines = 0;
	for (; i > 0; i--)
		if (text[i - 1] == '\n' && ++lines >= n)
			break;
	return i;
}

void kconsole_excerpt(const char *text, size_t len, int tail_lines, int report_lines,
		      struct strbuf *out)
{
	if (!len)
		return;
	size_t tail = tail_start(text, len, tail_lines);
	long rep = kconsole_first_report(text, len);
	if (rep >= 0 && (size_t)rep < tail) {
		const char *s = text + rep, *end = text + tail;
		for (int n = 0; s < end && n < report_lines; n++) {
			const char *nl = memchr(s, '\n', (size_t)(end - s));
			s = nl ? nl + 1 : end;
		}
		strbuf_addstr(out, "--- first kernel report ---\n");
		strbuf_add(out, text + rep, (size_t)(s - (text + rep)));
		if (s[-1] != '\n')
			strbuf_addch(out, '\n');
		strbuf_addstr(out, s < end ? "[...]\n--- last lines ---\n" : "--- last lines ---\n");
	}
	strbuf_add(out, text + tail, len - tail);
}
