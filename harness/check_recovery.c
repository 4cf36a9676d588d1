/*
 * check_recovery.c - the liveness checkers of faulted jobs (DESIGN.md
 * "Checkers"): recovery (a job abandoned by a fault is taken up again in
 * bounded time) and bounded_failure (a poison job ends dead, with its error
 * kept, after at most max_attempts claims).
 *
 * recovery.  A fault abandons its job with a live lease when its kind is
 * kill_after_claim, kill_after_effect, lost_request or stall_beyond_lease,
 * or poison when the header says "poison_mode":"crash" (the worker dies
 * holding the lease).  The job is claimable again at the first later event
 * (seq order) that is an OK reap of it, an OK claim of it, or, for a stall
 * only, an OK complete with rows > 0 carrying another token than the
 * stalled one; the recovery time (client ms from the fault) of each is
 * reported as a distribution.  The verdict does not rest on that time: it
 * is taken on the harness's clock, which a starved client stretches.  It
 * rests on what the queue answered to requests that provably ran after the
 * abandoned lease had expired, plus the slack the scenario allows
 * (recovery_slack_ms):
 *   (1) a reap pass SENT after that moment, answered before anything else
 *       touched the job (no claim, complete, fail or renew of it in flight
 *       or done, no reap of it yet), whose rows are all named, returned no
 *       job at all: the reaper left an expired lease in place (a pass that
 *       returned other jobs is not judged: a reaper may take a bounded
 *       batch per pass, decision 967);
 *   (2) with no reaper in the ledger (the claim itself must take expired
 *       leases): an empty claim sent after that moment, answered before the
 *       job's next claim was sent; or, after a reap returned the job to
 *       ready, an empty claim sent recovery_slack_ms after that reap was
 *       answered and answered before the job's next claim was sent: the
 *       job was claimable and the queue said it had nothing (grouped jobs
 *       are not judged: an earlier job of the group may hold them back);
 *   (3) the job has no recovery event and the final snapshot holds it in
 *       another state than done or dead.
 * "The lease had expired" is placed on the client's clock from the server
 * times of the claim (or the owner's last acknowledged renew) that set
 * lease_until: the server read "now" before its answer came, so lease_until
 * passed on the client's clock by
 *     t of that answer + (lease_until - now)
 * at the latest; a margin of the clock resolution the ledger shows, 1 ms
 * and 0.1% of the elapsed time is added.  A fault whose lease lacks those
 * times is judged by (3) only.
 *
 * Innocent explanations, and why they cannot raise this alarm:
 *   - a starved client: late answers and oversleeping threads delay reap
 *     passes and claims; only requests SENT after the expiry are judged, and
 *     only by what the server answered, so a slow harness is never taken
 *     for a slow queue;
 *   - a paused server: a request sent after the expiry and answered after
 *     the pause still ran after the expiry;
 *   - coarse server clocks: the resolution the ledger shows is in the
 *     margin; "now" = the transaction start is still a reading taken before
 *     the answer came;
 *   - a row the reaper skipped because another session held it: only passes
 *     answered before any other request touched the job are judged;
 *   - a reaper that takes a bounded batch per pass (LIMIT n): a pass that
 *     returned other jobs made progress and is not judged (decision 967);
 *   - a heartbeat (it names no job) of the lease's own incarnation: it may
 *     have extended the lease, whose end is then unknown (decision 961);
 *   - a reordered ledger: only seqs of one ledger are compared, and each
 *     is taken at append time;
 *   - several ledgers (a sharded run): a request or reap of the job in
 *     another ledger may have touched it anywhere in the window (the
 *     reaper of shard 0, a worker of another shard), so (1) and (2) are
 *     not judged for that fault unless every such event read the server's
 *     clock before the abandoned claim did (now + resolution + 1 ms below
 *     the claim's now);
 *   - a run stopped before its drain (SIGINT): (3) is not judged.
 *
 * Across a switch of the primary (switch_snapshot rows, nemesis.c), each
 * job in flight on the promoted replica is an opportunity too, judged by
 * (3) only: see judge_switch.
 *
 * bounded_failure.  Poison jobs are the jobs with a fault event "poison".
 * Attempts are the OK claim events of the job in the ledger, never an
 * attempt column (the ledger sees fewer claims than happened, never more).
 * The final snapshot must hold the job dead with a non-empty "error".  The
 * snapshot's "error" column is optional (issue 18): when the ledger header
 * says the protocol's snapshot does not return it, the error rule is not
 * judged and the summary says so; a dead job without an error is a
 * violation only when the protocol could have shown one.  Innocent
 * explanations: the ledger sees fewer claims than happened (an answer that
 * never came), never more, so "claimed too often" is always real; a job not
 * dead yet when the run was stopped or the drain was cut short while jobs
 * were still finishing is not judged.
 *
 * Cost: one sort of the relevant events by job, O(n log n), and per fault a
 * scan of the reap passes and empty claims after its expiry.
 */
#include "checkers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLOCK_SLACK_MS 1.0 /* timestamps are truncated to a microsecond or so */
#define CLOCK_DRIFT 1e-3   /* NTP slews a clock by at most 500 ppm */

static int is_final(const char *state)
{
    return state != NULL && (strcmp(state, "done") == 0 || strcmp(state, "dead") == 0);
}

/* ---- recovery --------------------------------------------------------- */

typedef enum {
    REC_TIMED,   /* recovery event seen, both client times known */
    REC_UNTIMED, /* recovery event seen, a client time missing */
    REC_UNSEEN,  /* no recovery event, but done or dead in the final snapshot */
    REC_NEVER,   /* no recovery event, and neither done nor dead: a violation */
    REC_UNKNOWN  /* no recovery event, and not in a final snapshot */
} rec_kind;

