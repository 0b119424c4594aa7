/*
 * The workload bundle of the ssh target: the programs a plan runs, with the
 * shared libraries and the dynamic loader they need, resolved the way the
 * initramfs builder resolves them (initramfs_resolve), so that a machine
 * with none of them installed (a bare lab box: a kernel, an sshd, busybox)
 * runs the controller's binaries, whatever its own libc.
 *
 * Layout, relative to AGENT_DIR/bundle/<hash>/ on the target:
 *   bin/NAME      every program (mode 0700)
 *   lib/FILE      every library under its file name, the loader among them
 *                 (mode 0755: PostgreSQL's server runs them as `nobody`)
 *   pg/           only when the plan runs pgbench (bundle_add_pg): Debian's
 *                 PostgreSQL 15 in its own relative layout, usable by the
 *                 server's user (folders 0755, files 0644, programs 0755):
 *     usr/lib/postgresql/15/bin/{initdb,postgres,pgbench}
 *                   /bin/sh wrappers (bundle_pg_wrapper, fixed text) that
 *                   exec the bundle's loader on NAME.real beside them:
 *                   `lib/ld-... --library-path B/lib --inhibit-cache
 *                   [--argv0 "$0"] "$0.real" "$@"`, B found from "$0";
 *     usr/lib/postgresql/15/bin/NAME.real   the ELF programs (libraries
 *                   in lib/ with everyone else's);
 *     usr/lib/postgresql/15/lib/{plpgsql,dict_snowball}.so, and
 *     usr/share/postgresql/15/...   the share files (pgfiles.h: no manual
 *                   pages, no extension but plpgsql).
 *                 initdb runs postgres itself (`"DIR/postgres" -V` and the
 *                 bootstrap, through popen): DIR is its own folder, so it
 *                 finds the wrapper, not a postgres of the box. Every program
 *                 finds the share folder and $libdir relative to its own
 *                 path (argv[0], the wrapper's or NAME.real's: both in a
 *                 folder ending in lib/postgresql/15/bin, as Debian's).
 *                 workloads/native/sl-pgbench.c runs them from there
 *                 (SCHEDLAB_BUNDLE) and, as root, makes the folder reachable
 *                 for the server's user with a bind mount of the bundle in a
 *                 mount namespace of its own, since AGENT_DIR (under root's
 *                 home, made with umask 077) is not. The agent itself knows
 *                 nothing of pg/ (bundle.json unchanged, version 1).
 *   bundle.json   how the agent runs them: {"version": 1, "loader":
 *                 "lib/ld-linux-x86-64.so.2", "argv0": true, "tools":
 *                 {"cyclictest": "dynamic", "sl-pingpong": "static"}}
 *   MANIFEST      "SHA256  PATH" for each file above, sorted by path (what
 *                 `sha256sum -c` checks; busybox's too)
 * The bundle's hash is the SHA-256 of MANIFEST, so it covers every file's
 * bytes and place: the same tools give the same folder on every box, a
 * changed library a new one. The ssh target checks MANIFEST's hash and
 * `sha256sum -c MANIFEST` before it uses a folder; a copy is unpacked into a
 * temporary folder and renamed only once it checks out (harness/targets/ssh.c).
 *
 * A dynamic program runs through the bundled loader: the agent executes
 * `lib/ld-... --library-path DIR/lib --inhibit-cache [--argv0 NAME]
 * DIR/bin/NAME ARGS` with argv[0] still NAME (so `ps` shows the tool's
 * name), and the box's /etc/ld.so.cache and libraries are never consulted.
 * The programs schedlab runs (cyclictest, hackbench, stress-ng, rt-app)
 * fork and start threads but do not exec other programs, which would leave
 * the bundle. Static programs (sl-*) run directly; those that start others
 * (sl-netpair, sl-pgbench) find them in the bundle through SCHEDLAB_BUNDLE.
 *
 * The transfer is a ustar archive written here (bundle_write_tar), which
 * busybox tar and GNU tar unpack. Pure parts (manifest, hash, tar headers)
 * are tested in tests/unit/test_bundle.c.
 */
