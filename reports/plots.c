/*
 * plots.c - the report's plots: series from the ledger, written as gnuplot
 * data (plots/NAME.dat) and scripts (plots/NAME.gp); report.c then runs
 * gnuplot on them to draw PNG and SVG.
 *
 * Design: one pass over the history fills fixed-width time bins (about 200
 * per run, a "nice" width of 10 ms ... 1 h), so a 200,000-event ledger
 * costs milliseconds here and gnuplot only ever reads a few hundred points;
 * request latencies are sorted once to draw their percentile curve.  The
 * scripts are self-contained and use names relative to plots/, so a reader
 * can edit and rerun one by hand (`cd plots && gnuplot throughput.gp`), and
 * gnuplot runs with plots/ as its working folder (no path ever needs
 * quoting).
 *
 * Invariants: a plot is in qc__plots.p only when its data file has at least
 * one point (gnuplot fails on an empty file); stale images from an earlier
 * report are removed first, so no old picture is ever shown as new.
 */
#include "report.h"

#include "../harness/checkers.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TARGET_BINS 200
#define WIDTH 1000
#define HEIGHT 400

static const char *const plot_names[] = {"throughput",  "latency",    "latency_time",
                                         "queue_depth", "idle_polls", "recovery"};

/* Time series binned by bin_ms from t0 (client ms since run start). */
typedef struct series {
    double t0, bin_ms;
    size_t nbins;
    double *completes, *claims, *empty; /* counts per bin */
} series;

static void note(qc__plots *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(qc__plots *p, const char *fmt, ...)
{
    va_list ap;

    if (p->nnotes >= QC__MAX_NOTES)
        return;
    va_start(ap, fmt);
    vsnprintf(p->notes[p->nnotes++], sizeof p->notes[0], fmt, ap);
    va_end(ap);
}

static double nice_bin(double span)
{
    static const double nice[] = {10,     20,     50,     100,     200,    500,
                                  1000,   2000,   5000,   10000,   30000,  60000,
                                  120000, 300000, 600000, 1800000, 3600000};
    for (size_t i = 0; i < sizeof nice / sizeof nice[0]; i++)
        if (span / nice[i] <= TARGET_BINS)
            return nice[i];
    return ceil(span / TARGET_BINS);
}

static int series_build(const qc_history *h, series *s)
{
    double lo = INFINITY, hi = -INFINITY;

    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < h->n; i++) {
        double t = h->ev[i].t;
        if (t == QC_NO_TIME)
            continue;
        lo = t < lo ? t : lo;
        hi = t > hi ? t : hi;
    }
    if (lo > hi)
        return 0; /* no timed event: nbins 0 */
    s->bin_ms = nice_bin(hi - lo);
    s->t0 = floor(lo / s->bin_ms) * s->bin_ms;
    s->nbins = (size_t)((hi - s->t0) / s->bin_ms) + 1;
    s->completes = calloc(s->nbins, sizeof(double));
    s->claims = calloc(s->nbins, sizeof(double));
    s->empty = calloc(s->nbins, sizeof(double));
    if (s->completes == NULL || s->claims == NULL || s->empty == NULL)
        return QC_ENOMEM;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->t == QC_NO_TIME || e->type != QC_EV_OK)
            continue;
        size_t b = (size_t)((e->t - s->t0) / s->bin_ms);
        if (b >= s->nbins)
            b = s->nbins - 1;
        if (e->op == QC_OP_COMPLETE && e->rows > 0)
            s->completes[b]++;
        else if (e->op == QC_OP_CLAIM && e->rows > 0)
            s->claims[b]++;
        else if (e->op == QC_OP_CLAIM && e->rows == 0)
            s->empty[b]++;
    }
    return 0;
}

static void series_fini(series *s)
{
    free(s->completes);
    free(s->claims);
    free(s->empty);
}

/* Opens plots/NAME.EXT for writing (not via .tmp: plots/ is scratch). */
static FILE *open_plot(const char *pdir, const char *name, const char *ext, qc_err *err)
{
    char path[QC__PATH_MAX];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s.%s", pdir, name, ext);
    f = fopen(path, "w");
    if (f == NULL)
        qc_err_set(err, QC_EIO, "cannot write '%s': %s", path, strerror(errno));
    return f;
}

static int close_plot(FILE *f, const char *pdir, const char *name, const char *ext, qc_err *err)
{
    int bad = ferror(f) != 0;

    if (fclose(f) != 0)
        bad = 1;
    if (bad)
        return qc_err_set(err, QC_EIO, "cannot write '%s/%s.%s'", pdir, name, ext);
    return 0;
}

/* Script prologue: PNG terminal (pngcairo when built in), output, style. */
static void gp_begin(FILE *g, const char *name)
{
    fprintf(g,
            "# qchaos report plot '%s' (generated; rerun with: gnuplot %s.gp)\n"
            "if (strstrt(GPVAL_TERMINALS, \" pngcairo \") > 0) {\n"
            "    set terminal pngcairo size %d,%d noenhanced font \"sans,10\"\n"
            "} else {\n"
            "    set terminal png size %d,%d noenhanced\n"
            "}\n"
            "set output \"%s.png\"\n"
            "set datafile missing \"?\"\n"
            "set grid lc rgb \"#dddddd\"\n"
            "set border lc rgb \"#555555\"\n"
            "set key top right opaque box lc rgb \"#cccccc\"\n"
            "set offsets 0, 0, graph 0.08, 0\n",
            name, name, WIDTH, HEIGHT, WIDTH, HEIGHT, name);
}

/* Script epilogue: the same plot again as SVG. */
static void gp_end(FILE *g, const char *name)
{
    fprintf(g,
            "set terminal svg size %d,%d noenhanced font \"sans,10\" background \"#ffffff\"\n"
            "set output \"%s.svg\"\n"
            "replot\n"
            "unset output\n",
            WIDTH, HEIGHT, name);
}

