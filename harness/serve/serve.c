/*
 * The HTTP side of schedlab serve (serve.h): the daemon, the routes, the
 * token and the checks of every write. Pages are built by serve_pages.c
 * and answered here as HTML or JSON.
 */
#include "harness/serve/serve.h"
#include "harness/serve/serve_internal.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db/serve_reads.h"
#include "harness/orchestrate/robot_act.h"
#include "harness/orchestrate/robot_bg.h"
#include "harness/util/fault.h"
#include "harness/util/sha256.h"

#define MAX_BODY (256 * 1024)  /* a POST's form: a note of 85,000 escaped bytes at least */
/* how long a write waits for another process's write lock before it is
 * answered 503 (the writes go one at a time: the 10 s the commands wait
 * would hold every other write meanwhile), and the Retry-After it is told */
#define WRITE_WAIT_MS 250
#define WRITE_RETRY_S 5
/* the limits' defaults (serve_opts) */
#define DEF_WORKERS 4
#define DEF_PAGE_SECONDS 30
#define DEF_PAGE_MAX_MB 16
#define DEF_MAX_CONNECTIONS 512
#define DEF_PER_ADDRESS 128
#define DEF_HEADER_SECONDS 10
/* the bytes of /report's HTML a metric row of its range makes (measured:
 * 38.4 MB for 912,500 rows, bench/serve-scale.sh 5 365), for the estimate
 * of a report's size before it is built */
#define REPORT_BYTES_PER_ROW 42

struct serve {
	struct serve_opts o;
	int loopback;     /* listening on 127.0.0.0/8 or ::1 only */
	int wildcard;     /* listening on 0.0.0.0 or :: (every address) */
	char addr[INET6_ADDRSTRLEN + 2];  /* the listen address as a Host names it */
	unsigned port;    /* the port bound */
	char hostname[256];  /* this machine's name (a Host over a network) */
	char *token;      /* under write_mu (a write may read the file again) */
	int writes;       /* started with a token: the pages show the forms */
	unsigned char csrf_key[32];  /* the CSRF values' secret, this process's */
	struct stat token_st;  /* the token file as last read (o.token_file) */
	struct stat db_st;     /* the store file as opened (o.dbpath) */
	int db_st_ok;          /* db_st holds it */
	char *said;            /* the last trouble said on stderr (said once) */
	struct MHD_Daemon *d;
	char *url;
	struct robot_bg *bg;   /* the bisections started from the pages */
	char pub_origin[300];  /* --public-url's origin ("" none) and its Host */
	char pub_host[300];
	/* the writes, and what they look at and change (token, token_st,
	   said, the store's write connection o.db): one at a time */
	pthread_mutex_t write_mu;
	pthread_mutex_t bg_mu;   /* bg: its records and children */
	/* the read-only connections the pages are built on: idle ones in
	   idle[], pages building (running, heavy of them) and the jobs under
	   way (to stop them at serve_stop) */
	pthread_mutex_t pool_mu;
	pthread_cond_t pool_cv;
	struct db **idle;
	size_t nidle, nreaders;
	unsigned running, heavy, heavy_max;
	int stopping;
	struct job *jobs;
	unsigned page_ms;
	size_t page_max;
	/* the connections, for the deadline of a request's headers (a
	   thread looks at them twice a second: header_sweep) */
	pthread_mutex_t conn_mu;
	pthread_cond_t conn_cv;
	struct conn *conns;
	unsigned header_ms;
	int sweeping;          /* the thread runs (0: told to end) */
	pthread_t sweeper;
	int sweeper_up;
};

/* a connection, while open: whether it is waiting for a request's headers,
 * since when; its socket as it was opened (a descriptor number reused
 * after its close is another file) */
struct conn {
	int fd;
	dev_t dev;
	ino_t ino;
	struct timespec since;   /* CLOCK_MONOTONIC */
	int waiting, cut;
	struct conn *next, **pprev;
};

struct req {
	struct strbuf body;
	int too_big;
	int started;      /* handle has seen the request's first call */
	int nul;          /* the raw URL holds %00 */
};

/* ---- the token ---------------------------------------------------------- */

int serve_token_load(const char *path, char **token, struct stat *stp, struct strbuf *err)
{
	/* O_NONBLOCK: a FIFO's open would wait for a writer */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		strbuf_addf(err, "--token-file %s: %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		strbuf_addf(err, "--token-file %s: not a regular file (a FIFO, a device or a "
				 "folder): the token is the first line of a file of its own", path);
		close(fd);
		return -1;
	}
	if (st.st_mode & 077) {
		strbuf_addf(err, "--token-file %s: mode %04o lets others read or change the "
				 "token; chmod 600 it", path, (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		strbuf_addf(err, "--token-file %s: owned by uid %u, not by this user", path,
			    (unsigned)st.st_uid);
		close(fd);
		return -1;
	}
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		strbuf_addf(err, "--token-file %s: %s", path, strerror(errno));
		return -1;
	}
	buf[n] = 0;
	buf[strcspn(buf, "\r\n")] = 0;
	struct strbuf t = STRBUF_INIT;
	strbuf_addstr(&t, buf);
	strbuf_trim(&t);
	if (t.len < 16 || strlen(t.buf) != t.len) {
		strbuf_addf(err, "--token-file %s: the first line holds %zu characters; a token "
				 "needs at least 16 (e.g. head -c 24 /dev/urandom | base64)", path,
			    t.len);
		strbuf_release(&t);
		return -1;
	}
	*token = strbuf_detach(&t, NULL);
	if (stp)
		*stp = st;
	return 0;
}

void serve_csrf(const unsigned char key[32], const char *path, char hex[65])
{
	static const char tag[] = "schedlab serve csrf v2";
	struct strbuf m = STRBUF_INIT;
	unsigned char d[32];
	strbuf_add(&m, tag, sizeof(tag));
	strbuf_addstr(&m, path);
	hmac_sha256(key, 32, m.buf, m.len, d);
	sha256_hex(d, hex);
	strbuf_release(&m);
}

/* trouble that stops the writes, said once on serve's stderr (the person
 * who started serve reads it there; the page says it to whoever wrote) */
static void say_once(struct serve *s, const char *msg)
{
	if (s->said && !strcmp(s->said, msg))
		return;
	free(s->said);
	s->said = xstrdup(msg);
	fprintf(stderr, "schedlab serve: %s\n", msg);
	fflush(stderr);
}

/* the token file as it is now (o.token_file: re-read when it changed since
 * it was read, by its inode, size, times or mode); 0 and s->token the
 * token it holds, or -1 with the reason (gone, readable by others, no
 * token): then no write is taken until it is put right */
static int token_current(struct serve *s, struct strbuf *why)
{
	const char *path = s->o.token_file;
	if (!path)
		return 0;
	struct stat st;
	if (lstat(path, &st)) {
		strbuf_addf(why, "--token-file %s: %s: every write is refused until it is back "
				 "(mode 0600)", path, strerror(errno));
		return -1;
	}
	const struct stat *o = &s->token_st;
	if (st.st_dev == o->st_dev && st.st_ino == o->st_ino && st.st_size == o->st_size &&
	    st.st_mode == o->st_mode && st.st_uid == o->st_uid &&
	    st.st_mtim.tv_sec == o->st_mtim.tv_sec && st.st_mtim.tv_nsec == o->st_mtim.tv_nsec &&
	    st.st_ctim.tv_sec == o->st_ctim.tv_sec && st.st_ctim.tv_nsec == o->st_ctim.tv_nsec)
		return 0;
	char *t = NULL;
	if (serve_token_load(path, &t, &st, why)) {
		strbuf_addstr(why, " (every write is refused until it is put right)");
		return -1;
	}
	free(s->token);
	s->token = t;
	s->token_st = st;
	return 0;
}

/* the store's path still names the file serve opened: a file moved over
 * it, or removed, would take a write nowhere, or into the new file's
 * journal where it damages it; 0, or -1 with the reason */
static int store_current(struct serve *s, struct strbuf *why)
{
	if (!s->db_st_ok)
		return 0;
	struct stat st;
	if (stat(s->o.dbpath, &st)) {
		strbuf_addf(why, "%s: the store was removed while schedlab serve runs (%s): writes are "
				 "refused; restart serve on the store", s->o.dbpath, strerror(errno));
		return -1;
	}
	if (st.st_dev != s->db_st.st_dev || st.st_ino != s->db_st.st_ino) {
		strbuf_addf(why, "%s: the store was replaced while schedlab serve runs (another "
				 "file is at its path now; serve has the old one open): writes are "
				 "refused lest they damage the new one; restart serve on it",
			    s->o.dbpath);
		return -1;
	}
	return 0;
}

/* compare without an early exit on the first difference */
static int same_secret(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char diff = la != lb;
	for (size_t i = 0; i < la; i++)
		diff |= (unsigned char)a[i] ^ (unsigned char)b[i % (lb ? lb : 1)];
	return !diff;
}

/* ---- answers -------------------------------------------------------------- */

static const char csp_base[] =
	"default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'; script-src 'self'";

static void security_headers(struct MHD_Response *r, const char *csp)
{
	MHD_add_response_header(r, "Content-Security-Policy", csp ? csp : csp_base);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Referrer-Policy", "same-origin");
	MHD_add_response_header(r, "Cache-Control", "no-store");
}

/* retry: the seconds of a Retry-After (0: none) */
static enum MHD_Result send_buf_csp(struct MHD_Connection *c, unsigned code, const char *ctype,
				    char *buf, size_t len, const char *location, const char *csp,
				    unsigned retry)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", ctype);
	if (location)
		MHD_add_response_header(r, "Location", location);
	if (retry) {
		char v[16];
		snprintf(v, sizeof(v), "%u", retry);
		MHD_add_response_header(r, "Retry-After", v);
	}
	security_headers(r, csp);
	enum MHD_Result ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result send_buf(struct MHD_Connection *c, unsigned code, const char *ctype,
				char *buf, size_t len, const char *location)
{
	return send_buf_csp(c, code, ctype, buf, len, location, NULL, 0);
}

static void base64(struct strbuf *o, const unsigned char *d, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)d[i] << 16 | (i + 1 < n ? (unsigned)d[i + 1] << 8 : 0) |
			     (i + 2 < n ? d[i + 2] : 0);
		strbuf_addch(o, tab[v >> 18 & 63]);
		strbuf_addch(o, tab[v >> 12 & 63]);
		strbuf_addch(o, i + 1 < n ? tab[v >> 6 & 63] : '=');
		strbuf_addch(o, i + 2 < n ? tab[v & 63] : '=');
	}
}

