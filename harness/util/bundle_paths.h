/*
 * Paths inside the ssh target's workload bundle that both of its sides
 * name: the bundle's builder (harness/targets/bundle.c) puts PostgreSQL's
 * programs there, and sl-pgbench (workloads/native/sl-pgbench.c) runs them
 * from there on the target. One definition for both (a header of util/,
 * which each may include).
 */
#ifndef SL_UTIL_BUNDLE_PATHS_H
#define SL_UTIL_BUNDLE_PATHS_H

/* PostgreSQL 15's bin folder, relative to the bundle's root */
#define BUNDLE_PG_BIN "pg/usr/lib/postgresql/15/bin"

#endif
