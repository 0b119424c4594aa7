/*
 * The pure parts of the lava target: its plan object and the LAVA job of a
 * boot configuration (see lava_job.h and docs/lab.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness/agent/protocol.h"
#include "harness/targets/lava_job.h"
#include "harness/targets/target.h"

/* a name LAVA uses in URLs and its database: device types, tags, users */
static int name_ok(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > 64)
		return 0;
	for (; *s; s++)
		if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') ||
		      ('0' <= *s && *s <= '9') || strchr("_.-", *s)))
			return 0;
	return 1;
}

static int url_ok(const char *s)
{
	if (strncmp(s, "http://", 7) && strncmp(s, "https://", 8))
		return 0;
	if (strlen(s) > 512)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f || strchr("\"'\\`<>", *s))
			return 0;
	return 1;
}

int lava_cmdline_ok(const char *s)
{
	if (strlen(s) > 1024)
		return 0;
	for (; *s; s++)
		if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') ||
		      ('0' <= *s && *s <= '9') || strchr(" _.,=:/+@-", *s)))
			return 0;
	return 1;
}

static int need_string(json_t *conf, const char *key, int (*ok)(const char *),
		       const char *what, const char *prefix, struct strbuf *err)
{
	json_t *v = json_object_get(conf, key);
	if (!json_is_string(v)) {
		strbuf_addf(err, "%s%s: %s %s (a string)", prefix, key, v ? "must be" : "required:",
			    what);
		return -1;
	}
	if (ok && !ok(json_string_value(v))) {
		strbuf_addf(err, "%s%s: must be %s, not '%s'", prefix, key, what,
			    json_string_value(v));
		return -1;
	}
	return 0;
}

/* the keys of a lava target, one line each (docs/lab.md's table is written
 * from it); the strings that go into a job or a URL are checked by
 * lava_conf_check after it */
const struct param_spec lava_options[] = {
	{ "url", PT_JSON, .kind = "string", .def_doc = "required",
	  .help = "the LAVA server's http:// or https:// URL (no spaces or quotes)" },
	{ "token_file", PT_JSON, .kind = "path", .def_doc = "required",
	  .help = "the file holding the API token (mode 600, one line); read at plan time" },
	{ "user", PT_JSON, .kind = "string", .def_doc = "required",
	  .help = "the LAVA user name (letters, digits, _ . -)" },
	{ "device_type", PT_JSON, .kind = "string", .def_doc = "required",
	  .help = "the LAVA device type the jobs ask for (letters, digits, _ . -)" },
	{ "tags", PT_JSON, "[]", .kind = "array of strings",
	  .help = "at most 32 LAVA tag names the device must have" },
	{ "kernel", PT_JSON, "\"kernels/out/debian\"", .kind = "path",
	  .help = "a kernel folder or image, as for qemu" },
	{ "cpus", PT_INT, "2", 1, 256, .help = "vCPUs of the job's guest" },
	{ "memory_mb", PT_INT, "1024", 256, 1 << 20, .help = "memory of the job's guest" },
	{ "timeout_s", PT_REAL, "1800.0", 60, 86400, .help = "seconds a boot's job may take" },
	{ "append", PT_JSON, "\"\"", .kind = "string",
	  .help = "kernel parameters of every boot (letters, digits, spaces and _ . , = : / + @ -)" },
	{ "switch", PT_JSON, .kind = "string",
	  .help = "the plan's `switch`, written here by schedlab (every boot is a job)" },
	{ "agent", PT_JSON, .kind = "path", .def_doc = "next to schedlab",
	  .help = "the schedlab-agent binary put into the batch initramfs" },
	{ "tools", PT_JSON, .kind = "array of strings", .def_doc = "what the plan's workloads run",
	  .help = "host programs put into the initramfs, as qemu's `tools`" },
	{ "max_jobs", PT_INT, NULL, 1, 1024,
	  .def_doc = "one per device of the type and tags with health Good or Unknown",
	  .help = "jobs of the session in flight at once" },
	{ "log_max_mb", PT_INT, "32", 1, 1024, .help = "the job log kept with the boot (MB)" },
	{ "infra_retries", PT_INT, "1", 0, 5,
	  .help = "a boot whose job LAVA ended with an Infrastructure error before the agent "
		  "replied is stored failed and submitted again, this many times" },
	{ "artifacts", PT_JSON, .kind = "object", .def_doc = "`{\"serve\": \"file\"}`",
	  .help = "`{\"serve\": \"file\"}`, or `{\"serve\": \"http\", \"listen\": "
		  "\"IPV4:PORT\", \"url_host\": HOST}`: the controller serves the kernel and "
		  "initramfs (docs/lab.md)" },
	PARAM_END,
};

