/*
 * sl-pgbench: one pgbench measurement against a throw-away PostgreSQL
 * server, so that the agent runs a single program (argv, process group,
 * timeout) and the `pgbench` driver (workloads/pgbench.c) stays pure.
 *
 * In the run's private directory (the agent's, the current directory) it
 *   1. makes pg/ (owned by the server's user) and runs `initdb -D pg/data`
 *      (trust authentication, C locale, UTF8, no fsync of its own files);
 *   2. starts `postgres -D pg/data -k <abs>/pg -c listen_addresses=` : the
 *      only socket is the Unix socket in pg/, no TCP port is opened;
 *      --shared-buffers and --huge-pages become `-c` settings, each one argv
 *      element, so a value can never become an option; the server's log
 *      goes to postgres.log in the run directory;
 *   3. waits for "ready" in pg/data/postmaster.pid (the server exiting
 *      instead is a failure whose message is the server's own FATAL line);
 *   4. `pgbench -i -s SCALE` (its output into pgbench-init.txt), then the
 *      measured `pgbench -c -j -T` (select-only -S, TPC-B-like, or the
 *      custom script --script FILE) with `--log`: pgbench's report goes to
 *      stdout unchanged (the run's raw output, parsed by the driver), and
 *      the per-transaction logs are read into a latency histogram
 *      (workloads/native/pgbench_log.c) written with the counts to
 *      sl-pgbench.json;
 *   5. stops the server (fast shutdown, then immediate, then SIGKILL) and
 *      removes pg/: data directory, socket, lock file and logs.
 *
 * The programs are in --bindir, by default: the ssh target's workload
 * bundle when the agent names one (SCHEDLAB_BUNDLE) and it carries
 * PostgreSQL (pg/, harness/targets/bundle.h: wrapper scripts that run the
 * real programs through the bundle's loader), else /usr/lib/postgresql/15/bin
 * (Debian's place) or, when that has no postgres, /bin (the qemu and lava
 * targets' initramfs). JIT is off: llvmjit.so and its LLVM are not in a
 * guest, and pgbench's queries are too cheap to be compiled anyway. The
 * programs get TZ and PGTZ "UTC0": a POSIX zone PostgreSQL understands
 * without tzdata (harness/targets/pgfiles.h), the same UTC everywhere.
 *
 * From the bundle, run as root: the bundle is under the agent's folder,
 * which the server's user cannot reach (root's home, umask 077). So this
 * program enters a mount namespace of its own (unshare, every mount made
 * private first, so nothing propagates back), bind-mounts the bundle's pg/
 * and lib/ onto bundle/pg and bundle/lib in the run directory and runs the
 * programs from there. The mounts exist only in that namespace and vanish
 * with its last process; the agent, outside it, sees empty folders.
 *
 * Who runs the server: PostgreSQL refuses to run as root. Run as root (the
 * agent usually is), every PostgreSQL program runs as the user --user
 * (default `nobody`, looked up in /etc/passwd: initdb needs a passwd entry
 * for its own uid), with setgroups/setgid/setuid in the child before exec;
 * the run directory gets the search bits for group and others (0700 ->
 * 0711) so that user can reach pg/ (it still cannot list the directory):
 * no bit is taken away (run by hand from /tmp, mode 1777, nothing changes)
 * and the mode is put back at the end. Run as another user, the programs
 * run as that user.
 *
 * Room: before anything is made, the run directory's free space is
 * checked against what `pgbench -i -s SCALE` needs (check_space); a disk
 * that fills later fails the run with the server's reason from
 * postgres.log (its PANIC "No space left on device"), not only pgbench's
 * "PQputline failed".
 *
 * Nothing is left behind when the run is stopped early: every child stays
 * in the agent's process group (postgres is started directly, not through
 * pg_ctl, which would put it into a session of its own), so the agent's
 * stop signal reaches them all; SIGTERM, SIGINT or SIGHUP here stop the
 * server at once (SIGQUIT, SIGKILL 1 s later) and remove pg/ within the
 * agent's 2 s grace. Should this program die by SIGKILL, the postmaster and
 * pgbench get SIGKILL too (PR_SET_PDEATHSIG, set after setuid, which clears
 * it), the backends exit when they see their postmaster gone, and the
 * agent removes the run directory. The server's small System V segment
 * (postgres keeps one as an interlock even with shared_memory_type mmap)
 * is marked for removal as soon as the server is ready (mark_interlock),
 * so the kernel removes it with its last process, even after a SIGKILL
 * here; the server's shutdown then logs a harmless "shmctl(ID, 0, 0)
 * failed: Invalid argument".
 *
 * Exit codes: pgbench's own (0 ok, 2 some client aborted), 1 when the
 * server or the initialisation failed (the reason on stderr), 2 for bad
 * arguments.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/util/bundle_paths.h" /* BUNDLE_PG_BIN: the ssh bundle's pg/ bin folder */
