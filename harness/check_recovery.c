/*
 * check_recovery.c - the liveness checkers of faulted jobs (DESIGN.md
 * "Checkers"): recovery (a job abandoned by a fault is taken up again in
 * bounded time) and bounded_failure (a poison job ends dead, with its error
 * kept, after at most max_attempts claims).
 *
 * recovery.  A fault abandons its job with a live lease when its kind is
 * kill_after_claim, kill_after_effect, lost_request or stall_beyond_lease,
 * or poison when the header says "poison_mode":"crash" (the worker dies
 * holding the lease).  The job is recovered by the first later event (seq
 * order) that is an OK claim of it, an OK reap of it into state "dead", or,
 * for a stall only, an OK complete with rows > 0 carrying another token
 * than the stalled one (someone else finished it).  Recovery time = t of
 * that event - t of the fault (client ms); the bound is
 *     lease_ms + reaper_interval_ms + recovery_slack_ms
 * from the header.
 *
 * No false alarm: a recovery event or fault without a client time gives an
 * unknown time, never a violation; without lease_ms in the header the bound
 * is unknown and no time is judged; a job with no recovery event is a
 * violation only when the final snapshot holds it in another state than
 * done or dead (done or dead there: recovered at an unknown time; missing
 * from the snapshot, or no snapshot: not judged here, no_lost_jobs speaks).
 *
 * bounded_failure.  Poison jobs are the jobs with a fault event "poison".
 * Attempts are the OK claim events of the job in the ledger, never an
 * attempt column (the ledger sees fewer claims than happened, never more).
 * The final snapshot must hold the job dead with a non-empty "error".
 *
 * Cost: one sort of the relevant events by job, O(n log n).
 */
#include "checkers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    double ms;    /* REC_TIMED: recovery time */
    rec_kind kind;
} rec;

/* Does fault event e abandon its job with a live lease? */
static int is_abandoning(const qc_history *h, const qc_event *e)
{
    static const char *const kinds[] = {"kill_after_claim", "kill_after_effect", "lost_request",
                                        "stall_beyond_lease"};

    if (e->type != QC_EV_FAULT || e->fault == NULL || e->job == QC_NO_JOB)
        return 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(e->fault, kinds[i]) == 0)
            return 1;
    return h->info.poison_crash && strcmp(e->fault, "poison") == 0;
}

static int is_stall(const qc_event *e)
{
    return e->fault != NULL && strcmp(e->fault, "stall_beyond_lease") == 0;
}

static int is_dead_reap(const qc_event *e)
{
    return e->type == QC_EV_OK && e->op == QC_OP_REAP && e->job != QC_NO_JOB && e->state != NULL &&
           strcmp(e->state, "dead") == 0;
}

static int is_acked_complete(const qc_event *e)
{
    return e->type == QC_EV_OK && e->op == QC_OP_COMPLETE && e->rows > 0;
}

/* Does event x recover the job abandoned by fault f? */
static int recovers(const qc_history *h, const qc_event *f, const qc_event *x)
{
    const char *tok;

    if (qc__is_claim(x) || is_dead_reap(x))
        return 1;
    if (!is_stall(f) || !is_acked_complete(x) || f->token == NULL)
        return 0;
    tok = qc__event_token(h, x);
    return tok != NULL && strcmp(tok, f->token) != 0;
}

static int cmp_rec(const void *pa, const void *pb)
{
    const rec *a = pa, *b = pb;

    return a->fault < b->fault ? -1 : a->fault > b->fault;
}

/* Finds the recovery of every abandoning fault.  *out is a new array (free
 * it) of *n records in the faults' seq order.  Returns 0 or QC_ENOMEM. */
