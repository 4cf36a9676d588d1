/*
 * figures.c - a run's numbers from its history (figures.h): the work
 * interval and jobs/s over it, latency percentiles, faults per kind,
 * recovery times and per-interval samples (results.json "figures",
 * samples.csv).
 *
 * Invariants: only the ledger is read (the same numbers come out of `qchaos
 * run` and of `qchaos audit` on its ledger); a percentile over no values
 * is absent (-1 in structs and CSV, null in JSON), never 0; every float
 * leaves here rounded (qc_round) so results.json says 4.63, not
 * 4.6299999999999999.
 */
#include "figures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkers.h"

double qc_round(double x, double step)
{
    if (step <= 0 || !isfinite(x))
        return x;
    return round(x / step) * step;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v[0..n), n > 0. */
static double pct(const double *v, size_t n, double q)
{
    size_t k = (size_t)ceil(q * (double)n);
    return v[k == 0 ? 0 : k > n ? n - 1 : k - 1];
}

static int is_ok_complete(const qc_event *e)
{
    return e->type == QC_EV_OK && e->op == QC_OP_COMPLETE && e->rows > 0;
}

/* Invoke-to-answer latency of a completion, ms; -1 when unknown. */
static double latency_ms(const qc_history *h, const qc_event *e)
{
    if (e->invoke < 0 || (size_t)e->invoke >= h->n || e->t == QC_NO_TIME)
        return -1;
    double t0 = h->ev[e->invoke].t;
    return t0 == QC_NO_TIME || e->t < t0 ? -1 : e->t - t0;
}

static int is_answer(const qc_event *e)
{
    return e->type == QC_EV_OK || e->type == QC_EV_FAIL || e->type == QC_EV_INFO;
}

void qc_figures_work(const qc_history *h, qc_work *w)
{
    memset(w, 0, sizeof *w);
    w->from_ms = w->to_ms = -1;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->t == QC_NO_TIME)
            continue;
        if (e->type == QC_EV_INVOKE && e->op == QC_OP_CLAIM && (w->from_ms < 0 || e->t < w->from_ms))
            w->from_ms = e->t;
        if (is_ok_complete(e)) {
            w->completes++;
            if (e->t > w->to_ms)
                w->to_ms = e->t;
        }
    }
    if (w->from_ms < 0 || w->to_ms < 0) {
        w->from_ms = w->to_ms = -1;
        return;
    }
    double s = (w->to_ms - w->from_ms) / 1000.0;
    w->jobs_per_s = s > 0 ? qc_round((double)w->completes / s, 0.1) : 0;
}

typedef struct lat {
    size_t k; /* interval */
    double ms;
} lat;

static int cmp_lat(const void *a, const void *b)
{
    const lat *x = a, *y = b;
    if (x->k != y->k)
        return x->k < y->k ? -1 : 1;
    return x->ms < y->ms ? -1 : x->ms > y->ms;
}

int qc_figures_samples(const qc_history *h, double interval_ms, qc_sample **out, size_t *n,
                       qc_err *err)
{
    *out = NULL;
    *n = 0;
    if (!(interval_ms > 0))
        return qc_err_set(err, QC_EINVAL, "aggregate interval must be > 0 ms");
    double first = -1, last = -1;
    size_t nlat = 0;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->t == QC_NO_TIME)
            continue;
        if (e->type == QC_EV_INVOKE && e->op == QC_OP_CLAIM && (first < 0 || e->t < first))
            first = e->t;
        if (e->t > last)
            last = e->t;
        if (is_answer(e) && e->op == QC_OP_COMPLETE)
            nlat++;
    }
    if (first < 0)
        return 0;
    size_t ns = (size_t)((last - first) / interval_ms) + 1;
    if (ns > 1000000)
        return qc_err_set(err, QC_EINVAL, "aggregate interval %.0f ms gives %zu samples "
                          "(at most 1000000)", interval_ms, ns);
    qc_sample *s = calloc(ns, sizeof *s);
    lat *l = nlat > 0 ? malloc(nlat * sizeof *l) : NULL;
    if (!s || (nlat > 0 && !l)) {
        free(s);
        free(l);
        return qc_err_set(err, QC_ENOMEM, "samples: out of memory");
    }
    for (size_t k = 0; k < ns; k++) {
        s[k].t_s = qc_round((first + (double)k * interval_ms) / 1000.0, 0.001);
        s[k].complete_ms_p50 = s[k].complete_ms_p95 = s[k].complete_ms_max = -1;
        s[k].ready = s[k].inflight = s[k].expired = s[k].dead = -1;
    }
    nlat = 0;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->t == QC_NO_TIME || e->t < first)
            continue;
        size_t k = (size_t)((e->t - first) / interval_ms);
        if (k >= ns)
            continue;
        qc_sample *x = &s[k];
        if (e->type == QC_EV_OK && e->op == QC_OP_CLAIM) {
            if (e->job == QC_NO_JOB)
                x->empty_claims++;
            else
                x->claims++;
        }
        if (is_ok_complete(e))
            x->completes++;
        if ((e->type == QC_EV_FAIL || e->type == QC_EV_INFO) && e->op != QC_OP_NONE)
            x->fail_info++;
        if (e->type == QC_EV_FAULT)
            x->faults++;
        if (e->type == QC_EV_MONITOR) {
            x->ready = qc_x(e->x)->ready;
            x->inflight = qc_x(e->x)->inflight;
            x->expired = qc_x(e->x)->expired;
            x->dead = qc_x(e->x)->dead;
        }
        if (is_answer(e) && e->op == QC_OP_COMPLETE) {
            double ms = latency_ms(h, e);
            if (ms >= 0)
                l[nlat++] = (lat){k, ms};
        }
    }
    if (nlat > 0)
        qsort(l, nlat, sizeof *l, cmp_lat);
    double *v = nlat > 0 ? malloc(nlat * sizeof *v) : NULL;
    if (nlat > 0 && !v) {
        free(s);
        free(l);
        return qc_err_set(err, QC_ENOMEM, "samples: out of memory");
    }
    for (size_t i = 0; i < nlat;) {
        size_t j = i, m = 0;
        while (j < nlat && l[j].k == l[i].k)
            v[m++] = l[j++].ms;
        qc_sample *x = &s[l[i].k];
        x->complete_ms_p50 = qc_round(pct(v, m, 0.50), 0.01);
        x->complete_ms_p95 = qc_round(pct(v, m, 0.95), 0.01);
        x->complete_ms_max = qc_round(v[m - 1], 0.01);
        i = j;
    }
    for (size_t k = 0; k < ns; k++)
        s[k].jobs_per_s = qc_round((double)s[k].completes * 1000.0 / interval_ms, 0.1);
    free(v);
    free(l);
    *out = s;
    *n = ns;
    return 0;
}

