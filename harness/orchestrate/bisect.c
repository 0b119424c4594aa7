/*
 * `schedlab bisect`: the side-effect half of a bisection (the decisions are
 * analysis/bisect_rule.c's). It resolves the range with git, keeps the
 * bisection's row and steps in the database (db/bisect_store.h), and measures a
 * commit by running the plan with that commit as its kernel: an ordinary
 * session, built through kbuild (one kept build tree and ccache, so the
 * next commit rebuilds what changed), booted and run by session.c, its rows
 * in `results` like any other and tagged "bisect-<id>".
 *
 * Nothing is remembered in memory that is not in the database: every
 * invocation walks the bisection from its start, and a measurement that is
 * already stored (a finished session of that commit and tag) is used as
 * is, an unfinished one is resumed, a commit whose build failed before is
 * not built again. So `--resume` after Ctrl-C or SIGKILL, and the same
 * command again (same inputs: same bisection row), repeat no work, and the
 * log they print is the same as the first time. One process at a time works
 * on a bisection (a flock beside the database).
 */
#include "harness/orchestrate/bisect.h"
#include "harness/orchestrate/tlock.h"
#include "harness/targets/target.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <jansson.h>

#include "analysis/bisect_rule.h"
#include "db/bisect_store.h"
#include "db/db.h"
#include "harness/orchestrate/kbuild.h"
#include "harness/orchestrate/kgit.h"
#include "harness/orchestrate/plan.h"
#include "harness/orchestrate/session.h"
#include "harness/util/proc.h"
#include "harness/util/sha256.h"

#define DEFAULT_REPS  6
#define DEFAULT_SESSION_RUNS 3
#define DEFAULT_ALPHA 0.05

/* one commit of the range */
struct bcommit {
	char *id, *subject;
	enum bisect_state st;
	int seq;                /* its step, -1 none yet */
	/* the measurement so far */
	double *v;              /* the values compared (unit session: one a session) */
	size_t n;
	double *runv;           /* every run's value */
	size_t nrun;
	int rounds;             /* finished sessions */
	json_t *sessions;       /* their ids */
	double build_s;         /* this invocation's builds, -1 none */
	double build_prev;      /* stored by an earlier invocation, -1 none */
	char *skip_why;         /* does not build / boot: why */
};

struct bctx {
	const struct bisect_args *a;
	struct db *db;
	struct db_bisect row;
	json_t *tmpl;           /* the plan, its kernel without a ref */
	char *lock_key;         /* the target's lock, held for the bisection (tlock.h) */
	char *tag;              /* "bisect-<id>" */
	char *wl, *metric;      /* from "WORKLOAD.METRIC" */
	struct bcommit *c;
	size_t n;               /* c[0] good ... c[n-1] bad */
	struct db_bisect_step *stored;
	size_t nstored;
	int next_seq;
	double alpha_look;      /* the level of the last look (the ends' and the effect's) */
	double *alevel;         /* alevel[k]: the level of look k = 1 .. looks */
	int looks;
	/* the drift guard (row.drift_guard): the sessions of the good [0] and
	 * bad [1] end the walk has taken so far (a fresh round is the next
	 * ones), drift seen (both ends measured beside every midpoint from
	 * then on), and the sessions the guard added */
	int used[2];
	int drift_mode;
	int guard_sessions;
	struct verdict_options vo;
	int have_vo;
	char unit[32];
	int lock_fd;
};

static int aborted(const struct bctx *b)
{
	return b->a->abort_flag && *b->a->abort_flag;
}

/* the git kernel of a plan: matrix.kernel as one object or an array of one */
static json_t *git_kernel(json_t *root)
{
	json_t *ks = json_object_get(json_object_get(root, "matrix"), "kernel");
	if (json_is_array(ks))
		ks = json_array_size(ks) == 1 ? json_array_get(ks, 0) : NULL;
	return kgit_is_git(ks) ? ks : NULL;
}

static int git_out(const char *dir, const char *const *args, struct bctx *b, struct strbuf *out,
		   struct strbuf *err)
{
	const char *av[16];
	size_t k = 0;
	av[k++] = "-C";
	av[k++] = dir;
	for (size_t i = 0; args[i] && k < 15; i++)
		av[k++] = args[i];
	av[k] = NULL;
	return kgit_git(av, 600, (volatile int *)b->a->abort_flag, out, err);
}

/* a commit-ish of the plan's repository as a full id (with the plan's
 * "fetch", which runs once, for the first) */
static char *resolve(struct bctx *b, const json_t *spec, const char *ref, int fetch,
		     const char *what, char **dir, struct strbuf *err)
{
	json_t *k = json_deep_copy(spec);
	json_object_set_new(k, "ref", json_string(ref));
	if (!fetch)
		json_object_del(k, "fetch");
	char *id = NULL;
	struct strbuf e = STRBUF_INIT;
	if (kgit_resolve(k, what, b->a->quiet, (volatile int *)b->a->abort_flag, &e))
		strbuf_addf(err, "%s", e.buf);
	else
		id = xstrdup(json_string_value(json_object_get(k, "commit")));
	if (id && dir && !*dir)   /* made absolute by kgit_resolve */
		*dir = xstrdup(json_string_value(json_object_get(k, "git")));
	strbuf_release(&e);
	json_decref(k);
	return id;
}

/* the commits of good..bad on the ancestry path, oldest first, with
 * subjects; good first and bad last */
