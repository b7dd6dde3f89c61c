/* clock.h - the time, read in one place.
 *
 * Every layer reads the clock through these: monotonic time for durations,
 * timeouts and pacing (it never jumps), the wall clock only for what is
 * shown or stored as a date. Pure logic (src/core) never reads the clock:
 * it is given the time.
 */
#ifndef ALLOT_UTIL_CLOCK_H
#define ALLOT_UTIL_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* Monotonic time in milliseconds (from an arbitrary start). */
int64_t clock_mono_ms(void);

/* Monotonic time in seconds, with the nanoseconds: for measuring durations. */
double clock_mono_s(void);

/* Wall-clock time in milliseconds since the epoch. */
int64_t clock_wall_ms(void);

/* The absolute time `ms` milliseconds from now on clock `clk` (a negative
 * ms counts as 0), normalized (tv_nsec below one second): the deadline for
 * pthread_cond_timedwait on a condition variable using that clock. */
struct timespec clock_deadline(clockid_t clk, int64_t ms);

/* Initialize cv to wait against CLOCK_MONOTONIC (deadlines from
 * clock_deadline(CLOCK_MONOTONIC, ...)), so a change of the wall clock
 * never stretches or cuts a wait. 0, or an errno. */
int clock_cond_init(pthread_cond_t *cv);

#endif
