/*
 * The pure parts of the lava target (issue 15, docs/lab.md): validating the
 * plan's `{"type": "lava", ...}` object and writing the LAVA job of one boot
 * configuration. The target itself (harness/targets/lava.c: submitting,
 * following the jobs, decoding the frames of harness/agent/frame.h from the
 * logs) uses them; they are tested by tests/unit/test_lava_job.c, and the
 * job they write is the one tests/e2e/t0730-lava-qemu.sh and
 * t0740-lava-run.sh prove against a real LAVA.
 *
 * The job is written as JSON (jansson), which LAVA's YAML loader reads:
 * no value from a plan is ever pasted into YAML text. The kernel command
 * line is the exception that must be checked: LAVA's qemu method passes it
 * inside `-append "..."` of a command line, so it may only hold kernel
 * parameter characters (lava_cmdline_ok).
 */
#ifndef SL_LAVA_JOB_H
#define SL_LAVA_JOB_H

#include <jansson.h>

#include "harness/agent/frame.h"
#include "harness/util/opts.h"
#include "harness/util/strbuf.h"

/* the keys of a lava target, one line each (harness/util/opts.h) */
extern const struct param_spec lava_options[];

/* validate and fill defaults of a lava target object in place; -1 with
 * "<prefix>key: ..." naming what is valid */
int lava_conf_check(json_t *conf, const char *prefix, struct strbuf *err);

/* the target's "artifacts" object (in lava_conf_check): {"serve": "file"}
 * (default) or {"serve": "http", "listen": "IPV4:PORT" (default
 * 127.0.0.1:0), "url_host": HOST (required with 0.0.0.0)} */
int lava_artifacts_check(json_t *conf, const char *prefix, struct strbuf *err);
/* "IPV4:PORT" into host and port; -1 when it is not that */
int lava_hostport(const char *s, char *host, size_t hlen, int *port);
/* a host name or address for a URL: letters, digits, . - */
int lava_host_ok(const char *s);

/*
 * How many of LAVA's devices (devices: the "results" of GET devices/, tags:
 * those of GET tags/) could run the target's jobs: of device_type, carrying
 * every tag in want (names), health Good or Unknown (idle or busy: LAVA
 * queues). 0 with why when none.
 */
int lava_usable_devices(const json_t *devices, const json_t *tags, const json_t *want,
			const char *device_type, struct strbuf *why);

/* 1 when s may go into the kernel command line of a LAVA qemu job:
 * letters, digits, spaces and _ . , = : / + @ - only, at most 1024 bytes */
int lava_cmdline_ok(const char *s);

struct lava_job_in {
	const char *name;        /* job_name */
	const char *kernel_url;  /* file:// or http(s):// */
	const char *initrd_url;
	const char *cmdline;     /* the boot's full kernel command line */
	int cpus;                /* -smp */
	int memory_mb;
	double timeout_s;        /* of the boot action: the boot's runs included */
};

/* the job for one boot configuration, or NULL with a message */
json_t *lava_job(const json_t *conf, const struct lava_job_in *in, struct strbuf *err);

/*
 * Reading a job's log (untrusted: whatever the guest or LAVA printed). Fed
 * one line at a time: the agent's SLB1 frames (frame.h) give the banner and
 * the replies, kept by id for ids 1..max_id only (the batch's); LAVA's own
 * verdict lines give the reason ("TYPE error: MSG", one line); the device's
 * lines whether the kernel failed (kernel_failed); every other line goes to
 * console, of which the last 64-128 KiB are kept.
 */
struct lava_log {
	json_t *banner;           /* the agent's banner (its first message), or NULL */
	json_t *replies;          /* "ID" -> reply object */
	long max_id;
	struct strbuf reason;
	struct strbuf console;
	int kernel_failed;        /* a line the device printed ("lvl": "target")
				   * shows the kernel failing: a panic, an oops,
				   * BUG:, ... (what LAVA's kernel watcher matches) */
	struct frame_dec dec;
};
void lava_log_init(struct lava_log *l, long max_id);
void lava_log_line(struct lava_log *l, const char *line, size_t len);
/* at the end of the log: corrupt or incomplete frames are added to reason */
void lava_log_finish(struct lava_log *l);
void lava_log_release(struct lava_log *l);
/* the reply to request id, NULL when there is none */
json_t *lava_log_reply(const struct lava_log *l, long id);
/* the result of the reply to id for op, checked like a live reply
 * (agent_reply_check); NULL with why: no reply (*refused 0), the agent
 * said ok:false (*refused 1, its error), or a malformed result (*refused 0) */
json_t *lava_log_result(const struct lava_log *l, long id, const char *op, struct strbuf *why,
			int *refused);

/*
 * The job's whole log (the file as LAVA served it) into out, for the boot's
 * console: at most max bytes; a longer log keeps its first max/2 and last
 * max/2 bytes with a line between them saying how much was cut. The log's
 * size, or -1 when the file cannot be read (out empty).
 */
long long lava_keep_log(const char *file, size_t max, struct strbuf *out);

/* the prompt the job's boot action waits for (printed by the batch /init) */
#define LAVA_END_PROMPT "schedlab-batch: end status"

#endif