#include "harness/util/rmtree.h"
#include "harness/util/sigstop.h"
#include "workloads/native/libnative.h"
#include "workloads/native/pgbench_log.h"

enum mode { MODE_TPCB, MODE_SELECT, MODE_SCRIPT };
static const char *const mode_names[] = { "tpcb", "select", "script", NULL };
static const char *const hp_names[] = { "off", "on", "try", NULL };

static struct {
	const char *bindir, *user, *script, *shared_buffers;
	long scale, clients, threads, duration, start_timeout, max_connections;
	int mode, huge_pages, fsync;
} O = { NULL, "nobody", NULL, "128MB", 1, 1, 1, 10, 120, 0,
	MODE_TPCB, 0, 0 };

static volatile sig_atomic_t stop_req;
static pid_t pm_pid = -1, bench_pid = -1;
static int pm_shmid = -1;
static char rundir[PATH_MAX], pgdir[PATH_MAX + 4], datadir[PATH_MAX + 16];
static int as_other;              /* run the programs as O.user (we are root) */
static const char *bundle_dir;    /* PostgreSQL from this bundle */
static char bundle_mnt[PATH_MAX + 16], bundle_bin[PATH_MAX + 64];
static int bundle_mounts;         /* how many of pg/, lib/ are mounted */
static uid_t run_uid;
static gid_t run_gid;
static mode_t rundir_mode;        /* the run folder's mode before we added x */
static int rundir_chmod;          /* 1: we added search bits, taken back at the end */

static void on_signal(int sig)
{
	(void)sig;
	stop_req = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: sl-pgbench [--bindir DIR] [--user NAME] [--scale N] [--clients N]\n"
		   "       [--threads N] [--duration S] [--mode tpcb|select|script] [--script FILE]\n"
		   "       [--shared-buffers SIZE] [--huge-pages off|on|try] [--fsync]\n"
		   "       [--max-connections N] [--start-timeout S]\n");
}

/* uid and gid of name in /etc/passwd (by hand: a static getpwnam needs NSS) */
static int lookup_user(const char *name, uid_t *uid, gid_t *gid)
{
	FILE *f = fopen("/etc/passwd", "r");
	char line[1024];
	size_t n = strlen(name);
	int rc = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p;
		if (strncmp(line, name, n) || line[n] != ':')
			continue;
		p = strchr(line + n + 1, ':'); /* after the password field */
		if (!p)
			break;
		*uid = (uid_t)strtoul(p + 1, &p, 10);
		if (*p != ':')
			break;
		*gid = (gid_t)strtoul(p + 1, &p, 10);
		rc = *p == ':' ? 0 : -1;
		break;
	}
	fclose(f);
	return rc;
}

/* in a child: become the server's user, die with the parent, redirect,
 * exec; never returns */
