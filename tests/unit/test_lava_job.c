/*
 * Unit tests for harness/targets/lava_job.c: the lava target's plan object
 * (required keys, defaults, names LAVA accepts, unknown keys) and the job of
 * one boot (device type, tags, the command line inside -append, the
 * artifacts, the end prompt, timeouts), with hostile command lines and URLs
 * refused rather than pasted into the job.
 */
#include <string.h>

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

int main(void)
{
	RUN(conf);
	RUN(cmdline);
	RUN(job);
	return tap_done();
}
