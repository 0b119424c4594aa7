/*
 * Knob writes with an allow-list and an undo stack (struct knobs, owned by
 * the caller); see knobs.h. knob_set reads the old state, writes, reads
 * back and pushes one record; knob_restore_to pops records newest first and
 * writes each old state back.
 *
 * The stack is also kept on disk, in a journal that survives the agent
 * (<root>/run/schedlab/knobs-PID.json, rewritten by rename before every
 * write and after every restore, removed when the stack is empty), so that
 * an agent killed with SIGKILL, which cannot restore anything itself, has
 * its changes undone by the next agent on that machine (knobs_recover).
 * /run is emptied by a reboot, when the kernel's values are reset anyway.
 */
#include "harness/agent/knobs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/agent/sysinfo.h"
#include "harness/util/proc.h"

#define JOURNAL_DIR "/run/schedlab"
#define OTHERS_WAIT_S 10.0

static const char *const allowed[] = {
	"/sys/kernel/debug/sched/",
	"/proc/sys/kernel/",
	"/sys/devices/system/cpu/",
	/* schedlab's own tracefs instances only (evidence traces): the global
	   tracing state of the machine is never written */
	"/sys/kernel/tracing/instances/schedlab-",
	"/sys/kernel/debug/tracing/instances/schedlab-",
	NULL,
};

/* dir: a directory knob_mkdir created (a tracefs instance); restoring
 * removes it */
enum knob_kind { KNOB_PLAIN, KNOB_CHOICE, KNOB_FEATURES, KNOB_DIR };

struct knob_change {
	char *path;
	enum knob_kind kind;
	char *old;      /* plain: content; choice: chosen token; features: inverse token */
};

void knobs_init(struct knobs *k, const char *root)
{
	memset(k, 0, sizeof(*k));
	k->root = root ? root : "";
	k->others_wait_s = OTHERS_WAIT_S;
}

void knobs_release(struct knobs *k)
{
	for (size_t i = 0; i < k->nr; i++) {
		free(k->stack[i].path);
		free(k->stack[i].old);
	}
	free(k->stack);
	k->stack = NULL;
	k->nr = k->alloc = 0;
}

const char *knob_allowed_prefixes(void)
{
	return "/sys/kernel/debug/sched/, /proc/sys/kernel/, /sys/devices/system/cpu/, "
	       "/sys/kernel/tracing/instances/schedlab-*, "
	       "/sys/kernel/debug/tracing/instances/schedlab-*";
}

/* below the allowed prefixes, still never written: each with the reason */
static const struct {
	const char *path;
	const char *why;
} denied[] = {
	{ "/proc/sys/kernel/core_pattern", "a \"|program\" value runs that program as root at "
					   "every crash" },
	{ "/proc/sys/kernel/modprobe", "the program the kernel runs as root to load modules" },
	{ "/proc/sys/kernel/poweroff_cmd", "the program the kernel runs as root to power off" },
	{ "/proc/sys/kernel/hotplug", "the program the kernel runs as root on device events" },
	{ "/proc/sys/kernel/usermodehelper/", "limits of the programs the kernel runs as root" },
	{ "/proc/sys/kernel/kexec_load_disabled", "one-way: set once, kexec (and schedlab's "
						  "switching) stays off until reboot" },
	{ "/proc/sys/kernel/modules_disabled", "one-way: cannot be restored until reboot" },
	{ "/proc/sys/kernel/sysrq", "enables the magic SysRq keys (reboot, crash) for anyone "
				    "at the console" },
	{ "/proc/sys/kernel/cad_pid", "the process the kernel signals on Ctrl-Alt-Del" },
	{ NULL, NULL },
};

const char *knob_denied(const char *path)
{
	for (int i = 0; path && denied[i].path; i++) {
		size_t n = strlen(denied[i].path);
		if (denied[i].path[n - 1] == '/' ? !strncmp(path, denied[i].path, n)
						 : !strcmp(path, denied[i].path))
			return denied[i].why;
	}
	return NULL;
}

