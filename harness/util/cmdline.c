/*
 * Kernel command lines compared apart from preempt= (cmdline.h).
 */
#include <string.h>

#include "harness/util/cmdline.h"

/* the next word of *p that is not preempt=...; its length in *n (NULL at end) */
static const char *next_word(const char **p, size_t *n)
{
	for (;;) {
		const char *s = *p;
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return NULL;
		const char *e = s;
		while (*e && *e != ' ' && *e != '\t')
			e++;
		*p = e;
		if (!strncmp(s, "preempt=", 8))
			continue;
		*n = (size_t)(e - s);
		return s;
	}
}

int cmdline_same_but_preempt(const char *a, const char *b)
{
	a = a ? a : "";
	b = b ? b : "";
	for (;;) {
		size_t na = 0, nb = 0;
		const char *wa = next_word(&a, &na), *wb = next_word(&b, &nb);
		if (!wa || !wb)
			return !wa && !wb;
		if (na != nb || memcmp(wa, wb, na))
			return 0;
	}
}
