/* clock - the two clocks the server reads. Wall time (unix ms) stamps
 * records and decides run_at; monotonic time measures durations. The queue
 * never reads a clock itself: the caller passes `now` in. */
#ifndef SLUICE_UTIL_CLOCK_H
#define SLUICE_UTIL_CLOCK_H

#include <stdint.h>

int64_t clock_now_ms(void); /* unix time, ms */

/* Moves the wall clock (clock_now_ms, clock_now_us) `ms` ahead of the
 * system's; 0 by default. Test builds only (sluiced-fault's
 * SLUICE_CLOCK_SHIFT_MS): a schedule's slot comes when a test needs it. */
void clock_shift_set(int64_t ms);
int64_t clock_now_us(void);  /* unix time, µs */
int64_t clock_mono_ns(void); /* monotonic, ns */
int64_t clock_mono_ms(void); /* monotonic, ms */

#endif
