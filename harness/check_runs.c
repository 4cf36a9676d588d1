/*
 * check_runs.c - the exclusive_run checker (issue 18): the runs of one job
 * never overlap across actors, nor the runs of different jobs of one group
 * where the workload has groups (group_fifo's promise).  A lease rule can
 * hold while the work does not: a protocol that rightly refuses a late
 * heartbeat, and a worker that carries on all the same, both run the job
 * while a new owner runs it too.  No checker of leases sees that; this one
 * looks at the runs themselves.
 *
 * A run is what one actor (a worker incarnation) did with one claim: from
 * its OK claim of the job (the claim's answer) to its effect (the effect
 * event).  A claim whose worker never delivered an effect made no run.
 * Two runs R1 (claimed first) and R2 of one job, by different actors,
 * overlap when R2's claim was answered (seq) before R1's effect was
 * delivered: at that moment both workers held the job and R1's worker was
 * still working on it.  For grouped jobs the same holds between runs of
 * different jobs of one group.
 *
 * Innocent explanations, and how each is told apart:
 *   - the earlier lease ran out before the later claim ran (the queue
 *     rightly gave the job away) and its worker was never told (no renew
 *     of that claim answered with rows 0 before its effect): a starved
 *     thread, or a plan that outlasts the lease (shared/cases.md C09's
 *     rescue scenario works longer than its lease on purpose; C07's worker
 *     that stops renewing shows up in effects_once with a plain sink).
 *     qc__lapse_excused decides, without its plan test;
 *   - a reordered ledger: only seqs of one ledger are compared;
 *   - coarse clocks: the margin of qc__clock_resolution.
 * Never excused: a run that went on after its worker's renew was refused
 * (the worker knew: the policy mutant on_renew_refused = continue), a run
 * whose job was handed out while its lease was provably live
 * (exclusive_claim's violation too), and any overlap in the transaction
 * model (the claim lived only in a transaction: C27).
 *
 * Opportunities: runs that followed another run of their job (or group).
 * Cost: one sort of the claims and effects by job and one of the granted
 * renews, O(n log n); per job, a sort of its events by actor; per job or
 * group, each run against the runs still going on at its claim (a sweep);
 * per pair of overlapping runs, the renews of the earlier run's job
 * (decisions 970-972).
 */
#include "checkers.h"
#include "scenario.h" /* QC_LEASE_MARGIN_MS: the worker's own margin */

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct run {
    size_t claim;   /* index in h->ev of the run's OK claim */
    size_t effect;  /* index of its effect */
    int knew;       /* a renew of this claim was answered with rows 0 before the effect */
    const char *group;
} run;

/* Claim order; two runs of one claim (two effects after it) in effect
 * order. */
static int cmp_run_claim(const void *pa, const void *pb)
{
    const run *a = pa, *b = pb;

    if (a->claim != b->claim)
        return a->claim < b->claim ? -1 : 1;
    return a->effect < b->effect ? -1 : a->effect > b->effect;
}

/* One event of a job with its actor, sorted by actor then event (seq). */
typedef struct job_actor {
    int file, worker, inc;
    size_t ev;
} job_actor;

static int cmp_job_actor(const void *pa, const void *pb)
{
    const job_actor *a = pa, *b = pb;

    if (a->file != b->file)
        return a->file < b->file ? -1 : 1;
    if (a->worker != b->worker)
        return a->worker < b->worker ? -1 : 1;
    if (a->inc != b->inc)
        return a->inc < b->inc ? -1 : 1;
    return a->ev < b->ev ? -1 : a->ev > b->ev;
}

static int cmp_run_group(const void *pa, const void *pb)
{
    const run *a = pa, *b = pb;
    int c = strcmp(a->group, b->group);

    if (c != 0)
        return c;
    return cmp_run_claim(pa, pb);
}

/* The granted renews of the ledger (OK, rows > 0, of a known job), sorted
 * by job then seq: the only events qc__lapse_excused's lease extension
 * looks at, found here by job instead of by a scan of the whole ledger. */
typedef struct renews {
    const qc__jobref *r;
    size_t n;
} renews;

/* Is the overlap of r1 and r2 innocent?  qc__lapse_excused with need_plan
 * 0, the same tests in the same order, except that X's lease is extended
 * only from the renews of X's job in g (qc__lapse_excused scans all of
 * h->ev for them: O(ledger) a call, which made a failing run's audit take
 * minutes, decision 970).  Keep the two in step: the unit test
 * test_exclusive_run_excuse_matches_shared compares them pair by pair. */
