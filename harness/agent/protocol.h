/*
 * The controller <-> agent protocol: line-delimited JSON over any byte stream
 * (pipes to a local child, a qemu serial port, an ssh channel).
 *
 * On start the agent prints one banner line:
 *   {"agent":"schedlab","proto":1,"version":"...","boot_id":"...","pid":N}
 * The controller skips anything before it (a serial port may carry noise).
 * Then strictly request/response, one JSON object per line:
 *   request:  {"id":N,"op":"sysinfo","args":{...}}
 *   response: {"id":N,"ok":true,"result":{...}}
 *         or  {"id":N,"ok":false,"error":"message"}
 * Operations (see harness/agent/agent.c for arguments and results):
 *   hello, sysinfo, exec, knob_set, knob_get, knob_restore, schedstat,
 *   kexec, shutdown.
 * The agent restores every knob it changed and kills every child it started
 * when its input reaches EOF or it gets SIGTERM/SIGINT/SIGHUP.
 */
#ifndef SL_PROTOCOL_H
#define SL_PROTOCOL_H

#include <jansson.h>
#include <sys/types.h>

#include "harness/util/strbuf.h"

#define AGENT_PROTO 1

struct agent_conn {
	int rfd, wfd;
	struct strbuf rbuf;     /* bytes read but not yet consumed */
	int next_id;
	json_t *banner;         /* the agent's banner, once seen */
	struct strbuf noise;    /* non-protocol lines seen (tail kept), for diagnostics */
	volatile int *abort_flag; /* when set non-zero, waits return -1/EINTR */
};

void agent_conn_init(struct agent_conn *c, int rfd, int wfd);
void agent_conn_release(struct agent_conn *c);   /* closes the fds */
/* wait for the banner line; -1 on timeout/EOF with a message */
int agent_wait_banner(struct agent_conn *c, double timeout_s, struct strbuf *err);
/*
 * Send {"op":op,"args":args} (args is stolen, may be NULL) and wait up to
 * timeout_s for the response. On ok, *result (if non-NULL) gets a new
 * reference to "result". Returns 0 ok, -1 transport error or timeout (the
 * connection is then unusable), -2 the agent answered ok:false (message in err).
 */
/* the types of the fields of an ok reply to op that the controller reads
 * (sysinfo: sysinfo_check); -1 naming the field and the type it must have.
 * agent_call applies it: a reply that fails is an error (-2) */
int agent_reply_check(const char *op, const json_t *result, struct strbuf *err);
int agent_call(struct agent_conn *c, const char *op, json_t *args, double timeout_s,
	       json_t **result, struct strbuf *err);

/* the banner's boot_id, "" before a banner or when it has none (borrowed) */
const char *agent_banner_boot_id(const struct agent_conn *c);

/* agent side: read one line (without the newline) from fd; 0 ok, -1 EOF/error */
/* the longest protocol line: a reply carries at most 4 MiB of stdout,
 * 64 KiB of stderr and the tool's files (32 MiB each, one or two), so a
 * peer that sends more without a newline is broken or hostile; the reader
 * fails with EMSGSIZE and the connection is dropped */
#define PROTO_LINE_MAX ((size_t)128 << 20)
int proto_read_line(int fd, struct strbuf *rbuf, struct strbuf *line, double timeout_s);
/* write one JSON object as a line; 0 ok, -1 error */
int proto_write_json(int fd, json_t *obj);

#endif
