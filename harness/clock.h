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

/* Sleeps up to ms, waking early (within ~10 ms) once *stop becomes non-zero.
 * Returns 1 when stopped early. */
int qc_clock_sleep_until_stop(double ms, atomic_int *stop);

#endif
