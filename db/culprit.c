/*
 * The culprit's one encoder and one decoder (culprit.h).
 */
#include "db/culprit.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void db_culprit_init(struct db_culprit *c)
{
	memset(c, 0, sizeof(*c));
	c->change_pct = c->ci_lo = c->ci_hi = c->p = c->error_bound = NAN;
	c->builds = c->boots = -1;
}

void db_culprit_free(struct db_culprit *c)
{
	if (!c)
		return;
	free(c->commit);
	free(c->subject);
	free(c->author);
	free(c->why);
	for (size_t i = 0; i < c->nsteps; i++) {
		free(c->steps[i].commit);
		free(c->steps[i].role);
		free(c->steps[i].verdict);
		free(c->steps[i].why);
	}
	free(c->steps);
	db_culprit_init(c);
}

/* a JSON string of any bytes: as they are when they are UTF-8, else each
 * byte as the Latin-1 character of its value */
static json_t *jstring(const char *s)
{
	if (!s)
		return json_null();
	json_t *j = json_string(s);
	if (j)
		return j;
	size_t n = strlen(s);
	char *u = malloc(2 * n + 1), *o = u;
	if (!u)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x80) {
			*o++ = (char)*p;
		} else {
			*o++ = (char)(0xc0 | (*p >> 6));
			*o++ = (char)(0x80 | (*p & 0x3f));
		}
	}
	*o = '\0';
	j = json_string(u);
	free(u);
	return j;
}

static void set_num(json_t *o, const char *k, double v)
{
	if (isfinite(v))
		json_object_set_new(o, k, json_real(v));
}

char *db_culprit_encode(const struct db_culprit *c)
{
	if (!c->commit || !*c->commit)
		return NULL;
	json_t *o = json_object();
	json_object_set_new(o, "commit", jstring(c->commit));
	json_object_set_new(o, "subject", jstring(c->subject ? c->subject : ""));
	json_object_set_new(o, "author", jstring(c->author ? c->author : ""));
	if (c->why)
		json_object_set_new(o, "why", jstring(c->why));
	if (isfinite(c->change_pct)) {
		json_t *e = json_object();
		set_num(e, "change_pct", c->change_pct);
		if (isfinite(c->ci_lo) && isfinite(c->ci_hi))
			json_object_set_new(e, "ci_pct", json_pack("[f, f]", c->ci_lo, c->ci_hi));
		set_num(e, "p", c->p);
		json_object_set_new(o, "effect", e);
	}
	if (c->bisect_id > 0)
		json_object_set_new(o, "bisect_id", json_integer(c->bisect_id));
	set_num(o, "error_bound", c->error_bound);
	if (c->nsteps) {
		json_t *a = json_array();
		for (size_t i = 0; i < c->nsteps; i++) {
			const struct db_culprit_step *s = &c->steps[i];
			json_t *e = json_object();
			json_object_set_new(e, "commit", jstring(s->commit ? s->commit : ""));
			json_object_set_new(e, "role", jstring(s->role ? s->role : ""));
			json_object_set_new(e, "verdict", jstring(s->verdict ? s->verdict : "pending"));
			json_object_set_new(e, "why", jstring(s->why ? s->why : ""));
			json_array_append_new(a, e);
		}
		json_object_set_new(o, "steps", a);
	}
	if (c->builds >= 0)
		json_object_set_new(o, "builds", json_integer(c->builds));
	if (c->boots >= 0)
		json_object_set_new(o, "boots", json_integer(c->boots));
	char *t = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return t;
}

static char *dup_str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? strdup(s) : NULL;
}

static double num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

int db_culprit_decode(const char *json, struct db_culprit *c)
{
	db_culprit_init(c);
	json_t *o = json ? json_loads(json, 0, NULL) : NULL;
	if (!json_is_string(json_object_get(o, "commit"))) {
		json_decref(o);
		return -1;
	}
	c->commit = dup_str(o, "commit");
	c->subject = dup_str(o, "subject");
	c->author = dup_str(o, "author");
	c->why = dup_str(o, "why");
	json_t *e = json_object_get(o, "effect");
	c->change_pct = num(e, "change_pct");
	json_t *ci = json_object_get(e, "ci_pct");
	if (json_is_array(ci) && json_array_size(ci) == 2) {
		c->ci_lo = json_number_value(json_array_get(ci, 0));
		c->ci_hi = json_number_value(json_array_get(ci, 1));
	}
	c->p = num(e, "p");
	if (json_is_integer(json_object_get(o, "bisect_id")))
		c->bisect_id = json_integer_value(json_object_get(o, "bisect_id"));
	c->error_bound = num(o, "error_bound");
	json_t *a = json_object_get(o, "steps");
	size_t n = json_array_size(a);
	if (n && (c->steps = calloc(n, sizeof(*c->steps)))) {
		for (size_t i = 0; i < n; i++) {
			json_t *s = json_array_get(a, i);
			c->steps[i] = (struct db_culprit_step){ dup_str(s, "commit"), dup_str(s, "role"),
								dup_str(s, "verdict"), dup_str(s, "why") };
		}
		c->nsteps = n;
	}
	if (json_is_integer(json_object_get(o, "builds")))
		c->builds = (long)json_integer_value(json_object_get(o, "builds"));
	if (json_is_integer(json_object_get(o, "boots")))
		c->boots = (long)json_integer_value(json_object_get(o, "boots"));
	json_decref(o);
	return 0;
}
