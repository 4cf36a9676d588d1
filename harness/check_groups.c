/*
 * check_groups.c - the group checkers (DESIGN.md "Checkers"): jobs that
 * share a group key behave like the messages of a conversation group
 * (SQL Server Service Broker's conversation group locks: only one reader
 * works on a group at a time, and a group's messages are processed in
 * order; procrastinate's "lock": jobs sharing a lock run one at a time, in
 * order, case C14).
 *
 *   group_exclusive  no two live leases on different jobs of one group;
 *   group_order      a group's jobs are completed in enqueue order.
 *
 * A job's group is the "group" of its first OK enqueue or OK claim event
 * (seq order) that carries one; a job without one is in no group.  Both
 * checkers apply whatever the header's "model" (a "transaction" protocol
 * holds its group lock for the claim's transaction, which is its lease).
 *
 * group_exclusive.  The leases are exactly exclusive_claim's
 * (qc__leases_visit in check_claims.c: a lease starts at its claim's server
 * "now", ends at lease_until extended by acknowledged renews, or earlier at
 * a complete / fail that took or may have taken effect, at its "now" or at
 * a lower bound of its time).  The segments of all leases of one group are
 * swept in start order; segment y of job y' overlapping segment x of
 * another job x' (y.start < x.end, x started first) is a violation, one per
 * pair of leases.  Same-job overlaps are exclusive_claim's business.
 *
 * group_order.  Jobs of a group are ordered by their OK enqueue seq; job x
 * precedes job y when x's OK enqueue is before y's enqueue invoke (or y's
 * OK enqueue when the ledger has no invoke: a lone enqueuer writes them in
 * commit order).  A job is completed by its first OK complete with
 * rows > 0, at or before that event (seq) and at its server "now".  Job x
 * may have been completed by any complete that may have taken effect: OK
 * with rows > 0 or unknown, INFO, or an invoke never answered (lost_ack:
 * the first complete commits unanswered and the retry changes nothing).
 * x is proven completed after y when every such complete of x has a server
 * "now" later than y's, or was invoked after y's complete was answered
 * (seq order).  x is proven never completed when it has none and the final
 * snapshot shows it ready or inflight.
 *
 * Several ledgers (qchaos audit of a sharded run): a process's seqs order
 * only its own events, so enqueue precedence is taken only between jobs
 * enqueued in one ledger, and the seq path ("invoked after y's complete
 * was answered") is not used at all; server "now" and the final snapshot
 * still prove an order across ledgers.
 *
 * No false alarm.  A claim without "now" opens no lease (not an
 * opportunity); a job dead in the final snapshot without an acknowledged
 * complete, done without any complete in the ledger, or missing from the
 * snapshot, is not judged by group_order; precedence by enqueue needs the
 * earlier enqueue acknowledged before the later one was sent.
 *
 * Cost: O(n log n): sorts by job and by (group, start) or (group, enqueue
 * seq); group_exclusive's sweep is O(segments + overlapping pairs),
 * group_order judges each job against its group's prefix in O(log k).
  *
 * Innocent explanations: group_exclusive is exclusive_claim's lease model
 * (server times; the clock resolution and a claim's own duration as
 * margins: check_claims.c says why); group_order places a completion only
 * by a server time the complete returned or by a complete sent after
 * another was acknowledged, so a late answer or a paused server cannot
 * invert an order it did not prove.
 */
#include "checkers.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUP_TEXT 40 /* characters of a group key shown in a message */

/* ---- job -> group ------------------------------------------------------ */

/* The event that gave each grouped job its group, sorted by job. */
typedef struct group_map {
    qc__jobref *r;
    size_t n;
} group_map;