/* the path as the kernel resolves it (sysfs is full of symlinks) must still
 * be below an allowed prefix: cpu0/node0/meminfo leads out of them; for a
 * write, not to a denied knob either */
static int resolved_allowed(const char *root, const char *path, int writing, struct strbuf *err)
{
	char *full = xstrfmt("%s%s", root, path);
	char *real = realpath(full, NULL);
	int e = errno;
	char *rroot = *root ? realpath(root, NULL) : xstrdup("");
	int ok = 0;
	if (!real && e == ENOENT) {
		ok = 1; /* nothing there to lead anywhere: the read says it is missing */
	} else if (!real || !rroot) {
		strbuf_addf(err, "%s: cannot resolve: %s", path, strerror(real ? errno : e));
	} else {
		size_t rl = strlen(rroot);
		ok = !strncmp(real, rroot, rl) && knob_path_allowed(real + rl) &&
		     (!writing || !knob_denied(real + rl));
		if (!ok)
			strbuf_addf(err, "%s: resolves to %s, outside the allowed knob paths (%s)",
				    path, real + rl, knob_allowed_prefixes());
	}
	free(real);
	free(rroot);
	free(full);
	return ok;
}

int knob_path_allowed(const char *path)
{
	if (!path || path[0] != '/' || strstr(path, "/../") || strstr(path, "/./") ||
	    strchr(path, '\n'))
		return 0;
	size_t n = strlen(path);
	if (n >= 3 && !strcmp(path + n - 3, "/.."))
		return 0;
	for (const char *const *a = allowed; *a; a++)
		if (!strncmp(path, *a, strlen(*a)) && n > strlen(*a))
			return 1;
	return 0;
}

static enum knob_kind kind_of(const char *path)
{
	if (!strcmp(path, "/sys/kernel/debug/sched/features"))
		return KNOB_FEATURES;
	if (!strcmp(path, "/sys/kernel/debug/sched/preempt"))
		return KNOB_CHOICE;
	return KNOB_PLAIN;
}

int features_has(const char *list, const char *token)
{
	size_t n = strlen(token);
	const char *p = list;
	if (!n)
		return 0;   /* strstr would find "" at the same place forever */
	while ((p = strstr(p, token))) {
		int start_ok = p == list || p[-1] == ' ' || p[-1] == '\n';
		int end_ok = p[n] == '\0' || p[n] == ' ' || p[n] == '\n';
		if (start_ok && end_ok)
			return 1;
		p += n;
	}
	return 0;
}

static int read_path(const char *root, const char *path, struct strbuf *out, struct strbuf *err)
{
	char *full = xstrfmt("%s%s", root, path);
	strbuf_reset(out);
	int r = strbuf_read_file(out, full, 1 << 16);
	if (r)
		strbuf_addf(err, "%s: cannot read: %s", path, strerror(errno));
	else
		strbuf_trim(out);
	free(full);
	return r;
}

static int write_path(const char *root, const char *path, const char *value, struct strbuf *err)
{
	char *full = xstrfmt("%s%s", root, path);
	int fd = open(full, O_WRONLY | O_CLOEXEC | (*root ? O_TRUNC : 0));
	free(full);
	if (fd < 0) {
		strbuf_addf(err, "%s: cannot open for writing: %s", path, strerror(errno));
		return -1;
	}
	size_t len = strlen(value);
	ssize_t k = write(fd, value, len);
	int e = errno;
	close(fd);
	if (k < 0 || (size_t)k != len) {
		strbuf_addf(err, "%s: writing \"%s\" failed: %s", path, value,
			    k < 0 ? strerror(e) : "short write");
		errno = e;
		return -1;
	}
	return 0;
}