static int load_range(struct bctx *b, struct strbuf *err)
{
	const char *dir = b->row.git_dir;
	struct strbuf out = STRBUF_INIT, e = STRBUF_INIT;
	int ret = -1;
	{
		const char *a[] = { "merge-base", "--is-ancestor", b->row.good, b->row.bad, NULL };
		if (git_out(dir, a, b, NULL, &e)) {
			strbuf_addf(err, "--good %s (%.12s) is not an ancestor of --bad %s (%.12s) "
				    "in %s: bisect needs good before bad", b->row.good_ref,
				    b->row.good, b->row.bad_ref, b->row.bad, dir);
			goto out;
		}
	}
	char *range = xstrfmt("%s..%s", b->row.good, b->row.bad);
	const char *a[] = { "log", "--reverse", "--ancestry-path", "--format=%H%x09%s",
			    range, "--", NULL };
	int bad = git_out(dir, a, b, &out, &e);
	free(range);
	if (bad) {
		strbuf_addf(err, "listing %.12s..%.12s: %s", b->row.good, b->row.bad, e.buf);
		goto out;
	}
	size_t lines = 1;
	for (const char *p = out.buf; *p; p++)
		lines += *p == '\n';
	b->c = xcalloc(lines + 1, sizeof(*b->c));
	b->c[0].id = xstrdup(b->row.good);
	{
		struct strbuf s = STRBUF_INIT;
		const char *la[] = { "log", "-1", "--format=%s", b->row.good, "--", NULL };
		if (!git_out(dir, la, b, &s, &e))
			b->c[0].subject = strbuf_detach(&s, NULL);
		strbuf_release(&s);
	}
	b->n = 1;
	char *save = NULL;
	for (char *line = strtok_r(out.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t');
		if (tab)
			*tab = 0;
		if (strlen(line) != 40)
			continue;
		b->c[b->n].id = xstrdup(line);
		b->c[b->n].subject = xstrdup(tab ? tab + 1 : "");
		b->n++;
	}
	if (b->n < 2 || strcmp(b->c[b->n - 1].id, b->row.bad)) {
		strbuf_addf(err, "%.12s..%.12s: no commits between good and bad",
			    b->row.good, b->row.bad);
		goto out;
	}
	for (size_t i = 0; i < b->n; i++) {
		b->c[i].seq = -1;
		b->c[i].build_s = -1;
		b->c[i].build_prev = -1;
		b->c[i].sessions = json_array();
		if (!b->c[i].subject)
			b->c[i].subject = xstrdup("");
	}
	ret = 0;
out:
	strbuf_release(&out);
	strbuf_release(&e);
	return ret;
}

/* ------------------------------------------------------------ measuring */

/* the values of the metric in sessions sid[0..n): 0, or -1 (several
 * configurations match, or the metric has no direction) */
static int load_group(struct bctx *b, const struct bcommit *c, const int64_t *sid, size_t n,
		      struct bisect_values *bv, struct strbuf *err)
{
	memset(bv, 0, sizeof(*bv));
	if (b->a->values.load(b->a->values.ctx, b->db, b->row.where_sel, b->wl, b->metric, sid,
			      n, bv, err))
		return -1;
	if (bv->ngroups > 1) {
		strbuf_addf(err, "%s.%s%s%s matches %zu configurations in the runs of %.12s "
			    "(the plan has several boot configurations or workloads of that "
			    "type): narrow it with --where (e.g. preempt=full)", b->wl, b->metric,
			    b->row.where_sel[0] ? " where " : "", b->row.where_sel, bv->ngroups,
			    c->id);
		return -1;
	}
	if (bv->ngroups == 1 && !b->have_vo) {
		if (bv->better == 0) {
			strbuf_addf(err, "%s.%s has no better direction (it describes, it "
				    "is not good or bad): bisect needs a metric that is",
				    b->wl, b->metric);
			return -1;
		}
		verdict_options_default(&b->vo, bv->better);
		b->vo.threshold_pct = b->row.threshold_pct;
		b->vo.threshold_percent = b->row.threshold_percent;
		b->vo.source = b->a->source;
		snprintf(b->unit, sizeof(b->unit), "%s", bv->unit);
		b->have_vo = 1;
	}
	return 0;
}

/* the sessions that one look of a commit needs */
static int sessions_for(const struct bctx *b, int look)
{
	return b->row.session_runs > 0 ? look * b->row.repetitions : look;
}

/* the values of the metric in the commit's first `upto` sessions (every
 * decision looks at a fixed number of sessions, so that walking the
 * bisection again with more sessions stored decides as the first time):
 * c->runv every run's value; c->v the values compared, each session's
 * centre (unit session) or every run's (unit run) */
static int load_values(struct bctx *b, struct bcommit *c, int upto, struct strbuf *err)
{
	size_t ns = json_array_size(c->sessions);
	if (upto >= 0 && ns > (size_t)upto)
		ns = (size_t)upto;
	free(c->v);
	free(c->runv);
	c->v = c->runv = NULL;
	c->n = c->nrun = 0;
	if (!ns)
		return 0;
	int64_t *ids = xcalloc(ns, sizeof(*ids));
	for (size_t i = 0; i < ns; i++)
		ids[i] = json_integer_value(json_array_get(c->sessions, i));
	struct bisect_values bv;
	int ret = -1;
	if (b->row.session_runs == 0) {
		if (load_group(b, c, ids, ns, &bv, err))
			goto out;
		c->runv = bv.v;
		c->nrun = bv.n;
		bv.v = NULL;
		if (c->nrun) {
			c->v = xcalloc(c->nrun, sizeof(double));
			memcpy(c->v, c->runv, c->nrun * sizeof(double));
			c->n = c->nrun;
		}
	} else {
		/* one session at a time: its centre is one value */
		c->v = xcalloc(ns, sizeof(double));
		for (size_t i = 0; i < ns; i++) {
			if (load_group(b, c, &ids[i], 1, &bv, err))
				goto out;
			double ce;
			if (bv.n && !stats_centre(bv.v, bv.n, b->vo.centre, &ce))
				c->v[c->n++] = ce;
			if (bv.n) {
				c->runv = xrealloc(c->runv, (c->nrun + bv.n) * sizeof(double));
				memcpy(c->runv + c->nrun, bv.v, bv.n * sizeof(double));
				c->nrun += bv.n;
			}
			free(bv.v);
			bv.v = NULL;
		}
	}
	ret = 0;
out:
	free(bv.v);
	free(ids);
	return ret;
}

/* the sessions tagged for this bisection that measured commit c; an
 * unfinished one is resumed first. 0, 130 interrupted, 2 error */
static int adopt_sessions(struct bctx *b, struct bcommit *c, struct strbuf *err)
{
	struct db_bisect_session *s = NULL;
	size_t ns = 0;
	if (db_bisect_sessions(b->db, b->tag, c->id, &s, &ns)) {
		strbuf_addstr(err, db_errmsg(b->db));
		return 2;
	}
	int rc = 0;
	json_array_clear(c->sessions);
	c->rounds = 0;
	for (size_t i = 0; i < ns && !rc; i++) {
		if (s[i].todo > 0) {
			char *pj = NULL, *pp = NULL, *tg = NULL, *st = NULL;
			struct plan p;
			memset(&p, 0, sizeof(p));
			if (db_session_load(b->db, s[i].id, &pj, &pp, &tg, &st)) {
				strbuf_addstr(err, db_errmsg(b->db));
				rc = 2;
			} else {
				char *label = xstrfmt("bisection %lld (session %lld)",
						      (long long)b->row.id, (long long)s[i].id);
				if (plan_load_string(pj, label, &p, err)) {
					rc = 2;
				} else {
					if (!b->a->quiet)
						fprintf(stderr, "bisect: resuming session %lld "
							"(%.12s, %d runs to do)\n",
							(long long)s[i].id, c->id, s[i].todo);
					struct session_opts so = { .tag = b->tag,
						.quiet = b->a->quiet, .abort_flag = b->a->abort_flag };
					int r = session_execute(b->db, s[i].id, &p, &so, err);
					if (r == 130 || aborted(b))
						rc = 130;
					else if (r == 2)
						rc = 2;
				}
				free(label);
			}
			plan_release(&p);
			free(pj);
			free(pp);
			free(tg);
			free(st);
		}
		if (!rc) {
			json_array_append_new(c->sessions, json_integer(s[i].id));
			c->rounds++;
		}
	}
	db_bisect_sessions_free(s, ns);
	return rc;
}

static json_t *base_detail(const struct bctx *b, const struct bcommit *c);
static int put_step(struct bctx *b, struct bcommit *c, const char *role, const char *verdict,
		    json_t *detail, struct strbuf *err);

/* one more round of commit c: build (or find) its kernel, then a session.
 * 0, 1 the commit cannot be measured (c->skip_why), 130, 2 */
static int new_round(struct bctx *b, struct bcommit *c, struct strbuf *err)
{
	json_t *root = json_deep_copy(b->tmpl);
	json_object_set_new(git_kernel(root), "ref", json_string(c->id));
	/* one session: the bisection's runs, whatever the plan says */
	json_object_set_new(root, "repetitions", json_integer(b->row.session_runs > 0
							       ? b->row.session_runs
							       : b->row.repetitions));
	char *text = json_dumps(root, JSON_INDENT(1));
	json_decref(root);
	char *label = xstrfmt("%s (bisection %lld, %.12s)", b->row.plan_path ? b->row.plan_path
			      : "plan", (long long)b->row.id, c->id);
	struct plan p;
	memset(&p, 0, sizeof(p));
	int rc = 2;
	char *folder = NULL;
	volatile int *ab = (volatile int *)b->a->abort_flag;
	if (plan_load_string(text, label, &p, err))
		goto out;
	json_t *k = git_kernel(p.root);
	if (kgit_resolve(k, "matrix.kernel[0]", 1, ab, err))
		goto out;
	plan_set_kernel_label(&p, 0);
	double t0 = now_mono();
	int br = kbuild_build(k, "matrix.kernel[0]", b->a->quiet, ab, &folder, err);
	if (aborted(b)) {
		rc = 130;
		goto out;
	}
	if (br == -2) {
		/* the tree does not compile: skipped like `git bisect skip` */
		strbuf_trim(err);
		const char *from = strstr(err->buf, "build-variant.sh");
		from = from ? from : err->buf;
		const char *nl = strchr(from, '\n');
		c->skip_why = xstrfmt("does not build: %.*s", nl ? (int)(nl - from)
				      : (int)strlen(from), from);
		strbuf_reset(err);
		rc = 1;
		goto out;
	}
	if (br)
		goto out;
	c->build_s = (c->build_s < 0 ? 0 : c->build_s) + now_mono() - t0;
	if (c->seq >= 0) {
		/* a step being measured keeps its build time even if the
		 * bisection is killed before the step is decided */
		json_t *d = base_detail(b, c);
		int bad = put_step(b, c, c->seq < 2 ? (c == b->c ? "good" : "bad") : "mid", NULL,
				   d, err);
		json_decref(d);
		if (bad)
			goto out;
	}
	if (plan_set_kernel_image(&p, 0, folder, err))
		goto out;
	struct session_opts so = { .tag = b->tag, .quiet = b->a->quiet,
				   .abort_flag = b->a->abort_flag };
	if (session_preflight(&p, &so, err))
		goto out;
	int64_t sid = session_start(b->db, &p, &so, err);
	if (sid < 0)
		goto out;
	if (!b->a->quiet)
		fprintf(stderr, "bisect: session %lld measures %.12s (session %d of it)\n",
			(long long)sid, c->id, c->rounds + 1);
	int r = session_execute(b->db, sid, &p, &so, err);
	if (r == 130 || aborted(b)) {
		rc = 130;
		goto out;
	}
	if (r == 2)
		goto out;
	strbuf_reset(err);      /* failed runs are data (a kernel that does not boot) */
	json_array_append_new(c->sessions, json_integer(sid));
	c->rounds++;
	rc = 0;
out:
	plan_release(&p);
	free(folder);
	free(label);
	free(text);
	return rc;
}

/* the step stored for commit c, or NULL */
static const struct db_bisect_step *stored_step(const struct bctx *b, const struct bcommit *c)
{
	for (size_t i = 0; i < b->nstored; i++)
		if (!strcmp(b->stored[i].commit, c->id))
			return &b->stored[i];
	return NULL;
}

/* at least `want` sessions of commit c, the values of its first `want`
 * loaded (fewer when it cannot be measured: c->skip_why). 0, 130, 2 */
static int measure_n(struct bctx *b, struct bcommit *c, int want, struct strbuf *err)
{
	int rc = adopt_sessions(b, c, err);
	if (rc)
		return rc;
	if (!c->rounds && !c->skip_why) {
		/* a build that failed before is not tried again */
		const struct db_bisect_step *s = stored_step(b, c);
		json_t *d = s && s->detail ? json_loads(s->detail, 0, NULL) : NULL;
		const char *why = json_string_value(json_object_get(d, "skip"));
		if (s && s->verdict && !strcmp(s->verdict, "skip") && why &&
		    !strncmp(why, "does not build", 14))
			c->skip_why = xstrdup(why);
		json_decref(d);
	}
	while (!c->skip_why && c->rounds < want) {
		/* a first session without a value: the kernel does not boot (or
		 * the workload fails on it); no more sessions of it */
		if (c->rounds >= 1 && b->row.session_runs > 0) {
			if (load_values(b, c, 1, err))
				return 2;
			if (!c->n)
				break;
		}
		rc = new_round(b, c, err);
		if (rc == 1)
			break;
		if (rc)
			return rc;
	}
	if (load_values(b, c, want, err))
		return 2;
	/* a deterministic source's one value is the commit's; others need
	 * two at least to say anything */
	size_t least = b->a->source == VERDICT_SOURCE_DETERMINISTIC ? 1 : 2;
	if (!c->skip_why && c->n < least)
		c->skip_why = xstrfmt("%zu value%s of %s.%s from %d session%s (does it boot? "
				      "schedlab query \"SELECT * FROM run WHERE session_id IN "
				      "(SELECT id FROM session WHERE tag = '%s')\")", c->n,
				      c->n == 1 ? "" : "s", b->wl, b->metric, c->rounds,
				      c->rounds == 1 ? "" : "s", b->tag);
	return 0;
}

/* the sessions of `look` looks of commit c; an end's sessions taken so far
 * (b->used) grow with them */
static int measure(struct bctx *b, struct bcommit *c, int look, struct strbuf *err)
{
	int want = sessions_for(b, look);
	int e = c == &b->c[0] ? 0 : c == &b->c[b->n - 1] ? 1 : -1;
	if (e >= 0 && b->used[e] < want)
		b->used[e] = want;
	return measure_n(b, c, want, err);
}

/* the drift guard's fresh round of end e (0 good, 1 bad): the next
 * sessions of it after those the walk has taken, measured now, beside the
 * midpoint; their values appended to v[*n..]. The end's own c->v is left
 * at all its sessions taken. 0, 130, 2 */
static int fresh_round(struct bctx *b, int e, double **v, size_t *n, struct strbuf *err)
{
	struct bcommit *c = e ? &b->c[b->n - 1] : &b->c[0];
	int from = b->used[e], to = from + sessions_for(b, 1);
	int rc = measure_n(b, c, to, err);
	if (rc)
		return rc;
	size_t nto = c->n;
	double *all = xcalloc(nto ? nto : 1, sizeof(double));
	if (nto)
		memcpy(all, c->v, nto * sizeof(double));
	if (load_values(b, c, from, err)) {
		free(all);
		return 2;
	}
	size_t nfrom = c->n;
	*v = xrealloc(*v, (*n + nto - nfrom + 1) * sizeof(double));
	for (size_t i = nfrom; i < nto; i++)
		(*v)[(*n)++] = all[i];
	free(all);
	b->used[e] = to;
	b->guard_sessions += sessions_for(b, 1);
	return load_values(b, c, to, err) ? 2 : 0;
}

/* --------------------------------------------------------------- the log */

/* the centre compare uses (the median by default), without its bootstrap */
static double centre_of(const struct bctx *b, const struct bcommit *c)
{
	double ce;
	if (c->n && !stats_centre(c->v, c->n, b->vo.centre, &ce))
		return ce;
	return NAN;
}

static json_t *cmp_json(const struct bisect_cmp *x)
{
	const struct verdict *v = &x->v;
	json_t *o = json_object();
	json_object_set_new(o, "verdict", json_string(verdict_kind_name(v->kind)));
	json_object_set_new(o, "significant", json_boolean(x->significant));
	if (isfinite(v->change_pct))
		json_object_set_new(o, "change_pct", json_real(v->change_pct));
	if (isfinite(v->ci_lo_pct) && isfinite(v->ci_hi_pct))
		json_object_set_new(o, "ci_pct", json_pack("[ff]", v->ci_lo_pct, v->ci_hi_pct));
	if (isfinite(v->p))
		json_object_set_new(o, "p", json_real(v->p));
	if (v->exact)
		json_object_set_new(o, "exact_data",
				    json_string(v->exact == VERDICT_EXACT_NEAR ? "near" : "identical"));
	if (v->reps_needed)
		json_object_set_new(o, "reps_needed", json_integer((json_int_t)v->reps_needed));
	return o;
}

/* "+840% [790, 900], p=0.0022: worse" */
static void cmp_text(struct strbuf *sb, const struct bisect_cmp *x)
{
	const struct verdict *v = &x->v;
	if (isfinite(v->change_pct))
		strbuf_addf(sb, "%+.3g%%", v->change_pct);
	else
		strbuf_addstr(sb, "n/a");
	if (isfinite(v->ci_lo_pct) && isfinite(v->ci_hi_pct))
		strbuf_addf(sb, " [%+.3g, %+.3g]", v->ci_lo_pct, v->ci_hi_pct);
	if (v->exact && v->deterministic && v->kind != VERDICT_NO_CHANGE)
		strbuf_addstr(sb, ", exact data");
	else if (isfinite(v->p))
		strbuf_addf(sb, ", p=%.2g%s", v->p, v->exact ? " (exact data)" : "");
	strbuf_addf(sb, ": %s%s", verdict_kind_name(v->kind),
		    (v->kind == VERDICT_WORSE || v->kind == VERDICT_BETTER) && !x->significant
		    ? " (p not below the bisection's level)" : "");
}

static json_t *base_detail(const struct bctx *b, const struct bcommit *c)
{
	json_t *d = json_object();
	json_object_set_new(d, "subject", json_string(c->subject));
	json_object_set_new(d, "n", json_integer((json_int_t)c->n));
	json_object_set_new(d, "rounds", json_integer(c->rounds));
	json_object_set_new(d, "sessions", json_incref(c->sessions));
	json_t *vals = json_array();
	for (size_t i = 0; i < c->n; i++)
		json_array_append_new(vals, json_real(c->v[i]));
	json_object_set_new(d, "values", vals);
	if (b->row.session_runs > 0) {
		json_t *rv = json_array();
		for (size_t i = 0; i < c->nrun; i++)
			json_array_append_new(rv, json_real(c->runv[i]));
		json_object_set_new(d, "run_values", rv);
	}
	json_object_set_new(d, "value_is", json_string(b->row.session_runs > 0 ? "session"
							     : "run"));
	double ce = centre_of(b, c);
	if (isfinite(ce))
		json_object_set_new(d, "centre", json_real(ce));
	json_object_set_new(d, "unit", json_string(b->unit));
	if (c->build_s >= 0 || c->build_prev >= 0) {
		double t = (c->build_s > 0 ? c->build_s : 0) + (c->build_prev > 0 ? c->build_prev : 0);
		json_object_set_new(d, "build_s", json_real(round(t * 10) / 10));
	}
	if (c->skip_why)
		json_object_set_new(d, "skip", json_string(c->skip_why));
	return d;
}

static int put_step(struct bctx *b, struct bcommit *c, const char *role, const char *verdict,
		    json_t *detail, struct strbuf *err)
{
	if (c->seq < 0)
		c->seq = b->next_seq++;
	char *dj = detail ? json_dumps(detail, JSON_COMPACT) : NULL;
	struct db_bisect_step s = { .seq = c->seq, .commit = c->id, .role = (char *)role,
				    .verdict = (char *)verdict, .detail = dj };
	int bad = db_bisect_step_put(b->db, b->row.id, &s);
	free(dj);
	if (bad)
		strbuf_addstr(err, db_errmsg(b->db));
	return bad ? -1 : 0;
}

static void say_measured(const struct bctx *b, const struct bcommit *c, struct strbuf *sb)
{
	double ce = centre_of(b, c);
	if (b->row.session_runs > 0)
		strbuf_addf(sb, "n=%zu sessions (%zu runs), %s of their %ss %.4g %s", c->n,
			    c->nrun, b->vo.centre == STATS_MEDIAN ? "median" : "centre",
			    b->vo.centre == STATS_MEDIAN ? "median" : "centre", ce, b->unit);
	else
		strbuf_addf(sb, "n=%zu, %s %.4g %s", c->n, b->vo.centre == STATS_MEDIAN
			    ? "median" : "centre", ce, b->unit);
	if (c->build_s >= 0 || c->build_prev >= 0)
		strbuf_addf(sb, " (kernel built or found in %.0f s)",
			    (c->build_s > 0 ? c->build_s : 0) + (c->build_prev > 0 ? c->build_prev : 0));
}

/* ------------------------------------------------------------- the walk */

static int lock_bisection(struct bctx *b, struct strbuf *err)
{
	char *path = xstrfmt("%s.bisect-%lld.lock", b->a->dbpath, (long long)b->row.id);
	b->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	int ret = 0;
	if (b->lock_fd < 0) {
		strbuf_addf(err, "%s: %s", path, strerror(errno));
		ret = -1;
	} else if (flock(b->lock_fd, LOCK_EX | LOCK_NB)) {
		char pid[32] = "";
		ssize_t r = pread(b->lock_fd, pid, sizeof(pid) - 1, 0);
		pid[r > 0 ? r : 0] = 0;
		strbuf_addf(err, "bisection %lld is being worked on by another process%s%s "
			    "(lock %s): wait for it, or stop it and use --resume %lld",
			    (long long)b->row.id, *pid ? ", pid " : "", pid, path,
			    (long long)b->row.id);
		ret = -1;
	} else {
		char pid[32];
		int len = snprintf(pid, sizeof(pid), "%ld", (long)getpid());
		if (ftruncate(b->lock_fd, 0) == 0 && pwrite(b->lock_fd, pid, len, 0) < 0)
			ret = 0; /* the pid is only for the message */
	}
	free(path);
	return ret;
}

static int finish(struct bctx *b, const char *status, json_t *result, struct strbuf *err)
{
	char *rj = result ? json_dumps(result, JSON_COMPACT) : NULL;
	int bad = db_bisect_finish(b->db, b->row.id, status, rj);
	free(rj);
	if (bad)
		strbuf_addstr(err, db_errmsg(b->db));
	return bad;
}

/* the ends: measured, and different enough to bisect. 0 go on, 1 refused,
 * 130, 2 */
static int ends(struct bctx *b, enum verdict_kind *dir, struct strbuf *err)
{
	struct bcommit *g = &b->c[0], *bd = &b->c[b->n - 1];
	struct bisect_cmp x;
	int rc;
	for (int look = 1; look <= b->looks; look++) {
		if ((rc = measure(b, g, look, err)) || (rc = measure(b, bd, look, err)))
			return rc;
		const char *why = g->skip_why ? g->skip_why : bd->skip_why;
		if (why) {
			strbuf_addf(err, "the %s end %.12s cannot be measured: %s",
				    g->skip_why ? "good" : "bad", g->skip_why ? g->id : bd->id, why);
			return 2;
		}
		rc = bisect_judge_ends(g->v, g->n, bd->v, bd->n, &b->vo, b->alevel[look], &x, dir);
		if (rc < 0) {
			strbuf_addf(err, "comparing the ends: %s", strerror(errno));
			return 2;
		}
		if (rc == 0 || look == b->looks)
			break;
		if (!b->a->quiet)
			fprintf(stderr, "bisect: the ends do not differ clearly yet (p=%.2g, level "
				"%.2g): another round of each\n", x.v.p, b->alevel[look]);
	}
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "# good %.12s (%s): ", g->id, g->subject);
	say_measured(b, g, &sb);
	printf("%s\n", sb.buf);
	strbuf_reset(&sb);
	strbuf_addf(&sb, "# bad  %.12s (%s): ", bd->id, bd->subject);
	say_measured(b, bd, &sb);
	strbuf_addstr(&sb, "; against good ");
	cmp_text(&sb, &x);
	printf("%s\n", sb.buf);
	strbuf_release(&sb);
	json_t *dg = base_detail(b, g), *db_ = base_detail(b, bd);
	json_object_set_new(db_, "vs_good", cmp_json(&x));
	int bad = put_step(b, g, "good", "good", dg, err) ||
		  put_step(b, bd, "bad", "bad", db_, err);
	json_decref(dg);
	json_decref(db_);
	if (bad)
		return 2;
	if (!x.significant) {
		printf("# the ends do not differ by compare's rules at p < %.2g: nothing to "
		       "bisect", b->alpha_look);
		if (x.v.reps_needed)
			printf(" (inconclusive: about %zu repetitions a side would resolve a "
			       "change of %.3g%%)", x.v.reps_needed, b->vo.threshold_pct);
		printf("\n");
		json_t *r = json_pack("{s:s, s:o}", "outcome", "refused", "ends", cmp_json(&x));
		bad = finish(b, "refused", r, err);
		json_decref(r);
		return bad ? 2 : 1;
	}
	g->st = BS_GOOD;
	bd->st = BS_BAD;
	printf("git bisect start %s %s\n", bd->id, g->id);
	fflush(stdout);
	return 0;
}

