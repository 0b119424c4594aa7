/*
 * The read side of the results store (see results.h): selections over the
 * `results` view turned into SQL, and the few reads of sessions, boots,
 * tags and histograms that the analysis commands and the report need.
 * Fixed statements come from one enum-indexed table; a selection's
 * statement is built per call (its conditions depend on the terms). Each
 * function finalizes what it prepared before it returns.
 */
#include "db/results.h"
#include "db/db_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum rq_id {
	RQ_COLUMNS,
	RQ_HISTS,
	RQ_TAG,
	RQ_SESSION,
	RQ_RUN_BOOT,
	RQ_BOOT,
	RQ_HISTORY,
	RQ_TRACE,
	RQ_COUNT
};

static const char *const rq_sql[RQ_COUNT] = {
	[RQ_COLUMNS] = "SELECT * FROM results LIMIT 0",
	[RQ_HISTS] = "SELECT name, unit, data FROM histogram WHERE run_id = ?",
	[RQ_TAG] = "SELECT tag FROM session WHERE id = ?",
	[RQ_SESSION] = "SELECT name, tag, target, harness_version, status, started_at,"
		       " finished_at, plan_path FROM session WHERE id = ?",
	[RQ_RUN_BOOT] = "SELECT boot_id FROM run WHERE id = ?",
	[RQ_BOOT] = "SELECT b.session_id, b.sysinfo, b.method, b.accel, b.status,"
		    " b.booted_at, m.name, b.clock, b.clock_shift, b.qemu_version FROM boot b LEFT JOIN machine m"
		    " ON m.id = b.machine_id WHERE b.id = ?",
	/* ?1: a JSON array of session ids (no limit on their number) */
	[RQ_HISTORY] = "SELECT r.session_id, min(r.started_at) AS t FROM run r"
		       " JOIN boot b ON b.id = r.boot_id"
		       " WHERE r.status = 'ok' AND b.status = 'ok'"
		       " AND COALESCE(b.machine_id, -1) IN"
		       " (SELECT COALESCE(b2.machine_id, -1) FROM boot b2 WHERE b2.status = 'ok'"
		       " AND b2.session_id IN (SELECT value FROM json_each(?1)))"
		       " GROUP BY r.session_id ORDER BY t, r.session_id",
	[RQ_TRACE] = "SELECT json_extract(files, '$.\"schedlab-trace.json\"') FROM run"
		     " WHERE id = ? AND json_valid(files)",
};

/* "[1,2,3]" of ids[0..n): one parameter for a list of any length (json_each);
 * sqlite3_free it, NULL when out of memory */
static char *id_array(const int64_t *ids, size_t n)
{
	sqlite3_str *s = sqlite3_str_new(NULL);
	sqlite3_str_appendchar(s, 1, '[');
	for (size_t i = 0; i < n; i++)
		sqlite3_str_appendf(s, "%s%lld", i ? "," : "", (long long)ids[i]);
	sqlite3_str_appendchar(s, 1, ']');
	if (sqlite3_str_errcode(s) != SQLITE_OK) {
		sqlite3_free(sqlite3_str_finish(s));
		return NULL;
	}
	return sqlite3_str_finish(s);
}

/* the columns db_results_select() reads, in this order */
enum {
	C_SESSION, C_RUN, C_STARTED, C_MACHINE_ID, C_MACHINE, C_RELEASE, C_HASH, C_PREEMPT,
	C_HZ, C_MC, C_CMDLINE, C_KNOBS, C_RUN_WORKLOAD, C_PARAMS, C_WORKLOAD, C_METRIC,
	C_VALUE, C_UNIT, C_BETTER, C_CENSORED, C_COMMIT, C_DESCRIBE, C_CLOCK, C_CLOCK_SHIFT,
	C_QEMU_VERSION, C_SCHEDULER, C_SEED,
};

static const char select_cols[] =
	"SELECT session, run_id, started_at, machine_id, machine, kernel_release, config_hash,"
	" preempt, hz, sched_mc, cmdline, knobs, run_workload, params, workload, metric,"
	" value, unit, better, censored, kernel_commit, kernel_describe, clock, clock_shift,"
	" qemu_version, scheduler, seed FROM results";