static void child_exec(char *const argv[], int out_fd, int err_fd, pid_t parent)
{
	/* a fixed environment (no PG* variable of the agent's reaches them),
	 * plus the e2e tests' SCHEDLAB_TEST_MARK, by which a test finds the
	 * processes it started (backends rename themselves in cmdline) */
	char *env[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", "TZ=UTC0", "PGTZ=UTC0", NULL, NULL };
	const char *mark = getenv("SCHEDLAB_TEST_MARK");
	char markv[160];
	if (mark && strlen(mark) < 100) {
		snprintf(markv, sizeof(markv), "SCHEDLAB_TEST_MARK=%s", mark);
		env[4] = markv;
	}
	if (out_fd >= 0 && out_fd != 1)
		dup2(out_fd, 1);
	if (err_fd >= 0 && err_fd != 2)
		dup2(err_fd, 2);
	if (as_other && (setgroups(0, NULL) || setgid(run_gid) || setuid(run_uid))) {
		fprintf(stderr, "sl-pgbench: cannot become user %s: %s\n", O.user,
			strerror(errno));
		_exit(127);
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	execve(argv[0], argv, env);
	fprintf(stderr, "sl-pgbench: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

static pid_t spawn(char *const argv[], int out_fd, int err_fd)
{
	pid_t parent = getpid(), pid = fork();
	if (pid == 0)
		child_exec(argv, out_fd, err_fd, parent);
	if (pid < 0)
		nat_err("fork: %s", strerror(errno));
	return pid;
}

static void mark_interlock(void);

/* wait for pid; -1 when a stop was requested (the child is left running),
 * else its wait status in *st; the server's interlock segment marked for
 * removal again about every second (a restarted server's) */
static int wait_child(pid_t pid, int *st)
{
	for (int i = 1;; i++) {
		if (pm_pid > 0 && !(i % 50))
			mark_interlock();
		pid_t r = waitpid(pid, st, WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return *st = 0, 0;
		if (stop_req)
			return -1;
		usleep(20000);
	}
}

/* wait up to s seconds for pid to exit; 1 if it did */
static int reap_within(pid_t pid, double s)
{
	int st;
	for (double t = 0; t < s; t += 0.02) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid || (r < 0 && errno == ECHILD))
			return 1;
		if (stop_req && s > 2)
			return 0; /* stopped while waiting for a fast shutdown: escalate */
		usleep(20000);
	}
	return 0;
}

/* the bind mounts of bundle_mount and their folders away */
static void bundle_unmount(void)
{
	char p[PATH_MAX + 32];
	if (!bundle_mnt[0])
		return;
	for (const char *d = "pg\0lib\0"; *d; d += strlen(d) + 1) {
		snprintf(p, sizeof(p), "%s/%s", bundle_mnt, d);
		if (bundle_mounts > 0)
			umount2(p, MNT_DETACH);
		rmdir(p);
	}
	bundle_mounts = 0;
	rmdir(bundle_mnt);
	bundle_mnt[0] = '\0';
}

/*
 * The bundle's pg/ and lib/ at RUNDIR/bundle/{pg,lib} for the server's user
 * (see the top): a mount namespace of our own, every mount private in it,
 * two bind mounts; O.bindir then points there.
 */
static int bundle_mount(void)
{
	char src[PATH_MAX + 8], dst[PATH_MAX + 32];
	snprintf(bundle_mnt, sizeof(bundle_mnt), "%s/bundle", rundir);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		nat_err("cannot make the bundle's PostgreSQL reachable for user %s: a mount "
			"namespace: %s", O.user, strerror(errno));
		bundle_mnt[0] = '\0';
		return -1;
	}
	/* 0755 whatever the umask (the ssh target's agent runs under 077) */
	if ((mkdir(bundle_mnt, 0755) && errno != EEXIST) || chmod(bundle_mnt, 0755)) {
		nat_err("mkdir %s: %s", bundle_mnt, strerror(errno));
		bundle_mnt[0] = '\0';
		return -1;
	}
	for (const char *d = "pg\0lib\0"; *d; d += strlen(d) + 1) {
		snprintf(src, sizeof(src), "%s/%s", bundle_dir, d);
		snprintf(dst, sizeof(dst), "%s/%s", bundle_mnt, d);
		if ((mkdir(dst, 0755) && errno != EEXIST) ||
		    mount(src, dst, NULL, MS_BIND, NULL)) {
			nat_err("cannot bind-mount %s on %s for user %s: %s", src, dst, O.user,
				strerror(errno));
			return -1;
		}
		bundle_mounts++;
	}
	snprintf(bundle_bin, sizeof(bundle_bin), "%s/" BUNDLE_PG_BIN, bundle_mnt);
	O.bindir = bundle_bin;
	return 0;
}

/* stop pgbench and the server (at once when `now`), remove pg/ */
static void cleanup(int now)
{
	if (bench_pid > 0) {
		kill(bench_pid, SIGKILL);
		reap_within(bench_pid, 2);
		bench_pid = -1;
	}
	if (pm_pid > 0) {
		int killed = 0;
		/* fast shutdown: active transactions rolled back, then a checkpoint */
		if (!now) {
			kill(pm_pid, SIGINT);
			if (!reap_within(pm_pid, 30))
				now = 1;
			else
				pm_pid = -1;
		}
		if (pm_pid > 0) {
			kill(pm_pid, SIGQUIT); /* immediate shutdown */
			if (!reap_within(pm_pid, 1)) {
				kill(pm_pid, SIGKILL);
				reap_within(pm_pid, 2);
				killed = 1;
			}
			pm_pid = -1;
		}
		if (killed && pm_shmid >= 0)
			shmctl(pm_shmid, IPC_RMID, NULL); /* marked at start; a restart's */
	}
	if (pgdir[0])
		rm_tree(pgdir);
	bundle_unmount();
	if (rundir_chmod && !chmod(rundir, rundir_mode))
		rundir_chmod = 0;
}

/* the last line of path containing FATAL, PANIC or ERROR (else its last
 * line), printed after `what` on stderr */
static void report_log(const char *what, const char *path)
{
	char line[1024], best[1024] = "", last[1024] = "";
	FILE *f = fopen(path, "r");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			if (!line[0])
				continue;
			snprintf(last, sizeof(last), "%s", line);
			/* from the level on: the time stamp and pid are no reason */
			const char *lv = strstr(line, "FATAL:");
			if (!lv)
				lv = strstr(line, "PANIC:");
			if (!lv && !best[0])
				lv = strstr(line, "ERROR:");
			if (lv)
				snprintf(best, sizeof(best), "%s", lv);
		}
		fclose(f);
	}
	nat_err("%s: %s", what, best[0] ? best : last[0] ? last : "(no output)");
}

