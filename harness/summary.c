/*
 * summary.c - `qchaos summary DIR...` and --repeat's summary (summary.h):
 * the runs' results.json files read back, one table line per run, one per
 * checker, and an aggregate JSON.
 *
 * Invariants: every number comes from a results.json as the audit wrote it;
 * a figure a file lacks is unknown ("-", null), never 0; percentiles are
 * nearest-rank over the values pooled from every run, as figures.c's.
 */
#include "summary.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "figures.h"

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

json_t *qc_results_load(const char *path, qc_err *err)
{
    char file[4200];
    if (is_dir(path))
        snprintf(file, sizeof file, "%s/results.json", path);
    else
        snprintf(file, sizeof file, "%s", path);
    if (!is_file(file)) {
        qc_err_set(err, QC_EINVAL, "'%s' holds no results.json (a run folder or results.json "
                   "was expected)", path);
        return NULL;
    }
    json_error_t je;
    json_t *r = json_load_file(file, 0, &je);
    if (!r) {
        qc_err_set(err, QC_EINVAL, "%s:%d:%d: %s", file, je.line, je.column, je.text);
        return NULL;
    }
    const char *schema = json_string_value(json_object_get(r, "schema"));
    if (!json_is_object(r) || !schema || strncmp(schema, "qchaos-results/", 15) != 0 ||
        !json_is_array(json_object_get(r, "checkers"))) {
        qc_err_set(err, QC_EINVAL, "%s: not a qchaos results file (expected \"schema\": "
                   "\"qchaos-results/1\" and \"checkers\")", file);
        json_decref(r);
        return NULL;
    }
    return r;
}

static int add_run(json_t *runs, const char *dir, qc_err *err)
{
    json_t *r = qc_results_load(dir, err);
    if (!r)
        return -1;
    json_object_set_new(r, "dir", json_string(dir));
    json_array_append_new(runs, r);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The runs under dir, in name order: each subfolder that holds a
 * results.json is a run; a subfolder without one is looked into in turn,
 * down to 4 levels (a gate's or a mutation's folder: SCENARIO/seedS, so
 * that the folders of a sharded gate or mutation matrix, one per CI job,
 * merge into one summary: qchaos summary out-0 out-1 ...).  *found counts
 * the runs added. */
static int add_children_in(json_t *runs, const char *dir, int depth, size_t *found, qc_err *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return depth == 0 ? qc_err_set(err, QC_EINVAL, "cannot read folder '%s'", dir) : 0;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char p[4200];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        if (!is_dir(p))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **g = realloc(names, cap * sizeof *g);
            if (!g) {
                rc = qc_err_set(err, QC_ENOMEM, "out of memory");
                break;
            }
            names = g;
        }
        if ((names[n] = strdup(p)) == NULL) {
            rc = qc_err_set(err, QC_ENOMEM, "out of memory");
            break;
        }
        n++;
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        char rj[4300];
        snprintf(rj, sizeof rj, "%s/results.json", names[i]);
        if (rc == 0 && is_file(rj)) {
            if (add_run(runs, names[i], err) != 0)
                rc = QC_EINVAL;
            else
                (*found)++;
        } else if (rc == 0 && depth < 3) {
            rc = add_children_in(runs, names[i], depth + 1, found, err);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

static int add_children(json_t *runs, const char *dir, qc_err *err)
{
    size_t found = 0;
    int rc = add_children_in(runs, dir, 0, &found, err);
    char marker[4200];
    /* a gate's or a mutation matrix's folder whose share (--shard) was
     * empty holds its table and no run: nothing to add, not an error */
    snprintf(marker, sizeof marker, "%s/gate.json", dir);
    int table = is_file(marker);
    snprintf(marker, sizeof marker, "%s/mutation.json", dir);
    table |= is_file(marker);
    if (rc == 0 && found == 0 && !table)
        rc = qc_err_set(err, QC_EINVAL, "'%s' holds no results.json, nor does any folder in it "
                        "(a run folder or a folder of run folders was expected)", dir);
    return rc;
}

json_t *qc_summary_collect(const char *const *paths, int n, qc_err *err)
{
    json_t *runs = json_array();
    if (!runs) {
        qc_err_set(err, QC_ENOMEM, "out of memory");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        char rj[4200];
        snprintf(rj, sizeof rj, "%s/results.json", paths[i]);
        int rc = is_dir(paths[i]) && !is_file(rj) ? add_children(runs, paths[i], err)
                                                   : add_run(runs, paths[i], err);
        if (rc != 0) {
            json_decref(runs);
            return NULL;
        }
    }
    return runs;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double q)
{
    size_t k = (size_t)ceil(q * (double)n);
    return v[k == 0 ? 0 : k > n ? n - 1 : k - 1];
}

/* A growable list of doubles. */
typedef struct dlist {
    double *v;
    size_t n, cap;
} dlist;

static int dl_add(dlist *l, double x)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        double *g = realloc(l->v, cap * sizeof *g);
        if (!g)
            return -1;
        l->v = g;
        l->cap = cap;
    }
    l->v[l->n++] = x;
    return 0;
}