typedef struct rec {
    size_t fault; /* index in h->ev of the fault event */
    long by;      /* index of the recovery event, -1 none */
    long snap;    /* index of the job's final snapshot row, -1 none */
    long lease;   /* index of the abandoned lease's claim, -1 unknown */
    long anchor;  /* index of the event that set the lease's end (claim or renew), -1 */
    double until; /* the abandoned lease's lease_until (server ms), QC_NO_TIME */
    int64_t end_seq; /* seq at which something else touched the job (the window's end) */
    long reap_ready; /* index of the OK reap that returned the job to ready, -1 */
    int64_t next_claim_sent; /* invoke seq of the job's next claim after that reap */
    int elsewhere; /* another ledger (a sharded run) has a request or reap of the job not
                      proven (by server time) to precede the abandoned claim: its place
                      against this ledger's seqs is unknown, so the window is not judged */
    double ms;    /* REC_TIMED: recovery time */
    rec_kind kind;
} rec;

/* Does fault event e abandon its job with a live lease? */
static int is_abandoning(const qc_history *h, const qc_event *e)
{
    static const char *const kinds[] = {"kill_after_claim", "kill_after_effect", "lost_request",
                                        "stall_beyond_lease", "stall_until_reclaimed",
                                        "stall_in_work"};

    if (e->type != QC_EV_FAULT || qc_x(e->x)->fault == NULL || e->job == QC_NO_JOB)
        return 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(qc_x(e->x)->fault, kinds[i]) == 0)
            return 1;
    return h->info.poison_crash && strcmp(qc_x(e->x)->fault, "poison") == 0;
}

static int is_stall(const qc_event *e)
{
    return qc_x(e->x)->fault != NULL && (strcmp(qc_x(e->x)->fault, "stall_beyond_lease") == 0 ||
                                   strcmp(qc_x(e->x)->fault, "stall_until_reclaimed") == 0);
}

static int is_reap_of(const qc_event *e)
{
    return e->type == QC_EV_OK && e->op == QC_OP_REAP && e->job != QC_NO_JOB;
}

static int is_acked_complete(const qc_event *e)
{
    return e->type == QC_EV_OK && e->op == QC_OP_COMPLETE && e->rows > 0;
}

/* Does event x make the job abandoned by fault f claimable again? */
static int recovers(const qc_history *h, const qc_event *f, const qc_event *x)
{
    const char *tok;

    if (qc__is_claim(x) || is_reap_of(x))
        return 1;
    if (!is_stall(f) || !is_acked_complete(x) || qc_s(f->token) == NULL)
        return 0;
    tok = qc__event_token(h, x);
    return tok != NULL && strcmp(tok, qc_s(f->token)) != 0;
}

/* Requests of a job that end the window in which the abandoned lease is
 * judged: anything that may change it (sent at its invoke's seq). */
static int is_job_request(const qc_event *e)
{
    return e->op == QC_OP_COMPLETE || e->op == QC_OP_FAIL || e->op == QC_OP_RENEW ||
           e->op == QC_OP_CLAIM;
}

static int cmp_rec(const void *pa, const void *pb)
{
    const rec *a = pa, *b = pb;

    return a->fault < b->fault ? -1 : a->fault > b->fault;
}

/* The seq at which event e was sent (its invoke's), else its own. */
static int64_t sent_seq(const qc_history *h, const qc_event *e)
{
    const qc_event *inv = qc__invoke_of(h, e);

    return inv != NULL ? inv->seq : e->seq;
}

/* Fills the abandoned lease, its end and the judging window of x, the
 * record of fault f, from the job's events r[0..n) (seq order) where f is
 * r[k]. */
