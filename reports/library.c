/*
 * library.c - the "Library behaviour" section of report.md / report.html
 * for a queue library run through an adapter with the witness on (issue
 * 13): three findings, each with the witness rows that show it.
 *
 *   stale      each stall_beyond_lease fault: the stalled worker's first
 *              complete / fail of its job after the stall; honoured when
 *              the witness has its row change (the request's linked row,
 *              witness_merge.c), and then whether another worker had
 *              claimed the job in between (an OK claim of the job by
 *              another incarnation between the fault and the request);
 *              refused when no row change of its session is linked to it;
 *   killed     each kill_after_claim fault: from the witness row of the
 *              killed worker's claim, the first later row of the job that
 *              left the claimed state (the library gave the job back:
 *              expiry, repair), and the next claim by another session;
 *              times are differences of two server_ms (server clock, ms);
 *   empty      per worker incarnation, streaks of empty fetches (OK claims
 *              with rows 0: the adapter's `polled`, one per fetch the
 *              library sent): polls per second over each streak of 3 or
 *              more spanning at least 1 s (client clock), median and max.
 *
 * Nothing is judged here (the checkers judge); these are descriptions of
 * what the library did, for docs/adapters.md to hold against its code.
 * Without an adapter or without the witness the section is not written.
 */
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROW_TEXT 1400

typedef struct {
    char stale[ROW_TEXT], killed[ROW_TEXT], empty[ROW_TEXT];
} findings;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static const qc_event *row_of(const qc_history *h, const qc_event *e)
{
    return e != NULL && e->w_ev >= 0 && (size_t)e->w_ev < h->n ? &h->ev[e->w_ev] : NULL;
}

static const char *nz(const char *s)
{
    return s != NULL ? s : "NULL";
}

/* "row 76 (qchaos-w3.1: active -> completed)" */
static void row_words(const qc_event *w, char *buf, size_t n)
{
    snprintf(buf, n, "witness row %lld (%s: %s -> %s)", (long long)qc_x(w->x)->w_id, nz(qc_x(w->x)->w_session),
             nz(qc_x(w->x)->w_old_state), nz(qc_x(w->x)->w_state));
}

/* The answer (ok / fail / info) of invoke i, or NULL. */
static const qc_event *answer_of(const qc_history *h, size_t i)
{
    for (size_t k = i + 1; k < h->n; k++)
        if ((h->ev[k].type == QC_EV_OK || h->ev[k].type == QC_EV_FAIL ||
             h->ev[k].type == QC_EV_INFO) &&
            h->ev[k].invoke == (long)i)
            return &h->ev[k];
    return NULL;
}

/* Appends a to buf (size n), cut at the end of buf. */
static void add(char *buf, size_t n, const char *a)
{
    size_t len = strlen(buf), m = strlen(a);
    if (len + 1 >= n)
        return;
    if (m > n - len - 1)
        m = n - len - 1;
    memcpy(buf + len, a, m);
    buf[len + m] = '\0';
}

