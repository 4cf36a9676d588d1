/*
 * witness_merge.c - joins the witness's row changes to the ledger's
 * requests when a history is built (history.h, qc__witness_merge).
 *
 * A witness row is a committed row change with the session that made it
 * (witness.h).  A request is matched to a row by who sent it (the session
 * named after its worker and incarnation; the reaper; the control session
 * for enqueue), the job, and what it did to the row:
 *   enqueue   an insert by the control session;
 *   claim     an update that set the token the claim returned (without a
 *             token column: one that changed the state);
 *   complete,
 *   fail      a change (or a delete) from the token the request carried that
 *             set no other token (without a token column: one that left
 *             the state);
 *   renew     an update that kept the state, from the request's token;
 *   reap      the reaper's change that left the state from the reaped token.
 * When no row has the request's token, a row of the same kind by the same
 * session on the job is taken (a protocol that ignores the token changes
 * another owner's row: a change all the same, which witness_owner judges).
 * Each row explains at most one request.  OK answers with rows > 0 take
 * their rows first (they are proven to have changed one), in seq order;
 * then info outcomes and never-answered invokes of complete / renew / fail
 * take the rows left, which resolves them: committed when one is found,
 * not committed when none is and the witness was read to its end.
 *
 * Invariants: the merge only adds links (w_ev, w_resolved, w_actor ...); it
 * never changes a field a checker without the witness reads, so a ledger
 * judges the same with the witness rows removed, except where a checker
 * asks for them.  Cost: one sort of the witness rows by (job, wid), then a
 * binary search per request.
 */
#include "history.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t job;
    int64_t wid;
    size_t ev;
} wref;

/* A witness row's own qc_event_x, which the loader always gives it
 * (history.c): the merge writes the fields it derives there. */
static qc_event_x *wx(qc_event *w)
{
    return (qc_event_x *)qc_x(w->x);
}

static int cmp_wref(const void *pa, const void *pb)
{
    const wref *a = pa, *b = pb;

    if (a->job != b->job)
        return a->job < b->job ? -1 : 1;
    if (a->wid != b->wid)
        return a->wid < b->wid ? -1 : 1;
    return a->ev < b->ev ? -1 : a->ev > b->ev;
}

typedef struct {
    const char *lib;
    int64_t job;
} libref;

static int cmp_libref(const void *pa, const void *pb)
{
    const libref *a = pa, *b = pb;

    return strcmp(a->lib, b->lib);
}

/* An adapter's ledger names each job's library id (ok enqueue and ok claim
 * carry "lib_id"): the witness's row is that id, not qchaos's job id.  Sets
 * w_job of every witness row from it (QC_NO_JOB for a row no job of the
 * ledger has: a stranger's, which witness_agrees reports).  0 when the
 * ledger has no lib_id (a protocol file: the row is the job id); 1 done;
 * QC_ENOMEM. */
static int map_lib_ids(qc_history *h)
{
    size_t n = 0, k = 0;
    libref *m;

    for (size_t i = 0; i < h->n; i++)
        if (qc_x(h->ev[i].x)->lib_id != NULL && h->ev[i].job != QC_NO_JOB &&
            h->ev[i].type != QC_EV_WITNESS)
            n++;
    if (n == 0)
        return 0;
    if ((m = malloc(n * sizeof *m)) == NULL)
        return QC_ENOMEM;
    for (size_t i = 0; i < h->n; i++)
        if (qc_x(h->ev[i].x)->lib_id != NULL && h->ev[i].job != QC_NO_JOB &&
            h->ev[i].type != QC_EV_WITNESS)
            m[k++] = (libref){qc_x(h->ev[i].x)->lib_id, h->ev[i].job};
    qsort(m, n, sizeof *m, cmp_libref);
    for (size_t i = 0; i < h->n; i++) {
        qc_event *w = &h->ev[i];
        if (w->type != QC_EV_WITNESS)
            continue;
        libref key = {qc_x(w->x)->w_row, 0}, *f;
        f = qc_x(w->x)->w_row != NULL ? bsearch(&key, m, n, sizeof *m, cmp_libref) : NULL;
        wx(w)->w_job = f != NULL ? f->job : QC_NO_JOB;
    }
    free(m);
    return 1;
}

