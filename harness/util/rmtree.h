/*
 * Removing a folder and everything below it, as the agent's run folders,
 * sl-pgbench's database folder and the unit tests' scratch folders are
 * removed: depth first, symbolic links removed as links (never followed),
 * whatever cannot be removed left in place while the walk goes on (no
 * state: safe from any thread). One function, so that the three do not each
 * carry an nftw callback.
 */
#ifndef SL_RMTREE_H
#define SL_RMTREE_H

void rm_tree(const char *path);

#endif
