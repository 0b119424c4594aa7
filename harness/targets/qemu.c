/*
 * The qemu target: a VM booted from a kernel image and an initramfs built by
 * harness/targets/initramfs.c, with the agent on the guest's second serial port.
 *
 *   ttyS0  the kernel console, written by qemu to <tmpdir>/console.log; the
 *          tail of each boot goes to boot_info.console and into error messages
 *   ttyS1  the agent (`schedlab-agent --tty /dev/ttyS1`, started by /init),
 *          reached through a unix socket chardev <tmpdir>/agent.sock that qemu
 *          serves (server=on,wait=off) and the controller connects to; the
 *          connection survives a kexec inside the guest
 *
 * A new VM boots the kernel folder's uncompressed ELF vmlinux when it has one
 * (qemu enters it through PVH and skips the decompressor, about 3 s less
 * under TCG; "pvh": false boots the bzImage), else the image itself.
 *
 * A boot either starts a new VM (method "boot": the kernel command line is
 * `console=ttyS0 panic=-1 [norandmaps | no_timer_check] [preempt=X] [extra]`
 * (norandmaps on a virtual clock, no_timer_check on the real one: see
 * build_cmdline), with -no-reboot so that a
 * panic ends qemu at once) or, when the target object says "switch":"kexec"
 * and a VM runs the same kernel, asks the agent for op "kexec" with the
 * kernel the guest holds (/boot/vmlinux, the ELF kernel trimmed of its .bss
 * zeros, when the VM booted it through PVH, else /boot/vmlinuz), the
 * archive it booted from (/boot/initrd.img, carried in the initramfs; see
 * initramfs.h) with "carry" and the new command line, then waits on the same
 * connection for a banner with a new boot_id (method "kexec"). With
 * "switch": "runtime", and "auto" when the running kernel can
 * (target_runtime_possible), a boot that differs from the running one only
 * in its preempt mode is a write of the mode by the agent (runtime_vm,
 * method "runtime"). The guest
 * gets only the tools the plan's workloads run (qemu_guest_tools), in an
 * LZ4 archive when the kernel unpacks LZ4; docs/qemu.md has the measurements.
 *
 * The binary: the plan's "qemu", else with a virtual clock the qemu >= 8.1
 * that `make -C kernels qemu` provides when it is there, else the system's
 * qemu-system-x86_64 (qemu_vt.h); its version goes into every boot's row
 * and sysinfo.
 *
 * Acceleration: "auto" tries KVM when /dev/kvm opens, and gives up on it when
 * the kernel has printed nothing within kvm_probe_s (LAB-NOTES: KVM guests
 * hang at "Booting from ROM" on nested hosts); the VM is then started again
 * under TCG and the verdict is remembered for the rest of the process.
 * qemu runs in its own process group with PR_SET_PDEATHSIG, so neither a
 * Ctrl-C at the terminal nor a dying controller leaves it behind; close()
 * stops it with proc_stop and removes the temporary folder.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness/util/cmdline.h"
#include "harness/util/cpio.h"
#include "harness/util/kconsole.h"
#include "harness/agent/scx.h"
#include "harness/agent/sysinfo.h"
#include "harness/targets/initramfs.h"
#include "harness/targets/pgfiles.h"
#include "harness/targets/qemu_vt.h"
#include "harness/util/proc.h"
#include "harness/agent/preempt_offer.h"
#include "harness/targets/batchio.h"
#include "harness/targets/target.h"

#define QEMU_CONSOLE_TAIL (64 * 1024)
/* where the guest keeps its own initramfs for kexec (initramfs_spec.carry) */
#define QEMU_CARRY "/boot/initrd.img"

/* the tools of a VM booted without a plan (schedlab sysinfo, tests); kexec
 * is added when the target switches by kexec */
static const char *const default_tools[] = { "cyclictest", "hackbench", "stress-ng", NULL };

/* -1 KVM does not work here, 0 not tried, 1 KVM works (per process) */
static int kvm_verdict;

/* a resolved qemu target object read once (qemu_conf_read, at open): the
 * code reads these fields, not the JSON; the strings are t->conf's */
struct qemu_conf {
	const char *kernel, *accel, *tcg_thread, *host_thp, *sw, *initramfs;
	int cpus, memory_mb, pvh, sealed;
	int virt;                  /* "clock": "virtual" */
	int icount_shift;          /* with virt */
	double timeout_s, kvm_probe_s;
	const json_t *ssh;         /* the "ssh" object or NULL */
};

static void qemu_conf_read(const json_t *conf, struct qemu_conf *c)
{
	c->kernel = param_str(conf, "kernel");
	c->accel = param_str(conf, "accel");
	c->tcg_thread = param_str(conf, "tcg_thread");
	c->host_thp = param_str(conf, "host_thp");
	c->sw = param_str(conf, "switch");
	c->initramfs = param_str(conf, "initramfs");
	c->cpus = (int)param_int(conf, "cpus");
	c->memory_mb = (int)param_int(conf, "memory_mb");
	c->pvh = param_bool(conf, "pvh");
	c->sealed = param_bool(conf, "sealed");
	c->virt = target_clock_virtual(conf);
	c->icount_shift = (int)param_int(conf, "icount_shift");
	c->timeout_s = param_num(conf, "timeout_s");
	c->kvm_probe_s = param_num(conf, "kvm_probe_s");
	c->ssh = json_object_get(conf, "ssh");
}

struct qemu_priv {
	struct qemu_conf c;        /* t->conf, read once */
	struct child qemu;
	int running;
	char tmpdir[88];            /* base (<= 60 chars) + /schedlab-qemu-XXXXXX */
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char console[128];
	char kernel[PATH_MAX];     /* image the VM runs (realpath) */
	char initrd[PATH_MAX];
	int initrd_hold;           /* initramfs_build's hold on initrd: no other
				      process prunes it while the target is open
				      (a KVM probe's VM and the TCG one after it
				      read it, and every new VM of the session) */
	char kexec_kernel[32];     /* the kernel for kexec in the guest (build_initrd) */
	char *cmdline;             /* the command line the running kernel booted with */
	json_t *si;                /* the sysinfo of the VM's last boot (runtime_vm) */
	char accel[16];
	char *qemu_bin;            /* the qemu this target runs (qemu_vt_binary) */
	int qemu_fallback;         /* a virtual clock on the system's qemu: the
				    * provided one is missing */
	struct agent_conn conn;
	int conn_open;
	struct strbuf qerr;        /* qemu's stderr (tail) */
	long kernel_from;          /* console offset where the running kernel's boot began */
	const char *batch;         /* sealed runs: the requests' path in the guest
				    * (build_initrd: the agent's --batch); NULL live */
	unsigned seq;              /* sealed runs: jobs started, names their files */
};

/* ------------------------------------------------------------------ */
/* plan object                                                          */

/*
 * "ssh": {"port": N, "authorized_keys": PATH, "host_key": PATH}: a guest
 * reachable by ssh (for tests of the ssh target and of lab setups). The
 * initramfs gets dropbear with its libraries, the kernel's e1000.ko,
 * /root/.ssh/authorized_keys and, when given, a dropbear host key (else
 * dropbear makes one at the first connection, a new one every boot); /init
 * loads e1000, configures eth0 for qemu's user-mode network (10.0.2.15) and
 * starts dropbear on port 22, which qemu forwards from 127.0.0.1:port.
 */
static const char *const ssh_keys[] = { "port", "authorized_keys", "host_key", NULL };

/* fixed /init lines for "ssh" (no plan value in here: paths are constants) */
static const char ssh_init[] =
	"insmod /lib/modules/e1000.ko 2>/dev/null\n"
	"ip link set lo up\n"
	"ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 &&\n"
	"\tip route add default via 10.0.2.2 ||\n"
	"\techo \"schedlab-init: eth0 is not up (no e1000 module?)\"\n"
	"mkdir -p /etc/dropbear /var/log /var/run\n"
	"if [ -f /etc/dropbear/dropbear_ed25519_host_key ]; then\n"
	"\tdropbear -s -r /etc/dropbear/dropbear_ed25519_host_key -p 22 &&\n"
	"\techo \"schedlab-init: dropbear up at $(cut -d' ' -f1 /proc/uptime) s\"\n"
	"else\n"
	"\tdropbear -s -R -p 22 &&\n"
	"\techo \"schedlab-init: dropbear up at $(cut -d' ' -f1 /proc/uptime) s\"\n"
	"fi";

/*
 * With "ssh" and "switch": "kexec" the guest stands in for a remote machine
 * whose initrd is a file: /boot/initrd.cpio, the carry archive of its own
 * /boot/initrd.img (a plain cpio holding that file, then the file), which
 * any kexec can use and which boots this same system again (the ssh
 * target's "initrd"; tests/e2e/t0700-ssh-qemu.sh).
 */
static const char ssh_carry_init[] =
	"\nif [ -f /boot/initrd.img ]; then\n"
	"\t(cd / && printf 'boot\\nboot/initrd.img\\n' | cpio -o -H newc 2>/dev/null &&\n"
	"\t\tcat boot/initrd.img) >/boot/initrd.cpio\n"
	"fi";

/*
 * A kernel spec is a folder with kernel.json (kernels/out/debian-...) or an
 * image file. image gets the bzImage's real path; when the folder has one,
 * vmlinux (if non-NULL) gets the uncompressed ELF kernel, config the config.
 */
