/*
 * stress-ng: a stressor as a measured workload (bogo operations per second)
 * or, far more often here, as background load for another workload. As a
 * workload it runs `stress-ng --STRESSOR N --timeout Ds --metrics-brief
 * --yaml stress-ng.yaml` and reads the YAML metrics (falling back to the
 * "metrc:" lines of its text output).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/parsers.h"
#include "workloads/workload.h"

static const struct param_spec stressng_params[] = {
	{ "stressor", PT_STR, "\"cpu\"", 0, 0, NULL,
	  .help = "stress-ng stressor name (cpu, vm, matrix, switch, futex, ...)" },
	{ "threads", PT_INT, "0", 0, 4096, NULL, .help = "instances of the stressor; 0 = one per CPU" },
	{ "duration_s", PT_INT, "10", 1, 86400, NULL, .help = "run time (measured workload only)" },
	PARAM_END,
};

/*
 * The stressor names stress-ng accepts: those of stress-ng 0.15.06
 * (`stress-ng --stressors`, Debian 12) and some of later versions. The
 * stressor becomes an option ("--NAME"), so a name stress-ng also takes as
 * an option ("log-file", "temp-path", "job", "all", "seq") would change
 * what stress-ng does; only these are accepted. The plan is checked on the
 * controller, where stress-ng need not be installed, hence a list here.
 * Sorted (bsearch).
 */
static const char *const stressors[] = {
	"access", "acl", "af-alg", "affinity", "aio", "aiol", "alarm", "apparmor", "atomic",
	"bad-altstack", "bad-ioctl", "besselmath", "bigheap", "bind-mount", "binderfs", "bitonicsort",
	"branch", "brk", "bsearch", "bubblesort", "cache", "cacheline", "cap", "chattr", "chdir",
	"chmod", "chown", "chroot", "clock", "clone", "close", "context", "copy-file", "cpu",
	"cpu-online", "cpu-sched", "crypt", "cyclic", "daemon", "dccp", "dekker", "dentry", "dev",
	"dev-shm", "dfp", "dir", "dirdeep", "dirmany", "dnotify", "dup", "dynlib", "efivar", "eigen",
	"enosys", "env", "epoll", "eventfd", "exec", "exit-group", "expmath", "factor", "fallocate",
	"fanotify", "far-branch", "fault", "fcntl", "fiemap", "fifo", "file-ioctl", "filename",
	"flipflop", "flock", "flushcache", "fma", "fork", "forkheavy", "fp", "fp-error", "fpunch",
	"fractal", "fsize", "fstat", "full", "funccall", "funcret", "futex", "get", "getdent",
	"getrandom", "goto", "gpu", "handle", "hash", "hdd", "heapsort", "hrtimers", "hsearch",
	"hyperbolic", "icache", "icmp-flood", "idle-page", "inode-flags", "inotify", "insertionsort",
	"intmath", "io", "io-uring", "iomix", "ioport", "ioprio", "ipsec-mb", "itimer", "jpeg",
	"judy", "kcmp", "key", "kill", "klog", "kvm", "l1cache", "landlock", "lease", "led", "link",
	"list", "llc-affinity", "loadavg", "locka", "lockbus", "lockf", "lockmix", "lockofd",
	"logmath", "longjmp", "loop", "lsearch", "madvise", "malloc", "matrix", "matrix-3d",
	"mcontend", "membarrier", "memcpy", "memfd", "memhotplug", "memrate", "memthrash",
	"mergesort", "metamix", "min-nanosleep", "mincore", "misaligned", "mknod", "mlock",
	"mlockmany", "mmap", "mmapaddr", "mmapfixed", "mmapfork", "mmaphuge", "mmapmany",
	"mmaptorture", "monte-carlo", "mprotect", "mq", "mremap", "mseal", "msg", "msync",
	"msyncmany", "mtx", "munmap", "mutex", "nanosleep", "netdev", "netlink-proc", "netlink-task",
	"nice", "nop", "null", "numa", "oom-pipe", "opcode", "open", "pagemove", "pageswap", "pci",
	"personality", "peterson", "physpage", "pidfd", "ping-sock", "pipe", "pipeherd", "pkey",
	"plugin", "poll", "powmath", "prctl", "prefetch", "prime", "priv-instr", "procfs", "pseek",
	"pthread", "ptr-chase", "ptrace", "pty", "qsort", "quota", "race-sched", "radixsort", "ramfs",
	"randlist", "rawdev", "rawpkt", "rawsock", "rawudp", "rdrand", "readahead", "reboot", "regs",
	"remap", "rename", "resched", "resources", "revio", "ring-pipe", "rlimit", "rmap", "rotate",
	"rseq", "rtc", "schedpolicy", "sctp", "seal", "seccomp", "secretmem", "seek", "sem",
	"sem-sysv", "sendfile", "session", "set", "shellsort", "shm", "shm-sysv", "sigabrt", "sigbus",
	"sigchld", "sigfd", "sigfpe", "sigill", "sigio", "signal", "signest", "sigpending", "sigpipe",
	"sigq", "sigrt", "sigsegv", "sigsuspend", "sigtrap", "sigxcpu", "sigxfsz", "skiplist",
	"sleep", "smi", "sock", "sockabuse", "sockdiag", "sockfd", "sockmany", "sockpair",
	"softlockup", "sparsematrix", "spawn", "splice", "stack", "stackmmap", "str", "stream",
	"swap", "switch", "symlink", "sync-file", "syncload", "sysbadaddr", "syscall", "sysfs",
	"sysinfo", "sysinval", "tee", "timer", "timerfd", "tlb-shootdown", "tmpfs", "touch", "tree",
	"trigmath", "tsc", "tsearch", "tun", "udp", "udp-flood", "umount", "unshare", "uprobe",
	"urandom", "userfaultfd", "usersyscall", "utime", "vdso", "vecfp", "vecmath", "vecshuf",
	"vecwide", "verity", "vfork", "vforkmany", "vm", "vm-addr", "vm-rw", "vm-segv", "vm-splice",
	"vma", "vnni", "wait", "waitcpu", "watchdog", "wcs", "workload", "x86cpuid", "x86syscall",
	"xattr", "yield", "zero", "zlib", "zombie",
};

