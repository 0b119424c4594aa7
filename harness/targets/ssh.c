/*
 * The ssh target: a real lab machine (or any host reachable by ssh) driven
 * through the OpenSSH client in batch mode; docs/ssh.md is the user's guide.
 *
 * Transport. One `ssh -T -o BatchMode=yes ... host CMD` process per agent
 * connection, with keep-alives (ServerAliveInterval) so that a dead peer is
 * noticed, the user's ssh config and known_hosts honoured, and the plan's
 * identity, port, user, known_hosts file and extra -o options added. CMD is
 * `sh -c SCRIPT schedlab-ssh ARGS...`, every word quoted by sh_quote()
 * (harness/util/shquote.h), so no plan value reaches the remote shell unquoted.
 * SCRIPT (a constant below) makes the private folder (umask 077), checks
 * whether agent-<sha256> is there with that hash, asks for the binary on its
 * stdin when not ("schedlab-ssh: send"), verifies the copy and then execs the
 * agent, whose stdin/stdout become the protocol stream. So the first
 * connection installs the agent and later ones reuse it, in one round trip.
 * Kernel images given as local files are copied the same way (without the
 * exec) into kernels_dir.
 *
 * Workloads. With "tools": "bundle" (the default) the programs the plan
 * runs are copied too, as the workload bundle of harness/targets/bundle.h
 * (the same resolved binaries, libraries and loader an initramfs gets), to
 * AGENT_DIR/bundle/<hash>: bundle_script checks whether that folder is
 * there and intact (MANIFEST's hash, sha256sum -c), else unpacks the
 * archive sent on its stdin into a temporary folder, checks it and renames
 * it. This happens once per boot (a kexec'd system may have lost its files)
 * before the first run, and every exec request then names the bundle, so
 * the agent runs the tools from it through the bundled loader and a box
 * with no rt-tests, stress-ng or matching libc runs the plan (the pgbench
 * workload's PostgreSQL server included: bundle_add_pg). "tools":
 * "target" uses the programs installed on the box instead. Either way the
 * agent reports which file ran, with its SHA-256, for every run.
 *
 * Faults. ssh dying, EOF, or a keep-alive timeout is a transport error: the
 * call fails with ssh's own message appended (connection refused, closed by
 * remote host, timeout), the session stores the run as lost (resumable) and
 * reopens the target at the next boot. The remote agent sees EOF on its
 * stdin when the connection goes (sshd/dropbear close the channel) and kills
 * the workload, so nothing is left running on the target.
 *
 * Switching. A boot whose configuration is already in force (effective
 * preempt mode, schedlab's parameters on /proc/cmdline, the kernel) needs no
 * switch. When only the preempt mode differs and the running kernel can
 * switch it ("runtime", and "auto" when it can: target_runtime_possible),
 * the agent writes /sys/kernel/debug/sched/preempt (method "runtime").
 * Otherwise "kexec" ("auto" too) asks the agent to load kernel + initrd
 * with the new command line and execute it; "reboot" runs the plan's
 * reboot_hook (argv + kernel, initrd, command line) on the target, then the
 * reboot command. Either way the controller then polls with new ssh
 * connections until an agent answers with a new boot_id, or timeout_s.
 * The new command line is the machine's own (the running one without what
 * schedlab added: everything after the marker `schedlab.set=1`, preempt=,
 * BOOT_IMAGE=) or the plan's "cmdline", then the marker, preempt=, append,
 * the boot's parameters and `schedlab.kernel=<hash>` for a copied kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/targets/bundle.h"
#include "harness/targets/initramfs.h"
#include "harness/util/proc.h"
#include "harness/util/sha256.h"
#include "harness/util/shquote.h"
#include "harness/agent/sysinfo.h"
#include "harness/targets/target.h"

#define SSH_ERR_TAIL 4096
#define MARKER "schedlab.set=1"

/*
 * Runs on the target as `sh -c SCRIPT schedlab-ssh DIR NAME SHA256 SIZE MODE`.
 * Prints one line "schedlab-ssh: have|send ABSDIR", reads SIZE bytes of the
 * file on stdin after "send", and with MODE "exec" execs the file (the agent),
 * else prints "schedlab-ssh: stored".
 */
static const char remote_script[] =
	"umask 077\n"
	"d=$1 f=$2 h=$3 n=$4\n"
	"mkdir -p \"$d\" && cd \"$d\" || { echo \"schedlab-ssh: cannot use folder $d\"; exit 111; }\n"
	"if [ -f \"$f\" ] && [ \"$(sha256sum <\"$f\" | cut -c1-64)\" = \"$h\" ]; then\n"
	"\techo \"schedlab-ssh: have $(pwd)\"\n"
	"else\n"
	"\techo \"schedlab-ssh: send $(pwd)\"\n"
	"\thead -c \"$n\" >\"$f.tmp\" &&\n"
	"\t[ \"$(sha256sum <\"$f.tmp\" | cut -c1-64)\" = \"$h\" ] &&\n"
	"\tchmod 700 \"$f.tmp\" && mv -f \"$f.tmp\" \"$f\" ||\n"
	"\t{ echo \"schedlab-ssh: copy of $f failed (sha256 or disk)\"; rm -f \"$f.tmp\"; exit 112; }\n"
	"fi\n"
	"if [ \"$5\" = exec ]; then exec \"./$f\" 2>agent.stderr; fi\n"
	"echo \"schedlab-ssh: stored\"\n";

/*
 * Runs on the target as `sh -c SCRIPT schedlab-ssh DIR HASH SIZE`: the
 * workload bundle HASH under DIR/bundle. Prints "schedlab-ssh: have ABS"
 * when it is there and intact, else "schedlab-ssh: send ABS", reads a tar
 * archive of SIZE bytes, unpacks it into a temporary folder, checks it and
 * renames it to HASH ("schedlab-ssh: stored"). A copy that does not check
 * out is removed, never used.
 */
static const char bundle_script[] =
	"umask 077\n"
	"d=$1 h=$2 n=$3\n"
	"mkdir -p \"$d/bundle\" && cd \"$d/bundle\" || { echo \"schedlab-ssh: cannot use folder $d/bundle\"; exit 111; }\n"
	"ok() { [ -f \"$1/MANIFEST\" ] && [ \"$(sha256sum <\"$1/MANIFEST\" | cut -c1-64)\" = \"$h\" ] &&\n"
	"\t( cd \"$1\" && sha256sum -c MANIFEST >/dev/null 2>&1 ); }\n"
	"if ok \"$h\"; then echo \"schedlab-ssh: have $(pwd)/$h\"; exit 0; fi\n"
	"command -v tar >/dev/null || { echo \"schedlab-ssh: the target has no tar, which unpacks the workload bundle (busybox tar will do; or set tools to target)\"; exit 113; }\n"
	"t=\"$h.tmp.$$\"\n"
	"rm -rf \"$t\" && mkdir \"$t\" || { echo \"schedlab-ssh: cannot write in $(pwd)\"; exit 112; }\n"
	"echo \"schedlab-ssh: send $(pwd)/$h\"\n"
	"if head -c \"$n\" | tar -x -f - -C \"$t\" 2>\"$t.err\" && ok \"$t\"; then\n"
	"\trm -rf \"$h\" && mv \"$t\" \"$h\" && rm -f \"$t.err\" && echo \"schedlab-ssh: stored\" && exit 0\n"
	"fi\n"
	"echo \"schedlab-ssh: the copy of workload bundle $h failed (tar, sha256 or disk): $(head -c 300 \"$t.err\" 2>/dev/null | tr '\\n' ' ')\"\n"
	"rm -rf \"$t\" \"$t.err\"\n"
	"exit 112\n";

