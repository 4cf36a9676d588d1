/*
 * clock.h - client-side time.  Durations are CLOCK_MONOTONIC; database times
 * come from the database and never from here.
 */
#ifndef QC_CLOCK_H
#define QC_CLOCK_H

#include <stdatomic.h>
#include <stdint.h>

/* Monotonic milliseconds (fractional) since an arbitrary origin.  Thread-safe. */
double qc_clock_ms(void);

/* The client's wall clock (CLOCK_REALTIME), epoch milliseconds: only for
 * :client_now_ms, the application's own notion of now that a protocol may
 * (wrongly) compute leases with; never for a checker.  Thread-safe. */
double qc_clock_epoch_ms(void);

/* Sleeps ms milliseconds (fractional allowed, <= 0 returns at once); resumes
 * after signals.  Thread-safe. */
void qc_clock_sleep_ms(double ms);

/* Sleeps up to ms, waking early once *stop becomes non-zero: at once when
 * it was set with qc_clock_stop, within a second when set otherwise.  The
 * sleeper waits on one process-wide condition variable (CLOCK_MONOTONIC)
 * that only qc_clock_stop signals, so a sleeping thread costs no wake-ups
 * (issue 16: 1,000 idle workers polling a flag every 10 ms woke 100,000
 * times a second).  Returns 1 when stopped early.  Thread-safe. */
int qc_clock_sleep_until_stop(double ms, atomic_int *stop);

/* Sets *stop to 1 and wakes every thread in qc_clock_sleep_until_stop
 * (whatever flag it watches; each re-checks its own).  Thread-safe; not
 * async-signal-safe (a signal handler only sets a flag the main thread
 * turns into this call). */
void qc_clock_stop(atomic_int *stop);

#endif
