/*
 * Unit tests for harness/targets/lava_job.c: the lava target's plan object
 * (required keys, defaults, names LAVA accepts, unknown keys) and the job of
 * one boot (device type, tags, the command line inside -append, the
 * artifacts, the end prompt, timeouts), with hostile command lines and URLs
 * refused rather than pasted into the job; and reading a job's log
 * (lava_log_*): frames to replies by id, LAVA's verdict, ids the batch did
 * not ask for, malformed and refused replies, corrupt frames. Also the
 * keys of several jobs in flight (max_jobs, counted from LAVA's devices:
 * lava_usable_devices), log_max_mb and the artifacts object (file or http,
 * listen, url_host).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/targets/lava_job.h"
#include "tests/unit/tap.h"

static json_t *conf_of(const char *text)
{
	json_error_t je;
	return json_loads(text, 0, &je);
}

static int check_text(const char *text, struct strbuf *err)
{
	json_t *c = conf_of(text);
	strbuf_reset(err);
	int rc = lava_conf_check(c, "plan: target.", err);
	json_decref(c);
	return rc;
}

TEST(conf)
{
	struct strbuf e = STRBUF_INIT;
	json_t *c = conf_of("{\"type\":\"lava\",\"url\":\"http://127.0.0.1:8100\","
			    "\"token_file\":\"/x/token\",\"user\":\"schedlab\","
			    "\"device_type\":\"qemu\"}");
	CHECK(lava_conf_check(c, "plan: target.", &e) == 0);
	CHECK(json_array_size(json_object_get(c, "tags")) == 0);
	CHECK(json_integer_value(json_object_get(c, "cpus")) == 2);
	CHECK_STR(json_string_value(json_object_get(c, "kernel")), "kernels/out/debian");
	json_decref(c);

	CHECK(check_text("{\"type\":\"lava\",\"token_file\":\"t\",\"user\":\"u\","
			 "\"device_type\":\"qemu\"}", &e) == -1);
	CHECK_CONTAINS(e.buf, "plan: target.url: required");
	CHECK(check_text("{\"type\":\"lava\",\"url\":\"ftp://x\",\"token_file\":\"t\","
			 "\"user\":\"u\",\"device_type\":\"qemu\"}", &e) == -1);
	CHECK_CONTAINS(e.buf, "url: must be");
	CHECK(check_text("{\"type\":\"lava\",\"url\":\"http://x/\\\"a\",\"token_file\":\"t\","
			 "\"user\":\"u\",\"device_type\":\"qemu\"}", &e) == -1);
	CHECK(check_text("{\"type\":\"lava\",\"url\":\"http://x\",\"token_file\":\"t\","
			 "\"user\":\"u\",\"device_type\":\"qemu x\"}", &e) == -1);
	CHECK_CONTAINS(e.buf, "device_type: must be a LAVA device type");
	CHECK(check_text("{\"type\":\"lava\",\"url\":\"http://x\",\"token_file\":\"t\","
			 "\"user\":\"u\",\"device_type\":\"qemu\",\"tags\":[\"ok\",\"b d\"]}",
			 &e) == -1);
	CHECK_CONTAINS(e.buf, "tags[1]");
	CHECK(check_text("{\"type\":\"lava\",\"url\":\"http://x\",\"token_file\":\"t\","
			 "\"user\":\"u\",\"device_type\":\"qemu\",\"append\":\"a\\\"b\"}",
			 &e) == -1);
	CHECK_CONTAINS(e.buf, "append: must be kernel parameters");
	CHECK(check_text("{\"type\":\"lava\",\"url\":\"http://x\",\"token_file\":\"t\","
			 "\"user\":\"u\",\"device_type\":\"qemu\",\"host\":\"h\"}", &e) == -1);
	CHECK_CONTAINS(e.buf, "host: unknown key");
	CHECK_CONTAINS(e.buf, "device_type");
	/* infra_retries: default 1, 0-5 */
	c = conf_of("{\"type\":\"lava\",\"url\":\"http://x\",\"token_file\":\"t\","
		    "\"user\":\"u\",\"device_type\":\"qemu\"}");
	CHECK(lava_conf_check(c, "plan: target.", &e) == 0);
	CHECK(json_integer_value(json_object_get(c, "infra_retries")) == 1);
	json_decref(c);
	CHECK(check_text("{\"type\":\"lava\",\"url\":\"http://x\",\"token_file\":\"t\","
			 "\"user\":\"u\",\"device_type\":\"qemu\",\"infra_retries\":6}", &e) == -1);
	CHECK_CONTAINS(e.buf, "infra_retries");
	strbuf_release(&e);
}