struct ssh_priv {
	struct child ssh;          /* the ssh process carrying the agent */
	int running;
	struct agent_conn conn;
	int conn_open;
	int dead;                  /* transport failed: no graceful shutdown */
	struct strbuf ssherr;      /* ssh's stderr (tail) */
	char remote_dir[PATH_MAX]; /* absolute agent folder on the target */
	char *base_cmdline;        /* the machine's own command line */
	/* "tools": "bundle": the bundle (built once per open), the exec
	 * requests' "bundle" object, and the boot it was checked in */
	struct bundle *bundle;
	json_t *bundle_req;
	char bundle_boot[64];
};

/* ------------------------------------------------------------------ */
/* plan object                                                          */


static int one_line_ok(const char *s)
{
	return s && !strchr(s, '\n') && !strchr(s, '\r');
}

static int argv_array_ok(const json_t *v)
{
	size_t i;
	json_t *e;
	if (!json_is_array(v) || json_array_size(v) < 1)
		return 0;
	json_array_foreach(v, i, e)
		if (!json_is_string(e) || (i == 0 && !*json_string_value(e)))
			return 0;
	return 1;
}

/* how the machine is reached: host, user, port, identity, known_hosts,
 * ssh_options */
/* the ssh options a plan may add: transport, authentication and host keys.
 * Not ProxyCommand, LocalCommand, PermitLocalCommand, KnownHostsCommand,
 * Match exec or anything else that runs a program on this machine. */
static const char *const ssh_allowed[] = {
	"AddressFamily", "BatchMode", "BindAddress", "CheckHostIP", "Ciphers", "Compression",
	"ConnectionAttempts", "ConnectTimeout", "GlobalKnownHostsFile", "HashKnownHosts",
	"HostKeyAlgorithms", "HostKeyAlias", "IdentitiesOnly", "IdentityFile", "IPQoS",
	"KexAlgorithms", "LogLevel", "MACs", "PasswordAuthentication", "Port",
	"PreferredAuthentications", "ProxyJump", "PubkeyAcceptedAlgorithms",
	"PubkeyAcceptedKeyTypes", "ServerAliveCountMax", "ServerAliveInterval",
	"StrictHostKeyChecking", "TCPKeepAlive", "UpdateHostKeys", "User", "UserKnownHostsFile",
	NULL,
};

static int ssh_option_allowed(const char *opt)
{
	size_t n = strcspn(opt, "= ");
	for (const char *const *a = ssh_allowed; *a; a++)
		if (strlen(*a) == n && !strncasecmp(opt, *a, n))
			return 1;
	return 0;
}

static const char *ssh_allowed_list(void)
{
	static char buf[1024];
	if (!buf[0])
		for (const char *const *a = ssh_allowed; *a; a++)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s",
				 a == ssh_allowed ? "" : ", ", *a);
	return buf;
}

static int check_login(json_t *out, const char *where, struct strbuf *err)
{
	json_t *v;
	const char *s = json_string_value(json_object_get(out, "host"));
	if (!s || !*s || *s == '-' || strpbrk(s, " \t\n'\"\\;$`@")) {
		strbuf_addf(err, "%s.host: must be a host name or address (not starting with '-', "
				 "no spaces or quotes; the user goes in \"user\")", where);
		return -1;
	}
	v = json_object_get(out, "user");
	/* the same characters as the host are refused (and '@', ':'), and
	 * control characters in either: user@host reaches ssh's own parsing
	 * and %r in its configuration */
	int ctl = 0;
	for (const char *c = v && json_is_string(v) ? json_string_value(v) : ""; *c; c++)
		ctl |= (unsigned char)*c < 0x20 || *c == 0x7f;
	if (v && (!json_is_string(v) || !*json_string_value(v) || *json_string_value(v) == '-' ||
		  strpbrk(json_string_value(v), " \t\n'\"\\;$`@:") || ctl)) {
		strbuf_addf(err, "%s.user: must be a user name (not starting with '-'; no spaces, "
				 "quotes, control characters or any of \\ ; $ ` @ :)", where);
		return -1;
	}
	v = json_object_get(out, "port");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 1 ||
		  json_integer_value(v) > 65535)) {
		strbuf_addf(err, "%s.port: must be an integer in 1..65535", where);
		return -1;
	}
	/* values that go into ssh -o KEY=VALUE (whitespace would split them) */
	static const char *const files[] = { "identity", "known_hosts", NULL };
	for (const char *const *f = files; *f; f++) {
		v = json_object_get(out, *f);
		if (v && (!json_is_string(v) || !*json_string_value(v) ||
			  strpbrk(json_string_value(v), " \t\n\"'"))) {
			strbuf_addf(err, "%s.%s: must be a file path without spaces or quotes", where,
				    *f);
			return -1;
		}
		/* "~/..." is expanded by ssh itself */
		if (v && json_string_value(v)[0] != '~' && access(json_string_value(v), R_OK) < 0) {
			strbuf_addf(err, "%s.%s: %s: %s", where, *f, json_string_value(v),
				    strerror(errno));
			return -1;
		}
	}
	v = json_object_get(out, "ssh_options");
	if (v) {
		size_t i;
		json_t *e;
		if (!json_is_array(v))
			goto bad_opts;
		json_array_foreach(v, i, e) {
			const char *o = json_string_value(e);
			if (!o || !strchr(o, '=') || *o == '=' || *o == '-' || !one_line_ok(o))
				goto bad_opts;
			if (!ssh_option_allowed(o)) {
				strbuf_addf(err, "%s.ssh_options[%zu]: %.*s is not an option schedlab "
					    "passes to ssh (options that run local commands, such as "
					    "ProxyCommand or LocalCommand, are refused); allowed: %s",
					    where, i, (int)strcspn(o, "="), o, ssh_allowed_list());
				return -1;
			}
		}
	}
	return 0;
bad_opts:
	strbuf_addf(err, "%s.ssh_options: must be an array of \"Key=value\" ssh options", where);
	return -1;
}

/* how boots are switched: switch, kernel/initrd/command line strings, the
 * folders on the target, timeouts, reboot_hook and reboot_cmd */
static int check_switching(json_t *out, const char *where, struct strbuf *err)
{
	json_t *v;
	static const char *const strs[] = { "kernel", "initrd", "kernels_dir", "agent_dir",
					    "cmdline", "append", "agent", NULL };
	for (const char *const *k = strs; *k; k++) {
		v = json_object_get(out, *k);
		if (v && (!json_is_string(v) || !one_line_ok(json_string_value(v)))) {
			strbuf_addf(err, "%s.%s: must be a one-line string", where, *k);
			return -1;
		}
	}
	if (!*json_string_value(json_object_get(out, "agent_dir")) ||
	    !*json_string_value(json_object_get(out, "kernels_dir"))) {
		strbuf_addf(err, "%s: agent_dir and kernels_dir must not be empty", where);
		return -1;
	}
	static const char *const argvs[] = { "reboot_hook", "reboot_cmd", NULL };
	for (const char *const *k = argvs; *k; k++) {
		v = json_object_get(out, *k);
		if (v && !argv_array_ok(v)) {
			strbuf_addf(err, "%s.%s: must be a non-empty array of strings (an argv run "
					 "on the target)", where, *k);
			return -1;
		}
	}
	return 0;
}

