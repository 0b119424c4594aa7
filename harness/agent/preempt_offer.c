/*
 * What a kernel offers (preempt_offer.h): the preemption modes of a kernel
 * from its config, by the rules of Kconfig.preempt in 6.1, 6.13 and 7.0,
 * and of the 6.12 RT patch set (Debian's linux-image-6.12-rt-amd64: lazy
 * and laziest backported).
 * Pure but for preempt_offer_of_file, through which the plan check
 * (harness/orchestrate/plan.c) and the qemu target's feasibility hook read
 * kernel folders' configs (a config that is no config refused, a FIFO
 * never waited on).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/agent/preempt_offer.h"
#include "harness/agent/sysinfo.h"

static const char *const mode_names[] = { "none", "voluntary", "full", "lazy", "laziest" };
#define NMODES (sizeof(mode_names) / sizeof(mode_names[0]))

unsigned preempt_mode_bit(const char *mode)
{
	for (unsigned i = 0; mode && i < NMODES; i++)
		if (!strcmp(mode, mode_names[i]))
			return 1u << i;
	return 0;
}

int preempt_offer_has(const struct preempt_offer *o, const char *mode)
{
	unsigned b = preempt_mode_bit(mode);
	return b && (o->modes & b);
}

void preempt_offer_modes(unsigned modes, struct strbuf *sb)
{
	int first = 1;
	for (unsigned i = 0; i < NMODES; i++)
		if (modes & (1u << i)) {
			strbuf_addf(sb, "%s%s", first ? "" : ", ", mode_names[i]);
			first = 0;
		}
	if (first)
		strbuf_addstr(sb, "no mode");
}

static int is_y(const char *config, const char *name)
{
	char v[8];
	const char *x = sysinfo_config_value(config, name, v, sizeof(v));
	return x && !strcmp(x, "y");
}

/* "X.Y" from the header "# Linux/ARCH X.Y.Z Kernel Configuration", else
 * from a release "X.Y.Z-..." */