static void find_window(const qc_history *h, const qc__jobref *r, size_t n, size_t k, rec *x,
                        double res, const size_t *hb, size_t nhb)
{
    const qc_event *f = &h->ev[r[k].ev];

    x->lease = x->anchor = x->reap_ready = -1;
    x->until = QC_NO_TIME;
    x->end_seq = INT64_MAX;
    x->next_claim_sent = INT64_MAX;
    x->elsewhere = 0;
    for (size_t j = k; j-- > 0;) {
        const qc_event *e = &h->ev[r[j].ev];
        if (qc__is_claim(e) && e->file == f->file && e->worker == f->worker && e->inc == f->inc) {
            x->lease = (long)r[j].ev;
            if (qc__has_time(e->now) && qc__has_time(e->lease_until)) {
                x->anchor = (long)r[j].ev;
                x->until = e->lease_until;
            }
            break;
        }
    }
    /* The owner's acknowledged renews before the fault extend the lease. */
    for (size_t j = 0; j < k && x->lease >= 0; j++) {
        const qc_event *e = &h->ev[r[j].ev];
        if (e->type == QC_EV_OK && e->op == QC_OP_RENEW && e->rows > 0 &&
            (long)r[j].ev > x->lease && e->worker == f->worker && e->inc == f->inc) {
            if (qc__has_time(e->now) && qc__has_time(e->lease_until)) {
                x->anchor = (long)r[j].ev;
                x->until = e->lease_until;
            } else {
                x->anchor = -1; /* extended to an unknown end */
            }
        }
    }
    /* A heartbeat of the owner's own incarnation sent after its claim was
     * sent may have extended the lease (the heartbeat contract: every live
     * lease of the incarnation; its event names no job, and a statement's
     * rows each read their own clock_timestamp()): the lease's end is
     * unknown (decision 961).  Another incarnation's heartbeat is no
     * excuse: it must not touch this lease. */
    if (x->lease >= 0) {
        const qc_event *cl0 = &h->ev[x->lease];
        int64_t csent = sent_seq(h, cl0);
        for (size_t j = 0; j < nhb; j++) {
            const qc_event *e = &h->ev[hb[j]];
            if (e->file != f->file || e->worker != cl0->worker || e->inc != cl0->inc ||
                sent_seq(h, e) <= csent)
                continue;
            if (e->type == QC_EV_INFO || (e->type == QC_EV_OK && e->rows > 0)) {
                x->anchor = -1;
                break;
            }
        }
    }
    /* Anything that touched the job after the abandoned claim was answered
     * ends the window, also when it was logged before the fault: a starved
     * worker logs its fault late, after the job was recovered and done. */
    size_t from = k + 1;
    const qc_event *cl = x->lease >= 0 ? &h->ev[x->lease] : NULL;
    if (cl != NULL) {
        /* from the claim's SEND on: a claim answered late may have run long
         * before its answer, and the job been reaped, claimed and done
         * meanwhile */
        const qc_event *cinv = qc__invoke_of(h, cl);
        int64_t after = cinv != NULL ? cinv->seq : cl->seq;
        for (from = 0; from < n && h->ev[r[from].ev].seq <= after; from++)
            ;
    }
    for (size_t j = 0; j < n; j++) {
        const qc_event *e = &h->ev[r[j].ev];
        if (e->file == f->file || !(is_reap_of(e) || (is_job_request(e) && e->type != QC_EV_FAULT)))
            continue;
        /* provably earlier: it read the server's clock before the abandoned
         * claim did (the claim's "now" was read after its invoke) */
        if (cl != NULL && qc__has_time(cl->now) && qc__has_time(e->now) &&
            e->now + res + CLOCK_SLACK_MS < cl->now)
            continue;
        x->elsewhere = 1;
        break;
    }
    for (size_t j = from; j < n; j++) {
        const qc_event *e = &h->ev[r[j].ev];
        int64_t s;
        if (e->file != f->file || j == k || (cl != NULL && r[j].ev == (size_t)x->lease))
            continue;
        if (is_reap_of(e))
            s = e->seq;
        else if (is_job_request(e) && e->type != QC_EV_FAULT &&
                 !(cl != NULL && e->worker == cl->worker && e->inc == cl->inc && j < k))
            s = sent_seq(h, e);
        else
            continue;
        if (s < x->end_seq)
            x->end_seq = s;
        /* the reap that took THIS lease back to ready (its token, when
         * both are known) */
        if (is_reap_of(e) && x->reap_ready < 0 && j > k &&
            (qc_s(e->state) == NULL || strcmp(qc_s(e->state), "ready") == 0) &&
            (qc_s(e->token) == NULL || cl == NULL || qc_s(cl->token) == NULL ||
             strcmp(qc_s(e->token), qc_s(cl->token)) == 0))
            x->reap_ready = (long)r[j].ev;
    }
    /* The job's next claim after that reap: any claim answered after the
     * reap was sent may have run after it (its answer may be late). */
    if (x->reap_ready >= 0) {
        const qc_event *rinv = qc__invoke_of(h, &h->ev[x->reap_ready]);
        int64_t rs = rinv != NULL ? rinv->seq : h->ev[x->reap_ready].seq;
        for (size_t j = from; j < n; j++) {
            const qc_event *e = &h->ev[r[j].ev];
            if (qc__is_claim(e) && e->file == f->file && e->seq > rs &&
                sent_seq(h, e) < x->next_claim_sent)
                x->next_claim_sent = sent_seq(h, e);
        }
    }
}

/* Finds the recovery of every abandoning fault.  *out is a new array (free
 * it) of *n records in the faults' seq order.  Returns 0 or QC_ENOMEM. */
static int recovery_scan(const qc_history *h, rec **out, size_t *n)
{
    qc__snapshot snap;
    qc__jobref *r = NULL;
    rec *rs = NULL;
    size_t nr = 0, nf = 0, nhb = 0, *hb = NULL;
    int rc;
    double res = qc__clock_resolution(h);

    *out = NULL;
    *n = 0;
    if ((rc = qc__snapshot_build(h, &snap)) != 0)
        return rc;
    r = malloc((h->n + 1) * sizeof *r);
    hb = malloc((h->n + 1) * sizeof *hb);
    if (r == NULL || hb == NULL) {
        rc = QC_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        int64_t job;
        if (e->op == QC_OP_HEARTBEAT && (e->type == QC_EV_OK || e->type == QC_EV_INFO))
            hb[nhb++] = i;
        if (is_abandoning(h, e)) {
            r[nr++] = (qc__jobref){e->job, i};
            nf++;
        } else if (qc__is_claim(e) || is_reap_of(e)) {
            r[nr++] = (qc__jobref){e->job, i};
        } else if (e->type != QC_EV_FAULT && is_job_request(e) &&
                   (job = qc__event_job(h, e)) != QC_NO_JOB) {
            r[nr++] = (qc__jobref){job, i};
        }
    }
    if (nf == 0)
        goto out;
    if ((rs = malloc(nf * sizeof *rs)) == NULL) {
        rc = QC_ENOMEM;
        goto out;
    }
    qc__jobrefs_sort(r, nr);
    nf = 0;
    for (size_t a = 0, b; a < nr; a = b) {
        for (b = a; b < nr && r[b].job == r[a].job; b++)
            ;
        for (size_t k = a; k < b; k++) {
            const qc_event *f = &h->ev[r[k].ev], *row;
            rec *x;
            if (!is_abandoning(h, f))
                continue;
            x = &rs[nf++];
            x->fault = r[k].ev;
            x->by = -1;
            x->snap = -1;
            x->ms = QC_NO_TIME;
            find_window(h, r + a, b - a, k - a, x, res, hb, nhb);
            for (size_t j = k + 1; j < b; j++) {
                if (recovers(h, f, &h->ev[r[j].ev])) {
                    x->by = (long)r[j].ev;
                    break;
                }
            }
            row = qc__snapshot_find(h, &snap, f->job);
            if (row != NULL)
                x->snap = (long)(row - h->ev);
            if (x->by >= 0) {
                const qc_event *y = &h->ev[x->by];
                x->kind = qc__has_time(f->t) && qc__has_time(y->t) ? REC_TIMED : REC_UNTIMED;
                if (x->kind == REC_TIMED)
                    x->ms = y->t - f->t;
            } else if (row == NULL) {
                x->kind = REC_UNKNOWN;
            } else {
                x->kind = is_final(qc_s(row->state)) ? REC_UNSEEN : REC_NEVER;
            }
        }
    }
    if (nf > 1)
        qsort(rs, nf, sizeof *rs, cmp_rec);
    *out = rs;
    *n = nf;
    rs = NULL;
out:
    free(r);
    free(hb);
    free(rs);
    qc__snapshot_fini(&snap);
    return rc;
}

