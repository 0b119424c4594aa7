/*
 * sl-netpair: a network server and its client as one measured run, on
 * loopback (the sockperf workload, workloads/sockperf.c; docs/workloads-native.md
 * "sl-netpair", docs/plan-format.md "sockperf").
 *
 *   sl-netpair [options] -- SERVER ARGV... -- CLIENT ARGV...
 *
 * The agent runs one program per run and stops it by its process group;
 * request/response benchmarks (sockperf, tbench, netperf) need a server
 * started first. sl-netpair picks a free port on 127.0.0.1 (binds port 0,
 * reads the number, lets it go), writes it where an argument is exactly
 * "{port}", starts the server with its output into a log file, waits until
 * the log shows the server's ready text (and, for TCP, until a connection
 * to the port is accepted), runs the client with this program's stdout and
 * stderr, then stops the server (SIGINT, SIGKILL after 5 s) and exits with
 * the client's status. A server that dies before it is ready is an error
 * naming its exit status and last line; one that lost the port to another
 * program between the pick and its bind is started again on a new port
 * (five tries). Both children stay in this program's process group, so the
 * agent's stop of the group (a timeout, a Ctrl-C) reaches them too; a
 * SIGINT or SIGTERM sent to this program alone is passed on to both.
 *
 * Both run as the agent runs its tools: from the ssh target's bundle when
 * the agent names one in $SCHEDLAB_BUNDLE (nat_exec_tool), else from PATH.
 *
 * Exit status: the client's (128 + signal when it was killed); 1 when the
 * server could not be started or made ready; 2 for bad arguments.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/util/sigstop.h"
#include "workloads/native/libnative.h"

static const char *const proto_names[] = { "tcp", "udp", NULL };
enum { P_TCP, P_UDP };

static struct {
	int proto;
	double ready_timeout_s;
	const char *ready;
	const char *log;
} O;

static volatile sig_atomic_t stop_sig;
static pid_t server_pid = -1, client_pid = -1;

static void usage(FILE *f)
{
	fprintf(f,
"usage: sl-netpair [options] -- SERVER ARGV... -- CLIENT ARGV...\n"
"Runs a server and its client over 127.0.0.1 as one run: the server first,\n"
"the client once the server is ready, then the server is stopped.\n"
"An argument that is exactly {port} becomes the free port picked.\n"
"  -p, --proto P          tcp or udp: the kind of port to pick (default tcp)\n"
"  -r, --ready TEXT       the server is ready once its output holds TEXT\n"
"                         (required)\n"
"  -t, --ready-timeout S  seconds to wait for it, 0.1..600 (default 30)\n"
"  -l, --log FILE         the server's stdout and stderr (default server.log)\n"
"  -h, --help             this text\n"
"Exit status: the client's; 1 when the server could not be made ready;\n"
"2 for bad arguments.\n");
}

static void on_signal(int sig)
{
	stop_sig = sig;
	if (client_pid > 0)
		kill(client_pid, sig);
	if (server_pid > 0)
		kill(server_pid, sig);
}

/* a port on 127.0.0.1 that was free a moment ago, or -1 */
static int pick_port(void)
{
	int fd = socket(AF_INET, O.proto == P_TCP ? SOCK_STREAM : SOCK_DGRAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int port = -1;
	if (fd < 0) {
		nat_err("socket: %s", strerror(errno));
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || getsockname(fd, (struct sockaddr *)&a, &len))
		nat_err("picking a free port on 127.0.0.1: %s", strerror(errno));
	else
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* 1 when a TCP connection to the port is accepted now */
static int tcp_accepts(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int ok = fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof(a));
	if (fd >= 0)
		close(fd);
	return ok;
}

/* the log's text so far (at most 64 KiB), NUL-terminated into buf */
static void read_log(char *buf, size_t size)
{
	int fd = open(O.log, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;
	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
}

/* the last non-empty line of text, into out */
static void last_line(const char *text, char *out, size_t size)
{
	const char *end = text + strlen(text);
	while (end > text && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	const char *start = end;
	while (start > text && start[-1] != '\n')
		start--;
	snprintf(out, size, "%.*s", (int)(end - start), start);
	if (!*out)
		snprintf(out, size, "(it printed nothing)");
}

/* argv with every "{port}" replaced (strings owned by a static buffer) */
static char **with_port(char **argv, int n, int port)
{
	static char portstr[16];
	char **v = calloc(n + 1, sizeof(*v));
	if (!v)
		return NULL;
	snprintf(portstr, sizeof(portstr), "%d", port);
	for (int i = 0; i < n; i++)
		v[i] = strcmp(argv[i], "{port}") ? argv[i] : portstr;
	return v;
}

static pid_t spawn(char **argv, int out_fd)
{
	pid_t pid = fork();
	if (pid < 0) {
		nat_err("fork: %s", strerror(errno));
		return -1;
	}
	if (!pid) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (out_fd >= 0 && (dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0))
			_exit(127);
		nat_exec_tool(argv);   /* through the ssh target's bundle, if any */
		fprintf(stderr, "sl-netpair: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

static void describe_status(int st, char *out, size_t size)
{
	if (WIFEXITED(st))
		snprintf(out, size, "exited with status %d", WEXITSTATUS(st));
	else
		snprintf(out, size, "was killed by signal %d", WTERMSIG(st));
}

/*
 * Start the server on a fresh port and wait until it is ready: 0 with
 * *port set, 1 to try again on another port (it lost its port), -1 after
 * nat_err.
 */
static int start_server(char **argv, int argc, int *port)
{
	char text[65536], line[512], how[64];
	*port = pick_port();
	if (*port < 0)
		return -1;
	char **v = with_port(argv, argc, *port);
	int fd = open(O.log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (!v || fd < 0) {
		nat_err("%s: %s", O.log, v ? strerror(errno) : "out of memory");
		free(v);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	server_pid = spawn(v, fd);
	close(fd);
	free(v);
	if (server_pid < 0)
		return -1;
	uint64_t deadline = nat_now_ns() + (uint64_t)(O.ready_timeout_s * 1e9);
	for (;;) {
		int st;
		read_log(text, sizeof(text));
		if (strstr(text, O.ready) && (O.proto != P_TCP || tcp_accepts(*port)))
			return 0;
		if (waitpid(server_pid, &st, WNOHANG) == server_pid) {
			server_pid = -1;
			if (strstr(text, "Address already in use"))
				return 1;
			last_line(text, line, sizeof(line));
			describe_status(st, how, sizeof(how));
			nat_err("the server (%s) %s before it was ready; its last line: %s", argv[0],
				how, line);
			return -1;
		}
		if (stop_sig || nat_now_ns() > deadline) {
			if (stop_sig) {
				/* stopped while waiting: nothing to say */
			} else if (strstr(text, O.ready)) {
				nat_err("the server (%s) printed \"%s\" but 127.0.0.1 port %d accepted "
					"no TCP connection within %g s (is the loopback interface "
					"up?)", argv[0], O.ready, *port, O.ready_timeout_s);
			} else {
				last_line(text, line, sizeof(line));
				nat_err("the server (%s) did not print \"%s\" within %g s; its last "
					"line: %s", argv[0], O.ready, O.ready_timeout_s, line);
			}
			return -1;
		}
		nat_sleep_ns(20 * 1000000ull);
	}
}

static void stop_server(void)
{
	if (server_pid <= 0)
		return;
	kill(server_pid, SIGINT);
	uint64_t deadline = nat_now_ns() + 5000000000ull;
	while (waitpid(server_pid, NULL, WNOHANG) == 0) {
		if (nat_now_ns() > deadline) {
			kill(server_pid, SIGKILL);
			waitpid(server_pid, NULL, 0);
			break;
		}
		nat_sleep_ns(10 * 1000000ull);
	}
	server_pid = -1;
}

int main(int argc, char **argv)
{
	nat_prog = "sl-netpair";
	int sep1 = -1, sep2 = -1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			if (sep1 < 0) {
				sep1 = i;
			} else {
				sep2 = i;
				break;
			}
		}
	}
	const struct nat_opt opts[] = {
		{ .name = "proto", .short_name = 'p', .kind = NAT_OPT_ENUM, .out = &O.proto,
		  .choices = proto_names },
		{ .name = "ready", .short_name = 'r', .kind = NAT_OPT_STRING, .out = &O.ready },
		NAT_OPT_NUM("ready-timeout", 't', NAT_OPT_DOUBLE, &O.ready_timeout_s, 0.1, 600),
		{ .name = "log", .short_name = 'l', .kind = NAT_OPT_STRING, .out = &O.log },
		{ .name = NULL },
	};
	O.proto = P_TCP;
	O.ready_timeout_s = 30;
	O.log = "server.log";
	int rc = nat_parse_opts(sep1 < 0 ? argc : sep1, argv, opts, usage);
	if (rc)
		return rc > 0 ? 0 : 2;
	if (!O.ready || !*O.ready) {
		nat_err("--ready TEXT is required (what the server prints once it listens)");
		return 2;
	}
	if (sep1 < 0 || sep2 < 0 || sep2 == sep1 + 1 || sep2 == argc - 1) {
		nat_err("expected -- SERVER ARGV... -- CLIENT ARGV... after the options");
		return 2;
	}
	sigstop_catch(on_signal, SIGSTOP_IGNORE_PIPE);

	int port = -1, tries = 0;
	do {
		rc = start_server(argv + sep1 + 1, sep2 - sep1 - 1, &port);
	} while (rc == 1 && ++tries < 5);
	if (rc) {
		if (rc == 1)
			nat_err("the server found its port taken five times running");
		stop_server();
		return 1;
	}
	fprintf(stderr, "sl-netpair: %s ready on 127.0.0.1 port %d (%s)\n", argv[sep1 + 1], port,
		proto_names[O.proto]);
	char **cv = with_port(argv + sep2 + 1, argc - sep2 - 1, port);
	if (!cv) {
		stop_server();
		return 1;
	}
	client_pid = stop_sig ? -1 : spawn(cv, -1);
	free(cv);
	int st = 0, status = 1;
	if (client_pid > 0) {
		while (waitpid(client_pid, &st, 0) < 0 && errno == EINTR)
			;
		status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		client_pid = -1;
	}
	stop_server();
	return stop_sig && !status ? 128 + stop_sig : status;
}