TEST(cmdline)
{
	CHECK(lava_cmdline_ok("console=ttyS0,115200 panic=-1 preempt=full"));
	CHECK(lava_cmdline_ok(""));
	CHECK(!lava_cmdline_ok("a\"b"));
	CHECK(!lava_cmdline_ok("$(reboot)"));
	CHECK(!lava_cmdline_ok("a`b`"));
	CHECK(!lava_cmdline_ok("a\\b"));
	CHECK(!lava_cmdline_ok("a\nb"));
	CHECK(!lava_cmdline_ok("a;b"));
}

TEST(job)
{
	struct strbuf e = STRBUF_INIT;
	json_t *c = conf_of("{\"type\":\"lava\",\"url\":\"http://x\",\"token_file\":\"t\","
			    "\"user\":\"u\",\"device_type\":\"qemu\",\"tags\":[\"fast\"]}");
	CHECK(lava_conf_check(c, "plan: target.", &e) == 0);
	struct lava_job_in in = { "schedlab s1 boot 2 full", "file:///k/vmlinuz",
				  "http://ctl:8000/a/initrd.cpio",
				  "console=ttyS0,115200 preempt=full", 2, 1024, 300 };
	json_t *j = lava_job(c, &in, &e);
	CHECK(j != NULL);
	CHECK_STR(json_string_value(json_object_get(j, "device_type")), "qemu");
	CHECK_STR(json_string_value(json_array_get(json_object_get(j, "tags"), 0)), "fast");
	json_t *dep = json_object_get(json_array_get(json_object_get(j, "actions"), 0), "deploy");
	json_t *k = json_object_get(json_object_get(dep, "images"), "kernel");
	CHECK_STR(json_string_value(json_object_get(k, "image_arg")),
		  "-kernel {kernel} -append \"console=ttyS0,115200 preempt=full\"");
	CHECK_STR(json_string_value(json_object_get(k, "url")), "file:///k/vmlinuz");
	json_t *boot = json_object_get(json_array_get(json_object_get(j, "actions"), 1), "boot");
	CHECK_STR(json_string_value(json_array_get(json_object_get(boot, "prompts"), 0)),
		  LAVA_END_PROMPT);
	CHECK(json_integer_value(json_object_get(json_object_get(boot, "timeout"), "minutes")) ==
	      5);
	CHECK(json_is_true(json_object_get(json_object_get(j, "context"), "no_kvm")));
	/* TCG with one thread for every vCPU (docs/qemu.md, TCG threads) */
	json_t *extra = json_object_get(json_object_get(j, "context"), "extra_options");
	CHECK_STR(json_string_value(json_array_get(extra, 0)), "-smp 2");
	CHECK_STR(json_string_value(json_array_get(extra, 2)), "-accel tcg,thread=single");
	json_decref(j);

	in.cmdline = "preempt=full\" -device evil";
	CHECK(lava_job(c, &in, &e) == NULL);
	CHECK_CONTAINS(e.buf, "kernel command line");
	in.cmdline = "preempt=full";
	in.initrd_url = "http://x/a b";
	CHECK(lava_job(c, &in, &e) == NULL);
	CHECK_CONTAINS(e.buf, "artifact URL");
	in.initrd_url = "/relative";
	CHECK(lava_job(c, &in, &e) == NULL);
	json_decref(c);
	strbuf_release(&e);
}

