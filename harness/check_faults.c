/*
 * check_faults.c - the checkers of what a protocol must refuse or bound
 * while faults strike (DESIGN.md "Checkers"):
 *   stale_token_rejected  a superseded token is never accepted again;
 *   no_false_success      a complete that changed no row is not counted;
 *   effects_once          at most one applied effect per job;
 *   batch_bound           a claim returns at most "batch" jobs.
 * It also holds the small helpers the fault checkers share (token text,
 * a completion's invoke).
 *
 * Invariants (those of checkers.c, restated where they bite):
 *   - every grouping is a sort by (job, event index), events are read in
 *     seq order: the same ledger always gives the same verdict and messages;
 *   - no false alarm: a request is judged only when its invoke is in the
 *     ledger (its send time in seq order is known); a token whose origin
 *     (the claim or renew that produced it) precedes no invoke in the ledger
 *     is not judged; "applied" absent counts as not applied; a claim whose
 *     request cannot be told apart (no req and no invoke) is not grouped;
 *   - stale_token_rejected judges supersession by claims, never by token
 *     strings alone (its rule and innocent explanations are written above
 *     judge_stale);
 *   - several ledgers (a sharded run): supersession and "sent after" are
 *     judged within one ledger (same_actor and the seq tests carry the
 *     file); effects_once counts an idempotent sink's applied effect once
 *     per op key over all ledgers (each process had its own sink in front
 *     of one destination: applied_elsewhere).
 *
 * Cost: one sort of the relevant events, O(n log n); per job the scans are
 * linear in the job's events per request.
 */
#include "checkers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared by the fault checkers ------------------------------------- */

void qc__token_text(char *buf, size_t n, const char *token)
{
    if (token == NULL)
        snprintf(buf, n, "no token");
    else if (strlen(token) > 8)
        snprintf(buf, n, "token %.8s..", token);
    else
        snprintf(buf, n, "token %s", token);
}

const qc_event *qc__invoke_of(const qc_history *h, const qc_event *e)
{
    if (e->type == QC_EV_INVOKE)
        return e;
    if (e->invoke >= 0 && (size_t)e->invoke < h->n)
        return &h->ev[e->invoke];
    return NULL;
}

/* ---- stale_token_rejected ---------------------------------------------
 *
 * Supersession is a fact about claims, not about token strings (issue 18):
 * a complete, renew or fail R of job J sent by actor A (a worker
 * incarnation) is stale when
 *   (i)  another actor's OK claim S of J was SENT after A's own claim O of
 *        J was answered (so S ran after O) and ANSWERED before R was sent
 *        (so S ran before R): J had changed hands, whatever tokens say (a
 *        protocol whose tokens derive from the job hands S the same token
 *        as O: it is still stale); or
 *   (ii) R carries a token of O's lease that an OK renew of A, answered
 *        before R was sent, had rotated into another one; or
 *   (iv) (the lease model) an OK complete of J with R's token, answered
 *        with rows > 0 before R was sent, had finished the lease: the job
 *        is done and the token holds nothing any more (a heartbeat renew
 *        whose timer fired as the handler returned, fault late_renew;
 *        decision 1109).  A renew that then reports a lease, or a second
 *        complete that changes rows, was accepted on a done job.  A
 *        complete whose answer the worker never saw (a lost ack: an info)
 *        does not count, its retry is double_complete's; in the
 *        transaction model a complete's answer precedes its COMMIT, so
 *        it proves nothing there; or
 *   (iii) (several ledgers: a sharded run) an OK claim S of J in another
 *        ledger than R's ran after O committed and R ran after S committed,
 *        both by server time: S's "now" above O's "now" + O's own duration
 *        (its client ms from invoke to answer, +0.1%) + the clock resolution
 *        + 1 ms, and a lower bound of R's server time above the same bound
 *        of S (R's "now", or O's "now" + (R's send - O's answer) x 0.999
 *        on A's client clock - the resolution - 1 ms).  Seqs of two
 *        ledgers order nothing, so (i) never pairs them.
 * O is A's latest OK claim of J answered before R was sent; when A never
 * claimed J (a token handed on), the latest OK claim returning R's token.
 * A stale R answered OK is an opportunity; answered with rows > 0 it is a
 * violation.
 *
 * Innocent explanations, and why they cannot raise this alarm:
 *   - a starved client: S's answer may be logged long after S ran, and S
 *     may even have run before O (then O's lease is the newer one).  S is
 *     judged only when it was sent after O's answer arrived, and R only
 *     when it was sent after S's answer arrived; a late answer only makes
 *     fewer requests judged;
 *   - a paused server: it delays, never reorders, what was sent after an
 *     answer arrived;
 *   - coarse or early server clocks: no server time is used;
 *   - a reordered ledger file: seq is taken at append time (invoke before
 *     the send, answer after its arrival) and the reader sorts by seq;
 *     events of different ledgers (harness processes) are never compared;
 *   - A claiming J again after S: then that claim is O, and S precedes it;
 *   - a request without an invoke in the ledger, or a claim without one
 *     (its send time is unknown), is never used as proof.
 *
 * Cost: one sort of the relevant events by job, O(n log n); per request a
 * scan of its job's earlier events. */