/* {n, min, median, max} of l (sorted here); null figures when empty. */
static json_t *spread_json(dlist *l, double step)
{
    json_t *o = json_object();
    if (l->n > 0)
        qsort(l->v, l->n, sizeof *l->v, cmp_double);
    json_object_set_new(o, "n", json_integer((json_int_t)l->n));
    json_object_set_new(o, "min", l->n ? json_real(qc_round(l->v[0], step)) : json_null());
    json_object_set_new(o, "median",
                        l->n ? json_real(qc_round(pct(l->v, l->n, 0.5), step)) : json_null());
    json_object_set_new(o, "max",
                        l->n ? json_real(qc_round(l->v[l->n - 1], step)) : json_null());
    return o;
}

static json_t *num_or_null(const json_t *v)
{
    return json_is_number(v) ? json_real(json_number_value(v)) : json_null();
}

/* The string o[key], or dflt when absent or not a string. */
static const char *str_or(const json_t *o, const char *key, const char *dflt)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? v : dflt;
}

json_t *qc_summary_aggregate(const json_t *runs)
{
    json_t *agg = json_object(), *checkers = json_object(), *table = json_array();
    json_t *seeds = json_array();
    long verdicts[3] = {0, 0, 0}; /* PASS, FAIL, INCONCLUSIVE */
    dlist jps = {0}, rec = {0};
    size_t i;
    json_t *run;
    json_array_foreach(runs, i, run) {
        const char *verdict = json_string_value(json_object_get(run, "verdict"));
        verdict = verdict ? verdict : "?";
        verdicts[!strcmp(verdict, "FAIL") ? 1 : !strcmp(verdict, "PASS") ? 0 : 2]++;
        json_t *seed = json_object_get(run, "seed");
        json_array_append(seeds, seed ? seed : json_null());
        json_t *m = json_object_get(run, "metrics");
        json_t *jv = json_object_get(m, "jobs_per_s");
        if (json_is_number(jv))
            dl_add(&jps, json_number_value(jv));
        json_t *ro = json_object_get(json_object_get(run, "figures"), "recovery_ms");
        json_t *vals = json_object_get(ro, "values"), *x;
        size_t k;
        json_array_foreach(vals, k, x)
            if (json_is_number(x))
                dl_add(&rec, json_number_value(x));
        json_t *row = json_object(), *failing = json_array();
        json_object_set_new(row, "dir", json_string(str_or(run, "dir", "?")));
        json_object_set(row, "seed", seed ? seed : json_null());
        json_object_set_new(row, "scenario", json_string(str_or(run, "scenario", "?")));
        json_object_set_new(row, "protocol", json_string(str_or(run, "protocol", "?")));
        json_object_set_new(row, "verdict", json_string(verdict));
        json_object_set_new(row, "exit_code", num_or_null(json_object_get(run, "exit_code")));
        json_object_set_new(row, "jobs_per_s", num_or_null(jv));
        json_object_set_new(row, "work_s", num_or_null(json_object_get(m, "work_s")));
        json_t *rr = json_object();
        json_object_set_new(rr, "p50", num_or_null(json_object_get(ro, "p50")));
        json_object_set_new(rr, "p95", num_or_null(json_object_get(ro, "p95")));
        json_object_set_new(rr, "max", num_or_null(json_object_get(ro, "max")));
        json_object_set_new(row, "recovery_ms", rr);
        json_t *c;
        json_array_foreach(json_object_get(run, "checkers"), k, c) {
            const char *name = json_string_value(json_object_get(c, "name"));
            const char *v = json_string_value(json_object_get(c, "verdict"));
            if (!name || !v)
                continue;
            json_t *co = json_object_get(checkers, name);
            if (!co) {
                co = json_object();
                json_object_set_new(co, "PASS", json_integer(0));
                json_object_set_new(co, "FAIL", json_integer(0));
                json_object_set_new(co, "INCONCLUSIVE", json_integer(0));
                json_object_set_new(co, "NOT_APPLICABLE", json_integer(0));
                json_object_set_new(co, "judged_runs", json_integer(0));
                json_object_set_new(co, "violations_total", json_integer(0));
                json_object_set_new(co, "failing_seeds", json_array());
                json_object_set_new(co, "first_violation_s", json_array()); /* values, for now */
                json_object_set_new(checkers, name, co);
            }
            json_t *cnt = json_object_get(co, v);
            if (json_is_integer(cnt))
                json_object_set_new(co, v, json_integer(json_integer_value(cnt) + 1));
            if (json_is_true(json_object_get(c, "judged")))
                json_object_set_new(co, "judged_runs",
                                    json_integer(json_integer_value(json_object_get(co,
                                                                                    "judged_runs")) +
                                                 1));
            json_object_set_new(
                co, "violations_total",
                json_integer(json_integer_value(json_object_get(co, "violations_total")) +
                             json_integer_value(json_object_get(c, "violations_total"))));
            if (!strcmp(v, "FAIL")) {
                json_array_append(json_object_get(co, "failing_seeds"), seed ? seed : json_null());
                json_array_append_new(failing, json_string(name));
            }
            json_t *fv = json_object_get(c, "first_violation_s");
            if (json_is_number(fv))
                json_array_append_new(json_object_get(co, "first_violation_s"),
                                      json_real(json_number_value(fv)));
        }
        json_object_set_new(row, "failing", failing);
        json_array_append_new(table, row);
    }
    /* first_violation_s: the values become their spread */
    const char *name;
    json_t *co;
    json_object_foreach(checkers, name, co) {
        dlist fv = {0};
        size_t k;
        json_t *x;
        json_array_foreach(json_object_get(co, "first_violation_s"), k, x)
            dl_add(&fv, json_number_value(x));
        json_object_set_new(co, "first_violation_s", spread_json(&fv, 0.001));
        free(fv.v);
    }
    json_object_set_new(agg, "schema", json_string("qchaos-summary/1"));
    json_object_set_new(agg, "runs", json_integer((json_int_t)json_array_size(runs)));
    json_t *vo = json_object();
    json_object_set_new(vo, "PASS", json_integer(verdicts[0]));
    json_object_set_new(vo, "FAIL", json_integer(verdicts[1]));
    json_object_set_new(vo, "INCONCLUSIVE", json_integer(verdicts[2]));
    json_object_set_new(agg, "verdicts", vo);
    json_object_set_new(agg, "seeds", seeds);
    json_object_set_new(agg, "checkers", checkers);
    json_t *ro = json_object();
    if (rec.n > 0)
        qsort(rec.v, rec.n, sizeof *rec.v, cmp_double);
    json_object_set_new(ro, "measured", json_integer((json_int_t)rec.n));
    json_object_set_new(ro, "p50", rec.n ? json_real(qc_round(pct(rec.v, rec.n, 0.5), 0.01))
                                         : json_null());
    json_object_set_new(ro, "p95", rec.n ? json_real(qc_round(pct(rec.v, rec.n, 0.95), 0.01))
                                         : json_null());
    json_object_set_new(ro, "max", rec.n ? json_real(qc_round(rec.v[rec.n - 1], 0.01))
                                         : json_null());
    json_object_set_new(agg, "recovery_ms", ro);
    json_object_set_new(agg, "jobs_per_s", spread_json(&jps, 0.1));
    json_object_set_new(agg, "table", table);
    json_object_set_new(agg, "exit_code",
                        json_integer(verdicts[1] ? 1 : verdicts[2] ? 4 : 0));
    free(jps.v);
    free(rec.v);
    return agg;
}

