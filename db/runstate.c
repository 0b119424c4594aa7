/*
 * The states of runs, boots and sessions as tables (runstate.h): the words,
 * the class of each run state (with its skip reason), the moves, and the
 * SQL fragments made from the same tables, so that a query cannot spell a
 * state the code does not know or count a run the code would not redo.
 */
#include "db/runstate.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static const char *const run_words[RUN_ST_N] = {
	"planned", "running", "ok", "failed", "timeout", "skipped", "interrupted",
};
static const char *const skip_words[SKIP_N] = {
	NULL, "boot-failed", "boot-mismatch", "unsupported", "decided", "not-needed",
};
static const char *const class_words[RUN_NCLASSES] = { "todo", "ok", "failed", "skipped" };
static const char *const boot_words[BOOT_ST_N] = { "planned", "ok", "mismatch", "failed" };
static const char *const session_words[SESSION_ST_N] = {
	"running", "done", "failed", "interrupted",
};

/* the class of each run state; a skipped run's is its reason's */
static const enum run_class run_classes[RUN_ST_N] = {
	[RUN_ST_PLANNED] = RUN_TODO,       [RUN_ST_RUNNING] = RUN_TODO,
	[RUN_ST_OK] = RUN_DONE_OK,         [RUN_ST_FAILED] = RUN_DONE_FAILED,
	[RUN_ST_TIMEOUT] = RUN_DONE_FAILED, [RUN_ST_SKIPPED] = RUN_DONE_SKIPPED,
	[RUN_ST_INTERRUPTED] = RUN_TODO,
};
/* a skipped run that is still to do: its boot failed, and a boot is tried
 * again (the target may be back); every other reason would be the same
 * next time */
static const unsigned char skip_todo[SKIP_N] = { [SKIP_BOOT_FAILED] = 1 };

/* run_moves[from][to]: 1 allowed, 2 allowed when the run is still to do */
enum { Y = 1, T = 2 };
static const unsigned char run_moves[RUN_ST_N][RUN_ST_N] = {
	/*                       planned run ok  fail tmo skip intr */
	[RUN_ST_PLANNED]     = { 0,      Y,  Y,  Y,   Y,  Y,   Y },
	[RUN_ST_RUNNING]     = { Y,      0,  Y,  Y,   Y,  Y,   Y },
	[RUN_ST_OK]          = { 0 },
	[RUN_ST_FAILED]      = { 0 },
	[RUN_ST_TIMEOUT]     = { 0 },
	[RUN_ST_SKIPPED]     = { T,      0,  0,  0,   0,  0,   0 },
	[RUN_ST_INTERRUPTED] = { Y,      0,  0,  0,   0,  0,   0 },
};
static const unsigned char boot_moves[BOOT_ST_N][BOOT_ST_N] = {
	/*                     planned ok  mismatch failed */
	[BOOT_ST_PLANNED] = { 0,      Y,  Y,       Y },
};
static const unsigned char session_moves[SESSION_ST_N][SESSION_ST_N] = {
	/*                           running done fail intr */
	[SESSION_ST_RUNNING]     = { 0,      Y,   Y,   Y },
	[SESSION_ST_DONE]        = { Y,      0,   0,   0 },
	[SESSION_ST_FAILED]      = { Y,      0,   0,   0 },
	[SESSION_ST_INTERRUPTED] = { Y,      0,   0,   0 },
};

static const char *word(const char *const *w, int n, int i)
{
	return i >= 0 && i < n ? w[i] : NULL;
}

static int parse(const char *const *w, int n, const char *s)
{
	for (int i = 0; s && i < n; i++)
		if (w[i] && !strcmp(s, w[i]))
			return i;
	return -1;
}

const char *run_state_word(enum run_state s) { return word(run_words, RUN_ST_N, (int)s); }
const char *skip_reason_word(enum skip_reason r) { return word(skip_words, SKIP_N, (int)r); }
const char *run_class_word(enum run_class c) { return word(class_words, RUN_NCLASSES, (int)c); }
const char *boot_state_word(enum boot_state s) { return word(boot_words, BOOT_ST_N, (int)s); }
const char *session_state_word(enum session_state s)
{
	return word(session_words, SESSION_ST_N, (int)s);
}