static int group_map_build(const qc_history *h, group_map *m)
{
    size_t n = 0, k = 0;

    memset(m, 0, sizeof *m);
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        n += e->type == QC_EV_OK && qc_s(e->group) != NULL &&
             (e->op == QC_OP_ENQUEUE || e->op == QC_OP_CLAIM);
    }
    if (n == 0)
        return 0;
    if ((m->r = malloc(n * sizeof *m->r)) == NULL)
        return QC_ENOMEM;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        int64_t job;
        if (e->type != QC_EV_OK || qc_s(e->group) == NULL)
            continue;
        if (e->op == QC_OP_CLAIM && qc__is_claim(e))
            m->r[k++] = (qc__jobref){e->job, i};
        else if (e->op == QC_OP_ENQUEUE && (job = qc__event_job(h, e)) != QC_NO_JOB)
            m->r[k++] = (qc__jobref){job, i};
    }
    qc__jobrefs_sort(m->r, k);
    n = 0;
    for (size_t i = 0; i < k; i++)
        if (n == 0 || m->r[n - 1].job != m->r[i].job)
            m->r[n++] = m->r[i]; /* the first in seq order */
    m->n = n;
    return 0;
}

static const char *group_of(const qc_history *h, const group_map *m, int64_t job)
{
    size_t lo = 0, hi = m->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->r[mid].job < job)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->n && m->r[lo].job == job ? qc_s(h->ev[m->r[lo].ev].group) : NULL;
}

/* ---- group_exclusive --------------------------------------------------- */

typedef struct glease {
    qc__lease l;
    int64_t job;
    const char *group;
} glease;

/* One segment of one lease of a grouped job. */
typedef struct gitem {
    const char *group;
    size_t gid; /* group number, set after sorting */
    double s, e, slack; /* slack: qc__lease_seg_slack (a late-read "now") */
    size_t lease;
    int seg;
} gitem;

/* Reported pairs of leases (lo, hi): open addressing, SIZE_MAX = empty. */
typedef struct pair_set {
    size_t *k; /* 2 * cap entries */
    size_t cap, n;
} pair_set;

typedef struct gx_scan {
    group_map gm;
    qc_check *c;
    glease *l;
    size_t nl, capl;
    size_t jobs;
    long unplaced;
} gx_scan;

static size_t pair_hash(size_t lo, size_t hi, size_t mask)
{
    uint64_t x = (uint64_t)lo * 0x9E3779B97F4A7C15ull ^ (uint64_t)hi * 0xC2B2AE3D27D4EB4Full;

    x ^= x >> 29;
    return (size_t)x & mask;
}

/* Returns 1 when the pair (a, b) was seen before, else records it and
 * returns 0; *err is set to QC_ENOMEM (and 1 returned) when it cannot. */
static int pair_seen(pair_set *ps, size_t a, size_t b, int *err)
{
    size_t lo = a < b ? a : b, hi = a < b ? b : a, j;

    if ((ps->n + 1) * 2 > ps->cap) {
        size_t cap = ps->cap ? ps->cap * 2 : 64;
        size_t *k = malloc(2 * cap * sizeof *k);
        if (k == NULL) {
            *err = QC_ENOMEM;
            return 1;
        }
        for (size_t i = 0; i < 2 * cap; i++)
            k[i] = SIZE_MAX;
        for (size_t i = 0; i < ps->cap; i++) {
            if (ps->k[2 * i] == SIZE_MAX)
                continue;
            for (j = pair_hash(ps->k[2 * i], ps->k[2 * i + 1], cap - 1); k[2 * j] != SIZE_MAX;
                 j = (j + 1) & (cap - 1))
                ;
            k[2 * j] = ps->k[2 * i];
            k[2 * j + 1] = ps->k[2 * i + 1];
        }
        free(ps->k);
        ps->k = k;
        ps->cap = cap;
    }
    for (j = pair_hash(lo, hi, ps->cap - 1); ps->k[2 * j] != SIZE_MAX; j = (j + 1) & (ps->cap - 1))
        if (ps->k[2 * j] == lo && ps->k[2 * j + 1] == hi)
            return 1;
    ps->k[2 * j] = lo;
    ps->k[2 * j + 1] = hi;
    ps->n++;
    return 0;
}

