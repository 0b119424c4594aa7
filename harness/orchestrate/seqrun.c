/*
 * Sequential repetitions in a session: the values stored so far, grouped
 * into cells (configuration x workload series x metric), the pairs of
 * configurations looked at after each round, and which runs are still
 * needed (seqrun.h). The statistics are analysis/sequential.c's.
 */
#include "harness/orchestrate/seqrun.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sequential.h"
#include "db/results.h"
#include "harness/targets/target.h"
#include "harness/util/numfmt.h"
#include "harness/util/strbuf.h"
#include "workloads/workload.h"

struct cell {                   /* one configuration, series and metric */
	int cfg;
	char *knobs, *workload, *params, *metric;
	int lower_better;
	double *v;
	unsigned char *c;
	size_t n, alloc;
};

struct pair_state {             /* a pair of configurations for one series */
	size_t a, b;            /* cells of the first metric looked at */
	int decided;            /* every metric decided (or stopped undecided) */
	int futile;             /* a metric stopped undecided (exact design) */
	int n;                  /* rounds looked at */
	char *text;             /* what was decided */
};

/*
 * A metric's decision for a pair, kept from the look that made it: the
 * group-sequential design stops at the first crossing, so a decided (or
 * futility-stopped) metric is never looked at again, even when the pair's
 * configurations keep running for their other pairs or metrics, and its
 * decision is announced once, as made.
 */
struct kept {
	char *key;              /* series, both configurations, metric */
	char *text;             /* the look's words */
	int r, n;               /* look()'s result, rounds looked at */
};

struct seqrun {
	const struct plan *p;
	struct cell *cells;
	size_t ncells, acells;
	struct pair_state *pairs;
	size_t npairs;
	struct strvec said;     /* pair decisions already announced */
	struct kept *kept;      /* metric decisions made so far */
	size_t nkept;
	int rounds_seen;        /* the most rounds any cell has */
	char *capped;           /* the wall-time cap's reason once reached, else NULL */
	int cap_rounds;         /* rounds begun before the cap stopped them */
	size_t cap_open;        /* pairs the cap left undecided */
	int ndistinct_knobs, ndistinct_cfgs;
};

struct seqrun *seqrun_new(const struct plan *p)
{
	struct seqrun *s = xcalloc(1, sizeof(*s));
	s->p = p;
	return s;
}

static void cells_clear(struct seqrun *s)
{
	for (size_t i = 0; i < s->ncells; i++) {
		struct cell *c = &s->cells[i];
		free(c->knobs);
		free(c->workload);
		free(c->params);
		free(c->metric);
		free(c->v);
		free(c->c);
	}
	s->ncells = 0;
	for (size_t i = 0; i < s->npairs; i++)
		free(s->pairs[i].text);
	free(s->pairs);
	s->pairs = NULL;
	s->npairs = 0;
}

void seqrun_free(struct seqrun *s)
{
	if (!s)
		return;
	cells_clear(s);
	free(s->cells);
	strvec_clear(&s->said);
	for (size_t i = 0; i < s->nkept; i++) {
		free(s->kept[i].key);
		free(s->kept[i].text);
	}
	free(s->kept);
	free(s->capped);
	free(s);
}

/* is metric m of workload w one the design looks at? */
static int watched(const struct plan *p, const char *w, const char *m)
{
	if (!p->seq_metrics.nr) {
		const struct workload_ops *ops = workload_find(w);
		return ops && ops->primary && !strcmp(ops->primary, m);
	}
	size_t lw = strlen(w);
	for (size_t i = 0; i < p->seq_metrics.nr; i++) {
		const char *s = p->seq_metrics.v[i];
		if (!strncmp(s, w, lw) && s[lw] == '.' && !strcmp(s + lw + 1, m))
			return 1;
	}
	return 0;
}

static int cell_is(const struct cell *c, int cfg, const char *knobs, const char *w,
		   const char *params, const char *m)
{
	return c->cfg == cfg && !strcmp(c->knobs, knobs) && !strcmp(c->workload, w) &&
	       !strcmp(c->params, params) && (!m || !strcmp(c->metric, m));
}

