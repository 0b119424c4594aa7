/*
 * sysinfo: what a machine is and what is in force right now, read by the
 * agent on the target. Every field is an object {"value": V, "source": S}
 * where S names the file or call it came from; a field that cannot be
 * determined is {"value": null, "source": "unknown", "error": "why"} — never
 * a guess stored as fact.
 *
 * All paths are read below a root prefix ("" on a real machine) so that the
 * parsers are tested against a fake /proc and /sys tree.
 */
#ifndef SL_SYSINFO_H
#define SL_SYSINFO_H

#include <jansson.h>

#include "harness/util/strbuf.h"

/* collect everything; never fails (unknown fields say why) */
json_t *sysinfo_collect(const char *root);

/* pure parsers, exposed for tests */
/* "none (voluntary) full " -> current "voluntary", modes [none, voluntary, full] */
int sysinfo_parse_preempt(const char *text, char *cur, size_t curlen, json_t **modes);
/* a kernel .config text -> value of CONFIG_<name> ("y", "250", ...) or NULL */
const char *sysinfo_config_value(const char *config, const char *name, char *buf, size_t len);
/* LLC groups: list of distinct shared_cpu_list strings of the highest cache level */
json_t *sysinfo_llc_groups(const char *root);

/* convenience accessors on a sysinfo object */
const char *sysinfo_str(const json_t *si, const char *field);
/* an agent's sysinfo reply, checked before it is read: every known field
 * is {"value": V, ...} with V of the field's type or null; -1 naming the
 * field otherwise */
int sysinfo_check(const json_t *si, struct strbuf *err);
long long sysinfo_int(const json_t *si, const char *field, long long dflt);
/* the field's "value" (borrowed) or NULL */
json_t *sysinfo_value(const json_t *si, const char *field);

#endif
