/*
 * progress.h - the progress line of a run, on stderr, from a thread of its
 * own so that it keeps coming while the main thread is blocked in setup,
 * enqueue or the audit.
 *
 * Two forms:
 *   lines (-P N / --progress N, pgbench's -P): one whole line every N
 *         seconds whatever stderr is (a terminal, a CI log, a pipe):
 *           qchaos: progress 12.0 s, chaos, 127.0.0.1:5432/postgres: 5000 of 20000 jobs
 *           done, 1234.5 jobs/s, 6100 claims, 20 empty polls, 3 fail/info answers,
 *           4 faults injected, 2 re-deliveries deduplicated by op key, ETA 12 s
 *   terminal (stderr a terminal, no -P): the same text rewritten in place
 *         ("\r") every second, ended by a newline when the progress stops.
 *
 * The phase is the run's (DESIGN.md "Phases of a run"): setup, enqueue,
 * chaos, heal, drain, audit.  "jobs/s" is acknowledged completes per second
 * over the last line's interval; "fail/info answers" are requests answered
 * fail or left without an answer (expected under faults, not violations);
 * "re-deliveries deduplicated by op key" are effects the idempotent sink
 * dropped (a re-delivery after a fault, judged by effects_once, not a
 * failure); a plain sink shows "effects N" instead.  ETA is the time left
 * for the work of the phase at the current rate: the rest of the enqueue,
 * or the chaos phase's remaining seconds (--duration) plus the jobs not yet
 * done at the last interval's jobs/s; "ETA unknown" while nothing is
 * measured (setup, audit, no completes yet).
 *
 * Thread safety: every function may be called from the run's main thread
 * while the progress thread runs; the counters are read through atomics.
 * A NULL qc_progress * is accepted everywhere and does nothing (progress
 * off).  Nothing is printed with a password: the target is host:port/dbname.
 */
#ifndef QC_PROGRESS_H
#define QC_PROGRESS_H

#include <stdatomic.h>

#include "worker.h"

typedef enum {
    QC_PHASE_SETUP = 0,
    QC_PHASE_ENQUEUE,
    QC_PHASE_CHAOS,
    QC_PHASE_HEAL,
    QC_PHASE_DRAIN,
    QC_PHASE_AUDIT,
    QC_PHASE_COUNT
} qc_phase;

/* The phase's name as the progress line writes it ("chaos"). */
const char *qc_phase_name(qc_phase ph);

typedef struct qc_progress qc_progress;

/* Starts the progress thread: a line every interval_s seconds (> 0) on
 * stderr; terminal = 1 rewrites one line in place instead.  jobs is the
 * number enqueued before the chaos phase, duration_s the chaos phase's
 * length (0: until drained), both for the ETA.  Returns NULL when out of
 * memory or the thread cannot start (the run goes on without progress). */
qc_progress *qc_progress_start(double interval_s, int terminal, long jobs, double duration_s);

/* The target as host:port/dbname (copied; never a password). */
void qc_progress_set_target(qc_progress *p, const char *target);

/* Enters phase ph (the clock of the phase restarts). */
void qc_progress_phase(qc_progress *p, qc_phase ph);

/* Counters to read: the run's shared state (claims, completes, faults; its
 * sink) and the number of jobs enqueued so far; both borrowed until
 * qc_progress_detach or qc_progress_stop.  enqueued may be given before sh
 * (sh NULL: only enqueue counts). */
void qc_progress_attach(qc_progress *p, const qc_shared *sh, const atomic_long *enqueued);
void qc_progress_detach(qc_progress *p);

/* Stops and joins the thread, ends a terminal line with a newline, frees p. */
void qc_progress_stop(qc_progress *p);

#endif
