/*
 * Unit tests of schedlab serve's pieces that take untrusted text
 * (harness/serve): query values, JSON of any bytes, the CSRF value, the
 * token file's checks and --listen's addresses, and how the pages say
 * things to people: a selector's terms as chips naming only what differs,
 * a moment in words (the HTML escaping every text from the store goes
 * through is test_html's).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/serve/serve.h"
#include "harness/serve/serve_internal.h"
#include "harness/util/sha256.h"
#include "tests/unit/tap.h"

TEST(query_values_are_percent_encoded)
{
	struct strbuf o = STRBUF_INIT;
	url_enc(&o, "machine=a b,params={\"x\":1}&y");
	CHECK_STR(o.buf, "machine%3Da%20b%2Cparams%3D%7B%22x%22%3A1%7D%26y");
	strbuf_release(&o);
}

TEST(json_of_any_bytes)
{
	json_t *j = jstr("ok \xff end");
	CHECK(j && json_is_string(j));
	CHECK_STR(json_string_value(j), "ok \xef\xbf\xbd end");
	json_decref(j);
	j = jstr(NULL);
	CHECK(json_is_null(j));
	json_decref(j);
}

TEST(csrf_is_an_hmac_of_the_path_under_the_key)
{
	unsigned char k1[32], k2[32];
	memset(k1, 0x11, sizeof(k1));
	memset(k2, 0x22, sizeof(k2));
	char a[65], b[65], c[65], d[65], want[65];
	serve_csrf(k1, "/alert/1", a);
	serve_csrf(k1, "/alert/1", b);
	serve_csrf(k1, "/alert/2", c);
	serve_csrf(k2, "/alert/1", d);
	CHECK_STR(a, b);
	CHECK(strcmp(a, c) && strcmp(a, d));
	CHECK(strlen(a) == 64 && strspn(a, "0123456789abcdef") == 64);
	/* HMAC-SHA256(key, "schedlab serve csrf v2\0" PATH): no hash of a
	   token anyone could test a guess against */
	static const char m[] = "schedlab serve csrf v2\0/alert/1";
	unsigned char h[32];
	hmac_sha256(k1, sizeof(k1), m, sizeof(m) - 1, h);
	sha256_hex(h, want);
	CHECK_STR(a, want);
}

/* --listen ADDR[:PORT] */
static int listen_of(const char *l, int *family, unsigned *port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	struct strbuf err = STRBUF_INIT;
	int rc = serve_parse_listen(l, &ss, &len, &err);
	strbuf_release(&err);
	if (rc)
		return rc;
	*family = ss.ss_family;
	*port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					      : ((struct sockaddr_in *)&ss)->sin_port);
	return 0;
}

TEST(listen_addresses)
{
	int f = 0;
	unsigned port = 1;
	CHECK(listen_of("127.0.0.1:8081", &f, &port) == 0 && f == AF_INET && port == 8081);
	CHECK(listen_of("127.0.0.2:0", &f, &port) == 0 && f == AF_INET && port == 0);
	CHECK(listen_of("127.0.0.1", &f, &port) == 0 && f == AF_INET && port == 8080);
	CHECK(listen_of("[::1]", &f, &port) == 0 && f == AF_INET6 && port == 8080);
	CHECK(listen_of("[::1]:0", &f, &port) == 0 && f == AF_INET6 && port == 0);
	CHECK(listen_of("[::]:9000", &f, &port) == 0 && f == AF_INET6 && port == 9000);
	CHECK(listen_of("::1", &f, &port) == -1);
	CHECK(listen_of("[::1", &f, &port) == -1);
	CHECK(listen_of("[::1]x", &f, &port) == -1);
	CHECK(listen_of("[::1]:", &f, &port) == -1);
	CHECK(listen_of("127.0.0.1:", &f, &port) == -1);
	CHECK(listen_of("127.0.0.1:65536", &f, &port) == -1);
	CHECK(listen_of("localhost:80", &f, &port) == -1);
	CHECK(listen_of("", &f, &port) == -1);
	CHECK(listen_of("[]:80", &f, &port) == -1);
}

