/*
 * schedlab-agent: the statically linked agent binary. It serves the protocol
 * on stdin/stdout, or on a serial tty (--tty /dev/ttyS1, put into raw mode so
 * that the line discipline neither echoes nor limits line length). It seeds
 * jansson's hash function itself, without blocking (seed_json).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "harness/agent/agent.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: schedlab-agent [--tty DEVICE | --batch FILE] [--root DIR]\n"
		   "\n"
		   "Serves schedlab's line-delimited JSON protocol on stdin/stdout, or on\n"
		   "DEVICE (a serial port, set to raw mode). Started by the controller; not\n"
		   "meant to be run by hand except to check that it starts.\n"
		   "  --tty DEVICE   serve on a tty instead of stdin/stdout\n"
		   "  --batch FILE   batch mode (lab systems, no live controller): read the\n"
		   "                 requests from FILE, one JSON object a line, and write\n"
		   "                 the banner and every reply to stdout as frame lines\n"
		   "                 (SLB1 ..., see harness/agent/frame.h); exit at its end\n"
		   "  --root DIR     read /proc and /sys below DIR (tests)\n"
		   "  --version      print the version\n");
}

#ifndef GRND_INSECURE
#define GRND_INSECURE 0x0004 /* Linux >= 5.6 */
#endif

/*
 * jansson seeds its hash function from /dev/urandom when the first object is
 * made, and Linux 6.1 answers a read of /dev/urandom before its RNG is ready
 * by gathering jitter entropy until it is: about 1 s in a freshly booted TCG
 * guest, before the agent could send its banner. The seed only spreads hash
 * buckets; one that never blocks will do.
 */
static void seed_json(void)
{
	size_t seed = 0;
	if (getrandom(&seed, sizeof(seed), GRND_INSECURE) != (ssize_t)sizeof(seed)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		seed = (size_t)ts.tv_nsec * 2654435761u ^ (size_t)ts.tv_sec ^ (size_t)getpid();
	}
	json_object_seed(seed ? seed : 1);
}

int main(int argc, char **argv)
{
	struct agent_opts o = { 0, 1, "", 0 };
	const char *tty = NULL, *batch = NULL;
	seed_json();
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--tty") && i + 1 < argc) {
			tty = argv[++i];
		} else if (!strcmp(argv[i], "--batch") && i + 1 < argc) {
			batch = argv[++i];
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
	if (tty && batch) {
		fprintf(stderr, "schedlab-agent: --tty and --batch exclude each other\n");
		return 2;
	}
	if (batch) {
		int fd = open(batch, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "schedlab-agent: %s: %s\n", batch, strerror(errno));
			return 1;
		}
		o.in_fd = fd;
		o.framed = 1;
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