/* the policy of a whole document (a report): its own inline scripts, by
 * their hashes, and nothing else (the report never puts stored text in a
 * script: report_html.c) */
static char *csp_of_document(const char *html)
{
	struct strbuf o = STRBUF_INIT;
	strbuf_addstr(&o, csp_base);
	for (const char *p = html; (p = strstr(p, "<script>"));) {
		p += 8;
		const char *e = strstr(p, "</script>");
		if (!e)
			break;
		struct sha256 s;
		unsigned char d[32];
		sha256_init(&s);
		sha256_update(&s, p, (size_t)(e - p));
		sha256_final(&s, d);
		strbuf_addstr(&o, " 'sha256-");
		base64(&o, d, 32);
		strbuf_addch(&o, '\'');
		p = e;
	}
	return strbuf_detach(&o, NULL);
}

/* the style and the script: serve_assets.c */

static void html_page(struct strbuf *o, const char *title, const struct strbuf *body)
{
	strbuf_addstr(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
			 "<meta name=\"viewport\" content=\"width=device-width\"><title>");
	html_esc(o, title);
	strbuf_addstr(o, " - schedlab</title><style>");
	strbuf_addstr(o, serve_css);
	strbuf_addstr(o, "</style></head>\n<body>\n<nav><a href=\"/\">overview</a>"
			 "<a href=\"/alerts\">alerts</a><a href=\"/sessions\">sessions</a>"
			 "<a href=\"/compare\">compare</a></nav>\n<h1>");
	html_esc(o, title);
	strbuf_addstr(o, "</h1>\n");
	strbuf_add(o, body->buf, body->len);
	strbuf_addstr(o, "\n<script src=\"/static/serve.js\"></script>\n</body></html>\n");
}

static enum MHD_Result send_page(struct MHD_Connection *c, struct page *p, int json)
{
	if (json && p->whole && p->status < 400) {
		p->status = 406;
		strbuf_addstr(&p->err, "this page is HTML only (schedlab report's); its numbers are "
				       "the JSON of /compare and /trend");
	}
	if (json) {
		json_t *doc = p->doc;
		if (p->status >= 400 || !doc)
			doc = json_pack("{s:i,s:o,s:i}", "schedlab_format", 1, "error",
					jstr(p->err.len ? p->err.buf : "error"), "status", p->status);
		else
			json_incref(doc);
		char *t = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER |
						  JSON_REAL_PRECISION(10));
		json_decref(doc);
		if (!t)
			t = strdup("{\"error\": \"the document could not be written\"}");
		if (!t)
			return MHD_NO;
		size_t n = strlen(t);
		char *body = realloc(t, n + 2);
		if (!body) {
			free(t);
			return MHD_NO;
		}
		body[n] = '\n';
		body[n + 1] = 0;
		return send_buf_csp(c, (unsigned)p->status, "application/json", body, n + 1, NULL,
				    NULL, p->retry_after);
	}
	if (p->whole && p->status < 400) {
		char *csp = csp_of_document(p->html.buf ? p->html.buf : "");
		size_t n;
		char *t = strbuf_detach(&p->html, &n);
		enum MHD_Result r = send_buf_csp(c, (unsigned)p->status, "text/html; charset=utf-8",
						 t, n, NULL, csp, 0);
		free(csp);
		return r;
	}
	struct strbuf o = STRBUF_INIT, b = STRBUF_INIT;
	const struct strbuf *body = &p->html;
	if (p->status >= 400) {
		strbuf_addstr(&b, "<p class=\"err\">");
		html_esc(&b, p->err.len ? p->err.buf : "error");
		strbuf_addstr(&b, "</p>\n");
		body = &b;
	}
	html_page(&o, p->title ? p->title : p->status >= 400 ? "refused" : "schedlab", body);
	strbuf_release(&b);
	size_t n;
	char *t = strbuf_detach(&o, &n);
	return send_buf_csp(c, (unsigned)p->status, "text/html; charset=utf-8", t, n, NULL, NULL,
			    p->retry_after);
}

