/* epochs - the node's epoch history in the file EPOCHS (format in
 * epochs.h): loaded and checked line by line at start, kept in memory as
 * an array in epoch order. A new epoch is one line appended and
 * fdatasync'd (and the directory synced when the file is new); a cut or
 * a history taken from a leader rewrites the whole file as a temporary
 * file renamed over it. Lookups (by epoch, by LSN) are linear: a history
 * holds a handful of epochs. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/epochs.h"
#include "sluice.h"
#include "util/fsutil.h"

static int
push(struct epochs *e, uint64_t epoch, uint64_t nonce, uint64_t start)
{
	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 16;
		struct epoch_ent *v = realloc(e->v, cap * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		e->v = v;
		e->cap = cap;
	}
	if (e->n > 0 && e->v[e->n - 1].start == start) {
		/* The previous epoch holds no record: this one replaces it. */
		e->v[e->n - 1] = (struct epoch_ent) { epoch, nonce, start };
		return 0;
	}
	if (e->n == EPOCHS_MAX) {
		/* Keep epoch 1's entry meaningful: forget the second. */
		memmove(&e->v[1], &e->v[2], (e->n - 2) * sizeof(e->v[0]));
		e->n--;
	}
	e->v[e->n++] = (struct epoch_ent) { epoch, nonce, start };
	return 0;
}

static bool
follows(const struct epochs *e, uint64_t epoch, uint64_t start)
{
	const struct epoch_ent *l = epochs_last(e);

	return epoch > l->epoch && start >= l->start;
}

/* Parses the file's text; a last line without its newline is torn. */
static int
parse(struct epochs *e, const char *p, size_t len)
{
	size_t off = 0;

	while (off < len) {
		const char *nl = memchr(p + off, '\n', len - off);
		char line[96];
		uint64_t ep, nonce, start;
		size_t n;
		char extra;
		int rc;

		if (nl == NULL)
			return 0; /* torn: the write never finished */
		n = (size_t)(nl - (p + off));
		if (n >= sizeof(line))
			return SLUICE_ECORRUPT;
		memcpy(line, p + off, n);
		line[n] = '\0';
		off += n + 1;
		if (sscanf(line, "%" SCNu64 " %" SCNx64 " %" SCNu64 " %c", &ep,
		        &nonce, &start, &extra) != 3)
			return SLUICE_ECORRUPT;
		if (ep == 1 && start == 1 && e->n == 1)
			continue;
		if (!follows(e, ep, start))
			return SLUICE_ECORRUPT;
		if ((rc = push(e, ep, nonce, start)) != 0)
			return rc;
	}
	return 0;
}

int
epochs_load(struct epochs *e, const char *dir)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int rc;

	memset(e, 0, sizeof(*e));
	if (fs_join(e->path, sizeof(e->path), dir, "EPOCHS") != 0)
		return -ENAMETOOLONG;
	if ((rc = push(e, 1, 0, 1)) != 0)
		return rc;
	rc = fs_read_all(e->path, &data, &len);
	if (rc == -ENOENT)
		return 0;
	if (rc != 0) {
		epochs_fini(e);
		return rc;
	}
	rc = parse(e, (const char *)data, len);
	free(data);
	if (rc != 0)
		epochs_fini(e);
	return rc;
}

void
epochs_fini(struct epochs *e)
{
	free(e->v);
	e->v = NULL;
	e->n = e->cap = 0;
}

static int
line(char *out, size_t n, const struct epoch_ent *x)
{
	return snprintf(out, n, "%" PRIu64 " %016" PRIx64 " %" PRIu64 "\n",
	    x->epoch, x->nonce, x->start);
}

/* Syncs the directory holding `path`. */
static int
sync_parent(const char *path)
{
	char dir[LOGDIR_PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == NULL)
		return fs_sync_dir(".");
	*slash = '\0';
	return fs_sync_dir(dir[0] ? dir : "/");
}

int
epochs_add(struct epochs *e, uint64_t epoch, uint64_t nonce, uint64_t start)
{
	const struct epoch_ent *x = epochs_find(e, epoch);
	bool created = false;
	char text[96];
	int fd, len, rc;

	if (x != NULL && x->start == start)
		return 0; /* known already */
	if (!follows(e, epoch, start))
		return SLUICE_EEPOCH;
	fd = open(e->path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* The first epoch written: the file must survive too. */
		fd = open(
		    e->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		created = fd >= 0;
	}
	if (fd < 0)
		return -errno;
	len = line(
	    text, sizeof(text), &(struct epoch_ent) { epoch, nonce, start });
	rc = fs_pwrite_all(fd, text, (size_t)len, lseek(fd, 0, SEEK_END));
	if (rc == 0 && fdatasync(fd) < 0)
		rc = -errno;
	close(fd);
	if (rc == 0 && created)
		rc = sync_parent(e->path);
	if (rc == 0)
		rc = push(e, epoch, nonce, start);
	return rc;
}

/* Writes the whole history to a temporary file and renames it over. */
static int
rewrite(const struct epochs *e)
{
	char tmp[LOGDIR_PATH_MAX + 8], text[96];
	int fd, rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", e->path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	for (size_t i = 0, off = 0; i < e->n && rc == 0; i++) {
		int len = line(text, sizeof(text), &e->v[i]);

		rc = fs_pwrite_all(fd, text, (size_t)len, (int64_t)off);
		off += (size_t)len;
	}
	if (rc == 0 && fdatasync(fd) < 0)
		rc = -errno;
	close(fd);
	if (rc == 0 && rename(tmp, e->path) < 0)
		rc = -errno;
	if (rc != 0) {
		unlink(tmp);
		return rc;
	}
	return sync_parent(e->path);
}

int
epochs_cut(struct epochs *e, uint64_t last_lsn)
{
	size_t n = e->n;

	while (n > 1 && e->v[n - 1].start > last_lsn)
		n--;
	if (n == e->n)
		return 0;
	e->n = n;
	return rewrite(e);
}

int
epochs_set(struct epochs *e, const struct epoch_ent *v, size_t n)
{
	struct epochs t = { 0 };
	int rc;

	memcpy(t.path, e->path, sizeof(t.path));
	if ((rc = push(&t, 1, 0, 1)) != 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (v[i].epoch == 1 && v[i].start == 1 && t.n == 1)
			continue;
		if (!follows(&t, v[i].epoch, v[i].start)) {
			epochs_fini(&t);
			return SLUICE_EEPOCH;
		}
		if ((rc = push(&t, v[i].epoch, v[i].nonce, v[i].start)) != 0) {
			epochs_fini(&t);
			return rc;
		}
	}
	rc = rewrite(&t);
	if (rc != 0) {
		epochs_fini(&t);
		return rc;
	}
	epochs_fini(e);
	*e = t;
	return 0;
}

const struct epoch_ent *
epochs_find(const struct epochs *e, uint64_t epoch)
{
	for (size_t i = e->n; i-- > 0;)
		if (e->v[i].epoch == epoch)
			return &e->v[i];
	return NULL;
}

const struct epoch_ent *
epochs_at(const struct epochs *e, uint64_t lsn)
{
	for (size_t i = e->n; i-- > 0;)
		if (e->v[i].start <= lsn)
			return &e->v[i];
	return &e->v[0];
}

uint64_t
epochs_end(const struct epochs *e, size_t i, uint64_t last)
{
	return i + 1 < e->n ? e->v[i + 1].start - 1 : last;
}