/* An OK renew that replaced its token with another one. */
static int is_rotation(const qc_history *h, const qc_event *e)
{
    const char *from;

    if (e->type != QC_EV_OK || e->op != QC_OP_RENEW || qc_s(e->new_token) == NULL)
        return 0;
    from = qc__event_token(h, e);
    return from != NULL && strcmp(from, qc_s(e->new_token)) != 0;
}

/* An answered complete / renew / fail whose invoke is known. */
static int is_token_request(const qc_history *h, const qc_event *e)
{
    if (e->type != QC_EV_OK)
        return 0;
    if (e->op != QC_OP_COMPLETE && e->op != QC_OP_RENEW && e->op != QC_OP_FAIL)
        return 0;
    return qc__invoke_of(h, e) != NULL;
}

static int same_actor(const qc_event *a, const qc_event *b)
{
    return a->file == b->file && a->worker == b->worker && a->inc == b->inc;
}

static int str_eq(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static void report_stale(qc_check *c, const qc_history *h, int64_t job, const qc_event *origin,
                         const qc_event *sup, const qc_event *inv, const qc_event *e)
{
    const qc_event *sinv = qc__invoke_of(h, sup);
    int64_t seqs[5];
    int ns = 0;
    char tok[32], by[96];

    seqs[ns++] = origin->seq;
    if (sup->op == QC_OP_CLAIM && sinv != NULL)
        seqs[ns++] = sinv->seq;
    seqs[ns++] = sup->seq;
    seqs[ns++] = inv->seq;
    seqs[ns++] = e->seq;
    qc__token_text(tok, sizeof tok, qc__event_token(h, e));
    if (sup->op == QC_OP_CLAIM)
        snprintf(by, sizeof by, "claim by worker %d%s, sent seq %lld", sup->worker,
                 sup->worker == origin->worker ? " (another incarnation)" : "",
                 sinv != NULL ? (long long)sinv->seq : -1LL);
    else if (sup->op == QC_OP_COMPLETE)
        snprintf(by, sizeof by, "complete by worker %d answered rows %ld: the job was done",
                 sup->worker, (long)sup->rows);
    else
        snprintf(by, sizeof by, "renew that rotated it");
    qc__check_violation(c, job, seqs, ns,
                        "job %lld: %s by worker %d with %s (from %s seq %lld), superseded at seq "
                        "%lld (%s), was accepted with rows %ld (invoked seq %lld, answered seq "
                        "%lld)",
                        (long long)job, qc_op_name(e->op), e->worker, tok, qc_op_name(origin->op),
                        (long long)origin->seq, (long long)sup->seq, by, (long)e->rows,
                        (long long)inv->seq, (long long)e->seq);
}

/* Server-time upper bound (ms) of when claim x committed: its "now" (read
 * after it was sent) plus its own duration on its client clock (invoke to
 * answer, with 0.1% drift) and the clock resolution; QC_NO_TIME unknown. */
static double committed_by(const qc_history *h, const qc_event *x, double res)
{
    const qc_event *xi = qc__invoke_of(h, x);
    if (!qc__has_time(x->now) || xi == NULL || !qc__has_time(xi->t) || !qc__has_time(x->t) ||
        x->t < xi->t)
        return QC_NO_TIME;
    return x->now + (x->t - xi->t) * 1.001 + res + 1.0;
}

/* (iii) Several ledgers (a sharded run): a claim of the job in another
 * ledger supersedes O when it provably ran after O committed and the
 * request provably ran after it committed, both by server time: its "now"
 * later than O's commit bound, and a lower bound of the request's server
 * time later than its commit bound.  That lower bound is the request's own
 * "now" (read in its transaction, before its update), or O's "now" carried
 * to the request's send on the sender's client clock: O's answer came
 * after O read "now", and the server's clock ran at least (send - answer)
 * x 0.999 since (a rejected request returns no row, so no "now").  Seqs of
 * two ledgers are never compared. */
static const qc_event *superseded_elsewhere(const qc_history *h, const qc__jobref *r, size_t a,
                                            size_t b, const qc_event *origin, const qc_event *inv,
                                            const qc_event *e, double res)
{
    double o_by = committed_by(h, origin, res), lo = QC_NO_TIME;
    if (qc__has_time(e->now))
        lo = e->now;
    if (qc__has_time(origin->now) && qc__has_time(origin->t) && inv != NULL &&
        inv->file == origin->file && qc__has_time(inv->t) && inv->t > origin->t) {
        double carried = origin->now + (inv->t - origin->t) * 0.999 - res - 1.0;
        if (!qc__has_time(lo) || carried > lo)
            lo = carried;
    }
    if (!qc__has_time(o_by) || !qc__has_time(lo))
        return NULL;
    for (size_t j = a; j < b; j++) {
        const qc_event *x = &h->ev[r[j].ev];
        if (!qc__is_claim(x) || x->file == e->file || !qc__has_time(x->now) || x->now <= o_by)
            continue;
        double x_by = committed_by(h, x, res);
        if (qc__has_time(x_by) && lo > x_by)
            return x;
    }
    return NULL;
}

/* Judges the request r[k] against the job's events r[a..k) of its own
 * ledger, and (iii) against the claims of r[a..b) in other ledgers. */
static void judge_stale(qc_check *c, const qc_history *h, const qc__jobref *r, size_t a, size_t k,
                        size_t b, double res)
{
    const qc_event *e = &h->ev[r[k].ev], *inv = qc__invoke_of(h, e), *origin = NULL;
    const qc_event *sup = NULL;
    const char *t = qc__event_token(h, e), *cur;
    size_t o = k;
    int lease_model = strcmp(h->info.model, "transaction") != 0;

    /* O: the sender's own latest claim answered before the send, else the
     * latest claim that returned the request's token. */
    for (size_t j = k; j-- > a && origin == NULL;) {
        const qc_event *x = &h->ev[r[j].ev];
        if (qc__is_claim(x) && x->file == e->file && x->seq < inv->seq && same_actor(x, e)) {
            origin = x;
            o = j;
        }
    }
    for (size_t j = k; j-- > a && origin == NULL && t != NULL;) {
        const qc_event *x = &h->ev[r[j].ev];
        if (qc__is_claim(x) && x->file == e->file && x->seq < inv->seq && str_eq(qc_s(x->token), t)) {
            origin = x;
            o = j;
        }
    }
    if (origin == NULL)
        return; /* nothing in the ledger gave the sender this job */
    cur = qc_s(origin->token);
    for (size_t j = o + 1; j < k && sup == NULL; j++) {
        const qc_event *x = &h->ev[r[j].ev], *xi;
        if (x->file != e->file || x->seq >= inv->seq)
            continue;
        if (qc__is_claim(x)) {
            /* (i) another actor's claim sent after O's answer */
            xi = qc__invoke_of(h, x);
            if (!same_actor(x, origin) && xi != NULL && xi->seq > origin->seq)
                sup = x;
        } else if (lease_model && x->op == QC_OP_COMPLETE && x->type == QC_EV_OK && x->rows > 0 &&
                   (t != NULL ? str_eq(qc__event_token(h, x), t) : same_actor(x, origin))) {
            /* (iv) the lease was finished by an acknowledged complete */
            sup = x;
        } else if (is_rotation(h, x) && same_actor(x, origin) &&
                   str_eq(qc__event_token(h, x), cur)) {
            /* (ii) the lease's token rotated: a request with an earlier
             * token of it is stale */
            cur = qc_s(x->new_token);
            if (t != NULL && strcmp(t, cur) != 0 &&
                (str_eq(t, qc_s(origin->token)) || str_eq(t, qc__event_token(h, x))))
                sup = x;
        }
    }
    if (sup == NULL)
        sup = superseded_elsewhere(h, r, a, b, origin, inv, e, res);
    if (sup == NULL)
        return;
    c->opportunities++;
    if (e->rows > 0)
        report_stale(c, h, r[a].job, origin, sup, inv, e);
}

int qc_check_stale_token_rejected(const qc_history *h, qc_check *out)
{
    qc__jobref *r;
    size_t n = 0;

    memset(out, 0, sizeof *out);
    out->name = "stale_token_rejected";
    double res = qc__clock_resolution(h);
    if ((r = malloc((h->n + 1) * sizeof *r)) == NULL)
        return QC_ENOMEM;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        int64_t job = qc__event_job(h, e);
        if (job == QC_NO_JOB)
            continue;
        if (qc__is_claim(e) || is_rotation(h, e) || is_token_request(h, e))
            r[n++] = (qc__jobref){job, i};
    }
    qc__jobrefs_sort(r, n);
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a; b < n && r[b].job == r[a].job; b++)
            ;
        for (size_t k = a; k < b; k++)
            if (is_token_request(h, &h->ev[r[k].ev]))
                judge_stale(out, h, r, a, k, b, res);
    }
    free(r);
    snprintf(out->summary, sizeof out->summary,
             "%ld requests sent after their job changed hands (or with a rotated token, or after "
             "their job's complete was acknowledged) answered, "
             "%ld accepted with rows > 0",
             out->opportunities, out->nviolations);
    qc__check_finish(out);
    return 0;
}