/* --public-url URL: the origin and Host a proxied browser sends, or -1 */
static int public_of(const char *url, const char *want_origin, const char *want_host)
{
	char origin[300] = "", host[300] = "";
	struct strbuf err = STRBUF_INIT;
	int rc = serve_parse_public_url(url, origin, host, &err);
	int named = !rc || strstr(err.buf, "http(s)://HOST[:PORT][/]") != NULL;
	strbuf_release(&err);
	if (rc)
		return named ? -1 : -2;
	return strcmp(origin, want_origin) || strcmp(host, want_host) ? 1 : 0;
}

TEST(public_urls)
{
	CHECK(public_of("https://lab.example", "https://lab.example", "lab.example") == 0);
	CHECK(public_of("https://lab.example/", "https://lab.example", "lab.example") == 0);
	CHECK(public_of("HTTPS://Lab.Example:443/", "https://lab.example", "lab.example") == 0);
	CHECK(public_of("https://lab.example:8443", "https://lab.example:8443", "lab.example:8443") == 0);
	CHECK(public_of("http://lab.example:80", "http://lab.example", "lab.example") == 0);
	CHECK(public_of("http://192.0.2.7:8080", "http://192.0.2.7:8080", "192.0.2.7:8080") == 0);
	CHECK(public_of("https://[2001:db8::1]", "https://[2001:db8::1]", "[2001:db8::1]") == 0);
	CHECK(public_of("https://[2001:db8::1]:8443/", "https://[2001:db8::1]:8443",
			"[2001:db8::1]:8443") == 0);
	/* refused, each naming what is valid */
	CHECK(public_of("ftp://lab.example", "", "") == -1);
	CHECK(public_of("lab.example", "", "") == -1);
	CHECK(public_of("https://", "", "") == -1);
	CHECK(public_of("https://lab.example/lab", "", "") == -1);
	CHECK(public_of("https://lab.example?x", "", "") == -1);
	CHECK(public_of("https://lab.example#x", "", "") == -1);
	CHECK(public_of("https://user@lab.example", "", "") == -1);
	CHECK(public_of("https://lab..example", "", "") == -1);
	CHECK(public_of("https://.lab.example", "", "") == -1);
	CHECK(public_of("https://lab.example:0", "", "") == -1);
	CHECK(public_of("https://lab.example:65536", "", "") == -1);
	CHECK(public_of("https://lab.example:", "", "") == -1);
	CHECK(public_of("https://[2001:db8::1", "", "") == -1);
	CHECK(public_of("https://[not-v6]", "", "") == -1);
	CHECK(public_of("https://lab example", "", "") == -1);
}

static int write_token(const char *path, const char *text, mode_t mode)
{
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return -1;
	int ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok && !chmod(path, mode) ? 0 : -1;
}

TEST(token_file_checks)
{
	char dir[] = "/tmp/test_serve.XXXXXX";
	CHECK(mkdtemp(dir));
	char *p = xstrfmt("%s/token", dir);
	char *tok = NULL;
	struct strbuf err = STRBUF_INIT;

	CHECK(!write_token(p, "  a-good-token-0123456789  \nsecond line\n", 0600));
	struct stat st, st2;
	CHECK(serve_token_load(p, &tok, &st, &err) == 0);
	CHECK_STR(tok ? tok : "", "a-good-token-0123456789");
	CHECK(!stat(p, &st2) && st.st_ino == st2.st_ino && st.st_size == st2.st_size);
	free(tok);
	tok = NULL;

	CHECK(!write_token(p, "a-good-token-0123456789\n", 0640));
	CHECK(serve_token_load(p, &tok, NULL, &err) == -1);
	CHECK(strstr(err.buf, "chmod 600") != NULL);
	CHECK(tok == NULL);
	strbuf_reset(&err);

	CHECK(!write_token(p, "a-good-token-0123456789\n", 0604));
	CHECK(serve_token_load(p, &tok, NULL, &err) == -1);
	strbuf_reset(&err);

	CHECK(!write_token(p, "short\n", 0600));
	CHECK(serve_token_load(p, &tok, NULL, &err) == -1);
	CHECK(strstr(err.buf, "at least 16") != NULL);
	strbuf_reset(&err);

	CHECK(serve_token_load(dir, &tok, NULL, &err) == -1);   /* a directory */
	strbuf_reset(&err);
	char *missing = xstrfmt("%s/nope", dir);
	CHECK(serve_token_load(missing, &tok, NULL, &err) == -1);
	CHECK(strstr(err.buf, missing) != NULL);
	free(missing);
	strbuf_reset(&err);
	/* a FIFO: refused at once, not waited on for a writer */
	char *fifo = xstrfmt("%s/fifo", dir);
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK(serve_token_load(fifo, &tok, NULL, &err) == -1);
	CHECK(strstr(err.buf, "not a regular file") != NULL);
	unlink(fifo);
	free(fifo);

	unlink(p);
	rmdir(dir);
	free(p);
	strbuf_release(&err);
}