/* Keeps the leases of a grouped job (a qc__lease_visit_fn). */
static int keep_leases(void *arg, const qc_history *h, int64_t job, const qc__lease *l, size_t n)
{
    gx_scan *gs = arg;
    const char *group = group_of(h, &gs->gm, job);

    if (group == NULL)
        return 0;
    if (qc__grow((void **)&gs->l, &gs->capl, gs->nl + n, sizeof *gs->l) != 0)
        return QC_ENOMEM;
    gs->jobs++;
    for (size_t k = 0; k < n; k++) {
        if (l[k].placed)
            gs->c->opportunities++;
        else
            gs->unplaced++;
        gs->l[gs->nl++] = (glease){l[k], job, group};
    }
    return 0;
}

static int cmp_gitem(const void *pa, const void *pb)
{
    const gitem *a = pa, *b = pb;
    int g = a->group == b->group ? 0 : strcmp(a->group, b->group);

    if (g != 0)
        return g;
    if (a->s != b->s)
        return a->s < b->s ? -1 : 1;
    if (a->lease != b->lease)
        return a->lease < b->lease ? -1 : 1;
    return a->seg - b->seg;
}

static void report_group_overlap(qc_check *c, const qc_history *h, const glease *ga,
                                 const qc__lease_seg *x, const glease *gb, const qc__lease_seg *y)
{
    const qc__lease *a = &ga->l, *b = &gb->l;
    const qc_event *ca = &h->ev[a->claim], *cb = &h->ev[b->claim];
    int64_t seqs[5];
    int ns = 0;
    char end[160], begin[80];

    seqs[ns++] = ca->seq;
    seqs[ns++] = cb->seq;
    seqs[ns++] = h->ev[x->s_ev].seq;
    seqs[ns++] = h->ev[y->s_ev].seq;
    if (x->e_ev >= 0)
        seqs[ns++] = h->ev[x->e_ev].seq;
    qc__lease_describe_end(end, sizeof end, h, a, x);
    if (y->s_ev == b->claim)
        snprintf(begin, sizeof begin, "at +%.0f ms", y->s - a->start);
    else
        snprintf(begin, sizeof begin, "renewed at seq %lld, +%.0f ms",
                 (long long)h->ev[y->s_ev].seq, y->s - a->start);
    qc__check_violation(c, gb->job, seqs, ns,
                        "group '%.*s': job %lld claimed by worker %d (seq %lld, %s) and job "
                        "%lld by worker %d (seq %lld, %s) while the first lease was live",
                        GROUP_TEXT, ga->group, (long long)ga->job, ca->worker, (long long)ca->seq,
                        end, (long long)gb->job, cb->worker, (long long)cb->seq, begin);
}

/* Sweeps the segments of all grouped leases, group by group. */
static int sweep_groups(gx_scan *gs, const qc_history *h, size_t *ngroups)
{
    double res = qc__clock_resolution(h); /* margin of an overlap, as exclusive_claim's */
    gitem *it = NULL;
    pair_set ps = {NULL, 0, 0};
    size_t n = 0;
    int rc = 0;

    *ngroups = 0;
    for (size_t k = 0; k < gs->nl; k++)
        n += (size_t)gs->l[k].l.nseg;
    if (n == 0)
        return 0;
    if ((it = malloc(n * sizeof *it)) == NULL)
        return QC_ENOMEM;
    n = 0;
    for (size_t k = 0; k < gs->nl; k++)
        for (int s = 0; s < gs->l[k].l.nseg; s++)
            it[n++] = (gitem){gs->l[k].group,
                              0,
                              gs->l[k].l.seg[s].s,
                              gs->l[k].l.seg[s].e,
                              qc__lease_seg_slack(h, &gs->l[k].l, &gs->l[k].l.seg[s]),
                              k,
                              s};
    qsort(it, n, sizeof *it, cmp_gitem);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && strcmp(it[i - 1].group, it[i].group) != 0)
            it[i].gid = it[i - 1].gid + 1;
        else if (i > 0)
            it[i].gid = it[i - 1].gid;
    }
    *ngroups = it[n - 1].gid + 1;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const gitem *x = &it[i];
        for (size_t j = i + 1; j < n && it[j].gid == x->gid && it[j].s + res < x->e && rc == 0;
             j++) {
            const gitem *y = &it[j];
            const glease *a = &gs->l[x->lease], *b = &gs->l[y->lease];
            if (y->s + y->slack + res >= x->e)
                continue; /* it may have begun only when x had ended */
            if (a->job == b->job || pair_seen(&ps, x->lease, y->lease, &rc))
                continue;
            report_group_overlap(gs->c, h, a, &a->l.seg[x->seg], b, &b->l.seg[y->seg]);
        }
    }
    free(ps.k);
    free(it);
    return rc;
}