/* ---- no_false_success -------------------------------------------------
 *
 * The worker's own bookkeeping ("counted" on the answer): no time, no
 * order; nothing outside the worker can make it count a 0-row complete. */

int qc_check_no_false_success(const qc_history *h, qc_check *out)
{
    memset(out, 0, sizeof *out);
    out->name = "no_false_success";
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        const qc_event *inv;
        int64_t seqs[2];
        int ns = 0;
        char tok[32];
        if (e->type != QC_EV_OK || e->op != QC_OP_COMPLETE || e->rows != 0 || e->counted < 0)
            continue;
        out->opportunities++;
        if (e->counted == 0)
            continue;
        if ((inv = qc__invoke_of(h, e)) != NULL)
            seqs[ns++] = inv->seq;
        seqs[ns++] = e->seq;
        qc__token_text(tok, sizeof tok, qc__event_token(h, e));
        qc__check_violation(out, qc__event_job(h, e), seqs, ns,
                            "job %lld: complete by worker %d with %s answered rows 0 (seq %lld) "
                            "was counted as a success",
                            (long long)qc__event_job(h, e), e->worker, tok, (long long)e->seq);
    }
    snprintf(out->summary, sizeof out->summary,
             "%ld completes answered rows 0, %ld counted as a success", out->opportunities,
             out->nviolations);
    qc__check_finish(out);
    return 0;
}

