/*
 * fault.h - the seeded client-side fault plan (DESIGN.md "Faults").
 *
 * Each fault kind is given in the scenario as an exact count of jobs
 * ("kill_after_claim = 20") or a rate per job ("kill_after_claim = 1.5%").
 * The plan assigns at most one fault to each job, decided once from the seed
 * and the enqueued job ids, so the same seed gives the same plan.  A planned
 * fault fires on the first claim of its job that the harness sees (poison
 * fires on every attempt: the effect fails each time).
 */
#ifndef QC_FAULT_H
#define QC_FAULT_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    QC_FAULT_NONE = 0,
    QC_FAULT_KILL_AFTER_CLAIM,
    QC_FAULT_KILL_AFTER_EFFECT,
    QC_FAULT_STALL_BEYOND_LEASE,
    QC_FAULT_LOST_ACK,
    QC_FAULT_LOST_REQUEST,
    QC_FAULT_POISON,
    QC_FAULT_STALL_UNTIL_RECLAIMED, /* targeted: stall until another worker has claimed
                                       the job, then send the stale requests while the new
                                       owner is held before its effect (issue 12) */
    QC_FAULT_STALL_IN_WORK,         /* a pause of stall_factor leases in the middle of the
                                       work, between two renews (a GC pause, SIGSTOP) */
    QC_FAULT_HALF_OPEN,             /* [network] proxy: after the claim the worker's connection
                                       goes silent both ways without closing (proxy.h) */
    QC_FAULT_RESET,                 /* [network] proxy: RST when the complete is sent */
    QC_FAULT_GRACEFUL_STOP,         /* during the work the worker is asked to stop
                                       gracefully: it finishes the jobs it holds by its
                                       policy ([policy] stop_heartbeat_first), then its
                                       incarnation ends and restarts (shared/cases.md C07) */
    QC_FAULT_LATE_RENEW,            /* a heartbeat timer that fires as the handler returns:
                                       right after its complete was acknowledged with
                                       rows > 0 the worker sends one renew with the job's
                                       token, which must change nothing (decision 1106) */
    QC_FAULT_LOST_ACK_ON_FAIL,      /* targeted: this attempt's effect fails, the answer to
                                       the worker's fail is lost; reconnected, it retries the
                                       fail with its old token once another worker has
                                       claimed the job (decision 1124) */
    /* LISTEN/NOTIFY faults (issue 17, C28).  Not per-claim: the two notify
     * kinds are decided per enqueued job by qc_fault_notify_pick when the
     * job is enqueued, the two listen kinds are timed by the nemesis
     * ([nemesis] listen_close_every_ms, listen_terminate_every_ms); none of
     * them is in the per-claim plan (qc_fault_is_per_claim). */
    QC_FAULT_NOTIFY_LOST,      /* the job's notify step is not sent at all */
    QC_FAULT_NOTIFY_EARLY,     /* sent from a separate transaction before the
                                  job's enqueue commits */
    QC_FAULT_LISTEN_CLOSE,     /* qchaos drops a worker's listen connection */
    QC_FAULT_LISTEN_TERMINATE, /* the server ends it (pg_terminate_backend) */
    QC_FAULT_COUNT
} qc_fault_kind;

typedef struct qc_fault_spec {
    long count;  /* exact number of jobs, or -1 */
    double rate; /* fraction of jobs 0..1 when count < 0 */
} qc_fault_spec;

typedef struct qc_fault_plan qc_fault_plan;

/* Name as written in scenario files and the ledger ("kill_after_claim"). */
const char *qc_fault_name(qc_fault_kind k);
/* Kind for a name, QC_FAULT_NONE when unknown. */
qc_fault_kind qc_fault_from_name(const char *name);

/* 1 for the kinds the per-claim plan assigns to jobs; 0 for the
 * LISTEN/NOTIFY kinds (decided at enqueue, or timed by the nemesis). */
int qc_fault_is_per_claim(qc_fault_kind k);

/* The notify fault of the job enqueued as number index (0-based over the
 * run's jobs: the initial ones, then the feed's) out of total planned:
 * QC_FAULT_NOTIFY_LOST, QC_FAULT_NOTIFY_EARLY or QC_FAULT_NONE.  A rate
 * spec is a draw per job; a count N is taken as the rate N / total (about
 * N jobs: the enqueuer decides each job on its own, without a shared plan).
 * Deterministic in (seed, index); thread-safe (no state). */
qc_fault_kind qc_fault_notify_pick(uint64_t seed, const qc_fault_spec spec[QC_FAULT_COUNT],
                                   long index, long total);

/* The largest fault count a scenario may give (a count above the jobs
 * injects into every job: this only refuses numbers no run can mean). */
#define QC_FAULT_COUNT_MAX 1000000000L

/* Parses "20" (count: decimal digits, 0..QC_FAULT_COUNT_MAX) or "1.5%"
 * (rate: a decimal number of percent, 0..100) into spec; -1 on bad input
 * (a sign, blanks, nan, inf, hex, an out-of-range number: decision 1129). */
int qc_fault_spec_parse(const char *v, qc_fault_spec *spec);

/* Builds the plan over job ids (borrowed, copied).  NULL on OOM. */
qc_fault_plan *qc_fault_plan_create(uint64_t seed, const qc_fault_spec spec[QC_FAULT_COUNT],
                                    const int64_t *jobs, size_t njobs);
void qc_fault_plan_destroy(qc_fault_plan *p);

/* The fault planned for job (NONE if none).  Thread-safe (read-only). */
qc_fault_kind qc_fault_plan_get(const qc_fault_plan *p, int64_t job);

/* Marks job's planned fault as fired; returns 1 the first time only.
 * Thread-safe (atomic). */
int qc_fault_plan_take(qc_fault_plan *p, int64_t job);

/* Gives a taken fault back, so that the job's next claim takes it again:
 * for a fault that fires at a later point of the claim than the take (a
 * lost ack at the complete) when that point never came on this claim (the
 * library failed the job by its own handler timeout, the process died
 * first).  Returns 1 if the fault had been taken.  Thread-safe (atomic). */
int qc_fault_plan_rearm(qc_fault_plan *p, int64_t job);

/* Number of jobs planned for kind k. */
long qc_fault_plan_count(const qc_fault_plan *p, qc_fault_kind k);

/* Holds of the targeted faults (issue 12), per job of the plan (jobs not in
 * it, such as those the feeder adds, are ignored):
 * qc_fault_plan_note_claim counts a claim of job answered to a worker;
 * qc_fault_plan_claims reads that count; qc_fault_plan_set_hold raises (on
 * 1) or lowers the job's hold, asking the job's next owner to wait before
 * its effect; qc_fault_plan_held reads it.  All thread-safe (atomics); p
 * may be NULL (no plan: counts 0, no hold). */
void qc_fault_plan_note_claim(qc_fault_plan *p, int64_t job);
int qc_fault_plan_claims(const qc_fault_plan *p, int64_t job);
void qc_fault_plan_set_hold(qc_fault_plan *p, int64_t job, int on);
int qc_fault_plan_held(const qc_fault_plan *p, int64_t job);

#endif
