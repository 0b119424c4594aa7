/*
 * Unit tests of options as data (harness/util/opts.c): the check of an
 * object against a table (unknown keys with the valid ones, an internal key
 * accepted but not offered, types and bounds by JSON path, defaults, a
 * key's .value hook), and that the docs' tables are the code's: every
 * `<!-- options: plan -->` / `<!-- options: target NAME -->` region of
 * a doc holds what `schedlab help plan|targets NAME --markdown` writes
 * (scripts/doc-tables.sh rewrites them), and every target's table is in the
 * doc it names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/orchestrate/plan.h"
#include "harness/targets/target.h"
#include "harness/util/opts.h"
#include "tests/unit/tap.h"

static json_t *no_x(json_t *v, const char *path, struct strbuf *err)
{
	if (strchr(json_string_value(v), 'x')) {
		strbuf_addf(err, "%s: no x", path);
		return NULL;
	}
	return json_incref(v);
}

static const char *const colours[] = { "red", "blue", NULL };
static const struct param_spec specs[] = {
	{ "n", PT_INT, "3", 1, 10, .help = "a count" },
	{ "big", PT_INT, "0", 0, 9223372036854775807.0, .help = "any non-negative integer" },
	{ "colour", PT_ENUM, "\"red\"", .choices = colours, .help = "a colour" },
	{ "word", PT_STR, .value = no_x, .help = "a word without x" },
	{ "mark", PT_JSON, .flags = PF_INTERNAL, .help = "written by us" },
	PARAM_END,
};

/* the resolved object as text, or "ERR: message" */
static char *resolve(const char *text, const char *path, int typed)
{
	struct strbuf err = STRBUF_INIT;
	json_t *in = json_loads(text, 0, NULL);
	json_t *out = opts_resolve(specs, in, path, "the thing", typed, &err);
	char *r = out ? json_dumps(out, JSON_SORT_KEYS | JSON_COMPACT) : xstrfmt("ERR: %s", err.buf);
	json_decref(in);
	json_decref(out);
	strbuf_release(&err);
	return r;
}

#define CHECK_RESOLVE(text, path, typed, want)                                                \
	do {                                                                                  \
		char *r_ = resolve(text, path, typed);                                        \
		CHECK_STR(r_, want);                                                          \
		free(r_);                                                                     \
	} while (0)

TEST(resolve_checks_and_fills)
{
	CHECK_RESOLVE("{}", "", 0, "{\"big\":0,\"colour\":\"red\",\"n\":3}");
	CHECK_RESOLVE("{\"type\": \"t\", \"n\": 10, \"mark\": {}}", "target", 1,
		      "{\"big\":0,\"colour\":\"red\",\"mark\":{},\"n\":10,\"type\":\"t\"}");
	CHECK_RESOLVE("{\"nn\": 1}", "", 0,
		      "ERR: nn: unknown key for the thing (valid: n, big, colour, word)");
	CHECK_RESOLVE("{\"nn\": 1}", "targets[1]", 1,
		      "ERR: targets[1].nn: unknown key for the thing (valid: type, n, big, colour, "
		      "word)");
	CHECK_RESOLVE("{\"type\": 1}", "", 0, "ERR: type: unknown key for the thing (valid: n, "
		      "big, colour, word)");
	CHECK_RESOLVE("{\"n\": 11}", "t", 1, "ERR: t.n: must be a positive integer no larger than 10");
	CHECK_RESOLVE("{\"n\": 2.0}", "t", 1, "ERR: t.n: must be a positive integer no larger than 10");
	CHECK_RESOLVE("{\"big\": -1}", "", 0, "ERR: big: must be a non-negative integer");
	CHECK_RESOLVE("{\"big\": 9223372036854775807}", "", 0,
		      "{\"big\":9223372036854775807,\"colour\":\"red\",\"n\":3}");
	CHECK_RESOLVE("{\"colour\": \"green\"}", "", 0,
		      "ERR: colour: must be one of \"red\", \"blue\"");
	CHECK_RESOLVE("{\"word\": \"axe\"}", "w", 1, "ERR: w.word: no x");
	CHECK_RESOLVE("{\"word\": \"\"}", "w", 1, "ERR: w.word: must be a non-empty string on one line");
	CHECK_RESOLVE("[]", "w", 1, "ERR: w: must be an object");
}