/* ---- effects_once ----------------------------------------------------- */

static void report_effects(qc_check *c, const qc_history *h, const qc__jobref *r, size_t n,
                           long applied)
{
    int64_t seqs[QC_MAX_EVIDENCE];
    const char *key0 = NULL;
    char list[160];
    size_t len = 0;
    int ns = 0, changed = 0;

    list[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const qc_event *e = &h->ev[r[i].ev];
        if (!e->applied)
            continue;
        if (ns == 0)
            key0 = qc_s(e->op_key);
        else if ((key0 == NULL) != (qc_s(e->op_key) == NULL) ||
                 (key0 != NULL && strcmp(key0, qc_s(e->op_key)) != 0))
            changed = 1;
        if (ns >= QC_MAX_EVIDENCE)
            continue;
        seqs[ns++] = e->seq;
        if (len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%sseq %lld (op key %.24s)",
                                    ns > 1 ? ", " : "", (long long)e->seq,
                                    qc_s(e->op_key) != NULL ? qc_s(e->op_key) : "none");
    }
    qc__check_violation(c, r[0].job, seqs, ns, "job %lld: effect applied %ld times: %s%s%s",
                        (long long)r[0].job, applied, list,
                        applied > ns || len >= sizeof list ? ", ..." : "",
                        changed ? "; the op key changed between deliveries" : "");
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Jobs at risk of a second execution: hit by a fault, or whose complete /
 * fail outcome is unknown (INFO: a lost connection, a restart).  Sorted. */
static size_t at_risk_jobs(const qc_history *h, int64_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        int risk = (e->type == QC_EV_FAULT && e->job != QC_NO_JOB) ||
                   (e->type == QC_EV_INFO && (e->op == QC_OP_COMPLETE || e->op == QC_OP_FAIL));
        if (risk) {
            int64_t job = qc__event_job(h, e);
            if (job != QC_NO_JOB)
                out[n++] = job;
        }
    }
    qsort(out, n, sizeof *out, cmp_i64);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || out[k - 1] != out[i])
            out[k++] = out[i];
    return k;
}