/*
 * Why the server failed a client, from postgres.log: its last PANIC line,
 * else the last line that says "No space left on device", else its last
 * FATAL or ERROR line, from the level on, into buf ("" when none). A full
 * disk shows in pgbench only as "PQputline failed" or a lost connection;
 * the server's log has the reason.
 */
static void server_cause(char *buf, size_t len)
{
	char line[1024], panic[1024] = "", space[1024] = "", other[1024] = "";
	FILE *f = fopen("postgres.log", "r");
	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		const char *lv = strstr(line, "PANIC:");
		if (lv) {
			snprintf(panic, sizeof(panic), "%s", lv);
			continue;
		}
		lv = strstr(line, "FATAL:");
		if (!lv)
			lv = strstr(line, "ERROR:");
		if (lv && strstr(lv, "No space left on device"))
			snprintf(space, sizeof(space), "%s", lv);
		else if (lv)
			snprintf(other, sizeof(other), "%s", lv);
	}
	fclose(f);
	snprintf(buf, len, "%s", panic[0] ? panic : space[0] ? space : other);
}

/* what failed, its own log's reason, and the server's (a client of it
 * failed: pgbench -i or the measured pgbench) */
static void report_with_server(const char *what, const char *log)
{
	char cause[1024];
	server_cause(cause, sizeof(cause));
	if (!cause[0]) {
		report_log(what, log);
		return;
	}
	char both[1400];
	snprintf(both, sizeof(both), "%s (the server's log, postgres.log: %s)", what, cause);
	report_log(both, log);
}

/* a file of the run directory the agent returns, written by us (root) */
static int open_out(const char *name)
{
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		nat_err("cannot create %s: %s", name, strerror(errno));
	return fd;
}

static int run_to_end(char *const argv[], int out_fd, int err_fd, const char *what,
		      const char *log, int server_client)
{
	int st = 0;
	pid_t pid = spawn(argv, out_fd, err_fd);
	if (pid < 0)
		return -1;
	bench_pid = pid; /* killed by cleanup if we are stopped */
	if (wait_child(pid, &st))
		return -1;
	bench_pid = -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		if (server_client)
			report_with_server(what, log);
		else
			report_log(what, log);
		return -1;
	}
	return 0;
}

/* line n (1-based) of postmaster.pid into buf; -1 if absent */
static int pidfile_line(int n, char *buf, size_t len)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/postmaster.pid", datadir);
	FILE *f = fopen(path, "r");
	int rc = -1;
	if (!f)
		return -1;
	for (int i = 1; fgets(buf, (int)len, f); i++)
		if (i == n) {
			buf[strcspn(buf, "\n")] = '\0';
			rc = 0;
			break;
		}
	fclose(f);
	return rc;
}

/*
 * The server's System V interlock segment (postgres keeps a small one even
 * with shared_memory_type mmap, and dynamic shared memory is POSIX):
 * marked for removal (IPC_RMID) as soon as the server is ready, so the
 * kernel removes it when its last process detaches, whoever ends them:
 * our cleanup, PR_SET_PDEATHSIG after a SIGKILL of this program (which
 * can remove nothing then), the OOM killer. Nothing attaches to it by its
 * key after the start (the key is only looked at by a postmaster starting
 * on this data directory). Looked at again while pgbench runs: a server
 * that reinitialises after a backend's crash makes a new one.
 */
