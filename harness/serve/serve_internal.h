/*
 * What the parts of serve share: a request as the pages see it, the JSON
 * and HTML helpers (serve_html.c), the pages (serve_pages.c), the two
 * writes (serve_triage.c: a move; serve_bisect.c: a bisection started).
 */
#ifndef SL_SERVE_INTERNAL_H
#define SL_SERVE_INTERNAL_H

#include <jansson.h>
#include <stdint.h>
#include <sys/socket.h>

#include "db/db.h"
#include "harness/serve/serve.h"
#include "harness/util/html.h"
#include "harness/util/strbuf.h"

/* a request as a page sees it */
struct robot_bg;

struct page {
	const struct serve_opts *o;
	struct robot_bg *bg;                       /* the bisections started here (robot_bg.h) */
	const char *path;                          /* "/trend" */
	const char *(*arg)(void *cls, const char *name);  /* a query argument or NULL */
	void *cls;
	/* what the page makes */
	int status;                                /* HTTP status, 200 */
	json_t *doc;                               /* the JSON document */
	char *title;
	struct strbuf html;                        /* the page's body (HTML) */
	struct strbuf err;                         /* a refusal: the message */
	int want_html;                             /* 0: only doc is wanted */
	int whole;                                 /* html is a whole document (a
						      report's), doc NULL: HTML only */
	unsigned retry_after;                      /* a 503's Retry-After (s), 0 none */
};

/* the pages: fill p->doc (and p->html when p->want_html), or set p->status
 * and p->err */
void page_overview(struct page *p);
void page_sessions(struct page *p);
void page_session(struct page *p, int64_t id);
void page_run(struct page *p, int64_t id);
void page_trend(struct page *p);
void page_compare(struct page *p);
void page_alerts(struct page *p);
void page_alert(struct page *p, int64_t id);
/* `schedlab report`'s page (a=&b=, session=, since=) and a bisection's
 * (`report --bisect N`), whole documents, HTML only */
void page_report(struct page *p);
void page_bisect(struct page *p, int64_t id);
/* the triage forms of an alert page, with this page's csrf value (NULL:
 * read-only, no forms) */
void page_alert_forms(struct page *p, int64_t id, const char *csrf);

/* the bisection of alert id's group started by a request that passed the
 * checks of serve.c (robot_bg_start): 0 with *doc (the alert, its group,
 * "bisect_job" as the alert's page shows it), else the HTTP status (404;
 * 409 one runs, or the command refuses, with its message; 500) with the
 * reason in err */
int serve_bisect(struct db *db, struct robot_bg *bg, int64_t id, json_t **doc,
		 struct strbuf *err);
/* the latest bisection of group gid started from the page, as the alert
 * page's "bisect_job": null when none was */
json_t *bisect_job_json(struct robot_bg *bg, struct db *db, int64_t gid);

/* the triage of alert id by a request that passed the checks of serve.c:
 * action ack|expect|invalid|reopen, the note; 0 done (*status_word the
 * alert's new state), else the HTTP status with the reason in err (503:
 * another process holds the store's write lock, nothing written; the
 * caller set how long the write waits for it, db_set_busy_timeout) */
int serve_triage(struct db *db, int64_t id, const char *action, const char *note,
		 const char **status_name, struct strbuf *err);

/* --listen's ADDR[:PORT] (IPv4, or IPv6 in brackets; no port: 8080) as a
 * socket address; -1 with the reason naming what is valid */
struct sockaddr_storage;
int serve_parse_listen(const char *l, struct sockaddr_storage *ss, socklen_t *len,
		       struct strbuf *err);

/* the site's style and its one script, /static/serve.js (serve_assets.c) */
extern const char serve_css[];
extern const char serve_js[];

/* ---- helpers (serve_html.c) -------------------------------------------- */
/* (HTML escaping: html_esc, html_escf in harness/util/html.h) */

/* a JSON string of any bytes: invalid UTF-8 replaced (U+FFFD); NULL: null */
json_t *jstr(const char *s);
json_t *jreal(double v);   /* null when not finite */
/* a text as a URL query value (percent-encoded) */
void url_enc(struct strbuf *o, const char *s);
/* a JSON value as a table cell's text (strings as they are) */
void html_json_cell(struct strbuf *o, const json_t *v);
/* rows of objects as an HTML table of the given columns (NULL: all of the
 * first row's keys); link: for column `linkcol`, a URL prefix + the value */
void html_table(struct strbuf *o, const json_t *rows, const char *const *cols,
		const char *linkcol, const char *linkprefix);
/* a column or JSON key as a heading people read ("change_pct": "change") */
const char *col_label(const char *key);
/* a stored moment as "3 days ago" (relative to now), the moment itself
 * when it is no YYYY-MM-DD[T ]HH:MM:SS */
#include <time.h>
void moment_words(char *buf, size_t n, const char *iso, time_t now);
/* <time> of a moment: the words, its ISO text in the title */
void html_moment(struct strbuf *o, const char *iso);
/* the terms of a selector, keys[i]=vals[i] (a piece without key= continues
 * the value before it, as select.c reads it) */
void where_terms(const char *where, struct strvec *keys, struct strvec *vals);
/* a selector as chips ("preempt full", "250 Hz", "groups=4"), leaving out
 * the keys in skip (NULL: none) and what goes without saying (knobs={}, the
 * real clock, no qemu) */
void html_chips(struct strbuf *o, const char *where, const struct strvec *skip);
/* a selector in plain words, the chips' ("preempt full, 250 Hz") */
void where_words(struct strbuf *o, const char *where);
/* the keys whose value is the same in every one of wheres[0..n) (n >= 2) */
void where_common(const char *const *wheres, size_t n, struct strvec *common);
/* the value v of column key as a cell people read: a moment as words, a
 * change in %, a configuration as chips (common: keys to leave out), a
 * session, alert or run number linked to its page */
void html_cell(struct strbuf *o, const char *key, const json_t *v, const struct strvec *common);
/* an object as a table of headings and cells, keys (NULL: all) in order */
void html_fields(struct strbuf *o, const json_t *obj, const char *const *keys);
/* the string member k of object o, "" when absent */
const char *jget(const json_t *o, const char *k);

#endif