static const char results_order[] = " ORDER BY session, started_at, run_id, workload, metric";

/* prepare sql; on failure the message is "<what>: <sqlite3_errmsg>" */
static sqlite3_stmt *prepare(struct db *db, const char *sql, const char *what)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK) {
		db_seterr(db, "%s: %s", what, sqlite3_errmsg(db_sqlite(db)));
		return NULL;
	}
	return st;
}

static void step_failed(struct db *db, const char *what)
{
	db_seterr(db, "%s: %s", what, sqlite3_errmsg(db_sqlite(db)));
}

static const char *text_or_empty(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? (const char *)t : "";
}

/* ---- selections ----------------------------------------------------------- */

/* 1 when no term before i names the same column (i opens the column's IN list) */
static int first_of_column(const struct db_where *w, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (!strcmp(w->terms[j].column, w->terms[i].column))
			return 0;
	return 1;
}

/*
 * The columns a selection names that lead to an index: a term's own
 * condition (COALESCE(CAST(col AS TEXT), '') IN (...), the text form)
 * reads every run of the store, the view's filters and joins done row by
 * row before it is tested (0.4 CPU s a side at 50 machines x 1 year, ten
 * times that at 10 years). So a term on one of these adds a condition of
 * its own that an index answers and that every row the term keeps also
 * meets (a superset: the term's condition stays and decides): the
 * session's id by key, a tag by the session_tag index, a machine checked
 * on the run's boot by key before its metric rows are read. Not for a
 * value "" (the term then also matches NULL, which no index lists).
 */
static const struct {
	const char *column;
	const char *head;      /* then "?, ?" one per value */
	const char *param;     /* a value's parameter */
	const char *tail;
} key_terms[] = {
	{ "session", " AND session IN (", "CAST(? AS INTEGER)", ")" },
	{ "tag", " AND session IN (SELECT id FROM session WHERE tag IN (", "?", "))" },
	{ "machine",
	  " AND EXISTS (SELECT 1 FROM boot kb JOIN machine km ON km.id = kb.machine_id"
	  " WHERE kb.id = boot AND km.name IN (", "?", "))" },
	{ "machine_id",
	  " AND EXISTS (SELECT 1 FROM boot kb JOIN machine km ON km.id = kb.machine_id"
	  " WHERE kb.id = boot AND km.fingerprint IN (", "?", "))" },
};

/* the key_terms entry for term i (the first of its column), or -1 */
static int key_term(const struct db_where *w, size_t i)
{
	for (size_t k = 0; k < sizeof(key_terms) / sizeof(key_terms[0]); k++) {
		if (strcmp(w->terms[i].column, key_terms[k].column))
			continue;
		for (size_t j = i; j < w->nterms; j++)
			if (!strcmp(w->terms[j].column, w->terms[i].column) && !*w->terms[j].value)
				return -1;
		return (int)k;
	}
	return -1;
}

/* "<head> WHERE 1 AND ... ORDER BY ...": one condition per distinct column,
 * IN over its values, and the key condition of a key column; malloc'd
 * (sqlite3_free), NULL when out of memory */
