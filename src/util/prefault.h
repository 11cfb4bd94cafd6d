/* prefault - a thread that faults in the heap's next pages before the
 * thread that allocates them touches them.
 *
 * Every task put is new memory, and new memory is zeroed by the kernel at
 * its first touch: on the virtual machine of docs/benchmarks.md a quarter of
 * the serving loop's time in a batch put went to that (clear_page_erms under
 * malloc's sysmalloc, docs/benchmarks.md, "Batch put"). glibc's malloc
 * grows the main heap with brk; prefault_start() asks it to grow by
 * `ahead` bytes more than it needs each time (M_TOP_PAD; with the mmap
 * and trim thresholds set, which the pad would otherwise freeze at their
 * start), and a thread
 * faults in the bytes between the last break it saw and the new one
 * (madvise MADV_POPULATE_WRITE) as soon as the break moves, so the loop
 * finds its next pages present. The zeroing still costs CPU, on another
 * core. The thread looks at the break every millisecond while it grows
 * and every 50 ms after 2 s without growth; it reads nothing else and writes
 * nothing the allocator owns. Where the kernel has no
 * MADV_POPULATE_WRITE (before Linux 5.14), or malloc is not glibc's
 * (a sanitizer's), it finds nothing to do. SLUICE_NO_PREFAULT=1 in the
 * environment leaves the faults to the loop (to measure the difference). */
#ifndef SLUICE_UTIL_PREFAULT_H
#define SLUICE_UTIL_PREFAULT_H

#include <stddef.h>

/* Starts the thread (once; later calls do nothing). Returns 0 or -errno
 * (the server goes on without it). */
int prefault_start(size_t ahead);

/* Stops and joins the thread, if it runs. */
void prefault_stop(void);

#endif
