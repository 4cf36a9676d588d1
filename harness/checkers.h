/*
 * checkers.h - audit rules over a history (DESIGN.md "Checkers").
 *
 * Each checker yields PASS, FAIL or INCONCLUSIVE (zero opportunities), or
 * NOT_APPLICABLE (the rule does not apply to the protocol's model), its
 * opportunity count, and violations, each with the job id and the ledger
 * sequence numbers that prove it.  Checkers are pure functions of the
 * history: the same ledger always gives the same verdict.
 */
#ifndef QC_CHECKERS_H
#define QC_CHECKERS_H

#include "history.h"

typedef enum {
    QC_PASS = 0,
    QC_FAIL = 1,
    QC_INCONCLUSIVE = 2,
    QC_NOT_APPLICABLE = 3
} qc_verdict;

#define QC_MAX_EVIDENCE 8

typedef struct qc_violation {
    int64_t job;                    /* QC_NO_JOB when not about one job */
    int nseq;
    int64_t seq[QC_MAX_EVIDENCE];   /* ledger seq numbers, ascending */
    char msg[256];                  /* one line in plain words */
    int nwitness;                   /* witness rows that confirm it (check_witness.c) */
    int64_t wseq[QC_MAX_EVIDENCE];  /* their ledger seqs: the rows the evidence's
                                       requests made, and the job's last change */
} qc_violation;

typedef struct qc_check {
    const char *name;       /* static: "exclusive_claim" ... */
    qc_verdict verdict;
    long opportunities;
    long nviolations;       /* total found (may exceed stored) */
    size_t nstored;         /* violations kept in v (capped) */
    qc_violation *v;        /* owned */
    char summary[512];      /* e.g. "20000 claims, 0 overlapping leases" */
    double elapsed_ms;      /* CLOCK_MONOTONIC time qc_check_all spent in this
                               checker (ms); 0 when run alone */
} qc_check;

/* Maximum violations a checker keeps (the count is exact regardless). */
#define QC_MAX_STORED_VIOLATIONS 100

const char *qc_verdict_name(qc_verdict v);

/* Individual checkers: fill *out (caller-allocated, zeroed); return 0 or
 * QC_ENOMEM.  Thread-safe (read-only on h). */
int qc_check_exclusive_claim(const qc_history *h, qc_check *out);
int qc_check_double_complete(const qc_history *h, qc_check *out);
int qc_check_no_lost_jobs(const qc_history *h, qc_check *out);
int qc_check_acked_durable(const qc_history *h, qc_check *out);

/* stale_token_rejected (check_faults.c): a complete / renew / fail carrying
 * a token T of job J, invoked after T was superseded (the first later OK
 * claim of J with another token, or the OK renew that rotated T into a
 * new_token), must not be answered OK with rows > 0.  Opportunities: such
 * requests answered OK (any rows).  A request invoked before the
 * superseding answer was logged is not judged: it may have run first. */
int qc_check_stale_token_rejected(const qc_history *h, qc_check *out);

/* no_false_success (check_faults.c): an OK complete with rows 0 that the
 * worker "counted" as a success.  Opportunities: OK completes with rows 0
 * carrying "counted". */
int qc_check_no_false_success(const qc_history *h, qc_check *out);

/* effects_once (check_faults.c): more than one effect event with
 * "applied": true for one job (the sink deduplicates by op key, so an
 * unstable op key shows up here).  Opportunities: re-deliveries (effect
 * events of a job beyond its first). */
int qc_check_effects_once(const qc_history *h, qc_check *out);

/* exclusive_run (check_runs.c, issue 18): two runs of one job (a worker's
 * OK claim of it up to its effect), or of two jobs of one group, by
 * different actors overlap: the later claim was answered before the earlier
 * run's effect.  Excused only in the lease model, when the earlier worker's
 * lease provably ran out with a plan that fitted it and no refusal seen.
 * Opportunities: runs that followed another run of their job. */
int qc_check_exclusive_run(const qc_history *h, qc_check *out);

