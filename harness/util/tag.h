/*
 * A session's tag as a name: 1 to TAG_MAX letters, digits, '.', '_' or
 * '-', not "." or "..", so that a file named by it (the night's report
 * TAG.html) stays in its folder. `run --tag`, `nightly --tag` and the
 * robot's report names ask the same check.
 */
#ifndef SL_UTIL_TAG_H
#define SL_UTIL_TAG_H

#define TAG_MAX 64

/* 1 when t is a valid tag, 0 when not (NULL included) */
int tag_valid(const char *t);

#endif
