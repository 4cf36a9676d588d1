/*
 * clock.c - monotonic time and interruptible sleeps for the harness.
 */
#include "clock.h"

#include <errno.h>
#include <stdatomic.h>
#include <time.h>

double qc_clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

double qc_clock_epoch_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

void qc_clock_sleep_ms(double ms)
{
    if (ms <= 0)
        return;
    struct timespec ts;
    ts.tv_sec = (time_t)(ms / 1000.0);
    ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000.0) * 1e6);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int qc_clock_sleep_until_stop(double ms, atomic_int *stop)
{
    double end = qc_clock_ms() + ms;
    for (;;) {
        if (atomic_load(stop))
            return 1;
        double left = end - qc_clock_ms();
        if (left <= 0)
            return 0;
        qc_clock_sleep_ms(left < 10 ? left : 10);
    }
}