static int recovery_scan(const qc_history *h, rec **out, size_t *n)
{
    qc__snapshot snap;
    qc__jobref *r = NULL;
    rec *rs = NULL;
    size_t nr = 0, nf = 0;
    int rc;

    *out = NULL;
    *n = 0;
    if ((rc = qc__snapshot_build(h, &snap)) != 0)
        return rc;
    r = malloc((h->n + 1) * sizeof *r);
    if (r == NULL) {
        rc = QC_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        int64_t job;
        if (is_abandoning(h, e)) {
            r[nr++] = (qc__jobref){e->job, i};
            nf++;
        } else if (qc__is_claim(e) || is_dead_reap(e)) {
            r[nr++] = (qc__jobref){e->job, i};
        } else if (is_acked_complete(e) && (job = qc__event_job(h, e)) != QC_NO_JOB) {
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
    for (size_t k = 0; k < nr; k++) {
        const qc_event *f = &h->ev[r[k].ev], *row;
        rec *x;
        if (!is_abandoning(h, f))
            continue;
        x = &rs[nf++];
        x->fault = r[k].ev;
        x->by = -1;
        x->snap = -1;
        x->ms = QC_NO_TIME;
        for (size_t j = k + 1; j < nr && r[j].job == r[k].job; j++) {
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
            x->kind = is_final(row->state) ? REC_UNSEEN : REC_NEVER;
        }
    }
    if (nf > 1)
        qsort(rs, nf, sizeof *rs, cmp_rec);
    *out = rs;
    *n = nf;
    rs = NULL;
out:
    free(r);
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

static const char *recovery_by(const qc_event *y)
{
    if (y->op == QC_OP_CLAIM)
        return "claim";
    if (y->op == QC_OP_REAP)
        return "reap into dead";
    return "complete by another token";
}

static void report_recovery(qc_check *c, const qc_history *h, const rec *x, long bound)
{
    const qc_event *f = &h->ev[x->fault];
    const qc_run_info *in = &h->info;

    if (x->kind == REC_TIMED) {
        const qc_event *y = &h->ev[x->by];
        int64_t seqs[] = {f->seq, y->seq};
        qc__check_violation(c, f->job, seqs, 2,
                            "job %lld: %s at seq %lld was recovered by %s seq %lld after %.1f ms, "
                            "beyond the bound of %ld ms (lease %ld + reaper %ld + slack %ld)",
                            (long long)f->job, f->fault, (long long)f->seq, recovery_by(y),
                            (long long)y->seq, x->ms, bound, in->lease_ms, in->reaper_interval_ms,
                            in->recovery_slack_ms);
    } else {
        const qc_event *row = &h->ev[x->snap];
        int64_t seqs[] = {f->seq, row->seq};
        qc__check_violation(
            c, f->job, seqs, 2,
            "job %lld: %s at seq %lld was never recovered (no later claim%s) and "
            "the job is %s in the final snapshot (seq %lld)",
            (long long)f->job, f->fault, (long long)f->seq,
            is_stall(f) ? ", dead reap or complete by another token" : " or dead reap",
            row->state != NULL ? row->state : "without a state", (long long)row->seq);
    }
}

int qc_check_recovery(const qc_history *h, qc_check *out)
{
    const qc_run_info *in = &h->info;
    long bound =
        in->lease_ms > 0 ? in->lease_ms + in->reaper_interval_ms + in->recovery_slack_ms : -1;
    size_t n, nt = 0, untimed = 0, never = 0, unknown = 0;
    double *ms = NULL;
    rec *rs = NULL;
    int rc, len;

    memset(out, 0, sizeof *out);
    out->name = "recovery";
    if ((rc = recovery_scan(h, &rs, &n)) != 0)
        return rc;
    if (n > 0 && (ms = malloc(n * sizeof *ms)) == NULL) {
        free(rs);
        return QC_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const rec *x = &rs[i];
        out->opportunities++;
        switch (x->kind) {
        case REC_TIMED:
            ms[nt++] = x->ms;
            if (bound >= 0 && x->ms > (double)bound)
                report_recovery(out, h, x, bound);
            break;
        case REC_UNTIMED:
        case REC_UNSEEN:
            untimed++;
            break;
        case REC_NEVER:
            never++;
            if (!qc__run_interrupted(h))
                report_recovery(out, h, x, bound);
            break;
        case REC_UNKNOWN:
            unknown++;
            break;
        }
    }
    if (nt > 0) {
        qsort(ms, nt, sizeof *ms, cmp_double);
        len = snprintf(out->summary, sizeof out->summary,
                       "%zu faults: %zu recovered in min %.0f / median %.0f / p95 %.0f / max "
                       "%.0f ms",
                       n, nt, ms[0], percentile(ms, nt, 0.5), percentile(ms, nt, 0.95), ms[nt - 1]);
    } else {
        len =
            snprintf(out->summary, sizeof out->summary, "%zu faults: no recovery time measured", n);
    }
    if (len > 0 && (size_t)len < sizeof out->summary) {
        char b[32];
        if (bound >= 0)
            snprintf(b, sizeof b, "%ld ms", bound);
        else
            snprintf(b, sizeof b, "unknown (no lease_ms)");
        snprintf(out->summary + len, sizeof out->summary - (size_t)len,
                 ", %zu at an unknown time, %zu never, %zu not in a snapshot; bound %s", untimed,
                 never, unknown, b);
    }
    free(ms);
    free(rs);
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
    return e->type == QC_EV_FAULT && e->job != QC_NO_JOB && e->fault != NULL &&
           strcmp(e->fault, "poison") == 0;
}

typedef struct poison_tally {
    long over, not_dead, no_error;
} poison_tally;

/* Judges one poison job: its events r[0..n) (faults and claims, seq order),
 * the first poison fault f and its final snapshot row (NULL: none). */
static void judge_poison(qc_check *c, const qc_history *h, const qc__jobref *r, size_t n,
                         const qc_event *f, const qc_event *row, poison_tally *t)
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
    if (row == NULL)
        return;
    if ((row->state == NULL || strcmp(row->state, "dead") != 0) && qc__run_interrupted(h)) {
        return; /* stopped before the drain: it may have died later */
    } else if (row->state == NULL || strcmp(row->state, "dead") != 0) {
        int64_t ev[] = {f->seq, last != NULL ? last->seq : f->seq, row->seq};
        t->not_dead++;
        qc__check_violation(c, f->job, ev, 3,
                            "poison job %lld is %s in the final snapshot (seq %lld), not dead, "
                            "after %ld claims (poison fault seq %lld)",
                            (long long)f->job, row->state != NULL ? row->state : "without a state",
                            (long long)row->seq, claims, (long long)f->seq);
    } else if (row->error == NULL || row->error[0] == '\0') {
        int64_t ev[] = {f->seq, row->seq};
        t->no_error++;
        qc__check_violation(c, f->job, ev, 2,
                            "poison job %lld is dead in the final snapshot (seq %lld) but its "
                            "error was not kept (%s error)",
                            (long long)f->job, (long long)row->seq,
                            row->error == NULL ? "no" : "an empty");
    }
}

int qc_check_bounded_failure(const qc_history *h, qc_check *out)
{
    qc__snapshot snap;
    qc__jobref *r = NULL;
    poison_tally t = {0, 0, 0};
    size_t n = 0, jobs = 0;
    char max[48];
    int rc;

    memset(out, 0, sizeof *out);
    out->name = "bounded_failure";
    if ((rc = qc__snapshot_build(h, &snap)) != 0)
        return rc;
    if ((r = malloc((h->n + 1) * sizeof *r)) == NULL) {
        qc__snapshot_fini(&snap);
        return QC_ENOMEM;
    }
    for (size_t i = 0; i < h->n; i++)
        if (is_poison(&h->ev[i]) || qc__is_claim(&h->ev[i]))
            r[n++] = (qc__jobref){h->ev[i].job, i};
    qc__jobrefs_sort(r, n);
    for (size_t a = 0, b; a < n; a = b) {
        const qc_event *f = NULL;
        for (b = a; b < n && r[b].job == r[a].job; b++)
            if (f == NULL && is_poison(&h->ev[r[b].ev]))
                f = &h->ev[r[b].ev];
        if (f == NULL)
            continue;
        jobs++;
        judge_poison(out, h, r + a, b - a, f, qc__snapshot_find(h, &snap, f->job), &t);
    }
    free(r);
    if (h->info.max_attempts > 0)
        snprintf(max, sizeof max, "max_attempts %ld", h->info.max_attempts);
    else
        snprintf(max, sizeof max, "max_attempts unknown");
    snprintf(out->summary, sizeof out->summary,
             "%zu poison jobs (%s%s): %ld claimed too often, %ld not dead, %ld dead without "
             "an error",
             jobs, max, snap.nevents == 0 ? ", no final snapshot" : "", t.over, t.not_dead,
             t.no_error);
    qc__snapshot_fini(&snap);
    qc__check_finish(out);
    if (out->verdict == QC_PASS && qc__run_interrupted(h)) {
        out->verdict = QC_INCONCLUSIVE;
        snprintf(out->summary, sizeof out->summary,
                 "run interrupted before the drain: not judged to the end");
    }
    return 0;
}