/* a refusal (code) saying msg; retry: its Retry-After (0: none) */
static enum MHD_Result send_text_retry(struct MHD_Connection *c, unsigned code, const char *msg,
				       int json, unsigned retry)
{
	struct page p = { .status = (int)code, .retry_after = retry };
	strbuf_init(&p.err, 0);
	strbuf_init(&p.html, 0);
	strbuf_addstr(&p.err, msg);
	enum MHD_Result r = send_page(c, &p, json);
	strbuf_release(&p.err);
	strbuf_release(&p.html);
	return r;
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned code, const char *msg,
				 int json)
{
	return send_text_retry(c, code, msg, json, 0);
}

/* ---- requests ------------------------------------------------------------ */

static int wants_json(struct MHD_Connection *c)
{
	const char *f = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "format");
	if (f)
		return !strcmp(f, "json");
	const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
	return a && strstr(a, "application/json") && !strstr(a, "text/html");
}

/* "/alert/12" -> 12; 0 when the rest is not a positive number */
static int64_t path_id(const char *url, const char *prefix)
{
	size_t n = strlen(prefix);
	if (strncmp(url, prefix, n))
		return -1;
	const char *s = url + n;
	if (!*s || strlen(s) > 18 || strspn(s, "0123456789") != strlen(s))
		return 0;
	long long v = strtoll(s, NULL, 10);
	return v > 0 ? v : 0;
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* the value of field `name` of an x-www-form-urlencoded body (malloc'd),
 * NULL when absent; *bad set when it holds a NUL or a broken escape */
static char *form_field(const char *body, const char *name, int *bad)
{
	size_t nl = strlen(name);
	for (const char *p = body; p && *p;) {
		const char *end = strchr(p, '&');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len > nl && !strncmp(p, name, nl) && p[nl] == '=') {
			struct strbuf v = STRBUF_INIT;
			for (size_t i = nl + 1; i < len; i++) {
				int ch = (unsigned char)p[i];
				if (ch == '+')
					ch = ' ';
				else if (ch == '%') {
					int h = i + 2 < len ? hexval(p[i + 1]) : -1;
					int l = h >= 0 ? hexval(p[i + 2]) : -1;
					if (h < 0 || l < 0 || (h | l) == 0) {
						*bad = 1;
						break;
					}
					ch = h * 16 + l;
					i += 2;
				}
				strbuf_addch(&v, ch);
			}
			return strbuf_detach(&v, NULL);
		}
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

/* name[:port] against want (a Host as serve_parse_public_url gives it),
 * names without regard to case; the scheme's default port may be written
 * or not */
static int same_host(const char *h, const char *want, const char *dflt_port)
{
	size_t n = strlen(want);
	if (strncasecmp(h, want, n))
		return 0;
	return !h[n] || (h[n] == ':' && !strchr(want + (want[0] == '[' ? strcspn(want, "]") : 0), ':') &&
			 !strcmp(h + n + 1, dflt_port));
}

/* the --public-url's origin, the Origin header as a browser sends it */
static int public_origin(const struct serve *s, const char *origin)
{
	if (!s->pub_origin[0])
		return 0;
	int https = !strncmp(s->pub_origin, "https://", 8);
	const char *scheme = https ? "https://" : "http://";
	size_t sl = strlen(scheme);
	return !strncasecmp(origin, scheme, sl) &&
	       same_host(origin + sl, s->pub_origin + sl, https ? "443" : "80");
}

/* a POST from another site, or from a page that is not ours: refused
 * before anything else is looked at */
static const char *cross_site(const struct serve *s, struct MHD_Connection *c)
{
	const char *sfs = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site");
	if (sfs && strcmp(sfs, "same-origin") && strcmp(sfs, "none"))
		return "a cross-site request (Sec-Fetch-Site)";
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	/* reached by --public-url's name, the origin is its own: the page of
	   http://lab.example, when the site is https://lab.example, is not
	   one the site ever served (a man in the middle's) */
	int by_public = s->pub_host[0] && host &&
			same_host(host, s->pub_host, !strncmp(s->pub_origin, "https://", 8) ? "443" : "80");
	if (origin && by_public && !public_origin(s, origin))
		return "a request from another origin (Origin is not --public-url's)";
	if (origin && !by_public && !public_origin(s, origin)) {
		if (!host || strncmp(origin, "http://", 7) || strcmp(origin + 7, host))
			return s->pub_origin[0]
				? "a request from another origin (Origin is neither this server's "
				  "http://Host nor --public-url's)"
				: "a request from another origin (Origin)";
	}
	return NULL;
}

/* "localhost", "127.0.0.1", "[::1]" (any port: an ssh tunnel's is its own) */
static int loopback_name(const char *name)
{
	return !strcasecmp(name, "localhost") || !strcmp(name, "127.0.0.1") ||
	       !strcmp(name, "[::1]");
}

/*
 * The Host header names this server: a loopback name, or this listen
 * address with its port (on 0.0.0.0 or ::, any IP address of the family,
 * or this machine's name, with the port). A name an attacker controls that
 * resolves to this server (DNS rebinding) makes the attacker's site the
 * same origin as this one in a victim's browser, which could then read
 * the pages and their csrf values: such a Host is refused (421).
 */
static int host_ok(const struct serve *s, const char *h)
{
	char name[300];
	const char *colon;
	if (!h || !*h || strlen(h) >= sizeof(name))
		return 0;
	/* the name the site is reached at behind a proxy (--public-url) */
	if (s->pub_host[0] &&
	    same_host(h, s->pub_host, !strncmp(s->pub_origin, "https://", 8) ? "443" : "80"))
		return 1;
	if (h[0] == '[') {
		const char *e = strchr(h, ']');
		if (!e)
			return 0;
		colon = e[1] == ':' ? e + 1 : e[1] ? NULL : e + 1;
		if (!colon)
			return 0;
	} else {
		colon = strchr(h, ':');
		if (!colon)
			colon = h + strlen(h);
	}
	memcpy(name, h, (size_t)(colon - h));
	name[colon - h] = 0;
	unsigned port = 80;
	if (*colon) {
		const char *p = colon + 1;
		if (!*p || strlen(p) > 5 || strspn(p, "0123456789") != strlen(p))
			return 0;
		port = (unsigned)atoi(p);
	}
	if (loopback_name(name))
		return 1;
	if (port != s->port)
		return 0;
	if (!strcasecmp(name, s->addr))
		return 1;
	if (!s->wildcard)
		return 0;
	if (s->hostname[0] && !strcasecmp(name, s->hostname))
		return 1;
	/* an address of the family: a browser that reached this server by
	   its address is no rebinding */
	unsigned char buf[sizeof(struct in6_addr)];
	size_t n = strlen(name);
	if (s->addr[0] == '[') {
		if (n < 3 || name[0] != '[' || name[n - 1] != ']')
			return 0;
		name[n - 1] = 0;
		return inet_pton(AF_INET6, name + 1, buf) == 1;
	}
	return inet_pton(AF_INET, name, buf) == 1;
}

/* a form's type: application/x-www-form-urlencoded (an HTML form's
 * default, curl -d), with parameters or none; an empty body may say none */
static int form_type(const char *ct, size_t body_len)
{
	static const char want[] = "application/x-www-form-urlencoded";
	if (!ct)
		return body_len == 0;
	size_t n = sizeof(want) - 1;
	return !strncasecmp(ct, want, n) && (!ct[n] || ct[n] == ';' || ct[n] == ' ');
}

/* ---- pages, each built by a thread of its own ---------------------------- */

/* a page under way: built by its thread on a read connection of its own,
 * answered by the connection's thread once built, or 503 once its time is
 * up (the build is then stopped and cleaned up by its thread) */
struct job {
	struct serve *s;
	struct serve_opts o;       /* s->o with the read connection as o.db */
	struct db *db;
	int heavy;
	char *url;
	struct strvec args;        /* the query: name, value, name, value ... */
	int json;
	struct page p;
	char csrf[65];             /* /alert/N with a token: this page's value */
	struct db_watch w;
	struct db_serve_range range;  /* /report?since=: what it would read */
	int ranged;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done, abandoned;
	struct job *next;          /* s->jobs */
};

static const char *job_arg(void *cls, const char *name)
{
	const struct job *j = cls;
	for (size_t i = 0; i + 1 < j->args.nr; i += 2)
		if (!strcmp(j->args.v[i], name))
			return *j->args.v[i + 1] ? j->args.v[i + 1] : NULL;
	return NULL;
}

static enum MHD_Result copy_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				const char *value)
{
	struct strvec *v = cls;
	strvec_push(v, key ? key : "");
	strvec_push(v, value ? value : "");
	return MHD_YES;
}

static int is_heavy(const char *url)
{
	return !strcmp(url, "/report") || !strcmp(url, "/compare") || !strcmp(url, "/trend") ||
	       path_id(url, "/bisect/") > 0;
}

/* a read connection for a page: at once, or NULL (a heavy page when half
 * of the workers build heavy pages already; any page when none is idle by
 * the deadline) */
static struct db *reader_take(struct serve *s, int heavy, const struct timespec *until)
{
	struct db *db = NULL;
	pthread_mutex_lock(&s->pool_mu);
	if (heavy && s->heavy >= s->heavy_max) {
		pthread_mutex_unlock(&s->pool_mu);
		return NULL;
	}
	while (!s->nidle && !s->stopping)
		if (pthread_cond_timedwait(&s->pool_cv, &s->pool_mu, until))
			break;
	if (s->nidle && !s->stopping) {
		db = s->idle[--s->nidle];
		s->running++;
		s->heavy += heavy != 0;
	}
	pthread_mutex_unlock(&s->pool_mu);
	return db;
}

static void job_free(struct job *j)
{
	struct serve *s = j->s;
	pthread_mutex_lock(&s->pool_mu);
	for (struct job **pp = &s->jobs; *pp; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	s->idle[s->nidle++] = j->db;
	s->running--;
	s->heavy -= j->heavy != 0;
	pthread_cond_broadcast(&s->pool_cv);
	pthread_mutex_unlock(&s->pool_mu);
	json_decref(j->p.doc);
	free(j->p.title);
	strbuf_release(&j->p.html);
	strbuf_release(&j->p.err);
	strvec_clear(&j->args);
	free(j->url);
	pthread_mutex_destroy(&j->mu);
	pthread_cond_destroy(&j->cv);
	free(j);
}

static int job_stopped(struct job *j)
{
	return atomic_load(&j->w.stop) != 0;
}

/* /report?since=DATE: what it would read, counted by key first; refused
 * (422) when its page would pass the size bound */
static int report_range(struct job *j)
{
	const char *since = job_arg(j, "since");
	if (strcmp(j->url, "/report") || !since || (job_arg(j, "a") && job_arg(j, "b")) ||
	    job_arg(j, "session"))
		return 0;
	/* a date the pages take (the page says what is valid otherwise) */
	if (strlen(since) < 10 || strspn(since, "0123456789-T:.Z") != strlen(since))
		return 0;
	int64_t max_rows = (int64_t)(j->s->page_max / REPORT_BYTES_PER_ROW);
	struct db_serve_range r;
	if (db_serve_range(j->db, since, max_rows, &r))
		return 0;  /* the page meets the same trouble and says it */
	pthread_mutex_lock(&j->mu);
	j->range = r;
	j->ranged = 1;
	pthread_mutex_unlock(&j->mu);
	if (r.metric_rows <= max_rows)
		return 0;
	struct page *p = &j->p;
	p->status = 422;
	strbuf_addf(&p->err, "/report?since=%s would draw on %lld sessions, %lld runs and about "
			     "%lld metric rows: a page of about %lld MB, over the bound of %zu MB "
			     "(schedlab serve --page-max-mb); narrow the range",
		    since, (long long)r.sessions, (long long)r.runs, (long long)r.metric_rows,
		    (long long)(r.metric_rows * REPORT_BYTES_PER_ROW >> 20), j->s->page_max >> 20);
	if (r.fit_since[0])
		strbuf_addf(&p->err, ": since=%s (its newest sessions) fits", r.fit_since);
	strbuf_addstr(&p->err, ", or compare two selections (/report?a=SEL&b=SEL) or one session "
			       "(/report?session=N)");
	return 1;
}

static void job_build(struct job *j)
{
	struct serve *s = j->s;
	struct page *p = &j->p;
	const char *url = j->url;
	/* a heavy page made slow for the tests (fault.h: serve-slow-page) */
	unsigned delay = j->heavy ? fault_delay_ms("serve-slow-page") : 0;
	for (unsigned t = 0; t < delay && !job_stopped(j); t += 50)
		usleep(50 * 1000);
	if (job_stopped(j) || report_range(j))
		return;
	int64_t sid = path_id(url, "/session/"), rid = path_id(url, "/run/");
	int64_t bid = path_id(url, "/bisect/"), aid = path_id(url, "/alert/");
	if (!strcmp(url, "/"))
		page_overview(p);
	else if (!strcmp(url, "/sessions"))
		page_sessions(p);
	else if (sid > 0)
		page_session(p, sid);
	else if (rid > 0)
		page_run(p, rid);
	else if (!strcmp(url, "/trend"))
		page_trend(p);
	else if (!strcmp(url, "/compare"))
		page_compare(p);
	else if (!strcmp(url, "/report"))
		page_report(p);
	else if (bid > 0)
		page_bisect(p, bid);
	else if (!strcmp(url, "/alerts"))
		page_alerts(p);
	else if (aid > 0) {
		/* the page's form carries this page's csrf value */
		pthread_mutex_lock(&s->bg_mu);
		page_alert(p, aid);
		pthread_mutex_unlock(&s->bg_mu);
		if (p->status == 200 && s->writes) {
			serve_csrf(s->csrf_key, url, j->csrf);
			json_object_set_new(p->doc, "csrf", json_string(j->csrf));
		}
		if (p->status == 200 && p->want_html)
			page_alert_forms(p, aid, s->writes ? j->csrf : NULL);
	} else {
		p->status = 404;
		strbuf_addf(&p->err, "no page %s: see / (docs/serve.md lists the pages)", url);
	}
	/* larger than the bound: not sent (the bound of a report is looked
	   at before it is built, report_range) */
	size_t size = p->html.len;
	if (p->doc && !p->want_html) {
		char *t = json_dumps(p->doc, JSON_COMPACT);
		size = t ? strlen(t) : 0;
		free(t);
	}
	if (p->status < 400 && size > s->page_max) {
		p->status = 422;
		strbuf_reset(&p->err);
		strbuf_addf(&p->err, "%s: the page came to %zu MB, over the bound of %zu MB "
				     "(schedlab serve --page-max-mb); narrow it (a later since=, "
				     "a selection of fewer series or sessions)",
			    url, size >> 20, s->page_max >> 20);
	}
}

static void *job_thread(void *arg)
{
	struct job *j = arg;
	db_serve_watch(j->db, &j->w);
	job_build(j);
	db_serve_watch(j->db, NULL);
	pthread_mutex_lock(&j->mu);
	j->done = 1;
	int gone = j->abandoned;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->mu);
	if (gone)
		job_free(j);
	return NULL;
}

/* the answer of a page whose time is up: what it was doing, and what it
 * would read when that was counted */
static enum MHD_Result send_too_slow(struct serve *s, struct MHD_Connection *c, struct job *j,
				     int json)
{
	struct strbuf m = STRBUF_INIT;
	unsigned long steps = atomic_load(&j->w.steps);
	strbuf_addf(&m, "%s was not built within its time budget of %u s (schedlab serve "
			"--page-seconds), after about %lu million steps of the store's queries; ",
		    j->url, s->page_ms / 1000, steps * DB_WATCH_STEPS / 1000000);
	if (j->ranged)
		strbuf_addf(&m, "it would draw on %lld sessions, %lld runs and about %lld metric "
				"rows; ", (long long)j->range.sessions, (long long)j->range.runs,
			    (long long)j->range.metric_rows);
	strbuf_addstr(&m, "narrow it (a later since=, fewer series or sessions), or ask again "
			  "when the server is less busy");
	enum MHD_Result r = send_text_retry(c, 503, m.buf, json, WRITE_RETRY_S);
	strbuf_release(&m);
	return r;
}

static enum MHD_Result answer_page(struct serve *s, struct MHD_Connection *c, const char *url,
				   int json)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += s->page_ms / 1000;
	until.tv_nsec += (long)(s->page_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	int heavy = is_heavy(url);
	struct db *db = reader_take(s, heavy, &until);
	if (!db) {
		char *m = heavy ? xstrfmt("%u heavy pages (/report, /compare, /trend, /bisect/N) are "
					  "being built, as many as schedlab serve builds at once "
					  "(half of --workers %zu): ask again in a few seconds",
					  s->heavy_max, s->nreaders)
				: xstrfmt("all %zu of schedlab serve's workers (--workers) stayed busy "
					  "for the page's time budget (%u s): ask again in a few "
					  "seconds", s->nreaders, s->page_ms / 1000);
		enum MHD_Result r = send_text_retry(c, 503, m, json, WRITE_RETRY_S);
		free(m);
		return r;
	}
	struct job *j = xcalloc(1, sizeof(*j));
	j->s = s;
	j->db = db;
	j->heavy = heavy;
	j->o = s->o;
	j->o.db = db;
	j->url = xstrdup(url);
	j->json = json;
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, copy_arg, &j->args);
	j->p = (struct page){ .o = &j->o, .bg = s->bg, .path = j->url, .arg = job_arg,
			      .cls = j, .status = 200, .want_html = !json };
	strbuf_init(&j->p.html, 0);
	strbuf_init(&j->p.err, 0);
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	pthread_mutex_lock(&s->pool_mu);
	j->next = s->jobs;
	s->jobs = j;
	pthread_mutex_unlock(&s->pool_mu);
	pthread_t t;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	int rc = pthread_create(&t, &at, job_thread, j);
	pthread_attr_destroy(&at);
	if (rc) {
		job_free(j);
		return send_text_retry(c, 503, "no thread could be started for the page: ask again "
					       "in a few seconds", json, WRITE_RETRY_S);
	}
	pthread_mutex_lock(&j->mu);
	while (!j->done)
		if (pthread_cond_timedwait(&j->cv, &j->mu, &until) == ETIMEDOUT)
			break;
	if (!j->done) {
		/* its time is up: answered now; its thread stops its queries
		   and cleans up */
		j->abandoned = 1;
		atomic_store(&j->w.stop, 1);
		enum MHD_Result r = send_too_slow(s, c, j, json);
		pthread_mutex_unlock(&j->mu);
		return r;
	}
	pthread_mutex_unlock(&j->mu);
	enum MHD_Result r = send_page(c, &j->p, json);
	job_free(j);
	return r;
}

static enum MHD_Result post_alert_locked(struct serve *s, struct MHD_Connection *c,
					 const char *url, int64_t id, struct req *rq, int json);

/* a write: one at a time, on the store's connection serve was given (the
 * pages are read on connections of their own meanwhile) */
static enum MHD_Result post_alert(struct serve *s, struct MHD_Connection *c, const char *url,
				  int64_t id, struct req *rq, int json)
{
	pthread_mutex_lock(&s->write_mu);
	enum MHD_Result r = post_alert_locked(s, c, url, id, rq, json);
	pthread_mutex_unlock(&s->write_mu);
	return r;
}

static enum MHD_Result post_alert_locked(struct serve *s, struct MHD_Connection *c,
					 const char *url, int64_t id, struct req *rq, int json)
{
	if (!s->token)
		return send_text(c, 403, "read-only: schedlab serve was started without "
					 "--token-file, so every write is refused", json);
	const char *why = cross_site(s, c);
	if (why)
		return send_text(c, 403, why, json);
	if (rq->too_big)
		return send_text(c, 413, "the form is larger than 256 KiB", json);
	const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
	if (!form_type(ct, rq->body.len)) {
		char *m = xstrfmt("Content-Type '%.100s': a write takes a form as "
				  "application/x-www-form-urlencoded (an HTML form's default, curl -d)",
				  ct ? ct : "(none)");
		enum MHD_Result r = send_text(c, 415, m, json);
		free(m);
		return r;
	}
	/* the token file as it is now (rotated, opened to others, removed),
	   and the store still the file serve opened: else no write */
	struct strbuf trouble = STRBUF_INIT;
	if (token_current(s, &trouble) || store_current(s, &trouble)) {
		say_once(s, trouble.buf);
		enum MHD_Result r = send_text(c, 503, trouble.buf, json);
		strbuf_release(&trouble);
		return r;
	}
	strbuf_release(&trouble);
	free(s->said);   /* put right: the same trouble again is said again */
	s->said = NULL;
	int bad = 0;
	const char *body = rq->body.buf ? rq->body.buf : "";
	char *token = form_field(body, "token", &bad), *csrf = form_field(body, "csrf", &bad);
	char *action = form_field(body, "action", &bad), *note = form_field(body, "note", &bad);
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	const char *given = token;
	if (!given && auth && !strncmp(auth, "Bearer ", 7))
		given = auth + 7;
	char want[65];
	serve_csrf(s->csrf_key, url, want);
	enum MHD_Result r;
	if (bad)
		r = send_text(c, 400, "a form field holds a NUL byte (%00) or a broken %-escape", json);
	else if (!given || !same_secret(given, s->token))
		r = send_text(c, 403, "the token is missing or wrong: every write needs the token "
				      "of the file given to schedlab serve --token-file", json);
	else if (!csrf || !same_secret(csrf, want))
		r = send_text(c, 403, "the form's csrf value is missing or is not this page's "
				      "(reload the page)", json);
	else if (action && !strcmp(action, "bisect")) {
		struct strbuf err = STRBUF_INIT;
		json_t *d = NULL;
		pthread_mutex_lock(&s->bg_mu);
		int code = serve_bisect(s->o.db, s->bg, id, &d, &err);
		pthread_mutex_unlock(&s->bg_mu);
		if (code)
			r = send_text(c, (unsigned)code, err.buf, json);
		else if (json) {
			char *t = json_dumps(d, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
			r = t ? send_buf(c, 202, "application/json", t, strlen(t), NULL) : MHD_NO;
		} else {
			char *t = xstrfmt("alert %lld: its group's bisection started\n", (long long)id);
			r = send_buf(c, 303, "text/plain", t, strlen(t), url);
		}
		json_decref(d);
		strbuf_release(&err);
	} else {
		struct strbuf err = STRBUF_INIT;
		const char *status = NULL;
		/* another process's write lock: answered at once (503), not
		   after the commands' wait, which would stop every page */
		db_set_busy_timeout(s->o.db, WRITE_WAIT_MS);
		int code = serve_triage(s->o.db, id, action, note, &status, &err);
		db_set_busy_timeout(s->o.db, DB_BUSY_TIMEOUT_MS);
		if (code)
			r = send_text_retry(c, (unsigned)code, err.buf, json,
					    code == 503 ? WRITE_RETRY_S : 0);
		else if (json) {
			json_t *d = json_pack("{s:i,s:I,s:s}", "schedlab_format", 1, "alert",
					      (json_int_t)id, "status", status);
			char *t = json_dumps(d, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
			json_decref(d);
			r = t ? send_buf(c, 200, "application/json", t, strlen(t), NULL) : MHD_NO;
		} else {
			char *t = xstrfmt("alert %lld: %s\n", (long long)id, status);
			r = send_buf(c, 303, "text/plain", t, strlen(t), url);
		}
		strbuf_release(&err);
	}
	free(token);
	free(csrf);
	free(action);
	free(note);
	return r;
}

/* ---- the deadline of a request's headers ---------------------------------- */

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return i ? i->socket_context : NULL;
}

/* the connection waits for a request's headers from now (1), or has them (0) */
static void conn_waits(struct serve *s, struct MHD_Connection *c, int waiting)
{
	struct conn *k = conn_of(c);
	if (!k)
		return;
	pthread_mutex_lock(&s->conn_mu);
	k->waiting = waiting;
	clock_gettime(CLOCK_MONOTONIC, &k->since);
	pthread_mutex_unlock(&s->conn_mu);
}

static void conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
			enum MHD_ConnectionNotificationCode toe)
{
	struct serve *s = cls;
	pthread_mutex_lock(&s->conn_mu);
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *i =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		struct stat st;
		struct conn *k = calloc(1, sizeof(*k));
		if (k && i && !fstat(i->connect_fd, &st)) {
			k->fd = i->connect_fd;
			k->dev = st.st_dev;
			k->ino = st.st_ino;
			k->waiting = 1;
			clock_gettime(CLOCK_MONOTONIC, &k->since);
			k->next = s->conns;
			if (s->conns)
				s->conns->pprev = &k->next;
			k->pprev = &s->conns;
			s->conns = k;
			*socket_context = k;
		} else {
			free(k);   /* not watched: the idle timeout still holds */
		}
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
		/* before its descriptor is closed: the sweeper never touches a
		   descriptor that is another file's by then */
		struct conn *k = *socket_context;
		*k->pprev = k->next;
		if (k->next)
			k->next->pprev = k->pprev;
		free(k);
		*socket_context = NULL;
	}
	pthread_mutex_unlock(&s->conn_mu);
}