/* own_lease (check_runs.c, docs/decisions.md 950): a worker that keeps a
 * lease deadline of its own (header lease_deadline sent / answer) started
 * an effect, or sent a run's first complete, after lease_ms from its send
 * of the claim or of its last renew answered with rows > 0 (client ms,
 * the invoke events' t), although by an earlier moment it provably knew
 * (its own last event; for the effect also the claim's answer + the
 * planned work + its renews' round trips) that no more than
 * QC_LEASE_MARGIN_MS were left.  Not judged after an injected stall of
 * the run, on retried completes, in the transaction model, or when the
 * workers keep no deadline (INCONCLUSIVE).  Opportunities: effects and
 * first completes judged.  Thread-safe (read-only on h); QC_ENOMEM. */
int qc_check_own_lease(const qc_history *h, qc_check *out);

/* batch_bound (check_faults.c): one claim request (OK claim events of one
 * ledger, worker, incarnation and req) returned more jobs than the header's
 * "batch".  Opportunities: non-empty claims; none when batch is unknown. */
int qc_check_batch_bound(const qc_history *h, qc_check *out);

/* retry_delay (check_retry.c; shared/cases.md C04): a job given back by an
 * OK fail with rows > 0 and a retry delay D ms (the fail's "delay_ms",
 * written when the protocol's fail reads :delay_ms) must not be claimed
 * again before D has passed: the first OK claim of it answered after the
 * fail was sent is a violation when it was answered less than D - margin
 * ms (client clock) after the fail was sent and, when both report server
 * times, the server's clock agrees.  Opportunities: such fails followed by
 * a claim of their job.  Thread-safe (read-only on h). */
int qc_check_retry_delay(const qc_history *h, qc_check *out);

/* recovery (check_recovery.c): a job abandoned by a fault (kill_after_claim,
 * kill_after_effect, lost_request, stall_beyond_lease; poison when the
 * header says "poison_mode":"crash") must be recovered within the bound
 * lease_ms + reaper_interval_ms + recovery_slack_ms (client ms).  Recovered
 * = the first later (seq order) OK claim of the job, OK reap of it into
 * state dead, or, for a stall, OK complete with rows > 0 by another token.
 * Never recovered is a violation only when the final snapshot shows the job
 * not done or dead.  The summary gives min / median / p95 / max recovery
 * ms.  Opportunities: such faults with a job. */
int qc_check_recovery(const qc_history *h, qc_check *out);

/* The recovery time (client ms) of each fault the recovery checker judges
 * whose recovery event and both client times are in the ledger, in the
 * faults' seq order: stores the first max of them in out_ms (may be NULL
 * when max is 0) and returns how many there are (call with max 0 to size
 * the array).  Returns 0 when out of memory.  Thread-safe (read-only). */
size_t qc_recovery_times(const qc_history *h, double *out_ms, size_t max);

/* How many faults the recovery checker judges (faults that left a job
 * without its owner), with or without a measured recovery: the
 * denominator of qc_recovery_times.  0 also when out of memory. */
size_t qc_recovery_faults(const qc_history *h);

/* bounded_failure (check_recovery.c): a poison job (one with a fault event
 * "poison") claimed (OK claim events) more than the header's max_attempts
 * times, or not dead in the final snapshot, or dead with an empty or absent
 * "error".  Opportunities: poison jobs that can be judged (max_attempts
 * known, or a final snapshot row). */
int qc_check_bounded_failure(const qc_history *h, qc_check *out);

/* no_early_reap (check_leases.c): a lease taken away before its
 * lease_until: (a) an OK reap of the job carrying the lease's token whose
 * server "now" is before lease_until (extended by renews acknowledged
 * before the reap was sent); (b) the owner's complete or renew with the
 * current token answered OK with rows 0 although an upper bound of the
 * server time it ran at is before lease_until.  Opportunities: reaps with a
 * token of a known lease, and owner requests whose upper bound is before
 * lease_until. */
int qc_check_no_early_reap(const qc_history *h, qc_check *out);

/* bounded_idle_polling (check_idle.c): in an idle streak (a worker's
 * consecutive empty claims) of D ms, more than ceil(D/1000 x
 * max_idle_polls_per_s) + 2 + ramp empty claims; a pause after an empty
 * claim longer than max_idle_pause_ms; a job falling due on an empty queue
 * with an idle worker not claimed within max_pickup_ms (header bounds,
 * client ms); or a server count of claim statements (note "server_count",
 * pg_stat_statements) outside the ledger's [answered, requests] +- 1% + 2.
 * Opportunities: streaks, pauses, pickups, and the server count. */