int qc_check_group_exclusive(const qc_history *h, qc_check *out)
{
    gx_scan gs;
    size_t ngroups = 0;
    int rc;

    memset(out, 0, sizeof *out);
    memset(&gs, 0, sizeof gs);
    out->name = "group_exclusive";
    gs.c = out;
    rc = group_map_build(h, &gs.gm);
    if (rc == 0 && gs.gm.n > 0)
        rc = qc__leases_visit(h, keep_leases, &gs);
    if (rc == 0)
        rc = sweep_groups(&gs, h, &ngroups);
    free(gs.gm.r);
    free(gs.l);
    if (rc != 0) {
        free(out->v);
        out->v = NULL;
        out->nstored = 0;
        return rc;
    }
    int len = snprintf(out->summary, sizeof out->summary,
                       "%ld claims with a server time on %zu grouped jobs in %zu groups, "
                       "%ld overlapping lease pairs of different jobs",
                       out->opportunities, gs.jobs, ngroups, out->nviolations);
    if (gs.unplaced > 0 && len > 0 && (size_t)len < sizeof out->summary)
        snprintf(out->summary + len, sizeof out->summary - (size_t)len,
                 ", %ld claims without a server time not checked", gs.unplaced);
    qc__check_finish(out);
    return 0;
}

/* ---- group_order ------------------------------------------------------- */

/* What the ledger says about one grouped, enqueued job. */
typedef struct gjob {
    int64_t job;
    const char *group;
    long enq;             /* its first OK enqueue event */
    int file;             /* that event's ledger: enqueue order is known within one */
    int64_t enq_seq;      /* that event's seq */
    int64_t enq_bound;    /* an earlier job's OK enqueue must precede this
                             seq: its enqueue invoke's, else enq_seq */
    long done;            /* first OK complete with rows > 0; -1 none */
    int nposs;            /* completes that may have taken effect */
    int now_unknown;      /* one of them has no server "now" */
    int seq_unknown;      /* one of them has no invoke in the ledger */
    double lo_now;        /* earliest "now" of them */
    long lo_now_ev;       /* the complete with it; -1 when unknown */
    int64_t lo_seq;       /* earliest invoke seq of them */
    long lo_seq_ev;       /* the complete with that invoke; -1 unknown */
    const qc_event *snap; /* final snapshot row; NULL none */
    int pending;          /* never completed: no such complete, ready or
                             inflight in the final snapshot */
} gjob;

/* Prefix summary of a group's jobs in enqueue order: over the first k
 * jobs, the latest proven completion bounds and the first pending job. */
typedef struct gprefix {
    long now_at;  /* job index with the greatest lo_now; -1 none */
    long seq_at;  /* job index with the greatest lo_seq; -1 none */
    long pend_at; /* first pending job; -1 none */
    long judged;  /* jobs that can be judged */
} gprefix;

static int cmp_gjob_order(const void *pa, const void *pb)
{
    const gjob *a = pa, *b = pb;
    int g = a->group == b->group ? 0 : strcmp(a->group, b->group);

    if (g != 0)
        return g;
    if (a->file != b->file)
        return a->file < b->file ? -1 : 1;
    if (a->enq_seq != b->enq_seq)
        return a->enq_seq < b->enq_seq ? -1 : 1;
    return a->job < b->job ? -1 : a->job > b->job;
}

