/* clock - the wall clock (unix ms, CLOCK_REALTIME) and the monotonic
 * clock (CLOCK_MONOTONIC) the server reads; clock.h says which serves
 * what. */
#include <time.h>

#include "util/clock.h"

static int64_t shift_ms; /* clock_shift_set: test builds only */

void
clock_shift_set(int64_t ms)
{
	shift_ms = ms;
}

int64_t
clock_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + shift_ms;
}

int64_t
clock_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 +
	    shift_ms * 1000;
}

int64_t
clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t
clock_mono_ms(void)
{
	return clock_mono_ns() / 1000000;
}