static void add_plot(qc__plots *p, const char *name, const char *title)
{
    if (p->n >= QC__MAX_PLOTS)
        return;
    snprintf(p->p[p->n].name, sizeof p->p[0].name, "%s", name);
    snprintf(p->p[p->n].title, sizeof p->p[0].title, "%s", title);
    p->n++;
}

/* ---- throughput and idle polls ----------------------------------------- */

/* Fault kinds in a fixed order, each with its colour (as Jepsen shades
 * each nemesis in its own colour); kinds this version does not know share
 * the last entry. */
static const struct fkind {
    const char *name, *colour;
} fkinds[] = {
    {"kill_after_claim", "#cc0000"},      {"kill_after_effect", "#e69138"},
    {"stall_beyond_lease", "#674ea7"},    {"stall_in_work", "#8e7cc3"},
    {"stall_until_reclaimed", "#a64d79"}, {"lost_ack", "#3d85c6"},
    {"lost_request", "#45818e"},          {"poison", "#6aa84f"},
    {"graceful_stop", "#b45f06"},
    {"terminate_session", "#bf9000"},     {"restart_server", "#000000"},
    {"pause_server", "#666666"},          {"failover", "#990000"},
    {"switchover", "#0b5394"},            {"unfenced_primary", "#741b47"},
    {"other fault", "#999999"},
};
#define NFKINDS (sizeof fkinds / sizeof fkinds[0])

static size_t fkind_of(const char *name)
{
    for (size_t k = 0; k + 1 < NFKINDS; k++)
        if (name != NULL && strcmp(fkinds[k].name, name) == 0)
            return k;
    return NFKINDS - 1;
}

/* Point types and colours of the violation rows, one per failing checker. */
static const char *const vcolours[] = {"#990000", "#cc4125", "#b45f06", "#7f6000",
                                       "#38761d", "#134f5c", "#1155cc", "#351c75"};

/* The phases of a run, from the ledger (client ms; NAN when unseen). */
typedef struct phases {
    double enqueue, work, heal, snapshot, end;
} phases;

static void find_phases(const qc_history *h, phases *ph)
{
    ph->enqueue = ph->work = ph->heal = ph->snapshot = ph->end = NAN;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->t == QC_NO_TIME)
            continue;
        if (isnan(ph->enqueue) && e->op == QC_OP_ENQUEUE)
            ph->enqueue = e->t;
        if (isnan(ph->work) && e->type == QC_EV_INVOKE && e->op == QC_OP_CLAIM)
            ph->work = e->t;
        if (isnan(ph->heal) && e->type == QC_EV_NOTE && qc_x(e->x)->note != NULL &&
            strncmp(qc_x(e->x)->note, "heal", 4) == 0)
            ph->heal = e->t;
        if (isnan(ph->snapshot) && e->type == QC_EV_SNAPSHOT)
            ph->snapshot = e->t;
        if (e->type == QC_EV_END)
            ph->end = e->t;
    }
}

/* The plot commands of the throughput figure (two panels: the faults and
 * violations per kind over time, and throughput with the phases), written
 * once per terminal. */