int lava_conf_check(json_t *conf, const char *prefix, struct strbuf *err)
{
	char path[128];
	snprintf(path, sizeof(path), "%.*s", (int)(strlen(prefix) ? strlen(prefix) - 1 : 0),
		 prefix);
	json_t *res = opts_resolve(lava_options, conf, path, "the lava target", 1, err);
	if (!res)
		return -1;
	json_object_update(conf, res);
	json_decref(res);
	if (need_string(conf, "url", url_ok,
			"the LAVA server's http:// or https:// URL (no spaces or quotes)", prefix,
			err) ||
	    need_string(conf, "token_file", NULL, "the file holding the API token", prefix, err) ||
	    need_string(conf, "user", name_ok, "a LAVA user name (letters, digits, _ . -)",
			prefix, err) ||
	    need_string(conf, "device_type", name_ok,
			"a LAVA device type (letters, digits, _ . -)", prefix, err))
		return -1;
	json_t *tags = json_object_get(conf, "tags");
	{
		size_t i;
		json_t *t;
		if (!json_is_array(tags) || json_array_size(tags) > 32) {
			strbuf_addf(err, "%stags: must be an array of at most 32 tag names", prefix);
			return -1;
		}
		json_array_foreach(tags, i, t) {
			if (!json_is_string(t) || !name_ok(json_string_value(t))) {
				strbuf_addf(err, "%stags[%zu]: must be a LAVA tag name (letters, "
						 "digits, _ . -)", prefix, i);
				return -1;
			}
		}
	}
	json_t *ap = json_object_get(conf, "append");
	if (!json_is_string(ap) || !lava_cmdline_ok(json_string_value(ap))) {
		strbuf_addf(err, "%sappend: must be kernel parameters (letters, digits, spaces "
				 "and _ . , = : / + @ -)", prefix);
		return -1;
	}
	if (need_string(conf, "kernel", NULL, "a kernel folder or image", prefix, err))
		return -1;
	return lava_artifacts_check(conf, prefix, err);
}

int lava_artifacts_check(json_t *conf, const char *prefix, struct strbuf *err)
{
	static const char *const keys[] = { "serve", "listen", "url_host", NULL };
	static const char *const serves[] = { "file", "http", NULL };
	json_t *a = json_object_get(conf, "artifacts");
	char path[160];
	if (!a) {
		json_object_set_new(conf, "artifacts", json_pack("{s:s}", "serve", "file"));
		return 0;
	}
	snprintf(path, sizeof(path), "%sartifacts", prefix);
	if (!json_is_object(a)) {
		strbuf_addf(err, "%s: must be an object: {\"serve\": \"file\"} or {\"serve\": "
				 "\"http\", \"listen\": \"ADDR:PORT\", \"url_host\": \"HOST\"}", path);
		return -1;
	}
	char *pfx = xstrfmt("%s.", path);
	int bad = conf_check_keys(a, keys, path, "artifacts", err) ||
		  conf_choice(a, "serve", "file", serves, pfx, err);
	free(pfx);
	if (bad)
		return -1;
	const char *serve = json_string_value(json_object_get(a, "serve"));
	json_t *l = json_object_get(a, "listen"), *h = json_object_get(a, "url_host");
	if (!strcmp(serve, "file")) {
		if (l || h) {
			strbuf_addf(err, "%s: listen and url_host go with \"serve\": \"http\"", path);
			return -1;
		}
		return 0;
	}
	char host[256];
	int port;
	if (!l)
		json_object_set_new(a, "listen", json_string("127.0.0.1:0"));
	if (!json_is_string(json_object_get(a, "listen")) ||
	    lava_hostport(json_string_value(json_object_get(a, "listen")), host, sizeof(host),
			  &port)) {
		strbuf_addf(err, "%s.listen: must be IPV4:PORT (\"127.0.0.1:0\": loopback, any free "
				 "port; \"0.0.0.0:8200\": every interface)", path);
		return -1;
	}
	if (h && (!json_is_string(h) || !lava_host_ok(json_string_value(h)))) {
		strbuf_addf(err, "%s.url_host: must be the host name or address the LAVA worker "
				 "reaches this controller at (letters, digits, . -)", path);
		return -1;
	}
	if (!h && !strcmp(host, "0.0.0.0")) {
		strbuf_addf(err, "%s.url_host: required when listen is 0.0.0.0 (the host name the "
				 "LAVA worker reaches this controller at)", path);
		return -1;
	}
	return 0;
}