/* Several ledgers (a sharded run): each process has its own effect sink,
 * so an idempotent sink (header "sink": "idempotent") dropped only the
 * re-deliveries of its own process.  The destination it stands for is one:
 * an applied effect whose op key an effect of another ledger already
 * applied would have been dropped there, so it does not count again.  A
 * plain sink applies everything anyway; an unstable op key (another key)
 * still counts. */
static int applied_elsewhere(const qc_history *h, const qc__jobref *eff, size_t n,
                             const qc_event *e)
{
    if (h->info.sink_plain != 0 || qc_s(e->op_key) == NULL)
        return 0;
    for (size_t k = 0; k < n; k++) {
        const qc_event *x = &h->ev[eff[k].ev];
        if (x->applied && x->file != e->file && qc_s(x->op_key) != NULL &&
            strcmp(qc_s(x->op_key), qc_s(e->op_key)) == 0)
            return 1;
    }
    return 0;
}

/* Was the second applied effect e2 of a job an innocent re-run after the
 * first, e1?  Only in the lease model, when both deliveries would be
 * applied by the sink alike (a plain sink, or the same op key): the worker
 * of e1 lost its lease without the queue's doing, because its thread was
 * late, not because its plan let the lease lapse.  Proof of that:
 *   - e2's worker claimed the job after e1's lease had ended (its claim's
 *     "now" is past e1's lease_until, extended by e1's worker's renews,
 *     beyond the clock's resolution): the queue did not hand out a live
 *     lease (that would be exclusive_claim's violation, and is no excuse);
 *   - e1's worker planned to be done in time: it renews while working
 *     (header "heartbeat" and renews seen in the ledger; not after a
 *     graceful stop of its job that came before e2's claim when the header
 *     says "stop_heartbeat_first": its plan was then to stop renewing and
 *     work on, shared/cases.md C07, docs/decisions.md 986), or its planned
 *     work ("work_ms") ended before its lease would run out on the client's
 *     clock (the claim's invoke + lease_until - now, a lower bound);
 * so the lease ran out because the worker's thread ran late: a starved
 * client (issue 11), which is the machine's doing.  A plan that lets the
 * lease lapse (a worker that does not renew: policy mutant no_heartbeat;
 * shared/cases.md C07) is not excused, nor is anything in the transaction
 * model (C01, C27: the claim lived only in a transaction). */
static int rerun_excused(const qc_history *h, const qc__jobref *r, size_t a, size_t b,
                         const qc_event *e1, const qc_event *e2, double res, int renews)
{
    const qc_event *ca = NULL, *cb = NULL;

    if (strcmp(h->info.model, "transaction") == 0)
        return 0;
    if (h->info.sink_plain != 1 &&
        !(qc_s(e1->op_key) != NULL && qc_s(e2->op_key) != NULL && strcmp(qc_s(e1->op_key), qc_s(e2->op_key)) == 0))
        return 0;
    for (size_t k = a; k < b; k++) {
        const qc_event *x = &h->ev[r[k].ev];
        if (!qc__is_claim(x))
            continue;
        if (x->seq < e1->seq && x->file == e1->file && x->worker == e1->worker &&
            x->inc == e1->inc)
            ca = x;
        if (x->seq < e2->seq && x->file == e2->file && x->worker == e2->worker &&
            x->inc == e2->inc)
            cb = x;
    }
    if (ca == NULL || cb == NULL || ca == cb)
        return 0;
    /* e1's worker was not late if it sent its complete while its lease was
     * live and the server refused it with an error (a deadlock victim, a
     * serialization failure: rolled back): the job went back to the queue
     * by the protocol's failure, not the thread's lateness (shared/cases.md
     * C19, decision 1108) */
    const qc_event *cinv = qc__invoke_of(h, ca);
    for (size_t k = a; k < b && cinv != NULL; k++) {
        const qc_event *x = &h->ev[r[k].ev], *xinv;
        if (x->type != QC_EV_FAIL || x->op != QC_OP_COMPLETE || x->file != e1->file ||
            x->worker != e1->worker || x->inc != e1->inc || x->seq < e1->seq)
            continue;
        if ((xinv = qc__invoke_of(h, x)) != NULL && qc__has_time(ca->now) &&
            qc__has_time(ca->lease_until) && qc__has_time(xinv->t) && qc__has_time(cinv->t) &&
            xinv->t < cinv->t + (ca->lease_until - ca->now))
            return 0;
    }
    return qc__lapse_excused(h, ca, cb, 0, e1->work_ms, 0, e2->work_ms, renews, res, 1);
}