static void throughput_body(FILE *g, const series *s, const phases *ph, double xmax_s, double ytop,
                            const size_t *nfk, const char *const *vname, const long *vtotal,
                            const size_t *vstored, size_t nvc)
{
    size_t rows = 0, row;

    size_t nfault = 0;
    for (size_t k = 0; k < NFKINDS; k++) {
        rows += nfk[k] > 0;
        nfault += nfk[k];
    }
    rows += nvc;
    fprintf(g,
            "set multiplot\n"
            "set lmargin at screen 0.22\nset rmargin at screen 0.97\n"
            "set xrange [0:%.3f]\n",
            xmax_s);
    /* top panel: one row per fault kind and per failing checker */
    if (rows > 0) {
        fprintf(g,
                "set origin 0,0.60\nset size 1,0.38\nset tmargin 2\nset bmargin 0.5\n"
                "set title \"Faults fired per kind (a bar: a fault window); violations per "
                "checker (the stored ones, at their first seq)\"\n"
                "unset xlabel\nset format x \"\"\nunset key\nset grid xtics noytics\n"
                "set yrange [0.4:%zu.6]\nset ytics (",
                rows);
        row = rows;
        for (size_t k = 0; k < NFKINDS; k++)
            if (nfk[k] > 0) {
                fprintf(g, "%s\"%s (%zu)\" %zu", row == rows ? "" : ", ", fkinds[k].name, nfk[k],
                        row);
                row--;
            }
        for (size_t c = 0; c < nvc; c++, row--)
            fprintf(g, "%s\"%s (%ld)\" %zu", row == rows ? "" : ", ", vname[c], vtotal[c], row);
        fprintf(g, ")\nplot ");
        row = rows;
        int first = 1;
        for (size_t k = 0; k < NFKINDS; k++) {
            if (nfk[k] == 0)
                continue;
            fprintf(g,
                    "%s\"throughput.dat\" index %zu using 1:(%zu):($2-$1):(0) with vectors "
                    "nohead lw 7 lc rgb \"%s\", \\\n     \"throughput.dat\" index %zu using "
                    "1:(%zu) with points pt 7 ps 0.7 lc rgb \"%s\"",
                    first ? "" : ", \\\n     ", k + 1, row, fkinds[k].colour, k + 1, row,
                    fkinds[k].colour);
            first = 0;
            row--;
        }
        for (size_t c = 0; c < nvc; c++, row--) {
            fprintf(g,
                    "%s\"throughput.dat\" index %zu using 1:(%zu) with points pt 2 ps 1.2 "
                    "lw 2 lc rgb \"%s\"",
                    first ? "" : ", \\\n     ", NFKINDS + 1 + c, row,
                    vcolours[c % (sizeof vcolours / sizeof vcolours[0])]);
            first = 0;
        }
        (void)vstored;
        fprintf(g, "\n");
    }
    /* bottom panel: throughput and phases */
    fprintf(g,
            "set origin 0,0\nset size 1,%s\nset tmargin %s\nset bmargin 3.5\n"
            "set format x \"%%g\"\nset grid xtics ytics\nset key top right opaque box\n"
            "set title \"%s\"\n"
            "set xlabel \"time since run start (s)\"\n"
            "set ylabel \"jobs per second (per %.0f ms bin)\"\n"
            "set yrange [0:%.3f]\nset ytics auto\n",
            rows > 0 ? "0.62" : "1", rows > 0 ? "1" : "2",
            rows > 0 ? "" : "Throughput (no fault fired, no violation)", s->bin_ms, ytop);
    if (!isnan(ph->work) && ph->work > 0)
        fprintf(g,
                "set object 1 rect from 0,graph 0 to %.3f,graph 1 fc rgb \"#e8e8e8\" "
                "fs solid 1.0 noborder behind\n"
                "set label 1 \"setup + enqueue\" at %.3f,graph 0.95 center font \",9\" "
                "tc rgb \"#555555\"\n",
                ph->work / 1000.0, ph->work / 2000.0);
    double work_end = !isnan(ph->heal) ? ph->heal : ph->snapshot;
    if (!isnan(ph->work) && !isnan(work_end))
        fprintf(g, "set label 2 \"%s\" at %.3f,graph 0.95 center font \",9\" tc rgb \"#555555\"\n",
                !isnan(ph->heal) ? "chaos"
                : nfault > 0     ? "work under faults, then drain"
                                 : "work, then drain",
                (ph->work + work_end) / 2000.0);
    if (!isnan(ph->heal)) {
        fprintf(g, "set arrow 1 from %.3f,graph 0 to %.3f,graph 1 nohead dt 2 lc rgb \"#555555\"\n",
                ph->heal / 1000.0, ph->heal / 1000.0);
        if (!isnan(ph->snapshot))
            fprintf(g,
                    "set label 3 \"heal + drain\" at %.3f,graph 0.95 center font \",9\" "
                    "tc rgb \"#555555\"\n",
                    (ph->heal + ph->snapshot) / 2000.0);
    }
    if (!isnan(ph->snapshot))
        fprintf(g,
                "set object 2 rect from %.3f,graph 0 to %.3f,graph 1 fc rgb \"#e8e8e8\" "
                "fs solid 1.0 noborder behind\n"
                "set label 4 \"snapshot\" at %.3f,graph 0.88 right font \",9\" "
                "tc rgb \"#555555\"\n",
                ph->snapshot / 1000.0, (isnan(ph->end) ? ph->snapshot : ph->end) / 1000.0,
                ph->snapshot / 1000.0);
    fprintf(g, "plot \"throughput.dat\" index 0 using 1:3 with lines lw 4 lc rgb \"#93c47d\" "
               "title \"claimed jobs/s\", \\\n"
               "     \"throughput.dat\" index 0 using 1:2 with lines lw 1.5 lc rgb \"#1c4587\" "
               "title \"completes/s\"\n"
               "unset multiplot\n"
               "unset object 1\nunset object 2\nunset label\nunset arrow\n");
}

static int write_throughput(const char *pdir, const qc_history *h, const qc__results *r,
                            const series *s, qc__plots *p, qc_err *err)
{
    double bin_s = s->bin_ms / 1000.0, ytop = 1.0, xmax = 0;
    size_t nfk[NFKINDS], nvc = 0, vstored[8];
    const char *vname[8];
    long vtotal[8];
    phases ph;
    FILE *d = open_plot(pdir, "throughput", "dat", err), *g;

    if (d == NULL)
        return QC_EIO;
    memset(nfk, 0, sizeof nfk);
    find_phases(h, &ph);
    /* Index 0: time series; 1..NFKINDS: faults of each kind (from_s to_s;
     * an instant fault has from = to); then one block per failing checker
     * (violations at the time of their first cited seq).  Blocks are
     * separated by two blank lines (gnuplot's index). */
    fprintf(d, "# t_s completes_per_s claimed_jobs_per_s\n");
    for (size_t b = 0; b < s->nbins; b++) {
        double c = s->completes[b] / bin_s, k = s->claims[b] / bin_s;
        ytop = c > ytop ? c : ytop;
        ytop = k > ytop ? k : ytop;
        fprintf(d, "%.3f %.3f %.3f\n", (s->t0 + (b + 0.5) * s->bin_ms) / 1000.0, c, k);
        xmax = (s->t0 + (b + 1) * s->bin_ms) / 1000.0;
    }
    ytop *= 1.15;
    for (size_t k = 0; k < NFKINDS; k++) {
        fprintf(d, "\n\n# faults %s: from_s to_s\n", fkinds[k].name);
        for (size_t i = 0; i < h->n; i++) {
            const qc_event *e = &h->ev[i];
            if (e->type != QC_EV_FAULT || e->t == QC_NO_TIME || fkind_of(qc_x(e->x)->fault) != k)
                continue;
            double to = qc_x(e->x)->until_t != QC_NO_TIME && qc_x(e->x)->until_t > e->t ? qc_x(e->x)->until_t : e->t;
            fprintf(d, "%.3f %.3f\n", e->t / 1000.0, to / 1000.0);
            nfk[k]++;
        }
        if (nfk[k] == 0)
            fprintf(d, "? ?\n");
    }
    for (size_t i = 0; i < r->nc && nvc < 8; i++) {
        const qc__rcheck *c = &r->c[i];
        size_t n = 0;
        if (c->nv == 0)
            continue;
        fprintf(d, "\n\n# violations of %s at the time of their first seq: t_s\n", c->name);
        for (size_t k = 0; k < c->nv; k++) {
            const qc__rviolation *v = &c->v[k];
            int64_t first = INT64_MAX;
            for (size_t j = 0; j < v->nseq; j++)
                first = v->seq[j] < first ? v->seq[j] : first;
            const qc_event *e = v->nseq > 0 ? qc__report_find_seq(h, first) : NULL;
            if (e != NULL && e->t != QC_NO_TIME) {
                fprintf(d, "%.3f\n", e->t / 1000.0);
                n++;
            }
        }
        if (n == 0)
            fprintf(d, "?\n");
        vname[nvc] = c->name;
        vtotal[nvc] = c->violations_total >= 0 ? c->violations_total : (long)c->nv;
        vstored[nvc++] = n;
    }
    if (close_plot(d, pdir, "throughput", "dat", err) != 0)
        return QC_EIO;

    if ((g = open_plot(pdir, "throughput", "gp", err)) == NULL)
        return QC_EIO;
    /* A checker name goes into a gnuplot string: keep only safe bytes. */
    char safe[8][64];
    for (size_t c = 0; c < nvc; c++) {
        size_t j = 0;
        for (const char *q = vname[c]; *q && j + 1 < sizeof safe[c]; q++)
            safe[c][j++] = (*q == '"' || *q == '\\' || (unsigned char)*q < 0x20) ? '_' : *q;
        safe[c][j] = '\0';
        vname[c] = safe[c];
    }
    fprintf(g, "# qchaos report plot 'throughput' (generated; rerun with: gnuplot "
               "throughput.gp)\n"
               "set datafile missing \"?\"\nset border lc rgb \"#555555\"\n"
               "if (strstrt(GPVAL_TERMINALS, \" pngcairo \") > 0) {\n"
               "    set terminal pngcairo size 1000,560 noenhanced font \"sans,10\"\n"
               "} else {\n    set terminal png size 1000,560 noenhanced\n}\n"
               "set output \"throughput.png\"\n");
    throughput_body(g, s, &ph, xmax, ytop, nfk, vname, vtotal, vstored, nvc);
    fprintf(g, "set terminal svg size 1000,560 noenhanced font \"sans,10\" background "
               "\"#ffffff\"\nset output \"throughput.svg\"\n");
    throughput_body(g, s, &ph, xmax, ytop, nfk, vname, vtotal, vstored, nvc);
    fprintf(g, "unset output\n");
    if (close_plot(g, pdir, "throughput", "gp", err) != 0)
        return QC_EIO;
    add_plot(p, "throughput",
             "Throughput over time with the run's phases; faults per kind and violations per "
             "checker above");
    return 0;
}