/* A number as text with dec decimals ("-" when null). */
static const char *num(const json_t *v, int dec, char *buf, size_t n)
{
    if (!json_is_number(v))
        return "-";
    snprintf(buf, n, "%.*f", dec, json_number_value(v));
    return buf;
}

void qc_summary_print(FILE *out, const json_t *agg)
{
    size_t i;
    json_t *row;
    char a[32], b[32], c[32], d[32], e[32], f2[32];
    fprintf(out, "%-40s %10s  %-12s %9s  %-24s %s\n", "run", "seed", "verdict", "jobs/s",
            "recovery ms p50/p95/max", "failing checkers");
    json_array_foreach(json_object_get(agg, "table"), i, row) {
        json_t *rr = json_object_get(row, "recovery_ms");
        char rec[100], failing[512] = "";
        snprintf(rec, sizeof rec, "%s/%s/%s", num(json_object_get(rr, "p50"), 0, a, sizeof a),
                 num(json_object_get(rr, "p95"), 0, b, sizeof b),
                 num(json_object_get(rr, "max"), 0, c, sizeof c));
        size_t k;
        json_t *f;
        json_array_foreach(json_object_get(row, "failing"), k, f) {
            size_t len = strlen(failing);
            snprintf(failing + len, sizeof failing - len, "%s%s", k ? ", " : "",
                     json_string_value(f));
        }
        const char *dir = json_string_value(json_object_get(row, "dir"));
        fprintf(out, "%-40s %10s  %-12s %9s  %-24s %s\n", dir ? dir : "?",
                num(json_object_get(row, "seed"), 0, d, sizeof d),
                json_string_value(json_object_get(row, "verdict")),
                num(json_object_get(row, "jobs_per_s"), 1, a, sizeof a),
                strcmp(rec, "-/-/-") ? rec : "-", failing[0] ? failing : "-");
    }
    fprintf(out, "\n%-22s %5s %5s %7s %5s %6s %11s  %s\n", "checker", "PASS", "FAIL", "INCONC",
            "N/A", "judged", "violations", "first violation s min/median/max");
    const char *name;
    json_t *co;
    json_object_foreach(json_object_get(agg, "checkers"), name, co) {
        json_t *fv = json_object_get(co, "first_violation_s");
        char fvs[100];
        snprintf(fvs, sizeof fvs, "%s/%s/%s", num(json_object_get(fv, "min"), 3, a, sizeof a),
                 num(json_object_get(fv, "median"), 3, b, sizeof b),
                 num(json_object_get(fv, "max"), 3, c, sizeof c));
        fprintf(out, "%-22s %5lld %5lld %7lld %5lld %6lld %11lld  %s\n", name,
                json_integer_value(json_object_get(co, "PASS")),
                json_integer_value(json_object_get(co, "FAIL")),
                json_integer_value(json_object_get(co, "INCONCLUSIVE")),
                json_integer_value(json_object_get(co, "NOT_APPLICABLE")),
                json_integer_value(json_object_get(co, "judged_runs")),
                json_integer_value(json_object_get(co, "violations_total")),
                strcmp(fvs, "-/-/-") ? fvs : "-");
    }
    json_t *v = json_object_get(agg, "verdicts"), *j = json_object_get(agg, "jobs_per_s");
    json_t *r = json_object_get(agg, "recovery_ms");
    fprintf(out,
            "qchaos: summary: %lld runs (%lld PASS, %lld FAIL, %lld INCONCLUSIVE); jobs/s over "
            "each run's work min %s / median %s / max %s; recovery ms p50 %s / p95 %s / max %s "
            "over %lld measured\n",
            json_integer_value(json_object_get(agg, "runs")),
            json_integer_value(json_object_get(v, "PASS")),
            json_integer_value(json_object_get(v, "FAIL")),
            json_integer_value(json_object_get(v, "INCONCLUSIVE")),
            num(json_object_get(j, "min"), 1, a, sizeof a),
            num(json_object_get(j, "median"), 1, b, sizeof b),
            num(json_object_get(j, "max"), 1, c, sizeof c),
            num(json_object_get(r, "p50"), 0, d, sizeof d),
            num(json_object_get(r, "p95"), 0, e, sizeof e),
            num(json_object_get(r, "max"), 0, f2, sizeof f2),
            json_integer_value(json_object_get(r, "measured")));
}