/* twice a second: a connection that has waited for a request's headers
 * longer than --header-seconds (trickled a byte at a time, or sent none)
 * is shut down; libmicrohttpd then closes it */
static void *header_sweep(void *arg)
{
	struct serve *s = arg;
	pthread_mutex_lock(&s->conn_mu);
	while (s->sweeping) {
		struct timespec now, until;
		clock_gettime(CLOCK_MONOTONIC, &now);
		for (struct conn *k = s->conns; k; k = k->next) {
			long long ms = (now.tv_sec - k->since.tv_sec) * 1000LL +
				       (now.tv_nsec - k->since.tv_nsec) / 1000000;
			struct stat st;
			if (!k->waiting || k->cut || ms < (long long)s->header_ms)
				continue;
			if (!fstat(k->fd, &st) && st.st_dev == k->dev && st.st_ino == k->ino)
				shutdown(k->fd, SHUT_RDWR);
			k->cut = 1;
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 500000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->conn_cv, &s->conn_mu, &until);
	}
	pthread_mutex_unlock(&s->conn_mu);
	return NULL;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct serve *s = cls;
	struct req *rq = *con_cls;
	if (!rq) {
		rq = xcalloc(1, sizeof(*rq));
		strbuf_init(&rq->body, 0);
		*con_cls = rq;
	}
	if (!rq->started) {
		rq->started = 1;
		conn_waits(s, c, 0);   /* its headers are in */
		return MHD_YES;
	}
	if (*upload_size) {
		if (rq->body.len + *upload_size > MAX_BODY)
			rq->too_big = 1;
		else
			strbuf_add(&rq->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	int json = wants_json(c);
	/* the bisections started here that have ended: reaped, their end
	   recorded */
	if (s->bg) {
		pthread_mutex_lock(&s->bg_mu);
		robot_bg_reap(s->bg);
		pthread_mutex_unlock(&s->bg_mu);
	}
	/* DNS rebinding: a site whose name resolves to this server would be
	   the same origin as it in the victim's browser */
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	if (!host_ok(s, host)) {
		char *m = s->wildcard
			? xstrfmt("this server answers only to localhost, 127.0.0.1, [::1] and "
				  "this machine's addresses and name with port %u%s%s (the Host "
				  "'%.100s' names another: DNS rebinding guard)", s->port,
				  s->pub_host[0] ? ", and --public-url's " : "", s->pub_host,
				  host ? host : "")
			: xstrfmt("this server answers only to localhost, 127.0.0.1, [::1] and "
				  "%s:%u, the address it listens on%s%s (the Host '%.100s' names "
				  "another: DNS rebinding guard)", s->addr, s->port,
				  s->pub_host[0] ? ", and --public-url's " : "", s->pub_host,
				  host ? host : "");
		enum MHD_Result r = send_text(c, 421, m, json);
		free(m);
		return r;
	}
	/* the URL's %-escapes are undone before the path and the query values
	   reach here: a %00 would cut them short unseen */
	if (rq->nul)
		return send_text(c, 400, "the URL holds %00 (a NUL byte): no path or query value "
					 "may hold one", json);
	int is_get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
	int64_t aid = path_id(url, "/alert/");
	if (!strcmp(method, MHD_HTTP_METHOD_POST)) {
		if (aid > 0)
			return post_alert(s, c, url, aid, rq, json);
		return send_text(c, 405, "only an alert's page (/alert/N) takes a POST", json);
	}
	if (!is_get)
		return send_text(c, 405, "GET, HEAD, or POST to /alert/N", json);
	if (!strcmp(url, "/static/serve.js")) {
		char *t = xstrdup(serve_js);
		return send_buf(c, 200, "text/javascript; charset=utf-8", t, strlen(t), NULL);
	}
	if (!strcmp(url, "/favicon.ico"))
		return send_buf(c, 404, "text/plain", xstrdup(""), 0, NULL);
	return answer_page(s, c, url, json);
}

/* the request's URL as sent, before its %-escapes are undone: the request's
 * own state starts here (the first call of handle finds it) */
static void *uri_seen(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct req *rq = xcalloc(1, sizeof(*rq));
	strbuf_init(&rq->body, 0);
	rq->nul = strstr(uri, "%00") != NULL;
	return rq;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	/* kept open for the next request: its headers are awaited from now */
	conn_waits(cls, c, 1);
	struct req *rq = *con_cls;
	if (rq) {
		strbuf_release(&rq->body);
		free(rq);
		*con_cls = NULL;
	}
}

/* ---- the daemon ----------------------------------------------------------- */

int serve_parse_listen(const char *l, struct sockaddr_storage *ss, socklen_t *len,
		       struct strbuf *err)
{
	static const char expected[] = "ADDR[:PORT] expected (e.g. 127.0.0.1:8080, [::1]:8080, "
				       "0.0.0.0:8080 for every interface; without a port 8080)";
	memset(ss, 0, sizeof(*ss));
	char host[128];
	const char *port_text = NULL, *host_end;
	int v6 = l[0] == '[';
	if (v6) {
		const char *e = strchr(l, ']');
		if (!e || (e[1] && e[1] != ':')) {
			strbuf_addf(err, "--listen %s: %s", l, expected);
			return -1;
		}
		l++;
		host_end = e;
		port_text = e[1] ? e + 2 : NULL;
	} else {
		host_end = strchr(l, ':');
		if (host_end && strchr(host_end + 1, ':')) {
			strbuf_addf(err, "--listen %s: an IPv6 address is written in brackets, "
					 "[::1]:8080", l);
			return -1;
		}
		port_text = host_end ? host_end + 1 : NULL;
		if (!host_end)
			host_end = l + strlen(l);
	}
	if ((size_t)(host_end - l) >= sizeof(host) || host_end == l) {
		strbuf_addf(err, "--listen %s%s: %s", v6 ? "[" : "", l, expected);
		return -1;
	}
	memcpy(host, l, (size_t)(host_end - l));
	host[host_end - l] = 0;
	long port = 8080;
	if (port_text) {
		char *end;
		errno = 0;
		port = strtol(port_text, &end, 10);
		if (errno || *end || !*port_text || port < 0 || port > 65535) {
			strbuf_addf(err, "--listen %s%s: the port must be a number 0-65535 (0: any "
					 "free one)", v6 ? "[" : "", l);
			return -1;
		}
	}
	if (v6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			goto bad;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*s6);
		return 0;
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
		goto bad;
	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)port);
	*len = sizeof(*s4);
	return 0;
bad:
	strbuf_addf(err, "--listen %s%s: '%s' is not an IPv4 address or a [bracketed] IPv6 one",
		    v6 ? "[" : "", l, host);
	return -1;
}