static void version_of(const char *config, const char *release, int *major, int *minor)
{
	*major = *minor = 0;
	const char *p = config;
	for (int line = 0; p && *p && line < 8; line++) {
		int a, b;
		if (!strncmp(p, "# Linux/", 8)) {
			const char *sp = strchr(p + 8, ' ');
			const char *nl = strchr(p, '\n');
			if (sp && (!nl || sp < nl) && sscanf(sp + 1, "%d.%d", &a, &b) == 2 &&
			    a > 0) {
				*major = a;
				*minor = b;
				return;
			}
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	int a, b;
	if (release && sscanf(release, "%d.%d", &a, &b) == 2 && a > 0) {
		*major = a;
		*minor = b;
	}
}

int preempt_offer_decide(const char *config, const char *release, struct preempt_offer *o,
			 struct strbuf *why)
{
	memset(o, 0, sizeof(*o));
	version_of(config, release, &o->major, &o->minor);
	o->dynamic = is_y(config, "PREEMPT_DYNAMIC");
	o->rt = is_y(config, "PREEMPT_RT");
	o->lazy_arch = is_y(config, "ARCH_HAS_PREEMPT_LAZY");
	/* the laziest model of the RT patch set ("sched: Add laziest preempt
	 * model", in 6.12-rt, never merged upstream): a member of the choice,
	 * so the config lists it set or "is not set" wherever it exists */
	o->laziest = o->lazy_arch && (is_y(config, "PREEMPT_LAZIEST") ||
				      strstr(config, "# CONFIG_PREEMPT_LAZIEST is not set"));
	/* the choice "Preemption Model"; RT was a member of it until 6.12.
	 * PREEMPT_LAZY is the model only with ARCH_HAS_PREEMPT_LAZY (6.13 on):
	 * the 6.1 RT patch set (Debian's linux-image-rt-amd64) has an option of
	 * that name too, "def_bool y if HAVE_PREEMPT_LAZY && PREEMPT_RT", which
	 * is no member of the choice */
	if (is_y(config, "PREEMPT_LAZIEST") && o->laziest)
		o->built = PM_LAZIEST;
	else if (is_y(config, "PREEMPT_LAZY") && o->lazy_arch)
		o->built = PM_LAZY;
	else if (is_y(config, "PREEMPT"))
		o->built = PM_FULL;
	else if (is_y(config, "PREEMPT_VOLUNTARY"))
		o->built = PM_VOLUNTARY;
	else if (is_y(config, "PREEMPT_NONE"))
		o->built = PM_NONE;
	else if (o->rt)
		o->built = PM_FULL;
	if (!o->built) {
		strbuf_addstr(why, "the config names no preemption model (none of CONFIG_PREEMPT_NONE, "
				   "_VOLUNTARY, CONFIG_PREEMPT, _LAZY, _RT is y)");
		return -1;
	}
	if (!o->dynamic) {
		o->modes = o->built;
		return 0;
	}
	o->modes = PM_NONE | PM_VOLUNTARY | PM_FULL;
	if (o->lazy_arch)
		o->modes |= PM_LAZY;
	if (o->laziest)
		o->modes |= PM_LAZIEST;
	if (o->rt)
		o->modes &= ~(unsigned)(PM_NONE | PM_VOLUNTARY);
	if (o->major >= 7) {
		o->modes &= ~(unsigned)PM_NONE;
		if (o->lazy_arch)
			o->modes &= ~(unsigned)PM_VOLUNTARY;
	}
	return 0;
}

/* what a file of mode m is, for the message */
static const char *file_kind(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a folder" : S_ISCHR(m) ? "a character device"
	       : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

#define CONFIG_MAX (16 << 20)

int preempt_offer_of_file(const char *path, const char *release, struct preempt_offer *o,
			  struct strbuf *why)
{
	/* O_NONBLOCK: opening a FIFO must not wait for a writer */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0 && errno != EISDIR) {
		strbuf_addf(why, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fd < 0 ? stat(path, &st) : fstat(fd, &st)) {
		strbuf_addf(why, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		strbuf_addf(why, "%s is %s, not a kernel config (a regular file of CONFIG_ lines)",
			    path, file_kind(st.st_mode));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (st.st_size > CONFIG_MAX) {
		strbuf_addf(why, "%s: %lld bytes, not a kernel config (at most %d)", path,
			    (long long)st.st_size, CONFIG_MAX);
		close(fd);
		return -1;
	}
	struct strbuf text = STRBUF_INIT;
	char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || text.len + (size_t)n > CONFIG_MAX) {
			strbuf_addf(why, "%s: %s", path, n < 0 ? strerror(errno) : "grew past 16 MiB");
			close(fd);
			strbuf_release(&text);
			return -1;
		}
		strbuf_add(&text, buf, (size_t)n);
	}
	close(fd);
	int rc = 1;
	struct strbuf e = STRBUF_INIT;
	if (memchr(text.buf, '\0', text.len)) {
		strbuf_addf(why, "%s is not a kernel config: it is not text (a NUL byte)", path);
		rc = -1;
	} else if (preempt_offer_decide(text.buf, release, o, &e)) {
		strbuf_addf(why, "%s is not a kernel config: %s", path, e.buf);
		rc = -1;
	}
	strbuf_release(&e);
	strbuf_release(&text);
	return rc;
}

void preempt_offer_describe(const struct preempt_offer *o, struct strbuf *sb)
{
	preempt_offer_modes(o->modes, sb);
	strbuf_addstr(sb, " (");
	if (o->rt)
		strbuf_addstr(sb, "PREEMPT_RT, ");
	if (o->dynamic)
		strbuf_addstr(sb, "PREEMPT_DYNAMIC, built ");
	else
		strbuf_addstr(sb, "no PREEMPT_DYNAMIC: only its built model, ");
	preempt_offer_modes(o->built, sb);
	if (o->major)
		strbuf_addf(sb, "; Linux %d.%d)", o->major, o->minor);
	else
		strbuf_addstr(sb, "; version unknown: the 7.0 rules not applied)");
}

void preempt_effective_of(const char *cur, const char *built, int dynamic, int rt,
			  struct preempt_effective *e)
{
	e->mode = e->model = NULL;
	if (built && !strcmp(built, "unknown"))
		built = NULL;
	if (cur && *cur) {
		e->mode = preempt_mode_bit(cur) ? mode_names[__builtin_ctz(preempt_mode_bit(cur))]
						: NULL;
	} else if (!dynamic && built) {
		/* no runtime mode: the built model (RT: full) */
		e->mode = !strcmp(built, "rt") ? "full" : built;
		if (!preempt_mode_bit(e->mode))
			e->mode = NULL;
	}
	if (!e->mode)
		return;
	e->model = e->mode;
	if (rt && !strcmp(e->mode, "full"))
		e->model = "rt";
	else if (rt && !strcmp(e->mode, "lazy"))
		e->model = "rt-lazy";
	else if (rt && !strcmp(e->mode, "laziest"))
		e->model = "rt-laziest";
}

static int has_word(const char *s, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = s; p && (p = strstr(p, w)); p += n)
		if ((p == s || p[-1] == ' ') && (p[n] == ' ' || !p[n] || p[n] == '\n'))
			return 1;
	return 0;
}

void preempt_effective_sysinfo(const json_t *si, struct preempt_effective *e)
{
	const char *built = sysinfo_str(si, "preempt_build");
	const char *ver = sysinfo_str(si, "kernel_version");
	json_t *dyn = sysinfo_value(si, "preempt_dynamic");
	int d = json_is_true(dyn) ? 1 : json_is_false(dyn) ? 0 : -1;
	int rt = (built && !strcmp(built, "rt")) || (ver && has_word(ver, "PREEMPT_RT"));
	preempt_effective_of(sysinfo_str(si, "preempt"), built, d, rt, e);
}

const char *preempt_model_mode(const char *model)
{
	if (model && !strcmp(model, "rt"))
		return "full";
	if (model && !strcmp(model, "rt-lazy"))
		return "lazy";
	if (model && !strcmp(model, "rt-laziest"))
		return "laziest";
	return model;
}
