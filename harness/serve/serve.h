/*
 * schedlab serve (docs/serve.md): the store as a live site over HTTP with
 * libmicrohttpd. Every connection has a thread of its own; a page is built
 * by a thread of its own on one of serve's read-only connections to the
 * store (--workers of them, at most half of them building the heavy pages:
 * /report, /compare, /trend, /bisect/N), within a time budget (503 past it)
 * and a size bound (422 past it), so that no request waits for another's
 * page; the writes are made one at a time on the connection serve was
 * given (read-write with a token). Every page is built
 * from the code the commands use (trend_job_run, compare_job_run, the
 * alert store, robot_group_report) and answers HTML or, under the same
 * path, JSON (Accept: application/json or ?format=json). Read-only unless a
 * token is given: then an alert can be triaged (ack, expect, invalid,
 * reopen) by a POST carrying the token and the page's CSRF value, from the
 * same origin, through the alert store's one move function, and an
 * alert's group bisected (`schedlab alerts bisect N` as a detached child:
 * harness/orchestrate/robot_bg.h), its progress and outcome shown on the
 * alert's page.
 */
#ifndef SL_SERVE_H
#define SL_SERVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "db/db.h"
#include "harness/util/strbuf.h"

struct serve_opts {
	struct db *db;          /* read-only without a token, read-write with one */
	const char *listen;     /* "ADDR[:PORT]" (IPv4 or [IPv6]; no port: 8080); NULL: 127.0.0.1:8080 */
	const char *token;      /* the token's text; NULL: every write refused */
	/* the file it was read from (serve_token_load), checked again before
	 * every write: changed, read again; removed or opened to others,
	 * every write refused (503) until it is put right. NULL: the token as
	 * given, for good */
	const char *token_file;
	/* the workload parameter named in a censored verdict's advice (as
	 * compare's; NULL: none) */
	const char *(*range_param)(const char *workload);
	/* bisections started from the page: the store's path for the child
	 * (--db), its --out-dir (NULL: serve's folder below), its
	 * --bisect-minutes (0: the command's default). serve's own folder of
	 * their records and logs is OUT_DIR/serve, or DBPATH.serve without
	 * an out dir (made 0700 with a token) */
	const char *dbpath;
	const char *out_dir;
	size_t bisect_minutes;
	/* the limits (0: the default of each, in parentheses): pages built
	 * at once, each on a read-only connection of its own (4; half of them,
	 * at least one, heavy); a page's time budget in seconds (30); a page's
	 * size bound in MB (16); connections at once (512), from one address
	 * (128); the seconds a request's headers may take from the
	 * connection's start or its previous request's end, and a connection
	 * may stay silent (10) */
	unsigned workers, page_seconds, page_max_mb, max_connections, per_address,
		header_seconds;
	/* the origin the site is reached at (a TLS proxy's
	 * https://lab.example), whose Host and Origin are taken too; NULL:
	 * none. serve_start refuses a malformed one */
	const char *public_url;
};

struct serve;

/*
 * The token of a file given to serve: its first line, without blanks around
 * it, at least 16 characters. Refused (-1, the reason in err naming the
 * file) when the file is not a regular file of ours (a FIFO is refused, not
 * waited on), is readable or writable by group or others (mode 0600 or
 * stricter), or is empty. *st (NULL: not wanted): the file as read.
 */
int serve_token_load(const char *path, char **token, struct stat *st, struct strbuf *err);

/* start answering on o->listen (port 0: a free one); -1 with the reason */
int serve_start(const struct serve_opts *o, struct serve **out, struct strbuf *err);
/* the address it listens on, "http://ADDR:PORT/" (owned by s) */
const char *serve_url(const struct serve *s);
/* the --public-url's origin (https://lab.example, no slash), NULL: none */
const char *serve_public_origin(const struct serve *s);
/* --public-url URL: http(s)://HOST[:PORT][/]; 0 with the origin as a
 * browser's Origin writes it (scheme and name in lower case, no default
 * port, no slash) and the Host it sends, or -1 with the reason naming
 * what is valid */
int serve_parse_public_url(const char *url, char origin[300], char host[300], struct strbuf *err);
/* 1: it listens beyond loopback (other machines may reach it: the caller
 * warns) */
int serve_public(const struct serve *s);
/* stop answering: the pages under way are stopped and waited for 5 s at
 * most (a page still computing then keeps s: the process is ending) */
void serve_stop(struct serve *s);

/* the CSRF value of a page path under the process's secret key (hex
 * HMAC-SHA256 of a fixed tag and the path): what a form of that page
 * carries; exposed for the tests of docs/serve.md */
void serve_csrf(const unsigned char key[32], const char *path, char hex[65]);

#endif
