/*
 * Unit tests of harness/util/html.c, the one HTML escaper of the report
 * and serve's site (a stored text rendered the same on both): markup and
 * quotes become entities, control characters their visible pictures
 * (newline and tab kept), invalid UTF-8 U+FFFD, valid UTF-8 kept; the
 * cases the report's and serve's escapers each had.
 */
#include <stdlib.h>
#include <string.h>

#include "harness/util/html.h"
#include "harness/util/utf8.h"
#include "tests/unit/tap.h"

static char *esc(const char *s)
{
	struct strbuf o = STRBUF_INIT;
	html_esc(&o, s);
	return strbuf_detach(&o, NULL);
}

TEST(markup_and_quotes_escaped)
{
	char *t = esc("<script>alert(\"x\")</script> & 'y'");
	CHECK_STR(t, "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;");
	free(t);
	t = esc("<script>alert('x') & \"y\"</script>");
	CHECK_STR(t, "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;");
	free(t);
}

TEST(control_characters_visible_newline_tab_kept)
{
	char *t = esc("a\x1b[31mb\x01\x7f\n\tc");
	/* ESC U+241B, SOH U+2401, DEL U+2421 */
	CHECK_STR(t, "a\xe2\x90\x9b[31mb\xe2\x90\x81\xe2\x90\xa1\n\tc");
	free(t);
	t = esc("a\tb\nc\x01" "d\x7f" "\xc3\xa9");
	CHECK_STR(t, "a\tb\nc\xe2\x90\x81" "d\xe2\x90\xa1" "\xc3\xa9");
	free(t);
	/* every one of 0x01..0x1f but newline and tab: its picture, no raw byte */
	for (int c = 1; c < 0x20; c++) {
		if (c == '\n' || c == '\t')
			continue;
		char in[2] = { (char)c, 0 }, want[4] = { '\xe2', '\x90', (char)(0x80 + c), 0 };
		t = esc(in);
		CHECK_STR(t, want);
		free(t);
	}
}

TEST(invalid_utf8_replaced_valid_kept)
{
	char *t = esc("\xc3\xa9 \xff\xfe x \xe2\x82");
	CHECK_STR(t, "\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd x \xef\xbf\xbd\xef\xbf\xbd");
	free(t);
	t = esc("\xe2\x82\xac \xf0\x9d\x84\x9e \xed\xa0\x80");   /* euro, G clef, a surrogate */
	CHECK_STR(t, "\xe2\x82\xac \xf0\x9d\x84\x9e \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	free(t);
}

TEST(output_is_valid_utf8_for_any_bytes)
{
	char in[256];
	for (int i = 0; i < 255; i++)
		in[i] = (char)(i + 1);
	in[255] = 0;
	struct strbuf o = STRBUF_INIT;
	html_esc(&o, in);
	CHECK(!strchr(o.buf, '<') && !strchr(o.buf, '"') && !strchr(o.buf, '\''));
	CHECK(utf8_scrub(&o) == 0);
	strbuf_release(&o);
}

TEST(empty_null_and_formatted)
{
	char *t = esc("");
	CHECK_STR(t, "");
	free(t);
	struct strbuf o = STRBUF_INIT;
	html_esc(&o, NULL);   /* nothing, no crash */
	CHECK(o.len == 0);
	html_escf(&o, "%s=%d", "<a>", 3);
	CHECK_STR(o.buf, "&lt;a&gt;=3");
	strbuf_release(&o);
}

int main(void)
{
	RUN(markup_and_quotes_escaped);
	RUN(control_characters_visible_newline_tab_kept);
	RUN(invalid_utf8_replaced_valid_kept);
	RUN(output_is_valid_utf8_for_any_bytes);
	RUN(empty_null_and_formatted);
	return tap_done();
}