/* Writes j to path via path.tmp and a rename.  0 or QC_EIO. */
static int dump(const json_t *j, const char *path, qc_err *err)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (json_dump_file(j, tmp, JSON_INDENT(2) | JSON_REAL_PRECISION(12)) != 0 ||
        rename(tmp, path) != 0) {
        remove(tmp);
        return qc_err_set(err, QC_EIO, "cannot write '%s'", path);
    }
    return 0;
}

int qc_summary_run(const char *const *paths, int n, const char *json_path, FILE *out,
                   qc_err *err)
{
    json_t *runs = qc_summary_collect(paths, n, err);
    if (!runs)
        return err->code == QC_ENOMEM ? 3 : 2;
    json_t *agg = qc_summary_aggregate(runs);
    json_decref(runs);
    if (!agg) {
        qc_err_set(err, QC_ENOMEM, "out of memory");
        return 3;
    }
    qc_summary_print(out, agg);
    int code = (int)json_integer_value(json_object_get(agg, "exit_code"));
    if (json_path && dump(agg, json_path, err) != 0)
        code = 3;
    json_decref(agg);
    return code;
}

/* ---- diff ---------------------------------------------------------------- */

static int rank(const char *v)
{
    if (!v)
        return 0;
    return !strcmp(v, "FAIL") ? 2 : !strcmp(v, "INCONCLUSIVE") ? 1 : 0;
}