int lava_host_ok(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > 253)
		return 0;
	for (; *s; s++)
		if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') ||
		      ('0' <= *s && *s <= '9') || *s == '.' || *s == '-'))
			return 0;
	return 1;
}

int lava_hostport(const char *s, char *host, size_t hlen, int *port)
{
	const char *c = strrchr(s, ':');
	unsigned a[4];
	char tail;
	if (!c || (size_t)(c - s) >= hlen || !c[1] || strlen(c + 1) > 5)
		return -1;
	memcpy(host, s, (size_t)(c - s));
	host[c - s] = '\0';
	if (sscanf(host, "%u.%u.%u.%u%c", &a[0], &a[1], &a[2], &a[3], &tail) != 4 ||
	    a[0] > 255 || a[1] > 255 || a[2] > 255 || a[3] > 255)
		return -1;
	long p = 0;
	for (const char *q = c + 1; *q; q++) {
		if (*q < '0' || *q > '9')
			return -1;
		p = p * 10 + (*q - '0');
	}
	if (p > 65535)
		return -1;
	*port = (int)p;
	return 0;
}

int lava_usable_devices(const json_t *devices, const json_t *tags, const json_t *want,
			const char *device_type, struct strbuf *why)
{
	/* the ids of the wanted tag names */
	json_t *ids = json_array();
	size_t i, k;
	json_t *w, *t, *d;
	int n = 0;
	json_array_foreach(want, i, w) {
		int found = 0;
		json_array_foreach(tags, k, t)
			if (json_is_string(json_object_get(t, "name")) &&
			    !strcmp(json_string_value(json_object_get(t, "name")), json_string_value(w))) {
				json_array_append(ids, json_object_get(t, "id"));
				found = 1;
			}
		if (!found) {
			strbuf_addf(why, "LAVA has no tag \"%s\"", json_string_value(w));
			json_decref(ids);
			return 0;
		}
	}
	json_array_foreach(devices, i, d) {
		const char *dt = json_string_value(json_object_get(d, "device_type"));
		const char *h = json_string_value(json_object_get(d, "health"));
		if (!dt || strcmp(dt, device_type) || !h || (strcmp(h, "Good") && strcmp(h, "Unknown")))
			continue;
		json_t *dtags = json_object_get(d, "tags");
		int all = 1;
		json_array_foreach(ids, k, t) {
			int has = 0;
			size_t q;
			json_t *v;
			json_array_foreach(dtags, q, v)
				if (json_is_integer(v) && json_integer_value(v) == json_integer_value(t))
					has = 1;
			all &= has;
		}
		n += all;
	}
	json_decref(ids);
	if (!n)
		strbuf_addf(why, "LAVA has no device of type %s%s with health Good or Unknown",
			    device_type, json_array_size(want) ? " and the target's tags" : "");
	return n;
}

