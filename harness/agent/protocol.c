/*
 * Line-delimited JSON framing for the controller <-> agent protocol, both
 * sides: reading lines with a timeout, writing one object per line, and the
 * controller's request/response call. The message set is in protocol.h.
 */
#include "harness/agent/protocol.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "harness/agent/sysinfo.h"
#include "harness/util/proc.h"

void agent_conn_init(struct agent_conn *c, int rfd, int wfd)
{
	memset(c, 0, sizeof(*c));
	c->rfd = rfd;
	c->wfd = wfd;
	strbuf_init(&c->rbuf, 0);
	strbuf_init(&c->noise, 0);
	c->next_id = 1;
}

void agent_conn_release(struct agent_conn *c)
{
	if (c->rfd >= 0)
		close(c->rfd);
	if (c->wfd >= 0 && c->wfd != c->rfd)
		close(c->wfd);
	c->rfd = c->wfd = -1;
	strbuf_release(&c->rbuf);
	strbuf_release(&c->noise);
	json_decref(c->banner);
	c->banner = NULL;
}

static int read_line_flag(int fd, struct strbuf *rbuf, struct strbuf *line, double timeout_s,
			  volatile int *abort_flag)
{
	double deadline = timeout_s > 0 ? now_mono() + timeout_s : 0;
	size_t scanned = 0; /* bytes of rbuf already known to hold no newline */
	for (;;) {
		char *nl = rbuf->len > scanned ? memchr(rbuf->buf + scanned, '\n', rbuf->len - scanned)
					       : NULL;
		scanned = rbuf->len;
		if (nl) {
			size_t n = (size_t)(nl - rbuf->buf);
			strbuf_reset(line);
			strbuf_add(line, rbuf->buf, n);
			if (line->len && line->buf[line->len - 1] == '\r')
				line->buf[--line->len] = '\0';
			memmove(rbuf->buf, nl + 1, rbuf->len - n - 1);
			rbuf->len -= n + 1;
			rbuf->buf[rbuf->len] = '\0';
			return 0;
		}
		if (rbuf->len > PROTO_LINE_MAX) {
			errno = EMSGSIZE; /* the peer is broken or hostile: drop it */
			return -1;
		}
		if (abort_flag && *abort_flag) {
			errno = EINTR;
			return -1;
		}
		/* a signal (the abort flag) interrupts poll; 1 s bounds only the
		 * timeout checks, so a controller waiting for a run on the
		 * measured machine wakes once a second, not five times */
		int ms = 1000;
		if (deadline) {
			double left = deadline - now_mono();
			if (left <= 0) {
				errno = ETIMEDOUT;
				return -1;
			}
			if (left * 1000 < ms)
				ms = (int)(left * 1000) + 1;
		}
		struct pollfd p = { fd, POLLIN, 0 };
		int r = poll(&p, 1, ms);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			continue;
		char buf[65536];
		ssize_t k = read(fd, buf, sizeof(buf));
		if (k < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		if (k == 0) {
			errno = EPIPE;
			return -1;
		}
		strbuf_add(rbuf, buf, (size_t)k);
	}
}

int proto_read_line(int fd, struct strbuf *rbuf, struct strbuf *line, double timeout_s)
{
	return read_line_flag(fd, rbuf, line, timeout_s, NULL);
}

int proto_write_json(int fd, json_t *obj)
{
	char *s = json_dumps(obj, JSON_COMPACT);
	if (!s)
		return -1;
	size_t len = strlen(s);
	struct strbuf sb = STRBUF_INIT;
	strbuf_add(&sb, s, len);
	strbuf_addch(&sb, '\n');
	free(s);
	size_t off = 0;
	while (off < sb.len) {
		ssize_t k = write(fd, sb.buf + off, sb.len - off);
		if (k < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				if (errno == EAGAIN) {
					struct pollfd p = { fd, POLLOUT, 0 };
					poll(&p, 1, 100);
				}
				continue;
			}
			strbuf_release(&sb);
			return -1;
		}
		off += (size_t)k;
	}
	strbuf_release(&sb);
	return 0;
}

static void note_noise(struct agent_conn *c, const char *line)
{
	strbuf_addstr(&c->noise, line);
	strbuf_addch(&c->noise, '\n');
	strbuf_tail(&c->noise, 4096);
}

int agent_wait_banner(struct agent_conn *c, double timeout_s, struct strbuf *err)
{
	struct strbuf line = STRBUF_INIT;
	double deadline = now_mono() + timeout_s;
	for (;;) {
		double left = deadline - now_mono();
		if (left <= 0 || read_line_flag(c->rfd, &c->rbuf, &line, left, c->abort_flag)) {
			strbuf_addf(err, "agent did not start: %s",
				    errno == ETIMEDOUT || left <= 0 ? "no banner within the timeout"
				    : errno == EPIPE ? "connection closed" : strerror(errno));
			if (c->noise.len)
				strbuf_addf(err, " (it printed: %.300s)", c->noise.buf);
			strbuf_release(&line);
			return -1;
		}
		const char *brace = strchr(line.buf, '{');
		json_t *j = brace ? json_loads(brace, JSON_ALLOW_NUL, NULL) : NULL;
		const char *who = j ? json_string_value(json_object_get(j, "agent")) : NULL;
		if (who && !strcmp(who, "schedlab")) {
			json_decref(c->banner);
			c->banner = j;
			strbuf_release(&line);
			return 0;
		}
		json_decref(j);
		note_noise(c, line.buf);
	}
}

const char *agent_banner_boot_id(const struct agent_conn *c)
{
	const char *id = json_string_value(json_object_get(c->banner, "boot_id"));
	return id ? id : "";
}