static int resolve_kernel(const char *spec, char *image, size_t ilen, char *vmlinux,
			  char *config, size_t clen, char *release, size_t rlen, struct strbuf *err)
{
	struct stat st;
	char *img = NULL, *cfg = NULL, *vml = NULL;
	int rc = -1;

	if (vmlinux)
		vmlinux[0] = '\0';
	if (config)
		config[0] = '\0';
	if (release)
		release[0] = '\0';
	if (stat(spec, &st) < 0) {
		/* Debian's kernels have a make target each (kernels/Makefile) */
		strbuf_addf(err, "kernel %s: %s%s", spec, strerror(errno),
			    strstr(spec, "kernels/out/debian-rt")
				    ? " (run `make -C kernels debian-rt`)"
			    : strstr(spec, "kernels/out/debian") ? " (run `make -C kernels debian`)"
								 : "");
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		char *kj = xstrfmt("%s/kernel.json", spec);
		json_error_t jerr;
		json_t *j = json_load_file(kj, 0, &jerr);
		const char *im = j ? json_string_value(json_object_get(j, "image")) : NULL;
		const char *cf = j ? json_string_value(json_object_get(j, "config")) : NULL;
		const char *rel = j ? json_string_value(json_object_get(j, "release")) : NULL;
		const char *vl = j ? json_string_value(json_object_get(j, "vmlinux")) : NULL;
		if (!j && access(kj, F_OK) == 0) {
			strbuf_addf(err, "%s:%d:%d: %s", kj, jerr.line, jerr.column, jerr.text);
			free(kj);
			return -1;
		}
		img = xstrfmt("%s/%s", spec, im ? im : "vmlinuz");
		cfg = xstrfmt("%s/%s", spec, cf ? cf : "config");
		if (vl)
			vml = xstrfmt("%s/%s", spec, vl);
		if (rel && release)
			snprintf(release, rlen, "%s", rel);
		json_decref(j);
		free(kj);
	} else {
		img = xstrdup(spec);
	}
	if (!realpath(img, image) || strlen(image) >= ilen) {
		strbuf_addf(err, "kernel image %s: %s", img, strerror(errno ? errno : ENAMETOOLONG));
		goto out;
	}
	if (access(image, R_OK) < 0) {
		strbuf_addf(err, "kernel image %s: %s", image, strerror(errno));
		goto out;
	}
	if (config && cfg && access(cfg, R_OK) == 0)
		snprintf(config, clen, "%s", cfg);
	if (vmlinux && vml && (!realpath(vml, vmlinux) || access(vmlinux, R_OK) < 0))
		vmlinux[0] = '\0';
	rc = 0;
out:
	free(img);
	free(cfg);
	free(vml);
	return rc;
}

/*
 * "clock": "real" (default) or "virtual": the guest's clock counts the
 * instructions it executes (qemu -icount shift=N,sleep=off,align=off), each
 * 2^icount_shift ns, so what the guest measures does not depend on what the
 * host is doing (docs/virtual-time.md). It needs TCG in one thread (qemu's
 * icount does not run with KVM or multi-threaded TCG). cpus defaults to 1
 * there (check_numbers would make it 2); 2 to 8 need qemu >= 8.1 (7.2 hangs
 * a 2-vCPU guest in its CPU bring-up), which is asked of the qemu the
 * target will run (qemu_vt_binary: without a "qemu" key the one `make -C
 * kernels qemu` provides) before anything runs.
 */
#define ICOUNT_SHIFT_DEFAULT 2
static int check_vt_cpus(json_t *out, long long cpus, const char *prefix, struct strbuf *err)
{
	struct qemu_version ver;
	struct strbuf perr = STRBUF_INIT;
	int fallback, rc;
	char *bin;

	if (cpus <= 1)
		return 0;
	bin = qemu_vt_binary(out, &fallback);
	int known = cpus <= QEMU_VT_MAX_CPUS && qemu_version_probe(bin, &ver, &perr) == 0;
	rc = qemu_vt_admit(cpus, known ? &ver : NULL, perr.buf, bin, fallback, prefix, err);
	strbuf_release(&perr);
	free(bin);
	return rc;
}

/* what "clock": "virtual" asks of the other keys (types and bounds were
 * checked by qemu_options) */
static int check_clock(json_t *out, const char *prefix, struct strbuf *err)
{
	json_t *v;

	if (strcmp(json_string_value(json_object_get(out, "clock")), "virtual")) {
		if (json_object_get(out, "icount_shift")) {
			strbuf_addf(err, "%sicount_shift: only with \"clock\": \"virtual\"", prefix);
			return -1;
		}
		return 0;
	}
	if (!json_object_get(out, "icount_shift"))
		json_object_set_new(out, "icount_shift", json_integer(ICOUNT_SHIFT_DEFAULT));
	v = json_object_get(out, "accel");
	if (!strcmp(json_string_value(v), "kvm")) {
		strbuf_addf(err, "%saccel: \"kvm\" cannot run a virtual clock (qemu's icount "
				 "counts instructions only under TCG); use \"tcg\" or \"auto\"",
			    prefix);
		return -1;
	}
	if (!strcmp(json_string_value(v), "auto"))
		json_object_set_new(out, "accel", json_string("tcg"));
	if (!strcmp(param_str(out, "tcg_thread"), "multi")) {
		strbuf_addf(err, "%stcg_thread: \"multi\" cannot run a virtual clock (qemu's "
				 "icount needs every vCPU in one thread); use \"single\"",
			    prefix);
		return -1;
	}
	v = json_object_get(out, "cpus");
	if (!v)
		json_object_set_new(out, "cpus", json_integer(1));
	else if (check_vt_cpus(out, json_integer_value(v), prefix, err))
		return -1;
	return 0;
}

/*
 * "topology": {"sockets", "dies", "cores", "threads"}: the guest's CPUs as
 * qemu's -smp lays them out (qemu_topology_check has the rule; which layout
 * gives the guest which sched domains: docs/virtual-time.md, "Topology").
 * Checked before "clock" so that a cpus the topology implies is there when
 * the virtual clock's admission asks for it; the object is stored with
 * every level filled in.
 */
static int check_topology(json_t *out, const char *prefix, struct strbuf *err)
{
	json_t *topo = json_object_get(out, "topology"), *c = json_object_get(out, "cpus");
	struct qemu_version ver;
	struct qemu_topology t;
	struct strbuf perr = STRBUF_INIT;
	int known = 0, rc;
	long long cpus;

	if (!topo)
		return 0;
	if (c && (!json_is_integer(c) || json_integer_value(c) < 1))
		return 0; /* check_numbers says what cpus must be */
	cpus = c ? json_integer_value(c) : 0;
	if (qemu_topology_wants_dies(topo)) {
		char *bin = qemu_vt_binary(out, NULL);
		known = qemu_version_probe(bin, &ver, &perr) == 0;
		free(bin);
	}
	json_t *accel = json_object_get(out, "accel");
	int tcg = json_is_string(accel) && !strcmp(json_string_value(accel), "tcg");
	rc = qemu_topology_check(topo, &cpus, target_clock_virtual(out), tcg, known ? &ver : NULL,
				 perr.buf, prefix, err, &t);
	strbuf_release(&perr);
	if (rc)
		return -1;
	json_object_set_new(out, "cpus", json_integer(cpus));
	json_object_set_new(out, "topology",
			    json_pack("{s:I,s:I,s:I,s:I}", "sockets", (json_int_t)t.sockets, "dies",
				      (json_int_t)t.dies, "cores", (json_int_t)t.cores, "threads",
				      (json_int_t)t.threads));
	return 0;
}

/*
 * "sealed": true: every run of a boot goes into the guest with it (its
 * initramfs), the guest runs them with no input from the host, writes each
 * reply to its console (a file) and powers off; the host reads them after
 * (docs/virtual-time.md, "Sealed runs"). Default false.
 */
static int check_sealed(json_t *out, const char *prefix, struct strbuf *err)
{
	if (param_bool(out, "sealed") && json_object_get(out, "ssh")) {
		strbuf_addf(err, "%ssealed: a sealed guest takes no input from the host; drop "
				 "\"ssh\" or \"sealed\"", prefix);
		return -1;
	}
	return 0;
}

static int qemu_sealed(const json_t *conf)
{
	return json_is_true(json_object_get(conf, "sealed"));
}

/* cpus: 2 unless a virtual clock made it 1 */
static void default_cpus(json_t *out)
{
	if (!json_object_get(out, "cpus"))
		json_object_set_new(out, "cpus", json_integer(2));
}

/* the kernel (a folder or an image) resolves */
static int check_kernel(json_t *out, const char *prefix, struct strbuf *err)
{
	char image[PATH_MAX];
	if (resolve_kernel(param_str(out, "kernel"), image, sizeof(image), NULL, NULL, 0, NULL, 0,
			   err) < 0) {
		struct strbuf m = STRBUF_INIT;
		strbuf_addf(&m, "%skernel: %s", prefix, err->buf);
		strbuf_reset(err);
		strbuf_addstr(err, m.buf);
		strbuf_release(&m);
		return -1;
	}
	return 0;
}

static json_t *append_value(json_t *v, const char *path, struct strbuf *err)
{
	if (!json_is_string(v) || strchr(json_string_value(v), '\n')) {
		strbuf_addf(err, "%s: must be a one-line string of kernel parameters", path);
		return NULL;
	}
	return json_incref(v);
}

/* "ssh": {"port", "authorized_keys", "host_key"} when present */
static int check_ssh(json_t *out, const char *prefix, struct strbuf *err)
{
	json_t *v = json_object_get(out, "ssh"), *e;
	const char *key;
	if (!v)
		return 0;
	if (!json_is_object(v)) {
		strbuf_addf(err, "%sssh: must be an object {\"port\": N, "
				 "\"authorized_keys\": PATH, \"host_key\": PATH}", prefix);
		return -1;
	}
	json_object_foreach(v, key, e) {
		int ok = 0;
		for (size_t i = 0; ssh_keys[i]; i++)
			ok |= !strcmp(key, ssh_keys[i]);
		if (!ok) {
			strbuf_addf(err, "%sssh: unknown key \"%s\" (valid: port, "
					 "authorized_keys, host_key)", prefix, key);
			return -1;
		}
	}
	e = json_object_get(v, "port");
	if (!json_is_integer(e) || json_integer_value(e) < 1 || json_integer_value(e) > 65535) {
		strbuf_addf(err, "%sssh.port: must be an integer in 1..65535 (the "
				 "port on 127.0.0.1 forwarded to the guest's port 22)", prefix);
		return -1;
	}
	e = json_object_get(v, "authorized_keys");
	if (!json_is_string(e) || access(json_string_value(e), R_OK) < 0) {
		strbuf_addf(err, "%sssh.authorized_keys: must be a readable file of "
				 "public keys%s%s", prefix, json_is_string(e) ? ": " : "",
			    json_is_string(e) ? strerror(errno) : "");
		return -1;
	}
	e = json_object_get(v, "host_key");
	if (e && (!json_is_string(e) || access(json_string_value(e), R_OK) < 0)) {
		strbuf_addf(err, "%sssh.host_key: must be a readable dropbear host "
				 "key (dropbearkey -t ed25519 -f FILE)", prefix);
		return -1;
	}
	return 0;
}

