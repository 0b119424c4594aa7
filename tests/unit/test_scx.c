/*
 * Unit tests of harness/agent/scx.c: the checks of sched_ext's sysfs text
 * on canned contents (state enabled and root/ops naming the scheduler, the
 * kernel back on its own class, no sched_ext at all), the names the agent
 * takes, and scx_begin/scx_end around a "run" with fake schedulers (shell
 * scripts in a mkdtemp folder, SCHEDLAB_SCX_DIR) that write the state
 * files of a fake root as the kernel would: one that loads and unloads on
 * SIGINT, one that fails to load, one that the "kernel" ejects mid-run;
 * a script beside a loader in lib/ runs as itself (the loader is for ELF
 * schedulers).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/agent/scx.h"
#include "harness/util/strbuf.h"
#include "tests/unit/tap.h"

static char base[64];

TEST(names)
{
	CHECK(scx_name_ok("scx_simple"));
	CHECK(scx_name_ok("scx_flat_cg2"));
	CHECK(!scx_name_ok("scx_"));
	CHECK(!scx_name_ok("eevdf"));
	CHECK(!scx_name_ok("scx_Simple"));
	CHECK(!scx_name_ok("scx_a/../b"));
	CHECK(!scx_name_ok("scx_a b"));
	CHECK(!scx_name_ok(NULL));
}

TEST(state_text)
{
	struct strbuf why = STRBUF_INIT;
	CHECK(scx_check_enabled("enabled\n", "simple\n", "scx_simple", &why) == 0);
	CHECK(why.len == 0);
	CHECK(scx_check_enabled("disabled\n", NULL, "scx_simple", &why) == -1);
	CHECK_CONTAINS(why.buf, "/sys/kernel/sched_ext/state is 'disabled', not enabled");
	strbuf_reset(&why);
	CHECK(scx_check_enabled("enabling\n", "simple\n", "scx_simple", &why) == -1);
	CHECK_CONTAINS(why.buf, "is 'enabling'");
	strbuf_reset(&why);
	CHECK(scx_check_enabled("enabled\n", "qmap\n", "scx_simple", &why) == -1);
	CHECK_CONTAINS(why.buf, "root/ops is 'qmap', not scx_simple's 'simple'");
	strbuf_reset(&why);
	CHECK(scx_check_enabled(NULL, NULL, "scx_simple", &why) == -1);
	CHECK_CONTAINS(why.buf, "no /sys/kernel/sched_ext/state (no sched_ext");
	strbuf_reset(&why);
	CHECK(scx_check_disabled("disabled\n", &why) == 0);
	CHECK(scx_check_disabled("  disabled", &why) == 0);
	CHECK(scx_check_disabled("disabling\n", &why) == -1);
	CHECK_CONTAINS(why.buf, "'disabling', not disabled: the kernel is not back on its own class");
	strbuf_reset(&why);
	CHECK(scx_check_disabled("", &why) == -1);
	strbuf_release(&why);
}

/* the fake root's sched_ext files and a fake scheduler NAME whose body is
 * shell; $S is the fake sysfs folder */
static void put(const char *rel, const char *text, int mode)
{
	char *p = xstrfmt("%s/%s", base, rel);
	FILE *f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	if (mode)
		chmod(p, (mode_t)mode);
	free(p);
}

static void fake_scheduler(const char *name, const char *body)
{
	char *rel = xstrfmt("scx/%s", name);
	char *text = xstrfmt("#!/bin/sh\nS='%s/root/sys/kernel/sched_ext'\n%s", base, body);
	put(rel, text, 0755);
	free(rel);
	free(text);
}

static const char *root_of(void)
{
	static char r[128];
	snprintf(r, sizeof(r), "%s/root", base);
	return r;
}

TEST(begin_and_end)
{
	/* loads, then unloads on SIGINT as the kernel's examples do */
	fake_scheduler("scx_simple",
		       "trap 'echo disabled >$S/state; rm -f $S/root/ops; exit 0' INT\n"
		       "echo simple >$S/root/ops; echo enabled >$S/state\n"
		       "while :; do sleep 0.05; done\n");
	put("root/sys/kernel/sched_ext/state", "disabled\n", 0);
	/* a loader beside it runs ELF schedulers only: a script runs as itself */
	put("scx/lib/ld-linux-x86-64.so.2", "#!/bin/sh\necho 'run through the loader'\nexit 3\n",
	    0755);
	json_t *args = json_pack("{s:s}", "scheduler", "scx_simple");
	struct scx_run s;
	struct strbuf err = STRBUF_INIT;
	CHECK(scx_begin(&s, root_of(), args, &err) == 0);
	if (err.len)
		printf("#   %s\n", err.buf);
	CHECK(err.len == 0);
	json_t *res = json_object();
	CHECK(scx_end(&s, res, &err) == 0);
	if (err.len)
		printf("#   %s\n", err.buf);
	json_t *sc = json_object_get(res, "scheduler");
	CHECK_STR(json_string_value(json_object_get(sc, "name")), "scx_simple");
	CHECK_STR(json_string_value(json_object_get(sc, "ops")), "simple");
	CHECK_STR(json_string_value(json_object_get(sc, "state_after")), "disabled");
	json_decref(res);
	json_decref(args);
	/* eevdf and no key: nothing started, nothing recorded */
	args = json_pack("{s:s}", "scheduler", "eevdf");
	res = json_object();
	CHECK(scx_begin(&s, root_of(), args, &err) == 0);
	CHECK(scx_end(&s, res, &err) == 0);
	CHECK(json_object_get(res, "scheduler") == NULL);
	json_decref(res);
	json_decref(args);
	strbuf_release(&err);
}

