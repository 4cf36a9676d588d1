/*
 * timeline.c - the timeline of one violation, after Jepsen's timeline.html:
 * one lane per actor that touched the violation's job, each request a bar
 * from its invoke to its answer coloured by outcome, each lease a bar from
 * its server start to its lease_until, effects and faults as marks, every
 * item labelled with its ledger seq.  report.html gets it as inline SVG,
 * report.md as a table of the same items.
 *
 * Which events: those of the violation's job (a completion counts as the
 * job's when it or its invoke names the job), the events the violation
 * cites (an idle-polling violation names no job), and the nemesis's
 * terminate_session faults on the lanes' workers inside the time window.
 * With more than QC__TIMELINE_MAX_ITEMS, the cited events are kept and the
 * others nearest to them in seq order.
 *
 * Times: client ms since the run started (the ledger's "t"); server times
 * ("now", "lease_until") are moved onto that clock by the estimated origin
 * (qc__report_server_origin), which keeps every difference between two
 * server times exact.  No raw epoch value is ever written.
 *
 * Invariants: every text from the ledger goes through qc__xml_escape (SVG)
 * or qc__md_escape (Markdown); the SVG holds no script and no external
 * reference.
 */
#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LANES 16
#define SVG_W 1000
#define LEFT 200
#define RIGHT 24
#define TOP 40
#define LANE_H 56

enum kind { K_REQUEST, K_LEASE, K_EFFECT, K_FAULT };
enum outcome { O_OK, O_FAIL, O_INFO, O_NONE };

typedef struct item {
    enum kind kind;
    enum outcome outcome;
    int lane;
    double t0, t1; /* run ms */
    int64_t seq;   /* the answer's (or the event's) seq */
    int64_t seq0;  /* a request's invoke seq; -1 */
    size_t ev;     /* index of the event in h->ev */
    int cited;     /* the violation cites seq or seq0 */
    double dist;   /* seq distance to the nearest cited seq (selection) */
} item;

typedef struct lane {
    int worker, inc; /* -1 reaper / control, -2 nemesis */
} lane;

typedef struct timeline {
    item it[QC__TIMELINE_MAX_ITEMS * 2];
    size_t n;
    lane ln[MAX_LANES];
    size_t nl;
    double lo, hi; /* run ms shown */
    int64_t job;
} timeline;

static int is_cited(const qc__rviolation *v, int64_t seq)
{
    for (size_t i = 0; i < v->nseq; i++)
        if (v->seq[i] == seq)
            return 1;
    return 0;
}

static double cited_dist(const qc__rviolation *v, int64_t seq)
{
    double best = INFINITY;

    for (size_t i = 0; i < v->nseq; i++) {
        double d = fabs((double)(v->seq[i] - seq));
        best = d < best ? d : best;
    }
    return best;
}

static const qc_event *invoke_of(const qc_history *h, const qc_event *e)
{
    return e->invoke >= 0 && (size_t)e->invoke < h->n ? &h->ev[e->invoke] : NULL;
}

static int64_t job_of(const qc_history *h, const qc_event *e)
{
    const qc_event *inv = invoke_of(h, e);

    if (e->job != QC_NO_JOB)
        return e->job;
    return inv != NULL ? inv->job : QC_NO_JOB;
}

static int lane_of(timeline *tl, const qc_event *e)
{
    int w = e->worker < -1 ? -2 : e->worker, inc = w >= 0 ? e->inc : 0;

    for (size_t i = 0; i < tl->nl; i++)
        if (tl->ln[i].worker == w && tl->ln[i].inc == inc)
            return (int)i;
    if (tl->nl >= MAX_LANES)
        return -1;
    tl->ln[tl->nl] = (lane){w, inc};
    return (int)tl->nl++;
}

static int cmp_sel(const void *pa, const void *pb)
{
    const item *a = pa, *b = pb;

    if (a->cited != b->cited)
        return b->cited - a->cited;
    return a->dist < b->dist ? -1 : a->dist > b->dist;
}