static char *where_sql(const char *head, const struct db_where *w)
{
	sqlite3_str *s = sqlite3_str_new(NULL);
	sqlite3_str_appendf(s, "%s WHERE 1", head);
	for (size_t i = 0; i < w->nterms; i++) {
		if (!first_of_column(w, i))
			continue;
		/* %w doubles a '"' in the (already checked) column name */
		sqlite3_str_appendf(s, " AND COALESCE(CAST(\"%w\" AS TEXT), '') IN (?",
				    w->terms[i].column);
		for (size_t j = i + 1; j < w->nterms; j++)
			if (!strcmp(w->terms[j].column, w->terms[i].column))
				sqlite3_str_appendall(s, ", ?");
		sqlite3_str_appendchar(s, 1, ')');
		int k = key_term(w, i);
		if (k < 0)
			continue;
		sqlite3_str_appendall(s, key_terms[k].head);
		for (size_t j = i; j < w->nterms; j++)
			if (!strcmp(w->terms[j].column, w->terms[i].column))
				sqlite3_str_appendf(s, "%s%s", j > i ? ", " : "", key_terms[k].param);
		sqlite3_str_appendall(s, key_terms[k].tail);
	}
	if (w->workload)
		sqlite3_str_appendall(s, " AND workload = ?");
	if (w->metric)
		sqlite3_str_appendall(s, " AND metric = ?");
	if (w->since)
		sqlite3_str_appendall(s, " AND started_at >= ?");
	/* a list as one JSON parameter; session (the session's id) is then
	 * looked up by key and its runs through the (session_id, seq) index */
	if (w->sessions)
		sqlite3_str_appendall(s, " AND session IN (SELECT value FROM json_each(?))");
	sqlite3_str_appendall(s, results_order);
	if (sqlite3_str_errcode(s) != SQLITE_OK) {
		sqlite3_free(sqlite3_str_finish(s));
		return NULL;
	}
	return sqlite3_str_finish(s);
}

/* bind in the order where_sql() placed the parameters; -1 when out of memory */
static int bind_where(sqlite3_stmt *st, const struct db_where *w)
{
	int k = 1;
	for (size_t i = 0; i < w->nterms; i++) {
		if (!first_of_column(w, i))
			continue;
		int times = key_term(w, i) < 0 ? 1 : 2;  /* the term's values, then its key's */
		for (int t = 0; t < times; t++)
			for (size_t j = i; j < w->nterms; j++)
				if (!strcmp(w->terms[j].column, w->terms[i].column))
					sqlite3_bind_text(st, k++, w->terms[j].value, -1,
							  SQLITE_STATIC);
	}
	if (w->workload)
		sqlite3_bind_text(st, k++, w->workload, -1, SQLITE_STATIC);
	if (w->metric)
		sqlite3_bind_text(st, k++, w->metric, -1, SQLITE_STATIC);
	if (w->since)
		sqlite3_bind_text(st, k++, w->since, -1, SQLITE_STATIC);
	if (w->sessions) {
		char *ids = id_array(w->sessions, w->nsessions);
		if (!ids)
			return -1;
		sqlite3_bind_text(st, k++, ids, -1, sqlite3_free);
	}
	return 0;
}

static const char results_failed[] = "query of results failed";