TEST(refusals_and_failures)
{
	struct scx_run s;
	struct strbuf err = STRBUF_INIT;
	put("root/sys/kernel/sched_ext/state", "disabled\n", 0);
	/* no such scheduler in the folder */
	json_t *args = json_pack("{s:s}", "scheduler", "scx_central");
	CHECK(scx_begin(&s, root_of(), args, &err) == -1);
	CHECK_CONTAINS(err.buf, "sched_ext: ");
	CHECK_CONTAINS(err.buf, "/scx_central: No such file or directory");
	json_decref(args);
	strbuf_reset(&err);
	/* a name that is none */
	args = json_pack("{s:s}", "scheduler", "cfs");
	CHECK(scx_begin(&s, root_of(), args, &err) == -1);
	CHECK_CONTAINS(err.buf, "'cfs' is no sched_ext scheduler's name");
	json_decref(args);
	strbuf_reset(&err);
	/* fails to load: its own words in the run's error */
	fake_scheduler("scx_qmap", "echo 'libbpf: prog scx_qmap: failed to load: -22' >&2\nexit 1\n");
	args = json_pack("{s:s}", "scheduler", "scx_qmap");
	CHECK(scx_begin(&s, root_of(), args, &err) == -1);
	CHECK_CONTAINS(err.buf, "sched_ext: scx_qmap failed to load (it exited: ");
	CHECK_CONTAINS(err.buf, "scx_qmap said: libbpf: prog scx_qmap: failed to load: -22");
	json_decref(args);
	strbuf_reset(&err);
	/* another scheduler still loaded: no base to start from */
	put("root/sys/kernel/sched_ext/state", "enabled\n", 0);
	args = json_pack("{s:s}", "scheduler", "scx_simple");
	CHECK(scx_begin(&s, root_of(), args, &err) == -1);
	CHECK_CONTAINS(err.buf, "cannot start scx_simple: /sys/kernel/sched_ext/state is 'enabled'");
	json_decref(args);
	strbuf_reset(&err);
	/* ejected during the run: the kernel disables it and the program
	   reports its exit, as scx_simple's UEI_REPORT does */
	put("root/sys/kernel/sched_ext/state", "disabled\n", 0);
	fake_scheduler("scx_flatcg",
		       "echo flatcg >$S/root/ops; echo enabled >$S/state\n"
		       "sleep 0.3; echo disabled >$S/state\n"
		       "echo 'EXIT: runnable task stall (watchdog failed for cpu 1)'\nexit 0\n");
	args = json_pack("{s:s}", "scheduler", "scx_flatcg");
	CHECK(scx_begin(&s, root_of(), args, &err) == 0);
	usleep(800000); /* the "run" */
	json_t *res = json_object();
	CHECK(scx_end(&s, res, &err) == -1);
	CHECK_CONTAINS(err.buf, "sched_ext: scx_flatcg was ejected during the run "
			       "(/sys/kernel/sched_ext/state is 'disabled', not enabled; its "
			       "program ended)");
	CHECK_CONTAINS(err.buf, "scx_flatcg said: EXIT: runnable task stall (watchdog failed "
			       "for cpu 1)");
	CHECK(json_object_get(res, "scheduler") == NULL);
	json_decref(res);
	json_decref(args);
	strbuf_release(&err);
}

int main(void)
{
	snprintf(base, sizeof(base), "/tmp/sl-test-scx-XXXXXX");
	if (!mkdtemp(base))
		return 1;
	char *cmd = xstrfmt("mkdir -p %s/scx/lib %s/root/sys/kernel/sched_ext/root", base, base);
	if (system(cmd))
		return 1;
	free(cmd);
	cmd = xstrfmt("%s/scx", base);
	setenv("SCHEDLAB_SCX_DIR", cmd, 1);
	free(cmd);
	RUN(names);
	RUN(state_text);
	RUN(begin_and_end);
	RUN(refusals_and_failures);
	cmd = xstrfmt("rm -rf %s", base);
	if (system(cmd))
		return 1;
	free(cmd);
	return tap_done();
}