/* measure and classify commit i. 0, 130, 2 */
static int step(struct bctx *b, size_t i, int nstep, enum verdict_kind dir, struct strbuf *err)
{
	struct bcommit *c = &b->c[i], *g = &b->c[0], *bd = &b->c[b->n - 1];
	if (put_step(b, c, "mid", NULL, NULL, err))
		return 2;
	struct bisect_cmp vg, vb;
	enum bisect_class cls = BC_MORE;
	const char *why = "";
	int rc, look;
	memset(&vg, 0, sizeof(vg));
	memset(&vb, 0, sizeof(vb));
	/* the drift guard's rounds of the ends beside this commit */
	double *fr[2] = { NULL, NULL }, *first = NULL;
	size_t nfr[2] = { 0, 0 }, nfirst = 0;
	int sessions0 = b->guard_sessions, drifted = -1, check_end = -1, was_drift = b->drift_mode;
	enum bisect_class first_cls = BC_MORE;
	struct bisect_cmp dc;
	memset(&dc, 0, sizeof(dc));
	for (look = 1; look <= b->looks; look++) {
		/* the ends get as many rounds as the commit, so that a second
		 * look compares like with like */
		if ((rc = measure(b, c, look, err)))
			goto fail;
		if (c->skip_why)
			break;
		if (b->drift_mode) {
			/* drift seen before: against the ends measured beside it */
			if ((rc = fresh_round(b, 0, &fr[0], &nfr[0], err)) ||
			    (rc = fresh_round(b, 1, &fr[1], &nfr[1], err)))
				goto fail;
			rc = bisect_classify(fr[0], nfr[0], fr[1], nfr[1], c->v, c->n, &b->vo,
					     b->alevel[look], dir, &vg, &vb, &cls, &why);
		} else {
			if ((rc = measure(b, g, look, err)) || (rc = measure(b, bd, look, err)))
				goto fail;
			rc = bisect_classify(g->v, g->n, bd->v, bd->n, c->v, c->n, &b->vo,
					     b->alevel[look], dir, &vg, &vb, &cls, &why);
		}
		if (rc) {
			strbuf_addf(err, "classifying %.12s: %s", c->id, strerror(errno));
			rc = 2;
			goto fail;
		}
		if (cls != BC_MORE)
			break;
		if (look < b->looks && !b->a->quiet)
			fprintf(stderr, "bisect: %.12s %s: another round (%d of at most %d)\n",
				c->id, why, look + 1, b->looks);
	}
	if (b->row.drift_guard && !b->drift_mode && !c->skip_why && cls != BC_MORE) {
		/* the end it was called like, measured again beside it, against
		 * what the call was made with */
		check_end = cls == BC_GOOD ? 0 : 1;
		struct bcommit *ce = check_end ? bd : g;
		nfirst = ce->n;
		first = xcalloc(nfirst ? nfirst : 1, sizeof(double));
		if (nfirst)
			memcpy(first, ce->v, nfirst * sizeof(double));
		if ((rc = fresh_round(b, check_end, &fr[check_end], &nfr[check_end], err)))
			goto fail;
		drifted = bisect_drifted(first, nfirst, fr[check_end], nfr[check_end], &b->vo, &dc);
		if (drifted < 0) {
			strbuf_addf(err, "the drift check of %.12s: %s", c->id, strerror(errno));
			rc = 2;
			goto fail;
		}
		if (drifted) {
			/* the other end too; the call again, against both ends as
			 * measured beside the commit */
			b->drift_mode = 1;
			first_cls = cls;
			if ((rc = fresh_round(b, 1 - check_end, &fr[1 - check_end],
					      &nfr[1 - check_end], err)))
				goto fail;
			if (bisect_classify(fr[0], nfr[0], fr[1], nfr[1], c->v, c->n, &b->vo,
					    b->alevel[look > b->looks ? b->looks : look], dir, &vg, &vb,
					    &cls, &why)) {
				strbuf_addf(err, "classifying %.12s: %s", c->id, strerror(errno));
				rc = 2;
				goto fail;
			}
		}
	}
	json_t *d = base_detail(b, c);
	const char *verdict;
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "# step %d: %.12s (%s): ", nstep, c->id, c->subject);
	if (c->skip_why) {
		c->st = BS_SKIP;
		verdict = "skip";
		strbuf_addf(&sb, "%s: skip", c->skip_why);
	} else {
		json_object_set_new(d, "vs_good", cmp_json(&vg));
		json_object_set_new(d, "vs_bad", cmp_json(&vb));
		json_object_set_new(d, "why", json_string(why));
		json_object_set_new(d, "looks", json_integer(look > b->looks ? b->looks : look));
		c->st = cls == BC_GOOD ? BS_GOOD : cls == BC_BAD ? BS_BAD : BS_UNCLEAR;
		verdict = bisect_state_name(c->st);
		say_measured(b, c, &sb);
		strbuf_addstr(&sb, "; against good ");
		cmp_text(&sb, &vg);
		strbuf_addstr(&sb, "; against bad ");
		cmp_text(&sb, &vb);
		strbuf_addf(&sb, " => %s (%s%s)", verdict, why,
			    c->st == BS_UNCLEAR ? ", after the last round: not guessed" : "");
	}
	printf("%s\n", sb.buf);
	strbuf_reset(&sb);
	int gs = b->guard_sessions - sessions0;
	if (was_drift && !c->skip_why) {
		strbuf_addf(&sb, "# step %d: drift guard: called against both ends measured again "
			    "beside it (drift seen before; %d sessions more)", nstep, gs);
		json_object_set_new(d, "drift", json_pack("{s:s, s:i}", "mode", "beside",
							  "sessions", gs));
	} else if (check_end >= 0) {
		const char *en = check_end ? "bad" : "good";
		strbuf_addf(&sb, "# step %d: drift check: the %s end measured again beside it, "
			    "n=%zu, against its first measurement (n=%zu) ", nstep, en,
			    nfr[check_end], nfirst);
		cmp_text(&sb, &dc);
		if (drifted)
			strbuf_addf(&sb, ": DRIFT; the %s end measured again too, the commit "
				    "called again against both (was %s, now %s); from here both "
				    "ends are measured beside every midpoint (%d sessions more "
				    "here)", check_end ? "good" : "bad",
				    first_cls == BC_GOOD ? "good" : "bad", verdict, gs);
		else
			strbuf_addf(&sb, ": matches (%d sessions more)", gs);
		json_t *dj = json_pack("{s:s, s:s, s:o, s:b, s:i}", "mode", "check", "end", en,
				       "vs_first", cmp_json(&dc), "drifted", drifted, "sessions",
				       gs);
		if (drifted)
			json_object_set_new(dj, "first_call",
					    json_string(first_cls == BC_GOOD ? "good" : "bad"));
		json_object_set_new(d, "drift", dj);
	}
	if (sb.len)
		printf("%s\n", sb.buf);
	printf("git bisect %s %s\n", c->st == BS_UNCLEAR ? "skip" : verdict, c->id);
	fflush(stdout);
	strbuf_release(&sb);
	int bad = put_step(b, c, "mid", verdict, d, err);
	json_decref(d);
	free(fr[0]);
	free(fr[1]);
	free(first);
	return bad ? 2 : 0;