static gjob *gjob_find(gjob *j, size_t n, int64_t job)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (j[mid].job < job)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && j[lo].job == job ? &j[lo] : NULL;
}

/* The grouped jobs with an OK enqueue, sorted by job; *out is NULL when
 * there are none. */
static int gjobs_build(const qc_history *h, const group_map *gm, gjob **out, size_t *nout)
{
    qc__jobref *r = NULL;
    gjob *j = NULL;
    size_t n = 0, k = 0;

    *out = NULL;
    *nout = 0;
    if (gm->n == 0)
        return 0;
    if ((r = malloc(h->n * sizeof *r)) == NULL)
        return QC_ENOMEM;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        int64_t job;
        if (e->type == QC_EV_OK && e->op == QC_OP_ENQUEUE &&
            (job = qc__event_job(h, e)) != QC_NO_JOB && group_of(h, gm, job) != NULL)
            r[n++] = (qc__jobref){job, i};
    }
    qc__jobrefs_sort(r, n);
    if (n > 0 && (j = calloc(n, sizeof *j)) == NULL) {
        free(r);
        return QC_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (k > 0 && j[k - 1].job == r[i].job)
            continue; /* the first enqueue of a job orders it */
        const qc_event *e = &h->ev[r[i].ev], *inv = qc__invoke_of(h, e);
        gjob *g = &j[k++];
        g->job = r[i].job;
        g->group = group_of(h, gm, r[i].job);
        g->enq = (long)r[i].ev;
        g->file = e->file;
        g->enq_seq = e->seq;
        g->enq_bound = inv != NULL && inv->seq < e->seq ? inv->seq : e->seq;
        g->done = g->lo_now_ev = g->lo_seq_ev = -1;
    }
    free(r);
    *out = j;
    *nout = k;
    return 0;
}

/* Reads every complete of the grouped jobs (seq order). */
static void gjobs_completes(const qc_history *h, const unsigned char *answered, gjob *j, size_t n)
{
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i], *inv;
        gjob *g;
        if (e->op != QC_OP_COMPLETE)
            continue;
        if (!(e->type == QC_EV_OK && e->rows != 0) && e->type != QC_EV_INFO &&
            !(e->type == QC_EV_INVOKE && !answered[i]))
            continue; /* it did not complete the job: FAIL, rows 0, answered invoke */
        if ((g = gjob_find(j, n, qc__event_job(h, e))) == NULL)
            continue;
        if (e->type == QC_EV_OK && e->rows > 0 && g->done < 0)
            g->done = (long)i;
        g->nposs++;
        if (e->type == QC_EV_OK && qc__has_time(e->now)) {
            if (g->lo_now_ev < 0 || e->now < g->lo_now) {
                g->lo_now = e->now;
                g->lo_now_ev = (long)i;
            }
        } else {
            g->now_unknown = 1;
        }
        if ((inv = qc__invoke_of(h, e)) != NULL) {
            if (g->lo_seq_ev < 0 || inv->seq < g->lo_seq) {
                g->lo_seq = inv->seq;
                g->lo_seq_ev = (long)i;
            }
        } else {
            g->seq_unknown = 1;
        }
    }
}

/* Decides what each job can prove as an earlier job: its completion bounds
 * (kept only when every possible completion has them), or pending. */
static void gjobs_classify(const qc_history *h, const qc__snapshot *snap, gjob *j, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        gjob *g = &j[k];
        const char *st;
        g->snap = qc__snapshot_find(h, snap, g->job);
        st = g->snap != NULL ? qc_s(g->snap->state) : NULL;
        if (g->done < 0 && st != NULL && strcmp(st, "dead") == 0)
            g->nposs = 0; /* ended dead: never completed, not judged */
        if (g->nposs == 0 || g->now_unknown)
            g->lo_now_ev = -1;
        if (g->nposs == 0 || g->seq_unknown)
            g->lo_seq_ev = -1;
        g->pending = g->done < 0 && g->nposs == 0 && st != NULL &&
                     (strcmp(st, "ready") == 0 || strcmp(st, "inflight") == 0);
    }
}

