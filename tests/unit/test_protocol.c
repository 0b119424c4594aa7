/*
 * Unit tests of the protocol's framing (harness/agent/protocol.c): lines
 * that arrive in pieces, several lines in one read, a line past
 * PROTO_LINE_MAX without a newline (it took 296 MB and 24 s of rescanning
 * before: now EMSGSIZE once the cap is passed), and the type checks of
 * agent replies (agent_reply_check: every value from an agent is untrusted).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/agent/protocol.h"
#include "tests/unit/tap.h"

static void write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t k = write(fd, s, n);
		if (k <= 0)
			_exit(1);
		s += k;
		n -= (size_t)k;
	}
}

TEST(lines_in_pieces)
{
	int p[2];
	CHECK(pipe(p) == 0);
	write_all(p[1], "{\"a\":", 5);
	write_all(p[1], "1}\r\n{\"b\":2}\nrest", 17);
	close(p[1]);
	struct strbuf rbuf = STRBUF_INIT, line = STRBUF_INIT;
	CHECK(proto_read_line(p[0], &rbuf, &line, 5) == 0);
	CHECK_STR(line.buf, "{\"a\":1}");
	CHECK(proto_read_line(p[0], &rbuf, &line, 5) == 0);
	CHECK_STR(line.buf, "{\"b\":2}");
	CHECK(proto_read_line(p[0], &rbuf, &line, 5) == -1 && errno == EPIPE);
	close(p[0]);
	strbuf_release(&rbuf);
	strbuf_release(&line);
}

TEST(overlong_line_refused)
{
	int p[2];
	CHECK(pipe(p) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		static char chunk[1 << 20];
		memset(chunk, 'x', sizeof(chunk));
		for (size_t sent = 0; sent <= PROTO_LINE_MAX + sizeof(chunk); sent += sizeof(chunk))
			write_all(p[1], chunk, sizeof(chunk));
		pause(); /* no newline, ever */
		_exit(0);
	}
	close(p[1]);
	struct strbuf rbuf = STRBUF_INIT, line = STRBUF_INIT;
	CHECK(proto_read_line(p[0], &rbuf, &line, 60) == -1);
	CHECK(errno == EMSGSIZE);
	CHECK(rbuf.len > PROTO_LINE_MAX && rbuf.len <= PROTO_LINE_MAX + (1 << 16));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(p[0]);
	strbuf_release(&rbuf);
	strbuf_release(&line);
}

TEST(replies_are_type_checked)
{
	static const struct {
		const char *op, *json, *want; /* want NULL: accepted */
	} cases[] = {
		{ "exec", "{\"exit_code\":0,\"stdout\":\"x\",\"files\":{\"a\":\"b\"}}", NULL },
		{ "exec", "{\"stdout\":12}", "stdout must be a string" },
		{ "exec", "{\"exit_code\":\"0\"}", "exit_code must be an integer" },
		{ "exec", "{\"files\":{\"a\":1}}", "files must be an object of strings" },
		{ "exec", "{\"loads\":[1]}", "loads must be an array of objects" },
		{ "exec", "[]", "not an object" },
		{ "exec", "{\"tool\":{\"path\":\"/b/cyclictest\",\"sha256\":\"ab\"}}", NULL },
		{ "exec", "{\"tool\":{\"path\":7}}", "tool must be an object of strings" },
		{ "knob_set", "{\"old\":5}", "old must be a string" },
		{ "sysinfo", "{\"preempt_modes\":{\"value\":[1,2]}}", "preempt_modes must be" },
		{ "sysinfo", "{\"preempt\":\"none\"}", "preempt must be" },
		{ "sysinfo", "{\"ncpus\":{\"value\":null,\"error\":\"x\"}}", NULL },
		{ "sysinfo", "{\"unknown_field\":7}", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *j = json_loads(cases[i].json, JSON_DECODE_ANY, NULL);
		struct strbuf err = STRBUF_INIT;
		int rc = agent_reply_check(cases[i].op, j, &err);
		if (cases[i].want) {
			CHECK(rc == -1);
			CHECK_CONTAINS(err.buf, cases[i].want);
		} else {
			CHECK(rc == 0);
			CHECK_STR(err.buf, "");
		}
		json_decref(j);
		strbuf_release(&err);
	}
}

int main(void)
{
	RUN(lines_in_pieces);
	RUN(overlong_line_refused);
	RUN(replies_are_type_checked);
	return tap_done();
}