fail:
	free(fr[0]);
	free(fr[1]);
	free(first);
	return rc;
}

/* analysis/bisect_rule.c's choice over the commits' states */
static int bisect_next_state(struct bctx *b, size_t *lo, size_t *hi)
{
	enum bisect_state *st = xcalloc(b->n, sizeof(*st));
	for (size_t i = 0; i < b->n; i++)
		st[i] = b->c[i].st;
	int m = bisect_next(st, b->n, lo, hi);
	free(st);
	return m;
}

static int walk(struct bctx *b, struct strbuf *err)
{
	enum verdict_kind dir = VERDICT_WORSE;
	printf("bisect %lld: %s.%s%s%s over %zu commits, good %.12s (%s) .. bad %.12s (%s) in %s\n",
	       (long long)b->row.id, b->wl, b->metric, b->row.where_sel[0] ? " where " : "",
	       b->row.where_sel, b->n - 1, b->row.good, b->row.good_ref, b->row.bad,
	       b->row.bad_ref, b->row.git_dir);
	if (b->row.session_runs > 0)
		printf("# a value is one session's %s (%d runs, a boot of its own on the qemu "
		       "target); %d sessions a round, at most %d a commit",
		       b->vo.centre == STATS_MEDIAN ? "median" : "centre", b->row.session_runs,
		       b->row.repetitions, b->row.max_repetitions);
	else
		printf("# a value is one run; %d runs a round, at most %d a commit",
		       b->row.repetitions, b->row.max_repetitions);
	if (!b->row.looks_exact) {
		printf(", at most %d commits between the ends; a difference counts when compare's "
		       "rule (threshold %.3g%%) holds and the Mann-Whitney p < %.2g (alpha %.3g over "
		       "%d steps x %d rounds)\n", b->row.max_steps, b->row.threshold_pct,
		       b->alpha_look, b->row.alpha, b->row.max_steps, b->looks);
	} else {
		printf(", at most %d commits between the ends; a difference counts when compare's "
		       "rule (threshold %.3g%%) holds and the Mann-Whitney p < ", b->row.max_steps,
		       b->row.threshold_pct);
		for (int k = 1; k <= b->looks; k++)
			printf("%s%.2g", k > 1 ? (k == b->looks ? " and " : ", ") : "", b->alevel[k]);
		printf(" at round%s %s%d (alpha %.3g over %d steps; a step's rounds share its "
		       "alpha / %d by exact group-sequential levels)\n", b->looks > 1 ? "s" : "",
		       b->looks > 1 ? "1.." : "", b->looks, b->row.alpha, b->row.max_steps,
		       b->row.max_steps);
	}
	if (b->row.drift_guard)
		printf("# drift guard: after each call the end it was called like is measured "
		       "again beside it (%d sessions); if it no longer matches its first "
		       "measurement, both ends are measured beside every midpoint from then on\n",
		       sessions_for(b, 1));
	fflush(stdout);
	int rc = ends(b, &dir, err);
	if (rc)
		return rc;
	int nstep = 0;
	size_t lo, hi;
	int m;
	while ((m = bisect_next_state(b, &lo, &hi)) >= 0) {
		if (nstep >= b->row.max_steps)
			break;
		if ((rc = step(b, (size_t)m, ++nstep, dir, err)))
			return rc;
	}
	/* the ends with every round they got (a step may have asked for more) */
	{
		struct bcommit *g = &b->c[0], *bd = &b->c[b->n - 1];
		struct bisect_cmp x;
		enum verdict_kind d2;
		if (load_values(b, g, -1, err) || load_values(b, bd, -1, err))
			return 2;
		bisect_judge_ends(g->v, g->n, bd->v, bd->n, &b->vo, b->alpha_look, &x, &d2);
		json_t *dg = base_detail(b, g), *dbd = base_detail(b, bd);
		json_object_set_new(dbd, "vs_good", cmp_json(&x));
		int bad = put_step(b, g, "good", "good", dg, err) ||
			  put_step(b, bd, "bad", "bad", dbd, err);
		json_decref(dg);
		json_decref(dbd);
		if (bad)
			return 2;
	}
	/* the outcome */
	bisect_next_state(b, &lo, &hi);
	json_t *r = json_object();
	json_t *cand = json_array();
	for (size_t i = lo + 1; i <= hi; i++)
		json_array_append_new(cand, json_string(b->c[i].id));
	json_object_set_new(r, "candidates", cand);
	struct bcommit *fb = &b->c[hi];
	int found = hi == lo + 1;
	if (found && load_values(b, fb, -1, err))
		return 2;
	if (found) {
		/* the effect of the first bad commit: it against the good end */
		struct bisect_cmp x;
		enum verdict_kind d2;
		struct bcommit *g = &b->c[0];
		bisect_judge_ends(g->v, g->n, fb->v, fb->n, &b->vo, b->alpha_look, &x, &d2);
		struct strbuf sb = STRBUF_INIT;
		cmp_text(&sb, &x);
		printf("# first bad commit: %s (%s)\n# its effect against good: %s (n=%zu and "
		       "%zu)\n", fb->id, fb->subject, sb.buf, g->n, fb->n);
		printf("%s is the first bad commit\n", fb->id);
		strbuf_release(&sb);
		json_object_set_new(r, "outcome", json_string("found"));
		json_object_set_new(r, "first_bad", json_string(fb->id));
		json_object_set_new(r, "subject", json_string(fb->subject));
		json_object_set_new(r, "effect", cmp_json(&x));
	} else {
		int more = bisect_next_state(b, &lo, &hi) >= 0;
		printf("# %s: the first bad commit is one of these %zu:\n",
		       more ? "--max-steps reached" : "skipped or unclear commits are left",
		       hi - lo);
		for (size_t i = lo + 1; i <= hi; i++)
			printf("#   %s %-8s %s\n", b->c[i].id, bisect_state_name(b->c[i].st),
			       b->c[i].subject);
		json_object_set_new(r, "outcome", json_string(more ? "max-steps" : "ambiguous"));
	}
	json_object_set_new(r, "steps", json_integer(nstep));
	if (b->row.drift_guard) {
		printf("# drift guard: %d sessions more than without it; %s\n", b->guard_sessions,
		       b->drift_mode ? "drift was seen, the later calls were made against the "
				       "ends measured beside each commit"
				     : "no drift seen");
		json_object_set_new(r, "drift_guard",
				    json_pack("{s:i, s:b}", "sessions", b->guard_sessions,
					      "drift_seen", b->drift_mode));
	}
	rc = finish(b, "done", r, err) ? 2 : found ? 0 : 1;
	json_decref(r);
	fflush(stdout);
	return rc;
}