/* "tools": the programs copied into the guest; absent: those the plan's
 * workloads run (guest_tools) */
static json_t *tools_value(json_t *v, const char *path, struct strbuf *err)
{
	size_t i;
	json_t *e;
	if (!json_is_array(v))
		goto bad_tools;
	json_array_foreach(v, i, e)
		if (!json_is_string(e) || !*json_string_value(e))
			goto bad_tools;
	return json_incref(v);
bad_tools:
	strbuf_addf(err, "%s: must be an array of program names or paths", path);
	return NULL;
}

static const char *const clocks[] = { "real", "virtual", NULL };
static const char *const accels[] = { "auto", "kvm", "tcg", NULL };
static const char *const switches[] = { "auto", "boot", "reboot", "kexec", "runtime", NULL };
static const char *const packs[] = { "auto", "lz4", "plain", NULL };
static const char *const threads[] = { "single", "multi", NULL };
static const char *const thps[] = { "auto", "on", "off", NULL };

/* the keys of a qemu target, one line each: qemu_check resolves the object
 * with them first (types, bounds, defaults), then checks what joins keys
 * (the clock's, ssh with sealed) and what the host must have (the kernel,
 * ssh's files, the qemu's version); docs/qemu.md's table is written from it */
static const struct param_spec qemu_options[] = {
	{ "kernel", PT_STR, "\"kernels/out/debian\"", .kind = "path",
	  .help = "a kernel folder with `kernel.json` (image, optional vmlinux and config) or an "
		  "image path; checked at plan time" },
	{ "cpus", PT_INT, NULL, 1, 256, .def_doc = "2; 1 with `\"clock\": \"virtual\"`",
	  .help = "`-smp`" },
	{ "memory_mb", PT_INT, "1024", 256, 1 << 20,
	  .help = "`-m` (the initramfs lives in RAM; with kexec its archive too, and once more "
		  "while kexec loads it: kexec with Debian's kernel needs about 384, as it did "
		  "with the self-archive before)" },
	{ "accel", PT_ENUM, "\"auto\"", .choices = accels,
	  .help = "`auto`: KVM when `/dev/kvm` opens and the kernel prints within `kvm_probe_s`, "
		  "else TCG (TCG with a virtual clock); `kvm`, `tcg` force one" },
	{ "tcg_thread", PT_ENUM, "\"single\"", .choices = threads,
	  .help = "under TCG, `single` runs every vCPU in one host thread (`-accel "
		  "tcg,thread=single`), `multi` gives each its own (qemu's default); see TCG threads" },
	{ "host_thp", PT_ENUM, "\"auto\"", .choices = thps,
	  .help = "whether the guest's RAM may sit in transparent huge pages of the host: `auto` "
		  "is `off` under TCG and `on` under KVM; `off` starts qemu with "
		  "`prctl(PR_SET_THP_DISABLE)`; see Host memory" },
	{ "kvm_probe_s", PT_REAL, "4.0", 0.5, 120,
	  .help = "how long a KVM boot may stay silent before `auto` drops KVM (seconds)" },
	{ "timeout_s", PT_REAL, "180.0", 5, 3600,
	  .help = "seconds from qemu's start (or the kexec request) to the agent's banner" },
	{ "switch", PT_ENUM, "\"auto\"", .choices = switches,
	  .help = "`runtime`: boots after the first one write the preempt mode in the running "
		  "guest (see Runtime switching); every boot configuration may differ only in its "
		  "preempt mode, else the plan is refused at preflight. `auto`: the same when only "
		  "the preempt mode changes and the running kernel can switch it, else a new VM. "
		  "`kexec`: boots after the first one kexec inside the running guest when the "
		  "kernel is the same. `boot`, `reboot`: every boot is a new VM" },
	{ "pvh", PT_BOOL, "true",
	  .help = "boot the folder's ELF `vmlinux` through PVH (no decompressor) when there is "
		  "one; with `switch: kexec` the guest kexecs that vmlinux too" },
	{ "append", PT_JSON, "\"\"", .kind = "string", .value = append_value,
	  .help = "kernel parameters added to every boot (one line)" },
	{ "tools", PT_JSON, .kind = "array of strings", .value = tools_value,
	  .def_doc = "what the plan's workloads run",
	  .help = "host programs copied into the guest with their libraries; a missing one is an "
		  "error that names it. Absent: the `tool` of every workload and background load "
		  "of the plan (`plan_tools`; the native `sl-*` ones come from next to the agent), "
		  "plus `kexec` with `switch: kexec`; without a plan (`schedlab sysinfo`) "
		  "cyclictest, hackbench, stress-ng" },
	{ "initramfs", PT_ENUM, "\"auto\"", .choices = packs,
	  .help = "`lz4`: the archive compressed with LZ4; `plain`: uncompressed; `auto`: LZ4 when "
		  "the kernel's config has `CONFIG_RD_LZ4=y` (Debian's has, the minimal variants "
		  "only gzip), else plain" },
	{ "qemu", PT_STR, .kind = "path",
	  .def_doc = "`qemu-system-x86_64`; with `\"clock\": \"virtual\"` the one `make -C "
		     "kernels qemu` provides (`~/.cache/schedlab/qemu-vt/qemu-system-x86_64`) "
		     "when it is there",
	  .help = "the qemu binary; its version (`-version`) is stored with every boot "
		  "(`qemu_version`) and in the boot's sysinfo (field `qemu`, with the binary, and a "
		  "note when a virtual clock ran the system's qemu because the provided one is "
		  "missing)" },
	{ "clock", PT_ENUM, "\"real\"", .choices = clocks,
	  .help = "`virtual`: the guest's clock counts the instructions it executes (`-icount "
		  "shift=N,sleep=off,align=off`), so what it measures does not depend on the "
		  "host's load; TCG only (refused with `\"accel\": \"kvm\"` and `\"tcg_thread\": "
		  "\"multi\"`), `cpus` defaults to 1; 2 to 8 need qemu >= 8.1 (the qemu that will "
		  "run is asked for its version before anything runs; an older one is refused "
		  "naming it and `make -C kernels qemu`; docs/virtual-time.md, \"More than one "
		  "vCPU\"). Recorded per boot (`clock`, `clock_shift` in `results`)" },
	{ "icount_shift", PT_INT, NULL, 0, 10, .def_doc = "2 with `\"clock\": \"virtual\"`",
	  .help = "with `\"clock\": \"virtual\"` only: every instruction takes 2^N ns of the "
		  "guest's time (0: a 1 GHz virtual CPU, 2: 250 MHz); the default is chosen from "
		  "measurement in docs/virtual-time.md, \"The speed\"" },
	{ "sealed", PT_BOOL, "false",
	  .help = "true: each boot a fresh guest that gets its runs with its initramfs and no "
		  "input from the host, replies on its console (a file), powers off; stored through "
		  "the batch path afterwards (docs/virtual-time.md, \"Sealed runs\"); not with `ssh`" },
	{ "topology", PT_JSON, .kind = "object",
	  .help = "`{\"sockets\", \"dies\", \"cores\", \"threads\"}`, each an integer >= 1: "
		  "qemu's `-smp` layout; their product is `cpus` (or gives it); under TCG only "
		  "`sockets` gives the guest two LLCs, `threads` > 1 is refused (docs/virtual-time.md, "
		  "\"Topology\")" },
	{ "ssh", PT_JSON, .kind = "object",
	  .help = "`{\"port\": N, \"authorized_keys\": PATH, \"host_key\": PATH}`: a guest "
		  "reachable by ssh on 127.0.0.1:port, for tests of the ssh target (docs/ssh.md); not "
		  "with `sealed`" },
	PARAM_END,
};

static json_t *qemu_check(const json_t *conf, const char *path, struct strbuf *err)
{
	const char *where = path ? path : "target";
	json_t *out = target_conf_resolve(&qemu_target, conf, where, err);
	char *prefix = xstrfmt("%s.", where);
	int bad = !out || check_topology(out, prefix, err) || check_clock(out, prefix, err) ||
		  check_kernel(out, prefix, err) ||
		  check_ssh(out, prefix, err) || check_sealed(out, prefix, err);
	free(prefix);
	if (bad) {
		json_decref(out);
		return NULL;
	}
	default_cpus(out);
	return out;
}

static int qemu_feasible(struct target *t, const struct boot_spec *b, const json_t *sysinfo,
			 struct strbuf *why)
{
	char image[PATH_MAX], config[PATH_MAX], release[256];
	struct strbuf cfg = STRBUF_INIT, e = STRBUF_INIT;
	const char *kernel = b->kernel ? b->kernel
				       : json_string_value(json_object_get(t->conf, "kernel"));
	int rc = 0;

	if (!kernel)
		kernel = "kernels/out/debian";
	if (resolve_kernel(kernel, image, sizeof(image), NULL, config, sizeof(config), release,
			   sizeof(release), why))
		return 0;
	if (!b->preempt)
		return 1;
	if (!target_preempt_known(b->preempt)) {
		strbuf_addf(why, "unknown preempt mode \"%s\"", b->preempt);
		return 0;
	}
	rc = 1;
	/* what the kernel offers, from its config when we have it (the plan
	   checked it already: this is the same rule, for --target and resume) */
	struct preempt_offer o;
	int known = config[0] ? preempt_offer_of_file(config, release[0] ? release : NULL, &o, &e)
			      : 0;
	if (known < 0) {
		/* a config that is no config (a FIFO: never waited on) */
		strbuf_addf(why, "kernel %s: %s", kernel, e.buf);
		rc = 0;
	} else if (known == 1 && !preempt_offer_has(&o, b->preempt)) {
		struct strbuf d = STRBUF_INIT;
		preempt_offer_describe(&o, &d);
		strbuf_addf(why, "kernel %s does not offer preempt=%s: it offers %s (%s)", kernel,
			    b->preempt, d.buf, config);
		strbuf_release(&d);
		rc = 0;
	}
	strbuf_release(&cfg);
	strbuf_release(&e);
	return rc;
}

