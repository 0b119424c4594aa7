/*
 * schedlab agent: the agent built into the controller binary, for targets
 * where the static bin/schedlab-agent is not wanted.
 */
#include <stdio.h>
#include <string.h>

#include "harness/agent/agent.h"
#include "harness/cli/cmd.h"

int cmd_agent(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: schedlab agent\n\n"
		       "Serves the agent protocol (docs/architecture.md) on stdin/stdout.\n"
		       "Targets start the agent themselves; this is for debugging:\n"
		       "  echo '{\"id\":1,\"op\":\"sysinfo\"}' | schedlab agent\n");
		return cmd_finish(0);
	}
	if (argc > 1) {
		cmd_error("agent", "unexpected argument '%s'", argv[1]);
		return 2;
	}
	struct agent_opts o = { 0, 1, "", 0 };
	return agent_serve(&o);
}