static const char *const switches[] = { "auto", "runtime", "kexec", "reboot", NULL };
static const char *const tool_kinds[] = { "bundle", "target", NULL };

/* the keys of an ssh target, one line each (docs/ssh.md's table is written
 * from it); the strings that reach ssh's command line or the target's shell
 * are checked by check_login and check_switching after it */
static const struct param_spec ssh_options[] = {
	{ "host", PT_JSON, .kind = "string", .def_doc = "required",
	  .help = "host name or address (no leading `-`, no spaces, quotes or `@`)" },
	{ "user", PT_JSON, .kind = "string", .def_doc = "ssh config", .help = "`-l user`" },
	{ "port", PT_JSON, .kind = "integer 1..65535", .def_doc = "ssh config", .help = "`-p port`" },
	{ "identity", PT_JSON, .kind = "path", .def_doc = "ssh config",
	  .help = "`-i FILE -o IdentitiesOnly=yes`" },
	{ "known_hosts", PT_JSON, .kind = "path", .def_doc = "ssh config",
	  .help = "`-o UserKnownHostsFile=FILE` (the file must exist)" },
	{ "ssh_options", PT_JSON, .kind = "array of strings", .def_doc = "`[]`",
	  .help = "more `-o Key=value` options, e.g. `[\"StrictHostKeyChecking=accept-new\", "
		  "\"ProxyJump=gw\"]`; only transport, authentication and host-key options are "
		  "accepted (the list is in the error message); options that run a local command "
		  "(`ProxyCommand`, `LocalCommand`, `KnownHostsCommand`, ...) are refused" },
	{ "switch", PT_ENUM, "\"auto\"", .choices = switches,
	  .help = "how a boot configuration is brought about: `runtime` (write the preempt mode "
		  "in the running kernel; only the preempt mode may differ between boot "
		  "configurations, else refused at preflight), `kexec` or `reboot`; `auto`: "
		  "`runtime` when only the preempt mode changes and the running kernel can switch "
		  "it, else `kexec` (the plan's top-level `switch` lands here)" },
	{ "kernel", PT_JSON, .kind = "string", .def_doc = "`/boot/vmlinuz-<release>`",
	  .help = "the kernel image on the target for boots that name no kernel" },
	{ "initrd", PT_JSON, .kind = "string", .def_doc = "`/boot/initrd.img-<release>`",
	  .help = "the initrd on the target (`\"\"`: none)" },
	{ "cmdline", PT_JSON, .kind = "string", .def_doc = "the running one",
	  .help = "the machine's own kernel command line, see below" },
	{ "append", PT_JSON, "\"\"", .kind = "string", .help = "parameters added to every boot" },
	{ "timeout_s", PT_REAL, "300.0", 5, 7200,
	  .help = "seconds from the kexec/reboot request until an agent answers with a new "
		  "boot_id" },
	{ "connect_timeout_s", PT_REAL, "20.0", 1, 600,
	  .help = "ssh `ConnectTimeout` of the first connection (5 s while polling a rebooting "
		  "machine)" },
	{ "reboot_hook", PT_JSON, .kind = "array of strings",
	  .help = "argv run on the target before a reboot (see Switching)" },
	{ "reboot_cmd", PT_JSON, "[\"reboot\"]", .kind = "array of strings",
	  .help = "argv that reboots the target" },
	{ "agent_dir", PT_JSON, "\".cache/schedlab\"", .kind = "string",
	  .help = "where the agent lives on the target (relative: to the login's home)" },
	{ "kernels_dir", PT_JSON, "\".cache/schedlab/kernels\"", .kind = "string",
	  .help = "where local kernel images are copied" },
	{ "agent", PT_JSON, .kind = "path", .def_doc = "`bin/schedlab-agent`",
	  .help = "the agent binary to install" },
	{ "tools", PT_ENUM, "\"bundle\"", .choices = tool_kinds,
	  .help = "where the workloads' programs come from: `bundle` copies them, with their "
		  "libraries and the dynamic loader, to the target (below); `target` runs the ones "
		  "installed there (`rt-tests`, `stress-ng`, ...)" },
	PARAM_END,
};

static json_t *ssh_check(const json_t *conf, const char *path, struct strbuf *err)
{
	const char *where = path ? path : "target";
	json_t *out = target_conf_resolve(&ssh_target, conf, where, err);
	if (out && (check_login(out, where, err) || check_switching(out, where, err))) {
		json_decref(out);
		return NULL;
	}
	return out;
}

static int ssh_feasible(struct target *t, const struct boot_spec *b, const json_t *si,
			struct strbuf *why)
{
	const char *sw = json_string_value(json_object_get(t->conf, "switch"));
	if (b->preempt && !target_preempt_known(b->preempt)) {
		strbuf_addf(why, "unknown preempt mode \"%s\"", b->preempt);
		return 0;
	}
	if (b->preempt && !b->kernel && json_is_false(sysinfo_value(si, "preempt_dynamic"))) {
		strbuf_addf(why, "preempt=%s: the running kernel has no PREEMPT_DYNAMIC, so "
				 "preempt= on its command line would be ignored", b->preempt);
		return 0;
	}
	if (b->kernel) {
		struct stat st;
		if (stat(b->kernel, &st) < 0 && b->kernel[0] != '/') {
			strbuf_addf(why, "kernel %s: %s (a local file is copied to the target; a "
					 "path on the target must be absolute)", b->kernel,
				    strerror(errno));
			return 0;
		}
	}
	if (sw && !strcmp(sw, "reboot") && !json_object_get(t->conf, "reboot_hook") &&
	    (b->kernel || b->preempt || (b->cmdline && *b->cmdline))) {
		strbuf_addstr(why, "switch \"reboot\" needs target.reboot_hook, a command on the "
				   "target that makes the next boot use the given kernel, initrd and "
				   "command line (e.g. a grub-reboot wrapper, see docs/ssh.md)");
		return 0;
	}
	return 1;
}

/* ------------------------------------------------------------------ */
/* the ssh command                                                      */

static void ssh_argv(struct target *t, double connect_timeout, struct strvec *av)
{
	const json_t *c = t->conf;
	const char *user = json_string_value(json_object_get(c, "user"));
	const char *id = json_string_value(json_object_get(c, "identity"));
	const char *kh = json_string_value(json_object_get(c, "known_hosts"));
	json_t *opts = json_object_get(c, "ssh_options"), *e;
	size_t i;

	strvec_pushv(av, (const char *const[]){ "ssh", "-T", "-e", "none", "-o", "BatchMode=yes",
						"-o", "ServerAliveInterval=5", "-o",
						"ServerAliveCountMax=3", NULL });
	strvec_push(av, "-o");
	strvec_pushf(av, "ConnectTimeout=%d", connect_timeout < 1 ? 1 : (int)connect_timeout);
	if (json_object_get(c, "port")) {
		strvec_push(av, "-p");
		strvec_pushf(av, "%lld", (long long)json_integer_value(json_object_get(c, "port")));
	}
	if (user) {
		strvec_push(av, "-l");
		strvec_push(av, user);
	}
	if (id) {
		strvec_push(av, "-i");
		strvec_push(av, id);
		strvec_push(av, "-o");
		strvec_push(av, "IdentitiesOnly=yes");
	}
	if (kh) {
		strvec_push(av, "-o");
		strvec_pushf(av, "UserKnownHostsFile=%s", kh);
	}
	json_array_foreach(opts, i, e) {
		strvec_push(av, "-o");
		strvec_push(av, json_string_value(e));
	}
	strvec_push(av, "--");
	strvec_push(av, json_string_value(json_object_get(c, "host")));
}