/* ------------------------------------------------------------------ */
/* helpers                                                              */

/* qemu option values: a comma is written twice */
static char *qemu_escape(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	for (; *s; s++) {
		if (*s == ',')
			strbuf_addch(&sb, ',');
		strbuf_addch(&sb, *s);
	}
	return strbuf_detach(&sb, NULL);
}

static void drain_qemu_stderr(struct qemu_priv *p)
{
	target_drain_tail(p->qemu.err_fd, &p->qerr, 8192);
}

/* qemu's stderr is at EOF: the process is gone (or going) */
static int qemu_gone(struct qemu_priv *p)
{
	struct pollfd pf = { p->qemu.err_fd, POLLIN, 0 };
	char buf[4096];
	ssize_t n;

	if (p->qemu.err_fd < 0)
		return 1;
	while (poll(&pf, 1, 0) > 0) {
		n = read(p->qemu.err_fd, buf, sizeof(buf));
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return 1;
		if (n < 0)
			return 0;
		strbuf_add(&p->qerr, buf, (size_t)n);
		strbuf_tail(&p->qerr, 8192);
	}
	return 0;
}

static long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) < 0 ? 0 : (long)st.st_size;
}

/* console.log from byte `from`, last `max` bytes */
static void read_console(const char *path, long from, size_t max, struct strbuf *out)
{
	struct strbuf sb = STRBUF_INIT;
	if (!strbuf_read_file(&sb, path, 0) && (size_t)from <= sb.len) {
		strbuf_add(out, sb.buf + from, sb.len - (size_t)from);
		strbuf_tail(out, max);
	}
	strbuf_release(&sb);
}

/* the console since `from`, for error messages: its first kernel report (a
 * lockup, a stall, an oops) when the last lines no longer show it, and its
 * last 40 lines (harness/util/kconsole.h) */
static void add_console_tail(struct qemu_priv *p, long from, struct strbuf *err)
{
	struct strbuf sb = STRBUF_INIT;

	read_console(p->console, from, 256 * 1024, &sb);
	if (sb.len) {
		strbuf_addf(err, "\n--- console (%s) ---\n", p->console);
		kconsole_excerpt(sb.buf, sb.len, 40, 30, err);
	} else {
		strbuf_addstr(err, "\n--- console: empty (the kernel printed nothing) ---");
	}
	strbuf_release(&sb);
	drain_qemu_stderr(p);
	if (p->qerr.len) {
		strbuf_trim(&p->qerr);
		strbuf_addf(err, "\n--- qemu stderr ---\n%s", p->qerr.buf);
	}
}

static int console_has(const char *path, long from, const char *needle)
{
	struct strbuf sb = STRBUF_INIT;
	int r;
	read_console(path, from, 1 << 20, &sb);
	r = strstr(sb.buf, needle) != NULL;
	strbuf_release(&sb);
	return r;
}

static void rm_tmpdir(struct qemu_priv *p)
{
	if (!p->tmpdir[0])
		return;
	unlink(p->sock);
	unlink(p->console);
	rmdir(p->tmpdir);
	p->tmpdir[0] = '\0';
}

static void vm_stop(struct qemu_priv *p)
{
	if (p->conn_open) {
		agent_conn_release(&p->conn);
		p->conn_open = 0;
	}
	if (p->running) {
		proc_stop(&p->qemu, 3.0);
		drain_qemu_stderr(p);
		proc_close_fds(&p->qemu);
		p->running = 0;
	}
}

static int make_tmpdir(struct qemu_priv *p, struct strbuf *err)
{
	const char *base = getenv("TMPDIR");
	/* the socket path must fit sockaddr_un.sun_path */
	if (!base || !*base || strlen(base) > 60)
		base = "/tmp";
	snprintf(p->tmpdir, sizeof(p->tmpdir), "%s/schedlab-qemu-XXXXXX", base);
	if (!mkdtemp(p->tmpdir)) {
		strbuf_addf(err, "qemu: mkdtemp %s: %s", p->tmpdir, strerror(errno));
		p->tmpdir[0] = '\0';
		return -1;
	}
	snprintf(p->sock, sizeof(p->sock), "%s/agent.sock", p->tmpdir);
	snprintf(p->console, sizeof(p->console), "%s/console.log", p->tmpdir);
	return 0;
}

/* name is listed in the NULL-terminated v */
static int listed(const char *const *v, const char *name)
{
	for (; v && *v; v++)
		if (!strcmp(*v, name))
			return 1;
	return 0;
}

/* what goes into the guest: see target.h */
void qemu_guest_tools(const json_t *conf, const char *const *plan_tools, struct strvec *hosts,
		      struct strvec *natives, int *all_natives)
{
	json_t *tools = json_object_get(conf, "tools"), *e;
	const char *sw = json_string_value(json_object_get(conf, "switch"));
	size_t i;

	*all_natives = 0;
	if (tools) {
		*all_natives = 1;
		json_array_foreach(tools, i, e)
			strvec_push(hosts, json_string_value(e));
	} else if (plan_tools) {
		for (const char *const *v = plan_tools; *v; v++)
			strvec_push(strncmp(*v, "sl-", 3) ? hosts : natives, *v);
	} else {
		*all_natives = 1;
		for (i = 0; default_tools[i]; i++)
			strvec_push(hosts, default_tools[i]);
	}
	if (sw && !strcmp(sw, "kexec") && !listed((const char *const *)hosts->v, "kexec"))
		strvec_push(hosts, "kexec");
}

/* the binaries for the initramfs: the agent, the sl-* next to it that the
 * plan runs, the host tools (guest_tools) */
static int collect_binaries(struct target *t, struct strvec *bins, struct strbuf *err)
{
	const char *agent = target_agent_binary(t);
	struct strvec hosts = STRVEC_INIT, natives = STRVEC_INIT;
	char *dir, *slash, *pat;
	int all_natives, rc = -1;
	glob_t g;
	size_t i;

	if (!agent || access(agent, X_OK) < 0) {
		strbuf_addf(err, "qemu: the agent binary %s is missing (run `make`)",
			    agent ? agent : "bin/schedlab-agent");
		return -1;
	}
	qemu_guest_tools(t->conf, t->tools, &hosts, &natives, &all_natives);
	strvec_push(bins, agent);
	dir = xstrdup(agent);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	pat = xstrfmt("%s/sl-*", slash ? dir : ".");
	if (glob(pat, 0, NULL, &g) == 0) {
		for (i = 0; i < g.gl_pathc; i++) {
			const char *base = strrchr(g.gl_pathv[i], '/');
			base = base ? base + 1 : g.gl_pathv[i];
			if (access(g.gl_pathv[i], X_OK) == 0 &&
			    (all_natives || listed((const char *const *)natives.v, base)))
				strvec_push(bins, g.gl_pathv[i]);
		}
		globfree(&g);
	}
	free(pat);
	free(dir);
	for (i = 0; i < hosts.nr; i++) {
		const char *name = hosts.v[i];
		char *found = strchr(name, '/') ? xstrdup(name) : proc_which(name);
		if (!found || access(found, X_OK) < 0) {
			strbuf_addf(err, "qemu: %s is needed in the guest but not found on this "
					 "host (Debian: rt-tests, stress-ng, kexec-tools)", name);
			free(found);
			goto out;
		}
		strvec_push(bins, found);
		free(found);
	}
	rc = 0;
out:
	strvec_clear(&hosts);
	strvec_clear(&natives);
	return rc;
}

/* for the lava target: the same kernel resolution and guest binaries */
int qemu_kernel_image(const char *spec, char *image, size_t ilen, char *config, size_t clen,
		      char *release, size_t rlen, struct strbuf *err)
{
	return resolve_kernel(spec, image, ilen, NULL, config, clen, release, rlen, err);
}

int qemu_guest_binaries(struct target *t, struct strvec *bins, struct strbuf *err)
{
	return collect_binaries(t, bins, err);
}

static void build_cmdline(struct target *t, const struct boot_spec *b, struct strbuf *cl)
{
	strbuf_addstr(cl, "console=ttyS0 panic=-1");
	/* a virtual clock: the same address-space layout for every program
	 * (no ASLR), so that a run's instructions do not depend on where its
	 * random draws put its stack and mappings (docs/virtual-time.md) */
	if (((const struct qemu_priv *)t->priv)->c.virt)
		strbuf_addstr(cl, " norandmaps");
	else
		/* the real clock: a host too busy to run the guest for the
		 * few jiffies of the kernel's IO-APIC timer check panics it
		 * at boot ("IO-APIC + timer doesn't work!", seen under TCG
		 * at host load 20 on 2 CPUs); the check proves nothing about
		 * an emulated APIC. A virtual clock never starves (its time
		 * counts instructions), and its command line stays as its
		 * stored series were measured. */
		strbuf_addstr(cl, " no_timer_check");
	target_boot_params(t, b, cl);
}

/* ------------------------------------------------------------------ */
/* starting a VM                                                        */

static int connect_agent_socket(struct qemu_priv *p, double timeout_s, struct strbuf *err)
{
	struct sockaddr_un sa;
	double end = now_mono() + timeout_s;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", p->sock);
	for (;;) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			strbuf_addf(err, "qemu: socket: %s", strerror(errno));
			return -1;
		}
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		close(fd);
		if (qemu_gone(p)) {
			strbuf_addstr(err, "qemu exited before it opened the agent's serial port");
			return -1;
		}
		if (now_mono() > end) {
			strbuf_addf(err, "qemu: cannot connect to %s: %s", p->sock, strerror(errno));
			return -1;
		}
		usleep(20000);
	}
}

/* -smp's value: "N", or with a "topology" "cpus=N,sockets=S,cores=C,threads=T"
 * (",dies=D" when more than one: qemu < 4.1 knows no dies) */