static int add_value(void *ctx, const struct db_session_value *v)
{
	struct seqrun *s = ctx;
	if (!watched(s->p, v->workload, v->metric))
		return 0;
	struct cell *c = NULL;
	for (size_t i = 0; i < s->ncells && !c; i++)
		if (cell_is(&s->cells[i], v->cfg, v->knobs, v->workload, v->params, v->metric))
			c = &s->cells[i];
	if (!c) {
		if (s->ncells == s->acells) {
			s->acells = s->acells ? 2 * s->acells : 16;
			s->cells = xrealloc(s->cells, s->acells * sizeof(*s->cells));
		}
		c = &s->cells[s->ncells++];
		memset(c, 0, sizeof(*c));
		c->cfg = v->cfg;
		c->knobs = xstrdup(v->knobs);
		c->workload = xstrdup(v->workload);
		c->params = xstrdup(v->params);
		c->metric = xstrdup(v->metric);
		c->lower_better = strcmp(v->better, "higher") != 0;
	}
	if (c->n == c->alloc) {
		c->alloc = c->alloc ? 2 * c->alloc : 8;
		c->v = xrealloc(c->v, c->alloc * sizeof(double));
		c->c = xrealloc(c->c, c->alloc);
	}
	c->v[c->n] = v->value;
	c->c[c->n++] = (unsigned char)v->censored;
	if ((int)c->n > s->rounds_seen)
		s->rounds_seen = (int)c->n;
	return 0;
}

/* "B2", "knobs {...}" or both: what tells configurations apart */
static char *config_label(const struct seqrun *s, const struct cell *c)
{
	if (s->ndistinct_knobs > 1 && s->ndistinct_cfgs > 1)
		return xstrfmt("B%d knobs %.60s", c->cfg + 1, c->knobs);
	if (s->ndistinct_knobs > 1)
		return xstrfmt("knobs %.60s", c->knobs);
	return xstrfmt("B%d", c->cfg + 1);
}

static int count_cfgs(const struct seqrun *s)
{
	int n = 0;
	for (size_t i = 0; i < s->ncells; i++) {
		size_t j = 0;
		while (j < i && s->cells[j].cfg != s->cells[i].cfg)
			j++;
		n += j == i;
	}
	return n;
}

static int count_knobs(const struct seqrun *s)
{
	int n = 0;
	for (size_t i = 0; i < s->ncells; i++) {
		size_t j = 0;
		while (j < i && strcmp(s->cells[j].knobs, s->cells[i].knobs))
			j++;
		n += j == i;
	}
	return n;
}

/* the look at cells a and b (same series and metric): 1 decided, 2
 * stopped undecided (futility), 0 not; the decision appended to text */
static int look(const struct seqrun *s, const struct cell *a, const struct cell *b,
		struct strbuf *text, int *n)
{
	struct seq_look l;
	/* a virtual clock is a deterministic source (docs/virtual-time.md):
	 * exact data are decided at min */
	struct seq_design d = s->p->seq;
	if (target_clock_virtual(s->p->target))
		d.source = VERDICT_SOURCE_DETERMINISTIC;
	seq_evaluate(&d, a->v, a->n, b->v, b->n, a->c, b->c, a->lower_better, &l);
	*n = l.n;
	if (l.decision == SEQ_CONTINUE)
		return 0;
	char ch[32], lo[32], hi[32];
	snprintf(ch, sizeof(ch), "%+.1f%%", l.change_pct);
	snprintf(lo, sizeof(lo), "%+.1f", l.lo_pct);
	snprintf(hi, sizeof(hi), "%+.1f", l.hi_pct);
	if (l.decision == SEQ_FUTILE) {
		/* the exact design's futility stop: no decision, no more rounds */
		strbuf_addf(text, "%s%s undecided, %s [%s, %s] at %.4g%%: stopped, %s (%d rounds)",
			    text->len ? "; " : "", a->metric, ch, lo, hi, 100 * (1 - l.alpha),
			    l.why, s->p->seq.max);
		return 2;
	}
	strbuf_addf(text, "%s%s %s %s [%s, %s] at %.4g%%", text->len ? "; " : "", a->metric,
		    l.decision == SEQ_EQUIVALENT ? "equivalent," : l.worse ? "worse" : "better",
		    ch, lo, hi, 100 * (1 - l.alpha));
	if (l.decision == SEQ_EQUIVALENT)
		strbuf_addf(text, " (within %g%%)", s->p->seq.threshold_pct);
	if (l.exact)
		strbuf_addstr(text, l.exact == VERDICT_EXACT_NEAR ? " (near-exact data)"
								 : " (exact data)");
	return 1;
}

