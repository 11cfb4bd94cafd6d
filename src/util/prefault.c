/* prefault - the heap's next pages faulted in off the loop (prefault.h). */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/prefault.h"

enum {
	BUSY_US = 1000,           /* between two looks while the break grows */
	IDLE_US = 50000,          /* while it does not */
	IDLE_AFTER = 2000,        /* looks without growth (2 s) before idling: a
	                           * heap that grows keeps growing */
	MMAP_THRESHOLD = 1 << 20, /* blocks above it are mapped, not heap */
};

static pthread_t thread;
static bool running;
static atomic_bool stop;

static void
nap(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* The kernel's break, not glibc's copy of it (which malloc changes on
 * another thread). */
static uintptr_t
program_break(void)
{
	return (uintptr_t)syscall(SYS_brk, 0);
}

static void *
run(void *arg)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t done = program_break();
	unsigned still = 0;

	(void)arg;
	while (!atomic_load(&stop)) {
		uintptr_t brk = program_break();

		if (brk > done) {
			uintptr_t from = done & ~(uintptr_t)(page - 1);

			/* Faulting in a page in use changes nothing in it. */
			if (madvise((void *)from, brk - from,
			        MADV_POPULATE_WRITE) != 0 &&
			    errno == EINVAL)
				break; /* the kernel has no such advice */
			done = brk;
			still = 0;
		} else {
			done = brk; /* trimmed: follow it down */
			still++;
		}
		nap(still < IDLE_AFTER ? BUSY_US : IDLE_US);
	}
	return NULL;
}

int
prefault_start(size_t ahead)
{
	sigset_t all, was;
	int rc;

	if (running || getenv("SLUICE_NO_PREFAULT") != NULL)
		return 0;
	/* Setting the pad freezes glibc's sliding mmap threshold at its
	 * start (128 KiB; it rises as big blocks are freed, so that buffers
	 * made again and again come from the heap): set at 1 MiB, trimming
	 * at twice that, as the sliding rule would. Blocks above it are
	 * mapped and given back whole when freed. Not glibc's malloc (a
	 * sanitizer's): nothing grows the break, the thread finds nothing
	 * to do. */
	(void)mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
	(void)mallopt(M_TRIM_THRESHOLD, 2 * MMAP_THRESHOLD);
	(void)mallopt(M_TOP_PAD, (int)ahead);
	atomic_store(&stop, false);
	/* The thread takes no signal: a process's SIGHUP or SIGTERM goes
	 * to the thread that waits for it (the loop's signalfd), never to
	 * this one, whose default action would end the process. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &was);
	rc = pthread_create(&thread, NULL, run, NULL);
	pthread_sigmask(SIG_SETMASK, &was, NULL);
	if (rc != 0)
		return -rc;
	pthread_setname_np(thread, "prefault");
	running = true;
	return 0;
}

void
prefault_stop(void)
{
	if (!running)
		return;
	atomic_store(&stop, true);
	pthread_join(thread, NULL);
	running = false;
}