static void smp_arg(struct strvec *av, const json_t *conf)
{
	json_t *topo = json_object_get(conf, "topology");
	long long cpus = json_integer_value(json_object_get(conf, "cpus"));
	long long dies = json_integer_value(json_object_get(topo, "dies"));
	if (!topo) {
		strvec_pushf(av, "%lld", cpus);
		return;
	}
	if (dies > 1)
		strvec_pushf(av, "cpus=%lld,sockets=%lld,dies=%lld,cores=%lld,threads=%lld", cpus,
			     (long long)json_integer_value(json_object_get(topo, "sockets")), dies,
			     (long long)json_integer_value(json_object_get(topo, "cores")),
			     (long long)json_integer_value(json_object_get(topo, "threads")));
	else
		strvec_pushf(av, "cpus=%lld,sockets=%lld,cores=%lld,threads=%lld", cpus,
			     (long long)json_integer_value(json_object_get(topo, "sockets")),
			     (long long)json_integer_value(json_object_get(topo, "cores")),
			     (long long)json_integer_value(json_object_get(topo, "threads")));
}

static int vm_start(struct target *t, struct qemu_priv *p, const char *image,
		    const char *cmdline, const char *accel, struct strbuf *err)
{
	/* sealed runs: the console is the only channel, out of the guest */
	int sealed = p->batch != NULL;
	const char *qemu = p->qemu_bin;
	struct strvec av = STRVEC_INIT;
	char *e1, *e2;
	int fd, rc = -1;

	strbuf_reset(&p->qerr);
	unlink(p->console);
	unlink(p->sock);
	strvec_push(&av, qemu);
	strvec_pushv(&av, (const char *const[]){ "-nodefaults", "-no-user-config", "-display",
						 "none", "-no-reboot", NULL });
	strvec_push(&av, "-accel");
	/* TCG runs every vCPU in one thread unless the plan asks for one thread
	 * each: qemu 7.2's multi-threaded TCG now and then keeps executing a
	 * stale translation of code the guest has just patched (a static key
	 * or call flipped by a runtime preempt switch or a schedstat toggle),
	 * and the guest hangs for good on an int3 that is no longer in memory
	 * (docs/qemu.md, "TCG threads") */
	if (!strcmp(accel, "tcg"))
		strvec_pushf(&av, "tcg,thread=%s",
			     p->c.tcg_thread);
	else
		strvec_push(&av, accel);
	if (p->c.virt) {
		/* sleep=off: an idle guest's clock jumps to its next timer at
		 * once instead of waiting for the host's; align=off: never slowed
		 * to the host's pace. Both keep host time out of the guest's. */
		strvec_push(&av, "-icount");
		strvec_pushf(&av, "shift=%lld,sleep=off,align=off",
			     (long long)p->c.icount_shift);
		/* the guest's wall clock starts at a fixed date and runs with
		 * the virtual clock: its boot time, which the kernel mixes into
		 * its random pool, is the same at every boot */
		strvec_push(&av, "-rtc");
		strvec_push(&av, "base=2026-01-01T00:00:00,clock=vm");
	}
	if (!strcmp(accel, "kvm")) {
		strvec_push(&av, "-cpu");
		strvec_push(&av, "host");
	}
	strvec_push(&av, "-smp");
	smp_arg(&av, t->conf);
	strvec_push(&av, "-m");
	strvec_pushf(&av, "%lld",
		     (long long)p->c.memory_mb);
	strvec_push(&av, "-kernel");
	strvec_push(&av, image);
	strvec_push(&av, "-initrd");
	strvec_push(&av, p->initrd);
	strvec_push(&av, "-append");
	strvec_push(&av, cmdline);
	e1 = qemu_escape(p->console);
	e2 = qemu_escape(p->sock);
	strvec_push(&av, "-serial");
	strvec_pushf(&av, "file:%s", e1);
	if (!sealed) {
		strvec_push(&av, "-chardev");
		strvec_pushf(&av, "socket,id=agent,path=%s,server=on,wait=off", e2);
		strvec_push(&av, "-serial");
		strvec_push(&av, "chardev:agent");
	}
	free(e1);
	free(e2);
	if (p->c.ssh) {
		/* user-mode network; only 127.0.0.1 is forwarded to the guest's sshd */
		json_t *port = json_object_get(p->c.ssh, "port");
		strvec_push(&av, "-netdev");
		strvec_pushf(&av, "user,id=n0,hostfwd=tcp:127.0.0.1:%lld-:22",
			     (long long)json_integer_value(port));
		strvec_push(&av, "-device");
		strvec_push(&av, "e1000,netdev=n0");
	}

	p->qemu = (struct child)CHILD_INIT;
	p->qemu.argv = strvec_argv(&av);
	p->qemu.in = PROC_NULL;
	p->qemu.out = PROC_NULL;
	p->qemu.err = PROC_PIPE;
	p->qemu.new_pgrp = 1;
	p->qemu.pdeathsig = SIGKILL;
	/* the guest's RAM in small host pages under TCG ("host_thp": "auto"):
	 * a transparent huge page is a fresh 2 MB block the host must find (and
	 * may compact) and clear on the guest's first touch, where small pages
	 * come from memory the host has just freed; here that made the first
	 * `kexec -l` of a 70 MB kernel and initrd in a guest take 1.3-1.5 s
	 * instead of 0.3 s. Under KVM they stay: there the host's page tables
	 * (EPT) map the guest, and huge pages spare it TLB misses. */
	{
		const char *thp = p->c.host_thp;
		p->qemu.no_thp = !strcmp(thp, "off") || (!strcmp(thp, "auto") && !strcmp(accel, "tcg"));
	}
	if (proc_start(&p->qemu, err) < 0)
		goto out;
	p->running = 1;
	fcntl(p->qemu.err_fd, F_SETFL, fcntl(p->qemu.err_fd, F_GETFL) | O_NONBLOCK);
	snprintf(p->accel, sizeof(p->accel), "%s", accel);
	if (sealed) {
		rc = 0;
		goto out;
	}
	fd = connect_agent_socket(p, 30, err);
	if (fd < 0) {
		add_console_tail(p, 0, err);
		vm_stop(p);
		goto out;
	}
	agent_conn_init(&p->conn, fd, fd);
	p->conn.abort_flag = t->abort_flag;
	p->conn_open = 1;
	rc = 0;
out:
	strvec_clear(&av);
	return rc;
}

/* wait for the agent's banner; for a KVM probe give up early when the kernel
   printed nothing. Returns 0, -1 error, 1 KVM probe failed (VM stopped) */
static int vm_wait_agent(struct target *t, struct qemu_priv *p, int kvm_probe,
			 struct strbuf *err)
{
	double timeout = p->c.timeout_s;
	double probe = p->c.kvm_probe_s;
	double start = now_mono();
	struct strbuf e = STRBUF_INIT;

	if (kvm_probe) {
		if (!agent_wait_banner(&p->conn, probe, &e))
			goto ok;
		if (t->abort_flag && *t->abort_flag)
			goto fail;
		/* no kernel output at all (a hang, or qemu could not use KVM) */
		if (!console_has(p->console, 0, "Linux version")) {
			vm_stop(p);
			strbuf_release(&e);
			return 1;
		}
		if (strstr(e.buf, "connection closed"))
			goto fail;
		strbuf_reset(&e);
	}
	if (agent_wait_banner(&p->conn, timeout - (now_mono() - start), &e))
		goto fail;
ok:
	strbuf_release(&e);
	return 0;
fail:
	strbuf_addf(err, "qemu (%s): %s after %.1f s", p->accel, e.buf, now_mono() - start);
	add_console_tail(p, 0, err);
	strbuf_release(&e);
	vm_stop(p);
	return -1;
}

static int kvm_usable(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* "ssh": dropbear, e1000.ko from the kernel's modules, the keys (see ssh_init) */
static int add_ssh_files(struct target *t, const char *image, struct strvec *bins,
			 struct initramfs_file *files, size_t *nr, char **ko, struct strbuf *err)
{
	const json_t *ssh = ((const struct qemu_priv *)t->priv)->c.ssh;
	const char *hk = json_string_value(json_object_get(ssh, "host_key"));
	char *dropbear = proc_which("dropbear");
	char *dir = xstrdup(image), *slash = strrchr(dir, '/');
	glob_t g;

	if (!dropbear) {
		strbuf_addstr(err, "qemu: target.ssh needs dropbear on this host (Debian: "
				   "dropbear-bin)");
		free(dir);
		return -1;
	}
	strvec_push(bins, dropbear);
	free(dropbear);
	if (slash)
		*slash = '\0';
	/* the kernel folder's modules tree (kernels/out/debian-*: lib/modules/<release>) */
	char *pat = xstrfmt("%s/lib/modules/*/kernel/drivers/net/ethernet/intel/e1000/e1000.ko",
			    slash ? dir : ".");
	free(dir);
	if (glob(pat, 0, NULL, &g) != 0 || g.gl_pathc < 1) {
		strbuf_addf(err, "qemu: target.ssh needs the kernel's e1000 module (%s); import "
				 "the kernel with its modules (`make -C kernels debian`)", pat);
		free(pat);
		return -1;
	}
	*ko = xstrdup(g.gl_pathv[0]);
	globfree(&g);
	free(pat);
	files[(*nr)++] = (struct initramfs_file){ *ko, "/lib/modules/e1000.ko", 0644, 0 };
	files[(*nr)++] = (struct initramfs_file){
		json_string_value(json_object_get(ssh, "authorized_keys")),
		"/root/.ssh/authorized_keys", 0600, 0 };
	if (hk)
		files[(*nr)++] = (struct initramfs_file){
			hk, "/etc/dropbear/dropbear_ed25519_host_key", 0600, 0 };
	return 0;
}

/* 1 when the kernel config file has "CONFIG_<opt>=y", 0 when not, -1 unknown */
static int config_has(const char *config, const char *opt)
{
	struct strbuf cfg = STRBUF_INIT;
	char *needle = xstrfmt("\nCONFIG_%s=y\n", opt);
	int r = -1;
	if (config && *config && !strbuf_read_file(&cfg, config, 4 << 20))
		r = strstr(cfg.buf, needle) != NULL;
	free(needle);
	strbuf_release(&cfg);
	return r;
}

/*
 * The kernel's sched_ext schedulers (kernels/build-scx.sh: scx/ beside its
 * config, with their libraries and loader in scx/lib/), each at
 * SCX_DIR/<name> in the guest where the agent starts them (scx.h).
 * Nothing when the kernel has none built.
 */
static int add_scx_files(const char *config, struct pg_files *sf, struct strbuf *err)
{
	if (!config || !*config)
		return 0;
	char *dir = xstrdup(config);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	char *list = xstrfmt("%s/scx/schedulers", slash ? dir : ".");
	struct strbuf names = STRBUF_INIT;
	int rc = 0;
	if (strbuf_read_file(&names, list, 1 << 16) == 0) {
		for (char *n = strtok(names.buf, "\n"); n; n = strtok(NULL, "\n")) {
			if (!scx_name_ok(n)) {
				strbuf_addf(err, "qemu: %s: '%.80s' is no scheduler's name", list, n);
				rc = -1;
				break;
			}
			strvec_pushf(&sf->paths, "%s/scx/%s", dir, n);
			strvec_pushf(&sf->dsts, "%s/%s", SCX_DIR, n);
		}
		char *libdir = xstrfmt("%s/scx/lib", dir);
		DIR *d = rc ? NULL : opendir(libdir);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			strvec_pushf(&sf->paths, "%s/%s", libdir, de->d_name);
			strvec_pushf(&sf->dsts, "%s/lib/%s", SCX_DIR, de->d_name);
		}
		if (d)
			closedir(d);
		free(libdir);
	}
	strbuf_release(&names);
	free(list);
	free(dir);
	return rc;
}