int serve_parse_public_url(const char *url, char origin[300], char host[300], struct strbuf *err)
{
	static const char valid[] = "http(s)://HOST[:PORT][/] expected, the origin the site is "
				    "reached at (e.g. https://lab.example behind a TLS proxy): a name "
				    "or an address ([IPv6] in brackets), no user, path, query or "
				    "fragment (serve's pages start at /)";
	int https = !strncasecmp(url, "https://", 8);
	if (!https && strncasecmp(url, "http://", 7)) {
		strbuf_addf(err, "--public-url %s: not http:// or https://: %s", url, valid);
		return -1;
	}
	const char *h = url + (https ? 8 : 7);
	size_t hl = strcspn(h, "/?#");
	const char *rest = h + hl;
	if (*rest && strcmp(rest, "/")) {
		strbuf_addf(err, "--public-url %s: '%s' after the host: %s", url, rest, valid);
		return -1;
	}
	char hp[256];
	if (!hl || hl >= sizeof(hp)) {
		strbuf_addf(err, "--public-url %s: no host, or one of over 255 characters: %s", url,
			    valid);
		return -1;
	}
	memcpy(hp, h, hl);
	hp[hl] = 0;
	char *port = NULL, name[256];
	if (hp[0] == '[') {
		char *e = strchr(hp, ']');
		unsigned char a[sizeof(struct in6_addr)];
		if (!e || (e[1] && e[1] != ':')) {
			strbuf_addf(err, "--public-url %s: '%s' is not a [bracketed] IPv6 address: %s",
				    url, hp, valid);
			return -1;
		}
		snprintf(name, sizeof(name), "%.*s", (int)(e - hp - 1), hp + 1);
		if (inet_pton(AF_INET6, name, a) != 1) {
			strbuf_addf(err, "--public-url %s: '%s' is not an IPv6 address: %s", url, name,
				    valid);
			return -1;
		}
		if (e[1])
			port = e + 2;
		e[1] = 0;
		snprintf(name, sizeof(name), "%s", hp);
	} else {
		port = strchr(hp, ':');
		if (port)
			*port++ = 0;
		snprintf(name, sizeof(name), "%s", hp);
		/* a DNS name or an IPv4 address: labels of letters, digits and
		   '-', none empty */
		int bad = !*name || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
						 "0123456789.-") != strlen(name) ||
			  name[0] == '.' || name[0] == '-' || strstr(name, "..");
		if (bad) {
			strbuf_addf(err, "--public-url %s: '%s' is not a host name (letters, digits, "
					 "'-' and '.') or an address: %s", url, name, valid);
			return -1;
		}
	}
	for (char *q = name; *q; q++)
		*q = (char)tolower((unsigned char)*q);
	long pn = 0;
	if (port) {
		char *end;
		errno = 0;
		pn = strtol(port, &end, 10);
		if (errno || *end || !*port || pn < 1 || pn > 65535) {
			strbuf_addf(err, "--public-url %s: the port must be a number 1-65535: %s", url,
				    valid);
			return -1;
		}
		if (pn == (https ? 443 : 80))
			pn = 0;
	}
	if (pn)
		snprintf(host, 300, "%s:%ld", name, pn);
	else
		snprintf(host, 300, "%s", name);
	snprintf(origin, 300, "%s://%s", https ? "https" : "http", host);
	return 0;
}