int knob_get(const struct knobs *k, const char *path, struct strbuf *out, struct strbuf *err)
{
	if (!knob_path_allowed(path)) {
		strbuf_addf(err, "%s: not an allowed knob path (allowed: %s)", path,
			    knob_allowed_prefixes());
		return -1;
	}
	/* as for a write: a symlink below a prefix may lead out of them */
	if (!resolved_allowed(k->root, path, 0, err))
		return -1;
	return read_path(k->root, path, out, err);
}

static int restore_locked(struct knobs *k, int keep, struct strbuf *err);

static void pop_record(struct knobs *k)
{
	k->nr--;
	free(k->stack[k->nr].path);
	free(k->stack[k->nr].old);
}

/* ---- the journal ---- */

static char *journal_path(const struct knobs *k, pid_t pid)
{
	return xstrfmt("%s" JOURNAL_DIR "/knobs-%d.json", k->root, (int)pid);
}

static const char *kind_name(enum knob_kind kind)
{
	return kind == KNOB_FEATURES ? "features" : kind == KNOB_CHOICE ? "choice" :
	       kind == KNOB_DIR ? "dir" : "plain";
}

/* undo one change: a created directory is removed, a file written back */
static int undo_path(const char *root, const char *path, const char *kind, const char *old,
		     struct strbuf *err)
{
	if (strcmp(kind, "dir"))
		return write_path(root, path, old, err);
	char *full = xstrfmt("%s%s", root, path);
	int r = rmdir(full);
	if (r && errno == ENOENT)
		r = 0;
	else if (r)
		strbuf_addf(err, "%s: cannot remove: %s", path, strerror(errno));
	free(full);
	return r;
}

/* the machine-wide lock every journal and knob change is made under, so
 * that an agent's look at the others' journals, its read of the old value
 * and its own journal and write are one step to every other agent; -1 with
 * a message if it cannot be had */
static int journal_lock(const struct knobs *k, struct strbuf *err)
{
	char *dir = xstrfmt("%s/run", k->root), *sub = xstrfmt("%s" JOURNAL_DIR, k->root);
	char *path = xstrfmt("%s/lock", sub);
	(void)mkdir(dir, 0755);
	(void)mkdir(sub, 0700);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || flock(fd, LOCK_EX)) {
		strbuf_addf(err, "%s: cannot lock the knob journal: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	free(path);
	free(sub);
	free(dir);
	return fd;
}

static void journal_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* releases the flock */
}

/* write the stack as it is now (the file gone when it is empty); -1 with a
 * message when it cannot be kept, and then no knob may be written */
static int journal_save(const struct knobs *k, struct strbuf *err)
{
	char *path = journal_path(k, getpid());
	int ret = -1;
	if (!k->nr) {
		if (unlink(path) && errno != ENOENT)
			strbuf_addf(err, "%s: cannot remove the knob journal: %s", path, strerror(errno));
		else
			ret = 0;
		free(path);
		return ret;
	}
	char *dir = xstrfmt("%s/run", k->root), *sub = xstrfmt("%s" JOURNAL_DIR, k->root);
	char *tmp = xstrfmt("%s.tmp", path);
	(void)mkdir(dir, 0755);
	(void)mkdir(sub, 0700);
	json_t *changes = json_array();
	for (size_t i = 0; i < k->nr; i++)
		json_array_append_new(changes, json_pack("{s:s,s:s,s:s}", "path", k->stack[i].path,
							 "kind", kind_name(k->stack[i].kind),
							 "old", k->stack[i].old));
	json_t *j = json_pack("{s:i,s:I,s:o}", "pid", (int)getpid(), "start",
			      (json_int_t)proc_start_time(getpid()), "changes", changes);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || json_dumpfd(j, fd, JSON_COMPACT) || fsync(fd) || close(fd) ||
	    rename(tmp, path)) {
		strbuf_addf(err, "%s: cannot keep the knob journal: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(tmp);
	} else {
		ret = 0;
	}
	json_decref(j);
	free(tmp);
	free(sub);
	free(dir);
	free(path);
	return ret;
}