/*
 * The initramfs of a new VM. LZ4 when the kernel unpacks it (CONFIG_RD_LZ4:
 * Debian's does, the minimal variants only gzip), else plain. With "switch": "kexec" it also holds the
 * kernel the VM booted, for kexec in the guest: the ELF vmlinux (trimmed of
 * its .bss zeros) when the VM booted it through PVH, since kexec_load
 * starts an ELF kernel without the decompressor (under TCG the bzImage's XZ
 * decompressor alone takes 5-8 s), else the bzImage; and the archive carries
 * a copy of itself at /boot/initrd.img (initramfs.h), so no kexec needs
 * anything re-archived in the guest. p->kexec_kernel says which.
 */
static int build_initrd(struct target *t, struct qemu_priv *p, const char *image,
			const char *boot_image, const char *config, const char *release,
			struct strbuf *err)
{
	const char *sw = p->c.sw;
	const char *pack = p->c.initramfs;
	struct strvec bins = STRVEC_INIT;
	struct initramfs_file *files = NULL;
	struct pg_files pf = { STRVEC_INIT, STRVEC_INIT }, sf = { STRVEC_INIT, STRVEC_INIT };
	struct initramfs_spec spec;
	char *cfgdst = NULL, *ko = NULL, *init = NULL;
	int rc = -1;

	memset(&spec, 0, sizeof(spec));
	if (collect_binaries(t, &bins, err) < 0 || pg_initramfs_files(t->tools, &bins, &pf, "qemu", err) < 0 ||
	    add_scx_files(config, &sf, err) < 0)
		goto out;
	files = xcalloc(5 + pf.paths.nr + sf.paths.nr, sizeof(*files));
	for (size_t i = 0; i < pf.paths.nr; i++) {
		files[i] = (struct initramfs_file){ pf.paths.v[i], pf.dsts.v[i], 0644, 0 };
		spec.nr_files++;
	}
	for (size_t i = 0; i < sf.paths.nr; i++)
		files[spec.nr_files++] = (struct initramfs_file){ sf.paths.v[i], sf.dsts.v[i], 0755, 0 };
	spec.files = files;
	if (p->c.ssh) {
		if (add_ssh_files(t, image, &bins, files, &spec.nr_files, &ko, err) < 0)
			goto out;
		spec.extra_init = ssh_init;
		if (sw && !strcmp(sw, "kexec"))
			spec.extra_init = init = xstrfmt("%s%s", ssh_init, ssh_carry_init);
	}
	spec.binaries = strvec_argv(&bins);
	spec.agent_batch = p->batch;
	if (pack && !strcmp(pack, "lz4") && config_has(config, "RD_LZ4") == 0) {
		strbuf_addf(err, "qemu: target.initramfs is \"lz4\" but the kernel (%s) has no "
				 "CONFIG_RD_LZ4", config);
		goto out;
	}
	spec.compress = (pack && !strcmp(pack, "lz4")) ||
				(!(pack && !strcmp(pack, "plain")) && config_has(config, "RD_LZ4") == 1)
			? INITRAMFS_LZ4 : INITRAMFS_PLAIN;
	/* the kernel config lets the agent report HZ, SCHED_MC, ... */
	if (config && *config) {
		cfgdst = *release ? xstrfmt("/boot/config-%s", release) : xstrdup("/boot/config");
		files[spec.nr_files++] = (struct initramfs_file){ config, cfgdst, 0644, 0 };
	}
	p->kexec_kernel[0] = '\0';
	if (sw && !strcmp(sw, "kexec")) {
		int elf = strcmp(boot_image, image) != 0;
		snprintf(p->kexec_kernel, sizeof(p->kexec_kernel), "%s",
			 elf ? "/boot/vmlinux" : "/boot/vmlinuz");
		files[spec.nr_files++] =
			(struct initramfs_file){ boot_image, p->kexec_kernel, 0644, elf };
		spec.carry = QEMU_CARRY;
	}
	int hold;
	if (initramfs_build(&spec, p->initrd, sizeof(p->initrd), &hold, err) < 0)
		goto out;
	initramfs_release(&p->initrd_hold); /* the archive of the VM before, if another */
	p->initrd_hold = hold;
	rc = 0;
out:
	free(cfgdst);
	free(ko);
	free(init);
	free(files);
	pg_files_release(&pf);
	pg_files_release(&sf);
	strvec_clear(&bins);
	return rc;
}

static int boot_new_vm(struct target *t, struct qemu_priv *p, const char *kernel,
		       const struct boot_spec *b, struct boot_info *bi, struct strbuf *err)
{
	const char *accel = p->c.accel;
	char image[PATH_MAX], vmlinux[PATH_MAX], config[PATH_MAX], release[128];
	const char *boot_image;
	struct strbuf cl = STRBUF_INIT, probe_err = STRBUF_INIT;
	double t0 = now_mono();
	int rc = -1, r, probe;

	vm_stop(p);
	if (resolve_kernel(kernel, image, sizeof(image), vmlinux, config, sizeof(config),
			   release, sizeof(release), err) < 0)
		goto out;
	/* the ELF vmlinux boots through PVH, without the decompressor */
	boot_image = vmlinux[0] && p->c.pvh ? vmlinux : image;
	if (build_initrd(t, p, image, boot_image, config, release, err) < 0)
		goto out;
	build_cmdline(t, b, &cl);
	if (!strcmp(accel, "auto"))
		accel = kvm_verdict >= 0 && kvm_usable() ? "kvm" : "tcg";
	probe = !strcmp(accel, "kvm") && kvm_verdict == 0 &&
		!strcmp(p->c.accel, "auto");
	if (vm_start(t, p, boot_image, cl.buf, accel, probe ? &probe_err : err) < 0) {
		if (!probe)
			goto out;
		r = 1; /* qemu could not even start under KVM */
	} else {
		r = vm_wait_agent(t, p, probe, err);
	}
	if (r == 1) {
		/* KVM printed nothing: remember, start again under TCG */
		kvm_verdict = -1;
		accel = "tcg";
		if (vm_start(t, p, boot_image, cl.buf, accel, err) < 0)
			goto out;
		r = vm_wait_agent(t, p, 0, err);
	}
	if (r < 0)
		goto out;
	if (!strcmp(accel, "kvm"))
		kvm_verdict = 1;
	snprintf(p->kernel, sizeof(p->kernel), "%s", image);
	free(p->cmdline);
	p->cmdline = xstrdup(cl.buf);
	t->agent = &p->conn;
	t->knob_keep = 0; /* a new agent: no knob changes yet */
	snprintf(bi->method, sizeof(bi->method), "boot");
	bi->switch_s = now_mono() - t0;
	rc = 0;
out:
	strbuf_release(&cl);
	strbuf_release(&probe_err);
	return rc;
}

static int kexec_vm(struct target *t, struct qemu_priv *p, const struct boot_spec *b,
		    struct boot_info *bi, long *console_from, struct strbuf *err)
{
	double timeout = p->c.timeout_s;
	char *old = xstrdup(agent_banner_boot_id(&p->conn));
	struct strbuf cl = STRBUF_INIT, e = STRBUF_INIT;
	double t0 = now_mono();
	json_t *args, *res = NULL;
	int r, rc = -1;

	*console_from = file_size(p->console);
	build_cmdline(t, b, &cl);
	args = json_pack("{s:s,s:s,s:b,s:s}", "kernel", p->kexec_kernel, "initrd", QEMU_CARRY,
			 "carry", 1, "cmdline", cl.buf);
	r = agent_call(&p->conn, "kexec", args, 120, &res, &e);
	json_decref(res);
	if (r < 0) {
		strbuf_addf(err, "qemu: kexec request failed: %s", e.buf);
		if (r == -1)
			vm_stop(p);
		goto out;
	}
	t->agent = NULL;
	for (;;) {
		const char *id;
		strbuf_reset(&e);
		if (agent_wait_banner(&p->conn, timeout - (now_mono() - t0), &e) < 0) {
			strbuf_addf(err, "qemu (%s): after kexec: %s", p->accel, e.buf);
			add_console_tail(p, *console_from, err);
			vm_stop(p);
			goto out;
		}
		id = json_string_value(json_object_get(p->conn.banner, "boot_id"));
		if (id && strcmp(id, old))
			break;
	}
	t->agent = &p->conn;
	t->knob_keep = 0; /* a new agent: no knob changes yet */
	free(p->cmdline);
	p->cmdline = xstrdup(cl.buf);
	snprintf(bi->method, sizeof(bi->method), "kexec");
	bi->switch_s = now_mono() - t0;
	rc = 0;
out:
	free(old);
	strbuf_release(&cl);
	strbuf_release(&e);
	return rc;
}

