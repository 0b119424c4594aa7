/*
 * The files of Debian's PostgreSQL 15 (postgresql-15) that the pgbench
 * workload's throw-away server (workloads/native/sl-pgbench.c) needs on a
 * machine that has none of them: a qemu guest's or a LAVA job's initramfs
 * (pg_initramfs_files) and the ssh target's workload bundle (bundle.c,
 * bundle_add_pg). One list, one walk:
 *   - the programs initdb, postgres, pgbench (PG_BIN; their libraries are
 *     resolved by the caller, libicu's 31 MB of data among them);
 *   - the share folder PG_SHARE without the manual pages and without the
 *     extensions other than plpgsql (pg_share_wanted);
 *   - the two loadable modules initdb loads, plpgsql.so and dict_snowball.so
 *     (PG_LIB; they need only libc).
 * No time zone file: sl-pgbench runs every PostgreSQL program with TZ and
 * PGTZ "UTC0", a POSIX zone PostgreSQL parses without tzdata (a plain "UTC"
 * needs /usr/share/zoneinfo/UTC, the compiled-in system tzdata of Debian's
 * build, which a bare box may lack: the server then refuses every
 * connection with "invalid value for parameter TimeZone").
 *
 * Where the files go. PostgreSQL takes its share and $libdir folders
 * relative to its own executable when that sits in a folder ending like the
 * compiled-in bindir (make_relative_path in src/port/path.c: the tail after
 * the common prefix "/usr/" of bindir and sharedir, "lib/postgresql/15/bin")
 * and the compiled-in absolute ones otherwise. So an initramfs puts the
 * programs in /bin (their $libdir is then /bin's sibling /lib, where the
 * modules go) and the share files at their absolute paths; the bundle keeps
 * Debian's relative layout under pg/usr/ (bundle.h).
 */
#ifndef SL_PGFILES_H
#define SL_PGFILES_H

#include "harness/util/strbuf.h"

#define PG_BIN "/usr/lib/postgresql/15/bin"
#define PG_SHARE "/usr/share/postgresql/15"
#define PG_LIB "/usr/lib/postgresql/15/lib"

/* initdb, postgres, pgbench: NULL-terminated full paths under PG_BIN */
extern const char *const pg_programs[];

/* the data files: host paths and where they go (absolute paths on Debian,
 * or for an initramfs the modules in /lib) */
struct pg_files {
	struct strvec paths;
	struct strvec dsts;
};

void pg_files_release(struct pg_files *pf);

/*
 * The share files and the modules, each at its Debian path in dsts; -1 with
 * a message (starting with `who`) naming what is missing and the package.
 * The programs are checked to be executable (they are not added).
 */
int pg_files_collect(struct pg_files *pf, const char *who, struct strbuf *err);

/*
 * For an initramfs (qemu, lava): nothing unless tools (the plan's programs,
 * NULL-terminated) lists sl-pgbench; else the programs appended to bins
 * (installed in /bin, libraries by ldd) and the data files in pf with their
 * guest paths (the modules in /lib). -1 with a message.
 */
int pg_initramfs_files(const char *const *tools, struct strvec *bins, struct pg_files *pf,
		       const char *who, struct strbuf *err);

/* ---- pure ---- */

/* 1 when path (under PG_SHARE) is carried: not the manual pages, and of
 * extension/ only plpgsql's files */
int pg_share_wanted(const char *path);

#endif
