/*
 * The sched domains a kernel built, read on the target and checked on the
 * controller; the format and the sources are in sched_domains.h.
 */
#include "harness/agent/sched_domains.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/util/cpulist.h"

#define SD_CPUS 4096   /* CPUs read at most */
#define SD_LEVELS 16   /* domains a CPU has at most (the kernel's are 3-6) */
#define SD_NAME 16     /* a domain's name: "SMT", "MC", "PKG", "NUMA" */

/* a run of CPUs a..b added to a list in the making */
static void add_range(struct strbuf *out, long a, long b)
{
	if (out->len)
		strbuf_addch(out, ',');
	if (a == b)
		strbuf_addf(out, "%ld", a);
	else
		strbuf_addf(out, "%ld-%ld", a, b);
}

int sched_domains_mask_list(const char *mask, struct strbuf *out)
{
	size_t n = strlen(mask), digits = 0;
	long start = -1, end = -2;

	strbuf_reset(out);
	if (!n || mask[0] == ',' || mask[n - 1] == ',')
		return -1;
	for (size_t i = 0; i < n; i++)
		if (mask[i] != ',' && !isxdigit((unsigned char)mask[i]))
			return -1;
	/* from the last digit (CPUs 0-3) to the first */
	for (size_t i = n; i-- > 0;) {
		if (mask[i] == ',')
			continue;
		int d = isdigit((unsigned char)mask[i]) ? mask[i] - '0'
							 : tolower((unsigned char)mask[i]) - 'a' + 10;
		for (int b = 0; b < 4; b++) {
			long cpu = (long)digits * 4 + b;
			if (!(d & (1 << b)))
				continue;
			if (cpu >= SD_CPUS)
				return -1;
			if (cpu == end + 1) {
				end = cpu;
				continue;
			}
			if (start >= 0)
				add_range(out, start, end);
			start = end = cpu;
		}
		digits++;
	}
	if (start >= 0)
		add_range(out, start, end);
	return 0;
}

/* /proc/schedstat's spans: span[cpu * SD_LEVELS + level] (malloc'd lists) */
static void schedstat_spans(const char *text, char **span, int ncpu)
{
	struct strbuf sb = STRBUF_INIT;
	int ver = 0, cpu = -1;
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (sscanf(p, "version %d", &ver) == 1)
			continue;
		if (!strncmp(p, "cpu", 3) && isdigit((unsigned char)p[3])) {
			cpu = atoi(p + 3);
			continue;
		}
		if (strncmp(p, "domain", 6) || !isdigit((unsigned char)p[6]) || cpu < 0 ||
		    cpu >= ncpu)
			continue;
		int level = atoi(p + 6);
		const char *q = p + 6;
		while (isdigit((unsigned char)*q))
			q++;
		/* version 17 (6.14) names the domain before its mask */
		for (int skip = ver >= 17 ? 2 : 1; skip > 0; skip--) {
			while (*q == ' ')
				q++;
			if (skip > 1)
				while (*q && *q != ' ' && *q != '\n')
					q++;
		}
		size_t k = strcspn(q, " \n");
		if (level >= SD_LEVELS || k == 0 || k > 1200)
			continue;
		char *mask = xstrfmt("%.*s", (int)k, q);
		if (!sched_domains_mask_list(mask, &sb) && sb.len) {
			free(span[cpu * SD_LEVELS + level]);
			span[cpu * SD_LEVELS + level] = strbuf_detach(&sb, NULL);
		}
		free(mask);
	}
	strbuf_release(&sb);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* the CPU numbers of DIR's cpuN entries, sorted; -1 when DIR cannot be read */
static int list_cpus(const char *dir, int *cpus, int max)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;
	if (!d)
		return -1;
	while ((de = readdir(d)) && n < max) {
		char *end;
		if (strncmp(de->d_name, "cpu", 3) || !isdigit((unsigned char)de->d_name[3]))
			continue;
		long c = strtol(de->d_name + 3, &end, 10);
		if (*end || c >= SD_CPUS)
			continue;
		cpus[n++] = (int)c;
	}
	closedir(d);
	qsort(cpus, (size_t)n, sizeof(*cpus), cmp_int);
	return n;
}

/* one CPU's levels into out ("MC{0-1}* DIE{0-3}", "none"); -1 with why,
 * which names the folder as shown (without the root) */
static int cpu_levels(const char *dir, const char *shown, int cpu, char *const *span, struct strbuf *out,
		      struct strbuf *why)
{
	char names[SD_LEVELS][SD_NAME];
	int nlev = 0, llc = -1;
	struct strbuf sb = STRBUF_INIT;
	strbuf_reset(out);
	for (; nlev < SD_LEVELS; nlev++) {
		char *p = xstrfmt("%s/cpu%d/domain%d/name", dir, cpu, nlev);
		strbuf_reset(&sb); /* strbuf_read_file appends */
		int r = strbuf_read_file(&sb, p, 256);
		free(p);
		if (r)
			break;
		strbuf_trim(&sb);
		int ok = sb.len > 0 && sb.len < SD_NAME && isupper((unsigned char)sb.buf[0]);
		for (size_t i = 0; ok && i < sb.len; i++)
			ok = isupper((unsigned char)sb.buf[i]) ||
			     isdigit((unsigned char)sb.buf[i]) || sb.buf[i] == '_';
		if (!ok) {
			strbuf_addf(why, "%s/cpu%d/domain%d/name: not a domain's name (capitals, "
					 "digits, _)", shown, cpu, nlev);
			strbuf_release(&sb);
			return -1;
		}
		snprintf(names[nlev], SD_NAME, "%s", sb.buf);
		p = xstrfmt("%s/cpu%d/domain%d/flags", dir, cpu, nlev);
		strbuf_reset(&sb);
		if (!strbuf_read_file(&sb, p, 4096) &&
		    (strstr(sb.buf, "SD_SHARE_PKG_RESOURCES") || strstr(sb.buf, "SD_SHARE_LLC")))
			llc = nlev;
		free(p);
	}
	strbuf_release(&sb);
	if (!nlev)
		strbuf_addstr(out, "none");
	for (int m = 0; m < nlev; m++) {
		const char *s = span[cpu * SD_LEVELS + m];
		strbuf_addf(out, "%s%s%s%s%s%s", m ? " " : "", names[m], s ? "{" : "", s ? s : "",
			    s ? "}" : "", m == llc ? "*" : "");
	}
	return 0;
}

