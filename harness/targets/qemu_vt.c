/*
 * Which qemu the qemu target runs and whether it can run a virtual clock on
 * more than one vCPU; see qemu_vt.h. The rules (the version's parse, the
 * admission) are pure functions; the probe runs `BINARY -version` through
 * harness/util/proc.c once per binary and process.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/targets/qemu_vt.h"
#include "harness/targets/target.h"
#include "harness/util/proc.h"

#define QEMU_VT_SYSTEM "qemu-system-x86_64"

int qemu_version_parse(const char *text, struct qemu_version *v)
{
	static const char head[] = "QEMU emulator version ";
	const char *p = text ? strstr(text, head) : NULL;
	int n = 0;

	memset(v, 0, sizeof(*v));
	/* the first line only: the version is there, the copyright below */
	if (!p || memchr(text, '\n', (size_t)(p - text)))
		return -1;
	p += sizeof(head) - 1;
	if (sscanf(p, "%d.%d%n", &v->major, &v->minor, &n) != 2 || v->major < 0 ||
	    v->minor < 0 || !isdigit((unsigned char)*p))
		return -1;
	if (p[n] == '.' && isdigit((unsigned char)p[n + 1]))
		v->micro = atoi(p + n + 1);
	snprintf(v->text, sizeof(v->text), "%d.%d.%d", v->major, v->minor, v->micro);
	return 0;
}

int qemu_version_at_least(const struct qemu_version *v, int major, int minor)
{
	return v->major > major || (v->major == major && v->minor >= minor);
}

char *qemu_vt_provided_path(void)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	if (x && *x)
		return xstrfmt("%s/schedlab/qemu-vt/qemu-system-x86_64", x);
	if (home && *home)
		return xstrfmt("%s/.cache/schedlab/qemu-vt/qemu-system-x86_64", home);
	return NULL;
}

char *qemu_vt_binary(const json_t *conf, int *fallback)
{
	const char *q = json_string_value(json_object_get(conf, "qemu"));
	if (fallback)
		*fallback = 0;
	if (q)
		return xstrdup(q);
	if (target_clock_virtual(conf)) {
		char *p = qemu_vt_provided_path();
		if (p && access(p, X_OK) == 0)
			return p;
		free(p);
		if (fallback)
			*fallback = 1;
	}
	return xstrdup(QEMU_VT_SYSTEM);
}

/* the answers so far: one a binary (a plan names one or two) */
struct qemu_vt_seen {
	char *binary;
	int ok;
	struct qemu_version v;
	char *err;
};
static struct qemu_vt_seen *qemu_vt_seen;
static size_t qemu_vt_nseen;

int qemu_version_probe(const char *binary, struct qemu_version *v, struct strbuf *err)
{
	struct qemu_vt_seen *s = NULL;
	for (size_t i = 0; i < qemu_vt_nseen && !s; i++)
		if (!strcmp(qemu_vt_seen[i].binary, binary))
			s = &qemu_vt_seen[i];
	if (!s) {
		const char *argv[] = { binary, "-version", NULL };
		struct strbuf out = STRBUF_INIT, eo = STRBUF_INIT, e = STRBUF_INIT;
		struct proc_result res;
		qemu_vt_seen = xrealloc(qemu_vt_seen, (qemu_vt_nseen + 1) * sizeof(*qemu_vt_seen));
		s = &qemu_vt_seen[qemu_vt_nseen++];
		memset(s, 0, sizeof(*s));
		s->binary = xstrdup(binary);
		if (proc_capture(argv, 30, &out, &eo, &res, &e) < 0) {
			s->err = xstrfmt("cannot run %s -version: %s", binary, e.buf);
		} else if (res.exit_code != 0) {
			strbuf_trim(&eo);
			s->err = xstrfmt("%s -version failed (%s %d)%s%.200s", binary,
					 res.exit_code < 0 ? "signal" : "status",
					 res.exit_code < 0 ? res.term_signal : res.exit_code,
					 eo.len ? ": " : "", eo.buf);
		} else if (qemu_version_parse(out.buf, &s->v) < 0) {
			strbuf_trim(&out);
			s->err = xstrfmt("%s -version: no \"QEMU emulator version X.Y\" in its "
					 "answer \"%.80s\"", binary, out.buf);
		} else {
			s->ok = 1;
		}
		strbuf_release(&out);
		strbuf_release(&eo);
		strbuf_release(&e);
	}
	if (!s->ok) {
		strbuf_addstr(err, s->err);
		return -1;
	}
	*v = s->v;
	return 0;
}

int qemu_vt_admit(long long cpus, const struct qemu_version *v, const char *probe_err,
		  const char *binary, int fallback, const char *prefix, struct strbuf *err)
{
	if (cpus <= 1)
		return 0;
	if (cpus > QEMU_VT_MAX_CPUS) {
		strbuf_addf(err, "%scpus: a virtual clock runs 1 to %d vCPUs, not %lld (qemu "
				 "executes them in turns in one host thread: each one more costs "
				 "a guest second's host time again)",
			    prefix, QEMU_VT_MAX_CPUS, cpus);
		return -1;
	}
	if (v && qemu_version_at_least(v, QEMU_VT_MIN_MAJOR, QEMU_VT_MIN_MINOR))
		return 0;
	strbuf_addf(err, "%scpus: %lld vCPUs on a virtual clock need qemu >= %d.%d (older "
			 "ones hang a guest's CPU bring-up under icount; docs/virtual-time.md); ",
		    prefix, cpus, QEMU_VT_MIN_MAJOR, QEMU_VT_MIN_MINOR);
	if (v)
		strbuf_addf(err, "%s is %s", binary, v->text);
	else
		strbuf_addstr(err, probe_err && *probe_err ? probe_err : binary);
	if (fallback)
		strbuf_addstr(err, ", and the provided qemu is missing: run `make -C kernels qemu`");
	else
		strbuf_addstr(err, ": run `make -C kernels qemu` and leave out target.qemu, or "
				   "name a newer qemu there");
	return -1;
}
