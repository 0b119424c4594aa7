/*
 * The HTTP artifact server of the lava target (see artserve.h): a table of
 * exact URL paths to registered files, answered by libmicrohttpd's internal
 * thread; the table is shared with the controller's thread under a mutex.
 */
#include "harness/targets/artserve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/targets/lava_job.h"

struct art_entry {
	char *url;      /* "/<32 hex>/<name>" */
	char *file;     /* the file, as registered (realpath) */
};

struct artserve {
	struct MHD_Daemon *d;
	pthread_mutex_t mu;
	struct art_entry *e;
	size_t n, alloc;
	int port;
	unsigned long served;
};

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned code, const char *msg)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(msg), (void *)msg,
								 MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "text/plain");
	enum MHD_Result ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **req_cls)
{
	struct artserve *s = cls;
	(void)version;
	(void)upload;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return answer(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or HEAD only\n");
	if (!*req_cls) { /* the first call is for the headers only */
		*req_cls = s;
		return MHD_YES;
	}
	if (*upload_size)
		return answer(conn, MHD_HTTP_BAD_REQUEST, "no body\n");
	int fd = -1;
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->e[i].url, url)) {
			fd = open(s->e[i].file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
			break;
		}
	pthread_mutex_unlock(&s->mu);
	struct stat st;
	if (fd < 0)
		return answer(conn, MHD_HTTP_NOT_FOUND, "not found\n");
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return answer(conn, MHD_HTTP_NOT_FOUND, "not found\n");
	}
	struct MHD_Response *r = MHD_create_response_from_fd((uint64_t)st.st_size, fd);
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/octet-stream");
	enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	pthread_mutex_lock(&s->mu);
	s->served++;
	pthread_mutex_unlock(&s->mu);
	return ret;
}

struct artserve *artserve_start(const char *listen, struct strbuf *err)
{
	char host[64];
	int port;
	struct sockaddr_in sa;
	if (lava_hostport(listen, host, sizeof(host), &port)) {
		strbuf_addf(err, "artifacts: listen '%s': must be IPV4:PORT", listen);
		return NULL;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		strbuf_addf(err, "artifacts: listen '%s': not an IPv4 address", listen);
		return NULL;
	}
	struct artserve *s = xcalloc(1, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
	/* the server's thread takes no signals: Ctrl-C goes to the controller's */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL, NULL,
				handle, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_END);
	int saved = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	if (!s->d) {
		strbuf_addf(err, "artifacts: cannot listen on %s (libmicrohttpd: %s)", listen,
			    errno ? strerror(errno) : "failed");
		pthread_mutex_destroy(&s->mu);
		free(s);
		return NULL;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = di ? di->port : port;
	return s;
}

int artserve_port(const struct artserve *s)
{
	return s->port;
}

static int name_ok(const char *n)
{
	if (!*n || strlen(n) > 64 || !strcmp(n, ".") || !strcmp(n, ".."))
		return 0;
	for (; *n; n++)
		if (!(('a' <= *n && *n <= 'z') || ('A' <= *n && *n <= 'Z') ||
		      ('0' <= *n && *n <= '9') || strchr("._-", *n)))
			return 0;
	return 1;
}

int artserve_add(struct artserve *s, const char *const *names, const char *const *paths,
		 size_t n, char *prefix, size_t plen, struct strbuf *err)
{
	unsigned char rnd[16];
	char **files = xcalloc(n + 1, sizeof(char *));
	int ret = -1;
	if (plen < 40) {
		strbuf_addstr(err, "artifacts: prefix buffer too small");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (!name_ok(names[i])) {
			strbuf_addf(err, "artifacts: '%s' is not a file name to serve", names[i]);
			goto out;
		}
		files[i] = realpath(paths[i], NULL);
		if (!files[i] || stat(files[i], &st) || !S_ISREG(st.st_mode)) {
			strbuf_addf(err, "artifacts: %s: %s", paths[i],
				    files[i] ? "not a regular file" : strerror(errno));
			goto out;
		}
	}
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		strbuf_addf(err, "artifacts: getrandom: %s", strerror(errno));
		goto out;
	}
	char *p = prefix;
	*p++ = '/';
	for (size_t i = 0; i < sizeof(rnd); i++)
		p += sprintf(p, "%02x", rnd[i]);
	*p++ = '/';
	*p = '\0';
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < n; i++) {
		if (s->n == s->alloc) {
			s->alloc = s->alloc ? 2 * s->alloc : 8;
			s->e = xrealloc(s->e, s->alloc * sizeof(*s->e));
		}
		s->e[s->n].url = xstrfmt("%s%s", prefix, names[i]);
		s->e[s->n].file = files[i];
		files[i] = NULL;
		s->n++;
	}
	pthread_mutex_unlock(&s->mu);
	ret = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(files[i]);
	free(files);
	return ret;
}

void artserve_remove(struct artserve *s, const char *prefix)
{
	size_t pl = strlen(prefix);
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < s->n;) {
		if (!strncmp(s->e[i].url, prefix, pl)) {
			free(s->e[i].url);
			free(s->e[i].file);
			s->e[i] = s->e[--s->n];
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&s->mu);
}

unsigned long artserve_served(const struct artserve *s)
{
	struct artserve *m = (struct artserve *)s;
	pthread_mutex_lock(&m->mu);
	unsigned long n = m->served;
	pthread_mutex_unlock(&m->mu);
	return n;
}

void artserve_stop(struct artserve *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->d);
	for (size_t i = 0; i < s->n; i++) {
		free(s->e[i].url);
		free(s->e[i].file);
	}
	free(s->e);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