#ifndef SL_BUNDLE_H
#define SL_BUNDLE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/util/bundle_paths.h" /* BUNDLE_PG_BIN */
#include "harness/util/strbuf.h"

#define BUNDLE_VERSION 1

struct bundle_file {
	char *dst;                /* relative path in the bundle */
	char *src;                /* host file, or NULL for data */
	struct strbuf data;       /* inline bytes (bundle.json, MANIFEST) */
	uint64_t size;
	char sha256[65];
};

struct bundle {
	struct bundle_file *f;
	size_t nr, alloc;
	json_t *tools;            /* program name -> "dynamic" | "static" */
	char *loader;             /* "lib/<loader file>", NULL when nothing is dynamic */
	char *loader_src;         /* the loader on this machine */
	int argv0;                /* the loader takes --argv0 (glibc >= 2.33) */
	int pg;                   /* pg/ was added (bundle_add_pg) */
	char hash[65];            /* set by bundle_finish */
	uint64_t bytes;           /* total size of the files */
};

void bundle_init(struct bundle *b);
void bundle_release(struct bundle *b);

/* a host file at dst (hashed now); adding the same bytes at the same place
 * again is fine, other bytes are an error naming both sources */
int bundle_add_file(struct bundle *b, const char *dst, const char *src, struct strbuf *err);
/* inline bytes at dst */
int bundle_add_data(struct bundle *b, const char *dst, const char *data, size_t len,
		    struct strbuf *err);
/* a program (a path, or a name looked up in PATH) as bin/<its file name>
 * with its libraries in lib/; every dynamic program must use one loader */
int bundle_add_program(struct bundle *b, const char *name, struct strbuf *err);
/* PostgreSQL 15 for the pgbench workload (pg/ above; pgfiles.h), the
 * wrappers being added by bundle_finish; -1 with a message naming the
 * missing file and the Debian package */
int bundle_add_pg(struct bundle *b, struct strbuf *err);
/* add PostgreSQL's wrappers when pg/ is there, bundle.json and MANIFEST and set the hash; `probe_argv0`: ask the
 * loader whether it takes --argv0 (else b->argv0 is used as set) */
int bundle_finish(struct bundle *b, int probe_argv0, struct strbuf *err);

/* ---- pure parts ---- */

/* the MANIFEST text of the files so far (sorted by path), and its hash */
void bundle_manifest(struct bundle *b, struct strbuf *out, char hash[65]);
/* the wrapper script of PostgreSQL's program name (initdb, postgres,
 * pgbench) for the loader and argv0 of b */
void bundle_pg_wrapper(const struct bundle *b, const char *name, struct strbuf *out);
/* the mode a file has in the archive: bin/ 0700, lib/ 0755, PostgreSQL's
 * programs and wrappers 0755, other pg/ files 0644, the rest 0600 */
unsigned bundle_file_mode(const char *dst);
/* every folder of the files ("bin/", "pg/usr/", ...), sorted: parents first */
void bundle_dirs(const struct bundle *b, struct strvec *dirs);
/* the text of bundle.json */
void bundle_json_text(const struct bundle *b, struct strbuf *out);
/*
 * One ustar header block: a regular file ('0') of size bytes or a folder
 * ('5'; the archive has one for every folder, mode 0755, bin/ 0700), owner 0, mtime 0. -1 when name does not fit the 100-byte name field.
 */
int bundle_tar_header(unsigned char h[512], const char *name, unsigned mode, uint64_t size,
		      char type);
/* the byte size of bundle_write_tar's archive */
uint64_t bundle_tar_size(const struct bundle *b);
/* the archive of the whole bundle (folders, files, two zero blocks) to fd;
 * -1 with a message on a read or write error */
int bundle_write_tar(const struct bundle *b, int fd, struct strbuf *err);
/* the exec request's "bundle" object for the agent (harness/agent/agent.c),
 * the bundle being at remote_dir (absolute) on the target */
json_t *bundle_request(const struct bundle *b, const char *remote_dir);

#endif