/* Idle streaks as bounded_idle_polling judges them (harness/check_idle.c):
 * a worker incarnation's consecutive empty claims; the streak runs from
 * the first one's invoke to the last one's answer (D ms, N claims), and the
 * checker allows N <= ceil(D/1000 x R) + 2 + ramp, R = max_idle_polls_per_s
 * and ramp the doublings from the idle base to its cap.  The plot draws
 * each streak of two or more claims as a segment at its rate N/(D/1000),
 * and above it, dashed, the rate that bound allows over that streak
 * ((ceil(D/1000 x R) + 2 + ramp) / (D/1000)), which approaches R for long
 * streaks. */
typedef struct idle_w {
    int worker, inc, open;
    long n;
    double start, last;
} idle_w;

static int write_idle(const char *pdir, const qc_history *h, const qc__results *r, const series *s,
                      qc__plots *p, qc_err *err)
{
    const qc_run_info *in = &h->info;
    double cap_lo = (double)in->idle_cap_ms * (1.0 - in->idle_jitter);
    double rate = in->max_idle_polls_per_s > 0 ? in->max_idle_polls_per_s
                  : cap_lo > 0                 ? 2.0 * 1000.0 / cap_lo
                                               : 0;
    long ramp = 0, nseg = 0;
    double ymax = rate > 0 ? rate * 1.5 : 1.0;
    idle_w *ws = NULL;
    size_t nw = 0;
    FILE *d, *g;

    (void)r;
    (void)s;
    if (in->idle_base_ms > 0 && in->idle_cap_ms > in->idle_base_ms)
        ramp = (long)ceil(log2((double)in->idle_cap_ms / (double)in->idle_base_ms));
    if ((d = open_plot(pdir, "idle_polls", "dat", err)) == NULL)
        return QC_EIO;
    fprintf(d, "# idle streaks: from_s to_s rate_per_s allowed_per_s empty_claims worker inc\n");
    for (size_t i = 0; i <= h->n; i++) {
        const qc_event *e = i < h->n ? &h->ev[i] : NULL;
        idle_w *w = NULL;
        if (e != NULL && (e->worker < 0 || e->op != QC_OP_CLAIM ||
                          (e->type != QC_EV_OK && e->type != QC_EV_FAIL && e->type != QC_EV_INFO)))
            continue;
        if (e != NULL) {
            for (size_t k = 0; k < nw && w == NULL; k++)
                if (ws[k].worker == e->worker && ws[k].inc == e->inc)
                    w = &ws[k];
            if (w == NULL) {
                idle_w *nws = realloc(ws, (nw + 1) * sizeof *ws);
                if (nws == NULL) {
                    free(ws);
                    fclose(d);
                    return qc_err_set(err, QC_ENOMEM, "idle plot: out of memory");
                }
                ws = nws;
                w = &ws[nw++];
                memset(w, 0, sizeof *w);
                w->worker = e->worker;
                w->inc = e->inc;
            }
        }
        int empty = e != NULL && e->type == QC_EV_OK && e->rows == 0 && e->job == QC_NO_JOB;
        /* close the streaks that end here (every streak at the end) */
        for (size_t k = 0; k < nw; k++) {
            idle_w *x = &ws[k];
            if (!x->open || (e != NULL && (x != w || empty)))
                continue;
            x->open = 0;
            double dms = x->last - x->start;
            if (x->n < 2 || dms <= 0)
                continue;
            double allowed = (ceil(dms / 1000.0 * rate) + 2 + (double)ramp) / (dms / 1000.0);
            double rt = (double)x->n / (dms / 1000.0);
            fprintf(d, "%.3f %.3f %.3f %.3f %ld %d %d\n", x->start / 1000.0, x->last / 1000.0, rt,
                    allowed, x->n, x->worker, x->inc);
            nseg++;
            ymax = fmax(ymax, fmax(rt, allowed));
        }
        if (empty) {
            double inv = e->invoke >= 0 && (size_t)e->invoke < h->n ? h->ev[e->invoke].t : e->t;
            if (!w->open) {
                w->open = 1;
                w->n = 0;
                w->start = inv;
            }
            w->n++;
            w->last = e->t;
        }
    }
    free(ws);
    if (nseg == 0)
        fprintf(d, "? ? ? ? ? ? ?\n");
    if (close_plot(d, pdir, "idle_polls", "dat", err) != 0)
        return QC_EIO;
    if (nseg == 0) {
        note(p, "idle-poll plot skipped: no idle streak of two or more empty claims");
        return 0;
    }
    if ((g = open_plot(pdir, "idle_polls", "gp", err)) == NULL)
        return QC_EIO;
    gp_begin(g, "idle_polls");
    fprintf(g,
            "set title \"Idle polls: empty claims per second within each idle streak (one "
            "segment per streak of a worker)\"\n"
            "set xlabel \"time since run start (s)\"\n"
            "set ylabel \"empty claims per second, per worker (log scale)\"\n"
            "set logscale y\n"
            "set yrange [1:%.3f]\n"
            "set ytics format \"%%g\"\n"
            "set key top right opaque box\n",
            ymax * 3);
    fprintf(g,
            "plot \"idle_polls.dat\" using 1:4:($2-$1):(0) with vectors nohead dt 2 lw 1.5 "
            "lc rgb \"#e06666\" title \"allowed over that streak: (ceil(D x R) + 2 + %ld) / D\", "
            "\\\n     \"idle_polls.dat\" using 1:3:($2-$1):(0) with vectors nohead lw 3 "
            "lc rgb \"#674ea7\" title \"a streak's rate: its empty claims / its length D "
            "(%ld streaks)\"",
            ramp, nseg);
    if (rate > 0)
        fprintf(g,
                ", \\\n     %.4f with lines lw 2 lc rgb \"#cc0000\" title \"R = %.4g/s "
                "(max_idle_polls_per_s), the bound of a long streak\"",
                rate, rate);
    fprintf(g, "\n");
    gp_end(g, "idle_polls");
    if (close_plot(g, pdir, "idle_polls", "gp", err) != 0)
        return QC_EIO;
    add_plot(p, "idle_polls", "Idle polls per idle streak, with bounded_idle_polling's bound");
    return 0;
}