static int cmp_seq(const void *pa, const void *pb)
{
    const item *a = pa, *b = pb;
    int64_t x = a->seq0 >= 0 ? a->seq0 : a->seq, y = b->seq0 >= 0 ? b->seq0 : b->seq;

    if (x != y)
        return x < y ? -1 : 1;
    return (int)a->kind - (int)b->kind;
}

/* Adds an item if there is room (the caller selects later). */
static void add(timeline *tl, item x)
{
    if (tl->n < sizeof tl->it / sizeof tl->it[0])
        tl->it[tl->n++] = x;
}

/* Fills tl; returns 0, or -1 when there is nothing to draw. */
static int build(timeline *tl, const qc_history *h, double origin, const qc__rviolation *v)
{
    item *all = NULL;
    size_t nall = 0, cap = 0;
    int64_t job = v->has_job ? v->job : QC_NO_JOB;

    memset(tl, 0, sizeof *tl);
    if (job == QC_NO_JOB)
        for (size_t i = 0; i < v->nseq && job == QC_NO_JOB; i++) {
            const qc_event *e = qc__report_find_seq(h, v->seq[i]);
            if (e != NULL)
                job = job_of(h, e);
        }
    tl->job = job;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i], *inv;
        item x;
        int mine, cited;
        if (e->t == QC_NO_TIME)
            continue;
        cited = is_cited(v, e->seq);
        inv = invoke_of(h, e);
        if (e->type == QC_EV_INVOKE) {
            /* drawn with its answer; alone only when never answered (below) */
            continue;
        }
        mine = job != QC_NO_JOB && job_of(h, e) == job;
        if (!mine && !cited && !(inv != NULL && is_cited(v, inv->seq)))
            continue;
        memset(&x, 0, sizeof x);
        x.seq = e->seq;
        x.seq0 = -1;
        x.ev = i;
        x.cited = cited;
        x.t0 = x.t1 = e->t;
        if (e->type == QC_EV_OK || e->type == QC_EV_FAIL || e->type == QC_EV_INFO) {
            if (e->op == QC_OP_ENQUEUE)
                continue;
            x.kind = K_REQUEST;
            x.outcome = e->type == QC_EV_OK ? O_OK : e->type == QC_EV_FAIL ? O_FAIL : O_INFO;
            if (inv != NULL && inv->t != QC_NO_TIME) {
                x.t0 = inv->t;
                x.seq0 = inv->seq;
                x.cited |= is_cited(v, inv->seq);
            }
        } else if (e->type == QC_EV_EFFECT) {
            x.kind = K_EFFECT;
        } else if (e->type == QC_EV_FAULT) {
            x.kind = K_FAULT;
            if (qc_x(e->x)->until_t != QC_NO_TIME && qc_x(e->x)->until_t > e->t)
                x.t1 = qc_x(e->x)->until_t;
        } else if (!cited) {
            continue; /* snapshot rows, notes: only when cited */
        } else {
            x.kind = K_EFFECT;
        }
        x.dist = x.cited
                     ? 0
                     : fmin(cited_dist(v, x.seq), x.seq0 >= 0 ? cited_dist(v, x.seq0) : INFINITY);
        if (nall == cap) {
            cap = cap ? cap * 2 : 64;
            item *na = realloc(all, cap * sizeof *all);
            if (na == NULL) {
                free(all);
                return -1;
            }
            all = na;
        }
        all[nall++] = x;
    }
    /* Invokes of the job never answered (a lost connection left no line). */
    if (job != QC_NO_JOB) {
        unsigned char *answered = calloc(h->n ? h->n : 1, 1);
        if (answered != NULL) {
            for (size_t i = 0; i < h->n; i++)
                if (h->ev[i].invoke >= 0 && (size_t)h->ev[i].invoke < h->n)
                    answered[h->ev[i].invoke] = 1;
            for (size_t i = 0; i < h->n; i++) {
                const qc_event *e = &h->ev[i];
                if (e->type != QC_EV_INVOKE || answered[i] || e->job != job || e->t == QC_NO_TIME)
                    continue;
                if (nall == cap) {
                    cap = cap ? cap * 2 : 64;
                    item *na = realloc(all, cap * sizeof *all);
                    if (na == NULL)
                        break;
                    all = na;
                }
                all[nall++] = (item){K_REQUEST,
                                     O_NONE,
                                     0,
                                     e->t,
                                     INFINITY,
                                     e->seq,
                                     -1,
                                     i,
                                     is_cited(v, e->seq),
                                     cited_dist(v, e->seq)};
            }
            free(answered);
        }
    }
    if (nall == 0) {
        free(all);
        return -1;
    }
    if (nall > QC__TIMELINE_MAX_ITEMS) {
        qsort(all, nall, sizeof *all, cmp_sel);
        nall = QC__TIMELINE_MAX_ITEMS;
    }
    qsort(all, nall, sizeof *all, cmp_seq);
    tl->lo = INFINITY;
    tl->hi = -INFINITY;
    for (size_t i = 0; i < nall; i++) {
        item x = all[i];
        const qc_event *e = &h->ev[x.ev];
        int ln = lane_of(tl, e);
        if (ln < 0)
            continue;
        x.lane = ln;
        add(tl, x);
        tl->lo = fmin(tl->lo, x.t0);
        tl->hi = fmax(tl->hi, isfinite(x.t1) ? x.t1 : x.t0);
        /* A claim or renew acknowledged with server times sets a lease. */
        if (e->type == QC_EV_OK && (e->op == QC_OP_CLAIM || e->op == QC_OP_RENEW) &&
            e->now != QC_NO_TIME && e->lease_until != QC_NO_TIME && origin != QC_NO_TIME &&
            e->rows > 0) {
            item l = x;
            l.kind = K_LEASE;
            l.t0 = e->now - origin;
            l.t1 = e->lease_until - origin;
            l.seq0 = -1;
            add(tl, l);
            tl->lo = fmin(tl->lo, l.t0);
            tl->hi = fmax(tl->hi, l.t1);
        }
    }
    free(all);
    if (tl->n == 0)
        return -1;
    /* The nemesis ending a session of a lane's worker inside the window. */
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type != QC_EV_FAULT || qc_x(e->x)->target < 0 || e->t < tl->lo || e->t > tl->hi)
            continue;
        int hit = 0;
        for (size_t k = 0; k < tl->nl; k++)
            hit |= tl->ln[k].worker == qc_x(e->x)->target;
        if (!hit)
            continue;
        int ln = lane_of(tl, e);
        if (ln >= 0)
            add(tl, (item){K_FAULT, O_NONE, ln, e->t, e->t, e->seq, -1, i, is_cited(v, e->seq), 0});
    }
    for (size_t i = 0; i < tl->n; i++)
        if (!isfinite(tl->it[i].t1))
            tl->it[i].t1 = tl->hi; /* never answered: to the window's end */
    if (tl->hi <= tl->lo)
        tl->hi = tl->lo + 1;
    double pad = (tl->hi - tl->lo) * 0.04 + 1;
    tl->lo -= pad;
    tl->hi += pad;
    return 0;
}