static void stale_finding(const qc_history *h, char *out, size_t n)
{
    long stalls = 0, honoured_taken = 0, honoured = 0, refused = 0, none = 0;
    char ex[4][600] = {"", "", "", ""};

    for (size_t i = 0; i < h->n; i++) {
        const qc_event *f = &h->ev[i];
        if (f->type != QC_EV_FAULT || qc_x(f->x)->fault == NULL ||
            strcmp(qc_x(f->x)->fault, "stall_beyond_lease"))
            continue;
        stalls++;
        const qc_event *inv = NULL, *ans = NULL, *other = NULL;
        for (size_t k = i + 1; k < h->n && inv == NULL; k++) {
            const qc_event *e = &h->ev[k];
            if (e->job != f->job)
                continue;
            if (e->type == QC_EV_OK && e->op == QC_OP_CLAIM && e->rows > 0 &&
                (e->worker != f->worker || e->inc != f->inc) && other == NULL)
                other = e;
            if (e->type == QC_EV_INVOKE && e->worker == f->worker && e->inc == f->inc &&
                (e->op == QC_OP_COMPLETE || e->op == QC_OP_FAIL)) {
                inv = e;
                ans = answer_of(h, k);
            }
        }
        if (inv == NULL) {
            none++;
            if (!ex[3][0])
                snprintf(ex[3], sizeof ex[3],
                         "job %lld: the stalled worker %d.%d sent no complete or fail of it "
                         "before the run ended%s",
                         (long long)f->job, f->worker, f->inc,
                         other != NULL ? " (another worker had claimed it again)" : "");
            continue;
        }
        const qc_event *w = row_of(h, ans);
        if (w == NULL)
            w = row_of(h, inv);
        char rw[200], cw[200] = "";
        if (w != NULL) {
            row_words(w, rw, sizeof rw);
            if (other != NULL && row_of(h, other) != NULL)
                row_words(row_of(h, other), cw, sizeof cw);
            if (other != NULL && other->seq < inv->seq) {
                honoured_taken++;
                if (!ex[0][0])
                    snprintf(ex[0], sizeof ex[0],
                             "job %lld: worker %d.%d's %s after its lease (seq %lld) committed, "
                             "%s, although worker %d.%d had claimed the job again (seq %lld%s%s)",
                             (long long)f->job, f->worker, f->inc, qc_op_name(inv->op),
                             (long long)inv->seq, rw, other->worker, other->inc,
                             (long long)other->seq, cw[0] ? ", " : "", cw);
            } else {
                honoured++;
                if (!ex[1][0])
                    snprintf(ex[1], sizeof ex[1],
                             "job %lld: worker %d.%d's %s after its lease (seq %lld) committed, "
                             "%s; no other worker had claimed it (the library had not taken "
                             "the job away)",
                             (long long)f->job, f->worker, f->inc, qc_op_name(inv->op),
                             (long long)inv->seq, rw);
            }
        } else {
            refused++;
            if (!ex[2][0]) {
                char tail[160] = "";
                if (other != NULL)
                    snprintf(tail, sizeof tail, "; worker %d.%d had claimed it again (seq %lld)",
                             other->worker, other->inc, (long long)other->seq);
                snprintf(ex[2], sizeof ex[2],
                         "job %lld: worker %d.%d's %s after its lease (seq %lld) was answered %s "
                         "rows %ld, and the witness has no row change of its session for it%s",
                         (long long)f->job, f->worker, f->inc, qc_op_name(inv->op),
                         (long long)inv->seq,
                         ans == NULL               ? "never,"
                         : ans->type == QC_EV_OK   ? "ok,"
                         : ans->type == QC_EV_FAIL ? "fail,"
                                                   : "info,",
                         ans != NULL ? ans->rows : -1L, tail);
            }
        }
    }
    if (stalls == 0) {
        snprintf(out, n, "no stall_beyond_lease fault in this run: nothing seen");
        return;
    }
    snprintf(out, n,
             "%ld stalled workers: %ld stale completes / fails honoured after another worker "
             "claimed the job again, %ld honoured with the job not taken away, %ld refused, %ld "
             "sent none",
             stalls, honoured_taken, honoured, refused, none);
    for (int k = 0; k < 4; k++)
        if (ex[k][0]) {
            add(out, n, ". ");
            add(out, n, ex[k]);
        }
}

