/*
 * clock.c - monotonic time and interruptible sleeps for the harness.
 * Invariant: a flag set by qc_clock_stop wakes every sleeper watching it
 * at once (the stop bell below); a sleeping thread is never woken
 * otherwise, except once a second to re-check its flag.
 */
#include "clock.h"

#include <errno.h>
#include <pthread.h>
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

/* The stop bell: sleepers wait on bell_cv (a CLOCK_MONOTONIC condition
 * variable, set up once); qc_clock_stop broadcasts it after setting a flag.
 * A sleeper reads its flag under bell_mu before it waits and the stopper
 * broadcasts under bell_mu after the store, so no wake-up is lost. */
static pthread_mutex_t bell_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bell_cv;
static pthread_once_t bell_once = PTHREAD_ONCE_INIT;
static int bell_ok; /* the condition variable could be set up */

static void bell_init(void)
{
    pthread_condattr_t a;
    if (pthread_condattr_init(&a) != 0)
        return;
    if (pthread_condattr_setclock(&a, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&bell_cv, &a) == 0)
        bell_ok = 1;
    pthread_condattr_destroy(&a);
}

/* The most one wait on the bell lasts: a flag set without qc_clock_stop
 * is seen this late at worst.  Not shorter: 1,000 idle workers sleeping
 * up to their idle cap in 100 ms slices woke 10,000 times a second, which
 * cost the harness about 0.2 of a core (issue 16, docs/decisions.md). */
#define BELL_SLICE_MS 1000.0

int qc_clock_sleep_until_stop(double ms, atomic_int *stop)
{
    double end = qc_clock_ms() + ms;
    pthread_once(&bell_once, bell_init);
    if (!bell_ok) { /* cannot happen on Linux; poll as a fallback */
        for (;;) {
            if (atomic_load(stop))
                return 1;
            double left = end - qc_clock_ms();
            if (left <= 0)
                return 0;
            qc_clock_sleep_ms(left < 10 ? left : 10);
        }
    }
    int stopped = 0;
    pthread_mutex_lock(&bell_mu);
    for (;;) {
        if (atomic_load(stop)) {
            stopped = 1;
            break;
        }
        double now = qc_clock_ms();
        if (now >= end)
            break;
        double until = end - now < BELL_SLICE_MS ? end : now + BELL_SLICE_MS;
        /* qc_clock_ms is CLOCK_MONOTONIC: its ms are the condvar's clock */
        struct timespec ts;
        ts.tv_sec = (time_t)(until / 1000.0);
        ts.tv_nsec = (long)((until - (double)ts.tv_sec * 1000.0) * 1e6);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        (void)pthread_cond_timedwait(&bell_cv, &bell_mu, &ts);
    }
    pthread_mutex_unlock(&bell_mu);
    return stopped;
}

void qc_clock_stop(atomic_int *stop)
{
    pthread_once(&bell_once, bell_init);
    pthread_mutex_lock(&bell_mu);
    atomic_store(stop, 1);
    if (bell_ok)
        pthread_cond_broadcast(&bell_cv);
    pthread_mutex_unlock(&bell_mu);
}
