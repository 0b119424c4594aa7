/*
 * Artifacts over HTTP for lab schedulers (the lava target's
 * `"artifacts": {"serve": "http"}`, docs/lab.md): the controller serves the
 * kernel and initramfs of each job in flight to the lab's workers, read-only,
 * through libmicrohttpd (its own thread), for as long as the job runs.
 *
 * What can be fetched is a table, not a folder: every job's files are
 * registered under a fresh random prefix (128 bits from getrandom) as
 * "/<32 hex>/<name>", and a request is answered only when its path is
 * exactly one of those strings. No file name is ever made from a request,
 * so nothing outside the table can be reached (no "..", no listing, no
 * other job's files without its prefix); GET and HEAD only. A job's files
 * are removed from the table when it ends.
 */
#ifndef SL_ARTSERVE_H
#define SL_ARTSERVE_H

#include <stddef.h>

#include "harness/util/strbuf.h"

struct artserve;

/* listen on "IPV4:PORT" (port 0: any free one); NULL with a message */
struct artserve *artserve_start(const char *listen, struct strbuf *err);
/* the port it listens on */
int artserve_port(const struct artserve *s);
/*
 * serve the regular files paths[i] as "<prefix><names[i]>" until
 * artserve_remove(prefix); names: letters, digits, . _ - only. prefix gets
 * "/<32 hex>/" (size >= 40). 0, or -1 with a message (nothing registered).
 */
int artserve_add(struct artserve *s, const char *const *names, const char *const *paths,
		 size_t n, char *prefix, size_t plen, struct strbuf *err);
void artserve_remove(struct artserve *s, const char *prefix);
/* requests answered with a file so far (for tests and the log) */
unsigned long artserve_served(const struct artserve *s);
void artserve_stop(struct artserve *s);

#endif
