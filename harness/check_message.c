/*
 * check_message.c - message_once (shared/cases.md C23): the effect of one
 * logical message is applied by one of its physical copies at most.
 *
 * With [workload] copies (or copies_rate) every message is enqueued as
 * several jobs, adjacent, each with its own job id, row and op key, all
 * sharing one :message_id; each ok enqueue event names its message
 * ("message").  A queue that promises deduplication (NServiceBus's outbox,
 * the protocol's dedup step) must let one copy run its handler and
 * suppress the others.  The rule: two or more distinct copies of one
 * message with an applied effect ("effect", "applied": true) is a
 * violation, proven by each copy's claim, its dedup answer (when the
 * protocol has one) and its applied effect.
 *
 * What it does not judge, and why:
 *   - a copy that applied its effect twice (a redelivery of one job after
 *     a crash): that is effects_once's rule, with its excuses for a lease
 *     that ran out; message_once counts copies, not deliveries;
 *   - a message none of whose copies applied an effect (a suppressed copy
 *     whose owner died): liveness, not this rule.
 * No time and no order is used (two copies that both applied an effect
 * did so whenever it was), so a starved client, a paused server or a
 * coarse clock cannot make a correct queue fail it; nor can a lost answer
 * (an effect event is the harness's own delivery, never an unknown
 * outcome).  A protocol without a dedup step fails it as soon as two
 * copies of a message run: its queue does not deduplicate, which is the
 * right value for it.
 *
 * Opportunities: messages with two or more copies claimed (OK claim events
 * of two of its jobs).  NOT_APPLICABLE when no message was enqueued in
 * more than one copy (copies = 1, or a ledger older than copies: other
 * runs' verdicts and exit codes stay as they were); INCONCLUSIVE when
 * copies were enqueued but no message had two of them claimed.
 */
#include "checkers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One copy: the job of an ok enqueue with a message, and what the ledger
 * says happened to it. */
typedef struct copy {
    const char *msg; /* interned; compare with strcmp */
    int64_t job;
    long claim;  /* index in h->ev of its first OK claim; -1 none */
    long effect; /* index of its first applied effect; -1 none */
} copy;

static int cmp_copy(const void *pa, const void *pb)
{
    const copy *a = pa, *b = pb;
    int c = strcmp(a->msg, b->msg);

    if (c != 0)
        return c;
    return a->job < b->job ? -1 : a->job > b->job;
}

/* Index into cs (sorted by message) sorted by job, for lookups. */
typedef struct by_job {
    int64_t job;
    size_t at;
} by_job;

static int cmp_by_job(const void *pa, const void *pb)
{
    const by_job *a = pa, *b = pb;

    return a->job < b->job ? -1 : a->job > b->job;
}

static copy *find(copy *cs, const by_job *bj, size_t n, int64_t job)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (bj[mid].job < job)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && bj[lo].job == job ? &cs[bj[lo].at] : NULL;
}

/* The run that applied effect ev: the latest OK claim of its job by the
 * same worker incarnation (same ledger) before it, and the OK dedup of
 * that claim's run between the two (-1 when none). */
static void run_of(const qc_history *h, size_t ev, long *claim, long *dedup)
{
    const qc_event *x = &h->ev[ev];

    *claim = *dedup = -1;
    for (size_t i = ev; i-- > 0;) {
        const qc_event *e = &h->ev[i];
        if (e->file != x->file || e->worker != x->worker || e->inc != x->inc ||
            e->type != QC_EV_OK || qc__event_job(h, e) != x->job)
            continue;
        if (e->op == QC_OP_DEDUP && *dedup < 0)
            *dedup = (long)i;
        if (e->op == QC_OP_CLAIM && e->rows != 0) {
            *claim = (long)i;
            return;
        }
    }
    *dedup = -1; /* no claim found: a dedup without one proves nothing here */
}

/* Appends ", job J (worker W: claim seq A, dedup run seq B, effect seq C)"
 * for copy c to list, and its seqs to seqs. */
static void describe(const qc_history *h, const copy *c, char *list, size_t n, size_t *len,
                     int64_t *seqs, int *ns)
{
    const qc_event *eff = &h->ev[c->effect];
    long claim, dedup;
    char part[160];
    int o;

    run_of(h, (size_t)c->effect, &claim, &dedup);
    o = snprintf(part, sizeof part, "job %lld (worker %d:", (long long)c->job, eff->worker);
    if (claim >= 0 && *ns < QC_MAX_EVIDENCE) {
        seqs[(*ns)++] = h->ev[claim].seq;
        o += snprintf(part + o, sizeof part - (size_t)o, " claim seq %lld,",
                      (long long)h->ev[claim].seq);
    }
    if (dedup >= 0 && *ns < QC_MAX_EVIDENCE && o < (int)sizeof part) {
        seqs[(*ns)++] = h->ev[dedup].seq;
        o += snprintf(part + o, sizeof part - (size_t)o, " dedup said run seq %lld,",
                      (long long)h->ev[dedup].seq);
    }
    if (*ns < QC_MAX_EVIDENCE)
        seqs[(*ns)++] = eff->seq;
    if (o < (int)sizeof part)
        snprintf(part + o, sizeof part - (size_t)o, " effect seq %lld)", (long long)eff->seq);
    if (*len < n)
        *len += (size_t)snprintf(list + *len, n - *len, "%s%s", *len ? ", " : "", part);
}

