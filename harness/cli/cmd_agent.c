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

int cmd_agent(int argc, char **argv, struct cmd_ctx *ctx)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: schedlab agent\n"
		       "       schedlab agent --unframe [LOG]\n\n"
		       "Serves the agent protocol (docs/architecture.md) on stdin/stdout.\n"
		       "Targets start the agent themselves; this is for debugging:\n"
		       "  echo '{\"id\":1,\"op\":\"sysinfo\"}' | schedlab agent\n"
		       "--unframe prints the batch-mode messages (SLB1 frame lines, see\n"
		       "docs/lab.md) found in a console log as JSON lines; exit status 1\n"
		       "when a frame is corrupt or there is none.\n");
		return cmd_finish(0);
	}
	if (argc > 1 && !strcmp(argv[1], "--unframe")) {
		if (argc > 3) {
			cmd_error("agent", "unexpected argument '%s'", argv[3]);
			return 2;
		}
		return unframe(argc > 2 ? argv[2] : NULL);
	}
	if (argc > 1) {
		cmd_error("agent", "unexpected argument '%s'", argv[1]);
		return 2;
	}
	struct agent_opts o = { 0, 1, "", 0 };
	return agent_serve(&o);
}
