/*
 * The guest for the ssh end-to-end tests (t0700-ssh-qemu.sh and
 * t0720-ssh-bundle.sh compile it against build/libschedlab.a): `ssh-guest CONF` boots a qemu
 * target from the JSON CONF (with its "ssh" option: dropbear in the guest),
 * prints "ready BOOT_ID SECONDS" (or "error MESSAGE") and keeps the guest
 * running until stdin reaches EOF or SIGTERM.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "harness/util/proc.h"
#include "harness/targets/target.h"
static volatile int stop;
static void on_term(int s) { stop = s; }
int main(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT;
	json_error_t je;
	json_t *conf = argc > 1 ? json_loads(argv[1], 0, &je) : NULL;
	json_t *r = conf ? qemu_target.check(conf, "vm", &err) : NULL;
	if (!r) { printf("error %s\n", err.buf); return 1; }
	struct target t;
	memset(&t, 0, sizeof(t));
	t.ops = &qemu_target; t.conf = r; t.agent_path = "bin/schedlab-agent";
	if (qemu_target.open(&t, &err)) { printf("error %s\n", err.buf); return 1; }
	struct boot_spec b = { 0, NULL, "full", "" };
	struct boot_info bi;
	boot_info_init(&bi);
	double t0 = now_mono();
	if (qemu_target.boot(&t, &b, &bi, &err)) {
		for (char *nl; (nl = strchr(err.buf, '\n'));) *nl = '|';
		printf("error %s\n", err.buf);
		qemu_target.close(&t);
		return 1;
	}
	printf("ready %s %.1f\n", bi.boot_id, now_mono() - t0);
	fflush(stdout);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term; /* no SA_RESTART: read() returns */
	sigaction(SIGTERM, &sa, NULL);
	char buf[64];
	while (!stop && read(0, buf, sizeof(buf)) > 0)
		;
	boot_info_release(&bi);
	qemu_target.close(&t);
	json_decref(r);
	json_decref(conf);
	return 0;
}