int qc_check_message_once(const qc_history *h, qc_check *out)
{
    copy *cs = NULL;
    by_job *bj = NULL;
    size_t n = 0, cap = 0;
    long messages = 0, multi = 0, suppressed = 0, dedups = 0;
    int rc = 0;

    memset(out, 0, sizeof *out);
    out->name = "message_once";
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type != QC_EV_OK || e->op != QC_OP_ENQUEUE || qc_x(e->x)->message == NULL ||
            e->job == QC_NO_JOB)
            continue;
        if (qc__grow((void **)&cs, &cap, n + 1, sizeof *cs) != 0) {
            rc = QC_ENOMEM;
            goto out;
        }
        cs[n++] = (copy){qc_x(e->x)->message, e->job, -1, -1};
    }
    if (n > 1)
        qsort(cs, n, sizeof *cs, cmp_copy);
    /* one row per job (a job enqueued twice in the ledger is one copy) */
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || cs[i].job != cs[k - 1].job || strcmp(cs[i].msg, cs[k - 1].msg) != 0)
            cs[k++] = cs[i];
    n = k;
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && strcmp(cs[b].msg, cs[a].msg) == 0; b++)
            ;
        messages++;
        multi += b - a > 1;
    }
    if (multi == 0) {
        out->verdict = QC_NOT_APPLICABLE;
        snprintf(out->summary, sizeof out->summary,
                 "no message was enqueued in more than one copy ([workload] "
                 "copies = 1)");
        goto out;
    }
    if ((bj = malloc(n * sizeof *bj)) == NULL) {
        rc = QC_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        bj[i] = (by_job){cs[i].job, i};
    qsort(bj, n, sizeof *bj, cmp_by_job);
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        copy *c;
        if (e->type == QC_EV_OK && e->op == QC_OP_DEDUP) {
            dedups++;
            suppressed += qc_x(e->x)->run == 0;
            continue;
        }
        if (qc__is_claim(e)) {
            if ((c = find(cs, bj, n, e->job)) != NULL && c->claim < 0)
                c->claim = (long)i;
        } else if (e->type == QC_EV_EFFECT && e->applied == 1 && e->job != QC_NO_JOB) {
            if ((c = find(cs, bj, n, e->job)) != NULL && c->effect < 0)
                c->effect = (long)i;
        }
    }
    for (size_t a = 0, b; a < n; a = b) {
        size_t claimed = 0, applied = 0;
        for (b = a + 1; b < n && strcmp(cs[b].msg, cs[a].msg) == 0; b++)
            ;
        for (size_t i = a; i < b; i++) {
            claimed += cs[i].claim >= 0;
            applied += cs[i].effect >= 0;
        }
        out->opportunities += claimed > 1;
        if (applied < 2)
            continue;
        /* the copies that applied it (the first QC_MAX_EVIDENCE by job),
         * in the order of their effects */
        const copy *first[QC_MAX_EVIDENCE];
        size_t nf = 0;
        for (size_t i = a; i < b && nf < QC_MAX_EVIDENCE; i++) {
            if (cs[i].effect < 0)
                continue;
            size_t j = nf++;
            for (; j > 0 && first[j - 1]->effect > cs[i].effect; j--)
                first[j] = first[j - 1];
            first[j] = &cs[i];
        }
        int64_t seqs[QC_MAX_EVIDENCE];
        int ns = 0;
        char list[600];
        size_t len = 0, told = 0;
        list[0] = '\0';
        if (out->nstored < QC_MAX_STORED_VIOLATIONS)
            for (; told < nf && ns + 3 <= QC_MAX_EVIDENCE; told++)
                describe(h, first[told], list, sizeof list, &len, seqs, &ns);
        qc__check_violation(out, first[0]->job, seqs, ns,
                            "message %.36s applied by %zu of its %zu copies: %s%s", cs[a].msg,
                            applied, b - a, list, told < applied ? ", ..." : "");
    }
    snprintf(out->summary, sizeof out->summary,
             "%ld messages in %zu copies (%ld with more than one), %ld with two or more copies "
             "claimed, %ld dedup answers (%ld copies suppressed), %ld messages applied by more "
             "than one copy",
             messages, n, multi, out->opportunities, dedups, suppressed, out->nviolations);
    qc__check_finish(out);
    if (out->verdict == QC_INCONCLUSIVE)
        snprintf(out->summary, sizeof out->summary,
                 "%ld messages in %zu copies (%ld with more than one), but no message had two of "
                 "its copies claimed",
                 messages, n, multi);
out:
    free(bj);
    free(cs);
    return rc;
}
