/* fault_probe - what fresh memory costs to fault in now, in small pages
 * and in huge ones: the yardstick beside a restart's figures at 10M tasks,
 * whose loader faults in about 2 GB (a VM's host may back that memory at
 * very different speeds from one minute to the next).
 *
 *   fault_probe [--mib N] [--rounds R] [--sleep S]
 *
 * Each round maps N MiB (1024 unless told) twice in turn, once with
 * MADV_NOHUGEPAGE and once with MADV_HUGEPAGE, faults each in 2 MiB at a
 * time with MADV_POPULATE_WRITE (as the task slabs' worker does,
 * src/queue/tslab.c), prints the milliseconds, unmaps it and sleeps S
 * seconds (2), so that the memory given back is the host's again before
 * the next round (free page reporting), as a restarted process finds it.
 *
 * A benchmark, never a test. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { PROBE_STEP = 2u << 20 };

static double
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Maps `bytes` aligned to 2 MiB, asks for huge pages or not, faults it in
 * and unmaps it: the milliseconds of the faulting, or -1 on an error. */
static double
probe(size_t bytes, bool huge)
{
	size_t span = bytes + PROBE_STEP;
	uint8_t *m = mmap(NULL, span, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *at;
	double t0, ms;

	if (m == MAP_FAILED) {
		fprintf(stderr, "fault_probe: mmap of %zu bytes: %s\n", span,
		    strerror(errno));
		return -1;
	}
	at = (uint8_t *)(((uintptr_t)m + PROBE_STEP - 1) &
	    ~(uintptr_t)(PROBE_STEP - 1));
	(void)madvise(at, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	t0 = now_ms();
	for (size_t off = 0; off < bytes; off += PROBE_STEP) {
#ifdef MADV_POPULATE_WRITE
		if (madvise(at + off, PROBE_STEP, MADV_POPULATE_WRITE) == 0)
			continue;
#endif
		memset(at + off, 1, PROBE_STEP); /* older kernels */
	}
	ms = now_ms() - t0;
	munmap(m, span);
	return ms;
}

static void
usage(void)
{
	fputs(
	    "usage: fault_probe [--mib N] [--rounds R] [--sleep S]\n", stderr);
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = { { "mib", 1, NULL, 'm' },
		{ "rounds", 1, NULL, 'r' }, { "sleep", 1, NULL, 's' },
		{ NULL, 0, NULL, 0 } };
	long mib = 1024, rounds = 5, pause = 2;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'm':
			mib = strtol(optarg, NULL, 10);
			break;
		case 'r':
			rounds = strtol(optarg, NULL, 10);
			break;
		case 's':
			pause = strtol(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
	if (mib <= 0 || mib % 2 != 0 || rounds <= 0 || pause < 0)
		usage();
	for (long r = 0; r < rounds; r++) {
		for (int huge = 0; huge <= 1; huge++) {
			double ms = probe((size_t)mib << 20, huge);

			if (ms < 0)
				return 1;
			printf("round %ld %s pages: %ld MiB in %.0f ms\n", r,
			    huge ? "huge " : "small", mib, ms);
			fflush(stdout);
			sleep((unsigned)pause);
		}
	}
	return 0;
}
