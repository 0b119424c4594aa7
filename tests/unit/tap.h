/*
 * A minimal TAP producer for the unit tests (header only). Each test binary
 * prints `ok N - name` / `not ok N - name` lines and a `1..N` plan at the end;
 * tests/run.sh adds them up into the closing `N passed, N failed` line.
 *
 *   TEST(name) { CHECK(x == 1); CHECK_STR(a, "b"); CHECK_NEAR(v, 1.5, 1e-9); }
 *   int main(void) { RUN(name); return tap_done(); }
 */
#ifndef SL_TAP_H
#define SL_TAP_H

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed, tap_cur_failed;

#define TEST(name) static void name(void)
#define RUN(name)                                                              \
	do {                                                                   \
		tap_cur_failed = 0;                                            \
		name();                                                        \
		tap_n++;                                                       \
		if (tap_cur_failed)                                            \
			tap_failed++;                                          \
		printf("%s %d - %s\n", tap_cur_failed ? "not ok" : "ok", tap_n, \
		       #name);                                                 \
		fflush(stdout);                                                \
	} while (0)
#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			printf("#   %s:%d: check failed: %s\n", __FILE__,     \
			       __LINE__, #cond);                               \
			tap_cur_failed = 1;                                    \
		}                                                              \
	} while (0)
#define CHECK_STR(a, b)                                                        \
	do {                                                                   \
		const char *a_ = (a), *b_ = (b);                               \
		if (!a_ || !b_ || strcmp(a_, b_)) {                            \
			printf("#   %s:%d: \"%s\" != \"%s\"\n", __FILE__,       \
			       __LINE__, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
			tap_cur_failed = 1;                                    \
		}                                                              \
	} while (0)
#define CHECK_CONTAINS(hay, needle)                                            \
	do {                                                                   \
		const char *h_ = (hay), *n_ = (needle);                        \
		if (!h_ || !strstr(h_, n_)) {                                  \
			printf("#   %s:%d: \"%s\" does not contain \"%s\"\n",   \
			       __FILE__, __LINE__, h_ ? h_ : "(null)", n_);     \
			tap_cur_failed = 1;                                    \
		}                                                              \
	} while (0)
#define CHECK_NEAR(a, b, eps)                                                  \
	do {                                                                   \
		double a_ = (a), b_ = (b);                                     \
		if (!(fabs(a_ - b_) <= (eps))) {                               \
			printf("#   %s:%d: %s = %.9g, expected %.9g\n",         \
			       __FILE__, __LINE__, #a, a_, b_);                 \
			tap_cur_failed = 1;                                    \
		}                                                              \
	} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

/* the test data (tests/data): SCHEDLAB_TESTDATA if set (tests/run.sh sets
 * it), else the folder the Makefile compiled in (SCHEDLAB_TESTDATA_DIR, an
 * absolute path), so a unit test runs from any folder */
#ifndef SCHEDLAB_TESTDATA_DIR
#define SCHEDLAB_TESTDATA_DIR "tests/data"
#endif
static inline const char *testdata_dir(void)
{
	const char *d = getenv("SCHEDLAB_TESTDATA");
	return d && *d ? d : SCHEDLAB_TESTDATA_DIR;
}

/* the whole of testdata file NAME (relative to testdata_dir()), NUL-ended,
 * malloc'd; NULL (and a TAP comment) when it cannot be read */
static inline char *testdata_slurp(const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", testdata_dir(), name);
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	if (f) {
		for (;;) {
			if (cap - len < 4096) {
				char *nb = realloc(buf, cap = cap ? 2 * cap : 65536);
				if (!nb) {
					free(buf);
					buf = NULL;
					break;
				}
				buf = nb;
			}
			size_t r = fread(buf + len, 1, cap - len - 1, f);
			len += r;
			if (r == 0)
				break;
		}
		if (buf && ferror(f)) {
			free(buf);
			buf = NULL;
		}
		fclose(f);
	}
	if (!buf) {
		printf("#   cannot read %s\n", path);
		return NULL;
	}
	buf[len] = 0;
	return buf;
}

#endif
