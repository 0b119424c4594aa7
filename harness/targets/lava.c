/*
 * The lava target (issue 15, docs/lab.md): every boot of a session becomes
 * one LAVA job. LAVA owns the machine; there is no live connection to the
 * agent. boot() only prepares; batch_submit() gets every run of the boot at
 * once, writes the agent's requests (sysinfo, then per run its knob writes,
 * exec and knob restore) into a batch initramfs (initramfs_build with
 * agent_batch, the plan's tools with their libraries, and for the pgbench
 * workload PostgreSQL's files as a qemu guest gets them: pgfiles.h), writes the job with
 * lava_job.c (kernel and initramfs as file:// URLs: the dispatcher shares
 * this filesystem), submits it through LAVA's REST API with curl (the
 * child-process module; the token goes in a private header file, never on
 * a command line), follows it until it is Finished, downloads its log and
 * decodes the agent's SLB1 frames (harness/agent/frame.c; untrusted: the
 * log is bounded, every reply is checked like a live one). The session then
 * verifies the effective configuration from the sysinfo reply as for every
 * target (mismatch quarantined) and stores the rows. A job that did not
 * finish its runs gives LAVA's reason (error_type, error_msg) and the job
 * URL to the boot (failed, resumable) or to the runs without a reply. A
 * boot whose job LAVA ended with an Infrastructure error before the agent's
 * sysinfo, the kernel having printed no failure (the device or a connection
 * failed, as under load: "Connection closed"), is the lab's fault, not the
 * kernel's (boot_info.lab_fault): the session stores it failed and submits
 * it again, up to infra_retries times.
 *
 * Several boots are in flight at once (batch_submit / batch_wait /
 * batch_collect, driven by the session engine's loop, engine.c engine_execute,
 * with session_batch.c's driver): up to the target's max_jobs, by default one per device LAVA has for the job. Each job has
 * its own files in the private folder. The whole job log is kept with the
 * boot (its console, up to log_max_mb, cut in the middle with a note).
 * With "artifacts": {"serve": "http"} the kernel and initramfs of each job
 * are served by the controller (artserve.c) under a random prefix for as
 * long as the job runs, instead of as file:// URLs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/targets/artserve.h"
#include "harness/targets/batchio.h"
#include "harness/targets/initramfs.h"
#include "harness/targets/lava_job.h"
#include "harness/targets/pgfiles.h"
#include "harness/targets/target.h"
#include "harness/util/proc.h"

#define LAVA_LOG_MAX (256L << 20)   /* bytes of a job log we read at most */
#define LAVA_POLL_S 2.0

struct lava_priv {
	char dir[PATH_MAX];          /* private temporary folder (mode 700) */
	char hdr[PATH_MAX + 16];     /* curl header file with the token (mode 600) */
	char url[520];               /* the server (at most 512), no trailing / */
	unsigned seq;                /* jobs submitted: names their files */
	struct artserve *http;       /* the artifact server, started with the first job */
};

static int read_token(const char *file, const char *where, struct strbuf *tok,
		      struct strbuf *err);

static json_t *lava_check(const json_t *conf, const char *path, struct strbuf *err)
{
	const char *where = path ? path : "plan";
	if (!json_is_object(conf)) {
		strbuf_addf(err, "%s: target: must be an object", where);
		return NULL;
	}
	json_t *out = json_deep_copy(conf);
	char *prefix = xstrfmt("%s.", where);
	int bad = lava_conf_check(out, prefix, err);
	free(prefix);
	/* the token file now, so that a bad one is a plan error (exit 2,
	 * nothing stored) rather than a failed boot */
	if (!bad) {
		struct strbuf tok = STRBUF_INIT;
		char *w = xstrfmt("%s.token_file", where);
		bad = read_token(json_string_value(json_object_get(out, "token_file")), w, &tok,
				 err);
		free(w);
		strbuf_release(&tok);
	}
	if (bad) {
		json_decref(out);
		return NULL;
	}
	return out;
}

