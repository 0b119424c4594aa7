/*
 * Debian's PostgreSQL 15 files for a machine without them: the one list and
 * walk that the qemu and lava initramfs and the ssh bundle share
 * (pgfiles.h says what and why).
 */
#include "harness/targets/pgfiles.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const pg_programs[] = { PG_BIN "/initdb", PG_BIN "/postgres", PG_BIN "/pgbench",
				    NULL };

static const char *const pg_modules[] = { PG_LIB "/plpgsql.so", PG_LIB "/dict_snowball.so",
					  NULL };

void pg_files_release(struct pg_files *pf)
{
	strvec_clear(&pf->paths);
	strvec_clear(&pf->dsts);
}

int pg_share_wanted(const char *path)
{
	static const char ext[] = PG_SHARE "/extension/";
	size_t n = strlen(PG_SHARE);
	if (strncmp(path, PG_SHARE, n) || (path[n] && path[n] != '/'))
		return 0;
	if (!strcmp(path, PG_SHARE "/man") || !strncmp(path, PG_SHARE "/man/", n + 5))
		return 0;
	if (!strncmp(path, ext, strlen(ext)))
		return !strncmp(path + strlen(ext), "plpgsql", 7) ||
		       !path[strlen(ext)]; /* the folder itself */
	return 1;
}

static int walk(struct pg_files *pf, const char *dir, const char *who, struct strbuf *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;
	if (!d) {
		strbuf_addf(err, "%s: pgbench needs %s: %s (install the Debian package "
			    "postgresql-15)", who, dir, strerror(errno));
		return -1;
	}
	while (!rc && (e = readdir(d))) {
		struct stat st;
		if (e->d_name[0] == '.')
			continue;
		char *path = xstrfmt("%s/%s", dir, e->d_name);
		if (!pg_share_wanted(path) || stat(path, &st))
			;
		else if (S_ISDIR(st.st_mode))
			rc = walk(pf, path, who, err);
		else if (S_ISREG(st.st_mode)) {
			strvec_push(&pf->paths, path);
			strvec_push(&pf->dsts, path);
		}
		free(path);
	}
	closedir(d);
	return rc;
}

int pg_files_collect(struct pg_files *pf, const char *who, struct strbuf *err)
{
	for (const char *const *v = pg_programs; *v; v++)
		if (access(*v, X_OK)) {
			strbuf_addf(err, "%s: pgbench needs %s: %s (install the Debian package "
				    "postgresql-15)", who, *v, strerror(errno));
			return -1;
		}
	for (const char *const *v = pg_modules; *v; v++) {
		if (access(*v, R_OK)) {
			strbuf_addf(err, "%s: pgbench needs %s: %s (install the Debian package "
				    "postgresql-15)", who, *v, strerror(errno));
			return -1;
		}
		strvec_push(&pf->paths, *v);
		strvec_push(&pf->dsts, *v);
	}
	return walk(pf, PG_SHARE, who, err);
}

int pg_initramfs_files(const char *const *tools, struct strvec *bins, struct pg_files *pf,
		       const char *who, struct strbuf *err)
{
	int want = 0;
	for (const char *const *v = tools; v && *v; v++)
		want |= !strcmp(*v, "sl-pgbench");
	if (!want)
		return 0;
	if (pg_files_collect(pf, who, err) < 0)
		return -1;
	for (const char *const *v = pg_programs; *v; v++)
		strvec_push(bins, *v);
	/* a server in /bin takes $libdir as /bin's sibling /lib */
	for (size_t i = 0; i < pf->dsts.nr; i++)
		if (!strncmp(pf->dsts.v[i], PG_LIB "/", strlen(PG_LIB) + 1)) {
			char *d = xstrfmt("/lib/%s", pf->dsts.v[i] + strlen(PG_LIB) + 1);
			free((char *)pf->dsts.v[i]);
			pf->dsts.v[i] = d;
		}
	return 0;
}