TEST(markdown_and_describe)
{
	struct strbuf sb = STRBUF_INIT;
	params_markdown(specs, &sb);
	CHECK_CONTAINS(sb.buf, "| key | type | default | meaning |\n|---|---|---|---|\n"
			       "| `n` | integer 1..10 | `3` | a count |\n"
			       "| `big` | integer, at least 0 | `0` | any non-negative integer |\n"
			       "| `colour` | `red`, `blue` | `\"red\"` | a colour |\n"
			       "| `word` | string | none | a word without x |\n");
	strbuf_reset(&sb);
	params_describe(specs, &sb);
	CHECK_CONTAINS(sb.buf, "  n              int    [1..10] a count (default 3)\n");
	CHECK_CONTAINS(sb.buf, "  big            int    [0..] any non-negative integer (default 0)\n");
	strbuf_release(&sb);
}

static char *read_doc(const char *doc)
{
	char *path = xstrfmt("%s/../../%s", testdata_dir(), doc);
	FILE *f = fopen(path, "r");
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t n;
	while (f && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	if (!f)
		printf("#   %s: cannot read\n", path);
	if (f)
		fclose(f);
	free(path);
	return f ? strbuf_detach(&sb, NULL) : NULL;
}

/* the region of doc after `marker` (its line) up to "<!-- end options -->"
 * is the code's table: 0, else -1 and (unless quiet) a failure naming the
 * doc and what to run */
static int check_doc_table(const char *doc, const char *marker, const struct param_spec *specs,
			   const char *cmd, int quiet)
{
	int rc = 0;
	char *text = read_doc(doc);
	char *line = xstrfmt("%s\n", marker);
	const char *at = text ? strstr(text, line) : NULL;
	const char *end = at ? strstr(at, "<!-- end options -->") : NULL;
	struct strbuf want = STRBUF_INIT;
	params_markdown(specs, &want);
	if (!at || !end) {
		rc = -1;
		if (!quiet)
			printf("#   %s: no \"%s\" ... \"<!-- end options -->\" region\n", doc, marker);
	} else {
		at += strlen(line);
		size_t n = (size_t)(end - at);
		if (n != want.len || memcmp(at, want.buf, n)) {
			size_t i = 0;
			while (i < n && i < want.len && at[i] == want.buf[i])
				i++;
			while (i > 0 && want.buf[i - 1] != '\n')
				i--;
			rc = -1;
			if (!quiet)
				printf("#   %s: the table after %s is not the code's (first differing line: "
			       "\"%.*s\"); run scripts/doc-tables.sh (it writes `%s`)\n", doc, marker,
			       (int)strcspn(want.buf + i, "\n"), want.buf + i, cmd);
		}
	}
	strbuf_release(&want);
	free(line);
	free(text);
	return rc;
}

TEST(docs_tables_are_the_codes)
{
	CHECK(!check_doc_table("docs/plan-format.md", "<!-- options: plan -->", plan_options,
			       "schedlab help plan --markdown", 0));
	for (const struct target_ops *const *t = target_all(); *t; t++) {
		char *marker = xstrfmt("<!-- options: target %s -->", (*t)->name);
		char *cmd = xstrfmt("schedlab help targets %s --markdown", (*t)->name);
		CHECK(!check_doc_table((*t)->doc, marker, (*t)->options, cmd, 0));
		free(marker);
		free(cmd);
	}
}

/* a key added to a table without the doc's table following is caught (the
 * check above, on a table one key longer than qemu's) */
TEST(a_key_missing_from_a_doc_is_caught)
{
	const struct target_ops *q = target_find("qemu");
	size_t n = 0;
	while (q->options[n].name)
		n++;
	struct param_spec *more = calloc(n + 2, sizeof(*more));
	memcpy(more, q->options, n * sizeof(*more));
	more[n] = (struct param_spec){ .name = "new_key", .type = PT_BOOL, .def = "false",
				       .help = "not in the doc" };
	CHECK(check_doc_table("docs/qemu.md", "<!-- options: target qemu -->", more, "x", 1) == -1);
	free(more);
}

int main(void)
{
	RUN(resolve_checks_and_fills);
	RUN(markdown_and_describe);
	RUN(docs_tables_are_the_codes);
	RUN(a_key_missing_from_a_doc_is_caught);
	return tap_done();
}