static json_t *find_checker(const json_t *r, const char *name)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r, "checkers"), i, c) {
        const char *n = json_string_value(json_object_get(c, "name"));
        if (n && !strcmp(n, name))
            return c;
    }
    return NULL;
}

/* The key a violation is matched by across runs: its job, else its
 * explanation. */
static void vkey(const json_t *v, char *buf, size_t n)
{
    json_t *job = json_object_get(v, "job");
    if (json_is_integer(job))
        snprintf(buf, n, "job %lld", json_integer_value(job));
    else
        snprintf(buf, n, "%s", str_or(v, "explanation", "?"));
}

static int has_key(const json_t *c, const char *key)
{
    size_t i;
    json_t *v;
    char k[600];
    json_array_foreach(json_object_get(c, "violations"), i, v) {
        vkey(v, k, sizeof k);
        if (!strcmp(k, key))
            return 1;
    }
    return 0;
}

/* Violations of checker ca (may be NULL) that cb lacks, printed with label
 * and appended to arr as {checker, key, explanation}; returns how many. */
static long only_in(FILE *out, const char *label, const char *name, const json_t *ca,
                    const json_t *cb, json_t *arr)
{
    long n = 0;
    size_t i;
    json_t *v;
    char k[600];
    json_t *seen = json_object(); /* keys already told: one line per job */
    json_array_foreach(json_object_get(ca, "violations"), i, v) {
        vkey(v, k, sizeof k);
        if ((cb && has_key(cb, k)) || json_object_get(seen, k))
            continue;
        json_object_set_new(seen, k, json_true());
        const char *ex = json_string_value(json_object_get(v, "explanation"));
        if (n < 20)
            fprintf(out, "  %s %s %s: %s\n", label, name, k, ex ? ex : "");
        json_t *o = json_object();
        json_object_set_new(o, "checker", json_string(name));
        json_object_set_new(o, "key", json_string(k));
        json_object_set_new(o, "explanation", json_string(ex ? ex : ""));
        json_array_append_new(arr, o);
        n++;
    }
    json_decref(seen);
    if (n > 20)
        fprintf(out, "  ... and %ld more %s %s\n", n - 20, label, name);
    return n;
}

