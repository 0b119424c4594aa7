/*
 * Unit tests of schedlab serve's pieces that take untrusted text
 * (harness/serve): the HTML escaping every text from the store goes
 * through (markup inert, control characters visible, invalid UTF-8
 * replaced), query values, JSON of any bytes, the CSRF value and the
 * token file's checks.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/serve/serve.h"
#include "harness/serve/serve_internal.h"
#include "tests/unit/tap.h"

static char *esc(const char *s)
{
	struct strbuf o = STRBUF_INIT;
	html_esc(&o, s);
	return strbuf_detach(&o, NULL);
}

TEST(markup_is_escaped)
{
	char *t = esc("<script>alert('x') & \"y\"</script>");
	CHECK_STR(t, "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;");
	free(t);
}

TEST(control_characters_are_visible)
{
	char *t = esc("a\x1b[31mb\x01\x7f\n\tc");
	/* ESC U+241B, SOH U+2401, DEL U+2421; newline and tab kept */
	CHECK_STR(t, "a\xe2\x90\x9b[31mb\xe2\x90\x81\xe2\x90\xa1\n\tc");
	free(t);
}

TEST(invalid_utf8_is_replaced_valid_kept)
{
	char *t = esc("\xc3\xa9 \xff\xfe x \xe2\x82");
	CHECK_STR(t, "\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd x \xef\xbf\xbd\xef\xbf\xbd");
	free(t);
}

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

TEST(csrf_depends_on_token_and_path)
{
	char a[65], b[65], c[65], d[65];
	serve_csrf("token-one-0123456789", "/alert/1", a);
	serve_csrf("token-one-0123456789", "/alert/1", b);
	serve_csrf("token-one-0123456789", "/alert/2", c);
	serve_csrf("token-two-0123456789", "/alert/1", d);
	CHECK_STR(a, b);
	CHECK(strcmp(a, c) && strcmp(a, d));
	CHECK(strlen(a) == 64 && strspn(a, "0123456789abcdef") == 64);
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
	CHECK(serve_token_load(p, &tok, &err) == 0);
	CHECK_STR(tok ? tok : "", "a-good-token-0123456789");
	free(tok);
	tok = NULL;

	CHECK(!write_token(p, "a-good-token-0123456789\n", 0640));
	CHECK(serve_token_load(p, &tok, &err) == -1);
	CHECK(strstr(err.buf, "chmod 600") != NULL);
	CHECK(tok == NULL);
	strbuf_reset(&err);

	CHECK(!write_token(p, "a-good-token-0123456789\n", 0604));
	CHECK(serve_token_load(p, &tok, &err) == -1);
	strbuf_reset(&err);

	CHECK(!write_token(p, "short\n", 0600));
	CHECK(serve_token_load(p, &tok, &err) == -1);
	CHECK(strstr(err.buf, "at least 16") != NULL);
	strbuf_reset(&err);

	CHECK(serve_token_load(dir, &tok, &err) == -1);   /* a directory */
	strbuf_reset(&err);
	char *missing = xstrfmt("%s/nope", dir);
	CHECK(serve_token_load(missing, &tok, &err) == -1);
	CHECK(strstr(err.buf, missing) != NULL);
	free(missing);

	unlink(p);
	rmdir(dir);
	free(p);
	strbuf_release(&err);
}

int main(void)
{
	RUN(markup_is_escaped);
	RUN(control_characters_are_visible);
	RUN(invalid_utf8_is_replaced_valid_kept);
	RUN(query_values_are_percent_encoded);
	RUN(json_of_any_bytes);
	RUN(csrf_depends_on_token_and_path);
	RUN(token_file_checks);
	return tap_done();
}