int sched_domains_read(const char *root, struct strbuf *out, const char **source,
		       struct strbuf *why)
{
	static const char *const dirs[] = { "/sys/kernel/debug/sched/domains",
					    "/proc/sys/kernel/sched_domain" };
	int *cpus = xcalloc(SD_CPUS, sizeof(*cpus)), ncpu = -1, rc = -1;
	char **span = NULL, *dir = NULL;
	struct strvec per = STRVEC_INIT;
	struct strbuf sb = STRBUF_INIT, list = STRBUF_INIT;
	size_t d;

	strbuf_reset(out);
	for (d = 0; d < 2 && ncpu < 0; d++) {
		free(dir);
		dir = xstrfmt("%s%s", root, dirs[d]);
		ncpu = list_cpus(dir, cpus, SD_CPUS);
	}
	if (ncpu <= 0) {
		strbuf_addf(why, "%s: %s; %s: absent too (debugfs not mounted, or a kernel "
				 "without CONFIG_SCHED_DEBUG)",
			    dirs[0], ncpu < 0 ? strerror(errno) : "no cpuN in it", dirs[1]);
		goto out;
	}
	*source = dirs[d - 1];
	span = xcalloc((size_t)(cpus[ncpu - 1] + 1) * SD_LEVELS, sizeof(*span));
	char *ss = xstrfmt("%s/proc/schedstat", root);
	strbuf_reset(&sb);
	if (!strbuf_read_file(&sb, ss, 16 << 20))
		schedstat_spans(sb.buf, span, cpus[ncpu - 1] + 1);
	free(ss);
	for (int i = 0; i < ncpu; i++) {
		if (cpu_levels(dir, *source, cpus[i], span, &sb, why))
			goto out;
		strvec_push(&per, sb.buf);
	}
	/* the CPUs whose levels read the same, in one entry */
	unsigned char *done = xcalloc((size_t)ncpu, 1);
	for (int i = 0; i < ncpu; i++) {
		long start = -1, end = -2;
		if (done[i])
			continue;
		strbuf_reset(&list);
		for (int j = i; j < ncpu; j++) {
			if (done[j] || strcmp(per.v[i], per.v[j]))
				continue;
			done[j] = 1;
			if (cpus[j] == end + 1) {
				end = cpus[j];
				continue;
			}
			if (start >= 0)
				add_range(&list, start, end);
			start = end = cpus[j];
		}
		add_range(&list, start, end);
		strbuf_addf(out, "%scpu%s: %s", out->len ? "; " : "", list.buf, per.v[i]);
	}
	free(done);
	if (out->len > SCHED_DOMAINS_MAX) {
		strbuf_addf(why, "%zu bytes, more than the %d kept", out->len, SCHED_DOMAINS_MAX);
		strbuf_reset(out);
		goto out;
	}
	rc = 0;
out:
	if (span)
		for (int i = 0; i < (cpus[ncpu - 1] + 1) * SD_LEVELS; i++)
			free(span[i]);
	free(span);
	free(cpus);
	free(dir);
	strvec_clear(&per);
	strbuf_release(&sb);
	strbuf_release(&list);
	return rc;
}

/* a CPU list at *p up to one of the stop characters; -1 when empty or bad */
static int take_list(const char **p, const char *stop)
{
	size_t k = strspn(*p, "0123456789,-");
	if (!k || !(*p)[k] || !strchr(stop, (*p)[k]))
		return -1;
	char *l = xstrfmt("%.*s", (int)k, *p);
	int n = cpulist_count(l);
	free(l);
	*p += k;
	return n > 0 ? 0 : -1;
}

int sched_domains_parse(const char *text, struct strbuf *why)
{
	const char *p = text;
	int n = 0;
	size_t len = strlen(text);

	if (len > SCHED_DOMAINS_MAX) {
		strbuf_addf(why, "%zu bytes, more than %d", len, SCHED_DOMAINS_MAX);
		return -1;
	}
	for (;;) {
		if (strncmp(p, "cpu", 3))
			goto bad;
		p += 3;
		if (take_list(&p, ":") || strncmp(p, ": ", 2))
			goto bad;
		p += 2;
		if (!strncmp(p, "none", 4) && (p[4] == '\0' || p[4] == ';')) {
			p += 4;
		} else {
			for (;;) {
				size_t k = 0;
				if (!isupper((unsigned char)*p))
					goto bad;
				while (isupper((unsigned char)p[k]) || isdigit((unsigned char)p[k]) ||
				       p[k] == '_')
					k++;
				if (k >= SD_NAME)
					goto bad;
				p += k;
				if (*p == '{') {
					p++;
					if (take_list(&p, "}"))
						goto bad;
					p++;
				}
				if (*p == '*')
					p++;
				if (*p != ' ')
					break;
				p++;
			}
		}
		n++;
		if (!*p)
			return n;
		if (strncmp(p, "; ", 2))
			goto bad;
		p += 2;
	}
bad:
	strbuf_addf(why, "not \"cpuLIST: NAME{LIST} ...; ...\" (at byte %zu)", (size_t)(p - text));
	return -1;
}