/* One shift line "  NAME A -> B (+x %)" and its JSON {a, b}. */
static void shift(FILE *out, json_t *shifts, const char *name, const json_t *a, const json_t *b,
                  const char *unit)
{
    json_t *o = json_object();
    json_object_set_new(o, "a", num_or_null(a));
    json_object_set_new(o, "b", num_or_null(b));
    json_object_set_new(shifts, name, o);
    char x[32], y[32], pc[48] = "";
    if (json_is_number(a) && json_is_number(b) && json_number_value(a) != 0)
        snprintf(pc, sizeof pc, " (%+.1f %%)",
                 100.0 * (json_number_value(b) - json_number_value(a)) / json_number_value(a));
    fprintf(out, "  %-28s %10s -> %-10s %s%s\n", name, num(a, 2, x, sizeof x),
            num(b, 2, y, sizeof y), unit, pc);
}

int qc_diff_run(const char *a, const char *b, const char *json_path, FILE *out, qc_err *err)
{
    json_t *ra = qc_results_load(a, err);
    if (!ra)
        return 2;
    json_t *rb = qc_results_load(b, err);
    if (!rb) {
        json_decref(ra);
        return 2;
    }
    json_t *res = json_object(), *rows = json_array(), *added = json_array(),
           *gone = json_array(), *shifts = json_object(), *worse = json_array();
    fprintf(out, "A: %s (seed %lld, %s, %s)\nB: %s (seed %lld, %s, %s)\n\n", a,
            json_integer_value(json_object_get(ra, "seed")),
            str_or(ra, "protocol", "protocol unknown"), str_or(ra, "verdict", "?"), b,
            json_integer_value(json_object_get(rb, "seed")),
            str_or(rb, "protocol", "protocol unknown"), str_or(rb, "verdict", "?"));
    fprintf(out, "%-22s %-15s %-15s %16s  %s\n", "checker", "A", "B", "violations A -> B",
            "change");
    /* every checker of B, then those only A has */
    for (int pass = 0; pass < 2; pass++) {
        const json_t *from = pass == 0 ? rb : ra;
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(from, "checkers"), i, c) {
            const char *name = json_string_value(json_object_get(c, "name"));
            if (!name || (pass == 1 && find_checker(rb, name)))
                continue;
            json_t *ca = find_checker(ra, name), *cb = find_checker(rb, name);
            const char *va = ca ? json_string_value(json_object_get(ca, "verdict")) : NULL;
            const char *vb = cb ? json_string_value(json_object_get(cb, "verdict")) : NULL;
            long na = ca ? (long)json_integer_value(json_object_get(ca, "violations_total")) : 0;
            long nb = cb ? (long)json_integer_value(json_object_get(cb, "violations_total")) : 0;
            int judged = cb && json_is_true(json_object_get(cb, "judged"));
            long fresh = 0;
            if (cb) {
                char k[600];
                size_t j;
                json_t *v;
                json_array_foreach(json_object_get(cb, "violations"), j, v) {
                    vkey(v, k, sizeof k);
                    fresh += !(ca && has_key(ca, k));
                }
                /* (a count of stored violations: the first 100 per checker) */
            }
            int is_worse = cb && (rank(vb) > rank(va) ||
                                  (rank(va) == 2 && rank(vb) == 2 && fresh > 0));
            int better = ca && (rank(vb) < rank(va) || (rank(va) == 2 && rank(vb) == 2 && nb < na));
            const char *change = !va ? "new in B" : !vb ? "gone from B" :
                                 is_worse ? (judged ? "WORSE (judged)" : "worse (not judged)") :
                                 better ? "better" : strcmp(va, vb) ? "changed" : "";
            char counts[48];
            snprintf(counts, sizeof counts, "%ld -> %ld", na, nb);
            fprintf(out, "%-22s %-15s %-15s %16s  %s\n", name, va ? va : "-", vb ? vb : "-",
                    counts, change);
            json_t *o = json_object();
            json_object_set_new(o, "checker", json_string(name));
            json_object_set_new(o, "a", va ? json_string(va) : json_null());
            json_object_set_new(o, "b", vb ? json_string(vb) : json_null());
            json_object_set_new(o, "violations_a", json_integer(na));
            json_object_set_new(o, "violations_b", json_integer(nb));
            json_object_set_new(o, "judged_in_b", json_boolean(judged));
            json_object_set_new(o, "worse", json_boolean(is_worse));
            json_array_append_new(rows, o);
            if (is_worse && judged)
                json_array_append_new(worse, json_string(name));
        }
    }
    fprintf(out, "\nviolations new in B (by checker and job, among the first 100 stored per "
                 "checker):\n");
    long nnew = 0, ngone = 0;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(rb, "checkers"), i, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        if (name)
            nnew += only_in(out, "new", name, c, find_checker(ra, name), added);
    }
    if (nnew == 0)
        fprintf(out, "  none\n");
    fprintf(out, "violations gone in B:\n");
    json_array_foreach(json_object_get(ra, "checkers"), i, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        if (name)
            ngone += only_in(out, "gone", name, c, find_checker(rb, name), gone);
    }
    if (ngone == 0)
        fprintf(out, "  none\n");
    fprintf(out, "\nfigures (A -> B):\n");
    json_t *ma = json_object_get(ra, "metrics"), *mb = json_object_get(rb, "metrics");
    shift(out, shifts, "jobs/s over the work", json_object_get(ma, "jobs_per_s"),
          json_object_get(mb, "jobs_per_s"), "jobs/s");
    json_t *fa = json_object_get(ra, "figures"), *fb = json_object_get(rb, "figures");
    static const char *const ops[] = {"claim", "complete"};
    static const char *const qs[] = {"p50", "p95", "p99"};
    for (int o = 0; o < 2; o++)
        for (int q = 0; q < 3; q++) {
            char label[64];
            snprintf(label, sizeof label, "%s latency %s", ops[o], qs[q]);
            shift(out, shifts, label,
                  json_object_get(json_object_get(json_object_get(fa, "latency_ms"), ops[o]), qs[q]),
                  json_object_get(json_object_get(json_object_get(fb, "latency_ms"), ops[o]), qs[q]),
                  "ms");
        }
    static const char *const rq[] = {"p50", "p95", "max"};
    for (int q = 0; q < 3; q++) {
        char label[64];
        snprintf(label, sizeof label, "recovery %s", rq[q]);
        shift(out, shifts, label, json_object_get(json_object_get(fa, "recovery_ms"), rq[q]),
              json_object_get(json_object_get(fb, "recovery_ms"), rq[q]), "ms");
    }
    int code = json_array_size(worse) > 0 ? 1 : 0;
    if (code) {
        char names[512] = "";
        json_t *w;
        json_array_foreach(worse, i, w) {
            size_t len = strlen(names);
            snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", json_string_value(w));
        }
        fprintf(out, "qchaos: diff: B is worse than A on judged checkers: %s\n", names);
    } else {
        fprintf(out, "qchaos: diff: B is not worse than A on any judged checker (%ld violations "
                     "new, %ld gone)\n", nnew, ngone);
    }
    json_object_set_new(res, "schema", json_string("qchaos-diff/1"));
    json_object_set_new(res, "a", json_string(a));
    json_object_set_new(res, "b", json_string(b));
    json_object_set_new(res, "checkers", rows);
    json_object_set_new(res, "new_violations", added);
    json_object_set_new(res, "gone_violations", gone);
    json_object_set_new(res, "figures", shifts);
    json_object_set_new(res, "worse", worse);
    json_object_set_new(res, "exit_code", json_integer(code));
    if (json_path && dump(res, json_path, err) != 0)
        code = 3;
    json_decref(res);
    json_decref(ra);
    json_decref(rb);
    return code;
}