static void drain_ssh_stderr(struct ssh_priv *p)
{
	if (p->running)
		target_drain_tail(p->ssh.err_fd, &p->ssherr, SSH_ERR_TAIL);
}

/* append ": <ssh's last words>" to err */
static void add_ssh_stderr(struct ssh_priv *p, struct strbuf *err)
{
	drain_ssh_stderr(p);
	strbuf_trim(&p->ssherr);
	if (p->ssherr.len) {
		char *s = xstrdup(p->ssherr.buf);
		for (char *q = s; *q; q++)
			if (*q == '\n' || *q == '\r')
				*q = ' ';
		strbuf_addf(err, " (%s)", s);
		free(s);
	}
}

static void conn_stop(struct ssh_priv *p, int graceful)
{
	if (p->conn_open) {
		if (graceful && !p->dead) {
			struct strbuf e = STRBUF_INIT;
			agent_call(&p->conn, "shutdown", NULL, 10, NULL, &e);
			strbuf_release(&e);
		}
		agent_conn_release(&p->conn); /* EOF: the remote agent restores and exits */
		p->conn_open = 0;
	}
	if (p->running) {
		target_reap_within(&p->ssh, graceful && !p->dead ? 5 : 0.2);
		drain_ssh_stderr(p);
		proc_stop(&p->ssh, 1);
		proc_close_fds(&p->ssh);
		p->running = 0;
	}
}

/* the connection is lost or useless: no graceful shutdown, ssh stopped;
 * with err, ssh's last words are appended to it */
static void conn_lost(struct ssh_priv *p, struct strbuf *err)
{
	p->dead = 1;
	conn_stop(p, 0);
	if (err)
		add_ssh_stderr(p, err);
}

/* read one line (byte by byte: what follows belongs to the agent) */
static int read_line(int fd, struct strbuf *line, double timeout_s, volatile int *abort_flag)
{
	double end = now_mono() + timeout_s;
	strbuf_reset(line);
	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		double left = end - now_mono();
		if (left <= 0)
			return -2;
		if (abort_flag && *abort_flag)
			return -3;
		int r = poll(&pfd, 1, left > 0.2 ? 200 : (int)(left * 1000) + 1);
		if (r < 0 && errno != EINTR)
			return -1;
		if (r <= 0)
			continue;
		char ch;
		ssize_t n = read(fd, &ch, 1);
		if (n == 0)
			return -1;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		if (ch == '\n')
			return 0;
		strbuf_addch(line, ch);
		if (line->len > 65536)
			return -1;
	}
}

static int hash_local_file(const char *path, char hex[65], off_t *size, struct strbuf *err)
{
	uint64_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;
	if (fd < 0) {
		strbuf_addf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	r = sha256_fd(fd, hex, &n);
	if (r < 0)
		strbuf_addf(err, "%s: %s", path, strerror(errno));
	close(fd);
	*size = (off_t)n;
	return r;
}

static int send_file(int fd, const char *path, struct strbuf *err)
{
	char buf[65536];
	ssize_t n;
	int in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		strbuf_addf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(fd, buf + off, (size_t)(n - off));
			if (w < 0) {
				if (errno == EINTR)
					continue;
				strbuf_addf(err, "sending %s: %s", path, strerror(errno));
				close(in);
				return -1;
			}
			off += w;
		}
	}
	close(in);
	return n < 0 ? -1 : 0;
}

/* start ssh with av, pipes on all three fds, stderr kept (non-blocking)
 * for messages */