/* what a write needs besides the token: the CSRF values' secret, new in
 * every process and never stored, and the files a write depends on as they
 * are now (a write checks them again: token_current, store_current) */
static int write_state(struct serve *s, struct strbuf *err)
{
	if (getrandom(s->csrf_key, sizeof(s->csrf_key), 0) != (ssize_t)sizeof(s->csrf_key)) {
		strbuf_addf(err, "the CSRF secret: getrandom: %s", strerror(errno));
		return -1;
	}
	const char *tf = s->o.token_file, *db = s->o.dbpath;
	if (tf && lstat(tf, &s->token_st))
		memset(&s->token_st, 0, sizeof(s->token_st));
	s->db_st_ok = db && strcmp(db, ":memory:") && strncmp(db, "file:", 5) && !stat(db, &s->db_st);
	return 0;
}

/* the read-only connections the pages are built on (a store given by its
 * path; without one, the connection serve was given, alone) */
static int open_readers(struct serve *s, struct strbuf *err)
{
	size_t n = s->o.workers ? s->o.workers : DEF_WORKERS;
	int own = s->o.dbpath && strcmp(s->o.dbpath, ":memory:") && strncmp(s->o.dbpath, "file:", 5);
	if (!own)
		n = 1;
	s->idle = xcalloc(n, sizeof(*s->idle));
	for (size_t i = 0; i < n; i++) {
		char *msg = NULL;
		if (!own) {
			s->idle[i] = s->o.db;
		} else if (db_open(s->o.dbpath, DB_READONLY, &s->idle[i], &msg)) {
			strbuf_addf(err, "%s (a read connection for the pages)",
				    msg ? msg : s->o.dbpath);
			free(msg);
			return -1;
		}
		s->nidle = s->nreaders = i + 1;
	}
	s->heavy_max = n / 2 ? (unsigned)(n / 2) : 1;
	return 0;
}