int run_state_parse(const char *w) { return parse(run_words, RUN_ST_N, w); }
int skip_reason_parse(const char *w) { return w ? parse(skip_words, SKIP_N, w) : SKIP_NONE; }
int boot_state_parse(const char *w) { return parse(boot_words, BOOT_ST_N, w); }
int session_state_parse(const char *w) { return parse(session_words, SESSION_ST_N, w); }

enum run_class run_class_of(enum run_state s, enum skip_reason why)
{
	if ((unsigned)s >= RUN_ST_N)
		return RUN_DONE_FAILED;
	if (s == RUN_ST_SKIPPED && (unsigned)why < SKIP_N && skip_todo[why])
		return RUN_TODO;
	return run_classes[s];
}

int run_todo(enum run_state s, enum skip_reason why)
{
	return run_class_of(s, why) == RUN_TODO;
}

enum skip_reason boot_skip_reason(enum boot_state s)
{
	return s == BOOT_ST_FAILED ? SKIP_BOOT_FAILED : s == BOOT_ST_MISMATCH ? SKIP_BOOT_MISMATCH
									      : SKIP_NONE;
}

int boot_tried(enum boot_state s)
{
	return (unsigned)s < BOOT_ST_N && s != BOOT_ST_PLANNED;
}

int session_state_ended(enum session_state s)
{
	return s == SESSION_ST_DONE || s == SESSION_ST_FAILED;
}

/* "it is A and cannot become B (from A: C, D)" from one table */
static int move_ok(const char *what, const char *const *w, int n, const unsigned char *moves,
		   int from, int to, int todo, char *why, size_t whylen)
{
	if (from < 0 || from >= n || to < 0 || to >= n) {
		snprintf(why, whylen, "unknown %s state", what);
		return 0;
	}
	unsigned char m = moves[from * n + to];
	if (m == Y || (m == T && todo))
		return 1;
	char may[160] = "";
	size_t k = 0;
	for (int t = 0; t < n; t++)
		if (moves[from * n + t] == Y || (moves[from * n + t] == T && todo))
			k += (size_t)snprintf(may + k, k < sizeof(may) ? sizeof(may) - k : 0, "%s%s",
					      k ? ", " : "", w[t]);
	snprintf(why, whylen, "%s is %s%s and cannot become %s (from %s: %s)", what, w[from],
		 m == T ? " for good" : "", w[to], w[from], k ? may : "none");
	return 0;
}

int run_move_ok(enum run_state from, enum skip_reason why_from, enum run_state to, char *why,
		size_t whylen)
{
	return move_ok("run", run_words, RUN_ST_N, &run_moves[0][0], (int)from, (int)to,
		       run_todo(from, why_from), why, whylen);
}

int boot_move_ok(enum boot_state from, enum boot_state to, char *why, size_t whylen)
{
	return move_ok("boot", boot_words, BOOT_ST_N, &boot_moves[0][0], (int)from, (int)to, 0,
		       why, whylen);
}

int session_move_ok(enum session_state from, enum session_state to, char *why, size_t whylen)
{
	return move_ok("session", session_words, SESSION_ST_N, &session_moves[0][0], (int)from,
		       (int)to, 0, why, whylen);
}

/* ---- the SQL fragments ------------------------------------------------------------ */

/* one condition over status (and skip_reason) from a predicate on
 * (state, reason) pairs: a state whose every reason is in is spelled by its
 * status alone, a skipped one by its reasons */
typedef int (*pair_fn)(int arg, enum run_state s, enum skip_reason r);

