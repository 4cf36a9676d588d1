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

static const char *const plot_names[] = {"throughput", "latency", "queue_depth", "idle_polls",
                                         "recovery"};

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

typedef struct window {
    double from, to; /* client ms */
} window;

static int cmp_window(const void *pa, const void *pb)
{
    const window *a = pa, *b = pb;

    return a->from < b->from ? -1 : a->from > b->from;
}

/* Writes the fault windows of h as the union of their intervals (shading
 * overlapping windows one on another would only darken the plot).  *n gets
 * the number of merged windows; 0 or QC_ENOMEM. */
static int write_windows(FILE *d, const qc_history *h, size_t *n)
{
    size_t nw = 0;
    window *w = NULL;

    *n = 0;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type != QC_EV_FAULT || e->t == QC_NO_TIME || e->until_t == QC_NO_TIME ||
            e->until_t <= e->t)
            continue;
        if (nw % 256 == 0) {
            window *nwp = realloc(w, (nw + 256) * sizeof *w);
            if (nwp == NULL) {
                free(w);
                return QC_ENOMEM;
            }
            w = nwp;
        }
        w[nw++] = (window){e->t, e->until_t};
    }
    if (nw > 0) /* w is NULL when there is no window: qsort(NULL) is undefined */
        qsort(w, nw, sizeof *w, cmp_window);
    for (size_t i = 0; i < nw;) {
        window u = w[i++];
        while (i < nw && w[i].from <= u.to) {
            u.to = w[i].to > u.to ? w[i].to : u.to;
            i++;
        }
        fprintf(d, "%.3f %.3f\n", u.from / 1000.0, u.to / 1000.0);
        (*n)++;
    }
    if (*n == 0)
        fprintf(d, "? ?\n");
    free(w);
    return 0;
}

static int write_throughput(const char *pdir, const qc_history *h, const qc__results *r,
                            const series *s, qc__plots *p, qc_err *err)
{
    double bin_s = s->bin_ms / 1000.0, ytop = 1.0;
    size_t nwin = 0, ninst = 0, nviol = 0;
    FILE *d = open_plot(pdir, "throughput", "dat", err), *g;

    if (d == NULL)
        return QC_EIO;
    /* Index 0: time series; 1: fault windows; 2: instant faults; 3:
     * violations (gnuplot data blocks separated by two blank lines). */
    fprintf(d, "# t_s completes_per_s claimed_jobs_per_s\n");
    for (size_t b = 0; b < s->nbins; b++) {
        double c = s->completes[b] / bin_s, k = s->claims[b] / bin_s;
        ytop = c > ytop ? c : ytop;
        ytop = k > ytop ? k : ytop;
        fprintf(d, "%.3f %.3f %.3f\n", (s->t0 + (b + 0.5) * s->bin_ms) / 1000.0, c, k);
    }
    ytop *= 1.15;
    fprintf(d, "\n\n# fault windows (overlapping ones merged): from_s to_s\n");
    if (write_windows(d, h, &nwin) != 0) {
        fclose(d);
        return qc_err_set(err, QC_ENOMEM, "throughput plot: out of memory");
    }
    fprintf(d, "\n\n# instant faults: t_s\n");
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type == QC_EV_FAULT && e->t != QC_NO_TIME &&
            !(e->until_t != QC_NO_TIME && e->until_t > e->t)) {
            fprintf(d, "%.3f\n", e->t / 1000.0);
            ninst++;
        }
    }
    if (ninst == 0)
        fprintf(d, "?\n");
    fprintf(d, "\n\n# violations at the time of their first seq: t_s\n");
    for (size_t i = 0; i < r->nc; i++) {
        for (size_t k = 0; k < r->c[i].nv; k++) {
            const qc__rviolation *v = &r->c[i].v[k];
            const qc_event *e;
            int64_t first = INT64_MAX;
            for (size_t j = 0; j < v->nseq; j++)
                first = v->seq[j] < first ? v->seq[j] : first;
            e = v->nseq > 0 ? qc__report_find_seq(h, first) : NULL;
            if (e != NULL && e->t != QC_NO_TIME) {
                fprintf(d, "%.3f\n", e->t / 1000.0);
                nviol++;
            }
        }
    }
    if (nviol == 0)
        fprintf(d, "?\n");
    if (close_plot(d, pdir, "throughput", "dat", err) != 0)
        return QC_EIO;

    if ((g = open_plot(pdir, "throughput", "gp", err)) == NULL)
        return QC_EIO;
    gp_begin(g, "throughput");
    fprintf(g,
            "set title \"Throughput (per %.0f ms bin), faults and violations\"\n"
            "set xlabel \"time since run start (s)\"\n"
            "set ylabel \"jobs per second\"\n"
            "set yrange [0:%.3f]\n"
            "set style fill transparent solid 0.25 noborder\n"
            "plot ",
            s->bin_ms, ytop);
    if (nwin > 0)
        fprintf(g,
                "\"throughput.dat\" index 1 using 1:(0):1:2:(0):(%.3f) with boxxyerror "
                "lc rgb \"#e06666\" title \"fault window\", \\\n     ",
                ytop);
    if (ninst > 0)
        fprintf(g,
                "\"throughput.dat\" index 2 using 1:(%.3f) with impulses lw 1 "
                "lc rgb \"#e69138\" title \"fault\", \\\n     ",
                ytop);
    fprintf(g, "\"throughput.dat\" index 0 using 1:2 with lines lw 2 lc rgb \"#3c78d8\" "
               "title \"completes/s\", \\\n"
               "     \"throughput.dat\" index 0 using 1:3 with lines lw 1 lc rgb \"#6aa84f\" "
               "title \"claimed jobs/s\"");
    if (nviol > 0)
        fprintf(g,
                ", \\\n     \"throughput.dat\" index 3 using 1:(%.3f) with points pt 2 "
                "ps 2 lw 2 lc rgb \"#cc0000\" title \"violation\"",
                ytop * 0.94);
    fprintf(g, "\n");
    gp_end(g, "throughput");
    if (close_plot(g, pdir, "throughput", "gp", err) != 0)
        return QC_EIO;
    add_plot(p, "throughput", "Throughput over time, fault windows shaded, violations marked");
    return 0;
}