/* every connection a page may use, and the limit of descriptors raised to
 * its hard limit when it would not hold them: -1 when even that is short */
static int descriptors(unsigned conns, struct strbuf *err)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 0;
	rlim_t want = (rlim_t)conns + 128;   /* the store's files, the pages', logs */
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		strbuf_addf(err, "--max-connections %u: this process may open %llu files (ulimit -n; "
				 "its hard limit %llu), %u connections need %llu: a smaller "
				 "--max-connections, or a higher limit", conns,
			    (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max, conns,
			    (unsigned long long)want);
		return -1;
	}
	return 0;
}

static void serve_free(struct serve *s)
{
	for (size_t i = 0; i < s->nidle; i++)
		if (s->idle[i] != s->o.db)
			db_close(s->idle[i]);
	free(s->idle);
	robot_bg_close(s->bg);
	pthread_mutex_destroy(&s->write_mu);
	pthread_mutex_destroy(&s->bg_mu);
	pthread_mutex_destroy(&s->pool_mu);
	pthread_cond_destroy(&s->pool_cv);
	pthread_mutex_destroy(&s->conn_mu);
	pthread_cond_destroy(&s->conn_cv);
	free(s->token);
	free(s->said);
	free(s->url);
	free(s);
}

int serve_start(const struct serve_opts *o, struct serve **out, struct strbuf *err)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	const char *listen = o->listen ? o->listen : "127.0.0.1:8080";
	if (serve_parse_listen(listen, &ss, &sl, err))
		return -1;
	struct serve *s = xcalloc(1, sizeof(*s));
	s->o = *o;
	pthread_mutex_init(&s->write_mu, NULL);
	pthread_mutex_init(&s->bg_mu, NULL);
	pthread_mutex_init(&s->pool_mu, NULL);
	pthread_cond_init(&s->pool_cv, NULL);
	pthread_mutex_init(&s->conn_mu, NULL);
	pthread_cond_init(&s->conn_cv, NULL);
	s->page_ms = 1000 * (o->page_seconds ? o->page_seconds : DEF_PAGE_SECONDS);
	s->page_max = (size_t)(o->page_max_mb ? o->page_max_mb : DEF_PAGE_MAX_MB) << 20;
	unsigned conns = o->max_connections ? o->max_connections : DEF_MAX_CONNECTIONS;
	unsigned per = o->per_address ? o->per_address : DEF_PER_ADDRESS;
	unsigned header_s = o->header_seconds ? o->header_seconds : DEF_HEADER_SECONDS;
	if (o->public_url && serve_parse_public_url(o->public_url, s->pub_origin, s->pub_host, err))
		goto fail;
	if (descriptors(conns, err))
		goto fail;
	if (o->token && write_state(s, err))
		goto fail;
	if (ss.ss_family == AF_INET6)
		s->loopback = IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr);
	else
		s->loopback = (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
	s->token = o->token ? xstrdup(o->token) : NULL;
	s->writes = s->token != NULL;
	if (open_readers(s, err))
		goto fail;
	if (o->dbpath) {
		/* serve's folder for the bisections it starts: made (0700) only
		   when it may write */
		char *dir = o->out_dir ? xstrfmt("%s/serve", o->out_dir) : xstrfmt("%s.serve", o->dbpath);
		struct robot_bg_opts bo = { .dbpath = o->dbpath, .out_dir = o->out_dir ? o->out_dir : dir,
					    .state_dir = dir, .bisect_minutes = o->bisect_minutes };
		if (o->out_dir && s->token && robot_out_dir(o->out_dir, NULL, err)) {
			free(dir);
			goto fail;
		}
		int rc = robot_bg_open(&bo, s->token != NULL, &s->bg, err);
		free(dir);
		if (rc && !s->token) {
			/* read-only: a folder of someone else's is not shown, and
			   serve starts all the same */
			strbuf_reset(err);
			rc = 0;
		}
		if (rc)
			goto fail;
	}
	/* a thread for every connection (a page is built by a thread of its
	   own besides, answer_page): none waits for another's request */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			 MHD_USE_POLL;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	s->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, s, MHD_OPTION_SOCK_ADDR,
				(struct sockaddr *)&ss, MHD_OPTION_CONNECTION_TIMEOUT, header_s,
				MHD_OPTION_CONNECTION_LIMIT, conns,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, per,
				MHD_OPTION_NOTIFY_COMPLETED, completed, s,
				MHD_OPTION_URI_LOG_CALLBACK, uri_seen, s,
				MHD_OPTION_NOTIFY_CONNECTION, conn_notify, s, MHD_OPTION_END);
	if (!s->d) {
		strbuf_addf(err, "--listen %s: cannot listen there (in use, or not an address "
				 "of this machine)", listen);
		goto fail;
	}
	s->header_ms = header_s * 1000;
	s->sweeping = 1;
	if (pthread_create(&s->sweeper, NULL, header_sweep, s)) {
		strbuf_addstr(err, "the thread of the headers' deadline could not be started");
		MHD_stop_daemon(s->d);
		goto fail;
	}
	s->sweeper_up = 1;
	s->wildcard = ss.ss_family == AF_INET6
		? IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&ss)->sin6_addr)
		: ((struct sockaddr_in *)&ss)->sin_addr.s_addr == htonl(INADDR_ANY);
	if (gethostname(s->hostname, sizeof(s->hostname)))
		s->hostname[0] = 0;
	s->hostname[sizeof(s->hostname) - 1] = 0;
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	unsigned port = di ? di->port : 0;
	char host[INET6_ADDRSTRLEN] = "?";
	if (ss.ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof(host));
		snprintf(s->addr, sizeof(s->addr), "[%s]", host);
	} else {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host));
		snprintf(s->addr, sizeof(s->addr), "%s", host);
	}
	s->port = port;
	s->url = xstrfmt("http://%s:%u/", s->addr, port);
	*out = s;
	return 0;