static void lane_name(const lane *l, char *buf, size_t n)
{
    if (l->worker == -2)
        snprintf(buf, n, "nemesis");
    else if (l->worker < 0)
        snprintf(buf, n, "reaper / control");
    else
        snprintf(buf, n, "worker %d (incarnation %d)", l->worker, l->inc);
}

static const char *op_word(const qc_event *e)
{
    if (e->type == QC_EV_EFFECT)
        return "effect";
    if (e->type == QC_EV_FAULT)
        return qc_x(e->x)->fault != NULL ? qc_x(e->x)->fault : "fault";
    if (e->type == QC_EV_SNAPSHOT)
        return "snapshot";
    if (e->type == QC_EV_NOTE)
        return "note";
    const char *n = qc_op_name(e->op);
    return n != NULL ? n : "request";
}

static const char *outcome_word(enum outcome o)
{
    return o == O_OK ? "ok" : o == O_FAIL ? "fail" : o == O_INFO ? "info (unknown)" : "no answer";
}

static const char *outcome_colour(enum outcome o)
{
    return o == O_OK ? "#6aa84f" : o == O_FAIL ? "#e06666" : o == O_INFO ? "#f6b26b" : "#999999";
}

/* The time axis: a monotone map from run ms to x.  Requests take
 * milliseconds and leases seconds, so a linear axis would draw every
 * request of a violation on one pixel: each gap between two consecutive
 * instants of the timeline is drawn log(1 + gap / 1 ms) wide instead of
 * gap wide.  The map is monotone, so which item starts or ends before
 * which, and which bars overlap, is exactly as in the ledger; the tick
 * labels give the true times. */
