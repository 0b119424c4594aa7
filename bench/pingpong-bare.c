/*
 * Benchmark helper (not a test, not shipped): the bare ping-pong loop that
 * bench/pingpong-vs-perf.sh sets beside sl-pingpong and perf. It is
 * `perf bench sched pipe -T` (two threads, two pipes, one int each way)
 * with the system calls made the way sl-pingpong makes them, through
 * syscall(2) rather than glibc's read/write (cancellation points, wrapped in
 * pthread_enable/disable_asynccancel in a threaded program), and linked
 * statically like it. sl-pingpong over this loop is the cost of its
 * measurement alone; perf's loop also carries glibc's wrappers.
 *
 * usage: pingpong-bare LOOPS   -> prints usec per round trip
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int p1[2], p2[2];
static long loops;

static void io(int wr, int fd, int *v)
{
	if (syscall(wr ? SYS_write : SYS_read, fd, v, sizeof(*v)) != (long)sizeof(*v)) {
		perror("pingpong-bare");
		exit(1);
	}
}

/* arg NULL: the side that writes first (perf's sender), else the other */
static void *side(void *arg)
{
	int v = 0, first = arg == NULL;
	for (long i = 0; i < loops; i++) {
		io(first, first ? p1[1] : p1[0], &v);
		io(!first, first ? p2[0] : p2[1], &v);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	struct timespec t0, t1;
	loops = argc > 1 ? atol(argv[1]) : 0;
	if (loops <= 0) {
		fprintf(stderr, "usage: pingpong-bare LOOPS\n");
		return 2;
	}
	if (pipe(p1) || pipe(p2)) {
		perror("pingpong-bare: pipe");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (pthread_create(&a, NULL, side, NULL) || pthread_create(&b, NULL, side, (void *)1)) {
		fprintf(stderr, "pingpong-bare: cannot create a thread\n");
		return 1;
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double us = (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
	printf("%.4f\n", us / (double)loops);
	return 0;
}