json_t *lava_job(const json_t *conf, const struct lava_job_in *in, struct strbuf *err)
{
	if (!lava_cmdline_ok(in->cmdline)) {
		strbuf_addf(err, "lava: kernel command line '%s': only letters, digits, spaces "
				 "and _ . , = : / + @ - can go into a LAVA qemu job", in->cmdline);
		return NULL;
	}
	const char *urls[2] = { in->kernel_url, in->initrd_url };
	for (int i = 0; i < 2; i++) {
		const char *u = urls[i];
		if (!u || (strncmp(u, "file:///", 8) && !url_ok(u)) || strpbrk(u, " \"'\\\n")) {
			strbuf_addf(err, "lava: artifact URL '%s': must be file:///... or "
					 "http(s)://... without spaces or quotes", u ? u : "(none)");
			return NULL;
		}
	}
	int minutes = (int)((in->timeout_s + 59) / 60);
	char append[1200], smp[32];
	snprintf(append, sizeof(append), "-kernel {kernel} -append \"%s\"", in->cmdline);
	snprintf(smp, sizeof(smp), "-smp %d", in->cpus > 0 ? in->cpus : 1);
	json_t *tags = json_object_get(conf, "tags");
	tags = json_is_array(tags) ? json_incref(tags) : json_array();
	json_t *job = json_pack(
		"{s:s, s:s, s:o, s:{s:{s:i}, s:{s:i}, s:{s:i}}, s:s, s:s,"
		" s:{s:s, s:b, s:i, s:[s,s,s]},"
		" s:[{s:{s:s, s:{s:i}, s:{s:{s:s, s:s}, s:{s:s, s:s}}}},"
		"    {s:{s:s, s:s, s:{s:i}, s:[s]}}]}",
		"device_type", json_string_value(json_object_get(conf, "device_type")),
		"job_name", in->name ? in->name : "schedlab", "tags", tags,
		"timeouts", "job", "minutes", minutes + 5, "action", "minutes", minutes,
		"connection", "minutes", 2, "priority", "medium", "visibility", "public",
		"context", "arch", "amd64", "no_kvm", 1, "memory", in->memory_mb > 0 ? in->memory_mb : 1024, "extra_options", smp,
		"-no-reboot", "-accel tcg,thread=single", /* as the qemu target: docs/qemu.md */
		"actions", "deploy", "to", "tmpfs", "timeout", "minutes", 5, "images", "kernel",
		"image_arg", append, "url", in->kernel_url, "ramdisk", "image_arg",
		"-initrd {ramdisk}", "url", in->initrd_url, "boot", "method", "qemu", "media",
		"tmpfs", "timeout", "minutes", minutes, "prompts", LAVA_END_PROMPT);
	if (!job)
		strbuf_addstr(err, "lava: cannot build the job");
	return job;
}

/* ---- reading a job's log -------------------------------------------------- */

static int on_msg(void *ctx, unsigned seq, const char *msg, size_t len)
{
	struct lava_log *l = ctx;
	json_t *m = json_loadb(msg, len, 0, NULL);
	if (!json_is_object(m)) {
		json_decref(m);
		return 0;
	}
	if (seq == 0 && json_object_get(m, "agent")) {
		json_decref(l->banner);
		l->banner = m;
		return 0;
	}
	json_t *id = json_object_get(m, "id");
	if (json_is_integer(id) && json_integer_value(id) > 0 &&
	    json_integer_value(id) <= l->max_id) {
		char key[32];
		snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(id));
		json_object_set(l->replies, key, m);
	}
	json_decref(m);
	return 0;
}

void lava_log_init(struct lava_log *l, long max_id)
{
	memset(l, 0, sizeof(*l));
	l->replies = json_object();
	l->max_id = max_id;
	strbuf_init(&l->reason, 0);
	strbuf_init(&l->console, 0);
	frame_dec_init(&l->dec, on_msg, l);
}

/* LAVA's verdict: - {"dt": ..., "msg": {"error_type": ..., "error_msg": ...}} */
static void verdict(struct lava_log *l, const char *line, size_t len)
{
	if (len < 3 || strncmp(line, "- {", 3) || !memmem(line, len, "error_msg", 9) ||
	    l->reason.len)
		return;
	json_t *j = json_loadb(line + 2, len - 2, 0, NULL);
	json_t *m = json_object_get(j, "msg");
	const char *msg = json_string_value(json_object_get(m, "error_msg"));
	const char *type = json_string_value(json_object_get(m, "error_type"));
	if (msg) {
		strbuf_addf(&l->reason, "%.40s error: %.400s", type ? type : "LAVA", msg);
		/* one line: LAVA's messages may end in a newline */
		for (size_t i = 0; i < l->reason.len; i++)
			if ((unsigned char)l->reason.buf[i] < ' ')
				l->reason.buf[i] = ' ';
		while (l->reason.len && l->reason.buf[l->reason.len - 1] == ' ')
			l->reason.buf[--l->reason.len] = '\0';
	}
	json_decref(j);
}

/* a line the device printed that shows the kernel failing: the messages
 * LAVA's kernel-messages watcher matches (its own debug lines list them
 * too, so only "target" lines count) */
