/*
 * newc cpio writer and the carry archive (see cpio.h): a 110-byte ASCII
 * header of 13 hex fields, the NUL-terminated name padded to 4, the data
 * padded to 4; TRAILER!!! at the end and padding to 512 bytes.
 */
#include "harness/util/cpio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cpio_out_init_mem(struct cpio_out *o, struct strbuf *mem)
{
	memset(o, 0, sizeof(*o));
	o->mem = mem;
	o->fd = -1;
	o->next_ino = 1;
}

void cpio_out_init_fd(struct cpio_out *o, int fd)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->next_ino = 1;
}

void cpio_emit(struct cpio_out *o, const void *data, size_t len)
{
	const char *p = data;

	o->off += len;
	if (o->mem) {
		strbuf_add(o->mem, data, len);
		return;
	}
	while (len && !o->error) {
		ssize_t n = write(o->fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			o->error = errno;
			return;
		}
		p += n, len -= (size_t)n;
	}
}

void cpio_pad4(struct cpio_out *o)
{
	static const char zero[4];
	if (o->off % 4)
		cpio_emit(o, zero, 4 - o->off % 4);
}

void cpio_header(struct cpio_out *o, const char *name, unsigned mode, uint64_t size,
		 unsigned rmaj, unsigned rmin)
{
	char hdr[111];
	size_t namesize = strlen(name) + 1;
	int isdir = (mode & S_IFMT) == S_IFDIR;
	int istrailer = !strcmp(name, "TRAILER!!!");

	snprintf(hdr, sizeof(hdr),
		 "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		 istrailer ? 0 : o->next_ino++, mode, 0u, 0u, isdir ? 2u : 1u, 0u,
		 (unsigned)size, 0u, 0u, rmaj, rmin, (unsigned)namesize, 0u);
	cpio_emit(o, hdr, 110);
	cpio_emit(o, name, namesize);
	cpio_pad4(o);
}

void cpio_add(struct cpio_out *o, const char *name, unsigned mode, const void *data,
	      size_t len, unsigned rdev_major, unsigned rdev_minor)
{
	cpio_header(o, name, mode, len, rdev_major, rdev_minor);
	if (len)
		cpio_emit(o, data, len);
	cpio_pad4(o);
}

void cpio_finish(struct cpio_out *o)
{
	static const char zero[512];
	cpio_add(o, "TRAILER!!!", 0, NULL, 0, 0, 0);
	if (o->off % 512)
		cpio_emit(o, zero, 512 - o->off % 512);
}

/* in_fd from offset 0 to o, exactly size bytes */
static int copy_all(struct cpio_out *o, int in_fd, uint64_t size, struct strbuf *err)
{
	size_t cap = 1 << 20;
	char *buf = xmalloc(cap);
	uint64_t off = 0;

	while (off < size && !o->error) {
		size_t want = size - off < cap ? (size_t)(size - off) : cap;
		ssize_t n = pread(in_fd, buf, want, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			strbuf_addf(err, "cpio: reading the carried file: %s",
				    n < 0 ? strerror(errno) : "it shrank");
			free(buf);
			return -1;
		}
		cpio_emit(o, buf, (size_t)n);
		off += (uint64_t)n;
	}
	free(buf);
	return 0;
}

int cpio_write_carry(int out_fd, const char *name, int in_fd, struct strbuf *err)
{
	struct cpio_out o;
	struct stat st;
	char *dirs = xstrdup(name);

	errno = 0;
	if (fstat(in_fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > 0xffffffffu) {
		strbuf_addf(err, "cpio: the carried file must be a regular file below 4 GiB%s%s",
			    errno ? ": " : "", errno ? strerror(errno) : "");
		free(dirs);
		return -1;
	}
	cpio_out_init_fd(&o, out_fd);
	/* the folders first: the kernel does not create missing parents */
	for (char *s = strchr(dirs, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		cpio_add(&o, dirs, S_IFDIR | 0755, NULL, 0, 0, 0);
		*s = '/';
	}
	free(dirs);
	cpio_header(&o, name, S_IFREG | 0644, (uint64_t)st.st_size, 0, 0);
	if (copy_all(&o, in_fd, (uint64_t)st.st_size, err) < 0)
		return -1;
	cpio_pad4(&o);
	cpio_finish(&o);
	if (copy_all(&o, in_fd, (uint64_t)st.st_size, err) < 0)
		return -1;
	if (o.error) {
		strbuf_addf(err, "cpio: writing: %s", strerror(o.error));
		return -1;
	}
	return 0;
}
