/*
 * Unit tests for harness/targets/artserve.c, the lava target's HTTP
 * artifact server, against a real server on 127.0.0.1 (a free port) with
 * raw requests over a socket: a registered file comes back whole (GET) or
 * as headers (HEAD); the root, the job's prefix as a folder, "..", another
 * prefix, a query string, a file name that was not registered, a removed
 * job and methods other than GET and HEAD get nothing; bad names and
 * non-regular files are not registered; a bad listen address is refused.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness/targets/artserve.h"
#include "tests/unit/tap.h"

/* one request; the whole answer in out; the status code or -1 */
static int request(int port, const char *method, const char *path, struct strbuf *out)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	strbuf_reset(out);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	char *req = xstrfmt("%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", method, path);
	if (write(fd, req, strlen(req)) < 0) {
		free(req);
		close(fd);
		return -1;
	}
	free(req);
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		strbuf_add(out, buf, (size_t)n);
	close(fd);
	int code = -1;
	if (sscanf(out->buf, "HTTP/1.%*d %d", &code) != 1)
		return -1;
	return code;
}

/* the body of an answer */
static const char *body(const struct strbuf *a)
{
	const char *b = strstr(a->buf, "\r\n\r\n");
	return b ? b + 4 : "";
}

TEST(serve)
{
	struct strbuf e = STRBUF_INIT, a = STRBUF_INIT;
	char dir[] = "/tmp/test_artserve.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char *kf = xstrfmt("%s/vmlinuz", dir), *inf = xstrfmt("%s/initrd.cpio", dir);
	char *secret = xstrfmt("%s/secret", dir);
	FILE *f = fopen(kf, "w");
	fputs("KERNEL-BYTES", f);
	fclose(f);
	f = fopen(inf, "w");
	fputs("INITRD", f);
	fclose(f);
	f = fopen(secret, "w");
	fputs("SECRET", f);
	fclose(f);

	struct artserve *s = artserve_start("127.0.0.1:0", &e);
	CHECK(s != NULL);
	if (!s) {
		printf("# %s\n", e.buf);
		return;
	}
	int port = artserve_port(s);
	CHECK(port > 0);
	char p1[48], p2[48];
	const char *names[] = { "kernel", "initrd" }, *paths[] = { kf, inf };
	CHECK(artserve_add(s, names, paths, 2, p1, sizeof(p1), &e) == 0);
	CHECK(strlen(p1) == 34 && p1[0] == '/' && p1[33] == '/');
	char *u = xstrfmt("%skernel", p1);
	CHECK(request(port, "GET", u, &a) == 200);
	CHECK_STR(body(&a), "KERNEL-BYTES");
	CHECK(request(port, "HEAD", u, &a) == 200);
	CHECK_CONTAINS(a.buf, "Content-Length: 12");
	CHECK_STR(body(&a), "");
	free(u);
	u = xstrfmt("%sinitrd", p1);
	CHECK(request(port, "GET", u, &a) == 200);
	CHECK_STR(body(&a), "INITRD");
	CHECK(request(port, "POST", u, &a) == 405);
	CHECK(request(port, "PUT", u, &a) == 405);
	free(u);

	/* nothing but the table: no listing, no "..", no names made from the URL */
	CHECK(request(port, "GET", "/", &a) == 404);
	CHECK(request(port, "GET", p1, &a) == 404);
	u = xstrfmt("%s../kernel", p1);
	CHECK(request(port, "GET", u, &a) == 404);
	free(u);
	u = xstrfmt("%ssecret", p1);
	CHECK(request(port, "GET", u, &a) == 404);
	free(u);
	u = xstrfmt("%skernel/", p1);
	CHECK(request(port, "GET", u, &a) == 404);
	free(u);
	u = xstrfmt("%s%s", p1, secret);
	CHECK(request(port, "GET", u, &a) == 404);
	free(u);
	u = xstrfmt("%s", secret);
	CHECK(request(port, "GET", u, &a) == 404);
	free(u);

	/* a second job: its own prefix; each sees only its own files */
	const char *n2[] = { "kernel" }, *f2[] = { secret };
	CHECK(artserve_add(s, n2, f2, 1, p2, sizeof(p2), &e) == 0);
	CHECK(strcmp(p1, p2) != 0);
	u = xstrfmt("%skernel", p2);
	CHECK(request(port, "GET", u, &a) == 200);
	CHECK_STR(body(&a), "SECRET");
	free(u);
	u = xstrfmt("%sinitrd", p2);
	CHECK(request(port, "GET", u, &a) == 404);
	free(u);

	/* the first job ended: its files are gone, the second's stay */
	artserve_remove(s, p1);
	u = xstrfmt("%skernel", p1);
	CHECK(request(port, "GET", u, &a) == 404);
	free(u);
	u = xstrfmt("%skernel", p2);
	CHECK(request(port, "GET", u, &a) == 200);
	free(u);
	CHECK(artserve_served(s) == 5);

	/* what cannot be registered */
	char p3[48];
	const char *bad[] = { "../x" }, *dot[] = { ".." }, *k1[] = { "kernel" }, *dirp[] = { dir };
	const char *missing[] = { "/no/such/file" };
	CHECK(artserve_add(s, bad, f2, 1, p3, sizeof(p3), &e) == -1);
	CHECK_CONTAINS(e.buf, "not a file name to serve");
	CHECK(artserve_add(s, dot, f2, 1, p3, sizeof(p3), &e) == -1);
	strbuf_reset(&e);
	CHECK(artserve_add(s, k1, dirp, 1, p3, sizeof(p3), &e) == -1);
	CHECK_CONTAINS(e.buf, "not a regular file");
	strbuf_reset(&e);
	CHECK(artserve_add(s, k1, missing, 1, p3, sizeof(p3), &e) == -1);
	CHECK_CONTAINS(e.buf, "/no/such/file");
	artserve_stop(s);

	strbuf_reset(&e);
	CHECK(artserve_start("localhost:80", &e) == NULL);
	CHECK_CONTAINS(e.buf, "must be IPV4:PORT");

	unlink(kf);
	unlink(inf);
	unlink(secret);
	rmdir(dir);
	free(kf);
	free(inf);
	free(secret);
	strbuf_release(&e);
	strbuf_release(&a);
}

int main(void)
{
	RUN(serve);
	return tap_done();
}