static void rm_dir(struct lava_priv *p)
{
	if (!p->dir[0])
		return;
	DIR *d = opendir(p->dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *f = xstrfmt("%s/%s", p->dir, e->d_name);
		unlink(f);
		free(f);
	}
	if (d)
		closedir(d);
	rmdir(p->dir);
	p->dir[0] = '\0';
}

/* the longest API token accepted (LAVA's are 32 to 64 characters) */
#define LAVA_TOKEN_MAX 255

/*
 * The API token from token_file: one line of letters, digits, _ and -, at
 * most LAVA_TOKEN_MAX characters, in a regular file not readable by group
 * or others (as ssh wants of a key). Opened without blocking (a FIFO would
 * wait for a writer forever) and checked with fstat before a byte is read.
 * Errors start with `where` ("target.token_file"). Called at plan time
 * (lava_check) and again when the session opens the target.
 */
static int read_token(const char *file, const char *where, struct strbuf *tok,
		      struct strbuf *err)
{
	struct stat st;
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		strbuf_addf(err, "%s: %s: %s", where, file, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	const char *why = !S_ISREG(st.st_mode) ? (S_ISDIR(st.st_mode) ? "a folder" : S_ISFIFO(
			  st.st_mode) ? "a FIFO" : "not a regular file") : NULL;
	if (why) {
		strbuf_addf(err, "%s: %s is %s (must be a file holding the API token)", where, file,
			    why);
		close(fd);
		return -1;
	}
	if (st.st_mode & 077) {
		strbuf_addf(err, "%s: %s is readable by group or others (mode %03o; chmod 600 it)",
			    where, file, (unsigned)(st.st_mode & 0777));
		close(fd);
		return -1;
	}
	char buf[LAVA_TOKEN_MAX + 64];
	size_t n = 0;
	while (n < sizeof(buf) - 1) {
		ssize_t r = read(fd, buf + n, sizeof(buf) - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			strbuf_addf(err, "%s: %s: %s", where, file, strerror(errno));
			close(fd);
			return -1;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	int longer = n == sizeof(buf) - 1 || st.st_size > (off_t)(sizeof(buf) - 1);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	if (!n && !longer) {
		strbuf_addf(err, "%s: %s is empty (it must hold the API token)", where, file);
		return -1;
	}
	if (longer || n > LAVA_TOKEN_MAX) {
		strbuf_addf(err, "%s: %s holds more than a token (%lld bytes; a token is at most "
			    "%d characters)", where, file, (long long)st.st_size, LAVA_TOKEN_MAX);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (!(('a' <= buf[i] && buf[i] <= 'z') || ('A' <= buf[i] && buf[i] <= 'Z') ||
		      ('0' <= buf[i] && buf[i] <= '9') || buf[i] == '_' || buf[i] == '-')) {
			strbuf_addf(err, "%s: %s must hold one API token (one line of letters, "
				    "digits, _ and -)", where, file);
			return -1;
		}
	strbuf_addstr(tok, buf);
	return 0;
}

static int lava_open(struct target *t, struct strbuf *err)
{
	struct lava_priv *p = xcalloc(1, sizeof(*p));
	struct strbuf tok = STRBUF_INIT;
	const char *tmp = getenv("TMPDIR");
	snprintf(p->dir, sizeof(p->dir), "%s/schedlab-lava.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(p->dir)) {
		strbuf_addf(err, "lava: cannot create a folder in %s: %s", tmp ? tmp : "/tmp",
			    strerror(errno));
		free(p);
		return -1;
	}
	t->priv = p;
	t->lab_retries = (int)json_integer_value(json_object_get(t->conf, "infra_retries"));
	snprintf(p->url, sizeof(p->url), "%s", json_string_value(json_object_get(t->conf, "url")));
	size_t ul = strlen(p->url);
	while (ul && p->url[ul - 1] == '/')
		p->url[--ul] = '\0';
	if (read_token(json_string_value(json_object_get(t->conf, "token_file")),
		       "lava: target.token_file", &tok, err))
		goto fail;
	snprintf(p->hdr, sizeof(p->hdr), "%s/auth", p->dir);
	int fd = open(p->hdr, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || dprintf(fd, "Authorization: Token %s\n", tok.buf) < 0) {
		strbuf_addf(err, "lava: %s: %s", p->hdr, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	close(fd);
	strbuf_release(&tok);
	return 0;
fail:
	strbuf_release(&tok);
	rm_dir(p);
	free(p);
	t->priv = NULL;
	return -1;
}

static void lava_close(struct target *t)
{
	struct lava_priv *p = t->priv;
	if (!p)
		return;
	artserve_stop(p->http);
	rm_dir(p);
	free(p);
	t->priv = NULL;
}

/* nothing is booted here: the boot happens in the job (batch_submit) */
static int lava_boot(struct target *t, const struct boot_spec *b, struct boot_info *bi,
		     struct strbuf *err)
{
	if (b->preempt && !target_preempt_known(b->preempt)) {
		strbuf_addf(err, "lava: unknown preempt mode \"%s\"", b->preempt);
		return -1;
	}
	snprintf(bi->method, sizeof(bi->method), "lava");
	return 0;
}

/* ---- the REST API through curl ----------------------------------------- */

/* curl ARGS... against the server; stdout in out (bounded); 0 or -1 */
static int curl(struct target *t, const char *const *args, struct strbuf *out, struct strbuf *err)
{
	struct lava_priv *p = t->priv;
	struct strvec av = STRVEC_INIT;
	struct strbuf eo = STRBUF_INIT;
	struct proc_result res;
	strvec_push(&av, "curl");
	strvec_push(&av, "-sS");
	strvec_push(&av, "--fail-with-body");
	strvec_push(&av, "--max-time");
	strvec_push(&av, "120");
	strvec_push(&av, "-H");
	char *h = xstrfmt("@%s", p->hdr);
	strvec_push(&av, h);
	free(h);
	for (; *args; args++)
		strvec_push(&av, *args);
	struct child c = CHILD_INIT;
	c.argv = strvec_argv(&av);
	c.out = PROC_PIPE;
	c.err = PROC_PIPE;
	c.in = PROC_NULL;
	c.new_pgrp = 1;
	const struct proc_io io = { .timeout_s = 150, .out = out, .out_max = 1 << 20, .errout = &eo,
				    .err_max = 4096, .abort_fd = -1, .abort_flag = t->abort_flag };
	int rc = proc_exec(&c, &io, &res, err);
	if (rc == 0 && res.exit_code != 0) {
		strbuf_addf(err, "lava: curl %s: exit %d: %s%s%.300s", av.v[av.nr - 1], res.exit_code,
			    eo.buf, eo.len && out->len ? "; " : "", out->buf);
		rc = -1;
	}
	strvec_clear(&av);
	strbuf_release(&eo);
	return rc ? -1 : 0;
}

/* GET <url>/api/v0.2/<what> as JSON */
static json_t *api_get(struct target *t, const char *what, struct strbuf *err)
{
	struct lava_priv *p = t->priv;
	struct strbuf out = STRBUF_INIT;
	char *u = xstrfmt("%s/api/v0.2/%s", p->url, what);
	const char *args[] = { u, NULL };
	json_t *j = NULL;
	if (curl(t, args, &out, err) == 0) {
		j = json_loads(out.buf, 0, NULL);
		if (!json_is_object(j)) {
			strbuf_addf(err, "lava: GET %s: not a JSON object: %.200s", u, out.buf);
			json_decref(j);
			j = NULL;
		}
	}
	free(u);
	strbuf_release(&out);
	return j;
}

/* submit the job (JSON, which LAVA reads as YAML); its id or -1 */
static long long submit(struct target *t, const json_t *job, unsigned seq, struct strbuf *err)
{
	struct lava_priv *p = t->priv;
	char *def = json_dumps(job, JSON_INDENT(1));
	json_t *body = json_pack("{s:s}", "definition", def);
	free(def);
	char *bf = xstrfmt("%s/submit-%u.json", p->dir, seq);
	long long id = -1;
	if (json_dump_file(body, bf, 0)) {
		strbuf_addf(err, "lava: cannot write %s", bf);
		goto out;
	}
	char *u = xstrfmt("%s/api/v0.2/jobs/", p->url);
	char *data = xstrfmt("@%s", bf);
	const char *args[] = { "-H", "Content-Type: application/json", "--data-binary", data,
			       u, NULL };
	struct strbuf out = STRBUF_INIT;
	if (curl(t, args, &out, err) == 0) {
		json_t *r = json_loads(out.buf, 0, NULL);
		json_t *ids = json_object_get(r, "job_ids");
		json_t *v = json_array_get(ids, 0);
		if (json_is_integer(v) && json_integer_value(v) > 0)
			id = json_integer_value(v);
		else
			strbuf_addf(err, "lava: submitting the job: unexpected answer %.300s", out.buf);
		json_decref(r);
	}
	strbuf_release(&out);
	free(u);
	free(data);
out:
	unlink(bf);
	free(bf);
	json_decref(body);
	return id;
}

/* ---- the batch ----------------------------------------------------------- */

/* the request ids of one run in the batch file */
/* read the job's log file (at most LAVA_LOG_MAX bytes) into l */
static int read_log(const char *file, struct lava_log *l, struct strbuf *err)
{
	return batch_read_log(file, "lava: the job log", LAVA_LOG_MAX, l, err);
}

/* a job in flight (the session's struct batch_job) */
struct batch_job {
	long long id;
	char url[600];              /* its web page */
	unsigned seq;               /* names its files in the private folder */
	char *reqfile, *logfile;
	struct batch_ids *ids;
	size_t n;
	long max_id;
	double t0, deadline;
	json_t *detail;             /* LAVA's job object once Finished */
	struct strbuf ferr;         /* why following it stopped, when it did */
	int ended;
	char http[48];              /* its prefix on the artifact server, "" = none */
	int initrd_hold;            /* initramfs_build's hold on its initramfs: the
				       worker fetches it by name when the job
				       runs, so no other process prunes it
				       until the job is freed */
};

static void job_free(struct target *t, struct batch_job *j)
{
	struct lava_priv *p = t->priv;
	if (!j)
		return;
	if (j->http[0] && p && p->http)
		artserve_remove(p->http, j->http);
	if (j->reqfile)
		unlink(j->reqfile);
	if (j->logfile)
		unlink(j->logfile);
	initramfs_release(&j->initrd_hold);
	free(j->reqfile);
	free(j->logfile);
	free(j->ids);
	json_decref(j->detail);
	strbuf_release(&j->ferr);
	free(j);
}

/* the kernel's and initramfs' URLs for job j: file://, or the artifact
 * server's (started with the first job that needs it) */
static int artifact_urls(struct target *t, struct batch_job *j, const char *image,
			 const char *initrd, char **kurl, char **iurl, struct strbuf *err)
{
	struct lava_priv *p = t->priv;
	const json_t *a = json_object_get(t->conf, "artifacts");
	const char *serve = json_string_value(json_object_get(a, "serve"));
	if (!serve || strcmp(serve, "http") || !j) {
		*kurl = xstrfmt("file://%s", image);
		*iurl = xstrfmt("file://%s", initrd);
		return 0;
	}
	const char *listen = json_string_value(json_object_get(a, "listen"));
	if (!p->http && !(p->http = artserve_start(listen ? listen : "127.0.0.1:0", err)))
		return -1;
	const char *names[] = { "kernel", "initrd" }, *paths[] = { image, initrd };
	if (artserve_add(p->http, names, paths, 2, j->http, sizeof(j->http), err))
		return -1;
	char host[256];
	int port;
	const char *uh = json_string_value(json_object_get(a, "url_host"));
	if (!uh) {
		lava_hostport(listen ? listen : "127.0.0.1:0", host, sizeof(host), &port);
		uh = host;
	}
	*kurl = xstrfmt("http://%s:%d%skernel", uh, artserve_port(p->http), j->http);
	*iurl = xstrfmt("http://%s:%d%sinitrd", uh, artserve_port(p->http), j->http);
	return 0;
}

/* the job of boot b with the batch file reqfile (for job j, NULL when only
 * shown); NULL with a message */
static json_t *make_job(struct target *t, const struct boot_spec *b, const char *reqfile,
			struct batch_job *j, struct strbuf *err)
{
	const char *kernel = b->kernel ? b->kernel
				       : json_string_value(json_object_get(t->conf, "kernel"));
	char image[PATH_MAX], config[PATH_MAX], release[128], initrd[PATH_MAX];
	struct strvec bins = STRVEC_INIT;
	struct pg_files pf = { STRVEC_INIT, STRVEC_INIT };
	struct initramfs_file *files = NULL;
	struct initramfs_spec spec;
	json_t *job = NULL;
	char *cfgdst = NULL, *kurl = NULL, *iurl = NULL;
	if (qemu_kernel_image(kernel, image, sizeof(image), config, sizeof(config), release,
			      sizeof(release), err) < 0)
		goto out;
	/* the plan's programs, and for pgbench the PostgreSQL server's files
	   (the same as a qemu guest's, harness/targets/pgfiles.h) */
	if (qemu_guest_binaries(t, &bins, err) < 0 ||
	    pg_initramfs_files(t->tools, &bins, &pf, "lava", err) < 0)
		goto out;
	memset(&spec, 0, sizeof(spec));
	spec.binaries = strvec_argv(&bins);
	files = xcalloc(2 + pf.paths.nr, sizeof(*files));
	files[0] = (struct initramfs_file){ reqfile, "/etc/schedlab/requests.jsonl", 0644, 0 };
	spec.files = files;
	spec.nr_files = 1;
	for (size_t i = 0; i < pf.paths.nr; i++)
		files[spec.nr_files++] =
			(struct initramfs_file){ pf.paths.v[i], pf.dsts.v[i], 0644, 0 };
	if (config[0]) {
		cfgdst = release[0] ? xstrfmt("/boot/config-%s", release) : xstrdup("/boot/config");
		files[spec.nr_files++] = (struct initramfs_file){ config, cfgdst, 0644, 0 };
	}
	spec.agent_batch = "/etc/schedlab/requests.jsonl";
	spec.compress = INITRAMFS_PLAIN;
	int hold;
	if (initramfs_build(&spec, initrd, sizeof(initrd), &hold, err) < 0)
		goto out;
	if (j) {
		initramfs_release(&j->initrd_hold);
		j->initrd_hold = hold;
	} else {
		initramfs_release(&hold); /* only shown */
	}
	if (artifact_urls(t, j, image, initrd, &kurl, &iurl, err))
		goto out;
	struct strbuf cl = STRBUF_INIT;
	strbuf_addstr(&cl, "console=ttyS0,115200 panic=-1");
	target_boot_params(t, b, &cl);
	char *name = xstrfmt("schedlab boot %d%s%s", b->index + 1, b->preempt ? " preempt=" : "",
			     b->preempt ? b->preempt : "");
	struct lava_job_in in = {
		name, kurl, iurl, cl.buf,
		(int)json_integer_value(json_object_get(t->conf, "cpus")),
		(int)json_integer_value(json_object_get(t->conf, "memory_mb")),
		json_number_value(json_object_get(t->conf, "timeout_s")),
	};
	job = lava_job(t->conf, &in, err);
	free(name);
	strbuf_release(&cl);
out:
	free(kurl);
	free(iurl);
	free(cfgdst);
	free(files);
	pg_files_release(&pf);
	strvec_clear(&bins);
	return job;
}

static void cancel_job(struct target *t, long long id)
{
	struct lava_priv *p = t->priv;
	struct strbuf out = STRBUF_INIT, e = STRBUF_INIT;
	char *u = xstrfmt("%s/api/v0.2/jobs/%lld/cancel/", p->url, id);
	const char *args[] = { u, NULL };
	volatile int *af = t->abort_flag;
	t->abort_flag = NULL; /* the cancel itself must not be interrupted */
	curl(t, args, &out, &e);
	t->abort_flag = af;
	free(u);
	strbuf_release(&out);
	strbuf_release(&e);
}

/* how many jobs at once: max_jobs, else the devices LAVA has for them */
static int lava_slots(struct target *t, struct strbuf *err)
{
	json_t *mj = json_object_get(t->conf, "max_jobs");
	if (json_is_integer(mj))
		return (int)json_integer_value(mj);
	const char *dt = json_string_value(json_object_get(t->conf, "device_type"));
	char *what = xstrfmt("devices/?device_type=%s&limit=1000", dt);
	json_t *devs = api_get(t, what, err), *tags = NULL;
	free(what);
	if (devs && json_array_size(json_object_get(t->conf, "tags")))
		tags = api_get(t, "tags/?limit=1000", err);
	int n = -1;
	if (devs && (tags || !json_array_size(json_object_get(t->conf, "tags"))))
		n = lava_usable_devices(json_object_get(devs, "results"),
					json_object_get(tags, "results"),
					json_object_get(t->conf, "tags"), dt, err);
	json_decref(devs);
	json_decref(tags);
	return n;
}

static struct batch_job *lava_submit(struct target *t, const struct boot_spec *b,
				     struct boot_info *bi, struct batch_run *runs, size_t n,
				     struct strbuf *err)
{
	struct lava_priv *p = t->priv;
	struct batch_job *j = xcalloc(1, sizeof(*j));
	json_t *job = NULL;
	strbuf_init(&j->ferr, 0);
	j->initrd_hold = -1;
	j->seq = ++p->seq;
	j->ids = xcalloc(n + 1, sizeof(*j->ids));
	j->n = n;
	j->reqfile = xstrfmt("%s/requests-%u.jsonl", p->dir, j->seq);
	j->logfile = xstrfmt("%s/job-%u.log", p->dir, j->seq);
	j->t0 = now_mono();
	snprintf(bi->method, sizeof(bi->method), "lava");
	/* replies are kept for the ids of this batch only (max_id) */
	if (batch_write_requests(j->reqfile, "lava", t, runs, n, j->ids, &j->max_id, err))
		goto fail;
	job = make_job(t, b, j->reqfile, j, err);
	if (!job)
		goto fail;
	j->id = submit(t, job, j->seq, err);
	if (j->id < 0)
		goto fail;
	json_decref(job);
	snprintf(j->url, sizeof(j->url), "%s/scheduler/job/%lld", p->url, j->id);
	bi->lava_job_id = j->id;
	snprintf(bi->lava_job_url, sizeof(bi->lava_job_url), "%s", j->url);
	j->deadline = now_mono() + json_number_value(json_object_get(t->conf, "timeout_s")) + 900;
	fprintf(stderr, "  lava job %lld: %s\n", j->id, j->url);
	return j;
fail:
	json_decref(job);
	job_free(t, j);
	return NULL;
}

/* one look at job j: ended when Finished or past its deadline */
static void poll_job(struct target *t, struct batch_job *j)
{
	char *what = xstrfmt("jobs/%lld/", j->id);
	struct strbuf e = STRBUF_INIT;
	json_t *d = api_get(t, what, &e);
	strbuf_release(&e);
	free(what);
	const char *st = json_string_value(json_object_get(d, "state"));
	if (st && !strcmp(st, "Finished")) {
		j->detail = d;
		j->ended = 1;
		return;
	}
	json_decref(d);
	if (now_mono() > j->deadline) {
		strbuf_addf(&j->ferr, "not Finished after %.0f s",
			    json_number_value(json_object_get(t->conf, "timeout_s")) + 900);
		j->ended = 1;
	}
}

static size_t lava_wait(struct target *t, struct batch_job *const *jobs, size_t n)
{
	for (;;) {
		for (size_t k = 0; k < n; k++) {
			if (t->abort_flag && *t->abort_flag)
				return k;
			if (!jobs[k]->ended)
				poll_job(t, jobs[k]);
			if (jobs[k]->ended)
				return k;
		}
		for (int s = 0; s < (int)(LAVA_POLL_S * 10); s++) {
			if (t->abort_flag && *t->abort_flag)
				break;
			usleep(100000);
		}
	}
}

static int lava_collect(struct target *t, struct batch_job *j, int cancel, struct boot_info *bi,
			struct batch_run *runs, size_t n, struct strbuf *err)
{
	struct lava_priv *p = t->priv;
	struct lava_log d;
	int ret = -1;
	lava_log_init(&d, j->max_id);
	snprintf(bi->method, sizeof(bi->method), "lava");
	bi->lava_job_id = j->id;
	snprintf(bi->lava_job_url, sizeof(bi->lava_job_url), "%s", j->url);
	if (!j->detail) {
		int aborted = t->abort_flag && *t->abort_flag;
		if (cancel || aborted || j->ferr.len) {
			cancel_job(t, j->id);
			strbuf_addf(err, "lava job %s: %s", j->url,
				    j->ferr.len ? j->ferr.buf
				    : aborted ? "interrupted while the job ran" : "canceled");
			goto out;
		}
		/* not ended yet: wait for it alone */
		while (!j->ended && !(t->abort_flag && *t->abort_flag))
			lava_wait(t, &j, 1);
		if (!j->detail) {
			cancel_job(t, j->id);
			strbuf_addf(err, "lava job %s: %s", j->url,
				    j->ferr.len ? j->ferr.buf : "interrupted while the job ran");
			goto out;
		}
	}
	/* the log, bounded */
	{
		char *u = xstrfmt("%s/api/v0.2/jobs/%lld/logs/", p->url, j->id);
		char *mf = xstrfmt("%ld", LAVA_LOG_MAX);
		const char *args[] = { "--max-filesize", mf, "-o", j->logfile, u, NULL };
		struct strbuf out = STRBUF_INIT;
		volatile int *af = t->abort_flag;
		t->abort_flag = NULL; /* the job ended: its log is fetched even on Ctrl-C */
		int rc = curl(t, args, &out, err);
		t->abort_flag = af;
		strbuf_release(&out);
		free(u);
		free(mf);
		if (rc || read_log(j->logfile, &d, err)) {
			strbuf_addf(err, " (lava job %s)", j->url);
			goto out;
		}
	}
	const char *health = json_string_value(json_object_get(j->detail, "health"));
	if (!health)
		health = "?";
	const char *comment = json_string_value(json_object_get(j->detail, "failure_comment"));
	if (!d.reason.len && strcmp(health, "Complete"))
		strbuf_addf(&d.reason, "job %s%s%.400s", health, comment ? ": " : "",
			    comment ? comment : "");
	/* the whole log is the boot's raw evidence (frames and all) */
	size_t cap = (size_t)json_integer_value(json_object_get(t->conf, "log_max_mb")) << 20;
	long long whole = lava_keep_log(j->logfile, cap, &bi->console);
	if (whole > (long long)cap)
		fprintf(stderr, "  lava job %lld: its log is %lld bytes, kept %zu of them "
			"(target.log_max_mb)\n", j->id, whole, cap);
	if (!bi->console.len)
		strbuf_add(&bi->console, d.console.buf, d.console.len);
	bi->switch_s = now_mono() - j->t0;
	const char *bid = json_string_value(json_object_get(d.banner, "boot_id"));
	snprintf(bi->boot_id, sizeof(bi->boot_id), "%.63s", bid ? bid : "");
	/* the boot: the agent's sysinfo, or LAVA's reason why there is none */
	struct strbuf why = STRBUF_INIT;
	int refused;
	json_t *si = lava_log_result(&d, 1, "sysinfo", &why, &refused);
	if (!si) {
		/* LAVA blames itself (the device, a connection) and the kernel
		   printed no failure: the lab's fault, worth another job. (A
		   kernel that panics also ends in "Connection closed" when
		   its qemu exits: its panic tells them apart.) */
		bi->lab_fault = !strncmp(d.reason.buf, "Infrastructure error", 20) &&
				!d.kernel_failed;
		strbuf_addf(err, "lava job %s (%s): %s%s%s%s", j->url, health,
			    d.reason.len ? d.reason.buf : "", d.reason.len ? "; " : "", why.buf,
			    bi->lab_fault ? " (a lab fault: the kernel printed no failure)" : "");
		strbuf_release(&why);
		goto out;
	}
	strbuf_release(&why);
	json_decref(bi->sysinfo);
	bi->sysinfo = json_incref(si);
	/* the runs */
	char *where = xstrfmt("lava job %s (%s)%s%s", j->url, health, d.reason.len ? ": " : "",
			      d.reason.buf);
	batch_take_replies(&d, j->ids, runs, n < j->n ? n : j->n, where);
	free(where);
	ret = 0;
out:
	lava_log_release(&d);
	job_free(t, j);
	return ret;
}

static void lava_orphan(struct target *t, long long id, struct strbuf *why)
{
	char *what = xstrfmt("jobs/%lld/", id);
	struct strbuf e = STRBUF_INIT;
	json_t *d = api_get(t, what, &e);
	free(what);
	const char *st = json_string_value(json_object_get(d, "state"));
	const char *h = json_string_value(json_object_get(d, "health"));
	if (!d) {
		strbuf_addf(why, "LAVA did not say what became of it: %s", e.buf);
	} else if (st && !strcmp(st, "Finished")) {
		strbuf_addf(why, "it had ended (%s); its results are not taken", h ? h : "?");
	} else {
		cancel_job(t, id);
		strbuf_addf(why, "it was still %s: canceled", st ? st : "?");
	}
	json_decref(d);
	strbuf_release(&e);
}

static json_t *lava_batch_job(struct target *t, const struct boot_spec *b,
			      struct batch_run *runs, size_t n, struct strbuf *err)
{
	struct lava_priv *p = t->priv;
	struct batch_ids *ids = xcalloc(n + 1, sizeof(*ids));
	char *reqfile = xstrfmt("%s/requests.jsonl", p->dir);
	json_t *job = NULL;
	long max_id;
	if (batch_write_requests(reqfile, "lava", t, runs, n, ids, &max_id, err) == 0)
		job = make_job(t, b, reqfile, NULL, err);
	unlink(reqfile);
	free(reqfile);
	free(ids);
	return job;
}

const struct target_ops lava_target = {
	.options = lava_options,
	.doc = "docs/lab.md",
	.name = "lava",
	.summary = "every boot a LAVA job (REST API): the kernel and a batch initramfs; the "
		   "runs travel with the job, results come back as frames in its log",
	.caps = TCAP_PREEMPT_BOOT | TCAP_CMDLINE | TCAP_KERNEL,
	.check = lava_check,
	.open = lava_open,
	.boot = lava_boot,
	.sysinfo = target_agent_sysinfo,
	.exec = target_agent_exec,
	.knob_set = target_agent_knob_set,
	.knob_restore = target_agent_knob_restore,
	.batch_slots = lava_slots,
	.batch_submit = lava_submit,
	.batch_wait = lava_wait,
	.batch_collect = lava_collect,
	.batch_orphan = lava_orphan,
	.batch_job = lava_batch_job,
	.close = lava_close,
};