/* ---- latency percentiles ----------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Nearest-rank quantile of sorted v[0..n). */
static double quantile(const double *v, size_t n, double q)
{
    double r = ceil(q * (double)n);
    size_t i = r < 1 ? 0 : (size_t)r - 1;

    return v[i < n ? i : n - 1];
}

static void write_quantiles(FILE *d, const double *v, size_t n)
{
    /* x = 1 / (1 - q) on a log axis: 1 = 0 %, 10 = 90 %, 100 = 99 % ... */
    double top = log10((double)n);

    for (int k = 0; k <= 200; k++) {
        double x = pow(10.0, top * k / 200.0), q = 1.0 - 1.0 / x;
        /* The last point (x = n) stands for the top 1/n: the maximum. */
        double y = k == 200 ? v[n - 1] : quantile(v, n, q);
        fprintf(d, "%.6g %.6g\n", x, y > 0.001 ? y : 0.001);
    }
}

static int write_latency(const char *pdir, const qc_history *h, qc__plots *p, qc_err *err)
{
    double *lat[2] = {NULL, NULL};
    size_t nl[2] = {0, 0};
    unsigned char *seen = calloc(h->n ? h->n : 1, 1);
    static const double qs[5] = {0.5, 0.9, 0.99, 0.999, 1.0};
    FILE *d = NULL, *g = NULL;
    int rc = 0;

    lat[0] = malloc((h->n ? h->n : 1) * sizeof(double));
    lat[1] = malloc((h->n ? h->n : 1) * sizeof(double));
    if (seen == NULL || lat[0] == NULL || lat[1] == NULL) {
        rc = qc_err_set(err, QC_ENOMEM, "latency plot: out of memory");
        goto out;
    }
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i], *inv;
        int which;
        if ((e->type != QC_EV_OK && e->type != QC_EV_FAIL && e->type != QC_EV_INFO) ||
            e->invoke < 0 || (size_t)e->invoke >= h->n || seen[e->invoke])
            continue;
        which = e->op == QC_OP_CLAIM ? 0 : e->op == QC_OP_COMPLETE ? 1 : -1;
        inv = &h->ev[e->invoke];
        if (which < 0 || e->t == QC_NO_TIME || inv->t == QC_NO_TIME)
            continue;
        seen[e->invoke] = 1; /* a claim of n jobs answers with n lines */
        lat[which][nl[which]++] = e->t - inv->t;
    }
    for (int w = 0; w < 2; w++) {
        qsort(lat[w], nl[w], sizeof(double), cmp_double);
        for (int k = 0; k < 5; k++)
            (w == 0 ? p->claim_pct : p->complete_pct)[k] =
                nl[w] > 0 ? quantile(lat[w], nl[w], qs[k]) : -1.0;
    }
    p->claim_n = (long)nl[0];
    p->complete_n = (long)nl[1];
    if (nl[0] == 0 && nl[1] == 0) {
        note(p, "latency plot skipped: no claim or complete request was answered");
        goto out;
    }
    if ((d = open_plot(pdir, "latency", "dat", err)) == NULL) {
        rc = QC_EIO;
        goto out;
    }
    fprintf(d, "# claim latency: x = 1/(1-quantile), ms\n");
    if (nl[0] > 0)
        write_quantiles(d, lat[0], nl[0]);
    else
        fprintf(d, "? ?\n");
    fprintf(d, "\n\n# complete latency: x = 1/(1-quantile), ms\n");
    if (nl[1] > 0)
        write_quantiles(d, lat[1], nl[1]);
    else
        fprintf(d, "? ?\n");
    rc = close_plot(d, pdir, "latency", "dat", err);
    if (rc != 0)
        goto out;
    if ((g = open_plot(pdir, "latency", "gp", err)) == NULL) {
        rc = QC_EIO;
        goto out;
    }
    gp_begin(g, "latency");
    fprintf(g, "set title \"Request latency percentiles (invoke to answer)\"\n"
               "set xlabel \"percentile\"\n"
               "set ylabel \"latency (ms)\"\n"
               "set logscale xy\n"
               "set xrange [1:*]\n"
               /* A tic label is a format: "%%" (here "%%%%") is a literal %. */
               "set xtics (\"0%%%%\" 1, \"50%%%%\" 2, \"90%%%%\" 10, \"99%%%%\" 100, "
               "\"99.9%%%%\" 1000, \"99.99%%%%\" 10000, \"99.999%%%%\" 100000, "
               "\"99.9999%%%%\" 1000000)\n"
               "set key top left opaque box\n"
               "plot ");
    if (nl[0] > 0)
        fprintf(g,
                "\"latency.dat\" index 0 using 1:2 with lines lw 2 lc rgb \"#3c78d8\" "
                "title \"claim (%zu requests)\"%s",
                nl[0], nl[1] > 0 ? ", \\\n     " : "");
    if (nl[1] > 0)
        fprintf(g,
                "\"latency.dat\" index 1 using 1:2 with lines lw 2 lc rgb \"#e69138\" "
                "title \"complete (%zu requests)\"",
                nl[1]);
    fprintf(g, "\n");
    gp_end(g, "latency");
    rc = close_plot(g, pdir, "latency", "gp", err);
    if (rc == 0)
        add_plot(p, "latency", "Claim and complete latency percentiles");