static const char csv_header[] = "t_s,claims,empty_claims,completes,jobs_per_s,fail_info,faults,"
                                 "complete_ms_p50,complete_ms_p95,complete_ms_max,ready,inflight,"
                                 "expired,dead\n";

/* %g of a rounded value: 4.63, 12, -1. */
static void put_num(FILE *f, double x, int last)
{
    fprintf(f, "%.10g%s", x, last ? "\n" : ",");
}

int qc_figures_write_csv(const char *path, const qc_sample *s, size_t n, double interval_ms,
                         qc_err *err)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return qc_err_set(err, QC_EIO, "cannot write '%s'", tmp);
    fprintf(f, "# qchaos samples: one line per %.10g s interval (pgbench --aggregate-interval); "
               "t_s = interval start, s on the client clock since the run began, the first at the first claim; -1 = none\n",
            interval_ms / 1000.0);
    fputs(csv_header, f);
    for (size_t k = 0; k < n; k++) {
        const qc_sample *x = &s[k];
        fprintf(f, "%.10g,%ld,%ld,%ld,", x->t_s, x->claims, x->empty_claims, x->completes);
        put_num(f, x->jobs_per_s, 0);
        fprintf(f, "%ld,%ld,", x->fail_info, x->faults);
        put_num(f, x->complete_ms_p50, 0);
        put_num(f, x->complete_ms_p95, 0);
        put_num(f, x->complete_ms_max, 0);
        fprintf(f, "%ld,%ld,%ld,%ld\n", x->ready, x->inflight, x->expired, x->dead);
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        remove(tmp);
        return qc_err_set(err, QC_EIO, "cannot write '%s'", path);
    }
    return 0;
}

/* {n, p50, p95, p99, max} of v[0..n) (sorted here); percentiles null when n == 0. */
static json_t *dist_json(double *v, size_t n, int with_p99)
{
    json_t *o = json_object();
    json_object_set_new(o, "n", json_integer((json_int_t)n));
    if (n > 0)
        qsort(v, n, sizeof *v, cmp_double);
    json_object_set_new(o, "p50", n ? json_real(qc_round(pct(v, n, 0.50), 0.01)) : json_null());
    json_object_set_new(o, "p95", n ? json_real(qc_round(pct(v, n, 0.95), 0.01)) : json_null());
    if (with_p99)
        json_object_set_new(o, "p99",
                            n ? json_real(qc_round(pct(v, n, 0.99), 0.01)) : json_null());
    json_object_set_new(o, "max", n ? json_real(qc_round(v[n - 1], 0.01)) : json_null());
    return o;
}