/* the key of metric m's look at configurations a and b of one series, the
 * same whichever of the two comes first */
static char *kept_key(const struct cell *a, const struct cell *b, const char *m)
{
	int swap = a->cfg > b->cfg || (a->cfg == b->cfg && strcmp(a->knobs, b->knobs) > 0);
	const struct cell *x = swap ? b : a, *y = swap ? a : b;
	return xstrfmt("%s\x1f%s\x1f%d\x1f%s\x1f%d\x1f%s\x1f%s", x->workload, x->params, x->cfg,
		       x->knobs, y->cfg, y->knobs, m);
}

static const struct kept *kept_find(const struct seqrun *s, const char *key)
{
	for (size_t i = 0; i < s->nkept; i++)
		if (!strcmp(s->kept[i].key, key))
			return &s->kept[i];
	return NULL;
}

int seqrun_update(struct seqrun *s, struct db *db, int64_t sid, struct strvec *said,
		  struct strbuf *err)
{
	cells_clear(s);
	s->rounds_seen = 0;
	if (db_session_values(db, sid, add_value, s)) {
		strbuf_addf(err, "database: %s", db_errmsg(db));
		return -1;
	}
	s->ndistinct_knobs = count_knobs(s);
	s->ndistinct_cfgs = count_cfgs(s);
	/* pairs: cells of one series and metric in two configurations; the
	 * pair state is per (series, two configurations) over all metrics */
	for (size_t i = 0; i < s->ncells; i++)
		for (size_t j = i + 1; j < s->ncells; j++) {
			const struct cell *a = &s->cells[i], *b = &s->cells[j];
			if (strcmp(a->workload, b->workload) || strcmp(a->params, b->params) ||
			    (a->cfg == b->cfg && !strcmp(a->knobs, b->knobs)))
				continue;
			/* one pair state per series and two configurations,
			 * over all of their metrics */
			int seen = 0;
			for (size_t k = 0; k < s->npairs && !seen; k++) {
				const struct cell *pa = &s->cells[s->pairs[k].a],
						  *pb = &s->cells[s->pairs[k].b];
				seen = (cell_is(pa, a->cfg, a->knobs, a->workload, a->params, NULL) &&
					cell_is(pb, b->cfg, b->knobs, b->workload, b->params, NULL)) ||
				       (cell_is(pa, b->cfg, b->knobs, b->workload, b->params, NULL) &&
					cell_is(pb, a->cfg, a->knobs, a->workload, a->params, NULL));
			}
			if (seen)
				continue;
			s->pairs = xrealloc(s->pairs, (s->npairs + 1) * sizeof(*s->pairs));
			struct pair_state *ps = &s->pairs[s->npairs++];
			memset(ps, 0, sizeof(*ps));
			ps->a = i;
			ps->b = j;
			struct strbuf text = STRBUF_INIT;
			int decided = 1, n = 0;
			for (size_t x = 0; x < s->ncells; x++) {
				const struct cell *ca = &s->cells[x];
				if (!cell_is(ca, a->cfg, a->knobs, a->workload, a->params, NULL))
					continue;
				const struct cell *cb = NULL;
				for (size_t y = 0; y < s->ncells && !cb; y++)
					if (cell_is(&s->cells[y], b->cfg, b->knobs, b->workload,
						    b->params, ca->metric))
						cb = &s->cells[y];
				int nn = 0, r = 0;
				if (cb) {
					char *key = kept_key(ca, cb, ca->metric);
					const struct kept *k = kept_find(s, key);
					if (k) {
						strbuf_addf(&text, "%s%s", text.len ? "; " : "",
							    k->text);
						r = k->r;
						nn = k->n;
						free(key);
					} else {
						struct strbuf one = STRBUF_INIT;
						r = look(s, ca, cb, &one, &nn);
						strbuf_addf(&text, "%s%s", text.len && one.len ? "; " : "",
							    one.buf);
						if (r) {
							s->kept = xrealloc(s->kept, (s->nkept + 1) *
										  sizeof(*s->kept));
							s->kept[s->nkept++] = (struct kept){
								key, strbuf_detach(&one, NULL), r, nn };
						} else {
							free(key);
							strbuf_release(&one);
						}
					}
				}
				if (!r)
					decided = 0;
				if (r == 2)
					ps->futile = 1;
				if (nn > n)
					n = nn;
			}
			ps->decided = decided;
			ps->n = n;
			char *la = config_label(s, a), *lb = config_label(s, b);
			ps->text = xstrfmt("%s %s vs %s: %s", a->workload, la, lb, text.buf);
			free(la);
			free(lb);
			strbuf_release(&text);
			if (decided) {
				size_t k = 0;
				while (k < s->said.nr && strcmp(s->said.v[k], ps->text))
					k++;
				if (k == s->said.nr) {
					strvec_push(&s->said, ps->text);
					strvec_pushf(said, "decided after %d rounds: %s", ps->n,
						     ps->text);
				}
			}
		}
	return 0;
}