out:
    free(seen);
    free(lat[0]);
    free(lat[1]);
    return rc;
}

/* ---- latency over time (pgbench --aggregate-interval style) ---------------- */

typedef struct lat_sample {
    int op;
    size_t bin;
    double ms;
} lat_sample;

static int cmp_lat(const void *pa, const void *pb)
{
    const lat_sample *a = pa, *b = pb;

    if (a->op != b->op)
        return a->op - b->op;
    if (a->bin != b->bin)
        return a->bin < b->bin ? -1 : 1;
    return a->ms < b->ms ? -1 : a->ms > b->ms;
}

/* Per request type and per interval (4 time-series bins), the p50, p90,
 * p99 and max latency (client ms from invoke to answer) of the requests
 * answered in it. */
static int write_latency_time(const char *pdir, const qc_history *h, const series *s, qc__plots *p,
                              qc_err *err)
{
    static const qc_op ops[] = {QC_OP_CLAIM, QC_OP_COMPLETE, QC_OP_RENEW, QC_OP_FAIL, QC_OP_REAP};
    static const char *const colours[] = {"#3c78d8", "#e69138", "#6aa84f", "#cc0000", "#674ea7"};
    size_t nops = sizeof ops / sizeof ops[0], n = 0, per[5] = {0, 0, 0, 0, 0};
    double ival = s->bin_ms * 4;
    lat_sample *v = malloc((h->n ? h->n : 1) * sizeof *v);
    unsigned char *seen = calloc(h->n ? h->n : 1, 1);
    FILE *d = NULL, *g = NULL;
    int rc = 0;

    if (v == NULL || seen == NULL) {
        rc = qc_err_set(err, QC_ENOMEM, "latency plot: out of memory");
        goto out;
    }
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        int k = -1;
        if ((e->type != QC_EV_OK && e->type != QC_EV_FAIL && e->type != QC_EV_INFO) ||
            e->invoke < 0 || (size_t)e->invoke >= h->n || seen[e->invoke] || e->t == QC_NO_TIME ||
            h->ev[e->invoke].t == QC_NO_TIME)
            continue;
        for (size_t o = 0; o < nops; o++)
            if (ops[o] == e->op)
                k = (int)o;
        if (k < 0)
            continue;
        seen[e->invoke] = 1;
        v[n++] = (lat_sample){k, (size_t)((e->t - s->t0) / ival), e->t - h->ev[e->invoke].t};
        per[k]++;
    }
    if (n == 0)
        goto out; /* write_latency already noted it */
    qsort(v, n, sizeof *v, cmp_lat);
    if ((d = open_plot(pdir, "latency_time", "dat", err)) == NULL) {
        rc = QC_EIO;
        goto out;
    }
    for (size_t o = 0; o < nops; o++) {
        fprintf(d, "%s# %s: t_s requests p50_ms p90_ms p99_ms max_ms (per %.0f ms)\n",
                o ? "\n\n" : "", qc_op_name(ops[o]), ival);
        size_t wrote = 0;
        for (size_t i = 0; i < n;) {
            size_t j = i;
            while (j < n && v[j].op == v[i].op && v[j].bin == v[i].bin)
                j++;
            if (v[i].op == (int)o) {
                double lat[4];
                size_t m = j - i;
                static const double q[3] = {0.5, 0.9, 0.99};
                for (int k = 0; k < 3; k++) {
                    double rr = ceil(q[k] * (double)m);
                    size_t idx = rr < 1 ? 0 : (size_t)rr - 1;
                    lat[k] = v[i + (idx < m ? idx : m - 1)].ms;
                }
                lat[3] = v[j - 1].ms;
                fprintf(d, "%.3f %zu %.3f %.3f %.3f %.3f\n",
                        (s->t0 + ((double)v[i].bin + 0.5) * ival) / 1000.0, m, fmax(lat[0], 0.01),
                        fmax(lat[1], 0.01), fmax(lat[2], 0.01), fmax(lat[3], 0.01));
                wrote++;
            }
            i = j;
        }
        if (wrote == 0)
            fprintf(d, "? ? ? ? ? ?\n");
    }
    if ((rc = close_plot(d, pdir, "latency_time", "dat", err)) != 0)
        goto out;
    if ((g = open_plot(pdir, "latency_time", "gp", err)) == NULL) {
        rc = QC_EIO;
        goto out;
    }
    gp_begin(g, "latency_time");
    fprintf(g,
            "set title \"Request latency over time per request type (invoke to answer, per "
            "%.0f ms): p50 solid, p99 dashed\"\n"
            "set xlabel \"time since run start (s)\"\n"
            "set ylabel \"latency (ms, log scale)\"\n"
            "set logscale y\nset key outside right top box\nplot ",
            ival);
    int first = 1;
    for (size_t o = 0; o < nops; o++) {
        if (per[o] == 0)
            continue;
        fprintf(g,
                "%s\"latency_time.dat\" index %zu using 1:3 with linespoints pt 7 ps 0.4 lw 2 "
                "lc rgb \"%s\" title \"%s p50 (%zu)\", \\\n     \"latency_time.dat\" index %zu "
                "using 1:5 with lines dt 2 lw 1.5 lc rgb \"%s\" title \"%s p99\"",
                first ? "" : ", \\\n     ", o, colours[o], qc_op_name(ops[o]), per[o], o,
                colours[o], qc_op_name(ops[o]));
        first = 0;
    }
    fprintf(g, "\n");
    gp_end(g, "latency_time");
    rc = close_plot(g, pdir, "latency_time", "gp", err);
    if (rc == 0)
        add_plot(p, "latency_time", "Latency percentiles over time, per request type");