static int excused(const qc_history *h, const renews *g, const run *r1, const run *r2, double res)
{
    const qc_event *x = &h->ev[r1->claim], *y = &h->ev[r2->claim];
    int knew = r1->knew;
    double until;

    if (strcmp(h->info.model, "transaction") == 0)
        return 0;
    if (!qc__has_time(x->now) || !qc__has_time(y->now) || !qc__has_time(x->lease_until) ||
        !qc__has_time(y->lease_until))
        return 0;
    if (y->now < x->now) {
        const qc_event *t = x;
        x = y;
        y = t;
        knew = r2->knew;
    }
    if (knew)
        return 0;
    until = x->lease_until;
    /* the first renew of x->job: binary search of g->r (sorted by job) */
    size_t lo = 0, hi = g->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->r[mid].job < x->job)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k < g->n && g->r[k].job == x->job; k++) {
        const qc_event *e = &h->ev[g->r[k].ev];
        if (e->file == x->file && e->worker == x->worker && e->inc == x->inc &&
            e->seq > x->seq && qc__has_time(e->lease_until) && e->lease_until > until &&
            (!qc__has_time(e->now) || e->now < y->now))
            until = e->lease_until;
    }
    if (y->now + res < until)
        return 0; /* provably handed out while the first lease was live */
    return 1;
}

static void report(qc_check *c, const qc_history *h, const run *r1, const run *r2, int grouped)
{
    const qc_event *c1 = &h->ev[r1->claim], *c2 = &h->ev[r2->claim];
    const qc_event *e1 = &h->ev[r1->effect], *e2 = &h->ev[r2->effect];
    int64_t seqs[] = {c1->seq, c2->seq, e1->seq, e2->seq};
    char what[96];

    if (grouped)
        snprintf(what, sizeof what, "group '%.40s': job %lld", r2->group, (long long)c2->job);
    else
        snprintf(what, sizeof what, "job %lld", (long long)c2->job);
    qc__check_violation(c, c2->job, seqs, 4,
                        "%s claimed by worker %d (seq %lld) while worker %d was still running "
                        "job %lld (claimed seq %lld, its effect only at seq %lld%s)",
                        what, c2->worker, (long long)c2->seq, c1->worker, (long long)c1->job,
                        (long long)c1->seq, (long long)e1->seq,
                        r1->knew ? ", after its renew had been refused" : "");
}

/* Judges the runs r[0..n) (claim order) of one job or one group: each run
 * against the earlier runs (claim order) still going on at its claim, the
 * first overlap not excused reported.  live[] (room for n) holds the
 * indexes of the runs whose effect is after the latest claim seen: h->ev
 * is sorted by seq, so a run over before one claim is over before every
 * later one, and leaves live[] for good (a sweep: a group of thousands of
 * runs costs its overlaps, not its pairs).  Same verdicts and reports, in
 * the same order, as the test of every pair (decision 971). */
static void judge(qc_check *c, const qc_history *h, const renews *g, const run *r, size_t n,
                  int grouped, double res, size_t *live, long *followed)
{
    size_t nl = 0;

    for (size_t j = 0; j < n; j++) {
        const qc_event *c2 = &h->ev[r[j].claim];
        size_t keep = 0;
        int reported = 0;
        if (j > 0)
            (*followed)++;
        for (size_t l = 0; l < nl; l++) {
            size_t i = live[l];
            if (!(c2->seq < h->ev[r[i].effect].seq))
                continue; /* the first run was over before the second began */
            live[keep++] = i;
            if (reported)
                continue;
            const qc_event *c1 = &h->ev[r[i].claim];
            if (c1->file != c2->file || (c1->worker == c2->worker && c1->inc == c2->inc))
                continue;
            if (grouped && c1->job == c2->job)
                continue; /* the job's own runs are judged per job */
            if (excused(h, g, &r[i], &r[j], res))
                continue;
            report(c, h, &r[i], &r[j], grouped);
            reported = 1;
        }
        nl = keep;
        live[nl++] = j;
    }
}