int seqrun_cap(struct seqrun *s, int round, double elapsed_s)
{
	if (s->capped)
		return 0;
	for (size_t i = 0; i < s->npairs; i++)
		s->cap_open += !s->pairs[i].decided;
	s->cap_rounds = round;
	s->capped = xstrfmt("stopped at the wall-time cap (repetitions.max_wall_s %g s; %.0f s "
			    "gone) after %d rounds: %zu of %zu pairs undecided", s->p->seq_max_wall_s,
			    elapsed_s, round, s->cap_open, s->npairs);
	return 1;
}

int seqrun_needed(const struct seqrun *s, int cfg, const char *knobs, const char *workload,
		  const char *params, const char **why)
{
	int in_pair = 0;
	if (s->capped) {
		*why = s->capped;
		return 0;
	}
	const struct pair_state *last = NULL;
	for (size_t i = 0; i < s->npairs; i++) {
		const struct pair_state *ps = &s->pairs[i];
		const struct cell *a = &s->cells[ps->a], *b = &s->cells[ps->b];
		if (!cell_is(a, cfg, knobs, workload, params, NULL) &&
		    !cell_is(b, cfg, knobs, workload, params, NULL))
			continue;
		in_pair = 1;
		if (!ps->decided)
			return 1;
		last = ps;
	}
	if (!in_pair)
		return 1;   /* nothing to compare it with (yet): run it */
	*why = last->text;
	return 0;
}

void seqrun_summary(const struct seqrun *s, size_t skipped, struct strbuf *out)
{
	size_t decided = 0, futile = 0;
	for (size_t i = 0; i < s->npairs; i++) {
		decided += s->pairs[i].decided && !s->pairs[i].futile;
		futile += s->pairs[i].decided && s->pairs[i].futile;
	}
	strbuf_addf(out, "sequential repetitions: %zu of %zu pairs decided", decided, s->npairs);
	if (futile)
		strbuf_addf(out, ", %zu stopped undecided (not decidable by max)", futile);
	if (s->capped)
		strbuf_addf(out, ", %zu left undecided by the wall-time cap (%g s, reached after %d "
			    "rounds)", s->cap_open, s->p->seq_max_wall_s, s->cap_rounds);
	strbuf_addf(out, ", at most %d of %d rounds run; %zu runs skipped as %s",
		    s->rounds_seen, s->p->seq.max, skipped,
		    s->capped ? "decided, stopped or past the cap"
			      : futile ? "decided or stopped" : "decided");
}