static void build(char *q, size_t len, const char *alias, pair_fn in, int arg)
{
	char a[16] = "";
	if (alias && *alias)
		snprintf(a, sizeof(a), "%.7s.", alias);
	size_t n = (size_t)snprintf(q, len, "(");
	int terms = 0;
	for (int s = 0; s < RUN_ST_N; s++) {
		int all = 1, any = 0;
		for (int r = 0; r < SKIP_N; r++) {
			int yes = in(arg, (enum run_state)s, (enum skip_reason)r);
			all &= yes;
			any |= yes;
			if (s != RUN_ST_SKIPPED)
				break; /* reasons are of skipped runs only */
		}
		if (!any)
			continue;
		if (all || s != RUN_ST_SKIPPED) {
			n += (size_t)snprintf(q + n, n < len ? len - n : 0, "%s%sstatus = '%s'",
					      terms++ ? " OR " : "", a, run_words[s]);
			continue;
		}
		n += (size_t)snprintf(q + n, n < len ? len - n : 0, "%s(%sstatus = '%s' AND (",
				      terms++ ? " OR " : "", a, run_words[s]);
		int rs = 0;
		for (int r = 0; r < SKIP_N; r++) {
			if (!in(arg, (enum run_state)s, (enum skip_reason)r))
				continue;
			if (r == SKIP_NONE)
				n += (size_t)snprintf(q + n, n < len ? len - n : 0,
						      "%s%sskip_reason IS NULL", rs++ ? " OR " : "", a);
			else
				n += (size_t)snprintf(q + n, n < len ? len - n : 0,
						      "%s%sskip_reason = '%s'", rs++ ? " OR " : "", a,
						      skip_words[r]);
		}
		n += (size_t)snprintf(q + n, n < len ? len - n : 0, "))");
	}
	snprintf(q + n, n < len ? len - n : 0, "%s)", terms ? "" : "0");
}

static int in_class(int c, enum run_state s, enum skip_reason r)
{
	return run_class_of(s, r) == (enum run_class)c;
}

static int in_from(int to, enum run_state s, enum skip_reason r)
{
	char why[8];
	return s != (enum run_state)to && run_move_ok(s, r, (enum run_state)to, why, sizeof(why));
}

enum { K_CLASS, K_FROM, K_SESSION };

static const char *cached_locked(int kind, int arg, const char *alias);

/* the cache is shared by the threads that build serve's pages: looked up
 * and filled under a lock (an entry, once made, never moves) */
static const char *cached(int kind, int arg, const char *alias)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&mu);
	const char *q = cached_locked(kind, arg, alias);
	pthread_mutex_unlock(&mu);
	return q;
}

static const char *cached_locked(int kind, int arg, const char *alias)
{
	static struct {
		int kind, arg;
		char alias[8];
		char sql[640];
	} cache[64];
	static size_t nc;
	if (!alias)
		alias = "";
	for (size_t i = 0; i < nc; i++)
		if (cache[i].kind == kind && cache[i].arg == arg &&
		    !strncmp(cache[i].alias, alias, sizeof(cache[i].alias) - 1))
			return cache[i].sql;
	static _Thread_local char spare[640];
	char *q = nc < sizeof(cache) / sizeof(cache[0]) ? cache[nc].sql : spare;
	if (kind == K_SESSION) {
		char a[16] = "";
		if (*alias)
			snprintf(a, sizeof(a), "%.7s.", alias);
		size_t n = (size_t)snprintf(q, sizeof(spare), "(");
		int terms = 0;
		for (int s = 0; s < SESSION_ST_N; s++)
			if (session_state_ended((enum session_state)s))
				n += (size_t)snprintf(q + n, sizeof(spare) - n, "%s%sstatus = '%s'",
						      terms++ ? " OR " : "", a, session_words[s]);
		snprintf(q + n, sizeof(spare) - n, ")");
	} else {
		build(q, sizeof(spare), alias, kind == K_CLASS ? in_class : in_from, arg);
	}
	if (q != spare) {
		cache[nc].kind = kind;
		cache[nc].arg = arg;
		snprintf(cache[nc].alias, sizeof(cache[nc].alias), "%s", alias);
		nc++;
	}
	return q;
}

const char *run_class_sql(enum run_class c, const char *alias)
{
	return cached(K_CLASS, (int)c, alias);
}

const char *run_from_sql(enum run_state to, const char *alias)
{
	return cached(K_FROM, (int)to, alias);
}

const char *session_ended_sql(const char *alias)
{
	return cached(K_SESSION, 0, alias);
}
