/*
 * Unit tests for harness/util/shquote.c, the one quoting function for commands
 * sent to ssh targets. Hostile words (spaces, quotes, $(), backticks,
 * semicolons, newlines, globs, the empty word, non-ASCII, a leading dash)
 * are quoted, the command line is run by /bin/sh -c through the
 * child-process module (as the remote login shell would), and the argv that
 * arrives must equal the argv that was quoted, byte for byte. A marker file
 * proves that no command substitution ran.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness/util/proc.h"
#include "harness/util/shquote.h"
#include "tests/unit/tap.h"

static const char *const hostile[] = {
	"plain",
	"",
	"two words",
	"  leading and trailing  ",
	"it's",
	"'",
	"''",
	"\"double\"",
	"back\\slash\\",
	"$(touch MARKER)",
	"`touch MARKER`",
	"${HOME}",
	"$HOME",
	"a;touch MARKER;b",
	"a && touch MARKER",
	"a | touch MARKER",
	"line1\nline2\n",
	"\n",
	"tab\there",
	"*",
	"?",
	"[a-z]",
	"~",
	"~root",
	"#comment",
	"-n",
	"--",
	"a=b",
	"x'$(touch MARKER)'y",
	"'\"'\"'",
	"!event",
	"gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x90\xa7",
	"\x01\x7f\xff",
	"<in >out 2>&1",
	"{a,b}",
	"%s%n",
	NULL,
};

TEST(bare_words_stay_bare)
{
	struct strbuf sb = STRBUF_INIT;
	sh_quote(&sb, "/usr/bin/kexec");
	CHECK_STR(sb.buf, "/usr/bin/kexec");
	strbuf_reset(&sb);
	sh_quote(&sb, "--append=console=ttyS0,115200");
	CHECK_STR(sb.buf, "--append=console=ttyS0,115200");
	strbuf_release(&sb);
}

TEST(quoted_forms)
{
	struct strbuf sb = STRBUF_INIT;
	sh_quote(&sb, "");
	CHECK_STR(sb.buf, "''");
	strbuf_reset(&sb);
	sh_quote(&sb, "it's");
	CHECK_STR(sb.buf, "'it'\\''s'");
	strbuf_reset(&sb);
	sh_quote(&sb, "$(x)");
	CHECK_STR(sb.buf, "'$(x)'");
	strbuf_reset(&sb);
	const char *av[] = { "echo", "a b", "", NULL };
	sh_quote_argv(&sb, av);
	CHECK_STR(sb.buf, "echo 'a b' ''");
	strbuf_release(&sb);
}

/* run `sh -c "printf '%s\0' QUOTED..."` and compare what arrives */
static void roundtrip(const char *shell, const char *const *words, const char *dir)
{
	struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, eo = STRBUF_INIT, err = STRBUF_INIT;
	struct proc_result res;
	strbuf_addstr(&cmd, "printf '%s\\0'");
	for (size_t i = 0; words[i]; i++) {
		strbuf_addch(&cmd, ' ');
		sh_quote(&cmd, words[i]);
	}
	const char *argv[] = { shell, "-c", cmd.buf, NULL };
	struct child c = CHILD_INIT;
	c.argv = argv;
	c.dir = dir;
	c.out = PROC_PIPE;
	c.err = PROC_PIPE;
	int rc = proc_exec(&c, &(struct proc_io){ .timeout_s = 10, .out = &out, .errout = &eo, .abort_fd = -1 },
			 &res, &err);
	CHECK(rc == 0);
	CHECK(res.exit_code == 0);
	if (eo.len)
		printf("#   stderr: %s\n", eo.buf);
	const char *p = out.buf, *end = out.buf + out.len;
	size_t i = 0;
	for (; words[i] && p < end; i++) {
		if (strcmp(p, words[i])) {
			printf("#   %s: word %zu: got \"%s\", want \"%s\"\n", shell, i, p, words[i]);
			tap_cur_failed = 1;
		}
		p += strlen(p) + 1;
	}
	CHECK(words[i] == NULL);
	CHECK(p == end);
	strbuf_release(&cmd);
	strbuf_release(&out);
	strbuf_release(&eo);
	strbuf_release(&err);
}

static char dir[] = "/tmp/test_shquote.XXXXXX";

TEST(roundtrip_through_sh)
{
	roundtrip("/bin/sh", hostile, dir);
	/* also each word alone (an empty argv word, a lone newline) */
	for (size_t i = 0; hostile[i]; i++) {
		const char *one[] = { hostile[i], NULL };
		roundtrip("/bin/sh", one, dir);
	}
}

TEST(roundtrip_through_other_shells)
{
	/* bash (and busybox ash, the shell of the qemu guest) when present */
	char *bash = proc_which("bash");
	char *bb = proc_which("busybox");
	if (bash)
		roundtrip(bash, hostile, dir);
	if (bb) {
		/* busybox sh -c: argv[0] "sh" via a symlink-free form */
		struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, eo = STRBUF_INIT,
			      err = STRBUF_INIT;
		struct proc_result res;
		strbuf_addstr(&cmd, "printf '%s\\0'");
		for (size_t i = 0; hostile[i]; i++) {
			strbuf_addch(&cmd, ' ');
			sh_quote(&cmd, hostile[i]);
		}
		const char *argv[] = { bb, "sh", "-c", cmd.buf, NULL };
		struct child c = CHILD_INIT;
		c.argv = argv;
		c.dir = dir;
		c.out = PROC_PIPE;
		c.err = PROC_PIPE;
		CHECK(proc_exec(&c, &(struct proc_io){ .timeout_s = 10, .out = &out, .errout = &eo, .abort_fd = -1 },
				 &res, &err) == 0);
		const char *p = out.buf;
		size_t i;
		for (i = 0; hostile[i] && p < out.buf + out.len; i++) {
			CHECK_STR(p, hostile[i]);
			p += strlen(p) + 1;
		}
		CHECK(hostile[i] == NULL);
		strbuf_release(&cmd);
		strbuf_release(&out);
		strbuf_release(&eo);
		strbuf_release(&err);
	}
	free(bash);
	free(bb);
}

TEST(no_command_ran)
{
	char *m = xstrfmt("%s/MARKER", dir);
	CHECK(access(m, F_OK) != 0);
	unlink(m);
	free(m);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(bare_words_stay_bare);
	RUN(quoted_forms);
	RUN(roundtrip_through_sh);
	RUN(roundtrip_through_other_shells);
	RUN(no_command_ran);
	rmdir(dir);
	return tap_done();
}
