/*
 * The requests of a batch and its replies (batchio.h), for the lava target
 * and the qemu target's sealed runs.
 */
#include "harness/targets/batchio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(FILE *f, json_t *r)
{
	char *s = json_dumps(r, JSON_COMPACT);
	if (s)
		fprintf(f, "%s\n", s);
	free(s);
	json_decref(r);
}

int batch_write_requests(const char *file, const char *who, struct target *t,
			 struct batch_run *runs, size_t n, struct batch_ids *ids, long *max_id,
			 struct strbuf *err)
{
	FILE *f = fopen(file, "we");
	if (!f) {
		strbuf_addf(err, "%s: %s: %s", who, file, strerror(errno));
		return -1;
	}
	long id = 1;
	put(f, json_pack("{s:i,s:s}", "id", id++, "op", "sysinfo"));
	for (size_t i = 0; i < n; i++) {
		memset(&ids[i], 0, sizeof(ids[i]));
		if (!runs[i].req)
			continue;
		size_t k;
		json_t *w;
		ids[i].first_knob = id;
		json_array_foreach(runs[i].writes, k, w) {
			put(f, json_pack("{s:i,s:s,s:O}", "id", id++, "op", "knob_set", "args", w));
			ids[i].nknobs++;
		}
		ids[i].exec = id;
		put(f, json_pack("{s:i,s:s,s:O}", "id", id++, "op", "exec", "args", runs[i].req));
		if (ids[i].nknobs) {
			ids[i].restore = id;
			put(f, json_pack("{s:i,s:s,s:{s:i}}", "id", id++, "op", "knob_restore", "args",
					 "keep", t->knob_keep));
		}
	}
	if (ferror(f) | fclose(f)) {
		strbuf_addf(err, "%s: %s: %s", who, file, strerror(errno ? errno : EIO));
		return -1;
	}
	*max_id = id - 1;
	return 0;
}

int batch_read_log(const char *file, const char *who, long max, struct lava_log *l,
		   struct strbuf *err)
{
	FILE *f = fopen(file, "re");
	if (!f) {
		strbuf_addf(err, "%s: %s: %s", who, file, strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	long total = 0;
	while (total < max && (n = getline(&line, &cap, f)) > 0) {
		total += n;
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		lava_log_line(l, line, (size_t)n);
	}
	free(line);
	fclose(f);
	lava_log_finish(l);
	return 0;
}

void batch_take_replies(const struct lava_log *d, const struct batch_ids *ids,
			struct batch_run *runs, size_t n, const char *where)
{
	int refused;
	for (size_t i = 0; i < n; i++) {
		struct batch_run *r = &runs[i];
		if (!r->req)
			continue;
		r->applied = json_array();
		r->rc = 0;
		for (long k = 0; k < ids[i].nknobs; k++) {
			json_t *a = lava_log_result(d, ids[i].first_knob + k, "knob_set", &r->err,
						    &refused);
			if (!a) {
				r->rc = refused ? 1 : -1;
				break;
			}
			json_array_append(r->applied, a);
		}
		if (!r->rc) {
			json_t *res = lava_log_result(d, ids[i].exec, "exec", &r->err, &refused);
			if (res)
				r->res = json_incref(res);
			else
				r->rc = refused ? 1 : -1;
		}
		if (r->rc == -1)
			strbuf_addf(&r->err, ": %s", where);
		json_t *rr = ids[i].restore ? lava_log_reply(d, ids[i].restore) : NULL;
		if (rr && !json_is_true(json_object_get(rr, "ok"))) {
			const char *e = json_string_value(json_object_get(rr, "error"));
			r->restore_failed = 1;
			strbuf_addf(&r->err, "%s%.500s", r->err.len ? "; " : "", e ? e : "refused");
		}
	}
}