int qc_check_exclusive_run(const qc_history *h, qc_check *out)
{
    qc__jobref *r = NULL, *gr = NULL;
    run *runs = NULL;
    size_t *live = NULL;
    job_actor *ax = NULL;
    size_t n = 0, ng_r = 0, nr = 0, capr = 0;
    long followed = 0;
    int rc = 0;
    double res = qc__clock_resolution(h);

    memset(out, 0, sizeof *out);
    out->name = "exclusive_run";
    /* live: judge's sweep, room for every run (a run has an effect event);
     * ax: one job's events by actor */
    if ((r = malloc((h->n + 1) * sizeof *r)) == NULL ||
        (gr = malloc((h->n + 1) * sizeof *gr)) == NULL ||
        (live = malloc((h->n + 1) * sizeof *live)) == NULL ||
        (ax = malloc((h->n + 1) * sizeof *ax)) == NULL) {
        free(r);
        free(gr);
        free(live);
        return QC_ENOMEM;
    }
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (qc__is_claim(e) || (e->type == QC_EV_EFFECT && e->job != QC_NO_JOB))
            r[n++] = (qc__jobref){e->job, i};
        else if (e->type == QC_EV_OK && e->op == QC_OP_RENEW && e->rows == 0 &&
                 qc__event_job(h, e) != QC_NO_JOB)
            r[n++] = (qc__jobref){qc__event_job(h, e), i};
        else if (e->type == QC_EV_OK && e->op == QC_OP_RENEW && e->rows > 0 &&
                 qc__event_job(h, e) != QC_NO_JOB)
            gr[ng_r++] = (qc__jobref){qc__event_job(h, e), i};
    }
    qc__jobrefs_sort(r, n);
    qc__jobrefs_sort(gr, ng_r);
    renews g = {gr, ng_r};
    for (size_t a = 0, b; a < n; a = b) {
        size_t first = nr;
        for (b = a; b < n && r[b].job == r[a].job; b++)
            ;
        /* the job's events by actor, then seq: each actor's claims, refused
         * renews and effects in one pass (a job claimed 20,000 times costs a
         * sort, not 20,000 scans of its events: decision 972) */
        for (size_t k = a; k < b; k++) {
            const qc_event *x = &h->ev[r[k].ev];
            ax[k - a] = (job_actor){x->file, x->worker, x->inc, r[k].ev};
        }
        qsort(ax, b - a, sizeof *ax, cmp_job_actor);
        long cl = -1;
        int knew = 0;
        for (size_t k = 0; k < b - a; k++) {
            const qc_event *x = &h->ev[ax[k].ev];
            if (k == 0 || ax[k].file != ax[k - 1].file || ax[k].worker != ax[k - 1].worker ||
                ax[k].inc != ax[k - 1].inc) {
                cl = -1; /* a new actor */
                knew = 0;
            }
            if (x->type == QC_EV_EFFECT) {
                /* the run: from the claim that gave the effect's worker the job */
                if (cl < 0)
                    continue;
                if (qc__grow((void **)&runs, &capr, nr + 1, sizeof *runs) != 0) {
                    rc = QC_ENOMEM;
                    goto out;
                }
                runs[nr++] = (run){(size_t)cl, ax[k].ev, knew, qc_s(h->ev[cl].group)};
            } else if (qc__is_claim(x)) {
                cl = (long)ax[k].ev;
                knew = 0;
            } else if (x->op == QC_OP_RENEW && cl >= 0) {
                knew = 1; /* a renew of the claim answered with rows 0 */
            }
        }
        if (nr - first > 1) {
            qsort(runs + first, nr - first, sizeof *runs, cmp_run_claim);
            judge(out, h, &g, runs + first, nr - first, 0, res, live, &followed);
        }
    }
    /* groups: the runs of grouped jobs, sorted by group, then claim */
    size_t ng = 0;
    for (size_t k = 0; k < nr; k++)
        if (runs[k].group != NULL)
            runs[ng++] = runs[k];
    if (ng > 1)
        qsort(runs, ng, sizeof *runs, cmp_run_group);
    for (size_t a = 0, b; a < ng; a = b) {
        for (b = a + 1; b < ng && strcmp(runs[b].group, runs[a].group) == 0; b++)
            ;
        long ignore = 0;
        judge(out, h, &g, runs + a, b - a, 1, res, live, &ignore);
    }
    out->opportunities = followed;
    snprintf(out->summary, sizeof out->summary,
             "%zu runs (claim to effect), %ld followed another run of their job; %ld overlapping "
             "runs of one job or group",
             nr, followed, out->nviolations);
    qc__check_finish(out);
out:
    free(r);
    free(gr);
    free(runs);
    free(live);
    free(ax);
    return rc;
}