/*
 * A runtime switch: the running kernel stays and the agent writes the mode
 * to /sys/kernel/debug/sched/preempt (the allow-listed knob the local
 * target uses; journalled, kept across the boot's runs, restored when the
 * agent ends), method "runtime". si is what the last boot of this VM
 * reported (its effective mode, PREEMPT_DYNAMIC, the modes on offer). One
 * write per switch, on top of the previous one: each write of the mode
 * patches the kernel's static calls, which under TCG costs about a second
 * (docs/qemu.md), so the way back is not taken first. Returns 0 done, 1 not
 * possible (why says why; "auto" then boots as it would have), -1 error
 * (the connection is gone).
 */
static int runtime_vm(struct target *t, struct qemu_priv *p, const struct boot_spec *b,
		      const char *image, const json_t *si, struct boot_info *bi,
		      struct strbuf *why, struct strbuf *err)
{
	struct strbuf cl = STRBUF_INIT, e = STRBUF_INIT;
	json_t *info = NULL;
	double t0 = now_mono();
	int r;

	build_cmdline(t, b, &cl);
	int same = !strcmp(image, p->kernel) && p->cmdline &&
		   cmdline_same_but_preempt(cl.buf, p->cmdline);
	strbuf_release(&cl);
	if (!target_runtime_possible(same, b->preempt, si, why))
		return 1;
	t->agent = &p->conn;
	const char *cur = sysinfo_str(si, "preempt");
	if (b->preempt && strcmp(cur, b->preempt)) {
		r = target_agent_knob_set(t, "/sys/kernel/debug/sched/preempt", b->preempt, &info,
					  &e);
		if (r) {
			strbuf_addf(why, "writing /sys/kernel/debug/sched/preempt: %s", e.buf);
			if (r == -1)
				strbuf_addf(err, "qemu: runtime switch: %s", e.buf);
			strbuf_release(&e);
			t->agent = NULL;
			return r == -1 ? -1 : 1;
		}
		t->knob_keep = (int)json_integer_value(json_object_get(info, "depth"));
		json_decref(info);
	}
	strbuf_release(&e);
	snprintf(bi->method, sizeof(bi->method), "runtime");
	bi->switch_s = now_mono() - t0;
	return 0;
}

/* ------------------------------------------------------------------ */
/* target_ops                                                           */

static int qemu_open(struct target *t, struct strbuf *err)
{
	struct qemu_priv *p = xcalloc(1, sizeof(*p));
	p->qemu = (struct child)CHILD_INIT;
	p->initrd_hold = -1;
	strbuf_init(&p->qerr, 0);
	if (make_tmpdir(p, err) < 0) {
		strbuf_release(&p->qerr);
		free(p);
		return -1;
	}
	qemu_conf_read(t->conf, &p->c);
	p->qemu_bin = qemu_vt_binary(t->conf, &p->qemu_fallback);
	t->priv = p;
	t->agent = NULL;
	/* a virtual clock at shift 0 (1 ns an instruction) measured 4.3 host
	 * seconds a guest second on a quiet host under TCG; a busy one takes
	 * several times that. A larger shift makes the guest's second cheaper. */
	if (p->c.virt) {
		int shift = p->c.icount_shift;
		t->wall_per_s = shift < 4 ? 40.0 / (1 << shift) : 3;
		/* each run at the same phase of the guest's periodic work, the
		 * boot's late work done (docs/virtual-time.md, "Exact repeats") */
		t->exec_settle_s = 10;
		t->exec_align_s = 10;
	}
	return 0;
}

/* accel, clock and qemu's version of the running VM into the boot row */
static void set_clock(const struct target *t, const struct qemu_priv *p, struct boot_info *bi)
{
	int virt = p->c.virt;
	struct qemu_version v;
	struct strbuf e = STRBUF_INIT;
	snprintf(bi->accel, sizeof(bi->accel), "%s", p->accel);
	snprintf(bi->clock, sizeof(bi->clock), "%s", virt ? "virtual" : "real");
	bi->clock_shift = virt ? p->c.icount_shift
			       : -1;
	snprintf(bi->qemu_version, sizeof(bi->qemu_version), "%s",
		 qemu_version_probe(p->qemu_bin, &v, &e) == 0 ? v.text : "");
	strbuf_release(&e);
}

/*
 * The qemu of the boot in its sysinfo, as a field of its own: {"value":
 * "10.0.13", "source": "BINARY -version", "binary": BINARY}, and "note"
 * when a virtual clock ran the system's qemu because the provided one
 * (make -C kernels qemu) is missing; "value": null with "error" when the
 * version could not be read.
 */
static void add_qemu_field(const struct qemu_priv *p, json_t *si)
{
	struct qemu_version v;
	struct strbuf e = STRBUF_INIT;
	json_t *f;
	if (!json_is_object(si))
		return;
	if (qemu_version_probe(p->qemu_bin, &v, &e) == 0)
		f = json_pack("{s:s,s:s+,s:s}", "value", v.text, "source", p->qemu_bin,
			      " -version", "binary", p->qemu_bin);
	else
		f = json_pack("{s:n,s:s,s:s,s:s}", "value", "source", "unknown", "binary",
			      p->qemu_bin, "error", e.buf);
	if (f && p->qemu_fallback) {
		char *pp = qemu_vt_provided_path();
		char *note = xstrfmt("the system's qemu: the provided one (%s, `make -C kernels "
				     "qemu`) is missing", pp ? pp : "none");
		json_object_set_new(f, "note", json_string(note));
		free(note);
		free(pp);
	}
	if (f)
		json_object_set_new(si, "qemu", f);
	strbuf_release(&e);
}

static int qemu_boot(struct target *t, const struct boot_spec *b, struct boot_info *bi,
		     struct strbuf *err)
{
	struct qemu_priv *p = t->priv;
	const char *sw = p->c.sw;
	const char *kernel = b->kernel ? b->kernel
				       : p->c.kernel;
	char image[PATH_MAX];
	long from = 0;
	int rc;

	if (b->preempt && !target_preempt_known(b->preempt)) {
		strbuf_addf(err, "qemu: unknown preempt mode \"%s\"", b->preempt);
		return -1;
	}
	if ((b->cmdline && strchr(b->cmdline, '\n'))) {
		strbuf_addstr(err, "qemu: the kernel command line must be one line");
		return -1;
	}
	t->agent = NULL;
	if (p->c.sealed) {
		/* the batch path: the VM starts with its runs (sealed_submit) */
		snprintf(bi->method, sizeof(bi->method), "sealed");
		snprintf(p->accel, sizeof(p->accel), "tcg");
		set_clock(t, p, bi);
		return 0;
	}
	/* what the last boot of the running VM reported (runtime_vm) */
	json_t *last = p->si;
	p->si = NULL;
	rc = 1;
	if (p->running && p->conn_open && sw && (!strcmp(sw, "runtime") || !strcmp(sw, "auto"))) {
		struct strbuf why = STRBUF_INIT;
		if (resolve_kernel(kernel, image, sizeof(image), NULL, NULL, 0, NULL, 0, err) == 0)
			rc = runtime_vm(t, p, b, image, last, bi, &why, err);
		if (rc == 1 && !strcmp(sw, "runtime")) {
			strbuf_addf(err, "qemu: switch \"runtime\": %s", why.buf);
			rc = -1;
		}
		strbuf_release(&why);
		if (rc == -1)
			vm_stop(p);
	}
	json_decref(last);
	if (rc == 1) {
		/* not at run time: a new VM or a kexec as before */
		if (p->running && p->conn_open && sw && !strcmp(sw, "kexec") &&
		    resolve_kernel(kernel, image, sizeof(image), NULL, NULL, 0, NULL, 0,
				   err) == 0 &&
		    !strcmp(image, p->kernel)) {
			rc = kexec_vm(t, p, b, bi, &from, err);
		} else {
			strbuf_reset(err);
			from = 0;
			rc = boot_new_vm(t, p, kernel, b, bi, err);
		}
	} else if (rc == 0) {
		from = file_size(p->console); /* no new console output */
	}
	if (rc < 0) {
		/* the console of a failed boot is evidence: keep it with the boot */
		strbuf_reset(&bi->console);
		read_console(p->console, from, QEMU_CONSOLE_TAIL, &bi->console);
		set_clock(t, p, bi);
		return -1;
	}
	set_clock(t, p, bi);
	snprintf(bi->boot_id, sizeof(bi->boot_id), "%s", agent_banner_boot_id(&p->conn));
	if (strcmp(bi->method, "runtime"))
		p->kernel_from = from;
	strbuf_reset(&bi->console);
	read_console(p->console, from, QEMU_CONSOLE_TAIL, &bi->console);
	json_decref(bi->sysinfo);
	bi->sysinfo = NULL;
	if (agent_call(&p->conn, "sysinfo", NULL, 60, &bi->sysinfo, err) < 0) {
		struct strbuf m = STRBUF_INIT;
		strbuf_addf(&m, "qemu: sysinfo after boot: %s", err->buf);
		strbuf_reset(err);
		strbuf_addstr(err, m.buf);
		strbuf_release(&m);
		return -1;
	}
	add_qemu_field(p, bi->sysinfo);
	p->si = json_incref(bi->sysinfo);
	return 0;
}

static void qemu_close(struct target *t)
{
	struct qemu_priv *p = t->priv;
	if (!p)
		return;
	t->agent = NULL;
	vm_stop(p);
	initramfs_release(&p->initrd_hold);
	rm_tmpdir(p);
	strbuf_release(&p->qerr);
	free(p->cmdline);
	free(p->qemu_bin);
	json_decref(p->si);
	free(p);
	t->priv = NULL;
}

/* a run; when the guest goes away under it (a panic: qemu exits with
 * -no-reboot; a hang; the agent killed), its console's last lines since the
 * kernel booted go into the error, which the run keeps */
static int qemu_exec(struct target *t, json_t *req, double timeout_s, json_t **out,
		     struct strbuf *err)
{
	struct qemu_priv *p = t->priv;
	int r = target_agent_exec(t, req, timeout_s, out, err);
	if (r == -1 && p && p->running)
		add_console_tail(p, p->kernel_from, err);
	return r;
}