int qc_check_bounded_idle_polling(const qc_history *h, qc_check *out);

/* group_exclusive (check_groups.c): two live leases at once on different
 * jobs of one group ("group" of the job's OK enqueue or OK claim events;
 * conversation-group locks, SQL Server Service Broker: one reader works on
 * a group at a time).  Leases are exactly exclusive_claim's (server times;
 * see qc__leases_visit).  A violation: lease B of job y starts strictly
 * before lease A of job x (same group, x != y, A started first) ends; each
 * pair of leases is reported once, about job y.  Opportunities: OK claims
 * of grouped jobs that carry a server time. */
int qc_check_group_exclusive(const qc_history *h, qc_check *out);

/* group_order (check_groups.c): the jobs of a group must be completed in
 * enqueue order (OK enqueue seq; procrastinate #212: jobs sharing a lock ran
 * out of order).  A job's completion is its first OK complete with
 * rows > 0.  A completed job y violates the rule when a job x of its group
 * enqueued before it (x's OK enqueue precedes y's enqueue invoke, or y's OK
 * enqueue when the ledger has no invoke) is proven completed after it:
 * every complete of x that may have taken effect (OK with rows > 0 or
 * unknown, INFO, or an invoke never answered) has a server "now" later than
 * y's, or was invoked after y's complete was acknowledged (seq order); or x
 * has no such complete and is ready or inflight in the final snapshot.
 * Jobs dead in the snapshot, or whose completion the ledger cannot place,
 * are not judged.  One violation per overtaking job y.  Opportunities:
 * completed grouped jobs with an earlier-enqueued judged job in their
 * group. */
int qc_check_group_order(const qc_history *h, qc_check *out);

/* witness_agrees (check_witness.c, issue 13): the client's ledger and the
 * server's witness disagree: an answer taken as a change (OK claim /
 * complete / renew / fail with rows > 0, OK reap / enqueue) without its
 * row change in a witness read to its end, or a committed row change no
 * request of its session explains (a session qchaos did not name, or one
 * whose only request was answered "fail").  Opportunities: client changes
 * and witness rows judged.  NOT_APPLICABLE without a witness. */
int qc_check_witness_agrees(const qc_history *h, qc_check *out);

/* witness_owner (check_witness.c): by the witness alone, a worker
 * session's row change that finished, gave back or renewed a job it did
 * not own (the owner is the session whose change set the job's current
 * token; without a token column, whose change an OK claim made).
 * Opportunities: worker row changes judged.  NOT_APPLICABLE without a
 * witness. */
int qc_check_witness_owner(const qc_history *h, qc_check *out);

/* Adds to every stored violation of the other checkers the witness rows
 * that confirm it (v->wseq): the rows its evidence's requests made and the
 * job's last committed change.  A no-op without a witness. */
void qc__witness_confirm(const qc_history *h, qc_check *c, size_t n);

/* What the witness resolved (results.json "witness", the audit's line). */
typedef struct qc_witness_counts {
    int on, complete;     /* the run had the witness; it was read to its end */
    long rows;            /* witness rows */
    long linked;          /* OK answers linked to their row */
    long info;            /* info outcomes of complete / renew / fail */
    long info_complete;   /* of which completes */
    long committed, not_committed, unresolved;
} qc_witness_counts;

void qc_witness_counts_get(const qc_history *h, qc_witness_counts *out);

/* worker_progress (check_wedged.c, issue 17, C20): a worker incarnation
 * alive but making no progress: (a) at least 3 requests in a row answered
 * "fail" over more than the header's max_wedged_ms (client ms, cut at
 * planned fault windows, statement timeouts and lost connections end a
 * streak); (b) a session sample ("session" event) showing its session
 * "idle in transaction" with a transaction older than max_wedged_ms that
 * began before its latest request, taken while that request was answered
 * (not in the transaction model: its claim's transaction is held through
 * the work, and begun and rolled back unlogged).  Opportunities:
 * incarnations watched longer than the bound, and samples judged. */
int qc_check_worker_progress(const qc_history *h, qc_check *out);