/* calls fn for every other agent's journal in the folder (pid, alive?,
 * its changes); stops when fn returns non-zero and returns that */
static int journal_each(const struct knobs *k,
			int (*fn)(void *ctx, const char *file, int pid, int alive, json_t *changes),
			void *ctx)
{
	char *dirpath = xstrfmt("%s" JOURNAL_DIR, k->root);
	DIR *d = opendir(dirpath);
	int ret = 0;
	struct dirent *de;
	while (d && !ret && (de = readdir(d))) {
		int pid;
		char tail[8];
		if (sscanf(de->d_name, "knobs-%d.%7s", &pid, tail) != 2 || strcmp(tail, "json") ||
		    pid == (int)getpid())
			continue;
		char *file = xstrfmt("%s/%s", dirpath, de->d_name);
		json_t *j = json_load_file(file, 0, NULL);
		json_t *changes = json_object_get(j, "changes");
		json_t *start = json_object_get(j, "start");
		if (json_is_array(changes) && json_is_integer(start)) {
			unsigned long long now = proc_start_time(pid);
			int alive = now && now == (unsigned long long)json_integer_value(start);
			ret = fn(ctx, file, pid, alive, changes);
		}
		json_decref(j);
		free(file);
	}
	if (d)
		closedir(d);
	free(dirpath);
	return ret;
}

struct recover_ctx {
	const struct knobs *k;
	struct strbuf *report;
	int fails;
};

static int recover_one(void *ctx, const char *file, int pid, int alive, json_t *changes)
{
	struct recover_ctx *r = ctx;
	if (alive)
		return 0;
	for (size_t i = json_array_size(changes); i-- > 0;) {
		json_t *c = json_array_get(changes, i);
		const char *path = json_string_value(json_object_get(c, "path"));
		const char *old = json_string_value(json_object_get(c, "old"));
		const char *kind = json_string_value(json_object_get(c, "kind"));
		struct strbuf e = STRBUF_INIT;
		if (!path || !old || !knob_path_allowed(path)) {
			strbuf_addf(r->report, "%sjournal %s: a change without an allowed path and "
				    "value, not restored", r->report->len ? "; " : "", file);
			r->fails++;
		} else if (undo_path(r->k->root, path, kind ? kind : "plain", old, &e)) {
			strbuf_addf(r->report, "%s%s", r->report->len ? "; " : "", e.buf);
			r->fails++;
		} else {
			strbuf_addf(r->report, "%s%s=%s (left by agent %d)", r->report->len ? "; " : "",
				    path, old, pid);
		}
		strbuf_release(&e);
	}
	unlink(file);
	return 0;
}

static int recover_locked(const struct knobs *k, struct strbuf *report)
{
	struct recover_ctx r = { k, report, 0 };
	journal_each(k, recover_one, &r);
	return r.fails;
}

int knobs_recover(const struct knobs *k, struct strbuf *report)
{
	char *dir = xstrfmt("%s" JOURNAL_DIR, k->root);
	/* no agent ever changed a knob here, or this user could not restore
	   knobs anyway (they need root, as the journal does) */
	int none = access(dir, W_OK) != 0;
	free(dir);
	if (none)
		return 0;
	int fd = journal_lock(k, report);
	if (fd < 0)
		return 1;
	int fails = recover_locked(k, report);
	journal_unlock(fd);
	return fails;
}

struct holder_ctx {
	const char *path;
	int pid;
};

static int holds_path(void *ctx, const char *file, int pid, int alive, json_t *changes)
{
	struct holder_ctx *h = ctx;
	size_t i;
	json_t *c;
	if (!alive)
		return 0;
	json_array_foreach(changes, i, c) {
		const char *p = json_string_value(json_object_get(c, "path"));
		if (p && !strcmp(p, h->path)) {
			h->pid = pid;
			return 1;
		}
	}
	return 0;
}