static sqlite3_stmt *prepare_where(struct db *db, const char *head, const struct db_where *w)
{
	char *sql = where_sql(head, w);
	if (!sql) {
		db_seterr(db, "%s: out of memory", results_failed);
		return NULL;
	}
	sqlite3_stmt *st = prepare(db, sql, results_failed);
	sqlite3_free(sql);
	if (st && bind_where(st, w)) {
		db_seterr(db, "%s: out of memory", results_failed);
		sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

int db_results_columns(struct db *db, db_name_fn fn, void *ctx)
{
	sqlite3_stmt *st = prepare(db, rq_sql[RQ_COLUMNS], "cannot read the results view");
	if (!st)
		return -1;
	int n = sqlite3_column_count(st), ret = 0;
	for (int i = 0; i < n && !ret; i++)
		ret = fn(ctx, sqlite3_column_name(st, i));
	sqlite3_finalize(st);
	return ret;
}

int db_results_select(struct db *db, const struct db_where *w, db_result_fn fn, void *ctx)
{
	sqlite3_stmt *st = prepare_where(db, select_cols, w);
	if (!st)
		return -1;
	int rc = SQLITE_DONE, ret = 0;
	while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_result_row r = {
			.session = sqlite3_column_int64(st, C_SESSION),
			.run_id = sqlite3_column_int64(st, C_RUN),
			.started_at = text_or_empty(st, C_STARTED),
			.machine_id = text_or_empty(st, C_MACHINE_ID),
			.machine = text_or_empty(st, C_MACHINE),
			.kernel_release = text_or_empty(st, C_RELEASE),
			.config_hash = text_or_empty(st, C_HASH),
			.preempt = text_or_empty(st, C_PREEMPT),
			.hz = text_or_empty(st, C_HZ),
			.sched_mc = text_or_empty(st, C_MC),
			.cmdline = text_or_empty(st, C_CMDLINE),
			.knobs = text_or_empty(st, C_KNOBS),
			.run_workload = text_or_empty(st, C_RUN_WORKLOAD),
			.params = text_or_empty(st, C_PARAMS),
			.workload = text_or_empty(st, C_WORKLOAD),
			.metric = text_or_empty(st, C_METRIC),
			.unit = text_or_empty(st, C_UNIT),
			.better = text_or_empty(st, C_BETTER),
			.value = sqlite3_column_double(st, C_VALUE),
			.censored = sqlite3_column_int(st, C_CENSORED) != 0,
			.kernel_commit = text_or_empty(st, C_COMMIT),
			.kernel_describe = text_or_empty(st, C_DESCRIBE),
			.clock = text_or_empty(st, C_CLOCK),
			.clock_shift = sqlite3_column_type(st, C_CLOCK_SHIFT) == SQLITE_NULL
					       ? -1
					       : sqlite3_column_int(st, C_CLOCK_SHIFT),
			.qemu_version = text_or_empty(st, C_QEMU_VERSION),
			.scheduler = text_or_empty(st, C_SCHEDULER),
			.seed = sqlite3_column_type(st, C_SEED) == SQLITE_NULL
					? -1
					: sqlite3_column_int64(st, C_SEED),
		};
		ret = fn(ctx, &r);
	}
	if (!ret && rc != SQLITE_DONE) {
		step_failed(db, results_failed);
		ret = -1;
	}
	sqlite3_finalize(st);
	return ret;
}

/* fn once with the column names and values NULL, then once per row of st
 * (finalized here); `what` names the query in an error */
static int rows_with_header(struct db *db, sqlite3_stmt *st, const char *what, db_row_fn fn,
			    void *ctx)
{
	int n = sqlite3_column_count(st);
	const char **names = calloc((size_t)n + 1, sizeof(char *));
	const char **cells = calloc((size_t)n + 1, sizeof(char *));
	if (!names || !cells) {
		free(names);
		free(cells);
		sqlite3_finalize(st);
		db_seterr(db, "%s: out of memory", what);
		return -1;
	}
	for (int i = 0; i < n; i++)
		names[i] = sqlite3_column_name(st, i);
	int rc = SQLITE_DONE, ret = fn(ctx, n, names, NULL);
	while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < n; i++)
			cells[i] = (const char *)sqlite3_column_text(st, i);
		ret = fn(ctx, n, names, cells);
	}
	if (!ret && rc != SQLITE_DONE) {
		step_failed(db, what);
		ret = -1;
	}
	free(names);
	free(cells);
	sqlite3_finalize(st);
	return ret;
}

int db_results_export(struct db *db, const struct db_where *w, db_row_fn fn, void *ctx)
{
	sqlite3_stmt *st = prepare_where(db, "SELECT * FROM results", w);
	return st ? rows_with_header(db, st, results_failed, fn, ctx) : -1;
}

int db_sessions_summary(struct db *db, db_row_fn fn, void *ctx)
{
	/* the classes of db/runstate.c: a run skipped because its boot
	   failed is to do (--resume redoes it), not skipped */
	static char sql[2048];
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&mu);
	if (!sql[0])
		snprintf(sql, sizeof(sql),
			 "SELECT s.id AS session, s.name AS plan, s.tag, s.target, s.status,"
			 " s.started_at,"
			 " (SELECT count(*) FROM run r WHERE r.session_id = s.id AND %s) AS ok,"
			 " (SELECT count(*) FROM run r WHERE r.session_id = s.id AND %s) AS failed,"
			 " (SELECT count(*) FROM run r WHERE r.session_id = s.id AND %s) AS skipped,"
			 " (SELECT count(*) FROM run r WHERE r.session_id = s.id AND %s) AS todo"
			 " FROM session s ORDER BY s.id",
			 run_class_sql(RUN_DONE_OK, "r"), run_class_sql(RUN_DONE_FAILED, "r"),
			 run_class_sql(RUN_DONE_SKIPPED, "r"), run_class_sql(RUN_TODO, "r"));
	pthread_mutex_unlock(&mu);
	static const char what[] = "query of sessions failed";
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK) {
		db_seterr(db, "%s: %s", what, sqlite3_errmsg(db_sqlite(db)));
		return -1;
	}
	return rows_with_header(db, st, what, fn, ctx);
}