static int write_idle(const char *pdir, const qc__results *r, const series *s, qc__plots *p,
                      qc_err *err)
{
    double bin_s = s->bin_ms / 1000.0;
    long workers = r->workers > 0 ? r->workers : 1;
    FILE *d = open_plot(pdir, "idle_polls", "dat", err), *g;

    if (d == NULL)
        return QC_EIO;
    fprintf(d, "# t_s empty_claims_per_s empty_claims_per_worker_per_s\n");
    for (size_t b = 0; b < s->nbins; b++)
        fprintf(d, "%.3f %.3f %.3f\n", (s->t0 + (b + 0.5) * s->bin_ms) / 1000.0,
                s->empty[b] / bin_s, s->empty[b] / bin_s / (double)workers);
    if (close_plot(d, pdir, "idle_polls", "dat", err) != 0)
        return QC_EIO;
    if ((g = open_plot(pdir, "idle_polls", "gp", err)) == NULL)
        return QC_EIO;
    gp_begin(g, "idle_polls");
    fprintf(g,
            "set title \"Idle polls: empty claims per second (per %.0f ms bin)\"\n"
            "set xlabel \"time since run start (s)\"\n"
            "set ylabel \"empty claims per second (all workers)\"\n"
            "set y2label \"per worker (%ld workers)\"\n"
            "set yrange [0:*]\n"
            "set ytics nomirror\n"
            "set link y2 via y/%ld.0 inverse y*%ld.0\n"
            "set y2tics\n"
            "plot \"idle_polls.dat\" using 1:2 with steps lw 2 lc rgb \"#674ea7\" "
            "title \"empty claims/s\"\n",
            s->bin_ms, workers, workers, workers);
    gp_end(g, "idle_polls");
    if (close_plot(g, pdir, "idle_polls", "gp", err) != 0)
        return QC_EIO;
    add_plot(p, "idle_polls", "Idle polls (empty claims) per second");
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
        put_count(d, e->ready);
        put_count(d, e->inflight);
        put_count(d, e->expired);
        put_count(d, e->dead);
        if (e->oldest_ready_age_ms >= 0)
            fprintf(d, " %.3f\n", e->oldest_ready_age_ms);
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
            "set xlabel \"recovery time (ms)\"\n"
            "set ylabel \"jobs\"\n"
            "set xrange [0:*]\n"
            "set yrange [0:*]\n"
            "set boxwidth %.3f absolute\n"
            "set style fill solid 0.6 border lc rgb \"#1c4587\"\n"
            "plot \"recovery.dat\" using 1:2 with boxes lc rgb \"#6d9eeb\" title \"jobs\"\n",
            nrec, p->faults, width * 0.9);
    gp_end(g, "recovery");
    rc = close_plot(g, pdir, "recovery", "gp", err);
    if (rc == 0)
        add_plot(p, "recovery", "Recovery-time histogram");
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
    if (rc == 0)
        rc = write_queue_depth(pdir, h, p, err);
    if (rc == 0 && s.nbins > 0)
        rc = write_idle(pdir, r, &s, p, err);
    if (rc == 0)
        rc = write_recovery(pdir, h, p, err);
    series_fini(&s);
    if (rc != 0)
        return rc;

    return 0;
}
