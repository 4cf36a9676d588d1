/*
 * check_witness.c - the checkers that hold the client's ledger against the
 * server's witness (issue 13; witness.h, witness_merge.c), the witness rows
 * that confirm other checkers' violations, and the count of info outcomes
 * the witness resolved.
 *
 * witness_agrees.  The two accounts must tell the same story:
 *   (a) every answer the client took as a change (an OK claim, complete,
 *       renew or fail with rows > 0, an OK reap or enqueue naming a job)
 *       has its row change in the witness (by the request's session, on
 *       its job, with its token: witness_merge.c) - judged only when the
 *       witness was read to its end; in the transaction model a claim's
 *       change commits with the job's complete, so claims are not judged;
 *   (b) every row change in the witness was made by a request the ledger
 *       has from that session: an OK answer linked to it, or a request
 *       whose outcome the client does not know (info, or never answered)
 *       from the same session that could have made it, or (an update that
 *       keeps the row's state) a heartbeat step of that session, which
 *       names no job; a change by a
 *       session qchaos did not name is always a disagreement.  A second
 *       change of one row by the session in the transaction of an
 *       explained one (txid; without txids, the next change of the row)
 *       is the same request's.
 *   A disagreement is reported as one, never resolved for either side.
 *   A library's file may declare the state changes the library makes on
 *   its own in a worker's session (pg-boss's expiry, Minion's repair:
 *   "-- witness: library=active>NULL,..."); such a change that no request
 *   explains is the library's own reap, counted apart, not a disagreement,
 *   and for witness_owner it ends the job's claim.
 *
 * witness_owner.  The owner of a row change is the session that made it:
 * the session whose change gave the job its current token (a claim) owns
 * it until a change leaves its state (complete, fail, reap).  A worker
 * session's change that leaves the state, or keeps it (a renew), of a job
 * it does not own - another session's claim took it, or the reaper or a
 * fail gave it back - is a stale request the queue accepted, by the
 * server's own account (a protocol with no token is judged so too: the
 * claims are then the rows linked to OK claims).
 *
 * Innocent explanations: an answer lost in flight (info) may or may not
 * have committed, so it explains a row and is not required to have one; a
 * witness read only in part (the note says so) cannot prove a row absent;
 * the transaction model commits a claim's change with the complete.  A row
 * whose kind cannot be told (no token column, no linked request) is not
 * judged by witness_owner.  Times are never compared: per row, wid is the
 * order of its changes (row locks).
 */
#include "checkers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t job, wid;
    size_t ev;
} wrow;

static int cmp_wrow(const void *pa, const void *pb)
{
    const wrow *a = pa, *b = pb;

    if (a->job != b->job)
        return a->job < b->job ? -1 : 1;
    if (a->wid != b->wid)
        return a->wid < b->wid ? -1 : 1;
    return a->ev < b->ev ? -1 : a->ev > b->ev;
}

static int same(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static int leaves_state(const qc_event *w)
{
    if (qc_x(w->x)->w_change == 'd')
        return 1;
    if (qc_x(w->x)->w_change != 'u')
        return 0;
    return !(qc_x(w->x)->w_old_state == NULL ? qc_x(w->x)->w_state == NULL
                                       : same(qc_x(w->x)->w_old_state, qc_x(w->x)->w_state));
}

/* The witness rows of h sorted by (job, wid); *n rows.  NULL on ENOMEM
 * (with *n = 0 when there are none). */
static wrow *sorted_rows(const qc_history *h, size_t *n, int *oom)
{
    size_t k = 0;
    wrow *r;

    *oom = 0;
    *n = 0;
    for (size_t i = 0; i < h->n; i++)
        k += h->ev[i].type == QC_EV_WITNESS;
    if (k == 0)
        return NULL;
    if ((r = malloc(k * sizeof *r)) == NULL) {
        *oom = 1;
        return NULL;
    }
    for (size_t i = 0; i < h->n; i++)
        if (h->ev[i].type == QC_EV_WITNESS)
            r[(*n)++] = (wrow){qc_x(h->ev[i].x)->w_job, qc_x(h->ev[i].x)->w_id, i};
    qsort(r, *n, sizeof *r, cmp_wrow);
    return r;
}

/* For each event index: the op of the request linked to it when it is a
 * witness row (QC_OP_NONE: none). */
static qc_op *linked_ops(const qc_history *h)
{
    qc_op *op = calloc(h->n ? h->n : 1, sizeof *op);

    if (op == NULL)
        return NULL;
    for (size_t i = 0; i < h->n; i++)
        if (h->ev[i].w_ev >= 0)
            op[h->ev[i].w_ev] = h->ev[i].op;
    return op;
}

static const char *op_word(qc_op op)
{
    return qc_op_name(op);
}

static void na(const qc_history *h, qc_check *out)
{
    (void)h;
    snprintf(out->summary, sizeof out->summary,
             "the run had no witness ([witness] on, or QCHAOS_WITNESS=yes)");
    qc__check_finish(out);
    out->verdict = QC_NOT_APPLICABLE;
}

/* The requests whose outcome the client does not know: the invoke (or,
 * without one, the info event) of each info outcome and each invoke never
 * answered, as indexes in h->ev; *n of them.  Few (faults), so a row looks
 * through all of them. */
static size_t *unknown_requests(const qc_history *h, const unsigned char *answered, size_t *n)
{
    size_t *u = NULL, cap = 0;

    *n = 0;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        int pending = e->type == QC_EV_INVOKE && !answered[i];
        if (e->type != QC_EV_INFO && !pending)
            continue;
        if (qc__grow((void **)&u, &cap, *n + 1, sizeof *u) != 0) {
            free(u);
            *n = (size_t)-1;
            return NULL;
        }
        u[(*n)++] = pending || e->invoke < 0 ? i : (size_t)e->invoke;
    }
    return u;
}

