/*
 * The target lock (tlock.h): flock on a file per target key, a registry of
 * the keys this process holds (so that a bisection's sessions take it for
 * free), and the hand-over of a held lock to a child through an inherited
 * descriptor named in SCHEDLAB_TARGET_LOCK_FD: kept open across exec for
 * that one child (struct child.keep_fd), close-on-exec again in it
 * (tlock_seal_inherited), so that nothing the child starts holds it.
 */
#include "harness/orchestrate/tlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/util/sha256.h"

#define TLOCK_MAX 8

static struct held {
	char *key;
	int fd;
	int count;
	int inherited;          /* the parent's lock: never unlocked here */
	char env[48];
} held[TLOCK_MAX];

char *tlock_key(const json_t *target, const json_t *lab)
{
	const char *type = json_string_value(json_object_get(target, "type"));
	if (!type)
		type = "local";
	if (!strcmp(type, "local")) {
		char host[256] = "localhost";
		gethostname(host, sizeof(host) - 1);
		json_t *m = json_object_get(lab, "target");
		if (json_is_integer(m))
			return xstrfmt("local@%s#%lld", host, (long long)json_integer_value(m));
		return xstrfmt("local@%s", host);
	}
	if (!strcmp(type, "ssh")) {
		const char *h = json_string_value(json_object_get(target, "host"));
		const char *u = json_string_value(json_object_get(target, "user"));
		json_t *p = json_object_get(target, "port");
		return xstrfmt("ssh:%s@%s:%lld", u ? u : "", h ? h : "",
			       json_is_integer(p) ? (long long)json_integer_value(p) : 22LL);
	}
	/* qemu: a VM of the session's own; lava: LAVA's scheduler gives a
	   device to one job at a time */
	return NULL;
}

static char *lock_dir(void)
{
	const char *d = getenv("SCHEDLAB_TARGET_LOCK_DIR");
	if (d && *d)
		return xstrdup(d);
	if (geteuid() == 0)
		return xstrdup("/run/schedlab/targets");
	const char *x = getenv("XDG_RUNTIME_DIR");
	if (x && *x)
		return xstrfmt("%s/schedlab-targets", x);
	return xstrfmt("/tmp/schedlab-targets-%u", (unsigned)geteuid());
}

char *tlock_path(const char *key)
{
	char hex[65];
	sha256_hex_of(key, strlen(key), hex);
	char *dir = lock_dir();
	char *p = xstrfmt("%s/%.16s.lock", dir, hex);
	free(dir);
	return p;
}

static struct held *find(const char *key)
{
	for (int i = 0; i < TLOCK_MAX; i++)
		if (held[i].key && !strcmp(held[i].key, key))
			return &held[i];
	return NULL;
}

/* mkdir -p of the lock directory (private to its user unless it is /run) */
static int make_dir(const char *path, struct strbuf *err)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) && errno != EEXIST) {
			strbuf_addf(err, "target lock: cannot make %s: %s", p, strerror(errno));
			free(p);
			return -1;
		}
		*s = '/';
	}
	int rc = 0;
	if (mkdir(p, 0700) && errno != EEXIST) {
		strbuf_addf(err, "target lock: cannot make %s: %s", p, strerror(errno));
		rc = -1;
	}
	free(p);
	return rc;
}

/* the descriptor SCHEDLAB_TARGET_LOCK_FD names when it is an open regular
 * file, else -1 */
static int env_fd(struct stat *st)
{
	const char *e = getenv("SCHEDLAB_TARGET_LOCK_FD");
	if (!e || !*e)
		return -1;
	char *end;
	long fd = strtol(e, &end, 10);
	if (*end || fd < 3 || fd > 1 << 20 || fstat((int)fd, st) || !S_ISREG(st->st_mode))
		return -1;
	return (int)fd;
}

void tlock_seal_inherited(void)
{
	struct stat st;
	int fd = env_fd(&st);
	int fl = fd >= 0 ? fcntl(fd, F_GETFD) : -1;
	if (fl >= 0 && !(fl & FD_CLOEXEC))
		fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
}

/* the parent's lock of this key, handed down: its fd, or -1 */
static int inherited_fd(const char *path)
{
	struct stat a, b;
	int fd = env_fd(&a);
	if (fd < 0 || stat(path, &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return -1;
	tlock_seal_inherited(); /* kept for the children it is handed to, only */
	return fd;
}

static void say_holder(int fd, char *buf, size_t n)
{
	buf[0] = '\0';
	ssize_t k = pread(fd, buf, n - 1, 0);
	if (k > 0)
		buf[k] = '\0';
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
}

/* the registry's record of a lock now held (inherited: the parent's) */
static void hold(struct held *slot, const char *key, int fd, int inherited)
{
	slot->key = xstrdup(key);
	slot->fd = fd;
	slot->count = 1;
	slot->inherited = inherited;
	snprintf(slot->env, sizeof(slot->env), "SCHEDLAB_TARGET_LOCK_FD=%d", fd);
}

int tlock_take(const char *key, const char *what, const char *prefix,
	       volatile sig_atomic_t *abort_flag, struct strbuf *err)
{
	struct held *h = find(key);
	if (h) {
		h->count++;
		return 0;
	}
	struct held *slot = NULL;
	for (int i = 0; i < TLOCK_MAX && !slot; i++)
		if (!held[i].key)
			slot = &held[i];
	if (!slot) {
		strbuf_addstr(err, "target lock: too many targets held at once");
		return -1;
	}
	char *path = tlock_path(key);
	int fd = inherited_fd(path);
	if (fd >= 0) {
		hold(slot, key, fd, 1);
		free(path);
		return 0;
	}
	char *dir = lock_dir();
	int rc = make_dir(dir, err);
	free(dir);
	if (rc) {
		free(path);
		return -1;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		strbuf_addf(err, "target lock: %s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	int said = 0;
	while (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			strbuf_addf(err, "target lock: %s: %s", path, strerror(errno));
			close(fd);
			free(path);
			return -1;
		}
		if (abort_flag && *abort_flag) {
			strbuf_addf(err, "interrupted while waiting for target %s", key);
			close(fd);
			free(path);
			return -1;
		}
		if (!said) {
			char who[256];
			say_holder(fd, who, sizeof(who));
			fprintf(stderr, "%starget %s is in use by %s; waiting until it is free "
					"(one session a target: docs/reliability.md)\n",
				prefix ? prefix : "", key, *who ? who : "another process");
			said = 1;
		}
		usleep(200 * 1000);
	}
	if (said)
		fprintf(stderr, "%starget %s is free: going on\n", prefix ? prefix : "", key);
	char line[300];
	int n = snprintf(line, sizeof(line), "pid %ld: %s\n", (long)getpid(), what);
	if (ftruncate(fd, 0) || pwrite(fd, line, (size_t)n, 0) < 0) {
		/* only the waiters' message suffers */
	}
	hold(slot, key, fd, 0);
	free(path);
	return 0;
}

void tlock_release(const char *key)
{
	struct held *h = key ? find(key) : NULL;
	if (!h || --h->count > 0)
		return;
	if (!h->inherited) {
		if (ftruncate(h->fd, 0)) {
			/* the next holder rewrites it */
		}
		flock(h->fd, LOCK_UN);
		close(h->fd);
	}
	free(h->key);
	memset(h, 0, sizeof(*h));
}

int tlock_child_fd(const char *key)
{
	struct held *h = key ? find(key) : NULL;
	return h ? h->fd : -1;
}

const char *tlock_child_env(const char *key)
{
	struct held *h = key ? find(key) : NULL;
	return h ? h->env : NULL;
}