/* ---- effects_once (b): an op key shared by several jobs ----------------
 *
 * The idempotent sink drops a delivery whose op key it has applied before.
 * A protocol whose op keys are not unique per job (the enqueue's
 * timestamp, a batch number) makes it drop other jobs' effects: those jobs
 * complete and are done, and their work never took effect (decision 1114).
 * Judged on the ledger alone, when some delivery was dropped (else no
 * job lost its effect and the pass is skipped): each job whose op key
 * another job's delivery also carried is an opportunity; one none of
 * whose deliveries
 * was applied is a violation, with its deliveries and the other job's
 * applied one as evidence.  No time, no order: a correct protocol's op
 * keys are its own job's, so a starved client or a paused server cannot
 * make two jobs share one. */
typedef struct keyed_effect {
    const char *key;
    int64_t job;
    size_t ev;
} keyed_effect;

static int cmp_keyed(const void *pa, const void *pb)
{
    const keyed_effect *a = pa, *b = pb;
    int c = strcmp(a->key, b->key);
    if (c != 0)
        return c;
    if (a->job != b->job)
        return a->job < b->job ? -1 : 1;
    return (a->ev > b->ev) - (a->ev < b->ev);
}

static int shared_op_keys(const qc_history *h, qc_check *out, long *shared)
{
    size_t n = 0, dropped = 0;
    for (size_t i = 0; i < h->n; i++)
        dropped += h->ev[i].type == QC_EV_EFFECT && !h->ev[i].applied;
    if (dropped == 0)
        return 0; /* every delivery applied: no job lost its effect, no sort */
    keyed_effect *k = malloc((h->n + 1) * sizeof *k);
    if (k == NULL)
        return QC_ENOMEM;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type == QC_EV_EFFECT && e->job != QC_NO_JOB && qc_s(e->op_key) != NULL &&
            qc_s(e->op_key)[0] != '\0')
            k[n++] = (keyed_effect){qc_s(e->op_key), e->job, i};
    }
    qsort(k, n, sizeof *k, cmp_keyed);
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a; b < n && !strcmp(k[b].key, k[a].key); b++)
            ;
        if (k[b - 1].job == k[a].job)
            continue; /* one job's key: its redeliveries are (a)'s */
        for (size_t j = a, jb; j < b; j = jb) {
            int applied = 0;
            for (jb = j; jb < b && k[jb].job == k[j].job; jb++)
                applied |= h->ev[k[jb].ev].applied != 0;
            out->opportunities++;
            (*shared)++;
            if (applied)
                continue;
            const qc_event *other = NULL;
            for (size_t x = a; x < b && other == NULL; x++)
                if (k[x].job != k[j].job && h->ev[k[x].ev].applied)
                    other = &h->ev[k[x].ev];
            int64_t seqs[QC_MAX_EVIDENCE];
            int ns = 0;
            for (size_t x = j; x < jb && ns < QC_MAX_EVIDENCE - 1; x++)
                seqs[ns++] = h->ev[k[x].ev].seq;
            if (other != NULL)
                seqs[ns++] = other->seq;
            qc__check_violation(out, k[j].job, seqs, ns,
                                "job %lld: its effect was never applied: %zu deliveries with op "
                                "key %.40s, which job %lld's delivery%s also carried, were "
                                "dropped as duplicates",
                                (long long)k[j].job, jb - j, k[j].key,
                                (long long)(other != NULL ? other->job : k[j == a ? b - 1 : a].job),
                                other != NULL ? " (applied)" : "");
        }
    }
    free(k);
    return 0;
}