static int name_cmp(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

int stressng_known_stressor(const char *s)
{
	return s && bsearch(s, stressors, sizeof(stressors) / sizeof(stressors[0]),
			    sizeof(stressors[0]), name_cmp) != NULL;
}

static int check(const json_t *p, const char *path, struct strbuf *err)
{
	const char *s = param_str(p, "stressor");
	if (!stressng_known_stressor(s)) {
		strbuf_addf(err, "%s.stressor: \"%s\" is not a stress-ng stressor (valid: a name "
			    "`stress-ng --stressors` lists, e.g. cpu, vm, matrix, switch, futex, "
			    "pipe; workloads/stressng.c has the list)", path, s);
		return -1;
	}
	return 0;
}

static void common(const json_t *p, struct wl_exec *ex)
{
	strvec_push(&ex->argv, "stress-ng");
	strvec_pushf(&ex->argv, "--%s", param_str(p, "stressor"));
	strvec_pushf(&ex->argv, "%lld", param_int(p, "threads"));
	ex->package = "stress-ng";
}

static int build(const json_t *p, struct wl_exec *ex, struct strbuf *err)
{
	common(p, ex);
	strvec_pushf(&ex->argv, "--timeout=%llds", param_int(p, "duration_s"));
	strvec_push(&ex->argv, "--metrics-brief");
	strvec_push(&ex->argv, "--yaml=stress-ng.yaml");
	strvec_push(&ex->files, "stress-ng.yaml");
	ex->timeout_s = (double)param_int(p, "duration_s") * 1.5 + 30;
	return 0;
}

static int build_load(const json_t *p, struct wl_exec *ex, struct strbuf *err)
{
	common(p, ex);
	strvec_push(&ex->argv, "--quiet");
	return 0;
}

/* YAML "metrics:" section: first "bogo-ops" and "bogo-ops-per-second-real-time" */
int stressng_parse_yaml(const char *yaml, double *ops, double *ops_per_s)
{
	const char *m = yaml ? strstr(yaml, "\nmetrics:") : NULL;
	if (!m)
		return -1;
	const char *a = strstr(m, "bogo-ops:");
	const char *b = strstr(m, "bogo-ops-per-second-real-time:");
	if (!a || !b)
		return -1;
	*ops = strtod(a + strlen("bogo-ops:"), NULL);
	*ops_per_s = strtod(b + strlen("bogo-ops-per-second-real-time:"), NULL);
	return 0;
}

/* "stress-ng: metrc: [pid] cpu 8455 3.00 5.72 0.02 2816.93 1472.85" */
int stressng_parse_text(const char *text, const char *stressor, double *ops, double *ops_per_s)
{
	const char *p = text;
	if (!stressor)
		return -1; /* parameters without one (a damaged stored run) match nothing */
	while (p && (p = strstr(p, "metrc:"))) {
		const char *line_end = strchrnul(p, '\n');
		const char *q = strchr(p, ']');
		if (q && q < line_end) {
			q++;
			while (*q == ' ')
				q++;
			size_t n = strlen(stressor);
			if (!strncmp(q, stressor, n) && q[n] == ' ') {
				double v[6];
				int k = sscanf(q + n, "%lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2],
					       &v[3], &v[4], &v[5]);
				if (k >= 5) {
					*ops = v[0];
					*ops_per_s = v[4];
					return 0;
				}
			}
		}
		p = line_end;
	}
	return -1;
}

static int parse(const json_t *p, const struct wl_output *out, struct metric_set *ms,
		 struct strbuf *err)
{
	double ops, rate;
	const char *yaml = json_string_value(json_object_get(out->files, "stress-ng.yaml"));
	if (stressng_parse_yaml(yaml, &ops, &rate) &&
	    stressng_parse_text(out->err, param_str(p, "stressor"), &ops, &rate) &&
	    stressng_parse_text(out->out, param_str(p, "stressor"), &ops, &rate)) {
		strbuf_addstr(err, "stress-ng reported no metrics (no YAML file, no metrc: line)");
		return -1;
	}
	metric_add(ms, "bogo_ops_per_s", rate, "ops/s", BETTER_HIGHER);
	metric_add(ms, "bogo_ops", ops, "count", BETTER_HIGHER);
	return 0;
}

/* the metrics parse() can store ("*": any text; docs/metrics.md) */
static const char *const stressng_metric_names[] = {
	"bogo_ops_per_s", "bogo_ops", NULL,
};

const struct workload_ops stressng_workload = {
	.name = "stress-ng",
	.summary = "stress-ng stressor: bogo operations per second, or background load",
	.tool = "stress-ng",
	.package = "stress-ng",
	.primary = "bogo_ops_per_s",
	.metrics = stressng_metric_names,
	.params = stressng_params,
	.can_be_load = 1,
	.check = check,
	.estimate_s = wl_estimate_duration,
	.build = build,
	.build_load = build_load,
	.parse = parse,
};