/* ------------------------------------------------------------------ */
/* sealed runs: the batch path (target.h batch_*, session_batch.c)      */

/* where the requests are in the guest (the agent's --batch) */
#define SEALED_REQUESTS "/batch/requests.jsonl"
/* the most of a sealed guest's console that is read back */
#define SEALED_LOG_MAX (256L << 20)

/* a sealed guest in flight (the session's struct batch_job) */
struct batch_job {
	unsigned seq;
	struct batch_ids *ids;
	size_t n;
	long max_id;
	double t0, deadline, limit_s;
	int ended, timed_out;
	char reqfile[PATH_MAX], initrd[PATH_MAX];
	char console[sizeof(((struct qemu_priv *)0)->console)];
};

static void sealed_job_free(struct batch_job *j)
{
	if (!j)
		return;
	unlink(j->reqfile);
	unlink(j->initrd);
	unlink(j->console);
	free(j->ids);
	free(j);
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* the job's initrd: a newc archive of the requests first (uncompressed, so
 * the kernel goes on to the next archive after its trailer), then the
 * cached initramfs as it is (a compressed one must come last) */
static int sealed_initrd(const char *base, const char *reqfile, const char *out,
			 struct strbuf *err)
{
	struct strbuf req = STRBUF_INIT, arc = STRBUF_INIT, img = STRBUF_INIT;
	int rc = -1, fd = -1;
	if (strbuf_read_file(&req, reqfile, 0) || strbuf_read_file(&img, base, 0)) {
		strbuf_addf(err, "qemu: sealed runs: %s or %s: %s", reqfile, base, strerror(errno));
		goto out;
	}
	struct cpio_out co;
	cpio_out_init_mem(&co, &arc);
	cpio_add(&co, "batch", S_IFDIR | 0755, NULL, 0, 0, 0);
	cpio_add(&co, &SEALED_REQUESTS[1], S_IFREG | 0644, req.buf, req.len, 0, 0);
	cpio_finish(&co);
	fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write_all(fd, arc.buf, arc.len) || write_all(fd, img.buf, img.len) ||
	    close(fd)) {
		strbuf_addf(err, "qemu: sealed runs: %s: %s", out, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	rc = 0;
out:
	strbuf_release(&req);
	strbuf_release(&arc);
	strbuf_release(&img);
	return rc;
}

static int sealed_slots(struct target *t, struct strbuf *err)
{
	return 1; /* one guest at a time: each takes a host CPU of its own */
}

static struct batch_job *sealed_submit(struct target *t, const struct boot_spec *b,
				       struct boot_info *bi, struct batch_run *runs, size_t n,
				       struct strbuf *err)
{
	struct qemu_priv *p = t->priv;
	const char *kernel = b->kernel ? b->kernel
				       : p->c.kernel;
	const char *accel = p->c.accel;
	char image[PATH_MAX], vmlinux[PATH_MAX], config[PATH_MAX], release[128];
	struct strbuf cl = STRBUF_INIT;
	struct batch_job *j = xcalloc(1, sizeof(*j));
	vm_stop(p);
	j->seq = ++p->seq;
	j->n = n;
	j->ids = xcalloc(n + 1, sizeof(*j->ids));
	j->t0 = now_mono();
	snprintf(j->reqfile, sizeof(j->reqfile), "%s/requests-%u.jsonl", p->tmpdir, j->seq);
	snprintf(j->initrd, sizeof(j->initrd), "%s/initrd-%u.img", p->tmpdir, j->seq);
	snprintf(j->console, sizeof(j->console), "%s/console-%u.log", p->tmpdir, j->seq);
	snprintf(bi->method, sizeof(bi->method), "sealed");
	if (batch_write_requests(j->reqfile, "qemu", t, runs, n, j->ids, &j->max_id, err))
		goto fail;
	if (resolve_kernel(kernel, image, sizeof(image), vmlinux, config, sizeof(config),
			   release, sizeof(release), err) < 0)
		goto fail;
	const char *boot_image =
		vmlinux[0] && p->c.pvh ? vmlinux : image;
	p->batch = SEALED_REQUESTS;
	int brc = build_initrd(t, p, image, boot_image, config, release, err);
	if (brc == 0)
		brc = sealed_initrd(p->initrd, j->reqfile, j->initrd, err);
	if (brc)
		goto fail;
	snprintf(p->initrd, sizeof(p->initrd), "%s", j->initrd);
	snprintf(p->console, sizeof(p->console), "%s", j->console);
	build_cmdline(t, b, &cl);
	if (!strcmp(accel, "auto"))
		accel = "tcg"; /* no KVM probe without an agent to answer it */
	if (vm_start(t, p, boot_image, cl.buf, accel, err) < 0)
		goto fail;
	p->batch = NULL;
	snprintf(p->kernel, sizeof(p->kernel), "%s", image);
	set_clock(t, p, bi);
	/* the boot, then every run at its longest, on the guest's clock
	   stretched to the host's (wall_per_s), and a minute to power off */
	double guest_s = 0;
	for (size_t i = 0; i < n; i++)
		guest_s += runs[i].timeout_s;
	double wall = t->wall_per_s > 0 ? t->wall_per_s : 1;
	j->limit_s = p->c.timeout_s + guest_s * wall + 60;
	/* fault injection for t0547: a guest that outlives its limit */
	const char *lim = getenv("SCHEDLAB_TEST_SEALED_LIMIT_S");
	if (lim && atof(lim) > 0)
		j->limit_s = atof(lim);
	j->deadline = j->t0 + j->limit_s;
	strbuf_release(&cl);
	return j;
fail:
	p->batch = NULL;
	strbuf_release(&cl);
	sealed_job_free(j);
	return NULL;
}

static size_t sealed_wait(struct target *t, struct batch_job *const *jobs, size_t n)
{
	struct qemu_priv *p = t->priv;
	for (;;) {
		for (size_t k = 0; k < n; k++) {
			if (t->abort_flag && *t->abort_flag)
				return k;
			if (!jobs[k]->ended && (!p->running || qemu_gone(p)))
				jobs[k]->ended = 1;
			if (!jobs[k]->ended && now_mono() > jobs[k]->deadline)
				jobs[k]->ended = jobs[k]->timed_out = 1;
			if (jobs[k]->ended)
				return k;
		}
		usleep(100000);
	}
}

static int sealed_collect(struct target *t, struct batch_job *j, int cancel,
			  struct boot_info *bi, struct batch_run *runs, size_t n,
			  struct strbuf *err)
{
	struct qemu_priv *p = t->priv;
	struct lava_log d;
	int ret = -1;
	lava_log_init(&d, j->max_id);
	snprintf(bi->method, sizeof(bi->method), "sealed");
	set_clock(t, p, bi);
	if (!j->ended && !cancel)
		sealed_wait(t, &j, 1);
	int aborted = !j->ended && t->abort_flag && *t->abort_flag;
	/* whatever it did, the guest is gone from here on; what it wrote
	   before is read all the same (the runs it finished are kept) */
	vm_stop(p);
	bi->switch_s = now_mono() - j->t0;
	if (batch_read_log(j->console, "qemu: the sealed guest's console", SEALED_LOG_MAX, &d, err))
		goto out;
	strbuf_reset(&bi->console);
	strbuf_add(&bi->console, d.console.buf, d.console.len);
	strbuf_tail(&bi->console, QEMU_CONSOLE_TAIL);
	const char *bid = json_string_value(json_object_get(d.banner, "boot_id"));
	snprintf(bi->boot_id, sizeof(bi->boot_id), "%.63s", bid ? bid : "");
	struct strbuf where = STRBUF_INIT;
	strbuf_addf(&where, "the sealed guest (%s)",
		    j->timed_out ? "it was ended at the host's limit" :
		    aborted ? "interrupted while it ran" : cancel ? "canceled" :
		    "it powered off first");
	if (j->timed_out)
		strbuf_addf(&where, ": it had not powered off after %.0f s", j->limit_s);
	if (d.reason.len)
		strbuf_addf(&where, "; %s", d.reason.buf);
	struct strbuf why = STRBUF_INIT;
	int refused;
	json_t *si = lava_log_result(&d, 1, "sysinfo", &why, &refused);
	if (!si) {
		strbuf_addf(err, "qemu: %s: %s", where.buf, why.buf);
		add_console_tail(p, 0, err);
		strbuf_release(&why);
		strbuf_release(&where);
		goto out;
	}
	strbuf_release(&why);
	json_decref(bi->sysinfo);
	bi->sysinfo = json_deep_copy(si);
	add_qemu_field(p, bi->sysinfo);
	batch_take_replies(&d, j->ids, runs, n < j->n ? n : j->n, where.buf);
	strbuf_release(&where);
	ret = 0;
out:
	lava_log_release(&d);
	sealed_job_free(j);
	return ret;
}

/* a guest of an earlier controller died with it (pdeathsig) */
static void sealed_orphan(struct target *t, long long job_id, struct strbuf *why)
{
	strbuf_addstr(why, "its sealed guest ended with the controller that started it; its "
			   "results are not taken");
}

const struct target_ops qemu_target = {
	.options = qemu_options,
	.doc = "docs/qemu.md",
	.name = "qemu",
	.summary = "a qemu VM booted from a kernel image and a generated initramfs; agent on "
		   "ttyS1; switching by new boot, kexec or at run time; KVM when usable, else TCG",
	.caps = TCAP_PREEMPT_RUNTIME | TCAP_PREEMPT_BOOT | TCAP_CMDLINE | TCAP_KERNEL |
		TCAP_KEXEC,
	.check = qemu_check,
	.feasible = qemu_feasible,
	.open = qemu_open,
	.boot = qemu_boot,
	.batch_on = qemu_sealed,
	.batch_slots = sealed_slots,
	.batch_submit = sealed_submit,
	.batch_wait = sealed_wait,
	.batch_collect = sealed_collect,
	.batch_orphan = sealed_orphan,
	.sysinfo = target_agent_sysinfo,
	.exec = qemu_exec,
	.knob_set = target_agent_knob_set,
	.knob_restore = target_agent_knob_restore,
	.close = qemu_close,
};