int qc_check_effects_once(const qc_history *h, qc_check *out)
{
    qc__jobref *r;
    size_t n = 0, jobs = 0, deliveries = 0;
    long redeliveries = 0, risky = 0, excused = 0;
    int renews = 0;
    double res = qc__clock_resolution(h);

    memset(out, 0, sizeof *out);
    out->name = "effects_once";
    if ((r = malloc((h->n + 1) * sizeof *r)) == NULL)
        return QC_ENOMEM;
    int64_t *risk = malloc((h->n + 1) * sizeof *risk);
    if (!risk) {
        free(r);
        return QC_ENOMEM;
    }
    size_t nrisk = at_risk_jobs(h, risk);
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        renews |= e->type == QC_EV_INVOKE && e->op == QC_OP_RENEW;
        if (e->type == QC_EV_EFFECT && e->job != QC_NO_JOB)
            r[n++] = (qc__jobref){e->job, i};
        else if (qc__is_claim(e))
            r[n++] = (qc__jobref){e->job, i};
        else if (e->type == QC_EV_OK && e->op == QC_OP_RENEW && e->rows > 0 &&
                 qc__event_job(h, e) != QC_NO_JOB)
            r[n++] = (qc__jobref){qc__event_job(h, e), i};
        else if (e->type == QC_EV_FAIL && e->op == QC_OP_COMPLETE &&
                 qc__event_job(h, e) != QC_NO_JOB)
            r[n++] = (qc__jobref){qc__event_job(h, e), i}; /* rerun_excused */
    }
    qc__jobrefs_sort(r, n);
    qc__jobref *eff = malloc((n + 1) * sizeof *eff);
    if (eff == NULL) {
        free(r);
        free(risk);
        return QC_ENOMEM;
    }
    for (size_t a = 0, b; a < n; a = b) {
        long applied = 0, real = 0;
        size_t ne = 0;
        const qc_event *cur = NULL;
        for (b = a; b < n && r[b].job == r[a].job; b++) {
            const qc_event *e = &h->ev[r[b].ev];
            if (e->type != QC_EV_EFFECT)
                continue;
            eff[ne++] = r[b];
            if (!e->applied || applied_elsewhere(h, eff, ne - 1, e))
                continue;
            applied++;
            if (cur != NULL) {
                if (rerun_excused(h, r, a, b, cur, e, res, renews))
                    excused++;
                else
                    real++;
            }
            cur = e;
        }
        if (ne == 0)
            continue;
        jobs++;
        deliveries += ne;
        /* Opportunities: every re-delivery, and every delivered job whose
         * execution a fault or an unknown outcome put at risk of a rerun. */
        redeliveries += (long)(ne - 1);
        if (ne > 1)
            out->opportunities += (long)(ne - 1);
        else if (bsearch(&r[a].job, risk, nrisk, sizeof *risk, cmp_i64)) {
            out->opportunities++;
            risky++;
        }
        if (real > 0)
            report_effects(out, h, eff, ne, applied);
    }
    free(eff);
    free(r);
    free(risk);
    long twice = out->nviolations, shared = 0;
    if (shared_op_keys(h, out, &shared) != 0)
        return QC_ENOMEM;
    int len = snprintf(out->summary, sizeof out->summary,
             "%zu effect deliveries on %zu jobs, %ld re-deliveries, %ld more jobs at risk "
             "(fault or unknown outcome), %ld jobs with more than one applied effect; %ld re-runs "
             "excused (the first worker's lease ran out while its thread was late)",
             deliveries, jobs, redeliveries, risky, twice, excused);
    if (shared > 0 && len > 0 && (size_t)len < sizeof out->summary)
        snprintf(out->summary + len, sizeof out->summary - (size_t)len,
                 "; %ld jobs shared an op key with another job, %ld of them never applied",
                 shared, out->nviolations - twice);
    qc__check_finish(out);
    return 0;
}

/* ---- batch_bound ------------------------------------------------------
 *
 * Rows per request, counted from the answer lines of one request (one
 * ledger, worker, incarnation and req): no time or order is used. */

/* One OK claim event with a job, keyed by the request that returned it. */
typedef struct claim_key {
    int file, worker, inc;
    int by_invoke; /* 0: id is the req; 1: id is the invoke's index */
    int64_t id;
    size_t ev;
} claim_key;

static int cmp_claim_key(const void *pa, const void *pb)
{
    const claim_key *a = pa, *b = pb;

    if (a->file != b->file)
        return a->file < b->file ? -1 : 1;
    if (a->worker != b->worker)
        return a->worker < b->worker ? -1 : 1;
    if (a->inc != b->inc)
        return a->inc < b->inc ? -1 : 1;
    if (a->by_invoke != b->by_invoke)
        return a->by_invoke < b->by_invoke ? -1 : 1;
    if (a->id != b->id)
        return a->id < b->id ? -1 : 1;
    return a->ev < b->ev ? -1 : a->ev > b->ev;
}