fail:
	serve_free(s);
	return -1;
}

const char *serve_public_origin(const struct serve *s)
{
	return s->pub_origin[0] ? s->pub_origin : NULL;
}

const char *serve_url(const struct serve *s)
{
	return s->url;
}

int serve_public(const struct serve *s)
{
	return !s->loopback;
}

void serve_stop(struct serve *s)
{
	if (!s)
		return;
	/* the pages being built stop their queries (their requests are
	   answered at once, those waiting for a worker too), so that the
	   connections' threads end; then the threads of pages answered
	   already (time up) give their connections back */
	pthread_mutex_lock(&s->pool_mu);
	s->stopping = 1;
	for (struct job *j = s->jobs; j; j = j->next)
		atomic_store(&j->w.stop, 1);
	pthread_cond_broadcast(&s->pool_cv);
	pthread_mutex_unlock(&s->pool_mu);
	MHD_stop_daemon(s->d);
	if (s->sweeper_up) {
		pthread_mutex_lock(&s->conn_mu);
		s->sweeping = 0;
		pthread_cond_signal(&s->conn_cv);
		pthread_mutex_unlock(&s->conn_mu);
		pthread_join(s->sweeper, NULL);
	}
	/* a page's own computation between its queries (a report's
	   rendering) is not stopped: waited for 5 s, then left to the end of
	   the process with what it holds (s among it) */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	pthread_mutex_lock(&s->pool_mu);
	while (s->running)
		if (pthread_cond_timedwait(&s->pool_cv, &s->pool_mu, &until) == ETIMEDOUT)
			break;
	unsigned left = s->running;
	pthread_mutex_unlock(&s->pool_mu);
	/* a bisection still running goes on (its own session) */
	if (!left)
		serve_free(s);
}