typedef struct axis {
    double *t, *w; /* distinct instants (sorted) and their cumulative width */
    size_t n;
} axis;

static int cmp_d(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;

    return a < b ? -1 : a > b;
}

static int axis_build(axis *ax, const timeline *tl)
{
    size_t n = 0;

    ax->t = malloc((2 * tl->n + 2) * sizeof(double));
    ax->w = malloc((2 * tl->n + 2) * sizeof(double));
    if (ax->t == NULL || ax->w == NULL)
        return -1;
    ax->t[n++] = tl->lo;
    ax->t[n++] = tl->hi;
    for (size_t i = 0; i < tl->n; i++) {
        ax->t[n++] = tl->it[i].t0;
        ax->t[n++] = tl->it[i].t1;
    }
    qsort(ax->t, n, sizeof(double), cmp_d);
    ax->n = 0;
    for (size_t i = 0; i < n; i++)
        if (ax->n == 0 || ax->t[i] > ax->t[ax->n - 1])
            ax->t[ax->n++] = ax->t[i];
    ax->w[0] = 0;
    for (size_t i = 1; i < ax->n; i++)
        ax->w[i] = ax->w[i - 1] + log1p(ax->t[i] - ax->t[i - 1]);
    return 0;
}

static double axis_x(const axis *ax, double t, double x0, double width)
{
    double total = ax->w[ax->n - 1] > 0 ? ax->w[ax->n - 1] : 1;
    size_t lo = 0, hi = ax->n - 1;

    if (t <= ax->t[0])
        return x0;
    if (t >= ax->t[ax->n - 1])
        return x0 + width;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (ax->t[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    double g = ax->t[hi] - ax->t[lo];
    double w = ax->w[lo] + (g > 0 ? (t - ax->t[lo]) / g * (ax->w[hi] - ax->w[lo]) : 0);
    return x0 + w / total * width;
}

/* "#2014 claim (job 1 ...)" tooltip: the event in plain words. */
static void svg_title(FILE *f, const qc_history *h, double origin, const item *x)
{
    char line[1024];

    fputs("<title>", f);
    if (x->seq0 >= 0 && x->seq0 != x->seq) {
        qc__report_describe(h, origin, x->seq0, line, sizeof line);
        qc__xml_escape(f, line);
        fputs("\n", f);
    }
    qc__report_describe(h, origin, x->seq, line, sizeof line);
    qc__xml_escape(f, line);
    fputs("</title>", f);
}

/* A request's or fault's label: at the item, on the line above its bar.
 * One that would run into the previous label of its lane is shortened to
 * the seq and moved right when the item is cited, else left to the
 * tooltip (every item has one). */
static void put_label(FILE *f, double *lab_end, int ln, double x, int y, const char *word,
                      int64_t seq, int cited)
{
    char lab[64];

    if (x >= lab_end[ln])
        snprintf(lab, sizeof lab, "%s %" PRId64, word, seq);
    else if (cited) {
        snprintf(lab, sizeof lab, "%" PRId64, seq);
        x = lab_end[ln];
    } else
        return;
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\"%s>", x, y,
            cited ? " font-weight=\"bold\"" : "");
    qc__xml_escape(f, lab);
    fputs("</text>", f);
    lab_end[ln] = x + 6.0 * (double)strlen(lab) + 5;
}

int qc__timeline_svg(FILE *f, const qc_history *h, double origin, const qc__rviolation *v)
{
    timeline *tl = malloc(sizeof *tl);
    char name[64];

    if (tl == NULL || build(tl, h, origin, v) != 0) {
        free(tl);
        return -1;
    }
    double plot_w = SVG_W - LEFT - RIGHT;
    int height = TOP + (int)tl->nl * LANE_H + 40;
    axis ax = {NULL, NULL, 0};
    if (axis_build(&ax, tl) != 0) {
        free(ax.t);
        free(ax.w);
        free(tl);
        return -1;
    }
#define X(t) axis_x(&ax, (t), LEFT, plot_w)
    fprintf(f,
            "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n",
            SVG_W, height, SVG_W, height);
    /* axis: ms since the run started, labelled at the instants of the
     * items (a label closer than 48 px to the previous one is left out) */
    double last_x = -1e9;
    for (size_t i = 0; i < ax.n; i++) {
        double x = X(ax.t[i]);
        if (x - last_x < 48 || i == 0 || i + 1 == ax.n)
            continue;
        last_x = x;
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e3e3e3\"/>"
                "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\" "
                "font-size=\"10\">%.1f</text>\n",
                x, TOP - 6, x, TOP + (int)tl->nl * LANE_H, x, TOP - 10, ax.t[i]);
    }
    fprintf(f,
            "<text x=\"4\" y=\"%d\" fill=\"#555\">ms since run start</text>"
            "<text x=\"4\" y=\"%d\" fill=\"#999\" font-size=\"9\">(gaps drawn "
            "log-compressed; order exact)</text>\n",
            TOP - 18, TOP - 6);
    for (size_t l = 0; l < tl->nl; l++) {
        int y = TOP + (int)l * LANE_H;
        lane_name(&tl->ln[l], name, sizeof name);
        fprintf(f,
                "<rect x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>"
                "<text x=\"4\" y=\"%d\" font-weight=\"bold\">",
                y, SVG_W, LANE_H, l % 2 ? "#fafafa" : "#f2f5f9", y + 18);
        qc__xml_escape(f, name);
        fprintf(f,
                "</text><text x=\"4\" y=\"%d\" fill=\"#777\" font-size=\"10\">requests "
                "(and effects), leases below</text>\n",
                y + 33);
    }
    double lab_end[MAX_LANES];
    for (size_t l = 0; l < MAX_LANES; l++)
        lab_end[l] = -1e9;
    for (size_t i = 0; i < tl->n; i++) {
        const item *x = &tl->it[i];
        const qc_event *e = &h->ev[x->ev];
        int y = TOP + x->lane * LANE_H;
        double x0 = X(x->t0), x1 = X(x->t1), w = x1 - x0 < 3 ? 3 : x1 - x0;
        const char *stroke = x->cited ? " stroke=\"#000\" stroke-width=\"2\"" : "";
        fputs("<g>", f);
        svg_title(f, h, origin, x);
        switch (x->kind) {
        case K_REQUEST:
            fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"11\" fill=\"%s\"%s/>", x0,
                    y + 14, w, outcome_colour(x->outcome), stroke);
            put_label(f, lab_end, x->lane, x0, y + 11, op_word(e), x->seq, x->cited);
            break;
        case K_LEASE:
            fprintf(f,
                    "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"9\" fill=\"#9fc5e8\" "
                    "fill-opacity=\"0.8\" stroke=\"#3d85c6\"%s/>",
                    x0, y + 30, w, x->cited ? " stroke-width=\"2\"" : "");
            fprintf(
                f,
                "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" fill=\"#1c4587\">lease of %s %" PRId64
                " until +%.0f</text>",
                x0 + 2, y + 50, op_word(e), x->seq, x->t1);
            break;
        case K_EFFECT:
            fprintf(f, "<path d=\"M%.1f %d l5 6 l-5 6 l-5 -6 z\" fill=\"#8e7cc3\"%s/>", x0, y + 14,
                    stroke);
            break;
        case K_FAULT:
            if (x1 - x0 > 3)
                fprintf(f,
                        "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#cc0000\" "
                        "fill-opacity=\"0.12\"/>",
                        x0, y + 2, x1 - x0, LANE_H - 4);
            fprintf(f, "<path d=\"M%.1f %d l6 11 l-12 0 z\" fill=\"#cc0000\"%s/>", x0, y + 14,
                    stroke);
            put_label(f, lab_end, x->lane, x0, y + 11, op_word(e), x->seq, x->cited);
            break;
        }
        fputs("</g>\n", f);
    }
    int ly = TOP + (int)tl->nl * LANE_H + 22, L = 20; /* the legend, from the left */
    fprintf(f,
            "<g font-size=\"11\"><rect x=\"%d\" y=\"%d\" width=\"14\" height=\"10\" "
            "fill=\"#6aa84f\"/><text x=\"%d\" y=\"%d\">ok</text>"
            "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"10\" fill=\"#e06666\"/>"
            "<text x=\"%d\" y=\"%d\">fail</text>"
            "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"10\" fill=\"#f6b26b\"/>"
            "<text x=\"%d\" y=\"%d\">info (outcome unknown)</text>"
            "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"10\" fill=\"#999\"/>"
            "<text x=\"%d\" y=\"%d\">no answer</text>"
            "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"10\" fill=\"#9fc5e8\" "
            "stroke=\"#3d85c6\"/><text x=\"%d\" y=\"%d\">lease (server start to "
            "lease_until)</text>"
            "<path d=\"M%d %d l6 10 l-12 0 z\" fill=\"#cc0000\"/><text x=\"%d\" y=\"%d\">fault"
            "</text><rect x=\"%d\" y=\"%d\" width=\"14\" height=\"10\" fill=\"none\" "
            "stroke=\"#000\" stroke-width=\"2\"/><text x=\"%d\" y=\"%d\">cited by the "
            "violation</text></g>\n",
            L, ly - 9, L + 18, ly, L + 50, ly - 9, L + 68, ly, L + 105, ly - 9, L + 123, ly,
            L + 265, ly - 9, L + 283, ly, L + 355, ly - 9, L + 373, ly, L + 560, ly - 10, L + 570,
            ly, L + 610, ly - 9, L + 628, ly);
    fprintf(f,
            "<path d=\"M%d %d l5 6 l-5 6 l-5 -6 z\" fill=\"#8e7cc3\"/><text x=\"%d\" y=\"%d\" "
            "font-size=\"11\">effect delivered</text>\n",
            L + 760, ly - 11, L + 770, ly);
    fputs("</svg>\n", f);