/* ---- histograms, tags, sessions, boots ------------------------------------------- */

int db_results_hists(struct db *db, const int64_t *run_id, size_t n, db_hist_fn fn, void *ctx)
{
	static const char what[] = "query of histograms failed";
	sqlite3_stmt *st = prepare(db, rq_sql[RQ_HISTS], what);
	if (!st)
		return -1;
	int ret = 0;
	for (size_t i = 0; i < n && !ret; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, run_id[i]);
		int rc = SQLITE_DONE;
		while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW)
			ret = fn(ctx, run_id[i], text_or_empty(st, 0), text_or_empty(st, 1),
				 text_or_empty(st, 2));
		if (!ret && rc != SQLITE_DONE) {
			step_failed(db, what);
			ret = -1;
		}
	}
	sqlite3_finalize(st);
	return ret;
}

/*
 * The reads of one row per id: q with id[i] bound as its parameter, row()
 * called for each id that has a row (with the statement at it); an id
 * without a row is skipped. Stops at row()'s first non-zero return.
 */
typedef int (*id_row_fn)(sqlite3_stmt *st, size_t i, int64_t id, void *arg);

static int rows_by_id(struct db *db, enum rq_id q, const char *what, const int64_t *id,
		      size_t n, id_row_fn row, void *arg)
{
	sqlite3_stmt *st = prepare(db, rq_sql[q], what);
	if (!st)
		return -1;
	int ret = 0;
	for (size_t i = 0; i < n && !ret; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, id[i]);
		if (sqlite3_step(st) == SQLITE_ROW)
			ret = row(st, i, id[i], arg);
	}
	sqlite3_finalize(st);
	return ret;
}

static const char *text_or_null(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

static int tag_row(sqlite3_stmt *st, size_t i, int64_t id, void *tag)
{
	if (sqlite3_column_text(st, 0))
		((char **)tag)[i] = strdup(text_or_null(st, 0));
	return 0;
}

int db_results_trace_summaries(struct db *db, const int64_t *run_id, size_t n, char **summary)
{
	for (size_t i = 0; i < n; i++)
		summary[i] = NULL;
	return rows_by_id(db, RQ_TRACE, "cannot read trace summaries", run_id, n, tag_row,
			  summary) ? -1 : 0;
}

int db_results_tags(struct db *db, const int64_t *sid, size_t n, char **tag)
{
	for (size_t i = 0; i < n; i++)
		tag[i] = NULL;
	return rows_by_id(db, RQ_TAG, "cannot read session tags", sid, n, tag_row, tag) ? -1 : 0;
}

int db_results_session_history(struct db *db, const int64_t *scope, size_t n,
			       db_session_start_fn fn, void *ctx)
{
	static const char what[] = "cannot read the session history";
	char *ids = id_array(scope, n);
	if (!ids) {
		db_seterr(db, "%s: out of memory", what);
		return -1;
	}
	sqlite3_stmt *st = prepare(db, rq_sql[RQ_HISTORY], what);
	if (!st) {
		sqlite3_free(ids);
		return -1;
	}
	sqlite3_bind_text(st, 1, ids, -1, sqlite3_free);
	int rc = SQLITE_DONE, ret = 0;
	while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW)
		ret = fn(ctx, sqlite3_column_int64(st, 0), text_or_empty(st, 1));
	if (!ret && rc != SQLITE_DONE) {
		step_failed(db, what);
		ret = -1;
	}
	sqlite3_finalize(st);
	return ret;
}