/* ------------------------------------------------------------ the setup */

/* the plan with its kernel's ref (and what resolving it added) taken out,
 * canonical: the template of every step, and part of the inputs' key */
static json_t *template_of(json_t *root)
{
	json_t *t = json_deep_copy(root);
	json_t *k = git_kernel(t);
	const char *drop[] = { "ref", "commit", "describe", "image", "fetch" };
	for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
		json_object_del(k, drop[i]);
	return t;
}

static char *inputs_key(const struct bctx *b)
{
	char *pj = json_dumps(b->tmpl, JSON_COMPACT | JSON_SORT_KEYS);
	char *txt = xstrfmt("schedlab-bisect 1\nplan %s\ngood %s\nbad %s\nmetric %s\n"
			    "where %s\nreps %d %d\nsteps %d\nalpha %.17g\nthreshold %.17g\n"
			    "session_runs %d\n",
			    pj, b->row.good, b->row.bad, b->row.metric, b->row.where_sel,
			    b->row.repetitions, b->row.max_repetitions, b->row.max_steps,
			    b->row.alpha, b->row.threshold_pct, b->row.session_runs);
	if (b->row.drift_guard) {
		/* only when set: a bisection without the guard keeps its key */
		char *t2 = xstrfmt("%sdrift_guard 1\n", txt);
		free(txt);
		txt = t2;
	}
	if (b->a->source == VERDICT_SOURCE_DETERMINISTIC) {
		/* likewise: exact data decide otherwise */
		char *t2 = xstrfmt("%ssource deterministic\n", txt);
		free(txt);
		txt = t2;
	}
	char hex[65];
	sha256_hex_of(txt, strlen(txt), hex);
	free(txt);
	free(pj);
	return xstrdup(hex);
}