TEST(selector_terms_read_as_select_c_reads_them)
{
	struct strvec k = { 0 }, v = { 0 };
	where_terms("preempt=full,hz=250,knobs={},params={\"groups\":2,\"loops\":200},x=a=b", &k,
		    &v);
	CHECK(k.nr == 5 && v.nr == 5);
	CHECK_STR(k.v[3], "params");
	CHECK_STR(v.v[3], "{\"groups\":2,\"loops\":200}");   /* the comma continues it */
	CHECK_STR(k.v[4], "x");
	CHECK_STR(v.v[4], "a=b");
	strvec_clear(&k);
	strvec_clear(&v);
}

TEST(chips_name_only_what_differs)
{
	const char *w[] = { "preempt=full,hz=250,params={\"groups\":2}",
			    "preempt=full,hz=1000,params={\"groups\":2}" };
	struct strvec common = { 0 };
	where_common(w, 2, &common);
	CHECK(common.nr == 2);
	CHECK_STR(common.v[0], "preempt");
	CHECK_STR(common.v[1], "params");
	struct strbuf o = STRBUF_INIT;
	html_chips(&o, w[1], &common);
	CHECK_STR(o.buf, "<span class=\"chip\" title=\"hz=1000\">1000 Hz</span> ");
	strbuf_reset(&o);
	/* nothing differs: said so; no knobs and the real clock go without saying */
	html_chips(&o, "preempt=full,knobs={},clock=real", &common);
	CHECK_STR(o.buf, "<span class=\"muted\">the same as the others</span>");
	strbuf_reset(&o);
	/* a stored value is text in the chip and its title */
	html_chips(&o, "machine=<b>x</b>", NULL);
	CHECK_STR(o.buf, "<span class=\"chip\" title=\"machine=&lt;b&gt;x&lt;/b&gt;\">"
			 "&lt;b&gt;x&lt;/b&gt;</span> ");
	strbuf_release(&o);
	strvec_clear(&common);
}

TEST(moments_in_words)
{
	char w[64];
	time_t now = 1796601600;   /* 2026-12-07T00:00:00Z */
	moment_words(w, sizeof(w), "2026-12-04T00:00:00Z", now);
	CHECK_STR(w, "3 days ago");
	moment_words(w, sizeof(w), "2026-12-06 23:00:00", now);
	CHECK_STR(w, "1 hour ago");
	moment_words(w, sizeof(w), "2026-02-08T03:00:00.000Z", now);
	CHECK_STR(w, "9 months ago");
	moment_words(w, sizeof(w), "2026-12-06T23:59:30Z", now);
	CHECK_STR(w, "just now");
	moment_words(w, sizeof(w), "not a time", now);
	CHECK_STR(w, "not a time");
	CHECK_STR(col_label("change_pct"), "change");
	CHECK_STR(col_label("bad_session"), "first bad night");
	CHECK_STR(col_label("some_new_key"), "some new key");
}

int main(void)
{
	RUN(query_values_are_percent_encoded);
	RUN(json_of_any_bytes);
	RUN(csrf_is_an_hmac_of_the_path_under_the_key);
	RUN(listen_addresses);
	RUN(public_urls);
	RUN(token_file_checks);
	RUN(selector_terms_read_as_select_c_reads_them);
	RUN(chips_name_only_what_differs);
	RUN(moments_in_words);
	return tap_done();
}
