/*
 * The culprit of an alert group (docs/alerts.md): the commit the robot
 * names, as one struct with one encoder and one decoder. The JSON text
 * is what alert_group.culprit stores; the culprit report, the night's
 * summary, the HTML report and `schedlab alerts` read it through
 * db_culprit_decode() only.
 */
#ifndef SL_DB_CULPRIT_H
#define SL_DB_CULPRIT_H

#include <stddef.h>
#include <stdint.h>

/* one commit the bisection measured */
struct db_culprit_step {
	char *commit, *role, *verdict, *why;
};

struct db_culprit {
	char *commit;                /* the first bad commit (never NULL once decoded) */
	char *subject, *author;      /* from git: any bytes (made UTF-8 when stored) */
	char *why;                   /* without a bisection: why ("the range holds this
					one commit"), else NULL */
	double change_pct;           /* its effect against the good end; NAN unknown */
	double ci_lo, ci_hi, p;      /* NAN unknown */
	int64_t bisect_id;           /* 0: no bisection */
	double error_bound;          /* the bisection's error rate bound; NAN unknown */
	struct db_culprit_step *steps;
	size_t nsteps;
	long builds, boots;          /* -1 unknown */
};

/* an empty culprit (numbers unknown) */
void db_culprit_init(struct db_culprit *c);
void db_culprit_free(struct db_culprit *c);
/* c as the stored JSON text (malloc'd). A string that is not valid UTF-8
 * (a repository whose log is ISO-8859-1) is stored with each of its bytes
 * as the Latin-1 character of that value, never dropped. NULL only when c
 * has no commit or memory ran out. */
char *db_culprit_encode(const struct db_culprit *c);
/* the stored text back: 0, or -1 (c emptied) when it is not a culprit */
int db_culprit_decode(const char *json, struct db_culprit *c);

#endif