/* Whether the session of witness row w has a request of unknown outcome
 * (u: unknown_requests) that may have made it. */
static int unknown_request(const qc_history *h, const size_t *u, size_t nu, const qc_event *w)
{
    for (size_t k = 0; k < nu; k++) {
        const qc_event *inv = &h->ev[u[k]];
        switch (qc_x(w->x)->w_actor) {
        case QC_ACTOR_WORKER:
            if (inv->worker != qc_x(w->x)->w_worker || inv->inc != qc_x(w->x)->w_inc)
                continue;
            if (inv->op == QC_OP_CLAIM)
                return 1; /* a claim whose answer was lost may have taken any job */
            if (inv->job == qc_x(w->x)->w_job &&
                (inv->op == QC_OP_COMPLETE || inv->op == QC_OP_RENEW || inv->op == QC_OP_FAIL))
                return 1;
            break;
        case QC_ACTOR_REAPER:
            if (inv->op == QC_OP_REAP)
                return 1;
            break;
        case QC_ACTOR_CONTROL:
            if (inv->op == QC_OP_ENQUEUE && qc_x(w->x)->w_change == 'i')
                return 1;
            break;
        case QC_ACTOR_OTHER:
            break;
        }
    }
    return 0;
}

/* The worker incarnations that sent a heartbeat step that may have
 * changed rows (answered with rows > 0, or of unknown outcome): each
 * explains its session's updates that keep a row's state (a heartbeat
 * names no job).  Few: at most one per incarnation. */
typedef struct {
    int worker, inc;
} actor_id;

static int heartbeat_of(const actor_id *hb, size_t nhb, int worker, int inc)
{
    for (size_t i = 0; i < nhb; i++)
        if (hb[i].worker == worker && hb[i].inc == inc)
            return 1;
    return 0;
}

static actor_id *heartbeats(const qc_history *h, size_t *n, int *oom)
{
    actor_id *hb = NULL;
    size_t cap = 0;

    *n = 0;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->op != QC_OP_HEARTBEAT ||
            !((e->type == QC_EV_OK && e->rows != 0) || e->type == QC_EV_INFO) ||
            heartbeat_of(hb, *n, e->worker, e->inc))
            continue;
        if (qc__grow((void **)&hb, &cap, *n + 1, sizeof *hb) != 0) {
            *oom = 1;
            break;
        }
        hb[(*n)++] = (actor_id){e->worker, e->inc};
    }
    return hb;
}