/* "WORKLOAD.METRIC" into b->wl and b->metric */
static int split_metric(struct bctx *b, const char *m, struct strbuf *err)
{
	const char *dot = m ? strchr(m, '.') : NULL;
	if (!dot || dot == m || !dot[1]) {
		strbuf_addf(err, "--metric %s: expected WORKLOAD.METRIC (e.g. "
			    "pingpong.req_p50_us; `schedlab query \"SELECT DISTINCT workload, "
			    "metric FROM results\"` lists them)", m ? m : "(none)");
		return -1;
	}
	b->wl = xstrfmt("%.*s", (int)(dot - m), m);
	b->metric = xstrdup(dot + 1);
	return 0;
}

/* a new bisection from the command line: plan, range, defaults, row */
/* a plan whose target runs a virtual clock (docs/virtual-time.md) is a
 * deterministic source: one value a side decides a step */
static int plan_virtual(const json_t *plan)
{
	return target_clock_virtual(json_object_get(plan, "target"));
}

static void source_of_plan(const json_t *tmpl, struct bisect_args *a)
{
	if (plan_virtual(tmpl))
		a->source = VERDICT_SOURCE_DETERMINISTIC;
}

static int setup_new(struct bctx *b, struct strbuf *err)
{
	const struct bisect_args *a = b->a;
	struct plan p;
	memset(&p, 0, sizeof(p));
	int ret = -1;
	if (!a->plan_path || !a->good || !a->bad || !a->metric) {
		strbuf_addstr(err, "a new bisection needs --plan, --good, --bad and --metric "
			      "(or --resume last)");
		return -1;
	}
	if (split_metric(b, a->metric, err))
		return -1;
	if (plan_load(a->plan_path, &p, err))
		goto out;
	json_t *k = git_kernel(p.root);
	if (!k) {
		strbuf_addf(err, "%s: matrix.kernel: bisect needs exactly one kernel, from git "
			    "({\"git\": DIR, \"ref\": ..., \"variant\": [...]}: "
			    "docs/kernels.md); its ref is replaced by each commit measured",
			    a->plan_path);
		goto out;
	}
	int wl_ok = 0;
	for (size_t i = 0; i < p.nwl; i++)
		wl_ok |= !strcmp(json_string_value(json_object_get(p.wl[i].params, "type")),
				 b->wl);
	if (!wl_ok) {
		strbuf_addf(err, "--metric %s: the plan %s runs no %s workload", a->metric,
			    a->plan_path, b->wl);
		goto out;
	}
	const struct workload_ops *wops = workload_find(b->wl);
	if (wops && !workload_metric_known(wops, b->metric)) {
		strbuf_addf(err, "--metric %s: %s has no metric \"%s\" (valid: ", a->metric, b->wl,
			    b->metric);
		workload_metric_names(wops, err);
		strbuf_addstr(err, "; \"*\" stands for a task name or CPU number, "
			      "docs/metrics.md)");
		goto out;
	}
	b->tmpl = template_of(p.root);
	b->row.plan_path = xstrdup(a->plan_path);
	b->row.good_ref = xstrdup(a->good);
	b->row.bad_ref = xstrdup(a->bad);
	if (!(b->row.good = resolve(b, k, a->good, 1, "--good", &b->row.git_dir, err)) ||
	    !(b->row.bad = resolve(b, k, a->bad, 0, "--bad", NULL, err)))
		goto out;
	json_object_set_new(git_kernel(b->tmpl), "git", json_string(b->row.git_dir));
	if (!strcmp(b->row.good, b->row.bad)) {
		strbuf_addf(err, "--good %s and --bad %s are the same commit %.12s", a->good,
			    a->bad, b->row.good);
		goto out;
	}
	b->row.where_sel = xstrdup(a->where ? a->where : "");
	b->row.workload = xstrdup(b->wl);
	b->row.metric = xstrdup(a->metric);
	if (load_range(b, err))
		goto out;
	/* the defaults: room for a few skips beyond log2 of the candidates; a
	 * round big enough that a clear difference can pass the per-look
	 * level at the first look */
	size_t cand = b->n - 2;
	int steps = 0;
	while (((size_t)1 << steps) < cand + 1)
		steps++;
	b->row.max_steps = a->max_steps > 0 ? a->max_steps : (cand ? steps + 3 : 0);
	b->row.alpha = a->alpha > 0 ? a->alpha : DEFAULT_ALPHA;
	b->row.threshold_pct = a->threshold_pct > 0 ? a->threshold_pct
						    : VERDICT_DEFAULT_THRESHOLD_PCT;
	b->row.drift_guard = a->drift_guard;
	b->row.looks_exact = 1;
	b->row.session_runs = a->unit_run ? 0 : a->session_runs > 0 ? a->session_runs
								  : DEFAULT_SESSION_RUNS;
	/* a deterministic source: one value a side decides (its p is 0) */
	int exact = a->source == VERDICT_SOURCE_DETERMINISTIC || plan_virtual(p.root);
	int reps = a->repetitions > 0 ? a->repetitions : exact ? 1 : DEFAULT_REPS;
	for (;;) {
		int maxr = a->max_repetitions > 0 ? a->max_repetitions : 3 * reps;
		double al = bisect_alpha_look(b->row.alpha, b->row.max_steps ? b->row.max_steps : 1,
					      reps, maxr);
		if (a->repetitions > 0 || exact || verdict_separation_p(reps, reps) < al ||
		    reps >= 50) {
			b->row.repetitions = reps;
			b->row.max_repetitions = maxr < reps ? reps : maxr;
			break;
		}
		reps++;
	}
	/* a decision needs p < alpha_look; the smallest p two sides of
	 * max_repetitions values can give is that of a complete separation
	 * (2 / C(2n, n), exact Mann-Whitney): a level below it can never be
	 * reached, and every commit would end unclear after all its rounds.
	 * (Checked, as the round's size above is chosen, with Bonferroni's
	 * level, the smaller: it may refuse a setting the exact levels could
	 * just reach, never accept one they cannot; and the same command keeps
	 * finding the same bisection.) */
	{
		int n = b->row.max_repetitions;
		double al = bisect_alpha_look(b->row.alpha, b->row.max_steps ? b->row.max_steps : 1,
					      b->row.repetitions, n);
		double pmin = verdict_separation_p((size_t)n, (size_t)n);
		if (!(pmin < al) && !exact) {
			strbuf_addf(err, "--alpha %g: no commit could ever be decided: a difference "
				    "counts when the Mann-Whitney p is below alpha / (%d steps x %d "
				    "looks) = %.3g, and the smallest p of %d values against %d is "
				    "%.3g; give --alpha above %.3g or more --max-repetitions "
				    "(docs/bisect.md)", b->row.alpha,
				    b->row.max_steps ? b->row.max_steps : 1,
				    (n + b->row.repetitions - 1) / b->row.repetitions, al, n, n, pmin,
				    b->row.alpha * pmin / al);
			goto out;
		}
	}
	b->row.inputs = NULL;
	ret = 0;
out:
	plan_release(&p);
	return ret;
}

