/* fsutil - the file-system helpers the log, the snapshot writer and the
 * tools share: sync a directory, make one with its parents, join a path,
 * read a whole file, pread/pwrite everything (short transfers continued,
 * EINTR retried), lock a data directory. Each returns 0 or -errno. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fsutil.h"

int
fs_sync_dir(const char *dir)
{
	int fd, rc = 0;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

int
fs_mkdir_p(const char *dir)
{
	char path[4096];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, n + 1);
	for (char *p = path + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int
fs_join(char *out, size_t n, const char *dir, const char *name)
{
	int rc = snprintf(out, n, "%s/%s", dir, name);

	if (rc < 0 || (size_t)rc >= n)
		return -ENAMETOOLONG;
	return 0;
}

int
fs_read_all(const char *path, uint8_t **out, size_t *len)
{
	struct stat st;
	uint8_t *data;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto fail_close;
	}
	data = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
	if (data == NULL) {
		rc = -ENOMEM;
		goto fail_close;
	}
	rc = fs_pread_all(fd, data, (size_t)st.st_size, 0);
	if (rc != 0) {
		free(data);
		goto fail_close;
	}
	close(fd);
	*out = data;
	*len = (size_t)st.st_size;
	return 0;

fail_close:
	close(fd);
	return rc;
}

int
fs_pwrite_all(int fd, const void *buf, size_t len, int64_t off)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

int
fs_pread_all(int fd, void *buf, size_t len, int64_t off)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pread(fd, p, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

int
fs_lock_dir(const char *dir, int *fd_out)
{
	char path[4096];
	int fd;

	if (fs_join(path, sizeof(path), dir, "LOCK") != 0)
		return -ENAMETOOLONG;
	fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int rc = errno == EWOULDBLOCK ? -EBUSY : -errno;

		close(fd);
		return rc;
	}
	*fd_out = fd;
	return 0;
}