static int same_request(const claim_key *a, const claim_key *b)
{
    return a->file == b->file && a->worker == b->worker && a->inc == b->inc &&
           a->by_invoke == b->by_invoke && a->id == b->id;
}

static void report_batch(qc_check *c, const qc_history *h, const claim_key *k, size_t n, long batch)
{
    const qc_event *first = &h->ev[k[0].ev], *inv = qc__invoke_of(h, first);
    int64_t seqs[QC_MAX_EVIDENCE];
    char jobs[120], req[40];
    size_t len = 0;
    int ns = 0, cut = 0;

    jobs[0] = '\0';
    if (inv != NULL)
        seqs[ns++] = inv->seq;
    for (size_t i = 0; i < n; i++) {
        const qc_event *e = &h->ev[k[i].ev];
        char item[32];
        int il;

        if (ns < QC_MAX_EVIDENCE)
            seqs[ns++] = e->seq;
        if (cut)
            continue;
        /* Whole job ids only: a list cut in the middle of a number would
         * name a job that was not returned. */
        il = snprintf(item, sizeof item, "%s%lld", i > 0 ? ", " : "", (long long)e->job);
        if (len + (size_t)il + sizeof ", ..." > sizeof jobs) {
            cut = 1;
            continue;
        }
        memcpy(jobs + len, item, (size_t)il + 1);
        len += (size_t)il;
    }
    if (first->req >= 0)
        snprintf(req, sizeof req, "req %lld", (long long)first->req);
    else
        snprintf(req, sizeof req, "invoked at seq %lld", inv != NULL ? (long long)inv->seq : -1LL);
    qc__check_violation(c, first->job, seqs, ns,
                        "claim by worker %d (%s) returned %zu jobs, more than the batch of %ld: "
                        "jobs %s%s",
                        first->worker, req, n, batch, jobs, cut ? ", ..." : "");
}

/* A claim above the batch: its run of keys (start, count) and the index
 * of its first answer line, the order it is reported in. */
typedef struct over_claim {
    size_t a, n, ev;
} over_claim;

static int cmp_over_claim(const void *pa, const void *pb)
{
    const over_claim *a = pa, *b = pb;

    return a->ev < b->ev ? -1 : a->ev > b->ev;
}

int qc_check_batch_bound(const qc_history *h, qc_check *out)
{
    claim_key *k;
    size_t n = 0, most = 0;
    long batch = h->info.batch;

    memset(out, 0, sizeof *out);
    out->name = "batch_bound";
    if (batch <= 0) {
        snprintf(out->summary, sizeof out->summary,
                 "batch size unknown (no \"batch\" in the ledger header)");
        qc__check_finish(out);
        return 0;
    }
    if ((k = malloc((h->n + 1) * sizeof *k)) == NULL)
        return QC_ENOMEM;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (!qc__is_claim(e))
            continue;
        if (e->req >= 0)
            k[n] = (claim_key){e->file, e->worker, e->inc, 0, e->req, i};
        else if (e->invoke >= 0)
            k[n] = (claim_key){e->file, e->worker, e->inc, 1, e->invoke, i};
        else
            continue; /* cannot tell which request returned it */
        n++;
    }
    if (n > 1)
        qsort(k, n, sizeof *k, cmp_claim_key);
    /* The claims above the batch are reported in the order their answers
     * came (the first answer line's seq), not by worker: the first
     * violation is the first in time, the one a replay of the run (which
     * imposes the order of the actions) meets first too. */
    over_claim *over = malloc((n + 1) * sizeof *over);
    size_t nover = 0;
    if (over == NULL) {
        free(k);
        return QC_ENOMEM;
    }
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && same_request(&k[a], &k[b]); b++)
            ;
        out->opportunities++;
        if (b - a > most)
            most = b - a;
        if (b - a > (size_t)batch)
            over[nover++] = (over_claim){a, b - a, k[a].ev};
    }
    if (nover > 1)
        qsort(over, nover, sizeof *over, cmp_over_claim);
    for (size_t i = 0; i < nover; i++)
        report_batch(out, h, k + over[i].a, over[i].n, batch);
    free(over);
    free(k);
    snprintf(out->summary, sizeof out->summary,
             "%ld non-empty claims (batch %ld, largest claim %zu jobs), %ld above the batch",
             out->opportunities, batch, most, out->nviolations);
    qc__check_finish(out);
    return 0;
}