static json_t *latency_json(const qc_history *h)
{
    size_t nc = 0, nk = 0;
    for (size_t i = 0; i < h->n; i++) {
        if (!is_answer(&h->ev[i]))
            continue;
        nc += h->ev[i].op == QC_OP_CLAIM;
        nk += h->ev[i].op == QC_OP_COMPLETE;
    }
    double *c = malloc((nc + 1) * sizeof *c), *k = malloc((nk + 1) * sizeof *k);
    if (!c || !k) {
        free(c);
        free(k);
        return NULL;
    }
    nc = nk = 0;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (!is_answer(e) || (e->op != QC_OP_CLAIM && e->op != QC_OP_COMPLETE))
            continue;
        double ms = latency_ms(h, e);
        if (ms < 0)
            continue;
        if (e->op == QC_OP_CLAIM)
            c[nc++] = ms;
        else
            k[nk++] = ms;
    }
    json_t *o = json_object();
    json_object_set_new(o, "claim", dist_json(c, nc, 1));
    json_object_set_new(o, "complete", dist_json(k, nk, 1));
    free(c);
    free(k);
    return o;
}

static json_t *faults_json(const qc_history *h)
{
    json_t *o = json_object();
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type != QC_EV_FAULT || qc_x(e->x)->fault == NULL)
            continue;
        json_t *v = json_object_get(o, qc_x(e->x)->fault);
        json_object_set_new(o, qc_x(e->x)->fault, json_integer(v ? json_integer_value(v) + 1 : 1));
    }
    return o;
}

static json_t *recovery_json(const qc_history *h)
{
    size_t nf = qc_recovery_faults(h), n = qc_recovery_times(h, NULL, 0);
    double *v = malloc((n + 1) * sizeof *v);
    if (!v)
        return NULL;
    n = qc_recovery_times(h, v, n);
    json_t *vals = json_array();
    for (size_t i = 0; i < n && i < 10000; i++) /* seq order, before dist_json sorts */
        json_array_append_new(vals, json_real(qc_round(v[i], 0.01)));
    json_t *o = dist_json(v, n, 0);
    json_object_del(o, "n");
    json_object_set_new(o, "faults", json_integer((json_int_t)nf));
    json_object_set_new(o, "measured", json_integer((json_int_t)n));
    json_object_set_new(o, "values", vals);
    free(v);
    return o;
}

json_t *qc_figures_json(const qc_history *h, const qc_sample *samples, size_t n,
                        double interval_ms)
{
    json_t *o = json_object();
    qc_work w;
    qc_figures_work(h, &w);
    json_t *wo = json_object();
    int has = w.from_ms >= 0;
    json_object_set_new(wo, "from_s", has ? json_real(qc_round(w.from_ms / 1000.0, 0.001))
                                          : json_null());
    json_object_set_new(wo, "to_s", has ? json_real(qc_round(w.to_ms / 1000.0, 0.001))
                                        : json_null());
    json_object_set_new(wo, "s", has ? json_real(qc_round((w.to_ms - w.from_ms) / 1000.0, 0.001))
                                     : json_null());
    json_object_set_new(wo, "completes", json_integer(w.completes));
    json_object_set_new(wo, "jobs_per_s", json_real(w.jobs_per_s));
    json_object_set_new(wo, "interval", json_string("first claim sent to last acknowledged "
                                                    "complete (client clock)"));
    json_object_set_new(o, "work", wo);
    json_t *lo = latency_json(h), *ro = recovery_json(h);
    if (lo)
        json_object_set_new(o, "latency_ms", lo);
    json_object_set_new(o, "faults", faults_json(h));
    if (ro)
        json_object_set_new(o, "recovery_ms", ro);
    if (samples != NULL && n > 0) {
        json_t *so = json_object(), *rows = json_array();
        json_object_set_new(so, "interval_s", json_real(qc_round(interval_ms / 1000.0, 0.001)));
        for (size_t k = 0; k < n; k++) {
            const qc_sample *x = &samples[k];
            json_t *r = json_object();
            json_object_set_new(r, "t_s", json_real(x->t_s));
            json_object_set_new(r, "claims", json_integer(x->claims));
            json_object_set_new(r, "empty_claims", json_integer(x->empty_claims));
            json_object_set_new(r, "completes", json_integer(x->completes));
            json_object_set_new(r, "jobs_per_s", json_real(x->jobs_per_s));
            json_object_set_new(r, "fail_info", json_integer(x->fail_info));
            json_object_set_new(r, "faults", json_integer(x->faults));
            json_object_set_new(r, "complete_ms_p50", x->complete_ms_p50 >= 0
                                                          ? json_real(x->complete_ms_p50)
                                                          : json_null());
            json_object_set_new(r, "complete_ms_p95", x->complete_ms_p95 >= 0
                                                          ? json_real(x->complete_ms_p95)
                                                          : json_null());
            json_object_set_new(r, "ready", x->ready >= 0 ? json_integer(x->ready) : json_null());
            json_object_set_new(r, "inflight",
                                x->inflight >= 0 ? json_integer(x->inflight) : json_null());
            json_array_append_new(rows, r);
        }
        json_object_set_new(so, "rows", rows);
        json_object_set_new(o, "samples", so);
    }
    return o;
}
