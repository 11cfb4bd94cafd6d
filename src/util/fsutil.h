/* fsutil - small file-system helpers shared by the log, the snapshot
 * writer and the tools. All return 0 or -errno. */
#ifndef SLUICE_UTIL_FSUTIL_H
#define SLUICE_UTIL_FSUTIL_H

#include <stddef.h>
#include <stdint.h>

/* fsync(2) a directory, so that entries created, renamed or removed in it
 * are durable. */
int fs_sync_dir(const char *dir);

/* mkdir -p with mode 0755. */
int fs_mkdir_p(const char *dir);

/* Writes "dir/name" into out (size n). Returns 0, or -ENAMETOOLONG. */
int fs_join(char *out, size_t n, const char *dir, const char *name);

/* Reads a whole file into a fresh malloc'd buffer; the caller frees *out. */
int fs_read_all(const char *path, uint8_t **out, size_t *len);

/* write(2) all of buf at offset, retrying short writes and EINTR. */
int fs_pwrite_all(int fd, const void *buf, size_t len, int64_t off);

/* Locks "dir/LOCK" (created when missing) for this process, without
 * waiting: *fd_out holds the lock until it is closed. -EBUSY when another
 * process holds it (a running sluiced). */
int fs_lock_dir(const char *dir, int *fd_out);

/* read(2) exactly len bytes at offset; -EIO when the file is shorter. */
int fs_pread_all(int fd, void *buf, size_t len, int64_t off);

#endif