int qc_check_witness_agrees(const qc_history *h, qc_check *out)
{
    size_t nr = 0;
    int oom = 0;
    wrow *r = NULL;
    unsigned char *ok = NULL, *answered = NULL;
    actor_id *hb = NULL;
    size_t nhb = 0;
    size_t *unk = NULL, nunk = 0, *fails = NULL, nfails = 0, fcap = 0;
    long missing = 0, unexplained = 0, skipped = 0, foreign = 0, library = 0;

    memset(out, 0, sizeof *out);
    out->name = "witness_agrees";
    if (!h->info.witness) {
        na(h, out);
        return 0;
    }
    r = sorted_rows(h, &nr, &oom);
    ok = calloc(h->n ? h->n : 1, 1);
    answered = qc__answered_invokes(h);
    if (!oom && ok != NULL && answered != NULL)
        unk = unknown_requests(h, answered, &nunk);
    for (size_t i = 0; i < h->n && !oom; i++)
        if (h->ev[i].type == QC_EV_FAIL) {
            if (qc__grow((void **)&fails, &fcap, nfails + 1, sizeof *fails) != 0)
                oom = 1;
            else
                fails[nfails++] = i;
        }
    if (!oom)
        hb = heartbeats(h, &nhb, &oom);
    if (oom || ok == NULL || (h->n > 0 && answered == NULL) || nunk == (size_t)-1) {
        free(hb);
        free(r);
        free(ok);
        free(answered);
        free(unk);
        free(fails);
        return QC_ENOMEM;
    }
    /* (a) the client's changes, each with its row */
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        int64_t job;
        if (e->type != QC_EV_OK)
            continue;
        if (e->op == QC_OP_CLAIM || e->op == QC_OP_COMPLETE || e->op == QC_OP_RENEW ||
            e->op == QC_OP_FAIL) {
            if (e->rows <= 0)
                continue;
        } else if (e->op != QC_OP_REAP && e->op != QC_OP_ENQUEUE) {
            continue;
        }
        if ((job = qc__event_job(h, e)) == QC_NO_JOB)
            continue;
        if (e->w_ev >= 0) {
            out->opportunities++;
            ok[e->w_ev] = 1;
            continue;
        }
        if (!h->info.witness_complete ||
            (e->op == QC_OP_CLAIM && !strcmp(h->info.model, "transaction"))) {
            skipped++;
            continue;
        }
        out->opportunities++;
        missing++;
        qc__check_violation(out, job, &e->seq, 1,
                            "job %lld: %s %d.%d's %s was answered as a change (seq %lld, rows "
                            "%ld) but the witness has no such row change by session %s",
                            (long long)job, e->worker < 0 ? "actor" : "worker", e->worker, e->inc,
                            op_word(e->op), (long long)e->seq, (long)e->rows,
                            e->op == QC_OP_ENQUEUE ? "qchaos-control"
                            : e->op == QC_OP_REAP  ? "qchaos-reaper"
                                                   : "of that worker");
    }
    /* resolved info outcomes explain their rows */
    for (size_t i = 0; i < h->n; i++)
        if (h->ev[i].type == QC_EV_INFO && h->ev[i].w_ev >= 0)
            ok[h->ev[i].w_ev] = 1;
    /* (b) the server's changes, each with a request of its session */
    for (size_t a = 0; a < nr; a++) {
        size_t wi = r[a].ev;
        const qc_event *w = &h->ev[wi];
        out->opportunities++;
        if (ok[wi])
            continue;
        if (a > 0 && r[a - 1].job == qc_x(w->x)->w_job && ok[r[a - 1].ev] &&
            same(qc_x(h->ev[r[a - 1].ev].x)->w_session, qc_x(w->x)->w_session) &&
            qc_x(w->x)->w_actor != QC_ACTOR_OTHER &&
            (qc_x(w->x)->w_txid < 0 || qc_x(h->ev[r[a - 1].ev].x)->w_txid < 0 ||
             qc_x(w->x)->w_txid == qc_x(h->ev[r[a - 1].ev].x)->w_txid)) {
            ok[wi] = 1; /* the same request's transaction changed the row again */
            continue;
        }
        if (qc__witness_library_change(h, w)) {
            ok[wi] = 1; /* the library's own expiry / repair, declared in its file */
            library++;
            continue;
        }
        if (qc_x(w->x)->w_actor != QC_ACTOR_OTHER && unknown_request(h, unk, nunk, w)) {
            ok[wi] = 1;
            continue;
        }
        if (qc_x(w->x)->w_actor == QC_ACTOR_WORKER && qc_x(w->x)->w_change == 'u' && !leaves_state(w) &&
            heartbeat_of(hb, nhb, qc_x(w->x)->w_worker, qc_x(w->x)->w_inc)) {
            ok[wi] = 1; /* the worker's heartbeat extended its lease */
            continue;
        }
        unexplained++;
        if (qc_x(w->x)->w_actor == QC_ACTOR_OTHER) {
            foreign++;
            qc__check_violation(out, qc_x(w->x)->w_job, &w->seq, 1,
                                "job %s: session '%s', which qchaos did not name, changed the "
                                "row (%s, witness row %lld)",
                                qc_x(w->x)->w_row ? qc_x(w->x)->w_row : "?",
                                qc_x(w->x)->w_session ? qc_x(w->x)->w_session : "",
                                qc_x(w->x)->w_change == 'i'   ? "insert"
                                : qc_x(w->x)->w_change == 'd' ? "delete"
                                                        : "update",
                                (long long)qc_x(w->x)->w_id);
            continue;
        }
        /* the client's own word about it, if it has one: a fail outcome */
        int64_t seqs[4] = {w->seq};
        int ns = 1;
        for (size_t f = 0; f < nfails && ns < 4; f++) {
            const qc_event *e = &h->ev[fails[f]];
            if (e->type == QC_EV_FAIL && e->worker == qc_x(w->x)->w_worker && e->inc == qc_x(w->x)->w_inc &&
                qc_x(w->x)->w_actor == QC_ACTOR_WORKER && qc__event_job(h, e) == qc_x(w->x)->w_job)
                seqs[ns++] = e->seq;
        }
        qc__check_violation(out, qc_x(w->x)->w_job, seqs, ns,
                            "job %s: session %s committed a row change (%s -> %s, witness row "
                            "%lld, seq %lld) that no request of it in the ledger explains%s",
                            qc_x(w->x)->w_row ? qc_x(w->x)->w_row : "?", qc_x(w->x)->w_session,
                            qc_x(w->x)->w_old_state ? qc_x(w->x)->w_old_state : "NULL",
                            qc_x(w->x)->w_state ? qc_x(w->x)->w_state : "NULL", (long long)qc_x(w->x)->w_id,
                            (long long)w->seq,
                            ns > 1 ? " (the client was told its request failed)" : "");
    }
    snprintf(out->summary, sizeof out->summary,
             "%zu witness row changes, %ld client changes without their row, %ld row changes no "
             "request explains (%ld by sessions qchaos did not name)%s%.0ld%s",
             nr, missing, unexplained, foreign,
             library ? "; the library's own changes (its expiry / repair, declared in its file): "
                     : "",
             library,
             skipped ? "; client changes not judged (witness read in part, or claims of the "
                       "transaction model)"
                     : "");
    if (skipped) {
        size_t len = strlen(out->summary);
        snprintf(out->summary + len, sizeof out->summary - len, ": %ld", skipped);
    }
    free(r);
    free(ok);
    free(answered);
    free(unk);
    free(fails);
    free(hb);
    qc__check_finish(out);
    return 0;
}