/* ---- own_lease (docs/decisions.md 950) -----------------------------------
 *
 * A worker that keeps a lease deadline of its own (header "lease_deadline"
 * sent or answer: [policy] lease_deadline) has it lease_ms after it SENT
 * the claim, or the last renew (or heartbeat) that was answered with rows
 * > 0: the invoke events' "t", its own monotonic clock.  A renew answered
 * otherwise (rows 0, fail, info: refused, or no answer) renews nothing.  A
 * run's effect, and its first complete (its invoke), after that deadline
 * went on past the lease, which no lease rule on the server's clock sees
 * (a renew lost in a partition is an info, not a refusal: decision 932).
 *
 * The thread's own lateness is told apart by what the worker provably
 * knew, never by a guess: the worker (worker.c own_lease_left) starts the
 * effect or sends the complete only when more than QC_LEASE_MARGIN_MS
 * (50 ms, the margin of qc__lapse_excused's "work + 50 ms < lease") are
 * left at a moment after all of
 *   - its own events before it (requests, answers, effects, "connect
 *     failed" notes: only its own thread writes them), and
 *   - for the effect, the claim's answer plus its planned work (the
 *     effect's work_ms: the sleeps) plus the round trips of its renews of
 *     the job in between (they come between the sleeps).
 * The latest of those is K.  A late event whose K already had the deadline
 * within 50 ms is a decision the correct worker never takes: a violation,
 * with the claim's (or renew's) send, lease_ms, K and the late event.  A
 * late event whose K left more than 50 ms is the harness's lateness (the
 * thread descheduled between the test and the event), as exclusive_run
 * and effects_once excuse a plan that fitted the lease.  Not judged: the
 * events after a stall the harness injected into that run
 * (stall_beyond_lease, stall_until_reclaimed: the stale requests are the
 * fault's), retried completes, the transaction model, and ledgers whose
 * workers keep no deadline (header "none", or none: INCONCLUSIVE).
 *
 * Opportunities: effects and first completes judged.  Cost: one sort of
 * the workers' own events by actor, O(n log n), then one pass. */

typedef struct ol_run {
    int64_t job;
    size_t basis;    /* the invoke the deadline runs from (claim, or granted renew) */
    size_t claim_ok; /* the claim's answer (this job's row) */
    double deadline; /* t of basis + lease_ms */
    double rtt;      /* round trips of this job's renews so far */
    double k_effect; /* K of the effect (see above); -1 none yet */
    size_t k_effect_ev;
    long unconfirmed; /* the last renew answer that renewed nothing; -1 none */
    int stalled, effect_done, complete_done;
} ol_run;

typedef struct ol_ctx {
    const qc_history *h;
    qc_check *c;
    double lease;
    long judged, late_excused, gave_up;
} ol_ctx;

/* An event of an actor's stream, with its sort key. */
typedef struct ol_key {
    int file, worker, inc;
    int64_t seq;
    size_t ev;
} ol_key;
_Static_assert(offsetof(ol_key, file) == offsetof(qc__actor, file) &&
                   offsetof(ol_key, worker) == offsetof(qc__actor, worker) &&
                   offsetof(ol_key, inc) == offsetof(qc__actor, inc),
               "ol_key begins with a qc__actor (qc__actor_sort)");