static void mark_interlock(void)
{
	char line[128];
	/* line 7: "<shm key> <shm id>" of the interlock segment */
	if (pidfile_line(7, line, sizeof(line)))
		return;
	char *sp = strchr(line + strspn(line, " "), ' ');
	int id = sp ? atoi(sp) : -1;
	if (id < 0 || id == pm_shmid)
		return;
	pm_shmid = id;
	shmctl(id, IPC_RMID, NULL);
}

static int start_server(int log_fd)
{
	char sb[256], hp[32], fs[32], mc[48], exe[PATH_MAX + 16];
	snprintf(exe, sizeof(exe), "%s/postgres", O.bindir);
	snprintf(sb, sizeof(sb), "shared_buffers=%s", O.shared_buffers);
	snprintf(hp, sizeof(hp), "huge_pages=%s", hp_names[O.huge_pages]);
	snprintf(fs, sizeof(fs), "fsync=%s", O.fsync ? "on" : "off");
	snprintf(mc, sizeof(mc), "max_connections=%ld",
		 O.max_connections ? O.max_connections : (O.clients + 10 > 100 ? O.clients + 10 : 100));
	char *const argv[] = { exe, "-D", datadir, "-k", pgdir, "-c", "listen_addresses=",
			       "-c", "port=5432", "-c", "unix_socket_permissions=0700",
			       "-c", sb, "-c", hp, "-c", fs, "-c", mc,
			       "-c", "logging_collector=off", "-c", "jit=off", NULL };
	char line[128];
	uint64_t t0 = nat_now_ns();
	pm_pid = spawn(argv, log_fd, log_fd);
	if (pm_pid < 0)
		return -1;
	for (;;) {
		int st;
		if (waitpid(pm_pid, &st, WNOHANG) == pm_pid) {
			pm_pid = -1;
			report_log("the PostgreSQL server did not start", "postgres.log");
			return -1;
		}
		if (!pidfile_line(8, line, sizeof(line)) && !strncmp(line, "ready", 5))
			break;
		if (stop_req)
			return -1;
		if ((double)(nat_now_ns() - t0) / 1e9 > (double)O.start_timeout) {
			nat_err("the PostgreSQL server was not ready after %ld s (its log: "
				"postgres.log)", O.start_timeout);
			return -1;
		}
		usleep(20000);
	}
	mark_interlock();
	return 0;
}

/* the per-transaction logs pg/tx.* into a histogram; written with the
 * counts to sl-pgbench.json */