size_t qc_recovery_times(const qc_history *h, double *out_ms, size_t max)
{
    rec *rs;
    size_t n, k = 0;

    if (recovery_scan(h, &rs, &n) != 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (rs[i].kind != REC_TIMED)
            continue;
        if (k < max && out_ms != NULL)
            out_ms[k] = rs[i].ms;
        k++;
    }
    free(rs);
    return k;
}

size_t qc_recovery_faults(const qc_history *h)
{
    rec *rs;
    size_t n;

    if (recovery_scan(h, &rs, &n) != 0)
        return 0;
    free(rs);
    return n;
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;

    return a < b ? -1 : a > b;
}

/* Nearest-rank percentile of sorted v[0..n), n > 0. */
static double percentile(const double *v, size_t n, double p)
{
    size_t rank = (size_t)ceil(p * (double)n);

    return v[rank > 0 ? rank - 1 : 0];
}

/* One reap pass: its invoke, the seq of its last answer line, whether every
 * row it returned is named, and the jobs it returned (in pass_jobs). */
typedef struct reap_pass {
    size_t inv;
    int64_t ok_seq;
    int named;
    size_t first, njobs;
} reap_pass;

/* The passes of the reaper (worker -1, op reap) that were answered, in
 * invoke seq order.  Returns 0 or QC_ENOMEM. */
static int collect_passes(const qc_history *h, reap_pass **out, size_t *np, int64_t **jobs)
{
    reap_pass *p = NULL;
    int64_t *jb = NULL;
    long *slot = NULL;
    size_t n = 0, cap = 0, nj = 0, capj = 0;
    int rc = 0;

    *out = NULL;
    *np = 0;
    *jobs = NULL;
    if ((slot = malloc((h->n + 1) * sizeof *slot)) == NULL)
        return QC_ENOMEM;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        slot[i] = -1;
        if (e->type == QC_EV_INVOKE && e->op == QC_OP_REAP) {
            if (qc__grow((void **)&p, &cap, n + 1, sizeof *p) != 0) {
                rc = QC_ENOMEM;
                goto out;
            }
            slot[i] = (long)n;
            p[n++] = (reap_pass){i, -1, 1, 0, 0};
        }
    }
    /* Answers: jobs are appended per pass in order; a pass's lines come
     * after its invoke and before its next, so count, then fill. */
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type != QC_EV_OK || e->op != QC_OP_REAP || e->invoke < 0 ||
            slot[e->invoke] < 0)
            continue;
        reap_pass *x = &p[slot[e->invoke]];
        if (e->seq > x->ok_seq)
            x->ok_seq = e->seq;
        if (e->job == QC_NO_JOB && e->rows != 0)
            x->named = 0; /* a count without the jobs */
        x->njobs += e->job != QC_NO_JOB;
    }
    for (size_t k = 0; k < n; k++) {
        p[k].first = nj;
        nj += p[k].njobs;
        p[k].njobs = 0;
    }
    if (nj > 0 && qc__grow((void **)&jb, &capj, nj, sizeof *jb) != 0) {
        rc = QC_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type != QC_EV_OK || e->op != QC_OP_REAP || e->invoke < 0 ||
            slot[e->invoke] < 0 || e->job == QC_NO_JOB)
            continue;
        reap_pass *x = &p[slot[e->invoke]];
        jb[x->first + x->njobs++] = e->job;
    }
    *out = p;
    *np = n;
    *jobs = jb;
    p = NULL;
    jb = NULL;
out:
    free(slot);
    free(p);
    free(jb);
    return rc;
}

static int pass_has(const reap_pass *p, const int64_t *jobs, int64_t job)
{
    for (size_t k = 0; k < p->njobs; k++)
        if (jobs[p->first + k] == job)
            return 1;
    return 0;
}

static void report_never(qc_check *c, const qc_history *h, const rec *x)
{
    const qc_event *f = &h->ev[x->fault];
    const qc_event *row = &h->ev[x->snap];
    int64_t seqs[] = {f->seq, row->seq};

    qc__check_violation(c, f->job, seqs, 2,
                        "job %lld: %s at seq %lld was never recovered (no later claim%s) and the "
                        "job is %s in the final snapshot (seq %lld)",
                        (long long)f->job, qc_x(f->x)->fault, (long long)f->seq,
                        is_stall(f) ? ", reap or complete by another token" : " or reap",
                        qc_s(row->state) != NULL ? qc_s(row->state) : "without a state", (long long)row->seq);
}

/* Client time (ms) after which the abandoned lease of x had provably
 * expired, the slack included; QC_NO_TIME when unknown. */
static double expired_after(const qc_history *h, const rec *x, double res, double slack,
                            double at)
{
    const qc_event *a;

    if (x->anchor < 0 || !qc__has_time(x->until))
        return QC_NO_TIME;
    a = &h->ev[x->anchor];
    if (!qc__has_time(a->t))
        return QC_NO_TIME;
    return a->t + (x->until - a->now) + slack + CLOCK_SLACK_MS + res +
           (at > a->t ? CLOCK_DRIFT * (at - a->t) : 0);
}