static int cmp_actor_ev(const void *pa, const void *pb)
{
    const ol_key *a = pa, *b = pb;
    if (a->file != b->file)
        return a->file < b->file ? -1 : 1;
    if (a->worker != b->worker)
        return a->worker < b->worker ? -1 : 1;
    if (a->inc != b->inc)
        return a->inc < b->inc ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Judges event i (an effect, or a complete's invoke) of run r whose K is
 * k (event kev defines it; kplan: K came from the plan, not an event). */
static void ol_judge(ol_ctx *x, ol_run *r, size_t i, double k, size_t kev, int kplan)
{
    const qc_history *h = x->h;
    const qc_event *e = &h->ev[i], *b = &h->ev[r->basis], *a = &h->ev[r->claim_ok];
    const double eps = 0.002; /* the ledger's microseconds, truncated */
    int is_effect = e->type == QC_EV_EFFECT;

    x->judged++;
    if (!(e->t > r->deadline + eps))
        return;
    if (k + QC_LEASE_MARGIN_MS < r->deadline + eps) {
        x->late_excused++;
        return;
    }
    char why[96], lost[64] = "";
    if (kplan)
        snprintf(why, sizeof why, "answer t=%.1f + planned work %.0f ms + renew trips %.1f ms",
                 a->t, e->work_ms, r->rtt);
    else
        snprintf(why, sizeof why, "its event seq %lld", (long long)h->ev[kev].seq);
    if (r->unconfirmed >= 0) {
        const qc_event *u = &h->ev[r->unconfirmed];
        snprintf(lost, sizeof lost, "; renew seq %lld: %s, renewed nothing", (long long)u->seq,
                 u->type == QC_EV_INFO ? "no answer" : u->type == QC_EV_FAIL ? "failed" : "rows 0");
    }
    int64_t seqs[4] = {b->seq, a->seq, h->ev[kplan ? r->claim_ok : kev].seq, e->seq};
    qc__check_violation(x->c, r->job, seqs, 4,
                        "worker %d.%d went on past its own lease: job %lld's %s at t=%.1f, "
                        "%.1f ms after its deadline t=%.1f (lease_ms %.0f from its %s sent at "
                        "t=%.1f%s); it knew by t=%.1f (%s) that <= %.0f ms were left",
                        e->worker, e->inc, (long long)r->job, is_effect ? "effect" : "complete",
                        e->t, e->t - r->deadline, r->deadline, x->lease,
                        b->op == QC_OP_CLAIM ? "claim" : qc_op_name(b->op), b->t, lost, k, why,
                        QC_LEASE_MARGIN_MS);
}

static ol_run *ol_find(ol_run *runs, size_t n, int64_t job)
{
    for (size_t k = n; k-- > 0;)
        if (runs[k].job == job)
            return &runs[k];
    return NULL;
}

/* One actor's events ix[0..n) in seq order. */
static int ol_actor(ol_ctx *x, const size_t *ix, size_t n)
{
    const qc_history *h = x->h;
    ol_run *runs = NULL;
    size_t nr = 0, cap = 0;
    long claim_inv = -1;
    double prev_t = -1;
    long prev_ev = -1;

    for (size_t p = 0; p < n; p++) {
        size_t i = ix[p];
        const qc_event *e = &h->ev[i];
        int counts = 1; /* one of the worker thread's own events (for K) */
        ol_run *r;
        switch (e->type) {
        case QC_EV_INVOKE:
            if (e->op == QC_OP_CLAIM) {
                claim_inv = (long)i;
                nr = 0; /* the worker claims again only once its batch is over */
            } else if (e->op == QC_OP_COMPLETE && (r = ol_find(runs, nr, e->job)) != NULL &&
                       !r->complete_done && !r->stalled) {
                /* K: its last own event (the effect, or a reconnect's note) */
                r->complete_done = 1;
                if (prev_ev >= 0)
                    ol_judge(x, r, i, prev_t, (size_t)prev_ev, 0);
            } else if (e->op == QC_OP_COMPLETE && (r = ol_find(runs, nr, e->job)) != NULL) {
                r->complete_done = 1;
            }
            break;
        case QC_EV_OK:
        case QC_EV_FAIL:
        case QC_EV_INFO:
            if (e->type == QC_EV_OK && e->op == QC_OP_CLAIM && e->job != QC_NO_JOB &&
                e->rows > 0 && claim_inv >= 0 && h->ev[claim_inv].req == e->req) {
                if (qc__grow((void **)&runs, &cap, nr + 1, sizeof *runs) != 0) {
                    free(runs);
                    return QC_ENOMEM;
                }
                runs[nr++] = (ol_run){e->job, (size_t)claim_inv, i,
                                      h->ev[claim_inv].t + x->lease, 0, -1, 0, -1, 0, 0, 0};
            } else if ((e->op == QC_OP_RENEW || e->op == QC_OP_HEARTBEAT) && e->invoke >= 0) {
                const qc_event *inv = &h->ev[e->invoke];
                int granted = e->type == QC_EV_OK && e->rows > 0;
                for (size_t k = 0; k < nr; k++) {
                    r = &runs[k];
                    if (e->op == QC_OP_RENEW && r->job != qc__event_job(h, e))
                        continue;
                    if (inv->seq < h->ev[r->claim_ok].seq)
                        continue;
                    if (e->op == QC_OP_RENEW)
                        r->rtt += e->t - inv->t;
                    if (granted && inv->t + x->lease > r->deadline) {
                        r->deadline = inv->t + x->lease;
                        r->basis = (size_t)e->invoke;
                        r->unconfirmed = -1;
                    } else if (!granted) {
                        r->unconfirmed = (long)i;
                    }
                }
            }
            break;
        case QC_EV_EFFECT:
            if ((r = ol_find(runs, nr, e->job)) != NULL && !r->effect_done && !r->stalled) {
                double plan = qc__has_time(e->work_ms) ? h->ev[r->claim_ok].t + e->work_ms + r->rtt
                                                       : -1;
                int kplan = plan > prev_t;
                r->k_effect = kplan ? plan : prev_t;
                r->k_effect_ev = kplan ? r->claim_ok : (size_t)prev_ev;
                r->effect_done = 1;
                if (r->k_effect >= 0)
                    ol_judge(x, r, i, r->k_effect, r->k_effect_ev, kplan);
            } else if (r != NULL) {
                r->effect_done = 1;
            }
            break;
        case QC_EV_FAULT:
            counts = 0;
            if (qc_x(e->x)->fault != NULL && (!strcmp(qc_x(e->x)->fault, "stall_beyond_lease") ||
                                        !strcmp(qc_x(e->x)->fault, "stall_until_reclaimed")) &&
                (r = ol_find(runs, nr, e->job)) != NULL)
                r->stalled = 1;
            break;
        case QC_EV_NOTE:
            counts = qc_x(e->x)->note != NULL && !strcmp(qc_x(e->x)->note, "connect failed");
            if (qc_x(e->x)->note != NULL && !strcmp(qc_x(e->x)->note, "own lease ran out"))
                x->gave_up++;
            break;
        default:
            counts = 0;
        }
        if (counts) {
            prev_t = e->t;
            prev_ev = (long)i;
        }
    }
    free(runs);
    return 0;
}

int qc_check_own_lease(const qc_history *h, qc_check *out)
{
    ol_ctx x = {h, out, (double)h->info.lease_ms, 0, 0, 0};
    ol_key *keys = NULL;
    size_t *ix = NULL, n = 0;
    int rc = 0;

    memset(out, 0, sizeof *out);
    out->name = "own_lease";
    if (h->info.lease_deadline <= 0 || strcmp(h->info.model, "transaction") == 0 ||
        h->info.lease_ms <= 0) {
        snprintf(out->summary, sizeof out->summary,
                 "not judged: %s",
                 strcmp(h->info.model, "transaction") == 0
                     ? "transaction model (a claim lives in its transaction, not a lease)"
                 : h->info.lease_deadline == 0
                     ? "the workers keep no lease deadline of their own (lease_deadline none)"
                     : "the ledger does not say whether the workers keep a lease deadline of "
                       "their own (header lease_deadline)");
        qc__check_finish(out);
        return 0;
    }
    if ((ix = malloc((h->n + 1) * sizeof *ix)) == NULL ||
        (keys = malloc((h->n + 1) * sizeof *keys)) == NULL) {
        free(ix);
        return QC_ENOMEM;
    }
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->worker < 0)
            continue;
        switch (e->type) {
        case QC_EV_INVOKE:
        case QC_EV_OK:
        case QC_EV_FAIL:
        case QC_EV_INFO:
        case QC_EV_EFFECT:
        case QC_EV_FAULT:
        case QC_EV_NOTE:
            keys[n++] = (ol_key){e->file, e->worker, e->inc, e->seq, i};
            break;
        default:
            break;
        }
    }
    /* keys were collected in ev order: the stable sort by actor is the sort
     * by (file, worker, inc, seq) (qsort when out of memory for it) */
    if (qc__actor_sort(keys, n, sizeof *keys) != 0)
        qsort(keys, n, sizeof *keys, cmp_actor_ev);
    for (size_t k = 0; k < n; k++)
        ix[k] = keys[k].ev;
    for (size_t a = 0, b; a < n && rc == 0; a = b) {
        for (b = a + 1; b < n; b++)
            if (keys[b].file != keys[a].file || keys[b].worker != keys[a].worker ||
                keys[b].inc != keys[a].inc)
                break;
        rc = ol_actor(&x, ix + a, b - a);
    }
    free(keys);
    free(ix);
    if (rc != 0)
        return rc;
    out->opportunities = x.judged;
    snprintf(out->summary, sizeof out->summary,
             "%ld effects and first completes judged against their worker's own lease "
             "(lease_ms %ld from the %s); %ld late by the thread's own lateness (more than "
             "%.0f ms were left when it last knew), %ld gone on past their lease; %ld jobs "
             "given up by the workers' own clock",
             x.judged, h->info.lease_ms, "claim's or granted renew's send", x.late_excused,
             QC_LEASE_MARGIN_MS, out->nviolations, x.gave_up);
    qc__check_finish(out);
    return 0;
}
