/*
 * schedlab-agent: the statically linked agent binary. It serves the protocol
 * on stdin/stdout, or on a serial tty (--tty /dev/ttyS1, put into raw mode so
 * that the line discipline neither echoes nor limits line length).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "harness/agent/agent.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: schedlab-agent [--tty DEVICE] [--root DIR]\n"
		   "\n"
		   "Serves schedlab's line-delimited JSON protocol on stdin/stdout, or on\n"
		   "DEVICE (a serial port, set to raw mode). Started by the controller; not\n"
		   "meant to be run by hand except to check that it starts.\n"
		   "  --tty DEVICE   serve on a tty instead of stdin/stdout\n"
		   "  --root DIR     read /proc and /sys below DIR (tests)\n"
		   "  --version      print the version\n");
}

int main(int argc, char **argv)
{
	struct agent_opts o = { 0, 1, "" };
	const char *tty = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--tty") && i + 1 < argc) {
			tty = argv[++i];
		} else if (!strcmp(argv[i], "--root") && i + 1 < argc) {
			o.root = argv[++i];
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--version")) {
			printf("schedlab-agent %s\n", SCHEDLAB_VERSION);
			return 0;
		} else {
			fprintf(stderr, "schedlab-agent: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (tty) {
		int fd = open(tty, O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "schedlab-agent: %s: %s\n", tty, strerror(errno));
			return 1;
		}
		struct termios t;
		if (tcgetattr(fd, &t) == 0) {
			cfmakeraw(&t);
			cfsetispeed(&t, B115200);
			cfsetospeed(&t, B115200);
			tcsetattr(fd, TCSANOW, &t);
		}
		o.in_fd = o.out_fd = fd;
	}
	return agent_serve(&o);
}