out:
    free(v);
    free(seen);
    return rc;
}

/* ---- queue depth (monitor samples) -------------------------------------- */

static void put_count(FILE *d, long v)
{
    if (v >= 0)
        fprintf(d, " %ld", v);
    else
        fputs(" ?", d);
}

static int write_queue_depth(const char *pdir, const qc_history *h, qc__plots *p, qc_err *err)
{
    const char *style;
    size_t n = 0;
    FILE *d, *g;

    for (size_t i = 0; i < h->n; i++)
        n += h->ev[i].type == QC_EV_MONITOR && h->ev[i].t != QC_NO_TIME;
    if (n == 0) {
        note(p, "queue depth plot skipped: the ledger has no monitor samples (the protocol "
                "has no monitor statement)");
        return 0;
    }
    if ((d = open_plot(pdir, "queue_depth", "dat", err)) == NULL)
        return QC_EIO;
    fprintf(d, "# t_s ready inflight expired dead oldest_ready_age_ms\n");
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type != QC_EV_MONITOR || e->t == QC_NO_TIME)
            continue;
        fprintf(d, "%.3f", e->t / 1000.0);
        put_count(d, qc_x(e->x)->ready);
        put_count(d, qc_x(e->x)->inflight);
        put_count(d, qc_x(e->x)->expired);
        put_count(d, qc_x(e->x)->dead);
        if (qc_x(e->x)->oldest_ready_age_ms >= 0)
            fprintf(d, " %.3f\n", qc_x(e->x)->oldest_ready_age_ms);
        else
            fputs(" ?\n", d);
    }
    if (close_plot(d, pdir, "queue_depth", "dat", err) != 0)
        return QC_EIO;
    if ((g = open_plot(pdir, "queue_depth", "gp", err)) == NULL)
        return QC_EIO;
    /* Few samples (a short run) are easier to read as points. */
    style = n < 60 ? "linespoints pt 7 ps 0.6" : "lines";
    gp_begin(g, "queue_depth");
    fprintf(g,
            "set title \"Queue depth and oldest-ready age (monitor samples)\"\n"
            "set xlabel \"time since run start (s)\"\n"
            "set ylabel \"jobs\"\n"
            "set y2label \"oldest ready job's age (ms)\"\n"
            "set yrange [0:*]\n"
            "set y2range [0:*]\n"
            "set ytics nomirror\n"
            "set y2tics\n"
            "plot \"queue_depth.dat\" using 1:2 with %s lw 2 lc rgb \"#3c78d8\" "
            "title \"ready\", \\\n"
            "     \"queue_depth.dat\" using 1:3 with %s lw 2 lc rgb \"#6aa84f\" "
            "title \"in flight\", \\\n"
            "     \"queue_depth.dat\" using 1:4 with %s lw 1 lc rgb \"#e69138\" "
            "title \"expired\", \\\n"
            "     \"queue_depth.dat\" using 1:5 with %s lw 1 lc rgb \"#cc0000\" "
            "title \"dead\", \\\n"
            "     \"queue_depth.dat\" using 1:6 axes x1y2 with %s lw 1 dt 2 "
            "lc rgb \"#555555\" title \"oldest-ready age (ms, right)\"\n",
            style, style, style, style, style);
    gp_end(g, "queue_depth");
    if (close_plot(g, pdir, "queue_depth", "gp", err) != 0)
        return QC_EIO;
    add_plot(p, "queue_depth", "Queue depth and oldest-ready age over time");
    return 0;
}

/* ---- recovery time -------------------------------------------------------- */

/* The recovery checker's own measurements (qc_recovery_times): the plot
 * and the report's footer count the faults the checker judges and the
 * recovery times it measured, so the numbers agree with its verdict. */
