/* t_lib - what every test includes: cmocka (with the headers Debian's
 * cmocka 1.1.5 needs first) and per-test temporary directories.
 *
 * With cmocka_unit_test_setup_teardown(fn, t_tmpdir_setup,
 * t_tmpdir_teardown), *state is a `struct t_dir *` whose directory exists
 * for the test alone and is removed afterwards (kept when the environment
 * sets SLUICE_TEST_KEEP=1, to look at what failed). */
#ifndef SLUICE_T_LIB_H
#define SLUICE_T_LIB_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cmocka.h>

struct t_dir {
	char path[256];
	char scratch[512]; /* t_path's result */
};

int t_tmpdir_setup(void **state);
int t_tmpdir_teardown(void **state);

/* "DIR/name" for the test's directory; valid until the next call. */
const char *t_path(void *state, const char *name);

/* rm -rf of a directory the tests made. Returns 0 or -errno. */
int t_rm_rf(const char *path);

/* Shortens a file by n bytes (never below 0). */
void t_truncate_by(const char *path, long n);

/* Size of a file, or -1. */
long t_file_size(const char *path);

/* Whether any extent of the file `path` is allocated but not written
 * (fallocated, reading as zeros): 1 or 0, or -1 where the file system
 * cannot tell (no FIEMAP). */
int t_has_unwritten(const char *path);

/* Seeds from $SLUICE_TEST_SEED when set, else returns `dflt`; prints it so
 * a failure can be replayed. */
uint64_t t_seed(uint64_t dflt);

/* Waits (up to 5 s) until the kernel reports process `pid` stopped: a
 * SIGSTOP is delivered asynchronously, and a process still running may
 * answer a request sent right after kill(). Returns 0, or -1. */
int t_wait_stopped(pid_t pid);

/* A small fast PRNG (splitmix64) for deterministic random tests. */
static inline uint64_t
t_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n). n > 0. */
static inline uint64_t
t_below(uint64_t *s, uint64_t n)
{
	return t_rand(s) % n;
}

#endif
