/*
 * schedlab agent: the agent built into the controller binary, for targets
 * where the static bin/schedlab-agent is not wanted; and `--unframe`, which
 * reads a console log (a LAVA job log, raw or as lavacli prints it) and
 * prints the agent's batch-mode messages found in it as JSON lines
 * (harness/agent/frame.h), for debugging a lab job and for the tests.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "harness/agent/agent.h"
#include "harness/agent/frame.h"
#include "harness/cli/cmd.h"
#include "harness/cli/options.h"

/* a decoded message must be one JSON object; printed compact, one a line */
static int print_msg(void *ctx, unsigned seq, const char *msg, size_t len)
{
	unsigned *bad = ctx;
	json_error_t je;
	json_t *v = json_loadb(msg, len, 0, &je);
	if (!json_is_object(v)) {
		fprintf(stderr, "schedlab agent: message %u is not a JSON object: %s\n", seq,
			v ? "other type" : je.text);
		(*bad)++;
		json_decref(v);
		return 0;
	}
	char *s = json_dumps(v, JSON_COMPACT);
	if (s)
		printf("%s\n", s);
	free(s);
	json_decref(v);
	return 0;
}

static int unframe(const char *path)
{
	FILE *f = path ? fopen(path, "r") : stdin;
	if (!f) {
		cmd_error("agent", "%s: %s", path, strerror(errno));
		return 2;
	}
	unsigned bad = 0;
	struct frame_dec d;
	frame_dec_init(&d, print_msg, &bad);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, f)) >= 0)
		frame_dec_line(&d, line, (size_t)n);
	free(line);
	if (f != stdin)
		fclose(f);
	frame_dec_finish(&d);
	if (d.corrupt)
		fprintf(stderr, "schedlab agent: %u corrupt frame(s); last: %s\n", d.corrupt,
			d.last_error.buf);
	int rc = d.corrupt || bad ? 1 : 0;
	if (!d.messages) {
		fprintf(stderr, "schedlab agent: no agent messages in %s\n", path ? path : "stdin");
		rc = 1;
	}
	frame_dec_release(&d);
	return cmd_finish(rc);
}

static const char usage_text[] =
	"usage: schedlab agent\n"
	"       schedlab agent --unframe [LOG]\n\n"
	"Serves the agent protocol (docs/architecture.md) on stdin/stdout.\n"
	"Targets start the agent themselves; this is for debugging:\n"
	"  echo '{\"id\":1,\"op\":\"sysinfo\"}' | schedlab agent\n"
	"--unframe prints the batch-mode messages (SLB1 frame lines, see\n"
	"docs/lab.md) found in a console log as JSON lines; exit status 1\n"
	"when a frame is corrupt or there is none.\n";

int cmd_agent(int argc, char **argv, struct cmd_ctx *ctx)
{
	int unframe_log = 0;
	const struct cli_opt opts[] = { CLI_BOOL("unframe", &unframe_log), CLI_END };
	int first, rc = cli_parse("agent", usage_text, opts, argc, argv, &first);
	if (rc != CLI_OK)
		return cli_parse_exit(rc);
	if (unframe_log) {
		if (argc - first > 1) {
			cmd_error("agent", "unexpected argument '%s'", argv[first + 1]);
			return 2;
		}
		return unframe(first < argc ? argv[first] : NULL);
	}
	if (cli_no_args("agent", argc, argv, first))
		return 2;
	struct agent_opts o = { 0, 1, "", 0 };
	return agent_serve(&o);
}