static void killed_finding(const qc_history *h, char *out, size_t n)
{
    long kills = 0, back = 0, never = 0, unknown = 0;
    double *gb = calloc(h->n ? h->n : 1, sizeof *gb), *rc = calloc(h->n ? h->n : 1, sizeof *rc);
    size_t ngb = 0, nrc = 0;
    char ex[2][500] = {"", ""};

    if (gb == NULL || rc == NULL) {
        free(gb);
        free(rc);
        snprintf(out, n, "out of memory");
        return;
    }
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *f = &h->ev[i];
        if (f->type != QC_EV_FAULT || qc_x(f->x)->fault == NULL ||
            strcmp(qc_x(f->x)->fault, "kill_after_claim"))
            continue;
        kills++;
        const qc_event *claim = NULL;
        for (size_t k = i; k-- > 0;)
            if (h->ev[k].type == QC_EV_OK && h->ev[k].op == QC_OP_CLAIM && h->ev[k].job == f->job &&
                h->ev[k].worker == f->worker && h->ev[k].inc == f->inc) {
                claim = &h->ev[k];
                break;
            }
        const qc_event *c = row_of(h, claim);
        if (c == NULL) {
            unknown++;
            continue;
        }
        const qc_event *gave = NULL, *next = NULL;
        for (size_t k = 0; k < h->n; k++) {
            const qc_event *w = &h->ev[k];
            if (w->type != QC_EV_WITNESS || qc_x(w->x)->w_job != qc_x(c->x)->w_job || qc_x(w->x)->w_id <= qc_x(c->x)->w_id)
                continue;
            int left =
                qc_x(w->x)->w_change == 'd' ||
                (qc_x(w->x)->w_change == 'u' &&
                 !(qc_x(w->x)->w_old_state == NULL
                       ? qc_x(w->x)->w_state == NULL
                       : qc_x(w->x)->w_state != NULL && !strcmp(qc_x(w->x)->w_old_state, qc_x(w->x)->w_state)));
            if (gave == NULL && left && (next == NULL || qc_x(w->x)->w_id < qc_x(next->x)->w_id))
                gave = w;
            /* the next claim: a row an OK claim of another incarnation made */
            if (next == NULL)
                for (size_t q = 0; q < h->n; q++)
                    if (h->ev[q].w_ev == (long)k && h->ev[q].op == QC_OP_CLAIM &&
                        h->ev[q].type == QC_EV_OK) {
                        next = w;
                        break;
                    }
        }
        if (gave != NULL && qc_x(gave->x)->w_now >= 0 && qc_x(c->x)->w_now >= 0) {
            back++;
            gb[ngb++] = qc_x(gave->x)->w_now - qc_x(c->x)->w_now;
            if (next != NULL && qc_x(next->x)->w_now >= 0)
                rc[nrc++] = qc_x(next->x)->w_now - qc_x(c->x)->w_now;
            if (!ex[0][0]) {
                char a[200], b[200], d[200] = "";
                row_words(c, a, sizeof a);
                row_words(gave, b, sizeof b);
                if (next != NULL)
                    row_words(next, d, sizeof d);
                snprintf(ex[0], sizeof ex[0],
                         "job %lld: claimed by the killed worker %d.%d at %s, given back %.0f ms "
                         "later by %s%s%s",
                         (long long)f->job, f->worker, f->inc, a, qc_x(gave->x)->w_now - qc_x(c->x)->w_now, b,
                         d[0] ? ", claimed again at " : "", d);
            }
        } else if (next == NULL) {
            never++;
            if (!ex[1][0]) {
                char a[200];
                row_words(c, a, sizeof a);
                snprintf(ex[1], sizeof ex[1],
                         "job %lld: claimed by the killed worker %d.%d at %s; no later row "
                         "change of the job until the end of the run (its lock outlived it)",
                         (long long)f->job, f->worker, f->inc, a);
            }
        } else {
            unknown++;
        }
    }
    if (kills == 0) {
        snprintf(out, n, "no kill_after_claim fault in this run: nothing seen");
    } else {
        char med[160] = "";
        if (ngb > 0) {
            qsort(gb, ngb, sizeof *gb, cmp_double);
            snprintf(med, sizeof med, "; given back after min %.0f / median %.0f / max %.0f ms",
                     gb[0], gb[ngb / 2], gb[ngb - 1]);
        }
        if (nrc > 0) {
            qsort(rc, nrc, sizeof *rc, cmp_double);
            size_t len = strlen(med);
            snprintf(med + len, sizeof med - len, ", claimed again after median %.0f / max %.0f ms",
                     rc[nrc / 2], rc[nrc - 1]);
        }
        snprintf(out, n,
                 "%ld workers killed after their claim: %ld jobs given back by the library, %ld "
                 "never within the run, %ld not told (claim without its witness row)%s "
                 "(server clock, from the claim's row change)",
                 kills, back, never, unknown, med);
        for (int k = 0; k < 2; k++)
            if (ex[k][0]) {
                add(out, n, ". ");
                add(out, n, ex[k]);
            }
    }
    free(gb);
    free(rc);
}