static int write_recovery(const char *pdir, const qc_history *h, qc__plots *p, qc_err *err)
{
    size_t nrec = 0, nbins;
    double *rec = NULL, width, max = 0;
    long *hist = NULL;
    FILE *d = NULL, *g = NULL;
    int rc = 0;

    /* The bound the recovery checker documents (harness/checkers.h):
     * lease + reaper interval + slack, client ms. */
    double bound =
        h->info.lease_ms > 0
            ? (double)(h->info.lease_ms + h->info.reaper_interval_ms + h->info.recovery_slack_ms)
            : 0;
    p->faults = (long)qc_recovery_faults(h);
    nrec = qc_recovery_times(h, NULL, 0);
    rec = malloc((nrec ? nrec : 1) * sizeof *rec);
    if (rec == NULL) {
        rc = qc_err_set(err, QC_ENOMEM, "recovery plot: out of memory");
        goto out;
    }
    nrec = qc_recovery_times(h, rec, nrec);
    for (size_t i = 0; i < nrec; i++)
        max = rec[i] > max ? rec[i] : max;
    p->recovered = (long)nrec;
    p->recovery_p50 = p->recovery_max = -1.0;
    if (nrec > 0) {
        qsort(rec, nrec, sizeof *rec, cmp_double);
        p->recovery_p50 = quantile(rec, nrec, 0.5);
        p->recovery_max = rec[nrec - 1];
    }
    if (nrec == 0) {
        note(p, p->faults == 0 ? "recovery-time histogram skipped: no fault left a job "
                                 "without its owner"
                               : "recovery-time histogram skipped: no recovery time was "
                                 "measured");
        goto out;
    }
    width = nice_bin(max * TARGET_BINS / 30.0);
    if (width < 1)
        width = 1;
    nbins = (size_t)(max / width) + 1;
    hist = calloc(nbins, sizeof *hist);
    if (hist == NULL) {
        rc = qc_err_set(err, QC_ENOMEM, "recovery plot: out of memory");
        goto out;
    }
    for (size_t i = 0; i < nrec; i++) {
        size_t b = rec[i] > 0 ? (size_t)(rec[i] / width) : 0;
        hist[b < nbins ? b : nbins - 1]++;
    }
    if ((d = open_plot(pdir, "recovery", "dat", err)) == NULL) {
        rc = QC_EIO;
        goto out;
    }
    fprintf(d, "# bin_center_ms jobs (bin width %.0f ms)\n", width);
    for (size_t b = 0; b < nbins; b++)
        fprintf(d, "%.3f %ld\n", (b + 0.5) * width, hist[b]);
    if ((rc = close_plot(d, pdir, "recovery", "dat", err)) != 0)
        goto out;
    if ((g = open_plot(pdir, "recovery", "gp", err)) == NULL) {
        rc = QC_EIO;
        goto out;
    }
    gp_begin(g, "recovery");
    fprintf(g,
            "set title \"Recovery time: fault to the recovery of its job (%zu of %ld "
            "faults judged by the recovery checker)\"\n"
            "set xlabel \"recovery time (ms, client clock)\"\n"
            "set ylabel \"jobs\"\n"
            "set xrange [0:%.0f]\n"
            "set yrange [0:*]\n"
            "set boxwidth %.3f absolute\n"
            "set style fill solid 0.6 border lc rgb \"#1c4587\"\n",
            nrec, p->faults, (bound > max ? bound : max) * 1.1 + width, width * 0.9);
    if (bound > 0)
        fprintf(g,
                "set arrow 1 from %.0f,graph 0 to %.0f,graph 1 nohead lw 2 dt 2 lc rgb "
                "\"#cc0000\"\n"
                "set label 1 \"bound %.0f ms = lease %ld + reaper interval %ld + slack %ld\" "
                "at %.0f,graph 0.92 right offset -0.5,0 font \",9\" tc rgb \"#cc0000\"\n",
                bound, bound, bound, h->info.lease_ms, h->info.reaper_interval_ms,
                h->info.recovery_slack_ms, bound);
    fprintf(g, "plot \"recovery.dat\" using 1:2 with boxes lc rgb \"#6d9eeb\" title \"jobs\"\n");
    gp_end(g, "recovery");
    rc = close_plot(g, pdir, "recovery", "gp", err);
    if (rc == 0)
        add_plot(p, "recovery", "Recovery-time histogram, with the recovery bound");
out:
    free(rec);
    free(hist);
    return rc;
}

int qc__plots_make(const char *dir, const qc_history *h, const qc__results *r, qc__plots *p,
                   qc_err *err)
{
    char pdir[QC__DIR_MAX + 16], path[QC__PATH_MAX];
    series s;
    int rc;

    memset(p, 0, sizeof *p);
    snprintf(pdir, sizeof pdir, "%s/plots", dir);
    if (mkdir(pdir, 0755) != 0 && errno != EEXIST)
        return qc_err_set(err, QC_EIO, "cannot create folder '%s': %s", pdir, strerror(errno));
    for (size_t i = 0; i < sizeof plot_names / sizeof plot_names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s.png", pdir, plot_names[i]);
        remove(path);
        snprintf(path, sizeof path, "%s/%s.svg", pdir, plot_names[i]);
        remove(path);
    }
    snprintf(path, sizeof path, "%s/gnuplot.log", pdir);
    remove(path);

    rc = series_build(h, &s);
    if (rc != 0) {
        series_fini(&s);
        return qc_err_set(err, QC_ENOMEM, "plots: out of memory");
    }
    p->bin_ms = s.bin_ms;
    if (s.nbins == 0)
        note(p, "throughput and idle-poll plots skipped: the ledger has no timed event");
    if (rc == 0 && s.nbins > 0)
        rc = write_throughput(pdir, h, r, &s, p, err);
    if (rc == 0)
        rc = write_latency(pdir, h, p, err);
    if (rc == 0 && s.nbins > 0)
        rc = write_latency_time(pdir, h, &s, p, err);
    if (rc == 0)
        rc = write_queue_depth(pdir, h, p, err);
    if (rc == 0 && s.nbins > 0)
        rc = write_idle(pdir, h, r, &s, p, err);
    if (rc == 0)
        rc = write_recovery(pdir, h, p, err);
    series_fini(&s);
    if (rc != 0)
        return rc;

    return 0;
}