/* one message as LAVA logs it: each frame line inside a YAML log entry */
static void feed(struct lava_log *l, unsigned seq, const char *msg)
{
	struct strbuf f = STRBUF_INIT;
	frame_encode(seq, msg, strlen(msg), &f);
	char *save = NULL;
	for (char *line = strtok_r(f.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct strbuf y = STRBUF_INIT;
		strbuf_addf(&y, "- {\"dt\": \"2026-12-04T06:00:00\", \"lvl\": \"target\", \"msg\": \"%s\"}",
			    line);
		lava_log_line(l, y.buf, y.len);
		strbuf_release(&y);
	}
	strbuf_release(&f);
}

TEST(job_log)
{
	struct lava_log l;
	struct strbuf why = STRBUF_INIT;
	int refused = 0;
	lava_log_init(&l, 4);
	const char *boot = "- {\"dt\": \"x\", \"lvl\": \"target\", \"msg\": \"Linux version 6.1\"}";
	lava_log_line(&l, boot, strlen(boot));
	feed(&l, 0, "{\"agent\":\"schedlab\",\"boot_id\":\"b-1\"}");
	feed(&l, 1, "{\"id\":2,\"ok\":true,\"result\":{\"exit_code\":0,\"wall_s\":1.5,"
		    "\"stdout\":\"Time: 0.9\",\"stderr\":\"\"}}");
	feed(&l, 2, "{\"id\":3,\"ok\":false,\"error\":\"unsupported by this kernel: x\"}");
	feed(&l, 3, "{\"id\":4,\"ok\":true,\"result\":{\"exit_code\":\"zero\"}}");
	feed(&l, 4, "{\"id\":99,\"ok\":true,\"result\":{}}");  /* not asked for */
	const char *bad = "- {\"msg\": \"SLB1 5 1/1 0123456789abcdef AAAA\"}";
	lava_log_line(&l, bad, strlen(bad));
	const char *verdict = "- {\"dt\": \"x\", \"lvl\": \"results\", \"msg\": {\"case\": \"job\", "
			      "\"definition\": \"lava\", \"error_msg\": \"Connection closed\\n\", "
			      "\"error_type\": \"Infrastructure\", \"result\": \"fail\"}}";
	lava_log_line(&l, verdict, strlen(verdict));
	lava_log_finish(&l);

	CHECK_STR(json_string_value(json_object_get(l.banner, "boot_id")), "b-1");
	json_t *r = lava_log_result(&l, 2, "exec", &why, &refused);
	CHECK(r && json_integer_value(json_object_get(r, "exit_code")) == 0);
	CHECK(lava_log_result(&l, 1, "sysinfo", &why, &refused) == NULL && !refused);
	CHECK_CONTAINS(why.buf, "no reply to sysinfo");
	strbuf_reset(&why);
	CHECK(lava_log_result(&l, 3, "knob_set", &why, &refused) == NULL && refused);
	CHECK_CONTAINS(why.buf, "unsupported by this kernel");
	strbuf_reset(&why);
	/* a malformed result is an error, never made-up values */
	CHECK(lava_log_result(&l, 4, "exec", &why, &refused) == NULL && !refused);
	CHECK_CONTAINS(why.buf, "exit_code");
	CHECK(lava_log_reply(&l, 99) == NULL);
	CHECK(json_object_size(l.replies) == 3);
	/* LAVA's verdict, on one line, and the corrupt frame counted */
	CHECK(strncmp(l.reason.buf, "Infrastructure error: Connection closed;", 40) == 0);
	CHECK_CONTAINS(l.reason.buf, "1 corrupt frames");
	/* the console keeps the log without the frame lines */
	CHECK_CONTAINS(l.console.buf, "Linux version 6.1");
	CHECK(strstr(l.console.buf, "SLB1") == NULL);
	lava_log_release(&l);
	strbuf_release(&why);
}

/* whether the kernel failed: only the device's own lines count (LAVA's
 * debug lines list the same messages as its watcher's prompts) */
TEST(job_log_kernel_failed)
{
	static const char *const prompts =
		"- {\"dt\": \"x\", \"lvl\": \"debug\", \"msg\": \"Setting prompt string to "
		"['Oops(?: -|:)', '(kernel BUG at|BUG:)', 'Kernel panic - not syncing']\"}";
	static const char *const fails[] = {
		"[    3.18] Kernel panic - not syncing: VFS: Unable to mount root fs",
		"[    1.00] BUG: kernel NULL pointer dereference, address: 0000000000000000",
		"[    1.00] Oops: 0002 [#1] PREEMPT SMP NOPTI",
		"[    1.00] kernel BUG at mm/slub.c:1234!",
		"[    1.00] invalid opcode: 0000 [#1] SMP",
		NULL,
	};
	struct lava_log l;
	lava_log_init(&l, 1);
	lava_log_line(&l, prompts, strlen(prompts));
	const char *ok = "- {\"dt\": \"x\", \"lvl\": \"target\", \"msg\": \"[    0.00] Linux version 6.1\"}";
	lava_log_line(&l, ok, strlen(ok));
	CHECK(l.kernel_failed == 0);
	lava_log_release(&l);
	for (size_t i = 0; fails[i]; i++) {
		char *line = xstrfmt("- {\"dt\": \"x\", \"lvl\": \"target\", \"msg\": \"%s\"}", fails[i]);
		lava_log_init(&l, 1);
		lava_log_line(&l, ok, strlen(ok));
		lava_log_line(&l, line, strlen(line));
		CHECK(l.kernel_failed == 1);
		lava_log_release(&l);
		free(line);
	}
}

#define BASE "{\"type\":\"lava\",\"url\":\"http://x\",\"token_file\":\"t\",\"user\":\"u\"," \
	     "\"device_type\":\"qemu\""

TEST(jobs_logs_artifacts)
{
	struct strbuf e = STRBUF_INIT;
	json_t *c = conf_of(BASE "}");
	CHECK(lava_conf_check(c, "plan: target.", &e) == 0);
	CHECK(json_object_get(c, "max_jobs") == NULL); /* absent: one per usable device */
	CHECK(json_integer_value(json_object_get(c, "log_max_mb")) == 32);
	CHECK_STR(json_string_value(json_object_get(json_object_get(c, "artifacts"), "serve")), "file");
	json_decref(c);
	CHECK(check_text(BASE ",\"max_jobs\":3}", &e) == 0);
	CHECK(check_text(BASE ",\"max_jobs\":0}", &e) == -1);
	CHECK_CONTAINS(e.buf, "plan: target.max_jobs: must be a positive integer no larger than 1024");
	CHECK(check_text(BASE ",\"max_jobs\":\"2\"}", &e) == -1);
	CHECK(check_text(BASE ",\"log_max_mb\":0}", &e) == -1);
	CHECK_CONTAINS(e.buf, "log_max_mb");

	c = conf_of(BASE ",\"artifacts\":{\"serve\":\"http\"}}");
	CHECK(lava_conf_check(c, "plan: target.", &e) == 0);
	CHECK_STR(json_string_value(json_object_get(json_object_get(c, "artifacts"), "listen")),
		  "127.0.0.1:0");
	json_decref(c);
	CHECK(check_text(BASE ",\"artifacts\":{\"serve\":\"http\",\"listen\":\"0.0.0.0:8200\","
			 "\"url_host\":\"ctl.lab\"}}", &e) == 0);
	CHECK(check_text(BASE ",\"artifacts\":{\"serve\":\"http\",\"listen\":\"0.0.0.0:8200\"}}",
			 &e) == -1);
	CHECK_CONTAINS(e.buf, "plan: target.artifacts.url_host: required when listen is 0.0.0.0");
	CHECK(check_text(BASE ",\"artifacts\":{\"serve\":\"http\",\"listen\":\"lab:80\"}}", &e) == -1);
	CHECK_CONTAINS(e.buf, "artifacts.listen: must be IPV4:PORT");
	CHECK(check_text(BASE ",\"artifacts\":{\"serve\":\"http\",\"listen\":\"1.2.3.4:65536\"}}",
			 &e) == -1);
	CHECK(check_text(BASE ",\"artifacts\":{\"serve\":\"http\",\"url_host\":\"a/b\"}}", &e) == -1);
	CHECK_CONTAINS(e.buf, "url_host: must be");
	CHECK(check_text(BASE ",\"artifacts\":{\"serve\":\"ftp\"}}", &e) == -1);
	CHECK_CONTAINS(e.buf, "serve");
	CHECK(check_text(BASE ",\"artifacts\":{\"serve\":\"file\",\"listen\":\"1.2.3.4:1\"}}", &e) == -1);
	CHECK_CONTAINS(e.buf, "go with \"serve\": \"http\"");
	CHECK(check_text(BASE ",\"artifacts\":{\"serve\":\"http\",\"port\":1}}", &e) == -1);
	CHECK_CONTAINS(e.buf, "unknown key");
	CHECK(check_text(BASE ",\"artifacts\":\"http\"}", &e) == -1);
	CHECK_CONTAINS(e.buf, "artifacts: must be an object");

	char host[64];
	int port = -1;
	CHECK(lava_hostport("127.0.0.1:0", host, sizeof(host), &port) == 0 && port == 0);
	CHECK_STR(host, "127.0.0.1");
	CHECK(lava_hostport("10.0.0.1:8080", host, sizeof(host), &port) == 0 && port == 8080);
	CHECK(lava_hostport("10.0.0.1", host, sizeof(host), &port) == -1);
	CHECK(lava_hostport("10.0.0.256:1", host, sizeof(host), &port) == -1);
	CHECK(lava_hostport("10.0.0.1:1x", host, sizeof(host), &port) == -1);
	CHECK(lava_hostport("10.0.0.1:", host, sizeof(host), &port) == -1);
	strbuf_release(&e);
}

TEST(usable_devices)
{
	struct strbuf why = STRBUF_INIT;
	json_t *devs = conf_of("["
		"{\"hostname\":\"a\",\"device_type\":\"qemu\",\"health\":\"Good\",\"state\":\"Idle\",\"tags\":[1,2]},"
		"{\"hostname\":\"b\",\"device_type\":\"qemu\",\"health\":\"Good\",\"state\":\"Running\",\"tags\":[2]},"
		"{\"hostname\":\"c\",\"device_type\":\"qemu\",\"health\":\"Unknown\",\"state\":\"Idle\",\"tags\":[]},"
		"{\"hostname\":\"d\",\"device_type\":\"qemu\",\"health\":\"Bad\",\"state\":\"Idle\",\"tags\":[1,2]},"
		"{\"hostname\":\"e\",\"device_type\":\"qemu\",\"health\":\"Maintenance\",\"tags\":[1]},"
		"{\"hostname\":\"f\",\"device_type\":\"qemu\",\"health\":\"Retired\",\"tags\":[]},"
		"{\"hostname\":\"g\",\"device_type\":\"bbb\",\"health\":\"Good\",\"tags\":[1,2]},"
		"{\"hostname\":\"h\",\"health\":\"Good\"}]");
	json_t *tags = conf_of("[{\"id\":1,\"name\":\"fast\"},{\"id\":2,\"name\":\"x86\"}]");
	json_t *none = json_array(), *fast = conf_of("[\"fast\"]"), *both = conf_of("[\"x86\",\"fast\"]");
	json_t *x86 = conf_of("[\"x86\"]"), *nope = conf_of("[\"nope\"]");
	CHECK(lava_usable_devices(devs, tags, none, "qemu", &why) == 3); /* a b c: idle or busy */
	CHECK(lava_usable_devices(devs, tags, fast, "qemu", &why) == 1);
	CHECK(lava_usable_devices(devs, tags, both, "qemu", &why) == 1);
	CHECK(lava_usable_devices(devs, tags, x86, "qemu", &why) == 2);
	CHECK(lava_usable_devices(devs, tags, none, "bbb", &why) == 1);
	CHECK(why.len == 0);
	CHECK(lava_usable_devices(devs, tags, nope, "qemu", &why) == 0);
	CHECK_CONTAINS(why.buf, "LAVA has no tag \"nope\"");
	strbuf_reset(&why);
	CHECK(lava_usable_devices(devs, tags, none, "rpi4", &why) == 0);
	CHECK_CONTAINS(why.buf, "no device of type rpi4");
	CHECK(lava_usable_devices(NULL, NULL, none, "qemu", &why) == 0);
	json_decref(devs);
	json_decref(tags);
	json_decref(none);
	json_decref(fast);
	json_decref(both);
	json_decref(x86);
	json_decref(nope);
	strbuf_release(&why);
}

TEST(keep_log)
{
	struct strbuf out = STRBUF_INIT;
	char path[] = "/tmp/test_lava_log.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	FILE *f = fdopen(fd, "w");
	for (int i = 0; i < 1000; i++)
		fprintf(f, "- {\"lvl\": \"target\", \"msg\": \"line %04d\"}\n", i);
	fclose(f);
	/* small enough: all of it, byte for byte */
	CHECK(lava_keep_log(path, 1 << 20, &out) == 40000);
	CHECK(out.len == 40000);
	CHECK(strstr(out.buf, "line 0000") && strstr(out.buf, "line 0999"));
	CHECK(!strstr(out.buf, "cut here"));
	/* too long: its start and its end, and a note where the middle went */
	CHECK(lava_keep_log(path, 3800, &out) == 40000);
	CHECK(strncmp(out.buf, "- {\"lvl\": \"target\", \"msg\": \"line 0000\"}", 39) == 0);
	/* whole lines only: 47 lines of 40 bytes at the start, 47 at the end */
	CHECK_CONTAINS(out.buf, "\"line 0046\"}\n# schedlab: 36240 bytes of the job log cut here "
			       "(the log is 40000 bytes; kept: its first 1880 and last 1880, "
			       "target.log_max_mb)\n- {\"lvl\": \"target\", \"msg\": \"line 0953\"}");
	CHECK(strstr(out.buf, "line 0047") == NULL);
	CHECK(strstr(out.buf, "line 0952") == NULL);
	CHECK(strstr(out.buf, "line 0999\"}\n") != NULL);
	/* a cut that lands on a line boundary keeps that line */
	CHECK(lava_keep_log(path, 4000, &out) == 40000);
	CHECK_CONTAINS(out.buf, "\"line 0049\"}\n# schedlab: 36000 bytes");
	CHECK_CONTAINS(out.buf, "last 2000, target.log_max_mb)\n- {\"lvl\": \"target\", \"msg\": \"line 0950\"}");
	unlink(path);
	CHECK(lava_keep_log(path, 100, &out) == -1);
	CHECK(out.len == 0);
	strbuf_release(&out);
}

int main(void)
{
	RUN(conf);
	RUN(keep_log);
	RUN(jobs_logs_artifacts);
	RUN(usable_devices);
	RUN(cmdline);
	RUN(job);
	RUN(job_log);
	RUN(job_log_kernel_failed);
	return tap_done();
}