static void name_actor(qc_event *w)
{
    int worker, inc;
    char tail;

    wx(w)->w_actor = QC_ACTOR_OTHER;
    if (qc_x(w->x)->w_session == NULL)
        return;
    if (sscanf(qc_x(w->x)->w_session, "qchaos-w%d.%d%c", &worker, &inc, &tail) == 2 && worker >= 0 &&
        inc >= 0) {
        wx(w)->w_actor = QC_ACTOR_WORKER;
        wx(w)->w_worker = worker;
        wx(w)->w_inc = inc;
    } else if (!strcmp(qc_x(w->x)->w_session, "qchaos-reaper")) {
        wx(w)->w_actor = QC_ACTOR_REAPER;
    } else if (!strcmp(qc_x(w->x)->w_session, "qchaos-control") ||
               !strcmp(qc_x(w->x)->w_session, "qchaos-feeder") ||
               (sscanf(qc_x(w->x)->w_session, "qchaos-enq.%d%c", &inc, &tail) == 1 && inc >= 0)) {
        /* an adapter's enqueuer (adapter.c) is the control session */
        wx(w)->w_actor = QC_ACTOR_CONTROL;
    }
}

static int same(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* "NULL" names a missing side (an insert's old, a delete's new). */
static int side_is(const char *v, const char *word, size_t n)
{
    if (v == NULL)
        return n == 4 && !strncmp(word, "NULL", 4);
    return strlen(v) == n && !strncmp(v, word, n);
}

int qc__witness_library_change(const qc_history *h, const qc_event *w)
{
    const char *p = h->info.witness_library;

    if (w->type != QC_EV_WITNESS || qc_x(w->x)->w_actor != QC_ACTOR_WORKER)
        return 0;
    while (*p) {
        const char *comma = strchr(p, ','), *end = comma ? comma : p + strlen(p);
        const char *gt = memchr(p, '>', (size_t)(end - p));
        if (gt != NULL && side_is(qc_x(w->x)->w_old_state, p, (size_t)(gt - p)) &&
            side_is(qc_x(w->x)->w_state, gt + 1, (size_t)(end - gt - 1)))
            return 1;
        p = comma ? comma + 1 : end;
    }
    return 0;
}

static int state_left(const qc_event *w)
{
    if (qc_x(w->x)->w_change == 'd')
        return 1;
    if (qc_x(w->x)->w_change != 'u')
        return 0;
    return !(qc_x(w->x)->w_old_state == NULL ? qc_x(w->x)->w_state == NULL
                                       : same(qc_x(w->x)->w_old_state, qc_x(w->x)->w_state));
}

/* The job and token a request event is about (its own, else its invoke's). */
static int64_t req_job(const qc_history *h, const qc_event *e)
{
    if (e->job != QC_NO_JOB)
        return e->job;
    return e->invoke >= 0 ? h->ev[e->invoke].job : QC_NO_JOB;
}

static const char *req_token(const qc_history *h, const qc_event *e)
{
    if (e->type != QC_EV_INVOKE && e->op == QC_OP_CLAIM)
        return qc_s(e->token); /* the claim's answer: the token it set */
    if (e->type == QC_EV_INVOKE)
        return qc_s(e->token);
    if (e->invoke >= 0 && qc_s(h->ev[e->invoke].token) != NULL)
        return qc_s(h->ev[e->invoke].token); /* the token the request carried */
    return qc_s(e->token);
}

/* 1 when witness row w can be the change request e (its completion or
 * invoke) made. */
static int fits(const qc_history *h, const qc_event *w, const qc_event *e, int tier)
{
    const int tok = h->info.witness_token && tier > 0;
    const char *t = req_token(h, e);

    switch (e->op) {
    case QC_OP_ENQUEUE:
        return qc_x(w->x)->w_actor == QC_ACTOR_CONTROL && qc_x(w->x)->w_change == 'i';
    case QC_OP_REAP:
        return qc_x(w->x)->w_actor == QC_ACTOR_REAPER && state_left(w) &&
               (!tok || t == NULL || same(qc_x(w->x)->w_old_token, t));
    default:
        break;
    }
    if (qc_x(w->x)->w_actor != QC_ACTOR_WORKER || qc_x(w->x)->w_worker != e->worker || qc_x(w->x)->w_inc != e->inc)
        return 0;
    switch (e->op) {
    case QC_OP_CLAIM:
        if (qc_x(w->x)->w_change != 'u')
            return 0;
        /* without a token: a change of state, but not one the library
         * declares as its own (Minion's repair fails an active job in the
         * session of the worker that claims it next) */
        return tok ? same(qc_x(w->x)->w_token, t) && !same(qc_x(w->x)->w_old_token, t)
                   : state_left(w) && !qc__witness_library_change(h, w);
    case QC_OP_COMPLETE:
    case QC_OP_FAIL:
        /* with a token: any change from it that set no new token (a
         * protocol that does not check the state may rewrite done as done) */
        if (tok && tier == 2) /* first the changes that left the state */
            return state_left(w) && same(qc_x(w->x)->w_old_token, t) &&
                   (qc_x(w->x)->w_token == NULL || same(qc_x(w->x)->w_token, t));
        if (tok)
            return (qc_x(w->x)->w_change == 'd' || qc_x(w->x)->w_change == 'u') && same(qc_x(w->x)->w_old_token, t) &&
                   (qc_x(w->x)->w_token == NULL || same(qc_x(w->x)->w_token, t));
        return state_left(w);
    case QC_OP_RENEW:
        return qc_x(w->x)->w_change == 'u' && !state_left(w) && (!tok || same(qc_x(w->x)->w_old_token, t));
    default:
        return 0;
    }
}

typedef struct {
    wref *r;
    size_t n;
    unsigned char *used; /* per h->ev index */
} windex;

/* The first unused row of job that fits e, after row number floor (the
 * row the request's claim made: a complete, fail or renew changes the row
 * after its claim did; -1 none), as an index in h->ev; -1. */
static long find_row(const qc_history *h, const windex *x, const qc_event *e, int64_t floor)
{
    int64_t job = req_job(h, e);
    size_t lo = 0, hi = x->n;

    if (job == QC_NO_JOB)
        return -1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->r[mid].job < job)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* tiers: 2 the token and (complete, fail) a change of state, 1 the
     * token, 0 the session and kind only */
    for (int tier = h->info.witness_token ? 2 : 0; tier >= 0; tier--) {
        if (tier == 2 && e->op != QC_OP_COMPLETE && e->op != QC_OP_FAIL)
            continue;
        for (size_t i = lo; i < x->n && x->r[i].job == job; i++)
            if (x->r[i].wid > floor && !x->used[x->r[i].ev] && fits(h, &h->ev[x->r[i].ev], e, tier))
                return (long)x->r[i].ev;
    }
    return -1;
}

