/*
 * The HTTP side of schedlab serve (serve.h): the daemon, the routes, the
 * token and the checks of every write. Pages are built by serve_pages.c
 * and answered here as HTML or JSON.
 */
#include "harness/serve/serve.h"
#include "harness/serve/serve_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/orchestrate/robot_act.h"
#include "harness/orchestrate/robot_bg.h"
#include "harness/util/sha256.h"

#define MAX_BODY (256 * 1024)  /* a POST's form: a note of 85,000 escaped bytes at least */
/* how long a write waits for another process's write lock before it is
 * answered 503 (one thread answers every request: the 10 s the commands
 * wait would stop the whole site), and the Retry-After it is told */
#define WRITE_WAIT_MS 250
#define WRITE_RETRY_S 5

struct serve {
	struct serve_opts o;
	int loopback;     /* listening on 127.0.0.0/8 or ::1 only */
	int wildcard;     /* listening on 0.0.0.0 or :: (every address) */
	char addr[INET6_ADDRSTRLEN + 2];  /* the listen address as a Host names it */
	unsigned port;    /* the port bound */
	char hostname[256];  /* this machine's name (a Host over a network) */
	char *token;
	unsigned char csrf_key[32];  /* the CSRF values' secret, this process's */
	struct stat token_st;  /* the token file as last read (o.token_file) */
	struct stat db_st;     /* the store file as opened (o.dbpath) */
	int db_st_ok;          /* db_st holds it */
	char *said;            /* the last trouble said on stderr (said once) */
	struct MHD_Daemon *d;
	char *url;
	struct robot_bg *bg;   /* the bisections started from the pages */
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

static const char *query_arg(void *cls, const char *name)
{
	const char *v = MHD_lookup_connection_value(cls, MHD_GET_ARGUMENT_KIND, name);
	return v && *v ? v : NULL;
}

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

/* a POST from another site, or from a page that is not ours: refused
 * before anything else is looked at */
static const char *cross_site(struct MHD_Connection *c)
{
	const char *sfs = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site");
	if (sfs && strcmp(sfs, "same-origin") && strcmp(sfs, "none"))
		return "a cross-site request (Sec-Fetch-Site)";
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	if (origin) {
		const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
		if (!host || strncmp(origin, "http://", 7) || strcmp(origin + 7, host))
			return "a request from another origin (Origin)";
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

static enum MHD_Result post_alert(struct serve *s, struct MHD_Connection *c, const char *url,
				  int64_t id, struct req *rq, int json)
{
	if (!s->token)
		return send_text(c, 403, "read-only: schedlab serve was started without "
					 "--token-file, so every write is refused", json);
	const char *why = cross_site(c);
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
		int code = serve_bisect(s->o.db, s->bg, id, &d, &err);
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
	   recorded (one thread: no request runs meanwhile) */
	if (s->bg)
		robot_bg_reap(s->bg);
	/* DNS rebinding: a site whose name resolves to this server would be
	   the same origin as it in the victim's browser */
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	if (!host_ok(s, host)) {
		char *m = s->wildcard
			? xstrfmt("this server answers only to localhost, 127.0.0.1, [::1] and "
				  "this machine's addresses and name with port %u (the Host '%.100s' "
				  "names another: DNS rebinding guard)", s->port, host ? host : "")
			: xstrfmt("this server answers only to localhost, 127.0.0.1, [::1] and "
				  "%s:%u, the address it listens on (the Host '%.100s' names another: "
				  "DNS rebinding guard)", s->addr, s->port, host ? host : "");
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
	struct page p = { .o = &s->o, .bg = s->bg, .path = url, .arg = query_arg, .cls = c,
			  .status = 200, .want_html = !json };
	strbuf_init(&p.html, 0);
	strbuf_init(&p.err, 0);
	int64_t sid = path_id(url, "/session/"), rid = path_id(url, "/run/");
	int64_t bid = path_id(url, "/bisect/");
	if (!strcmp(url, "/"))
		page_overview(&p);
	else if (!strcmp(url, "/sessions"))
		page_sessions(&p);
	else if (sid > 0)
		page_session(&p, sid);
	else if (rid > 0)
		page_run(&p, rid);
	else if (!strcmp(url, "/trend"))
		page_trend(&p);
	else if (!strcmp(url, "/compare"))
		page_compare(&p);
	else if (!strcmp(url, "/report"))
		page_report(&p);
	else if (bid > 0)
		page_bisect(&p, bid);
	else if (!strcmp(url, "/alerts"))
		page_alerts(&p);
	else if (aid > 0) {
		/* the page's form carries this page's csrf value */
		page_alert(&p, aid);
		char h[65];
		if (p.status == 200 && s->token) {
			serve_csrf(s->csrf_key, url, h);
			json_object_set_new(p.doc, "csrf", json_string(h));
		}
		if (p.status == 200 && p.want_html)
			page_alert_forms(&p, aid, s->token ? h : NULL);
	} else {
		p.status = 404;
		strbuf_addf(&p.err, "no page %s: see / (docs/serve.md lists the pages)", url);
	}
	enum MHD_Result r = send_page(c, &p, json);
	json_decref(p.doc);
	free(p.title);
	strbuf_release(&p.html);
	strbuf_release(&p.err);
	(void)version;
	return r;
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

int serve_start(const struct serve_opts *o, struct serve **out, struct strbuf *err)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	const char *listen = o->listen ? o->listen : "127.0.0.1:8080";
	if (serve_parse_listen(listen, &ss, &sl, err))
		return -1;
	struct serve *s = xcalloc(1, sizeof(*s));
	s->o = *o;
	if (o->token && write_state(s, err)) {
		free(s);
		return -1;
	}
	if (ss.ss_family == AF_INET6)
		s->loopback = IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr);
	else
		s->loopback = (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
	s->token = o->token ? xstrdup(o->token) : NULL;
	if (o->dbpath) {
		/* serve's folder for the bisections it starts: made (0700) only
		   when it may write */
		char *dir = o->out_dir ? xstrfmt("%s/serve", o->out_dir) : xstrfmt("%s.serve", o->dbpath);
		struct robot_bg_opts bo = { .dbpath = o->dbpath, .out_dir = o->out_dir ? o->out_dir : dir,
					    .state_dir = dir, .bisect_minutes = o->bisect_minutes };
		if (o->out_dir && s->token && robot_out_dir(o->out_dir, NULL, err)) {
			free(dir);
			free(s->token);
			free(s);
			return -1;
		}
		int rc = robot_bg_open(&bo, s->token != NULL, &s->bg, err);
		free(dir);
		if (rc && !s->token) {
			/* read-only: a folder of someone else's is not shown, and
			   serve starts all the same */
			strbuf_reset(err);
			rc = 0;
		}
		if (rc) {
			free(s->token);
			free(s);
			return -1;
		}
	}
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	s->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, s, MHD_OPTION_SOCK_ADDR,
				(struct sockaddr *)&ss, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
				MHD_OPTION_NOTIFY_COMPLETED, completed, s,
				MHD_OPTION_URI_LOG_CALLBACK, uri_seen, s, MHD_OPTION_END);
	if (!s->d) {
		strbuf_addf(err, "--listen %s: cannot listen there (in use, or not an address "
				 "of this machine)", listen);
		robot_bg_close(s->bg);
		free(s->token);
		free(s);
		return -1;
	}
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
	MHD_stop_daemon(s->d);
	/* a bisection still running goes on (its own session) */
	robot_bg_close(s->bg);
	free(s->token);
	free(s->said);
	free(s->url);
	free(s);
}
