/*
 * The agent: the only part of schedlab that measures. It runs on the target
 * (a child process for `local`, /init's last step in a qemu guest, over ssh on
 * a lab machine), serves the line-delimited JSON protocol of protocol.h on a
 * pair of fds, runs workloads through the child-process module, reads
 * sysinfo, applies and restores knobs, and performs kexec.
 */
#ifndef SL_AGENT_H
#define SL_AGENT_H

struct agent_opts {
	int in_fd, out_fd;
	const char *root;        /* prefix for /proc and /sys ("" normally; tests use a fake tree) */
	int framed;              /* batch mode: write every message as frame lines
				  * (frame.h) for a console log, not as JSON lines */
};

/* serve until EOF, a shutdown request or a signal; returns the exit status */
int agent_serve(const struct agent_opts *o);

#endif
