/*
 * What the two rtla drivers (timerlat.c, osnoise.c) share: the "cpus"
 * parameter's check, stripping the terminal escapes rtla writes even to a
 * pipe, and reading rtla's refusals. rtla 6.1 (Debian's rtla package, the
 * version of the 6.1 kernel) has text output only, no JSON; its parsers
 * live beside their drivers and keep the raw text (the run's stdout).
 *
 * A kernel without the osnoise/timerlat tracers (CONFIG_OSNOISE_TRACER,
 * CONFIG_TIMERLAT_TRACER; Debian's 6.1 kernel has neither) is found before
 * rtla runs: the drivers name their tracer (workload_ops.tracer) and the
 * session skips the run when the booted kernel's available_tracers (sysinfo
 * "tracers") lacks it. When that list is not known (an older agent), rtla
 * runs and fails: on Debian's 6.1 kernel with "Failed to set timerlat
 * period" / "Failed to apply CPUs config" then "Could not apply config"
 * (tests/data/rtla-6.1/, the debian-notracer captures); rtla_explain turns that
 * into the same skip with rtla's first line and the fragment that adds the
 * tracers (kernels/fragments/tracing.config).
 */
#include <ctype.h>
#include <string.h>

#include "harness/util/cpulist.h"
#include "workloads/parsers.h"
#include "workloads/workload.h"

double rtla_estimate(const json_t *p)
{
	return (double)param_int(p, "duration_s") + 1.5;
}

int rtla_check_cpus(const json_t *p, const char *path, struct strbuf *err)
{
	const char *cpus = json_string_value(json_object_get(p, "cpus"));
	if (!cpus)
		return 0;
	int n = cpulist_count(cpus);
	if (n <= 0 || n > 8192) {
		strbuf_addf(err, "%s.cpus: \"%s\" is not a CPU list like \"0-3,6\" (omit it for "
			    "every CPU)", path, cpus);
		return -1;
	}
	return 0;
}

char *rtla_strip_escapes(const char *in)
{
	struct strbuf sb = STRBUF_INIT;
	for (const char *p = in ? in : ""; *p; p++) {
		if (*p == '\033') {
			if (p[1] == '[') { /* CSI: ESC [ params final-byte */
				p += 2;
				while (*p && !(*p >= 0x40 && *p <= 0x7e))
					p++;
				if (!*p)
					break;
			} else if (p[1]) { /* ESC c (reset) and other two-byte ones */
				p++;
			}
			continue;
		}
		if (*p == '\r')
			continue;
		strbuf_addch(&sb, *p);
	}
	return strbuf_detach(&sb, NULL);
}

int rtla_explain(const char *tracer, const char *out, const char *err, struct strbuf *msg)
{
	/* what rtla 6.1 says when tracefs has no osnoise/ files or no such
	 * tracer ("Tracer timerlat not found!") */
	static const char *const no_tracer[] = {
		"Could not apply config", "Could not init osnoise", "Could not init timerlat",
		"not found!", "Could not find osnoise events",
	};
	const char *texts[] = { err ? err : "", out ? out : "" };
	for (int i = 0; i < 2; i++) {
		const char *s = texts[i];
		if (strstr(s, "needs root permission")) {
			strbuf_addf(msg, "rtla %s needs root (it writes tracefs)", tracer);
			return 1;
		}
		for (size_t k = 0; k < sizeof(no_tracer) / sizeof(no_tracer[0]); k++) {
			if (!strstr(s, no_tracer[k]))
				continue;
			/* rtla's first line says which step failed */
			size_t n = strcspn(s, "\n");
			strbuf_addf(msg, "unsupported by this kernel: rtla could not set up the %s "
				    "tracer (rtla: \"%.*s\"; it needs CONFIG_%s_TRACER: build a "
				    "variant with the \"tracing\" fragment, "
				    "kernels/fragments/tracing.config)", tracer, (int)(n > 200 ? 200 : n),
				    s, !strcmp(tracer, "timerlat") ? "TIMERLAT" : "OSNOISE");
			return 2;
		}
		/* trace.c: the tracer exists but may not be set in rtla's
		 * instance: the osnoise/timerlat tracers run one instance at a
		 * time, and an rtla killed earlier (a timeout) leaves its
		 * instance behind with the tracer on */
		if (strstr(s, "Failed to enable the ") || strstr(s, "Failed to enable timerlat tracer") ||
		    strstr(s, "Failed to enable osnoise tracer")) {
			strbuf_addf(msg, "rtla could not enable the %s tracer: another tracefs instance "
				    "holds the osnoise/timerlat tracers (an rtla killed earlier leaves "
				    "its instance in /sys/kernel/tracing/instances/ until it is removed "
				    "or the machine reboots)", tracer);
			return 1;
		}
	}
	return 0;
}

/* the next whitespace-separated token of *p, NUL-terminated into tok */
int rtla_token(const char **p, char *tok, size_t size)
{
	const char *s = *p;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s || *s == '\n')
		return 0;
	size_t n = 0;
	while (*s && !isspace((unsigned char)*s)) {
		if (n + 1 < size)
			tok[n++] = *s;
		s++;
	}
	tok[n] = 0;
	*p = s;
	return 1;
}