/* Rules (1) and (2) for one fault: the first reap pass or empty claim that
 * ran after the expiry and did not give the job back. */
static void judge_window(qc_check *c, const qc_history *h, const rec *x, const reap_pass *p,
                         size_t np, const int64_t *pjobs, double res, double slack, long *judged)
{
    const qc_event *f = &h->ev[x->fault], *cl;
    int grouped;

    if (x->lease < 0 || x->elsewhere)
        return;
    cl = &h->ev[x->lease];
    grouped = qc_s(cl->group) != NULL;
    /* (1) reap passes */
    for (size_t k = 0; k < np; k++) {
        const qc_event *inv = &h->ev[p[k].inv];
        double after;
        int has;
        if (inv->file != f->file || inv->seq < f->seq || p[k].ok_seq < 0)
            continue;
        has = pass_has(&p[k], pjobs, f->job);
        if (!has && p[k].ok_seq >= x->end_seq)
            break; /* something else touched the job first */
        after = expired_after(h, x, res, slack, inv->t);
        if (!qc__has_time(after) || !qc__has_time(inv->t) || inv->t <= after || !p[k].named) {
            if (has)
                return; /* given back (early reaps are no_early_reap's) */
            continue;
        }
        if (has) {
            (*judged)++;
            return;
        }
        if (p[k].njobs > 0)
            continue; /* it returned other jobs: a reaper may take a bounded batch per pass
                         (decision 967); only a pass that found nothing is a refusal */
        (*judged)++;
        int64_t seqs[] = {cl->seq, f->seq, inv->seq, p[k].ok_seq};
        qc__check_violation(c, f->job, seqs, 4,
                            "job %lld: %s at seq %lld abandoned its lease (until +%.0f ms of the "
                            "claim); the reap pass sent at seq %lld, %.0f ms after the lease had "
                            "expired and the %.0f ms slack passed, returned %zu jobs but not this "
                            "one",
                            (long long)f->job, qc_x(f->x)->fault, (long long)f->seq, x->until - cl->now,
                            (long long)inv->seq, inv->t - after + slack, slack, p[k].njobs);
        return;
    }
    if (grouped)
        return;
    /* (2) empty claims: before any reap only when the ledger has no
     * reaper (the claim must take expired leases), else after the reap
     * that returned the job to ready */
    const qc_event *rr = x->reap_ready >= 0 ? &h->ev[x->reap_ready] : NULL;
    if (np > 0 && rr == NULL)
        return;
    for (size_t i = x->fault + 1; i < h->n; i++) {
        const qc_event *e = &h->ev[i], *inv;
        double after;
        if (e->type != QC_EV_OK || e->op != QC_OP_CLAIM || e->rows != 0 || e->worker < 0 ||
            e->file != f->file)
            continue;
        if ((inv = qc__invoke_of(h, e)) == NULL || !qc__has_time(inv->t))
            continue;
        if (rr != NULL) {
            if (inv->seq <= rr->seq || !qc__has_time(rr->t))
                continue;
            if (e->seq >= x->next_claim_sent)
                break;
            after = rr->t + slack;
        } else {
            if (e->seq >= x->end_seq)
                break;
            after = expired_after(h, x, res, slack, inv->t);
            if (!qc__has_time(after))
                return;
        }
        if (inv->t <= after)
            continue;
        (*judged)++;
        int64_t seqs[] = {cl->seq, f->seq, rr != NULL ? rr->seq : f->seq, inv->seq, e->seq};
        qc__check_violation(c, f->job, seqs, 5,
                            "job %lld: %s at seq %lld abandoned its lease; %s, a claim by worker "
                            "%d sent at seq %lld (%.0f ms after that and the %.0f ms slack) found "
                            "nothing",
                            (long long)f->job, qc_x(f->x)->fault, (long long)f->seq,
                            rr != NULL ? "it was reaped to ready" : "it had expired", e->worker,
                            (long long)inv->seq, inv->t - after + slack, slack);
        return;
    }
}

/* Jobs in flight when the primary was switched (the switch_snapshot rows
 * with state inflight, check_jobs.c): their leases belong to sessions that
 * died with the old primary, or were never heard of by the new one.  Each
 * is an opportunity: it is taken up again at the first event after the
 * switch snapshot's marker that is an OK claim or reap of it, or an
 * acknowledged complete (its owner reconnected and finished); the time
 * from the marker (client ms) is reported.  None, and the job is neither
 * done nor dead in the final snapshot: stuck in flight on the new primary,
 * a violation (rule (3); not judged when the run was stopped or the drain
 * cut short).  Returns 0 or QC_ENOMEM; fills *nsw (opportunities), *ntaken
 * and the median / max recovery ms (QC_NO_TIME when none was timed). */