static void empty_finding(const qc_history *h, char *out, size_t n)
{
    /* one streak per incarnation at a time: worker ids are small */
    enum { MAXW = 256 };
    struct {
        int inc;
        long count;
        double first, last;
    } s[MAXW];
    double *rates = calloc(h->n ? h->n : 1, sizeof *rates);
    size_t nr = 0;
    long polls = 0;

    if (rates == NULL) {
        snprintf(out, n, "out of memory");
        return;
    }
    memset(s, 0, sizeof s);
    for (size_t i = 0; i <= h->n; i++) {
        const qc_event *e = i < h->n ? &h->ev[i] : NULL;
        int end_all = e == NULL || e->type == QC_EV_END;
        for (int w = 0; w < MAXW && end_all; w++)
            if (s[w].count >= 3 && s[w].last - s[w].first >= 1000)
                rates[nr++] = (double)(s[w].count - 1) * 1000.0 / (s[w].last - s[w].first);
        if (end_all) {
            memset(s, 0, sizeof s);
            if (e == NULL)
                break;
            continue;
        }
        if (e->type != QC_EV_OK || e->op != QC_OP_CLAIM || e->worker < 0 || e->worker >= MAXW)
            continue;
        int w = e->worker;
        if (e->rows > 0 || e->inc != s[w].inc) {
            if (s[w].count >= 3 && s[w].last - s[w].first >= 1000)
                rates[nr++] = (double)(s[w].count - 1) * 1000.0 / (s[w].last - s[w].first);
            s[w].count = 0;
            s[w].inc = e->inc;
            if (e->rows > 0)
                continue;
        }
        polls++;
        if (s[w].count++ == 0)
            s[w].first = e->t;
        s[w].last = e->t;
    }
    long wrows = 0;
    for (size_t i = 0; i < h->n; i++)
        wrows += h->ev[i].type == QC_EV_WITNESS;
    if (nr == 0) {
        snprintf(out, n,
                 "%ld empty fetches, no streak of 3 or more over 1 s: no idle rate measured",
                 polls);
    } else {
        qsort(rates, nr, sizeof *rates, cmp_double);
        snprintf(out, n,
                 "%ld empty fetches (the adapter's `polled`, one per fetch the library sent); %zu "
                 "idle streaks: median %.1f, max %.1f polls per second per worker (counted in the "
                 "ledger: a fetch that finds nothing changes no row, so the witness's %ld row "
                 "changes hold none of them)",
                 polls, nr, rates[nr / 2], rates[nr - 1], wrows);
    }
    free(rates);
}

static int make(const qc_history *h, findings *f)
{
    if (h == NULL || !h->info.witness || !h->info.adapter_library[0])
        return 0;
    stale_finding(h, f->stale, sizeof f->stale);
    killed_finding(h, f->killed, sizeof f->killed);
    empty_finding(h, f->empty, sizeof f->empty);
    return 1;
}

void qc__library_md(FILE *out, const qc_history *h)
{
    findings *f = calloc(1, sizeof *f);

    if (f == NULL || !make(h, f)) {
        free(f);
        return;
    }
    fputs("\n## Library behaviour\n\n", out);
    qc__md_escape(out, h->info.adapter_library);
    fputs(" ", out);
    qc__md_escape(out, h->info.adapter_version);
    fputs(", as the witness (the server's own account of every row change) shows it:\n\n"
          "| when | what the library did |\n|---|---|\n| a stalled worker completes or fails "
          "after its lease | ",
          out);
    qc__md_escape(out, f->stale);
    fputs(" |\n| a worker is killed after its claim | ", out);
    qc__md_escape(out, f->killed);
    fputs(" |\n| the queue is empty | ", out);
    qc__md_escape(out, f->empty);
    fputs(" |\n", out);
    free(f);
}

static void esc(FILE *f, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
}

void qc__library_html(FILE *out, const qc_history *h)
{
    findings *f = calloc(1, sizeof *f);

    if (f == NULL || !make(h, f)) {
        free(f);
        return;
    }
    fputs("\n<h2 id=\"library\">Library behaviour</h2>\n<p>", out);
    esc(out, h->info.adapter_library);
    fputs(" ", out);
    esc(out, h->info.adapter_version);
    fputs(", as the witness (the server's own account of every row change) shows it:</p>\n"
          "<table id=\"library-behaviour\">\n<tr><th>when</th><th>what the library did</th></tr>\n"
          "<tr><td>a stalled worker completes or fails after its lease</td><td>",
          out);
    esc(out, f->stale);
    fputs("</td></tr>\n<tr><td>a worker is killed after its claim</td><td>", out);
    esc(out, f->killed);
    fputs("</td></tr>\n<tr><td>the queue is empty</td><td>", out);
    esc(out, f->empty);
    fputs("</td></tr>\n</table>\n", out);
    free(f);
}