int db_results_git_kernels(struct db *db, const int64_t *sid, const char *const *release,
			   size_t n, char **label)
{
	static const char q[] =
		"SELECT DISTINCT kernel_describe, kernel_commit FROM results"
		" WHERE session = ?1 AND kernel_release = ?2 AND kernel_commit IS NOT NULL LIMIT 2";
	for (size_t i = 0; i < n; i++)
		label[i] = NULL;
	sqlite3_stmt *st = prepare(db, q, "cannot read the sessions' commits");
	if (!st)
		return -1;
	for (size_t i = 0; i < n; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, sid[i]);
		sqlite3_bind_text(st, 2, release[i] ? release[i] : "", -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_ROW)
			continue;
		const char *d = text_or_null(st, 0), *c = text_or_null(st, 1);
		char *l = NULL;
		if (asprintf(&l, "%s (%s)", d ? d : "?", c ? c : "?") < 0)
			l = NULL;
		if (sqlite3_step(st) == SQLITE_ROW) /* two kernels of one release: neither */
			free(l);
		else
			label[i] = l;
	}
	sqlite3_finalize(st);
	return 0;
}

struct session_walk {
	db_session_fn fn;
	void *ctx;
};

static int session_row(sqlite3_stmt *st, size_t i, int64_t id, void *arg)
{
	const struct session_walk *w = arg;
	struct db_session_info s = {
		.id = id,
		.name = text_or_null(st, 0),
		.tag = text_or_null(st, 1),
		.target = text_or_null(st, 2),
		.version = text_or_null(st, 3),
		.status = text_or_null(st, 4),
		.started_at = text_or_null(st, 5),
		.finished_at = text_or_null(st, 6),
		.plan_path = text_or_null(st, 7),
	};
	return w->fn(w->ctx, &s);
}

int db_results_sessions(struct db *db, const int64_t *id, size_t n, db_session_fn fn, void *ctx)
{
	struct session_walk w = { fn, ctx };
	return rows_by_id(db, RQ_SESSION, "cannot read sessions", id, n, session_row, &w);
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return a < b ? -1 : a > b;
}

/* the distinct boot ids seen so far */
struct boot_set {
	int64_t *v;
	size_t n;
};

static int run_boot_row(sqlite3_stmt *st, size_t i, int64_t id, void *arg)
{
	struct boot_set *bs = arg;
	int64_t b = sqlite3_column_int64(st, 0);
	size_t j = 0;
	while (j < bs->n && bs->v[j] != b)
		j++;
	if (j == bs->n)
		bs->v[bs->n++] = b;
	return 0;
}

int db_results_run_boots(struct db *db, const int64_t *run_id, size_t n, int64_t **boot_id,
			 size_t *nboots)
{
	*boot_id = NULL;
	*nboots = 0;
	struct boot_set bs = { malloc((n + 1) * sizeof(int64_t)), 0 };
	if (!bs.v) {
		db_seterr(db, "cannot read boots: out of memory");
		return -1;
	}
	if (rows_by_id(db, RQ_RUN_BOOT, "cannot read boots", run_id, n, run_boot_row, &bs)) {
		free(bs.v);
		return -1;
	}
	if (bs.n)
		qsort(bs.v, bs.n, sizeof(int64_t), cmp_i64);
	*boot_id = bs.v;
	*nboots = bs.n;
	return 0;
}

struct boot_walk {
	db_boot_fn fn;
	void *ctx;
};

static int boot_row(sqlite3_stmt *st, size_t i, int64_t id, void *arg)
{
	const struct boot_walk *w = arg;
	struct db_boot_info b = {
		.id = id,
		.session_id = sqlite3_column_int64(st, 0),
		.sysinfo = text_or_null(st, 1),
		.method = text_or_null(st, 2),
		.accel = text_or_null(st, 3),
		.status = text_or_null(st, 4),
		.booted_at = text_or_null(st, 5),
		.machine = text_or_null(st, 6),
		.clock = text_or_null(st, 7),
		.clock_shift = sqlite3_column_type(st, 8) == SQLITE_NULL ? -1
								    : sqlite3_column_int(st, 8),
		.qemu_version = text_or_null(st, 9),
	};
	return w->fn(w->ctx, &b);
}

