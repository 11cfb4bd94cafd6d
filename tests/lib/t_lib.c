/* t_lib - see t_lib.h. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "t_lib.h"

int
t_tmpdir_setup(void **state)
{
	struct t_dir *d = calloc(1, sizeof(*d));
	const char *base = getenv("TMPDIR");

	if (d == NULL)
		return -1;
	if (base == NULL || *base == '\0')
		base = "/tmp";
	snprintf(d->path, sizeof(d->path), "%s/sluice-test-XXXXXX", base);
	if (mkdtemp(d->path) == NULL) {
		fprintf(stderr, "mkdtemp %s: %s\n", d->path, strerror(errno));
		free(d);
		return -1;
	}
	*state = d;
	return 0;
}

int
t_tmpdir_teardown(void **state)
{
	struct t_dir *d = *state;
	const char *keep = getenv("SLUICE_TEST_KEEP");

	if (d == NULL)
		return 0;
	if (keep != NULL && strcmp(keep, "1") == 0)
		fprintf(stderr, "kept %s\n", d->path);
	else
		t_rm_rf(d->path);
	free(d);
	*state = NULL;
	return 0;
}

const char *
t_path(void *state, const char *name)
{
	struct t_dir *d = state;

	snprintf(d->scratch, sizeof(d->scratch), "%s/%s", d->path, name);
	return d->scratch;
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 ? -1 : 0;
}

int
t_rm_rf(const char *path)
{
	if (nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0)
		return -errno;
	return 0;
}

void
t_truncate_by(const char *path, long n)
{
	long size = t_file_size(path);

	if (size < 0)
		return;
	if (truncate(path, size > n ? size - n : 0) < 0)
		fprintf(stderr, "truncate %s: %s\n", path, strerror(errno));
}

long
t_file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) < 0 ? -1 : (long)st.st_size;
}

int
t_has_unwritten(const char *path)
{
	struct {
		struct fiemap map;
		struct fiemap_extent ext[64];
	} q;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;

	if (fd < 0)
		return -1;
	memset(&q, 0, sizeof(q));
	q.map.fm_length = FIEMAP_MAX_OFFSET;
	q.map.fm_flags = FIEMAP_FLAG_SYNC;
	q.map.fm_extent_count = 64;
	if (ioctl(fd, FS_IOC_FIEMAP, &q.map) == 0) {
		rc = 0;
		for (unsigned i = 0; i < q.map.fm_mapped_extents; i++)
			if (q.ext[i].fe_flags & FIEMAP_EXTENT_UNWRITTEN)
				rc = 1;
	}
	close(fd);
	return rc;
}

uint64_t
t_seed(uint64_t dflt)
{
	const char *s = getenv("SLUICE_TEST_SEED");
	uint64_t seed = s ? strtoull(s, NULL, 0) : dflt;

	fprintf(stderr, "seed %llu\n", (unsigned long long)seed);
	return seed;
}

int
t_wait_stopped(pid_t pid)
{
	struct timespec ts = { 0, 5 * 1000000 };
	char path[64], stat[256];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 1000; i++) {
		FILE *f = fopen(path, "r");
		const char *p = NULL;

		if (f != NULL && fgets(stat, sizeof(stat), f) != NULL)
			p = strrchr(stat, ')');
		if (f != NULL)
			fclose(f);
		if (p != NULL && p[1] == ' ' && p[2] == 'T')
			return 0;
		nanosleep(&ts, NULL);
	}
	return -1;
}