/* the lock, once no other live agent holds a change of path that it has
 * not restored yet (an agent whose controller died restores within
 * milliseconds; reading its value as "old" would restore the wrong one
 * later): after k->others_wait_s, -1 and the holder named. Journals of dead
 * agents are played back first, so that no one reads what they left. */
static int lock_for(const struct knobs *k, const char *path, struct strbuf *err)
{
	struct timespec t0, t, nap = { 0, 50 * 1000 * 1000 };
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int fd = journal_lock(k, err);
		if (fd < 0)
			return -1;
		struct strbuf rep = STRBUF_INIT;
		recover_locked(k, &rep);
		if (rep.len)
			fprintf(stderr, "schedlab-agent: restored knobs of a dead agent: %s\n", rep.buf);
		strbuf_release(&rep);
		struct holder_ctx h = { path, 0 };
		if (!journal_each(k, holds_path, &h))
			return fd;
		journal_unlock(fd);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 > k->others_wait_s) {
			strbuf_addf(err, "%s: changed by another schedlab agent (pid %d) that has not "
				    "restored it after %.0f s: two sessions cannot share a machine's "
				    "knobs", path, h.pid, k->others_wait_s);
			return -1;
		}
		nanosleep(&nap, NULL);
	}
}

static void push(struct knobs *k, const char *path, enum knob_kind kind, const char *old)
{
	if (k->nr == k->alloc) {
		k->alloc = k->alloc ? k->alloc * 2 : 16;
		k->stack = xrealloc(k->stack, k->alloc * sizeof(*k->stack));
	}
	k->stack[k->nr++] = (struct knob_change){ xstrdup(path), kind, xstrdup(old) };
}

int knob_set(struct knobs *k, const char *path, const char *value, json_t **info,
	     struct strbuf *err)
{
	const char *root = k->root;
	struct strbuf old = STRBUF_INIT, now = STRBUF_INIT;
	int ret = -1;
	enum knob_kind kind = kind_of(path);
	if (info)
		*info = NULL;
	if (!knob_path_allowed(path)) {
		strbuf_addf(err, "%s: not an allowed knob path (allowed: %s)", path,
			    knob_allowed_prefixes());
		return -1;
	}
	const char *why = knob_denied(path);
	if (why) {
		strbuf_addf(err, "%s: never written by schedlab: %s", path, why);
		return -1;
	}
	if (!resolved_allowed(root, path, 1, err))
		return -1;
	if (!value || strchr(value, '\n') || (kind == KNOB_FEATURES && strchr(value, ' '))) {
		strbuf_addf(err, "%s: invalid value \"%s\"%s", path, value ? value : "",
			    kind == KNOB_FEATURES ? " (one feature token at a time)" : "");
		return -1;
	}
	int lock = lock_for(k, path, err);
	if (lock < 0)
		return -1;
	if (read_path(root, path, &old, err))
		goto out;
	char inverse[128] = "";
	if (kind == KNOB_FEATURES) {
		const char *base = !strncmp(value, "NO_", 3) ? value + 3 : value;
		char on[128], off[128];
		snprintf(on, sizeof(on), "%s", base);
		snprintf(off, sizeof(off), "NO_%s", base);
		if (!features_has(old.buf, on) && !features_has(old.buf, off)) {
			strbuf_addf(err, "sched feature %s: unsupported by this kernel", base);
			goto out;
		}
		snprintf(inverse, sizeof(inverse), "%s", features_has(old.buf, on) ? on : off);
	}
	char cur[64] = "";
	if (kind == KNOB_CHOICE && sysinfo_parse_preempt(old.buf, cur, sizeof(cur), NULL)) {
		strbuf_addf(err, "%s: cannot tell the current choice from \"%s\"", path, old.buf);
		goto out;
	}
	/* journal first: a change is on disk before the kernel sees it */
	push(k, path, kind, kind == KNOB_FEATURES ? inverse : kind == KNOB_CHOICE ? cur : old.buf);
	if (journal_save(k, err)) {
		pop_record(k);
		goto out;
	}
	if (write_path(root, path, value, err)) {
		pop_record(k);
		journal_save(k, err);
		goto out;
	}
	if (read_path(root, path, &now, err)) {
		restore_locked(k, (int)k->nr - 1, err);
		goto out;
	}
	int ok = 1;
	if (kind == KNOB_FEATURES)
		ok = features_has(now.buf, value);
	else if (kind == KNOB_CHOICE) {
		char c2[64];
		ok = !sysinfo_parse_preempt(now.buf, c2, sizeof(c2), NULL) && !strcmp(c2, value);
	}
	if (!ok) {
		strbuf_addf(err, "%s: wrote \"%s\" but it reads back as \"%s\"", path, value, now.buf);
		/* undo this change only: earlier ones (a boot's preempt mode) stay */
		restore_locked(k, (int)k->nr - 1, err);
		goto out;
	}
	if (info)
		*info = json_pack("{s:s,s:s,s:s,s:s}", "path", path, "old",
				  kind == KNOB_PLAIN ? old.buf : kind == KNOB_CHOICE ? cur : inverse,
				  "new", value, "readback", now.buf);
	ret = 0;
out:
	journal_unlock(lock);
	strbuf_release(&old);
	strbuf_release(&now);
	return ret;
}