int qc_check_witness_owner(const qc_history *h, qc_check *out)
{
    size_t nr = 0;
    int oom = 0;
    wrow *r = NULL;
    qc_op *lop = NULL;
    long judged_rows = 0, stale = 0;

    memset(out, 0, sizeof *out);
    out->name = "witness_owner";
    if (!h->info.witness) {
        na(h, out);
        return 0;
    }
    r = sorted_rows(h, &nr, &oom);
    lop = linked_ops(h);
    if (oom || lop == NULL) {
        free(r);
        free(lop);
        return QC_ENOMEM;
    }
    const int tok = h->info.witness_token;
    for (size_t a = 0, b; a < nr; a = b) {
        const qc_event *owner = NULL; /* the row that claimed the job last */
        for (b = a; b < nr && r[b].job == r[a].job; b++) {
            const qc_event *w = &h->ev[r[b].ev];
            qc_op op = lop[r[b].ev];
            int claim = tok ? (qc_x(w->x)->w_change == 'u' && qc_x(w->x)->w_token != NULL &&
                               !same(qc_x(w->x)->w_old_token, qc_x(w->x)->w_token))
                            : op == QC_OP_CLAIM;
            int release = !claim && leaves_state(w);
            int renew = !claim && !release && qc_x(w->x)->w_change == 'u';
            if (op == QC_OP_NONE && qc__witness_library_change(h, w)) {
                if (leaves_state(w) || qc_x(w->x)->w_change == 'i')
                    owner = NULL; /* the library's own expiry / repair ended the claim */
                continue;
            }
            if (!tok && !claim && op == QC_OP_NONE)
                continue; /* its kind cannot be told */
            if (claim) {
                if (owner != NULL && same(qc_x(owner->x)->w_session, qc_x(w->x)->w_session))
                    continue; /* its own renew rotated the token */
                owner = w;
                continue;
            }
            if (qc_x(w->x)->w_actor != QC_ACTOR_WORKER) {
                if (release)
                    owner = NULL; /* the reaper (or another) gave the job back */
                continue;
            }
            if (!release && !renew)
                continue;
            judged_rows++;
            out->opportunities++;
            if (owner == NULL || !same(qc_x(owner->x)->w_session, qc_x(w->x)->w_session)) {
                int64_t seqs[2] = {w->seq, owner != NULL ? owner->seq : w->seq};
                stale++;
                qc__check_violation(
                    out, qc_x(w->x)->w_job, seqs, owner != NULL ? 2 : 1,
                    "job %s: session %s %s the job (%s -> %s, witness row %lld) while %s%s%s: "
                    "the queue accepted a request from a session that did not own it",
                    qc_x(w->x)->w_row ? qc_x(w->x)->w_row : "?", qc_x(w->x)->w_session,
                    release ? "finished or gave back" : "renewed",
                    qc_x(w->x)->w_old_state ? qc_x(w->x)->w_old_state : "NULL",
                    qc_x(w->x)->w_state ? qc_x(w->x)->w_state : "NULL", (long long)qc_x(w->x)->w_id,
                    owner != NULL ? "session "
                                  : "no session held it (the last claim was "
                                    "ended)",
                    owner != NULL ? qc_x(owner->x)->w_session : "",
                    owner != NULL ? " held its latest claim" : "");
            }
            if (release)
                owner = NULL;
        }
    }
    snprintf(out->summary, sizeof out->summary,
             "%ld worker row changes judged against the job's owner by the witness (%s), %ld by "
             "a session that did not own the job",
             judged_rows, tok ? "claims by token" : "claims by linked claim requests", stale);
    free(r);
    free(lop);
    qc__check_finish(out);
    return 0;
}