/* message_once (check_message.c, shared/cases.md C23): the physical copies
 * of one logical message (the jobs whose OK enqueue events name the same
 * "message", [workload] copies) apply its effect once between them: two or
 * more distinct copies with an effect event "applied": true is a
 * violation, about the first of them, with each copy's OK claim, OK dedup
 * (when there is one) and applied effect as evidence.  One copy's own
 * redeliveries are effects_once's.  Opportunities: messages with two or
 * more copies claimed.  NOT_APPLICABLE when no message was enqueued in
 * more than one copy.  Thread-safe (read-only on h); QC_ENOMEM. */
int qc_check_message_once(const qc_history *h, qc_check *out);

/* Runs every checker; *out is a new array of *n checks freed with
 * qc_checks_free, always in the same order (exclusive_claim first).  The
 * checkers run on qc_check_threads(h->n) threads, each taking the next
 * checker not yet started; they only read h and each writes its own
 * qc_check, so the results are those of one thread in any interleaving
 * (only elapsed_ms, each checker's own wall time, differs).  Returns 0,
 * or QC_ENOMEM when any checker ran out of memory (nothing in *out).
 * Not to be called while another thread modifies h. */
int qc_check_all(const qc_history *h, qc_check **out, size_t *n);

/* How many threads qc_check_all uses for a history of nevents events:
 * QC_AUDIT_THREADS when it is a positive integer (1: one after another on
 * the calling thread), else 1 below 20,000 events (threads would cost
 * more than they save) and the online CPUs above; at most the number of
 * checkers.  Reads the environment; thread-safe as getenv is. */
int qc_check_threads(size_t nevents);
void qc_checks_free(qc_check *c, size_t n);

/* Records a violation in c (counts it; stores it while under the cap).
 * seqs need not be sorted.  Used by checker implementations. */