static int judge_switch(const qc_history *h, qc_check *out, size_t *nsw, size_t *ntaken,
                        size_t *nstuck, double *med, double *max)
{
    const qc_event *marker = NULL;
    qc__jobref *r = NULL;
    long *by = NULL;
    double *ms = NULL;
    size_t n = 0, nt = 0;
    qc__snapshot snap;
    int rc;

    *nsw = *ntaken = *nstuck = 0;
    *med = *max = QC_NO_TIME;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type != QC_EV_SWITCH_SNAPSHOT)
            continue;
        if (marker == NULL || e->seq < marker->seq)
            marker = e;
        if (e->job != QC_NO_JOB && qc_s(e->state) != NULL && !strcmp(qc_s(e->state), "inflight"))
            n++;
    }
    if (n == 0)
        return 0;
    if ((rc = qc__snapshot_build(h, &snap)) != 0)
        return rc;
    r = malloc(n * sizeof *r);
    by = malloc(n * sizeof *by);
    ms = malloc(n * sizeof *ms);
    if (r == NULL || by == NULL || ms == NULL) {
        rc = QC_ENOMEM;
        goto out;
    }
    n = 0;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type == QC_EV_SWITCH_SNAPSHOT && e->job != QC_NO_JOB && qc_s(e->state) != NULL &&
            !strcmp(qc_s(e->state), "inflight"))
            r[n++] = (qc__jobref){e->job, i};
    }
    qc__jobrefs_sort(r, n);
    for (size_t k = 0; k < n; k++)
        by[k] = -1;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        int64_t job;
        if (e->seq <= marker->seq || !(qc__is_claim(e) || is_reap_of(e) || is_acked_complete(e)))
            continue;
        if ((job = qc__event_job(h, e)) == QC_NO_JOB)
            continue;
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (r[mid].job < job)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < n && r[lo].job == job && by[lo] < 0)
            by[lo] = (long)i;
    }
    for (size_t k = 0; k < n; k++) {
        const qc_event *row = &h->ev[r[k].ev];
        out->opportunities++;
        if (by[k] >= 0) {
            const qc_event *y = &h->ev[by[k]];
            (*ntaken)++;
            if (qc__has_time(y->t) && qc__has_time(marker->t))
                ms[nt++] = y->t - marker->t;
            continue;
        }
        const qc_event *fin = qc__snapshot_find(h, &snap, row->job);
        if (fin == NULL || is_final(qc_s(fin->state)))
            continue;
        (*nstuck)++;
        if (qc__run_interrupted(h) || qc__drain_cut_short(h))
            continue;
        int64_t seqs[] = {row->seq, fin->seq};
        qc__check_violation(out, row->job, seqs, 2,
                            "job %lld was inflight on the replica promoted by the %s (seq %lld) "
                            "and never claimed, reaped or completed again: %s in the final "
                            "snapshot (seq %lld)",
                            (long long)row->job, qc_x(marker->x)->fault ? qc_x(marker->x)->fault : "switch",
                            (long long)row->seq, qc_s(fin->state) ? qc_s(fin->state) : "without a state",
                            (long long)fin->seq);
    }
    *nsw = n;
    if (nt > 0) {
        qsort(ms, nt, sizeof *ms, cmp_double);
        *med = percentile(ms, nt, 0.5);
        *max = ms[nt - 1];
    }
    rc = 0;
out:
    free(r);
    free(by);
    free(ms);
    qc__snapshot_fini(&snap);
    return rc;
}

int qc_check_recovery(const qc_history *h, qc_check *out)
{
    const qc_run_info *in = &h->info;
    double slack = in->recovery_slack_ms > 0 ? (double)in->recovery_slack_ms : 0;
    double res = qc__clock_resolution(h);
    size_t n, nt = 0, untimed = 0, never = 0, unknown = 0, np = 0, within_lease = 0;
    long judged = 0;
    double *ms = NULL;
    rec *rs = NULL;
    reap_pass *passes = NULL;
    int64_t *pjobs = NULL;
    int rc, len;

    memset(out, 0, sizeof *out);
    out->name = "recovery";
    if ((rc = recovery_scan(h, &rs, &n)) != 0)
        return rc;
    if ((rc = collect_passes(h, &passes, &np, &pjobs)) != 0 ||
        (n > 0 && (ms = malloc(n * sizeof *ms)) == NULL)) {
        free(rs);
        free(passes);
        free(pjobs);
        return rc != 0 ? rc : QC_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const rec *x = &rs[i];
        long judged_before = judged;
        size_t lived_before = within_lease;
        judge_window(out, h, x, passes, np, pjobs, res, slack, &judged);
        switch (x->kind) {
        case REC_TIMED:
            ms[nt++] = x->ms;
            break;
        case REC_UNTIMED:
        case REC_UNSEEN:
            untimed++;
            break;
        case REC_NEVER: {
            /* The bound is the lease the claim recorded (issue 13): a
             * library's 4-hour lock that had not provably run out when the
             * run ended is not a job left unrecovered, whatever lease_ms
             * says. */
            double last_t = QC_NO_TIME; /* the run's end event (none: as before) */
            for (size_t e = h->n; e-- > 0;)
                if (h->ev[e].type == QC_EV_END) {
                    last_t = h->ev[e].t;
                    break;
                }
            double exp = expired_after(h, x, res, slack, last_t);
            never++;
            if (qc__has_time(exp) && qc__has_time(last_t) && last_t < exp)
                within_lease++;
            else if (!qc__run_interrupted(h) && !qc__drain_cut_short(h))
                report_never(out, h, x);
            break;
        }
        case REC_UNKNOWN:
            unknown++;
            break;
        }
        /* an opportunity, unless the job was never recovered within a
         * lease that outlived the run and no reap pass or claim was
         * judged against it: nothing could have failed (decision 1142) */
        if (within_lease == lived_before || judged > judged_before)
            out->opportunities++;
    }
    if (nt > 0) {
        qsort(ms, nt, sizeof *ms, cmp_double);
        len = snprintf(out->summary, sizeof out->summary,
                       "%zu faults: %zu claimable again in min %.0f / median %.0f / p95 %.0f / "
                       "max %.0f ms",
                       n, nt, ms[0], percentile(ms, nt, 0.5), percentile(ms, nt, 0.95), ms[nt - 1]);
    } else {
        len =
            snprintf(out->summary, sizeof out->summary, "%zu faults: no recovery time measured", n);
    }
    char lived[96] = "";
    if (within_lease > 0)
        snprintf(lived, sizeof lived, " (%zu of them within a lease that outlived the run)",
                 within_lease);
    if (len > 0 && (size_t)len < sizeof out->summary)
        snprintf(out->summary + len, sizeof out->summary - (size_t)len,
                 ", %zu at an unknown time, %zu never%s, %zu not in a snapshot; %ld reap passes "
                 "and claims judged after a lease expired (slack %.0f ms)",
                 untimed, never, lived, unknown, judged, slack);
    size_t nsw, ntaken, nstuck;
    double sw_med, sw_max;
    if ((rc = judge_switch(h, out, &nsw, &ntaken, &nstuck, &sw_med, &sw_max)) != 0) {
        free(ms);
        free(rs);
        free(passes);
        free(pjobs);
        return rc;
    }
    len = (int)strlen(out->summary);
    if (nsw > 0 && (size_t)len < sizeof out->summary) {
        if (qc__has_time(sw_med))
            snprintf(out->summary + len, sizeof out->summary - (size_t)len,
                     "; %zu jobs in flight at the switch of the primary: %zu taken up again "
                     "(median %.0f / max %.0f ms after it), %zu stuck",
                     nsw, ntaken, sw_med, sw_max, nstuck);
        else
            snprintf(out->summary + len, sizeof out->summary - (size_t)len,
                     "; %zu jobs in flight at the switch of the primary: %zu taken up again, %zu "
                     "stuck",
                     nsw, ntaken, nstuck);
    }
    free(ms);
    free(rs);
    free(passes);
    free(pjobs);
    qc__check_finish(out);
    if (out->verdict == QC_PASS && qc__run_interrupted(h)) {
        out->verdict = QC_INCONCLUSIVE;
        snprintf(out->summary, sizeof out->summary,
                 "run interrupted before the drain: not judged to the end");
    }
    return 0;
}