/* "--where W: " before select.c's message */
static void where_error(const struct bctx *b, struct strbuf *err)
{
	struct strbuf e2 = STRBUF_INIT;
	strbuf_addf(&e2, "--where %s: %s", b->row.where_sel, err->buf);
	strbuf_reset(err);
	strbuf_addstr(err, e2.buf);
	strbuf_release(&e2);
}

int bisect_main(const struct bisect_args *args, struct strbuf *err)
{
	struct bctx b;
	struct bisect_args acopy = *args;
	const struct bisect_args *a = &acopy;
	memset(&b, 0, sizeof(b));
	b.a = a;
	b.lock_fd = -1;
	int rc = 2;
	b.db = a->db;
	if (a->resume) {
		if (db_bisect_load(b.db, a->resume, &b.row)) {
			strbuf_addf(err, "--resume %s: %s", a->resume, db_errmsg(b.db));
			goto out;
		}
		b.tmpl = json_loads(b.row.plan_json, 0, NULL);
		if (!b.tmpl || !git_kernel(b.tmpl)) {
			strbuf_addf(err, "bisection %lld: its stored plan is not readable",
				    (long long)b.row.id);
			goto out;
		}
		source_of_plan(b.tmpl, &acopy);
		if (split_metric(&b, b.row.metric, err) || load_range(&b, err))
			goto out;
	} else {
		if (setup_new(&b, err))
			goto out;
		source_of_plan(b.tmpl, &acopy);
		/* a bad --where is refused before the bisection is stored */
		if (a->values.check(a->values.ctx, b.db, b.row.where_sel, err)) {
			where_error(&b, err);
			goto out;
		}
		b.row.inputs = inputs_key(&b);
		b.row.plan_json = json_dumps(b.tmpl, JSON_COMPACT);
		int existed = 0;
		b.row.id = db_bisect_create(b.db, &b.row, &existed);
		if (b.row.id < 0) {
			strbuf_addstr(err, db_errmsg(b.db));
			goto out;
		}
		if (existed) {
			/* a bisection stored before thresholds were symmetric keeps
			 * its rule (schema 12) */
			struct db_bisect old;
			char idb[32];
			snprintf(idb, sizeof(idb), "%lld", (long long)b.row.id);
			if (!db_bisect_load(b.db, idb, &old)) {
				b.row.threshold_percent = old.threshold_percent;
				/* and its looks' levels (schema 13) */
				b.row.looks_exact = old.looks_exact;
				db_bisect_free(&old);
			}
		}
		if (existed && !a->quiet)
			fprintf(stderr, "bisect: the same inputs as bisection %lld: its stored "
				"measurements are reused\n", (long long)b.row.id);
	}
	b.tag = xstrfmt("bisect-%lld", (long long)b.row.id);
	b.looks = (b.row.max_repetitions + b.row.repetitions - 1) / b.row.repetitions;
	b.alevel = xcalloc((size_t)b.looks + 1, sizeof(double));
	for (int k = 1; k <= b.looks; k++) {
		b.alevel[k] = bisect_alpha_at(b.row.looks_exact, b.row.alpha,
					      b.row.max_steps ? b.row.max_steps : 1, b.looks, k);
		if (!(b.alevel[k] >= 0)) {
			strbuf_addstr(err, "the levels of the looks: out of memory");
			goto out;
		}
	}
	b.alpha_look = b.alevel[b.looks];
	/* until a value says otherwise (load_values sets the metric's own) */
	verdict_options_default(&b.vo, VERDICT_LOWER_IS_BETTER);
	b.vo.source = a->source;
	if (a->values.check(a->values.ctx, b.db, b.row.where_sel, err)) {
		where_error(&b, err);
		goto out;
	}
	if (lock_bisection(&b, err))
		goto out;
	/* the target machine for the whole bisection (tlock.h): no other
	   session measures there between two of ours */
	{
		json_t *t = json_object_get(b.tmpl, "target");
		json_t *tobj = json_is_string(t) ? target_spec_parse(json_string_value(t), err)
						 : json_incref(t);
		if (json_is_string(t) && !tobj)
			goto out;
		b.lock_key = tlock_key(tobj, NULL);
		json_decref(tobj);
		char *what = xstrfmt("schedlab bisect, bisection %lld", (long long)b.row.id);
		int lrc = b.lock_key ? tlock_take(b.lock_key, what, NULL, a->abort_flag, err) : 0;
		free(what);
		if (lrc) {
			free(b.lock_key);
			b.lock_key = NULL;
			rc = aborted(&b) ? 130 : 2;
			goto out;
		}
	}
	if (db_bisect_steps(b.db, b.row.id, &b.stored, &b.nstored)) {
		strbuf_addstr(err, db_errmsg(b.db));
		goto out;
	}
	for (size_t i = 0; i < b.n; i++) {
		const struct db_bisect_step *st = stored_step(&b, &b.c[i]);
		json_t *d = st && st->detail ? json_loads(st->detail, 0, NULL) : NULL;
		json_t *bs = json_object_get(d, "build_s");
		if (bs)
			b.c[i].build_prev = json_number_value(bs);
		json_decref(d);
	}
	if (db_bisect_finish(b.db, b.row.id, "running", NULL)) {
		strbuf_addstr(err, db_errmsg(b.db));
		goto out;
	}
	if (!a->quiet && a->resume)
		fprintf(stderr, "bisect: resuming bisection %lld (%s): %zu steps stored\n",
			(long long)b.row.id, b.row.status, b.nstored);
	rc = walk(&b, err);
	if (rc == 130 || rc == 2) {
		json_t *r = json_pack("{s:s, s:s}", "outcome", rc == 130 ? "interrupted" : "error",
				      "message", err->buf);
		finish(&b, rc == 130 ? "interrupted" : "failed", r, err);
		json_decref(r);
		if (rc == 130 && !a->quiet)
			fprintf(stderr, "bisect: interrupted; schedlab bisect --resume %lld "
				"continues it (nothing measured is lost)\n", (long long)b.row.id);
	}
out:
	for (size_t i = 0; i < b.n; i++) {
		free(b.c[i].id);
		free(b.c[i].subject);
		free(b.c[i].v);
		free(b.c[i].runv);
		free(b.c[i].skip_why);
		json_decref(b.c[i].sessions);
	}
	free(b.c);
	free(b.alevel);
	db_bisect_steps_free(b.stored, b.nstored);
	tlock_release(b.lock_key);
	free(b.lock_key);
	json_decref(b.tmpl);
	free(b.tag);
	free(b.wl);
	free(b.metric);
	db_bisect_free(&b.row);
	if (b.lock_fd >= 0)
		close(b.lock_fd);
	return rc;
}