void qc__check_violation(qc_check *c, int64_t job, const int64_t *seqs, int nseq,
                         const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Sets c->verdict from violations and opportunities. */
void qc__check_finish(qc_check *c);

/* Marks c NOT_APPLICABLE when its rule does not apply to the history's
 * protocol model (lease rules under model "transaction"); a FAIL stays.
 * Called by qc_check_all for every checker. */
void qc__check_model(const qc_history *h, qc_check *c);

/* 1 when the run was interrupted before its drain (an end event says so):
 * liveness (jobs left unfinished, never recovered, poison not yet dead)
 * cannot be judged then, safety still can.  Several ledgers (a sharded
 * run): when any ledger's last end event says so. */
int qc__run_interrupted(const qc_history *h);

/* 1 when the drain timed out (end event "timed_out") while the queue was
 * still finishing jobs: the done + dead count of the monitor samples rose
 * over the last 5 s before the end.  Jobs left then were slow, not lost: a
 * starved harness or server, not the queue (issue 11); no_lost_jobs and
 * recovery do not judge unfinished jobs then.  A queue that stopped making
 * progress (a stuck lease, C10) is still judged.  Several ledgers: each
 * ledger's end with its own monitor samples (client times of one process
 * only), cut short when any is. */
int qc__drain_cut_short(const qc_history *h);

/* ---- shared by the checker files only (not for other modules) ---- */

/* The job an event is about: its own "job", else (a completion whose line
 * lacks it) its invoke's; QC_NO_JOB when neither has one.  Inline (issue
 * 16: called per event by most checkers). */
static inline int64_t qc__event_job(const qc_history *h, const qc_event *e)
{
    if (e->job != QC_NO_JOB)
        return e->job;
    if (e->invoke >= 0 && (size_t)e->invoke < h->n)
        return h->ev[e->invoke].job;
    return QC_NO_JOB;
}

/* The token an event carried: its own "token", else its invoke's; NULL when
 * neither has one.  Inline. */
static inline const char *qc__event_token(const qc_history *h, const qc_event *e)
{
    if (qc_s(e->token) != NULL)
        return qc_s(e->token);
    if (e->invoke >= 0 && (size_t)e->invoke < h->n)
        return qc_s(h->ev[e->invoke].token);
    return NULL;
}

/* Flags, one per event of h: 1 for an invoke that some completion (ok,
 * fail or info) answers.  An invoke left unanswered (the harness stopped, or
 * the worker died mid-request) has an unknown outcome, like info.  Returns
 * a new array (free it) or NULL when out of memory. */
unsigned char *qc__answered_invokes(const qc_history *h);

/* 1 when a server time is known (QC_NO_TIME is negative). */
static inline int qc__has_time(double t)
{
    return t >= 0.0;
}

/* 1 when event a provably happened before event b in real time: both are
 * in one ledger (a harness process's seqs order only its own events) and
 * a's seq is lower.  Seq is taken when an event is appended: an invoke
 * before its request is sent, an answer after it arrived. */
static inline int qc__before(const qc_event *a, const qc_event *b)
{
    return a->file == b->file && a->seq < b->seq;
}

/* The resolution (ms) of the server clock as the ledger shows it: for each
 * kind of server time (claim now and lease_until, renew now and
 * lease_until, complete / fail / reap now) the finest step its values
 * show (1000 when every value is a whole second, ... 0.001 for
 * microseconds), and of those the coarsest.  A protocol that reports whole
 * seconds for one of them can be up to that much off in it: rules that
 * compare server times allow this margin.  0.001 when the ledger has no
 * server time.  Computed once per history and kept in h->clock_res (the
 * history must not change after the first call); thread-safe (the memo
 * is written atomically, with the same value by any thread). */
double qc__clock_resolution(const qc_history *h);

/* Two OK claims (of one job, or of one group) by different actors, whose
 * workers then both worked on what they got: is that innocent?  The claim
 * that ran first on the server (lower "now") is X, the other Y.  1 when
 *   - the queue is not proven to have handed out a live lease: Y's "now"
 *     is not earlier than X's lease_until (extended by OK renews of X's
 *     worker of X's job that ran before Y) by more than the clock
 *     resolution res; and
 *   - X's worker lost its lease through lateness, not by plan and not
 *     knowingly: it was not told (knew_x 0: no renew of that claim answered
 *     with rows 0 before it carried on), and it planned to keep the lease
 *     (header heartbeat with renews in the ledger, renews 1, unless the
 *     header says stop_heartbeat_first and X's worker incarnation was asked
 *     to stop gracefully during X's claim before Y's claim: a fault
 *     graceful_stop of X's job after X and before Y in one ledger, C07) or
 *     its planned work (work_x ms, QC_NO_TIME unknown) was shorter than
 *     the lease.
 * A starved client (an answer or a wake-up that came late) is the
 * machine's doing; a plan that lets the lease lapse (shared/cases.md C07)
 * and a worker that carries on after a refusal are not.  0 in the
 * transaction model (the claim lived in a transaction: C27), and when a
 * server time is missing.  knew_y / work_y are used when Y turns out to be
 * the earlier claim.  need_plan 0 skips the plan test (exclusive_run: a
 * run over a lapsed lease it was never told of is not the run's fault).
 * Thread-safe (read-only on h). */
int qc__lapse_excused(const qc_history *h, const qc_event *ca, const qc_event *cb, int knew_a,
                      double work_a, int knew_b, double work_b, int renews, double res,
                      int need_plan);

/* Makes room for need elements of size bytes in *p (capacity *cap, doubled
 * from 8).  Returns 0 or QC_ENOMEM (*p unchanged). */
int qc__grow(void **p, size_t *cap, size_t need, size_t size);

/* An event of h (index ev) about job; sorted by job, then ev (= seq order). */
typedef struct qc__jobref {
    int64_t job;
    size_t ev;
} qc__jobref;

void qc__jobrefs_sort(qc__jobref *r, size_t n);

/* An actor of a history: a worker incarnation of one ledger. */
typedef struct qc__actor {
    int file, worker, inc;
} qc__actor;

/* Sorts n elements of size bytes at base, each beginning with a qc__actor,
 * by (file, worker, inc), keeping the order they have among equal actors
 * (a stable sort).  A checker collects its refs scanning h->ev in order, so
 * the order among one actor's refs is ev order, which is seq order within
 * a ledger: the result is the sort by (file, worker, inc, seq, ev) the
 * checkers used qsort for, in O(n) plus a sort of the distinct actors
 * (issue 16: the two qsorts by actor were a seventh of an audit's
 * instructions).  Not thread-safe on one array; no lock.  Returns 0, or
 * QC_ENOMEM with base unchanged. */
int qc__actor_sort(void *base, size_t n, size_t size);

/* The final snapshot: the last snapshot row (by seq) of each job. */
typedef struct qc__snapshot {
    qc__jobref *row;  /* sorted by job, one per job */
    size_t n;
    size_t nevents;   /* snapshot events in the ledger; 0 means no snapshot */
} qc__snapshot;

/* Builds s (caller-allocated) from h.  Returns 0 or QC_ENOMEM. */
int qc__snapshot_build(const qc_history *h, qc__snapshot *s);
/* The job's final snapshot row, or NULL when the job is not in it. */
const qc_event *qc__snapshot_find(const qc_history *h, const qc__snapshot *s, int64_t job);
void qc__snapshot_fini(qc__snapshot *s);

/* Writes a short form of a token ("token 5b1e0c2a..", "no token") into
 * buf (check_faults.c). */
void qc__token_text(char *buf, size_t n, const char *token);

/* The invoke event of a request: e itself when it is an invoke, else its
 * paired invoke; NULL when the ledger has none. */
const qc_event *qc__invoke_of(const qc_history *h, const qc_event *e);

/* 1 for an OK claim event that returned a job (rows != 0).  Inline. */
static inline int qc__is_claim(const qc_event *e)
{
    return e->type == QC_EV_OK && e->op == QC_OP_CLAIM && e->job != QC_NO_JOB && e->rows != 0;
}

/* ---- leases (check_claims.c), shared by exclusive_claim and group_exclusive ---- */

#define QC__LEASE_MAX_SEGS 4 /* live intervals of one lease; more lapses are dropped */

/* How a lease segment came to end. */
typedef enum {
    QC__END_CLAIM,        /* the claim's lease_until (or none: a point) */
    QC__END_RENEW,        /* a renew's lease_until */
    QC__END_RELEASE,      /* a complete / fail, at its "now" */
    QC__END_RELEASE_BOUND /* a complete / fail, at a lower bound of its time */
} qc__lease_end;

/* One live interval of a lease: [s, e) in server epoch ms. */
typedef struct qc__lease_seg {
    double s, e;
    long s_ev; /* index in h->ev of the event that opened it: the claim, or a renew */
    long e_ev; /* index of the event that set e; -1 for the opener's own */
    qc__lease_end kind;
} qc__lease_seg;

/* One lease: what one OK claim event gave a worker, as the ledger proves it
 * (model in check_claims.c). */
typedef struct qc__lease {
    long claim;         /* index in h->ev of the claim's OK event */
    const char *token0; /* token the claim returned */
    const char *token;  /* current token (after rotations) */
    int worker, inc;
    int placed;   /* the claim carried "now"; an unplaced lease has no segment */
    int released; /* a complete / fail ended it, or may have */
    double start; /* server ms */
    double t_ok;  /* client ms of the claim's answer, QC_NO_TIME */
    double t_inv; /* client ms of the claim's invoke, QC_NO_TIME */
    int nseg;
    qc__lease_seg seg[QC__LEASE_MAX_SEGS];
} qc__lease;

/* Called once per job with OK claims, in ascending job order, with that
 * job's leases in claim seq order (borrowed until it returns).  A nonzero
 * return stops the walk. */
typedef int (*qc__lease_visit_fn)(void *arg, const qc_history *h, int64_t job, const qc__lease *l,
                                  size_t n);

/* Builds every job's leases from its OK claims, renews, completes and fails
 * (exclusive_claim's model) and hands them to visit.  Returns 0, QC_ENOMEM,
 * or visit's nonzero return.  Thread-safe (read-only on h). */
int qc__leases_visit(const qc_history *h, qc__lease_visit_fn visit, void *arg);

/* How much later than x->s segment x of lease l may really have begun: for
 * the claim's own segment, the client time from the claim's invoke to its
 * answer (its "now" may be read anywhere in it, e.g. the transaction start
 * of a step of several statements); 0 for a renew's segment, or when a
 * time is missing.  ms. */
double qc__lease_seg_slack(const qc_history *h, const qc__lease *l, const qc__lease_seg *x);

/* Writes how segment x of lease a came to end into buf, times relative to
 * a's start ("lease until +5000 ms", "released by complete seq 7 at
 * +2000 ms", ...). */
void qc__lease_describe_end(char *buf, size_t n, const qc_history *h, const qc__lease *a,
                            const qc__lease_seg *x);

#endif