int knob_mkdir(struct knobs *k, const char *path, struct strbuf *err)
{
	if (!knob_path_allowed(path) || strchr(path + 1, '/') == NULL) {
		strbuf_addf(err, "%s: not an allowed knob path (allowed: %s)", path,
			    knob_allowed_prefixes());
		return -1;
	}
	int lock = journal_lock(k, err);
	if (lock < 0)
		return -1;
	int ret = -1;
	push(k, path, KNOB_DIR, "");
	if (journal_save(k, err)) {
		pop_record(k);
		goto out;
	}
	char *full = xstrfmt("%s%s", k->root, path);
	if (mkdir(full, 0700)) {
		strbuf_addf(err, "%s: cannot create: %s", path, strerror(errno));
		pop_record(k);
		journal_save(k, err);
	} else {
		ret = 0;
	}
	free(full);
out:
	journal_unlock(lock);
	return ret;
}

int knob_restore_all(struct knobs *k, struct strbuf *err)
{
	return knob_restore_to(k, 0, err);
}

int knob_restore_to(struct knobs *k, int keep, struct strbuf *err)
{
	if ((size_t)(keep < 0 ? 0 : keep) >= k->nr)
		return 0; /* nothing to undo: no lock, no journal */
	int lock = journal_lock(k, err);
	int fails = restore_locked(k, keep, err);
	journal_unlock(lock); /* without the lock the restore is done all the same */
	return fails;
}

static int restore_locked(struct knobs *k, int keep, struct strbuf *err)
{
	int fails = 0;
	if (keep < 0)
		keep = 0;
	while (k->nr > (size_t)keep) {
		struct knob_change *c = &k->stack[--k->nr];
		struct strbuf e = STRBUF_INIT;
		if (undo_path(k->root, c->path, kind_name(c->kind), c->old, &e)) {
			fails++;
			strbuf_addf(err, "%srestore failed: %s", err->len ? "; " : "", e.buf);
		}
		strbuf_release(&e);
		free(c->path);
		free(c->old);
	}
	struct strbuf e = STRBUF_INIT;
	if (journal_save(k, &e)) {
		fails++;
		strbuf_addf(err, "%s%s", err->len ? "; " : "", e.buf);
	}
	strbuf_release(&e);
	return fails;
}

int knob_pending(const struct knobs *k)
{
	return (int)k->nr;
}