/* How the ledger proves that job x was completed after job y, or never. */
enum order_proof {
    BY_NOW, /* every possible completion of x has a later server "now" */
    BY_SEQ, /* every possible completion of x was sent after y's was answered */
    NEVER   /* x was never completed: ready or inflight at the end */
};

static void report_order(qc_check *c, const qc_history *h, const gjob *x, const gjob *y,
                         enum order_proof proof)
{
    const qc_event *yd = &h->ev[y->done];
    int64_t seqs[6];
    int ns = 0;
    char ytext[64] = "", tail[128];

    seqs[ns++] = h->ev[x->enq].seq;
    seqs[ns++] = h->ev[y->enq].seq;
    seqs[ns++] = yd->seq;
    if (qc__has_time(yd->now))
        snprintf(ytext, sizeof ytext, ", server time %.0f", yd->now);
    if (proof == BY_NOW) {
        const qc_event *xd = &h->ev[x->lo_now_ev];
        seqs[ns++] = xd->seq;
        snprintf(tail, sizeof tail, "which completed later (seq %lld, server time %.0f)",
                 (long long)xd->seq, xd->now);
    } else if (proof == BY_SEQ) {
        const qc_event *xc = &h->ev[x->lo_seq_ev];
        seqs[ns++] = x->lo_seq;
        seqs[ns++] = xc->seq;
        snprintf(tail, sizeof tail, "whose completes were all sent after that (first at seq %lld)",
                 (long long)x->lo_seq);
    } else {
        seqs[ns++] = x->snap->seq;
        snprintf(tail, sizeof tail,
                 "which was never completed (%s in the final snapshot, seq %lld)", qc_s(x->snap->state),
                 (long long)x->snap->seq);
    }
    qc__check_violation(c, y->job, seqs, ns,
                        "group '%.*s': job %lld (enqueued seq %lld) completed at seq %lld%s "
                        "before job %lld (enqueued seq %lld), %s",
                        GROUP_TEXT, y->group, (long long)y->job, (long long)h->ev[y->enq].seq,
                        (long long)yd->seq, ytext, (long long)x->job, (long long)h->ev[x->enq].seq,
                        tail);
}

/* Judges the completed jobs of one group j[0..n) (in enqueue order) against
 * the jobs enqueued before them; p has n + 1 entries. */
static void judge_group(qc_check *c, const qc_history *h, const gjob *j, size_t n, gprefix *p,
                        double res)
{
    p[0] = (gprefix){-1, -1, -1, 0};
    for (size_t k = 0; k < n; k++) {
        const gjob *g = &j[k];
        gprefix q = p[k];
        if (g->lo_now_ev >= 0 && (q.now_at < 0 || g->lo_now > j[q.now_at].lo_now))
            q.now_at = (long)k;
        if (g->lo_seq_ev >= 0 && (q.seq_at < 0 || g->lo_seq > j[q.seq_at].lo_seq))
            q.seq_at = (long)k;
        if (g->pending && q.pend_at < 0)
            q.pend_at = (long)k;
        q.judged += g->lo_now_ev >= 0 || g->lo_seq_ev >= 0 || g->pending;
        p[k + 1] = q;
    }
    for (size_t k = 0; k < n; k++) {
        const gjob *y = &j[k];
        const qc_event *yd;
        size_t lo = 0, hi = k;
        if (y->done < 0)
            continue;
        /* The jobs whose enqueue was acknowledged before y's was sent. */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (j[mid].enq_seq < y->enq_bound)
                lo = mid + 1;
            else
                hi = mid;
        }
        const gprefix *q = &p[lo];
        if (q->judged == 0)
            continue;
        c->opportunities++;
        yd = &h->ev[y->done];
        /* y's complete may have committed up to its request's duration
         * after its "now" (now() = its transaction's start), and clocks
         * have a resolution: x is later only beyond both */
        const qc_event *yinv = qc__invoke_of(h, yd);
        double margin = res + (yinv != NULL && qc__has_time(yinv->t) && qc__has_time(yd->t) &&
                                       yd->t > yinv->t
                                   ? (yd->t - yinv->t) * 1.001
                                   : 0);
        if (q->now_at >= 0 && qc__has_time(yd->now) && j[q->now_at].lo_now > yd->now + margin)
            report_order(c, h, &j[q->now_at], y, BY_NOW);
        else if (q->seq_at >= 0 && j[q->seq_at].lo_seq > yd->seq)
            report_order(c, h, &j[q->seq_at], y, BY_SEQ);
        else if (q->pend_at >= 0)
            report_order(c, h, &j[q->pend_at], y, NEVER);
    }
}