/* ---- bounded_failure -------------------------------------------------- */

static int is_poison(const qc_event *e)
{
    return e->type == QC_EV_FAULT && e->job != QC_NO_JOB && qc_x(e->x)->fault != NULL &&
           strcmp(qc_x(e->x)->fault, "poison") == 0;
}

typedef struct poison_tally {
    long over, not_dead, no_error, unjudged_error;
    long early;        /* dead after fewer claims than max_attempts (decision 1113) */
    int claim_unknown; /* some claim of the run got no answer or an unknown one */
    long unfinished; /* not dead with attempts left (or inflight) when the drain timed out */
} poison_tally;

/* 1 when the run's end event says the drain timed out. */
static int drain_timed_out(const qc_history *h)
{
    for (size_t i = h->n; i-- > 0;)
        if (h->ev[i].type == QC_EV_END)
            return qc_x(h->ev[i].x)->timed_out == 1;
    return 0;
}

/* Judges one poison job: its events r[0..n) (faults and claims, seq order),
 * the first poison fault f and its final snapshot row (NULL: none). */
static void judge_poison(qc_check *c, const qc_history *h, const qc__jobref *r, size_t n,
                         const qc_event *f, const qc_event *row, int snap_taken,
                         poison_tally *t)
{
    long max = h->info.max_attempts, claims = 0;
    int64_t seqs[QC_MAX_EVIDENCE];
    const qc_event *last = NULL;
    char list[120];
    size_t len = 0;
    int ns = 0;

    list[0] = '\0';
    seqs[ns++] = f->seq;
    for (size_t i = 0; i < n; i++) {
        const qc_event *e = &h->ev[r[i].ev];
        if (!qc__is_claim(e))
            continue;
        claims++;
        last = e;
        if (ns < QC_MAX_EVIDENCE)
            seqs[ns++] = e->seq;
        if (len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%lld", claims > 1 ? ", " : "",
                                    (long long)e->seq);
    }
    if (max > 0 || row != NULL)
        c->opportunities++;
    if (max > 0 && claims > max) {
        t->over++;
        qc__check_violation(c, f->job, seqs, ns,
                            "poison job %lld was claimed %ld times, more than max_attempts %ld "
                            "(claims at seq %s%s; poison fault seq %lld)",
                            (long long)f->job, claims, max, list, len >= sizeof list ? ", ..." : "",
                            (long long)f->seq);
    }
    /* No row: the job's state is what the protocol's header "missing"
     * says a deleted job is ("done": finished and deleted, "dead": moved to
     * a dead-letter table), when a snapshot was taken; its error is not
     * known.  Without the header (or without a snapshot) no_lost_jobs
     * judges the missing row, and this checker nothing more. */
    const char *state = row != NULL ? qc_s(row->state) : NULL;
    const char *error = row != NULL ? qc_s(row->error) : NULL;
    int64_t row_seq = row != NULL ? row->seq : f->seq;
    if (row == NULL && (!snap_taken || !h->info.missing[0]))
        return;
    char where[160];
    if (row == NULL) {
        state = h->info.missing;
        c->opportunities += max > 0 ? 0 : 1;
        snprintf(where, sizeof where,
                 "missing from the final snapshot, which the protocol's header 'missing: %s' "
                 "reads as %s",
                 h->info.missing, h->info.missing);
    } else {
        snprintf(where, sizeof where, "%s in the final snapshot (seq %lld)",
                 state != NULL ? state : "without a state", (long long)row->seq);
    }
    /* Dead-lettered early: every claim of the run was answered (none lost:
     * a lost answer may have been a claim of this job), the ledger saw the
     * job claimed fewer than max_attempts times, and it is dead: a failure
     * that was to be retried was not (a fail that counts one attempt too
     * many, a reaper that counts the lost lease on top of the claim). */
    if (max > 0 && claims < max && !t->claim_unknown && state != NULL &&
        !strcmp(state, "dead")) {
        int64_t ev[QC_MAX_EVIDENCE];
        int ne = 0;
        for (int k = 0; k < ns && ne < QC_MAX_EVIDENCE - 1; k++)
            ev[ne++] = seqs[k];
        ev[ne++] = row_seq;
        t->early++;
        qc__check_violation(c, f->job, ev, ne,
                            "poison job %lld is %s%s after %ld "
                            "claims (seq %s), fewer than max_attempts %ld: its failures were not "
                            "retried as often as the queue allows (poison fault seq %lld)",
                            (long long)f->job, where, row == NULL ? "," : "", claims,
                            claims > 0 ? list : "none", max, (long long)f->seq);
    }
    int not_dead = state == NULL || strcmp(state, "dead") != 0;
    if (not_dead && qc__run_interrupted(h)) {
        return; /* stopped before the drain: it may have died later */
    } else if ((state == NULL || strcmp(state, "dead") != 0) &&
               (max <= 0 || claims < max || (state != NULL && !strcmp(state, "inflight"))) &&
               (qc__drain_cut_short(h) || drain_timed_out(h))) {
        /* the drain timed out (a loaded machine, a library's own backoff)
         * with attempts left: not finished, which no_lost_jobs judges; it
         * may have died later */
        t->unfinished++;
        return;
    } else if (state == NULL || strcmp(state, "dead") != 0) {
        int64_t ev[] = {f->seq, last != NULL ? last->seq : f->seq, row_seq};
        t->not_dead++;
        qc__check_violation(c, f->job, ev, 3,
                            "poison job %lld is %s, not dead, after %ld claims (poison fault "
                            "seq %lld)",
                            (long long)f->job, where, claims, (long long)f->seq);
    } else if ((error == NULL || error[0] == '\0') &&
               (row == NULL || qc_run_info_returns(&h->info, "snapshot", "error") == 0)) {
        t->unjudged_error++; /* the protocol's snapshot cannot show an error (or the
                                row is gone) */
    } else if (error == NULL || error[0] == '\0') {
        int64_t ev[] = {f->seq, row_seq};
        t->no_error++;
        qc__check_violation(c, f->job, ev, 2,
                            "poison job %lld is dead in the final snapshot (seq %lld) but its "
                            "error was not kept (%s error)",
                            (long long)f->job, (long long)row_seq,
                            error == NULL ? "no" : "an empty");
    }
}

