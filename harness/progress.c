/*
 * progress.c - the progress line of a run (progress.h).
 *
 * One thread wakes every interval (a condition variable on CLOCK_MONOTONIC,
 * so qc_progress_stop returns at once), reads the counters under mu and
 * writes one line with a single fputs on stderr (unbuffered: the line
 * reaches a log whole, in its place among the other messages).  mu
 * protects phase, the phase's start, the borrowed counters, the target and
 * the previous line's counts; it is never held across the write.
 */
#include "progress.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"

struct qc_progress {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    double interval_ms;
    int terminal;
    long jobs;
    double duration_s;
    double t0, phase_t0, chaos_t0; /* qc_clock_ms; chaos_t0 0 until the chaos phase */
    qc_phase phase;
    char target[256];
    const qc_shared *sh;
    const atomic_long *enqueued;
    double last_t;                 /* previous line: time and counts, for rates */
    long last_done, last_enq;
    double rate;                   /* last non-zero jobs/s, for the ETA */
    int wrote;                     /* a terminal line is on screen */
};

static const char *const phase_names[QC_PHASE_COUNT] = {"setup", "enqueue", "chaos",
                                                        "heal",  "drain",   "audit"};

const char *qc_phase_name(qc_phase ph)
{
    return ph >= 0 && ph < QC_PHASE_COUNT ? phase_names[ph] : "?";
}

static void eta_text(char *buf, size_t n, double s)
{
    if (!(s >= 0) || s > 1e7)
        snprintf(buf, n, "ETA unknown");
    else if (s < 100)
        snprintf(buf, n, "ETA %.0f s", s);
    else
        snprintf(buf, n, "ETA %.0f min", s / 60.0);
}

/* Formats the line (without "\r" or "\n") into buf; called with mu held. */
static void format_line(qc_progress *p, double now, char *buf, size_t n)
{
    double el = (now - p->t0) / 1000.0, dt = (now - p->last_t) / 1000.0;
    long enq = p->enqueued ? atomic_load(p->enqueued) : 0;
    char eta[48];
    int len = snprintf(buf, n, "qchaos: progress %.1f s, %s, %s", el, qc_phase_name(p->phase),
                       p->target[0] ? p->target : "target not yet connected");
    if (len < 0 || (size_t)len >= n)
        return;
    if (p->sh == NULL) {
        double pel = (now - p->phase_t0) / 1000.0;
        double r = pel > 0 ? (double)enq / pel : 0;
        if (p->phase == QC_PHASE_ENQUEUE && r > 0)
            eta_text(eta, sizeof eta, (double)(p->jobs - enq) / r);
        else
            eta_text(eta, sizeof eta, -1);
        snprintf(buf + len, n - (size_t)len, ": %ld of %ld jobs enqueued, %s", enq, p->jobs, eta);
        p->last_enq = enq;
        p->last_t = now;
        return;
    }
    const qc_shared *sh = p->sh;
    long done = atomic_load(&sh->completes_ok);
    double rate = dt > 0 ? (double)(done - p->last_done) / dt : 0;
    if (rate > 0)
        p->rate = rate;
    long left = enq - done;
    double secs = -1;
    if (p->phase == QC_PHASE_AUDIT) {
        secs = -1;
    } else if (p->phase == QC_PHASE_CHAOS && p->duration_s > 0 && p->chaos_t0 > 0) {
        double rest = p->duration_s - (now - p->chaos_t0) / 1000.0;
        secs = p->rate > 0 ? (rest > 0 ? rest : 0) + (double)(left > 0 ? left : 0) / p->rate : -1;
    } else if (p->rate > 0) {
        secs = (double)(left > 0 ? left : 0) / p->rate;
    }
    eta_text(eta, sizeof eta, secs);
    char effects[96];
    long delivered = 0, applied = 0;
    if (sh->sink)
        qc_sink_counts(sh->sink, &delivered, &applied);
    if (sh->sc && sh->sc->sink_idempotent)
        snprintf(effects, sizeof effects, "%ld re-deliveries deduplicated by op key",
                 delivered - applied);
    else
        snprintf(effects, sizeof effects, "effects %ld", delivered);
    snprintf(buf + len, n - (size_t)len,
             ": %ld of %ld jobs done, %.1f jobs/s, %ld claims, %ld empty polls, %ld fail/info "
             "answers, %ld faults injected, %s, %s",
             done, enq, rate, atomic_load(&sh->claims), atomic_load(&sh->empty_claims),
             atomic_load(&sh->errors), atomic_load(&sh->faults), effects, eta);
    p->last_done = done;
    p->last_enq = enq;
    p->last_t = now;
}

static void emit(qc_progress *p, const char *line)
{
    if (p->terminal) {
        fprintf(stderr, "\r%s ", line);
        p->wrote = 1;
    } else {
        char out[1100];
        snprintf(out, sizeof out, "%s\n", line);
        fputs(out, stderr);
    }
}

static void *progress_main(void *arg)
{
    qc_progress *p = arg;
    char line[1024];
    pthread_mutex_lock(&p->mu);
    double next = p->t0 + p->interval_ms;
    while (!p->stop) {
        double now = qc_clock_ms();
        if (now < next) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            double wait = next - now;
            ts.tv_sec += (time_t)(wait / 1000.0);
            ts.tv_nsec += (long)((wait - (double)(long)(wait / 1000.0) * 1000.0) * 1e6);
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&p->cv, &p->mu, &ts);
            continue;
        }
        next += p->interval_ms;
        if (next < now)
            next = now + p->interval_ms; /* a stall of this thread: no burst of lines */
        format_line(p, now, line, sizeof line);
        pthread_mutex_unlock(&p->mu);
        emit(p, line);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

qc_progress *qc_progress_start(double interval_s, int terminal, long jobs, double duration_s)
{
    if (!(interval_s > 0))
        return NULL;
    qc_progress *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    p->interval_ms = interval_s * 1000.0;
    p->terminal = terminal;
    p->jobs = jobs;
    p->duration_s = duration_s;
    p->t0 = p->phase_t0 = p->last_t = qc_clock_ms();
    if (pthread_create(&p->thread, NULL, progress_main, p) != 0) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    return p;
}

void qc_progress_set_target(qc_progress *p, const char *target)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    snprintf(p->target, sizeof p->target, "%s", target ? target : "");
    pthread_mutex_unlock(&p->mu);
}

void qc_progress_phase(qc_progress *p, qc_phase ph)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    if (p->phase != ph) {
        p->phase = ph;
        p->phase_t0 = qc_clock_ms();
        if (ph == QC_PHASE_CHAOS)
            p->chaos_t0 = p->phase_t0;
    }
    pthread_mutex_unlock(&p->mu);
}

void qc_progress_attach(qc_progress *p, const qc_shared *sh, const atomic_long *enqueued)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->sh = sh;
    p->enqueued = enqueued;
    p->last_t = qc_clock_ms();
    p->last_done = sh ? atomic_load(&sh->completes_ok) : 0;
    pthread_mutex_unlock(&p->mu);
}

void qc_progress_detach(qc_progress *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->sh = NULL;
    p->enqueued = NULL;
    pthread_mutex_unlock(&p->mu);
}

void qc_progress_stop(qc_progress *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    if (p->terminal && p->wrote)
        fputc('\n', stderr);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