static int start_ssh(struct ssh_priv *p, struct strvec *av, struct strbuf *err)
{
	strbuf_reset(&p->ssherr);
	p->ssh = (struct child)CHILD_INIT;
	p->ssh.argv = strvec_argv(av);
	p->ssh.in = PROC_PIPE;
	p->ssh.out = PROC_PIPE;
	p->ssh.err = PROC_PIPE;
	p->ssh.new_pgrp = 1;
	p->ssh.pdeathsig = SIGKILL; /* a dead controller drops the connection */
	p->dead = 0;
	if (proc_start(&p->ssh, err) < 0)
		return -1;
	p->running = 1;
	fcntl(p->ssh.err_fd, F_SETFL, fcntl(p->ssh.err_fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

/* the remote script's first line, "schedlab-ssh: have|send ABSDIR" (login
 * noise such as a .bashrc echo is skipped); ABSDIR goes to absdir. Returns
 * 1 send, 0 have, -1 with a message (the connection is then stopped). */
static int read_greeting(struct target *t, struct ssh_priv *p, double connect_timeout,
			 char *absdir, size_t abslen, struct strbuf *err)
{
	const char *host = json_string_value(json_object_get(t->conf, "host"));
	struct strbuf line = STRBUF_INIT;
	int r, rc = -1;

	for (;;) {
		r = read_line(p->ssh.out_fd, &line, connect_timeout + 10, t->abort_flag);
		if (r < 0) {
			strbuf_addf(err, "ssh %s: %s", host,
				    r == -2 ? "no answer (timeout)" : r == -3 ? "interrupted"
								: "connection failed");
			conn_lost(p, err);
			goto out;
		}
		if (!strncmp(line.buf, "schedlab-ssh: ", 14))
			break;
	}
	if (!strncmp(line.buf, "schedlab-ssh: have ", 19) ||
	    !strncmp(line.buf, "schedlab-ssh: send ", 19)) {
		snprintf(absdir, abslen, "%s", line.buf + 19);
		rc = !strncmp(line.buf, "schedlab-ssh: send ", 19);
	} else {
		strbuf_addf(err, "ssh %s: %s", host, line.buf + 14);
		conn_lost(p, NULL);
	}
out:
	strbuf_release(&line);
	return rc;
}

/* mode "store": the script's "schedlab-ssh: stored", then the connection ends */
static int await_stored(struct target *t, struct ssh_priv *p, const char *src,
			struct strbuf *err)
{
	struct strbuf line = STRBUF_INIT;
	int r = read_line(p->ssh.out_fd, &line, 600, t->abort_flag);
	if (r < 0 || strcmp(line.buf, "schedlab-ssh: stored")) {
		strbuf_addf(err, "ssh %s: copying %s: %s",
			    json_string_value(json_object_get(t->conf, "host")), src,
			    r < 0 ? "connection failed" : line.buf + 14);
		conn_lost(p, err);
		strbuf_release(&line);
		return -1;
	}
	conn_stop(p, 0);
	strbuf_release(&line);
	return 0;
}

/*
 * Start `ssh host sh -c SCRIPT ...` for local file `src` stored as
 * dir/name on the target (mode "exec": then run it as the agent). On
 * success the ssh process runs in p->ssh with its pipes open; the remote
 * absolute folder goes to absdir. -1 with a message naming the host.
 */
static int remote_install(struct target *t, struct ssh_priv *p, const char *src,
			  const char *dir, const char *name, int exec, double connect_timeout,
			  char *absdir, size_t abslen, struct strbuf *err)
{
	struct strvec av = STRVEC_INIT;
	struct strbuf cmd = STRBUF_INIT;
	char hex[65], size[32];
	off_t sz;
	int rc = -1, send;

	if (hash_local_file(src, hex, &sz, err) < 0)
		return -1;
	snprintf(size, sizeof(size), "%lld", (long long)sz);
	char *fname = xstrfmt("%s-%s", name, hex);
	const char *words[] = { "sh", "-c", remote_script, "schedlab-ssh", dir, fname, hex, size,
				exec ? "exec" : "store", NULL };
	sh_quote_argv(&cmd, words);
	ssh_argv(t, connect_timeout, &av);
	strvec_push(&av, cmd.buf);

	if (start_ssh(p, &av, err) < 0)
		goto out;
	send = read_greeting(t, p, connect_timeout, absdir, abslen, err);
	if (send < 0)
		goto out;
	if (send && send_file(p->ssh.in_fd, src, err) < 0) {
		conn_lost(p, err);
		goto out;
	}
	if (!exec && await_stored(t, p, src, err) < 0)
		goto out;
	rc = 0;
out:
	free(fname);
	strvec_clear(&av);
	strbuf_release(&cmd);
	return rc;
}

/* ------------------------------------------------------------------ */
/* the workload bundle                                                  */

/* the plan's programs (sl-* from next to the agent; for sl-pgbench
 * PostgreSQL too), or without a plan cyclictest, hackbench, stress-ng and
 * every sl-* there */
static int build_bundle(struct target *t, struct bundle *b, struct strbuf *err)
{
	static const char *const defaults[] = { "cyclictest", "hackbench", "stress-ng", NULL };
	const char *const *tools = t->tools ? t->tools : defaults;
	char *dir = xstrdup(target_agent_binary(t)), *slash = strrchr(dir, '/');
	int rc = -1;

	if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	for (const char *const *v = tools; *v; v++) {
		char *path = strncmp(*v, "sl-", 3) ? xstrdup(*v) : xstrfmt("%s/%s", dir, *v);
		int r = bundle_add_program(b, path, err);
		free(path);
		/* the pgbench workload's server: PostgreSQL 15 in pg/ */
		if (!r && !strcmp(*v, "sl-pgbench"))
			r = bundle_add_pg(b, err);
		if (r < 0)
			goto out;
	}
	if (!t->tools) {
		glob_t g;
		char *pat = xstrfmt("%s/sl-*", dir);
		if (glob(pat, 0, NULL, &g) == 0) {
			for (size_t i = 0; i < g.gl_pathc && rc; i++)
				if (access(g.gl_pathv[i], X_OK) == 0 &&
				    bundle_add_program(b, g.gl_pathv[i], err) < 0)
					rc = -2;
			globfree(&g);
		}
		free(pat);
		if (rc == -2) {
			rc = -1;
			goto out;
		}
	}
	rc = bundle_finish(b, 1, err);
out:
	free(dir);
	return rc;
}

/*
 * The bundle on the target, once per boot: built here on first use, then
 * found on the target by its hash or copied (bundle_script). What happened
 * goes into the boot's sysinfo as "bundle" {hash, dir, copied, files, bytes,
 * copy_s}. -1 with a message naming the host.
 */
static int ensure_bundle(struct target *t, struct ssh_priv *p, struct boot_info *bi,
			 struct strbuf *err)
{
	const char *host = json_string_value(json_object_get(t->conf, "host"));
	const char *adir = json_string_value(json_object_get(t->conf, "agent_dir"));
	double ct = json_number_value(json_object_get(t->conf, "connect_timeout_s"));
	struct strvec av = STRVEC_INIT;
	struct strbuf cmd = STRBUF_INIT, e = STRBUF_INIT;
	struct ssh_priv cp;
	char abs[PATH_MAX], size[32];
	int rc = -1, send;
	double t0 = now_mono();

	if (!p->bundle) {
		p->bundle = xcalloc(1, sizeof(*p->bundle));
		bundle_init(p->bundle);
		if (build_bundle(t, p->bundle, &e) < 0) {
			strbuf_addf(err, "ssh %s: the workload bundle: %s (the controller needs "
					 "the programs it copies; or set target.tools to \"target\")",
				    host, e.buf);
			bundle_release(p->bundle);
			free(p->bundle);
			p->bundle = NULL;
			goto out0;
		}
	}
	memset(&cp, 0, sizeof(cp));
	cp.ssh = (struct child)CHILD_INIT;
	strbuf_init(&cp.ssherr, 0);
	snprintf(size, sizeof(size), "%llu", (unsigned long long)bundle_tar_size(p->bundle));
	const char *words[] = { "sh", "-c", bundle_script, "schedlab-ssh", adir, p->bundle->hash,
				size, NULL };
	sh_quote_argv(&cmd, words);
	ssh_argv(t, ct, &av);
	strvec_push(&av, cmd.buf);
	if (start_ssh(&cp, &av, err) < 0)
		goto out;
	send = read_greeting(t, &cp, ct, abs, sizeof(abs), err);
	if (send < 0)
		goto out;
	if (send) {
		if (bundle_write_tar(p->bundle, cp.ssh.in_fd, &e) < 0) {
			strbuf_addf(err, "ssh %s: copying the workload bundle: %s", host, e.buf);
			conn_lost(&cp, err);
			goto out;
		}
		if (await_stored(t, &cp, "the workload bundle", err) < 0)
			goto out;
	} else {
		conn_stop(&cp, 0);
	}
	json_decref(p->bundle_req);
	p->bundle_req = bundle_request(p->bundle, abs);
	snprintf(p->bundle_boot, sizeof(p->bundle_boot), "%s", agent_banner_boot_id(&p->conn));
	if (json_is_object(bi->sysinfo))
		json_object_set_new(bi->sysinfo, "bundle",
				    json_pack("{s:s,s:s,s:b,s:I,s:I,s:f}", "hash", p->bundle->hash,
					      "dir", abs, "copied", send, "files",
					      (json_int_t)p->bundle->nr, "bytes",
					      (json_int_t)p->bundle->bytes, "copy_s",
					      now_mono() - t0));
	rc = 0;
out:
	strbuf_release(&cp.ssherr);
out0:
	strvec_clear(&av);
	strbuf_release(&cmd);
	strbuf_release(&e);
	return rc;
}

/* one attempt: connect, install if needed, start the agent, wait for its banner */
static int agent_connect(struct target *t, struct ssh_priv *p, double timeout_s, int polling,
			 struct strbuf *err)
{
	const char *agent = target_agent_binary(t);
	const char *dir = json_string_value(json_object_get(t->conf, "agent_dir"));
	double ct = json_number_value(json_object_get(t->conf, "connect_timeout_s"));
	double t0 = now_mono();
	struct strbuf e = STRBUF_INIT;

	if (access(agent, R_OK) < 0) {
		strbuf_addf(err, "ssh: the agent binary %s: %s (run make)", agent, strerror(errno));
		return -1;
	}
	/* while a machine boots, a connection may hang until its network is up
	   (or, behind qemu's user-mode network, forever): poll with short attempts */
	if (polling && ct > 5)
		ct = 5;
	if (ct > timeout_s)
		ct = timeout_s;
	if (remote_install(t, p, agent, dir, "agent", 1, ct, p->remote_dir, sizeof(p->remote_dir),
			   err) < 0)
		return -1;
	agent_conn_init(&p->conn, p->ssh.out_fd, p->ssh.in_fd);
	p->conn.abort_flag = t->abort_flag;
	p->ssh.out_fd = p->ssh.in_fd = -1; /* owned by the connection now */
	p->conn_open = 1;
	if (agent_wait_banner(&p->conn, timeout_s - (now_mono() - t0) + 30, &e) < 0) {
		strbuf_addf(err, "ssh %s: the agent did not start: %s",
			    json_string_value(json_object_get(t->conf, "host")), e.buf);
		conn_lost(p, err);
		strbuf_release(&e);
		return -1;
	}
	strbuf_release(&e);
	t->agent = &p->conn;
	return 0;
}

/* poll until an agent answers with a boot_id other than old (or timeout) */
static int wait_new_boot(struct target *t, struct ssh_priv *p, const char *old, double timeout_s,
			 struct strbuf *err)
{
	double t0 = now_mono();
	struct strbuf last = STRBUF_INIT;
	int tries = 0;

	for (;;) {
		double left = timeout_s - (now_mono() - t0);
		if (t->abort_flag && *t->abort_flag) {
			strbuf_addstr(err, "interrupted while waiting for the target to come back");
			break;
		}
		if (left <= 0) {
			strbuf_addf(err, "the target did not come back within %.0f s (%d attempts; "
					 "last: %s)", timeout_s, tries, last.len ? last.buf : "none");
			break;
		}
		tries++;
		strbuf_reset(&last);
		if (agent_connect(t, p, left, 1, &last) == 0) {
			if (strcmp(agent_banner_boot_id(&p->conn), old)) {
				strbuf_release(&last);
				return 0;
			}
			/* still the old system, on its way down */
			strbuf_addstr(&last, "the old boot still answers");
			t->agent = NULL;
			conn_lost(p, NULL);
		}
		usleep(1000000);
	}
	strbuf_release(&last);
	return -1;
}

/* ------------------------------------------------------------------ */
/* command lines                                                        */

/* split on spaces outside double quotes */
static void split_cmdline(const char *s, struct strvec *out)
{
	struct strbuf tok = STRBUF_INIT;
	int q = 0;
	for (;; s++) {
		if (!*s || (!q && (*s == ' ' || *s == '\t' || *s == '\n'))) {
			if (tok.len)
				strvec_push(out, tok.buf);
			strbuf_reset(&tok);
			if (!*s)
				break;
			continue;
		}
		if (*s == '"')
			q = !q;
		strbuf_addch(&tok, *s);
	}
	strbuf_release(&tok);
}

/* the machine's own command line: /proc/cmdline without schedlab's part */
static char *own_cmdline(const char *proc_cmdline)
{
	struct strvec v = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;
	split_cmdline(proc_cmdline ? proc_cmdline : "", &v);
	for (size_t i = 0; i < v.nr; i++) {
		if (!strcmp(v.v[i], MARKER))
			break;
		if (!strncmp(v.v[i], "preempt=", 8) || !strncmp(v.v[i], "BOOT_IMAGE=", 11))
			continue;
		if (out.len)
			strbuf_addch(&out, ' ');
		strbuf_addstr(&out, v.v[i]);
	}
	strvec_clear(&v);
	return strbuf_detach(&out, NULL);
}

/* schedlab's part of the command line for boot b (after the marker) */
static void added_params(struct target *t, const struct boot_spec *b, const char *khash,
			 struct strbuf *o)
{
	target_boot_params(t, b, o);
	if (khash)
		strbuf_addf(o, " schedlab.kernel=%.16s", khash);
}

static int has_token(const struct strvec *v, size_t from, const char *tok)
{
	for (size_t i = from; i < v->nr; i++)
		if (!strcmp(v->v[i], tok))
			return 1;
	return 0;
}

/* is boot b already in force? (preempt, schedlab's parameters, the kernel);
 * when not and why is given, what differs */
static int in_force_why(struct target *t, const struct boot_spec *b, const char *khash,
			const json_t *si, struct strbuf *why)
{
	const char *eff = sysinfo_str(si, "preempt");
	const char *cmd = sysinfo_str(si, "cmdline");
	struct strbuf want = STRBUF_INIT;
	struct strvec have = STRVEC_INIT, w = STRVEC_INIT;
	size_t mark;
	int ok = 1;

	if (b->preempt && (!eff || strcmp(eff, b->preempt))) {
		if (why)
			strbuf_addf(why, "the running kernel is in preempt=%s", eff ? eff : "(unknown)");
		return 0;
	}
	added_params(t, b, khash, &want);
	split_cmdline(want.buf, &w);
	split_cmdline(cmd ? cmd : "", &have);
	for (mark = 0; mark < have.nr && strcmp(have.v[mark], MARKER); mark++)
		;
	/* everything wanted is there (preempt= was checked by its effect) */
	for (size_t i = 0; i < w.nr && (ok || why); i++)
		if (strncmp(w.v[i], "preempt=", 8) && !has_token(&have, 0, w.v[i])) {
			if (why && !strncmp(w.v[i], "schedlab.kernel=", 16))
				strbuf_addf(why, "%sthe running kernel is not known to be %s (no %s on "
					    "its command line: schedlab did not start it from that "
					    "image)", why->len ? "; " : "", b->kernel ? b->kernel : "the plan's",
					    w.v[i]);
			else if (why)
				strbuf_addf(why, "%sthe running kernel's command line lacks %s",
					    why->len ? "; " : "", w.v[i]);
			ok = 0;
		}
	/* and nothing schedlab added for another boot */
	for (size_t i = mark + 1; i < have.nr && (ok || why); i++)
		if (strncmp(have.v[i], "preempt=", 8) && !has_token(&w, 0, have.v[i])) {
			if (why)
				strbuf_addf(why, "%sthe running kernel's command line has %s, which "
					    "schedlab added for another configuration",
					    why->len ? "; " : "", have.v[i]);
			ok = 0;
		}
	strbuf_release(&want);
	strvec_clear(&have);
	strvec_clear(&w);
	return ok;
}

static int in_force(struct target *t, const struct boot_spec *b, const char *khash,
		    const json_t *si)
{
	return in_force_why(t, b, khash, si, NULL);
}

/* ------------------------------------------------------------------ */
/* target_ops                                                           */

static int ssh_open(struct target *t, struct strbuf *err)
{
	struct ssh_priv *p = xcalloc(1, sizeof(*p));
	p->ssh = (struct child)CHILD_INIT;
	strbuf_init(&p->ssherr, 0);
	t->priv = p;
	t->agent = NULL;
	return 0;
}

/* a local kernel: a folder with kernel.json (image, optional initrd), or an
 * image file. *img always gets a path; *ird (when ird is non-NULL) the
 * initrd's or NULL. Both malloc'd. */
static void local_kernel_files(const char *spec, const struct stat *st, char **img, char **ird)
{
	if (ird)
		*ird = NULL;
	if (S_ISDIR(st->st_mode)) {
		char *kj = xstrfmt("%s/kernel.json", spec);
		json_t *j = json_load_file(kj, 0, NULL);
		const char *im = json_string_value(json_object_get(j, "image"));
		const char *ir = json_string_value(json_object_get(j, "initrd"));
		*img = xstrfmt("%s/%s", spec, im ? im : "vmlinuz");
		if (ir && ird)
			*ird = xstrfmt("%s/%s", spec, ir);
		json_decref(j);
		free(kj);
	} else {
		*img = xstrdup(spec);
	}
}

/* the kernel and initrd for boot b, copied to the target when local */
static int resolve_kernel(struct target *t, struct ssh_priv *p, const struct boot_spec *b,
			  const json_t *si, char *kernel, char *initrd, size_t len, char khash[65],
			  struct strbuf *err)
{
	const char *ck = json_string_value(json_object_get(t->conf, "kernel"));
	const char *ci = json_string_value(json_object_get(t->conf, "initrd"));
	const char *rel = sysinfo_str(si, "kernel_release");
	struct stat st;

	khash[0] = '\0';
	if (ci)
		snprintf(initrd, len, "%s", ci);
	else if (rel)
		snprintf(initrd, len, "/boot/initrd.img-%s", rel);
	else
		initrd[0] = '\0';
	if (!b->kernel || stat(b->kernel, &st) < 0) {
		const char *k = b->kernel ? b->kernel : ck;
		if (k)
			snprintf(kernel, len, "%s", k);
		else if (rel)
			snprintf(kernel, len, "/boot/vmlinuz-%s", rel);
		else {
			strbuf_addstr(err, "ssh: no kernel to boot (set target.kernel)");
			return -1;
		}
		return 0;
	}
	char *img, *ird;
	local_kernel_files(b->kernel, &st, &img, &ird);
	const char *kdir = json_string_value(json_object_get(t->conf, "kernels_dir"));
	double ct = json_number_value(json_object_get(t->conf, "connect_timeout_s"));
	char abs[2048], hex[65];
	off_t sz;
	int rc = -1;
	struct ssh_priv cp;
	memset(&cp, 0, sizeof(cp));
	strbuf_init(&cp.ssherr, 0);
	if (hash_local_file(img, hex, &sz, err) < 0)
		goto out;
	snprintf(khash, 65, "%s", hex);
	if (remote_install(t, &cp, img, kdir, "vmlinuz", 0, ct, abs, sizeof(abs), err) < 0)
		goto out;
	snprintf(kernel, len, "%s/vmlinuz-%s", abs, hex);
	if (ird) {
		char ihex[65];
		if (hash_local_file(ird, ihex, &sz, err) < 0 ||
		    remote_install(t, &cp, ird, kdir, "initrd", 0, ct, abs, sizeof(abs), err) < 0)
			goto out;
		snprintf(initrd, len, "%s/initrd-%s", abs, ihex);
	}
	rc = 0;
out:
	strbuf_release(&cp.ssherr);
	free(img);
	free(ird);
	(void)p;
	return rc;
}

static int do_switch(struct target *t, struct ssh_priv *p, const struct boot_spec *b,
		     const json_t *si, struct boot_info *bi, struct strbuf *err)
{
	const char *sw = json_string_value(json_object_get(t->conf, "switch"));
	const char *base = json_string_value(json_object_get(t->conf, "cmdline"));
	double timeout = json_number_value(json_object_get(t->conf, "timeout_s"));
	char kernel[PATH_MAX], initrd[PATH_MAX], khash[65];
	struct strbuf cl = STRBUF_INIT, e = STRBUF_INIT;
	char *old = xstrdup(agent_banner_boot_id(&p->conn));
	json_t *res = NULL;
	int rc = -1, r;

	if (resolve_kernel(t, p, b, si, kernel, initrd, sizeof(kernel), khash, err) < 0)
		goto out;
	strbuf_addstr(&cl, base ? base : p->base_cmdline);
	strbuf_addstr(&cl, cl.len ? " " MARKER : MARKER);
	added_params(t, b, khash[0] ? khash : NULL, &cl);
	double t0 = now_mono();
	if (!strcmp(sw, "reboot")) {
		json_t *hook = json_object_get(t->conf, "reboot_hook");
		if (hook) {
			json_t *av = json_deep_copy(hook);
			json_array_append_new(av, json_string(kernel));
			json_array_append_new(av, json_string(initrd));
			json_array_append_new(av, json_string(cl.buf));
			r = t->ops->exec(t, json_pack("{s:o,s:f}", "argv", av, "timeout_s", 120.0), 120,
					 &res, &e);
			if (r || json_integer_value(json_object_get(res, "exit_code")) != 0) {
				strbuf_addf(err, "ssh: reboot_hook failed: %s%s", e.buf,
					    json_string_value(json_object_get(res, "stderr"))
						    ? json_string_value(json_object_get(res, "stderr"))
						    : "");
				goto out;
			}
			json_decref(res);
			res = NULL;
		}
		/* the answer may never come: the system goes down */
		json_t *rcmd = json_deep_copy(json_object_get(t->conf, "reboot_cmd"));
		agent_call(&p->conn, "exec", json_pack("{s:o,s:f}", "argv", rcmd, "timeout_s", 30.0),
			   10, &res, &e);
		snprintf(bi->method, sizeof(bi->method), "reboot");
	} else {
		json_t *args = json_pack("{s:s,s:s}", "kernel", kernel, "cmdline", cl.buf);
		if (initrd[0])
			json_object_set_new(args, "initrd", json_string(initrd));
		r = agent_call(&p->conn, "kexec", args, 180, &res, &e);
		if (r < 0) {
			strbuf_addf(err, "ssh: kexec request failed: %s", e.buf);
			if (r == -1)
				add_ssh_stderr(p, err);
			goto out;
		}
		snprintf(bi->method, sizeof(bi->method), "kexec");
	}
	t->agent = NULL;
	conn_lost(p, NULL);
	strbuf_reset(&e);
	if (wait_new_boot(t, p, old, timeout, &e) < 0) {
		strbuf_addf(err, "ssh: after %s: %s", bi->method, e.buf);
		goto out;
	}
	bi->switch_s = now_mono() - t0;
	rc = 0;
out:
	json_decref(res);
	free(old);
	strbuf_release(&cl);
	strbuf_release(&e);
	return rc;
}

/*
 * A runtime switch ("runtime", or "auto" when it can): the kernel and
 * schedlab's parameters are in force, only the preempt mode differs (so b
 * names one, other than the effective one). The agent writes the mode to
 * /sys/kernel/debug/sched/preempt, the allow-listed knob the local target
 * uses, on top of the previous runtime switch: one write per switch (each
 * patches the kernel's static calls on every CPU); its journal unwinds them
 * when the agent ends. 0 done, 1 not possible (why says why), -1 error.
 */
static int runtime_switch(struct target *t, const struct boot_spec *b, const char *khash,
			  const json_t *si, struct boot_info *bi, struct strbuf *why,
			  struct strbuf *err)
{
	struct boot_spec rest = *b;
	json_t *info = NULL;
	double t0 = now_mono();
	rest.preempt = NULL;
	struct strbuf diff = STRBUF_INIT;
	int same = in_force_why(t, &rest, khash, si, &diff) && (!b->kernel || khash);
	if (!same) {
		/* a runtime switch changes nothing but the mode: say what else
		 * differs, and what would reach it */
		strbuf_addf(why, "the kernel or its other parameters change too: %s; a boot by "
			    "kexec or reboot reaches it (\"switch\": \"auto\" or \"kexec\")%s",
			    diff.len ? diff.buf : "the kernel image could not be hashed",
			    b->kernel ? ", or leave \"kernel\" out of the matrix to test the running kernel" : "");
		strbuf_release(&diff);
		return 1;
	}
	strbuf_release(&diff);
	if (!target_runtime_possible(same, b->preempt, si, why))
		return 1;
	if (b->preempt) {
		struct strbuf e = STRBUF_INIT;
		int r = t->ops->knob_set(t, "/sys/kernel/debug/sched/preempt", b->preempt, &info,
					 &e);
		if (r) {
			strbuf_addf(why, "writing /sys/kernel/debug/sched/preempt: %s", e.buf);
			if (r == -1)
				strbuf_addf(err, "ssh: runtime switch: %s", e.buf);
			strbuf_release(&e);
			return r == -1 ? -1 : 1;
		}
		strbuf_release(&e);
		t->knob_keep = (int)json_integer_value(json_object_get(info, "depth"));
		json_decref(info);
	}
	snprintf(bi->method, sizeof(bi->method), "runtime");
	bi->switch_s = now_mono() - t0;
	return 0;
}

static int ssh_boot(struct target *t, const struct boot_spec *b, struct boot_info *bi,
		    struct strbuf *err)
{
	struct ssh_priv *p = t->priv;
	double t0 = now_mono();
	json_t *si = NULL;
	int first = !p->conn_open;
	int rc = -1;

	if (b->cmdline && strchr(b->cmdline, '\n')) {
		strbuf_addstr(err, "ssh: the kernel command line must be one line");
		return -1;
	}
	if (!p->conn_open || p->dead) {
		conn_stop(p, 0);
		t->agent = NULL;
		if (agent_connect(t, p, json_number_value(json_object_get(t->conf,
									 "connect_timeout_s")),
				  0, err) < 0)
			return -1;
		t->knob_keep = 0; /* a new agent: no knob changes yet */
	}
	if (t->ops->sysinfo(t, &si, err))
		goto out;
	if (!p->base_cmdline)
		p->base_cmdline = own_cmdline(sysinfo_str(si, "cmdline"));
	/* a copied kernel is known by its hash on the command line */
	char khash[65] = "";
	struct stat st;
	if (b->kernel && stat(b->kernel, &st) == 0) {
		char *kp;
		off_t sz;
		local_kernel_files(b->kernel, &st, &kp, NULL);
		int r = hash_local_file(kp, khash, &sz, err);
		free(kp);
		if (r < 0)
			goto out;
	}
	/* index < 0: only connect (schedlab sysinfo, preflight), never switch */
	if (b->index < 0 ||
	    (in_force(t, b, khash[0] ? khash : NULL, si) && (!b->kernel || khash[0]))) {
		snprintf(bi->method, sizeof(bi->method), first ? "initial" : "none");
		bi->sysinfo = si;
		si = NULL;
	} else {
		const char *sw = json_string_value(json_object_get(t->conf, "switch"));
		int r = 1;
		if (!strcmp(sw, "runtime") || !strcmp(sw, "auto")) {
			struct strbuf why = STRBUF_INIT;
			r = runtime_switch(t, b, khash[0] ? khash : NULL, si, bi, &why, err);
			if (r == 1 && !strcmp(sw, "runtime")) {
				strbuf_addf(err, "ssh: switch \"runtime\": %s", why.buf);
				r = -1;
			}
			strbuf_release(&why);
		}
		if (r < 0)
			goto out;
		if (r == 1) {
			if (do_switch(t, p, b, si, bi, err) < 0)
				goto out;
			t->knob_keep = 0; /* a new kernel, a new agent */
		}
		if (t->ops->sysinfo(t, &bi->sysinfo, err))
			goto out;
	}
	/* the workloads' programs, before the first run of a boot (not for
	   sysinfo or preflight) */
	if (b->index >= 0 && !strcmp(json_string_value(json_object_get(t->conf, "tools")), "bundle") &&
	    strcmp(p->bundle_boot, agent_banner_boot_id(&p->conn)) &&
	    ensure_bundle(t, p, bi, err) < 0)
		goto out;
	snprintf(bi->boot_id, sizeof(bi->boot_id), "%s", agent_banner_boot_id(&p->conn));
	if (!strcmp(bi->method, "initial") || !strcmp(bi->method, "none"))
		bi->switch_s = now_mono() - t0;
	rc = 0;
out:
	json_decref(si);
	return rc;
}

/* a transport error (agent_call's -1) gets ssh's own words and marks the
 * connection dead; returns r */
static int transport_check(struct target *t, int r, struct strbuf *err)
{
	struct ssh_priv *p = t->priv;
	if (r == -1 && p) {
		p->dead = 1;
		add_ssh_stderr(p, err);
	}
	return r;
}

static int ssh_exec(struct target *t, json_t *req, double timeout_s, json_t **out,
		    struct strbuf *err)
{
	struct ssh_priv *p = t->priv;
	/* the agent runs the programs it finds in the bundle from there */
	if (p && p->bundle_req && json_is_object(req) && !json_object_get(req, "bundle"))
		json_object_set(req, "bundle", p->bundle_req);
	return transport_check(t, target_agent_exec(t, req, timeout_s, out, err), err);
}

static int ssh_sysinfo(struct target *t, json_t **out, struct strbuf *err)
{
	if (!t->agent) {
		strbuf_addstr(err, "target is not connected (no agent)");
		return -1;
	}
	int r = agent_call(t->agent, "sysinfo", NULL, 60, out, err);
	return transport_check(t, r, err) ? -1 : 0;
}

static int ssh_knob_set(struct target *t, const char *path, const char *value, json_t **out,
			struct strbuf *err)
{
	return transport_check(t, target_agent_knob_set(t, path, value, out, err), err);
}

static void ssh_close(struct target *t)
{
	struct ssh_priv *p = t->priv;
	if (!p)
		return;
	t->agent = NULL;
	conn_stop(p, !(t->abort_flag && *t->abort_flag));
	strbuf_release(&p->ssherr);
	free(p->base_cmdline);
	if (p->bundle)
		bundle_release(p->bundle);
	free(p->bundle);
	json_decref(p->bundle_req);
	free(p);
	t->priv = NULL;
}

const struct target_ops ssh_target = {
	.options = ssh_options,
	.doc = "docs/ssh.md",
	.name = "ssh",
	.summary = "a machine reached with the OpenSSH client (batch mode); the agent is copied "
		   "to it; switching at run time, by kexec or by reboot with a one-shot boot entry",
	.caps = TCAP_PREEMPT_RUNTIME | TCAP_PREEMPT_BOOT | TCAP_CMDLINE | TCAP_KERNEL |
		TCAP_KEXEC | TCAP_REBOOT,
	.check = ssh_check,
	.feasible = ssh_feasible,
	.open = ssh_open,
	.boot = ssh_boot,
	.sysinfo = ssh_sysinfo,
	.exec = ssh_exec,
	.knob_set = ssh_knob_set,
	.knob_restore = target_agent_knob_restore,
	.close = ssh_close,
};