int qc_check_bounded_failure(const qc_history *h, qc_check *out)
{
    qc__snapshot snap;
    qc__jobref *r = NULL;
    poison_tally t;
    size_t n = 0, jobs = 0;
    char max[48];
    int rc;

    memset(out, 0, sizeof *out);
    memset(&t, 0, sizeof t);
    out->name = "bounded_failure";
    if ((rc = qc__snapshot_build(h, &snap)) != 0)
        return rc;
    if ((r = malloc((h->n + 1) * sizeof *r)) == NULL) {
        qc__snapshot_fini(&snap);
        return QC_ENOMEM;
    }
    long invokes = 0, answers = 0;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (is_poison(e) || qc__is_claim(e))
            r[n++] = (qc__jobref){e->job, i};
        if (e->op == QC_OP_CLAIM && e->type == QC_EV_INVOKE)
            invokes++;
        else if (e->op == QC_OP_CLAIM && (e->type == QC_EV_OK || e->type == QC_EV_FAIL))
            answers++;
        else if (e->op == QC_OP_CLAIM && e->type == QC_EV_INFO)
            t.claim_unknown = 1;
    }
    /* a claim still in flight at the end, or one ledger of several without
     * its invokes: answers the ledger never saw */
    if (answers < invokes)
        t.claim_unknown = 1;
    qc__jobrefs_sort(r, n);
    for (size_t a = 0, b; a < n; a = b) {
        const qc_event *f = NULL;
        for (b = a; b < n && r[b].job == r[a].job; b++)
            if (f == NULL && is_poison(&h->ev[r[b].ev]))
                f = &h->ev[r[b].ev];
        if (f == NULL)
            continue;
        jobs++;
        judge_poison(out, h, r + a, b - a, f, qc__snapshot_find(h, &snap, f->job),
                     snap.nevents > 0, &t);
    }
    free(r);
    if (h->info.max_attempts > 0)
        snprintf(max, sizeof max, "max_attempts %ld", h->info.max_attempts);
    else
        snprintf(max, sizeof max, "max_attempts unknown");
    int len = snprintf(out->summary, sizeof out->summary,
                       "%zu poison jobs (%s%s): %ld claimed too often, %ld dead too early, %ld "
                       "not dead, %ld dead without an error",
                       jobs, max, snap.nevents == 0 ? ", no final snapshot" : "", t.over,
                       t.early, t.not_dead, t.no_error);
    if (t.unfinished > 0 && len > 0 && (size_t)len < sizeof out->summary)
        len += snprintf(out->summary + len, sizeof out->summary - (size_t)len,
                        ", %ld not dead yet with attempts left when the drain timed out",
                        t.unfinished);
    if (t.unjudged_error > 0 && len > 0 && (size_t)len < sizeof out->summary)
        snprintf(out->summary + len, sizeof out->summary - (size_t)len,
                 "; the error rule NOT JUDGED for %ld dead jobs: the protocol's snapshot returns "
                 "no 'error' column (or deletes dead jobs: header 'missing: dead')",
                 t.unjudged_error);
    len = (int)strlen(out->summary);
    if (t.unfinished > 0 && (size_t)len < sizeof out->summary)
        snprintf(out->summary + len, sizeof out->summary - (size_t)len,
                 "; %ld not dead with attempts left NOT JUDGED: the drain timed out while jobs "
                 "were still finishing",
                 t.unfinished);
    qc__snapshot_fini(&snap);
    qc__check_finish(out);
    if (out->verdict == QC_PASS && qc__run_interrupted(h)) {
        out->verdict = QC_INCONCLUSIVE;
        snprintf(out->summary, sizeof out->summary,
                 "run interrupted before the drain: not judged to the end");
    } else if (out->verdict == QC_PASS && t.unfinished > 0) {
        out->verdict = QC_INCONCLUSIVE;
        snprintf(out->summary, sizeof out->summary,
                 "the drain timed out while jobs were still finishing (the queue was making "
                 "progress): %ld poison jobs with attempts left not judged; give [drain] "
                 "timeout_s more time",
                 t.unfinished);
    }
    return 0;
}
