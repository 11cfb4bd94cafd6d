/* fault - the named fault-injection points of the I/O paths' tests
 * (fault.h). Only built into sluice_fault, with SLUICE_FAULT
 * defined; production libraries never link it. Each point has an armed
 * call number and a counter; both atomic, as the WAL's preallocator
 * thread and the test thread hit points concurrently. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/fault.h"

#ifndef SLUICE_FAULT
#error "fault.c is built only with SLUICE_FAULT"
#endif

struct fault {
	atomic_uint calls;
	atomic_uint fired;
	atomic_uint nth; /* 0: disarmed */
	atomic_int effect;
	atomic_bool sticky;
};

static struct fault faults[FAULT_POINT_COUNT];
static atomic_uint pauses[FAULT_PAUSE_COUNT]; /* ms; 0: disarmed */

void
fault_arm(enum fault_point point, unsigned nth, int effect, bool sticky)
{
	struct fault *f = &faults[point];

	atomic_store(&f->nth, 0);
	atomic_store(&f->calls, 0);
	atomic_store(&f->fired, 0);
	atomic_store(&f->effect, effect);
	atomic_store(&f->sticky, sticky);
	atomic_store(&f->nth, nth);
}

void
fault_reset(void)
{
	for (int i = 0; i < FAULT_POINT_COUNT; i++)
		fault_arm((enum fault_point)i, 0, 0, false);
	for (int i = 0; i < FAULT_PAUSE_COUNT; i++)
		fault_arm_pause((enum fault_pause)i, 0);
}

unsigned
fault_calls(enum fault_point point)
{
	return atomic_load(&faults[point].calls);
}

unsigned
fault_fired(enum fault_point point)
{
	return atomic_load(&faults[point].fired);
}

int
fault_hit(enum fault_point point)
{
	struct fault *f = &faults[point];
	unsigned call = atomic_fetch_add(&f->calls, 1) + 1;
	unsigned nth = atomic_load(&f->nth);

	if (nth == 0 || call < nth)
		return 0;
	if (call > nth && !atomic_load(&f->sticky))
		return 0;
	atomic_fetch_add(&f->fired, 1);
	return atomic_load(&f->effect);
}

int
fault_arm_spec(const char *spec)
{
	static const char *const names[FAULT_POINT_COUNT] = { "wal_write",
		"wal_fsync", "wal_rename", "seg_alloc", "seg_cut",
		"wal_odirect", "elect_lost" };
	char point[32], effect[16], sticky[16] = "";
	unsigned nth;
	int n, eff, i;

	if (spec == NULL || *spec == '\0')
		return 0;
	n = sscanf(
	    spec, "%31[a-z_]:%u:%15[A-Za-z]:%15s", point, &nth, effect, sticky);
	if (n < 3 || nth == 0 || (n == 4 && strcmp(sticky, "sticky") != 0))
		return -1;
	for (i = 0; i < FAULT_POINT_COUNT; i++)
		if (strcmp(point, names[i]) == 0)
			break;
	if (i == FAULT_POINT_COUNT)
		return -1;
	if (strcmp(effect, "EIO") == 0)
		eff = -EIO;
	else if (strcmp(effect, "ENOSPC") == 0)
		eff = -ENOSPC;
	else if (strcmp(effect, "short") == 0)
		eff = FAULT_SHORT;
	else
		return -1;
	fault_arm((enum fault_point)i, nth, eff, n == 4);
	return 0;
}

void
fault_arm_pause(enum fault_pause point, unsigned ms)
{
	atomic_store(&pauses[point], ms);
}

void
fault_pause(enum fault_pause point)
{
	unsigned ms = atomic_load(&pauses[point]);
	struct timespec ts = { (time_t)(ms / 1000),
		(long)(ms % 1000) * 1000000 };

	if (ms == 0)
		return;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
		/* The rest of the pause. */
	}
}

unsigned
fault_pause_ms(enum fault_pause point)
{
	return atomic_load(&pauses[point]);
}

int
fault_arm_pause_spec(const char *spec)
{
	static const char *const names[FAULT_PAUSE_COUNT] = { "recover",
		"fsync", "remove", "batch_fire", "mapwatch", "zero" };
	char point[32], rest[2];
	unsigned ms;
	int i;

	if (spec == NULL || *spec == '\0')
		return 0;
	if (sscanf(spec, "%31[a-z_]:%u%1s", point, &ms, rest) != 2)
		return -1;
	for (i = 0; i < FAULT_PAUSE_COUNT; i++)
		if (strcmp(point, names[i]) == 0)
			break;
	if (i == FAULT_PAUSE_COUNT)
		return -1;
	fault_arm_pause((enum fault_pause)i, ms);
	return 0;
}