static int kernel_failure(const char *line, size_t len)
{
	static const char *const sig[] = { "Kernel panic - not syncing", "Oops: ", "Oops - ",
					   "BUG: ", "kernel BUG at", "invalid opcode:",
					   "Unhandled fault", NULL };
	if (!memmem(line, len, "\"lvl\": \"target\"", 15))
		return 0;
	for (size_t i = 0; sig[i]; i++)
		if (memmem(line, len, sig[i], strlen(sig[i])))
			return 1;
	return 0;
}

void lava_log_line(struct lava_log *l, const char *line, size_t len)
{
	if (!line || !len)
		return;
	frame_dec_line(&l->dec, line, len);
	verdict(l, line, len);
	if (!l->kernel_failed && kernel_failure(line, len))
		l->kernel_failed = 1;
	if (memmem(line, len, "SLB1 ", 5))
		return;
	strbuf_add(&l->console, line, len);
	strbuf_addch(&l->console, '\n');
	if (l->console.len > 128 * 1024) {
		size_t cut = l->console.len - 64 * 1024;
		memmove(l->console.buf, l->console.buf + cut, l->console.len - cut + 1);
		l->console.len -= cut;
	}
}

void lava_log_finish(struct lava_log *l)
{
	frame_dec_finish(&l->dec);
	if (l->dec.corrupt)
		strbuf_addf(&l->reason, "%s%u corrupt frames in the job log (%s)",
			    l->reason.len ? "; " : "", l->dec.corrupt, l->dec.last_error.buf);
}

void lava_log_release(struct lava_log *l)
{
	json_decref(l->banner);
	json_decref(l->replies);
	strbuf_release(&l->reason);
	strbuf_release(&l->console);
	frame_dec_release(&l->dec);
	memset(l, 0, sizeof(*l));
}

json_t *lava_log_reply(const struct lava_log *l, long id)
{
	char key[32];
	snprintf(key, sizeof(key), "%ld", id);
	return json_object_get(l->replies, key);
}

json_t *lava_log_result(const struct lava_log *l, long id, const char *op, struct strbuf *why,
			int *refused)
{
	json_t *r = lava_log_reply(l, id);
	*refused = 0;
	if (!r) {
		strbuf_addf(why, "no reply to %s in the job's log", op);
		return NULL;
	}
	if (!json_is_true(json_object_get(r, "ok"))) {
		const char *e = json_string_value(json_object_get(r, "error"));
		strbuf_addf(why, "%.2000s", e ? e : "the agent refused it");
		*refused = 1;
		return NULL;
	}
	json_t *res = json_object_get(r, "result");
	if (agent_reply_check(op, res, why))
		return NULL;
	return res;
}

long long lava_keep_log(const char *file, size_t max, struct strbuf *out)
{
	FILE *f = fopen(file, "r");
	struct stat st;
	strbuf_reset(out);
	if (!f || fstat(fileno(f), &st)) {
		if (f)
			fclose(f);
		return -1;
	}
	size_t size = (size_t)st.st_size;
	if (size <= max) {
		strbuf_grow(out, size + 1);
		out->len = fread(out->buf, 1, size, f);
		out->buf[out->len] = '\0';
		fclose(f);
		return (long long)size;
	}
	/* the start up to its last whole line, the end from its first whole line */
	size_t head = max / 2, tail = max - head;
	char *h = xcalloc(head + 1, 1), *t = xcalloc(tail + 2, 1);
	size_t hn = fread(h, 1, head, f);
	char *nl = memrchr(h, '\n', hn);
	if (nl)
		hn = (size_t)(nl - h) + 1;
	size_t tn = 0, tstart = 0;
	if (fseeko(f, (off_t)(size - tail - 1), SEEK_SET) == 0) {
		tn = fread(t, 1, tail + 1, f);
		if (tn && t[0] != '\n') {
			char *q = memchr(t, '\n', tn);
			tstart = q ? (size_t)(q - t) : 0;
		}
		tstart++; /* past the newline before the first whole line */
		if (tstart > tn)
			tstart = tn;
	}
	char *note = xstrfmt("# schedlab: %zu bytes of the job log cut here (the log is %zu bytes; "
			     "kept: its first %zu and last %zu, target.log_max_mb)\n",
			     size - hn - (tn - tstart), size, hn, tn - tstart);
	strbuf_add(out, h, hn);
	strbuf_addstr(out, note);
	strbuf_add(out, t + tstart, tn - tstart);
	free(note);
	free(h);
	free(t);
	fclose(f);
	return (long long)size;
}
