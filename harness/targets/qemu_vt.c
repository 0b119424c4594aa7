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

static const char *const qemu_topo_keys[] = { "sockets", "dies", "cores", "threads", NULL };
#define QEMU_TOPO_MAX 256 /* the qemu target's cpus admit no more */

int qemu_topology_wants_dies(const json_t *topo)
{
	json_t *d = json_object_get(topo, "dies");
	return json_is_integer(d) && json_integer_value(d) > 1;
}

int qemu_topology_check(const json_t *topo, long long *cpus, int vt, int tcg,
			const struct qemu_version *v, const char *probe_err, const char *prefix,
			struct strbuf *err, struct qemu_topology *t)
{
	long long *lv[] = { &t->sockets, &t->dies, &t->cores, &t->threads };
	int given[4] = { 0 }, fill = -1;
	long long prod = 1;
	const char *key;
	json_t *e;

	if (!json_is_object(topo)) {
		strbuf_addf(err, "%stopology: must be an object {\"sockets\": S, \"dies\": D, "
				 "\"cores\": C, \"threads\": T} (each optional, an integer >= 1)",
			    prefix);
		return -1;
	}
	json_object_foreach((json_t *)topo, key, e) {
		size_t i = 0;
		while (qemu_topo_keys[i] && strcmp(qemu_topo_keys[i], key))
			i++;
		if (!qemu_topo_keys[i]) {
			strbuf_addf(err, "%stopology.%s: unknown key (valid: sockets, dies, cores, "
					 "threads)", prefix, key);
			return -1;
		}
	}
	for (size_t i = 0; i < 4; i++) {
		e = json_object_get(topo, qemu_topo_keys[i]);
		*lv[i] = 1;
		if (!e)
			continue;
		if (!json_is_integer(e) || json_integer_value(e) < 1 ||
		    json_integer_value(e) > QEMU_TOPO_MAX) {
			strbuf_addf(err, "%stopology.%s: must be an integer in 1..%d", prefix,
				    qemu_topo_keys[i], QEMU_TOPO_MAX);
			return -1;
		}
		*lv[i] = json_integer_value(e);
		given[i] = 1;
		prod *= *lv[i];
		if (prod > QEMU_TOPO_MAX) {
			strbuf_addf(err, "%stopology: more than %d vCPUs (the product of sockets, "
					 "dies, cores and threads)", prefix, QEMU_TOPO_MAX);
			return -1;
		}
	}
	/* the level that fills up to cpus: cores, else sockets */
	if (*cpus > 0)
		fill = !given[2] ? 2 : !given[0] ? 0 : -1;
	if (fill >= 0) {
		if (*cpus % prod) {
			strbuf_addf(err, "%stopology: cpus %lld is not a multiple of the levels given "
					 "(their product is %lld): the %s would not be whole",
				    prefix, *cpus, prod, qemu_topo_keys[fill]);
			return -1;
		}
		*lv[fill] = *cpus / prod;
		prod = *cpus;
	}
	if (*cpus > 0 && prod != *cpus) {
		strbuf_addf(err, "%stopology: sockets x dies x cores x threads = %lldx%lldx%lldx%lld "
				 "= %lld, but cpus is %lld: the product must equal cpus (leave out "
				 "cpus, or cores, to have it follow)",
			    prefix, t->sockets, t->dies, t->cores, t->threads, prod, *cpus);
		return -1;
	}
	if (vt && prod > QEMU_VT_MAX_CPUS) {
		strbuf_addf(err, "%stopology: %lldx%lldx%lldx%lld = %lld vCPUs; a virtual clock "
				 "runs 1 to %d",
			    prefix, t->sockets, t->dies, t->cores, t->threads, prod,
			    QEMU_VT_MAX_CPUS);
		return -1;
	}
	if ((vt || tcg) && t->threads > 1) {
		strbuf_addf(err, "%stopology.threads: %lld threads a core under TCG%s: its CPU "
				 "(qemu64, an AMD model without topoext) shows the guest no SMT "
				 "siblings, so the guest would build no SMT level; leave threads at 1",
			    prefix, t->threads, vt ? " (a virtual clock runs TCG)" : "");
		return -1;
	}
	if (t->dies > 1 && !(v && qemu_version_at_least(v, QEMU_TOPO_DIES_MAJOR,
							  QEMU_TOPO_DIES_MINOR))) {
		strbuf_addf(err, "%stopology.dies: more than one die needs qemu >= %d.%d on x86; ",
			    prefix, QEMU_TOPO_DIES_MAJOR, QEMU_TOPO_DIES_MINOR);
		if (v)
			strbuf_addf(err, "this qemu is %s (use sockets instead)", v->text);
		else
			strbuf_addf(err, "cannot tell this qemu's version: %s",
				    probe_err && *probe_err ? probe_err : "unknown");
		return -1;
	}
	*cpus = prod;
	return 0;
}