static int read_logs(json_t *res)
{
	struct hist h;
	struct pglog_stats st = { 0 };
	DIR *d = opendir(pgdir);
	struct dirent *e;
	int nfiles = 0;
	char *buf = malloc(1 << 20);
	if (!d || !buf || pglog_hist_init(&h)) {
		nat_err("cannot read the transaction logs in %s", pgdir);
		if (d)
			closedir(d);
		free(buf);
		return -1;
	}
	while ((e = readdir(d))) {
		char path[PATH_MAX + 300];
		uint64_t lineno = 0;
		size_t have = 0;
		ssize_t n;
		if (strncmp(e->d_name, "tx.", 3))
			continue;
		snprintf(path, sizeof(path), "%s/%s", pgdir, e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		nfiles++;
		while ((n = read(fd, buf + have, (1 << 20) - have)) > 0) {
			have += (size_t)n;
			size_t used = pglog_feed(buf, have, 0, &h, &st, &lineno);
			if (!used && have == (1 << 20))
				used = have; /* a line of 1 MiB: not a log line */
			memmove(buf, buf + used, have - used);
			have -= used;
		}
		pglog_feed(buf, have, 1, &h, &st, &lineno);
		close(fd);
	}
	closedir(d);
	free(buf);
	json_object_set_new(res, "latency_us", hist_to_json(&h));
	json_object_set_new(res, "log_files", json_integer(nfiles));
	json_object_set_new(res, "transactions", json_integer((json_int_t)st.done));
	json_object_set_new(res, "failed", json_integer((json_int_t)st.failed));
	json_object_set_new(res, "skipped", json_integer((json_int_t)st.skipped));
	json_object_set_new(res, "bad_lines", json_integer((json_int_t)st.bad_lines));
	hist_free(&h);
	return 0;
}

/* --script FILE copied into pg/ for the server's user; its path there */
static int copy_script(char *dst, size_t len)
{
	char buf[65536];
	int in = open(O.script, O_RDONLY | O_CLOEXEC), out;
	ssize_t n;
	if (in < 0) {
		nat_err("--script %s: %s", O.script, strerror(errno));
		return -1;
	}
	snprintf(dst, len, "%s/script.sql", pgdir);
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0) {
		nat_err("cannot create %s: %s", dst, strerror(errno));
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	close(in);
	if (as_other && fchown(out, run_uid, run_gid)) {
		nat_err("chown %s: %s", dst, strerror(errno));
		close(out);
		return -1;
	}
	close(out);
	return 0;
}

static int prepare_dirs(void)
{
	struct sockaddr_un sa;
	if (!getcwd(rundir, sizeof(rundir))) {
		nat_err("getcwd: %s", strerror(errno));
		return -1;
	}
	snprintf(pgdir, sizeof(pgdir), "%s/pg", rundir);
	snprintf(datadir, sizeof(datadir), "%s/data", pgdir);
	if (strlen(pgdir) + strlen("/.s.PGSQL.5432") >= sizeof(sa.sun_path)) {
		nat_err("the run directory %s is too long for a Unix socket path", rundir);
		pgdir[0] = '\0';
		return -1;
	}
	if (mkdir(pgdir, 0700)) {
		nat_err("mkdir %s: %s", pgdir, strerror(errno));
		pgdir[0] = '\0';
		return -1;
	}
	if (as_other && chown(pgdir, run_uid, run_gid)) {
		nat_err("cannot hand %s to user %s: %s", pgdir, O.user, strerror(errno));
		return -1;
	}
	/* the server's user must reach pg/: the search bits for group and
	 * others are added to the run folder, no bit taken away (run by hand
	 * from /tmp, mode 1777 stays), and cleanup() puts its mode back */
	struct stat st;
	if (as_other && stat(rundir, &st)) {
		nat_err("stat %s: %s", rundir, strerror(errno));
		return -1;
	}
	if (as_other && (st.st_mode & 0011) != 0011) {
		rundir_mode = st.st_mode & 07777;
		if (chmod(rundir, rundir_mode | 0011)) {
			nat_err("cannot let user %s reach %s: %s", O.user, pgdir, strerror(errno));
			return -1;
		}
		rundir_chmod = 1;
	}
	return 0;
}

/*
 * The room pgbench -i -s SCALE needs in the run folder, checked before
 * anything is made (scale 10000 is about 150 GB): the server's files after
 * initdb (about 40 MB: 64 MiB counted), the tables and their indexes (about
 * 15 MB a scale unit: 16 MiB counted) and the WAL of the load, up to
 * max_wal_size (1 GB by default: 1 GiB + 64 MiB counted). Measured on
 * PostgreSQL 15: scale 2 took 85 MB. What a run adds later (pgbench_history,
 * WAL of a long tpcb-like run) is not counted; a disk that fills during
 * the run is named by the server's log (server_cause).
 */
static int check_space(void)
{
	struct statvfs v;
	const double mib = 1024.0 * 1024.0;
	double tables = 16.0 * mib * (double)O.scale;
	double wal = tables < 1088.0 * mib ? tables : 1088.0 * mib;
	double need = 64.0 * mib + tables + wal;
	if (statvfs(rundir, &v)) {
		nat_err("statvfs %s: %s", rundir, strerror(errno));
		return -1;
	}
	/* a filesystem that reports no size has no limit to check: ramfs (a
	 * guest's initramfs when the kernel got root=) says 0 blocks */
	if (!v.f_blocks)
		return 0;
	double avail = (double)v.f_bavail * (double)v.f_frsize;
	if (avail < need) {
		nat_err("the run folder %s has %.0f MiB free; --scale %ld needs about %.0f MiB (64 "
			"MiB for the server, 16 MiB a scale unit for the tables, %.0f MiB of WAL): "
			"a smaller scale, or a run folder with room",
			rundir, avail / mib, O.scale, need / mib, wal / mib);
		return -1;
	}
	return 0;
}

static int run(json_t *res)
{
	char exe[PATH_MAX + 16], sock_opt[PATH_MAX + 8], s_scale[24], s_c[24], s_j[24], s_t[24];
	char script_path[PATH_MAX + 32], prefix[PATH_MAX + 32];
	int log_fd, init_fd, pgrc;
	uint64_t t0;

	if (prepare_dirs() || check_space())
		return 1;
	if (bundle_dir && as_other && bundle_mount())
		return 1;
	snprintf(exe, sizeof(exe), "%s/initdb", O.bindir);
	{
		char *const argv[] = { exe, "-D", datadir, "-U", "postgres", "-A", "trust",
				       "-E", "UTF8", "--locale=C", "-N", NULL };
		int fd = open_out("initdb.txt");
		if (fd < 0)
			return 1;
		t0 = nat_now_ns();
		int rc = run_to_end(argv, fd, fd, "initdb failed", "initdb.txt", 0);
		close(fd);
		if (rc)
			return 1;
		json_object_set_new(res, "initdb_s", json_real((double)(nat_now_ns() - t0) / 1e9));
	}
	log_fd = open_out("postgres.log");
	if (log_fd < 0)
		return 1;
	t0 = nat_now_ns();
	int rc = start_server(log_fd);
	close(log_fd);
	if (rc)
		return 1;
	json_object_set_new(res, "server_start_s", json_real((double)(nat_now_ns() - t0) / 1e9));

	snprintf(exe, sizeof(exe), "%s/pgbench", O.bindir);
	snprintf(sock_opt, sizeof(sock_opt), "%s", pgdir);
	snprintf(s_scale, sizeof(s_scale), "%ld", O.scale);
	init_fd = open_out("pgbench-init.txt");
	if (init_fd < 0)
		return 1;
	{
		char *const argv[] = { exe, "-i", "-q", "-s", s_scale, "-h", sock_opt, "-p", "5432",
				       "-U", "postgres", "postgres", NULL };
		t0 = nat_now_ns();
		rc = run_to_end(argv, init_fd, init_fd, "pgbench -i failed", "pgbench-init.txt", 1);
		close(init_fd);
		if (rc)
			return 1;
		json_object_set_new(res, "init_s", json_real((double)(nat_now_ns() - t0) / 1e9));
	}
	if (O.mode == MODE_SCRIPT && copy_script(script_path, sizeof(script_path)))
		return 1;
	snprintf(s_c, sizeof(s_c), "%ld", O.clients);
	snprintf(s_j, sizeof(s_j), "%ld", O.threads);
	snprintf(s_t, sizeof(s_t), "%ld", O.duration);
	snprintf(prefix, sizeof(prefix), "--log-prefix=%s/tx", pgdir);
	{
		char *argv[24];
		int n = 0, st = 0;
		argv[n++] = exe;
		argv[n++] = "-h";
		argv[n++] = sock_opt;
		argv[n++] = "-p";
		argv[n++] = "5432";
		argv[n++] = "-U";
		argv[n++] = "postgres";
		argv[n++] = "-c";
		argv[n++] = s_c;
		argv[n++] = "-j";
		argv[n++] = s_j;
		argv[n++] = "-T";
		argv[n++] = s_t;
		if (O.mode == MODE_SELECT)
			argv[n++] = "-S";
		if (O.mode == MODE_SCRIPT) {
			argv[n++] = "-f";
			argv[n++] = script_path;
		}
		argv[n++] = "--log";
		argv[n++] = prefix;
		argv[n++] = "postgres";
		argv[n] = NULL;
		fflush(stdout);
		bench_pid = spawn(argv, -1, -1);
		if (bench_pid < 0)
			return 1;
		if (wait_child(bench_pid, &st))
			return 1;
		bench_pid = -1;
		pgrc = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
		if (pgrc) {
			/* pgbench's own error is on stderr already: the server's
			 * reason, when it has one, is the run's error */
			char cause[1024];
			server_cause(cause, sizeof(cause));
			if (cause[0])
				nat_err("pgbench exited %d; the server's log, postgres.log: %s",
					pgrc, cause);
		}
	}
	json_object_set_new(res, "pgbench_exit", json_integer(pgrc));
	if (read_logs(res))
		return 1;
	return pgrc;
}

int main(int argc, char **argv)
{
	static const struct nat_opt opts[] = {
		{ .name = "bindir", .kind = NAT_OPT_STRING, .out = &O.bindir },
		{ .name = "user", .kind = NAT_OPT_STRING, .out = &O.user },
		{ .name = "script", .kind = NAT_OPT_STRING, .out = &O.script },
		{ .name = "shared-buffers", .kind = NAT_OPT_STRING, .out = &O.shared_buffers },
		NAT_OPT_NUM("scale", 0, NAT_OPT_LONG, &O.scale, 1, 100000),
		NAT_OPT_NUM("clients", 0, NAT_OPT_LONG, &O.clients, 1, 10000),
		NAT_OPT_NUM("threads", 0, NAT_OPT_LONG, &O.threads, 1, 10000),
		NAT_OPT_NUM("duration", 0, NAT_OPT_LONG, &O.duration, 1, 1000000),
		NAT_OPT_NUM("start-timeout", 0, NAT_OPT_LONG, &O.start_timeout, 1, 100000),
		NAT_OPT_NUM("max-connections", 0, NAT_OPT_LONG, &O.max_connections, 0, 100000),
		{ .name = "mode", .kind = NAT_OPT_ENUM, .out = &O.mode, .choices = mode_names },
		{ .name = "huge-pages", .kind = NAT_OPT_ENUM, .out = &O.huge_pages,
		  .choices = hp_names },
		{ .name = "fsync", .kind = NAT_OPT_FLAG, .out = &O.fsync },
		{ .name = NULL },
	};
	json_t *res;
	int rc;

	nat_prog = "sl-pgbench";
	rc = nat_parse_opts(argc, argv, opts, usage);
	if (rc)
		return rc > 0 ? 0 : 2;
	if ((O.mode == MODE_SCRIPT) != (O.script != NULL)) {
		nat_err("--script FILE goes with --mode script, and only with it");
		return 2;
	}
	if (O.threads > O.clients) {
		nat_err("--threads (%ld) must not exceed --clients (%ld)", O.threads, O.clients);
		return 2;
	}
	if (!O.shared_buffers[0] || strpbrk(O.shared_buffers, "\n\r")) {
		nat_err("--shared-buffers: a PostgreSQL size such as 128MB");
		return 2;
	}
	/* the ssh bundle's, else Debian's place, else /bin: the qemu target's
	 * initramfs puts every program there (the server finds
	 * /usr/share/postgresql/15 and its libraries by their absolute paths
	 * then) */
	const char *bd = getenv("SCHEDLAB_BUNDLE");
	if (!O.bindir && bd && bd[0] == '/' && strlen(bd) < PATH_MAX - 64) {
		snprintf(bundle_bin, sizeof(bundle_bin), "%s/" BUNDLE_PG_BIN "/postgres.real", bd);
		if (!access(bundle_bin, F_OK)) {
			bundle_dir = bd;
			snprintf(bundle_bin, sizeof(bundle_bin), "%s/" BUNDLE_PG_BIN, bd);
			O.bindir = bundle_bin;
		}
	}
	if (!O.bindir) {
		char probe[64];
		O.bindir = "/usr/lib/postgresql/15/bin";
		snprintf(probe, sizeof(probe), "%s/postgres", O.bindir);
		if (access(probe, X_OK) && !access("/bin/postgres", X_OK))
			O.bindir = "/bin";
	}
	for (const char *p = "initdb\0postgres\0pgbench\0"; *p; p += strlen(p) + 1) {
		char exe[PATH_MAX + 16];
		snprintf(exe, sizeof(exe), "%s/%s", O.bindir, p);
		if (access(exe, X_OK)) {
			nat_err("%s: %s (PostgreSQL 15's server programs: the Debian package "
				"postgresql-15)", exe, strerror(errno));
			return 1;
		}
	}
	if (geteuid() == 0) {
		if (lookup_user(O.user, &run_uid, &run_gid)) {
			nat_err("user %s: not in /etc/passwd (PostgreSQL refuses to run as root; "
				"--user names the unprivileged user that runs it)", O.user);
			return 1;
		}
		if (run_uid == 0) {
			nat_err("user %s is root: PostgreSQL refuses to run as root", O.user);
			return 2;
		}
		as_other = 1;
	}
	sigstop_catch(on_signal, 0);

	res = json_object();
	json_object_set_new(res, "user", json_string(as_other ? O.user : "(the caller)"));
	json_object_set_new(res, "postgresql", json_string(bundle_dir ? "bundle" : O.bindir));
	rc = run(res);
	if (stop_req) {
		cleanup(1);
		nat_err("stopped by a signal; the server was stopped and its files removed");
		json_decref(res);
		return 1;
	}
	cleanup(0);
	if (json_object_get(res, "latency_us") &&
	    json_dump_file(res, "sl-pgbench.json", JSON_COMPACT)) {
		nat_err("cannot write sl-pgbench.json");
		rc = rc ? rc : 1;
	}
	json_decref(res);
	return rc;
}