/* The OK claims (rows > 0) of a ledger, sorted by worker, inc, job, seq,
 * to find the claim a complete / fail / renew belongs to. */
typedef struct {
    int worker, inc;
    int64_t job, seq;
    size_t ev;
} cref;

static int cmp_cref(const void *pa, const void *pb)
{
    const cref *a = pa, *b = pb;

    if (a->worker != b->worker)
        return a->worker < b->worker ? -1 : 1;
    if (a->inc != b->inc)
        return a->inc < b->inc ? -1 : 1;
    if (a->job != b->job)
        return a->job < b->job ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The witness row number of the row made by the last OK claim of e's job
 * by e's worker incarnation before e (linked already: claims are linked
 * in seq order before the requests that follow them); -1 none.  Not in
 * the transaction model, whose claim commits with its complete. */
static int64_t claim_floor(const qc_history *h, const cref *c, size_t nc, const qc_event *e)
{
    cref key = {e->worker, e->inc, req_job(h, e), e->seq, 0};
    size_t lo = 0, hi = nc;

    if (e->op != QC_OP_COMPLETE && e->op != QC_OP_FAIL && e->op != QC_OP_RENEW)
        return -1;
    if (!strcmp(h->info.model, "transaction"))
        return -1;
    while (lo < hi) { /* the first claim not before key */
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_cref(&c[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return -1;
    const cref *p = &c[lo - 1];
    if (p->worker != key.worker || p->inc != key.inc || p->job != key.job)
        return -1;
    long w = h->ev[p->ev].w_ev;
    return w >= 0 ? qc_x(h->ev[w].x)->w_id : -1;
}

static int is_change_op(qc_op op)
{
    return op == QC_OP_CLAIM || op == QC_OP_COMPLETE || op == QC_OP_RENEW || op == QC_OP_FAIL ||
           op == QC_OP_REAP || op == QC_OP_ENQUEUE;
}

int qc__witness_merge(qc_history *h)
{
    windex x = {0};
    size_t nw = 0;
    int complete = 0;

    for (size_t i = 0; i < h->n; i++) {
        qc_event *e = &h->ev[i];
        if (e->type == QC_EV_WITNESS) {
            nw++;
            name_actor(e);
            if (qc_x(e->x)->w_row != NULL) {
                char *end;
                long long v = strtoll(qc_x(e->x)->w_row, &end, 10);
                if (end != qc_x(e->x)->w_row && *end == '\0')
                    wx(e)->w_job = (int64_t)v;
            }
        } else if (e->type == QC_EV_NOTE && qc_x(e->x)->note != NULL && !strcmp(qc_x(e->x)->note, "witness")) {
            complete = qc_x(e->x)->complete == 1;
        }
    }
    h->info.witness_complete = h->info.witness && complete;
    if (!h->info.witness)
        return 0;
    if (map_lib_ids(h) == QC_ENOMEM)
        return QC_ENOMEM;
    x.r = malloc((nw ? nw : 1) * sizeof *x.r);
    x.used = calloc(h->n ? h->n : 1, 1);
    if (x.r == NULL || x.used == NULL) {
        free(x.r);
        free(x.used);
        return QC_ENOMEM;
    }
    for (size_t i = 0; i < h->n; i++)
        if (h->ev[i].type == QC_EV_WITNESS)
            x.r[x.n++] = (wref){qc_x(h->ev[i].x)->w_job, qc_x(h->ev[i].x)->w_id, i};
    qsort(x.r, x.n, sizeof *x.r, cmp_wref);
    size_t nc = 0;
    for (size_t i = 0; i < h->n; i++)
        nc += h->ev[i].type == QC_EV_OK && h->ev[i].op == QC_OP_CLAIM && h->ev[i].job != QC_NO_JOB;
    cref *c = malloc((nc ? nc : 1) * sizeof *c);
    if (c == NULL) {
        free(x.r);
        free(x.used);
        return QC_ENOMEM;
    }
    nc = 0;
    for (size_t i = 0; i < h->n; i++)
        if (h->ev[i].type == QC_EV_OK && h->ev[i].op == QC_OP_CLAIM && h->ev[i].job != QC_NO_JOB)
            c[nc++] = (cref){h->ev[i].worker, h->ev[i].inc, h->ev[i].job, h->ev[i].seq, i};
    qsort(c, nc, sizeof *c, cmp_cref);

    /* 1: answers proven to have changed a row */
    for (size_t i = 0; i < h->n; i++) {
        qc_event *e = &h->ev[i];
        if (e->type != QC_EV_OK || !is_change_op(e->op))
            continue;
        if (e->op != QC_OP_REAP && e->op != QC_OP_ENQUEUE && e->rows <= 0)
            continue;
        long w = find_row(h, &x, e, claim_floor(h, c, nc, e));
        if (w >= 0) {
            x.used[w] = 1;
            e->w_ev = w;
        }
    }
    /* 2: outcomes unknown to the client */
    for (size_t i = 0; i < h->n; i++) {
        qc_event *e = &h->ev[i];
        if (e->type != QC_EV_INFO ||
            (e->op != QC_OP_COMPLETE && e->op != QC_OP_RENEW && e->op != QC_OP_FAIL))
            continue;
        long w = find_row(h, &x, e, claim_floor(h, c, nc, e));
        if (w >= 0) {
            x.used[w] = 1;
            e->w_ev = w;
            e->w_resolved = 1;
        } else {
            e->w_resolved = h->info.witness_complete ? 0 : -1;
        }
    }
    free(c);
    free(x.r);
    free(x.used);
    return 0;
}