#undef X
    free(ax.t);
    free(ax.w);
    free(tl);
    return ferror(f) ? -1 : 0;
}

int qc__timeline_md(FILE *f, const qc_history *h, double origin, const qc__rviolation *v)
{
    timeline *tl = malloc(sizeof *tl);
    char name[64], line[1024], when[64];

    if (tl == NULL || build(tl, h, origin, v) != 0) {
        free(tl);
        return -1;
    }
    fputs("| seq | lane | ms since run start | what |\n|---:|---|---|---|\n", f);
    for (size_t i = 0; i < tl->n; i++) {
        const item *x = &tl->it[i];
        if (x->kind == K_LEASE)
            continue; /* told with its claim: "lease until server +X ms" */
        lane_name(&tl->ln[x->lane], name, sizeof name);
        if (x->kind == K_REQUEST)
            snprintf(when, sizeof when, "%.1f - %.1f (%s)", x->t0, x->t1, outcome_word(x->outcome));
        else
            snprintf(when, sizeof when, "%.1f", x->t0);
        qc__report_describe(h, origin, x->seq, line, sizeof line);
        if (x->seq0 >= 0 && x->seq0 != x->seq)
            fprintf(f, "| %s%" PRId64 " - %" PRId64 "%s | ", x->cited ? "**" : "", x->seq0, x->seq,
                    x->cited ? "**" : "");
        else
            fprintf(f, "| %s%" PRId64 "%s | ", x->cited ? "**" : "", x->seq, x->cited ? "**" : "");
        qc__md_escape(f, name);
        fputs(" | ", f);
        qc__md_escape(f, when);
        fputs(" | ", f);
        qc__md_escape(f, line);
        fputs(" |\n", f);
    }
    fputs("\n", f);
    free(tl);
    return ferror(f) ? -1 : 0;
}