/*
 * A reply is untrusted input (an agent may be old, broken or lying): the
 * fields the controller reads are checked for their type before anyone
 * does. One spec per op: "name:T" with T one of s (string), i (integer),
 * n (number), b (boolean), o (object), S (array of strings), O (object of
 * strings), A (array of objects); every field is optional, others are
 * ignored.
 */
static const struct reply_spec {
	const char *op, *fields;
} reply_specs[] = {
	{ "exec", "exit_code:i signal:i timed_out:b wall_s:n stdout:s stderr:s files:O loads:A "
		  "schedstat_before:s schedstat_after:s schedstat_error:s aborted:s "
		  "restore_error:s killed_leftovers:s files_refused:O stdout_replaced:i stderr_replaced:i "
		  "tool:O" },
	{ "knob_set", "path:s old:s new:s readback:s" },
	{ "knob_get", "value:s" },
	{ "schedstat", "schedstat:s" },
};

static int type_ok(const json_t *v, char t)
{
	size_t i;
	json_t *e;
	const char *k;
	switch (t) {
	case 's': return json_is_string(v);
	case 'i': return json_is_integer(v);
	case 'n': return json_is_number(v);
	case 'b': return json_is_boolean(v);
	case 'o': return json_is_object(v);
	case 'S':
		if (!json_is_array(v))
			return 0;
		json_array_foreach(v, i, e) if (!json_is_string(e)) return 0;
		return 1;
	case 'A':
		if (!json_is_array(v))
			return 0;
		json_array_foreach(v, i, e) if (!json_is_object(e)) return 0;
		return 1;
	case 'O':
		if (!json_is_object(v))
			return 0;
		json_object_foreach((json_t *)v, k, e) if (!json_is_string(e)) return 0;
		return 1;
	}
	return 0;
}

static const char *type_name(char t)
{
	switch (t) {
	case 's': return "a string";
	case 'i': return "an integer";
	case 'n': return "a number";
	case 'b': return "true or false";
	case 'o': return "an object";
	case 'S': return "an array of strings";
	case 'A': return "an array of objects";
	case 'O': return "an object of strings";
	}
	return "?";
}

int agent_reply_check(const char *op, const json_t *result, struct strbuf *err)
{
	if (!json_is_object(result)) {
		strbuf_addf(err, "agent %s: the reply's result is not an object", op);
		return -1;
	}
	if (!strcmp(op, "sysinfo"))
		return sysinfo_check(result, err);
	for (size_t i = 0; i < sizeof(reply_specs) / sizeof(reply_specs[0]); i++) {
		if (strcmp(op, reply_specs[i].op))
			continue;
		const char *f = reply_specs[i].fields;
		while (*f) {
			const char *colon = strchr(f, ':');
			char name[64];
			snprintf(name, sizeof(name), "%.*s", (int)(colon - f), f);
			char t = colon[1];
			json_t *v = json_object_get(result, name);
			if (v && !json_is_null(v) && !type_ok(v, t)) {
				strbuf_addf(err, "agent %s: untrusted reply: %s must be %s", op, name,
					    type_name(t));
				return -1;
			}
			f = colon + 2;
			while (*f == ' ')
				f++;
		}
	}
	return 0;
}

int agent_call(struct agent_conn *c, const char *op, json_t *args, double timeout_s,
	       json_t **result, struct strbuf *err)
{
	int id = c->next_id++;
	json_t *req = json_pack("{s:i,s:s}", "id", id, "op", op);
	if (args)
		json_object_set_new(req, "args", args);
	if (result)
		*result = NULL;
	if (c->wfd < 0 || proto_write_json(c->wfd, req)) {
		json_decref(req);
		strbuf_addf(err, "agent %s: cannot send request: %s", op,
			    c->wfd < 0 ? "not connected" : strerror(errno));
		return -1;
	}
	json_decref(req);
	struct strbuf line = STRBUF_INIT;
	double deadline = now_mono() + timeout_s;
	for (;;) {
		double left = deadline - now_mono();
		if (left <= 0 || read_line_flag(c->rfd, &c->rbuf, &line, left, c->abort_flag)) {
			int e = left <= 0 ? ETIMEDOUT : errno;
			strbuf_addf(err, "agent %s: %s", op,
				    e == ETIMEDOUT ? "no answer within the timeout"
				    : e == EPIPE ? "connection closed (agent or target died)"
				    : e == EINTR ? "interrupted"
				    : e == EMSGSIZE ? "a line longer than 128 MiB without a newline: "
						      "the connection is dropped"
				    : strerror(e));
			strbuf_release(&line);
			errno = e;
			return -1;
		}
		json_error_t jerr;
		json_t *resp = line.buf[0] == '{' ? json_loads(line.buf, JSON_ALLOW_NUL, &jerr) : NULL;
		if (!resp || !json_object_get(resp, "id")) {
			/* a fresh banner means the agent restarted under us */
			if (resp && json_object_get(resp, "agent")) {
				json_decref(c->banner);
				c->banner = resp;
				continue;
			}
			note_noise(c, line.buf);
			json_decref(resp);
			continue;
		}
		if (json_integer_value(json_object_get(resp, "id")) != id) {
			json_decref(resp);
			continue; /* a stale answer to an abandoned request */
		}
		strbuf_release(&line);
		if (json_is_true(json_object_get(resp, "ok"))) {
			json_t *r = json_object_get(resp, "result");
			if (r && agent_reply_check(op, r, err)) {
				json_decref(resp);
				return -2; /* an answer, but not one to use */
			}
			if (result) {
				*result = r;
				json_incref(*result);
				if (!*result)
					*result = json_object();
			}
			json_decref(resp);
			return 0;
		}
		const char *msg = json_string_value(json_object_get(resp, "error"));
		strbuf_addf(err, "%s", msg ? msg : "agent error without a message");
		json_decref(resp);
		return -2;
	}
}