int db_results_boots(struct db *db, const int64_t *id, size_t n, db_boot_fn fn, void *ctx)
{
	struct boot_walk w = { fn, ctx };
	return rows_by_id(db, RQ_BOOT, "cannot read boots", id, n, boot_row, &w);
}

int db_session_values(struct db *db, int64_t sid, db_session_value_fn fn, void *ctx)
{
	static const char what[] = "query of session values failed";
	sqlite3_stmt *st = prepare(db,
				   "SELECT b.cfg, r.round, r.knobs, r.workload, r.params, m.name,"
				   " m.better, m.value, m.censored FROM metric m"
				   " JOIN run r ON r.id = m.run_id JOIN boot b ON b.id = r.boot_id"
				   " WHERE r.session_id = ?1 AND r.status = 'ok' AND b.status = 'ok'"
				   " AND m.workload = r.workload ORDER BY r.round, r.id",
				   what);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sid);
	int rc, ret = 0;
	while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_session_value v = {
			.cfg = sqlite3_column_int(st, 0),
			.round = sqlite3_column_int(st, 1),
			.knobs = text_or_empty(st, 2),
			.workload = text_or_empty(st, 3),
			.params = text_or_empty(st, 4),
			.metric = text_or_empty(st, 5),
			.better = text_or_empty(st, 6),
			.value = sqlite3_column_double(st, 7),
			.censored = sqlite3_column_int(st, 8) != 0,
		};
		ret = fn(ctx, &v);
	}
	if (!ret && rc != SQLITE_DONE) {
		step_failed(db, what);
		ret = -1;
	}
	sqlite3_finalize(st);
	return ret;
}

int db_evidence_runs(struct db *db, int64_t sid, int cfg, const char *workload,
		     const char *metric, db_evidence_fn fn, void *ctx)
{
	static const char what[] = "query of the configuration's runs failed";
	sqlite3_stmt *st = prepare(db,
				   "SELECT r.id, b.cfg, r.rep, r.knobs, r.params, r.status, r.error,"
				   " b.status, m.value, m.unit, m.better, m.censored, r.skip_reason"
				   " FROM run r JOIN boot b ON b.id = r.boot_id"
				   " LEFT JOIN metric m ON m.run_id = r.id AND m.workload = r.workload"
				   " AND m.name = ?3 AND r.status = 'ok'"
				   " WHERE r.session_id = ?1 AND r.workload = ?2 AND b.cfg = ?4"
				   " ORDER BY r.seq",
				   what);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sid);
	sqlite3_bind_text(st, 2, workload, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, metric ? metric : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 4, cfg);
	int rc, ret = 0;
	while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_evidence_row r = {
			.run_id = sqlite3_column_int64(st, 0),
			.cfg = sqlite3_column_int(st, 1),
			.rep = sqlite3_column_int(st, 2),
			.knobs = text_or_empty(st, 3),
			.params = text_or_empty(st, 4),
			.status = text_or_empty(st, 5),
			.error = text_or_empty(st, 6),
			.boot_status = text_or_empty(st, 7),
			.has_value = sqlite3_column_type(st, 8) != SQLITE_NULL,
			.value = sqlite3_column_double(st, 8),
			.unit = text_or_empty(st, 9),
			.better = text_or_empty(st, 10),
			.censored = sqlite3_column_int(st, 11) != 0,
			.skip = skip_reason_parse((const char *)sqlite3_column_text(st, 12)),
		};
		ret = fn(ctx, &r);
	}
	if (!ret && rc != SQLITE_DONE) {
		step_failed(db, what);
		ret = -1;
	}
	sqlite3_finalize(st);
	return ret;
}