int qc_check_group_order(const qc_history *h, qc_check *out)
{
    group_map gm;
    qc__snapshot snap;
    unsigned char *answered = NULL;
    gjob *j = NULL;
    gprefix *p = NULL;
    size_t n = 0, ngroups = 0, unjudged = 0;
    int rc;

    memset(out, 0, sizeof *out);
    memset(&snap, 0, sizeof snap);
    out->name = "group_order";
    double res = qc__clock_resolution(h); /* margin of a "later" server time */
    rc = group_map_build(h, &gm);
    if (rc == 0)
        rc = gjobs_build(h, &gm, &j, &n);
    if (rc != 0 || n == 0)
        goto out;
    answered = qc__answered_invokes(h);
    p = malloc((n + 1) * sizeof *p);
    if (answered == NULL || p == NULL || qc__snapshot_build(h, &snap) != 0) {
        rc = QC_ENOMEM;
        goto out;
    }
    gjobs_completes(h, answered, j, n);
    gjobs_classify(h, &snap, j, n);
    qsort(j, n, sizeof *j, cmp_gjob_order);
    /* Several ledgers (a sharded run): the seq path compares one job's
     * complete invokes with another's complete answer, which may be in two
     * ledgers whose seqs do not order; only server times and the final
     * snapshot prove anything across them. */
    int several = 0;
    for (size_t i = 0; i < h->n && !several; i++)
        several = h->ev[i].file != h->ev[0].file;
    for (size_t k = 0; several && k < n; k++)
        j[k].lo_seq_ev = -1;
    for (size_t a = 0, b; a < n; a = b) {
        /* one group's jobs enqueued in one ledger: enqueue order is only
         * known within a ledger */
        for (b = a + 1; b < n && strcmp(j[b].group, j[a].group) == 0 && j[b].file == j[a].file;
             b++)
            ;
        if (a == 0 || strcmp(j[a - 1].group, j[a].group) != 0)
            ngroups++;
        judge_group(out, h, j + a, b - a, p, res);
    }
    for (size_t k = 0; k < n; k++)
        unjudged += j[k].done < 0 && j[k].lo_now_ev < 0 && j[k].lo_seq_ev < 0 && !j[k].pending;
out:
    free(gm.r);
    free(j);
    free(p);
    free(answered);
    qc__snapshot_fini(&snap);
    if (rc != 0) {
        free(out->v);
        out->v = NULL;
        out->nstored = 0;
        return rc;
    }
    int len = snprintf(out->summary, sizeof out->summary,
                       "%zu grouped jobs in %zu groups, %ld completions judged against "
                       "earlier-enqueued jobs, %ld completed out of enqueue order",
                       n, ngroups, out->opportunities, out->nviolations);
    if (unjudged > 0 && len > 0 && (size_t)len < sizeof out->summary)
        snprintf(out->summary + len, sizeof out->summary - (size_t)len,
                 ", %zu jobs neither completed nor pending (dead, or not placed)", unjudged);
    qc__check_finish(out);
    return 0;
}