static long find_seq(const qc_history *h, int64_t seq)
{
    size_t lo = 0, hi = h->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->ev[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < h->n && h->ev[lo].seq == seq ? (long)lo : -1;
}

static void add_wseq(qc_violation *v, int64_t seq)
{
    for (int k = 0; k < v->nwitness; k++)
        if (v->wseq[k] == seq)
            return;
    if (v->nwitness < QC_MAX_EVIDENCE)
        v->wseq[v->nwitness++] = seq;
}

void qc__witness_confirm(const qc_history *h, qc_check *c, size_t n)
{
    if (!h->info.witness)
        return;
    for (size_t i = 0; i < n; i++) {
        if (!strncmp(c[i].name, "witness_", 8))
            continue; /* their evidence is the witness already */
        for (size_t k = 0; k < c[i].nstored; k++) {
            qc_violation *v = &c[i].v[k];
            int64_t last = -1;
            for (int s = 0; s < v->nseq; s++) {
                long e = find_seq(h, v->seq[s]);
                if (e < 0)
                    continue;
                if (h->ev[e].w_ev >= 0)
                    add_wseq(v, h->ev[h->ev[e].w_ev].seq);
                else if (h->ev[e].type == QC_EV_INVOKE)
                    for (size_t j = (size_t)e + 1; j < h->n; j++) /* its answer's row */
                        if (h->ev[j].invoke == e) {
                            if (h->ev[j].w_ev >= 0)
                                add_wseq(v, h->ev[h->ev[j].w_ev].seq);
                            break;
                        }
            }
            /* and the job's last committed change: what the row ended as */
            if (v->job != QC_NO_JOB)
                for (size_t j = 0; j < h->n; j++)
                    if (h->ev[j].type == QC_EV_WITNESS && qc_x(h->ev[j].x)->w_job == v->job &&
                        (last < 0 || qc_x(h->ev[j].x)->w_id > qc_x(h->ev[last].x)->w_id))
                        last = (int64_t)j;
            if (last >= 0)
                add_wseq(v, h->ev[last].seq);
        }
    }
}

void qc_witness_counts_get(const qc_history *h, qc_witness_counts *out)
{
    memset(out, 0, sizeof *out);
    out->on = h->info.witness;
    out->complete = h->info.witness_complete;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type == QC_EV_WITNESS) {
            out->rows++;
            continue;
        }
        if (e->type == QC_EV_OK && e->w_ev >= 0)
            out->linked++;
        if (e->type != QC_EV_INFO)
            continue;
        if (e->op != QC_OP_COMPLETE && e->op != QC_OP_RENEW && e->op != QC_OP_FAIL)
            continue;
        out->info++;
        if (e->op == QC_OP_COMPLETE)
            out->info_complete++;
        if (e->w_resolved == 1)
            out->committed++;
        else if (e->w_resolved == 0)
            out->not_committed++;
        else
            out->unresolved++;
    }
}
