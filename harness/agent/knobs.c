/*
 * Knob writes with an allow-list and an undo stack (struct knobs, owned by
 * the caller); see knobs.h. knob_set reads the old state, writes, reads
 * back and pushes one record; knob_restore_to pops records newest first and
 * writes each old state back.
 */
#include "harness/agent/knobs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/agent/sysinfo.h"

static const char *const allowed[] = {
	"/sys/kernel/debug/sched/",
	"/proc/sys/kernel/",
	"/sys/devices/system/cpu/",
	NULL,
};

enum knob_kind { KNOB_PLAIN, KNOB_CHOICE, KNOB_FEATURES };

struct knob_change {
	char *path;
	enum knob_kind kind;
	char *old;      /* plain: content; choice: chosen token; features: inverse token */
};

void knobs_init(struct knobs *k, const char *root)
{
	memset(k, 0, sizeof(*k));
	k->root = root ? root : "";
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
	return "/sys/kernel/debug/sched/, /proc/sys/kernel/, /sys/devices/system/cpu/";
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
	return read_path(k->root, path, out, err);
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
	if (!value || strchr(value, '\n') || (kind == KNOB_FEATURES && strchr(value, ' '))) {
		strbuf_addf(err, "%s: invalid value \"%s\"%s", path, value ? value : "",
			    kind == KNOB_FEATURES ? " (one feature token at a time)" : "");
		return -1;
	}
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
	if (write_path(root, path, value, err))
		goto out;
	if (read_path(root, path, &now, err))
		goto out;
	int ok = 1;
	if (kind == KNOB_FEATURES)
		ok = features_has(now.buf, value);
	else if (kind == KNOB_CHOICE) {
		char c2[64];
		ok = !sysinfo_parse_preempt(now.buf, c2, sizeof(c2), NULL) && !strcmp(c2, value);
	}
	push(k, path, kind, kind == KNOB_FEATURES ? inverse : kind == KNOB_CHOICE ? cur : old.buf);
	if (!ok) {
		strbuf_addf(err, "%s: wrote \"%s\" but it reads back as \"%s\"", path, value, now.buf);
		/* undo this change only: earlier ones (a boot's preempt mode) stay */
		knob_restore_to(k, (int)k->nr - 1, err);
		goto out;
	}
	if (info)
		*info = json_pack("{s:s,s:s,s:s,s:s}", "path", path, "old",
				  kind == KNOB_PLAIN ? old.buf : kind == KNOB_CHOICE ? cur : inverse,
				  "new", value, "readback", now.buf);
	ret = 0;
out:
	strbuf_release(&old);
	strbuf_release(&now);
	return ret;
}

int knob_restore_all(struct knobs *k, struct strbuf *err)
{
	return knob_restore_to(k, 0, err);
}

int knob_restore_to(struct knobs *k, int keep, struct strbuf *err)
{
	int fails = 0;
	if (keep < 0)
		keep = 0;
	while (k->nr > (size_t)keep) {
		struct knob_change *c = &k->stack[--k->nr];
		struct strbuf e = STRBUF_INIT;
		if (write_path(k->root, c->path, c->old, &e)) {
			fails++;
			strbuf_addf(err, "%srestore failed: %s", err->len ? "; " : "", e.buf);
		}
		strbuf_release(&e);
		free(c->path);
		free(c->old);
	}
	return fails;
}

int knob_pending(const struct knobs *k)
{
	return (int)k->nr;
}
