/*
 * report.c - qc_report_write: reads results.json and the ledgers, then has
 * junit.c, plots.c and markdown.c write the report files, and runs gnuplot
 * on the scripts plots.c wrote.  Also the helpers those files share: the
 * parsed results.json, a ledger event told in plain words, XML/Markdown
 * escaping and write-then-rename file output.
 *
 * Invariants:
 *   - nothing here decides a verdict: results.json is the only source of
 *     verdicts, counts and violations; the ledger only explains them;
 *   - every input is read and checked before the first output file is
 *     written, so a malformed results.json or ledger leaves the folder as
 *     it was;
 *   - an output file appears complete or not at all (NAME.tmp, then
 *     rename);
 *   - gnuplot is found by searching PATH (no shell), runs as one child per
 *     script, in parallel, with plots/ as its working folder, stdin from
 *     /dev/null and output appended to plots/gnuplot.log; children are
 *     waited for and killed after GNUPLOT_TIMEOUT_S; a plot counts as drawn
 *     only when gnuplot exited 0 and both images are non-empty.
 */
#include "report.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GNUPLOT_TIMEOUT_S 60

/* ---- results.json ----------------------------------------------------- */

static const char *opt_str(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);

    return json_is_string(v) ? json_string_value(v) : "";
}

static long opt_long(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);

    if (json_is_integer(v))
        return (long)json_integer_value(v);
    if (json_is_real(v))
        return (long)json_real_value(v);
    return -1;
}

static int load_violation(json_t *vo, qc__rviolation *v, const char *path, const char *check,
                          size_t k, qc_err *err)
{
    json_t *job = json_object_get(vo, "job"), *seq = json_object_get(vo, "seq");

    if (!json_is_object(vo))
        return qc_err_set(err, QC_EINVAL, "%s: checker '%s': violation %zu is not an object", path,
                          check, k);
    if (json_is_integer(job)) {
        v->has_job = 1;
        v->job = (int64_t)json_integer_value(job);
    }
    v->explanation = opt_str(vo, "explanation");
    if (seq != NULL && !json_is_null(seq) && !json_is_array(seq))
        return qc_err_set(err, QC_EINVAL,
                          "%s: checker '%s': violation %zu: \"seq\" is not an array", path, check,
                          k);
    if (json_array_size(seq) > 0) {
        v->seq = calloc(json_array_size(seq), sizeof *v->seq);
        if (v->seq == NULL)
            return qc_err_set(err, QC_ENOMEM, "%s: out of memory", path);
        for (size_t i = 0; i < json_array_size(seq); i++) {
            json_t *s = json_array_get(seq, i);
            if (!json_is_integer(s))
                return qc_err_set(err, QC_EINVAL,
                                  "%s: checker '%s': violation %zu: seq %zu is not an integer",
                                  path, check, k, i);
            v->seq[v->nseq++] = (int64_t)json_integer_value(s);
        }
    }
    json_t *ws = json_object_get(vo, "witness"); /* optional: the server's rows */
    for (size_t i = 0; json_is_array(ws) && i < json_array_size(ws) &&
                       v->nwitness < sizeof v->wseq / sizeof v->wseq[0];
         i++)
        if (json_is_integer(json_array_get(ws, i)))
            v->wseq[v->nwitness++] = (int64_t)json_integer_value(json_array_get(ws, i));
    return 0;
}

static int load_check(json_t *co, qc__rcheck *c, const char *path, size_t i, qc_err *err)
{
    json_t *name, *verdict, *vs;

    if (!json_is_object(co))
        return qc_err_set(err, QC_EINVAL, "%s: checkers[%zu] is not an object", path, i);
    name = json_object_get(co, "name");
    verdict = json_object_get(co, "verdict");
    if (!json_is_string(name) || json_string_length(name) == 0)
        return qc_err_set(err, QC_EINVAL, "%s: checkers[%zu] has no \"name\" string", path, i);
    if (!json_is_string(verdict) || json_string_length(verdict) == 0)
        return qc_err_set(err, QC_EINVAL, "%s: checker '%s' has no \"verdict\" string", path,
                          json_string_value(name));
    c->name = json_string_value(name);
    c->verdict = json_string_value(verdict);
    c->summary = opt_str(co, "summary");
    c->opportunities = opt_long(co, "opportunities");
    c->judged = !json_is_false(json_object_get(co, "judged"));
    c->violations_total = opt_long(co, "violations_total");
    vs = json_object_get(co, "time_s");
    c->time_s = json_is_number(vs) ? json_number_value(vs) : -1.0;
    vs = json_object_get(co, "first_violation_s");
    c->first_violation_s = json_is_number(vs) ? json_number_value(vs) : -1.0;
    vs = json_object_get(co, "violations");
    if (vs != NULL && !json_is_null(vs) && !json_is_array(vs))
        return qc_err_set(err, QC_EINVAL, "%s: checker '%s': \"violations\" is not an array", path,
                          c->name);
    if (json_array_size(vs) == 0)
        return 0;
    c->v = calloc(json_array_size(vs), sizeof *c->v);
    if (c->v == NULL)
        return qc_err_set(err, QC_ENOMEM, "%s: out of memory", path);
    for (size_t k = 0; k < json_array_size(vs); k++) {
        int rc = load_violation(json_array_get(vs, k), &c->v[c->nv++], path, c->name, k, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int qc__results_load(qc__results *r, const char *path, qc_err *err)
{
    json_error_t jerr;
    json_t *root, *checks, *v, *metrics, *versions;
    FILE *f;
    int rc = 0;

    memset(r, 0, sizeof *r);
    f = fopen(path, "rb");
    if (f == NULL)
        return qc_err_set(err, QC_EIO, "cannot open '%s': %s", path, strerror(errno));
    root = json_loadf(f, 0, &jerr);
    if (root == NULL && ferror(f)) {
        fclose(f);
        return qc_err_set(err, QC_EIO, "cannot read '%s'", path);
    }
    fclose(f);
    if (root == NULL)
        return qc_err_set(err, QC_EINVAL, "%s:%d: invalid JSON: %s", path, jerr.line, jerr.text);
    r->root = root;
    if (!json_is_object(root)) {
        rc = qc_err_set(err, QC_EINVAL, "%s: not a JSON object", path);
        goto out;
    }
    checks = json_object_get(root, "checkers");
    if (!json_is_array(checks)) {
        rc = qc_err_set(err, QC_EINVAL, "%s: no \"checkers\" array", path);
        goto out;
    }
    r->verdict = opt_str(root, "verdict");
    r->exit_code = (int)opt_long(root, "exit_code");
    v = json_object_get(root, "seed");
    if (json_is_integer(v)) {
        r->has_seed = 1;
        r->seed = (uint64_t)json_integer_value(v);
    } else if (json_is_string(v)) {
        r->has_seed = 1;
        r->seed = strtoull(json_string_value(v), NULL, 10);
    }
    r->scenario = opt_str(root, "scenario");
    r->scenario_file = opt_str(root, "scenario_file");
    r->protocol = opt_str(root, "protocol");
    r->engine = opt_str(root, "engine");
    r->tested = opt_str(root, "tested_where");
    versions = json_object_get(root, "versions");
    r->version = opt_str(versions, "qchaos");
    r->server = opt_str(versions, "server");
    v = json_object_get(root, "target");
    r->target_host = opt_str(v, "host");
    r->target_port = opt_str(v, "port");
    r->target_dbname = opt_str(v, "dbname");
    r->target_user = opt_str(v, "user");
    r->target_how = opt_str(v, "how");
    v = json_object_get(root, "command");
    r->command = json_is_string(v) && json_string_length(v) > 0 ? json_string_value(v) : NULL;
    metrics = json_object_get(root, "metrics");
    v = json_object_get(metrics, "elapsed_s");
    r->elapsed_s = json_is_number(v) ? json_number_value(v) : -1.0;
    r->workers = opt_long(metrics, "workers");
    v = json_object_get(root, "tested");
    r->tested_json = json_is_object(v) ? v : NULL;
    r->jobs = opt_long(metrics, "jobs");
    if (json_array_size(checks) > 0) {
        r->c = calloc(json_array_size(checks), sizeof *r->c);
        if (r->c == NULL) {
            rc = qc_err_set(err, QC_ENOMEM, "%s: out of memory", path);
            goto out;
        }
    }
    for (size_t i = 0; i < json_array_size(checks) && rc == 0; i++)
        rc = load_check(json_array_get(checks, i), &r->c[r->nc++], path, i, err);
out:
    if (rc != 0)
        qc__results_fini(r);
    return rc;
}

void qc__results_fini(qc__results *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->nc; i++) {
        for (size_t k = 0; k < r->c[i].nv; k++)
            free(r->c[i].v[k].seq);
        free(r->c[i].v);
    }
    free(r->c);
    if (r->tested_owned)
        json_decref(r->tested_json);
    json_decref(r->root);
    memset(r, 0, sizeof *r);
}

/* ---- ledger events in plain words ------------------------------------- */

const qc_event *qc__report_find_seq(const qc_history *h, int64_t seq)
{
    size_t lo = 0, hi = h->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->ev[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < h->n && h->ev[lo].seq == seq ? &h->ev[lo] : NULL;
}

/* Appends printf output to buf at *len, never past n (truncates). */
static void put(char *buf, size_t n, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t n, size_t *len, const char *fmt, ...)
{
    va_list ap;
    int w;

    if (*len + 1 >= n)
        return;
    va_start(ap, fmt);
    w = vsnprintf(buf + *len, n - *len, fmt, ap);
    va_end(ap);
    if (w > 0)
        *len = *len + (size_t)w < n ? *len + (size_t)w : n - 1;
}

static void put_who(char *buf, size_t n, size_t *len, const qc_event *e)
{
    if (e->worker == -2)
        put(buf, n, len, "the nemesis");
    else if (e->worker < 0)
        put(buf, n, len, e->op == QC_OP_REAP ? "the reaper" : "the harness (control)");
    else
        put(buf, n, len, "worker %d (incarnation %d)", e->worker, e->inc);
}

static const char *verb_of(qc_op op)
{
    switch (op) {
    case QC_OP_ENQUEUE:
        return "enqueue";
    case QC_OP_CLAIM:
        return "claim";
    case QC_OP_COMPLETE:
        return "complete";
    case QC_OP_RENEW:
        return "renew";
    case QC_OP_FAIL:
        return "fail";
    case QC_OP_REAP:
        return "reap";
    case QC_OP_HEARTBEAT:
        return "heartbeat";
    case QC_OP_DEDUP:
        return "dedup";
    case QC_OP_NONE:
        break;
    }
    return "request";
}

/* "... of job 17 with token abc" for the event or, failing that, its
 * invoke. */
static void put_job_token(char *buf, size_t n, size_t *len, const qc_history *h, const qc_event *e)
{
    const qc_event *inv = e->invoke >= 0 && (size_t)e->invoke < h->n ? &h->ev[e->invoke] : NULL;
    int64_t job = e->job != QC_NO_JOB ? e->job : inv != NULL ? inv->job : QC_NO_JOB;
    const char *tok = qc_s(e->token) != NULL ? qc_s(e->token) : inv != NULL ? qc_s(inv->token) : NULL;

    if (job != QC_NO_JOB)
        put(buf, n, len, " of job %" PRId64, job);
    if (tok != NULL)
        put(buf, n, len, " with token %s", tok);
}

static void put_server_times(char *buf, size_t n, size_t *len, const qc_event *e, double origin)
{
    if (e->now != QC_NO_TIME && origin != QC_NO_TIME)
        put(buf, n, len, "; server +%.0f ms", e->now - origin);
    if (e->lease_until != QC_NO_TIME) {
        if (origin != QC_NO_TIME)
            put(buf, n, len, "; lease until server +%.0f ms", e->lease_until - origin);
        else
            put(buf, n, len, "; lease until");
        if (e->now != QC_NO_TIME)
            put(buf, n, len, " (%.0f ms after the server time)", e->lease_until - e->now);
    }
}

/* Where a sort was O(n log n), this is O(n) expected (issue 16: the
 * server origin's sort, done for three reports, was 3 % of an audit). */
double qc__select_kth(double *a, size_t n, size_t k)
{
    ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;

    while (hi > lo) {
        double x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi];
        double p = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
        ptrdiff_t i = lo, j = hi;
        while (i <= j) { /* p is in a[lo..hi]: neither scan leaves it */
            while (a[i] < p)
                i++;
            while (a[j] > p)
                j--;
            if (i <= j) {
                double t = a[i];
                a[i++] = a[j];
                a[j--] = t;
            }
        }
        /* a[lo..j] <= p <= a[i..hi]; a[j+1..i-1] == p */
        if (kk <= j)
            hi = j;
        else if (kk >= i)
            lo = i;
        else
            return a[kk];
    }
    return a[kk];
}

double qc__report_server_origin(const qc_history *h)
{
    double *d = malloc((h->n ? h->n : 1) * sizeof *d), r = QC_NO_TIME;
    size_t n = 0;

    if (d == NULL)
        return QC_NO_TIME;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if ((e->type != QC_EV_OK && e->type != QC_EV_FAIL) || e->now == QC_NO_TIME ||
            e->t == QC_NO_TIME || e->invoke < 0 || (size_t)e->invoke >= h->n ||
            h->ev[e->invoke].t == QC_NO_TIME)
            continue;
        d[n++] = e->now - (e->t + h->ev[e->invoke].t) / 2.0;
    }
    if (n > 0) {
        r = qc__select_kth(d, n, n / 2);
    }
    free(d);
    return r;
}

void qc__report_explain(const char *s, double origin, char *buf, size_t n)
{
    size_t len = 0;

    if (n == 0)
        return;
    buf[0] = '\0';
    for (const char *p = s != NULL ? s : ""; *p && len + 1 < n;) {
        size_t digits = 0;
        while (isdigit((unsigned char)p[digits]))
            digits++;
        int word_start = p == s || !isalnum((unsigned char)p[-1]);
        if (digits >= 12 && word_start && origin != QC_NO_TIME) {
            char *end;
            double v = strtod(p, &end);
            int after_server = len >= 12 && strncmp(buf + len - 12, "server time ", 12) == 0;
            if (after_server)
                len -= 12;
            buf[len] = '\0';
            put(buf, n, &len, "%s+%.0f ms", after_server ? "server " : "", v - origin);
            p = end;
            if (strncmp(p, " ms", 3) == 0 && !isalnum((unsigned char)p[3]))
                p += 3; /* "1796137587472 ms" is one "+X ms" */
            continue;
        }
        if (digits > 0) { /* copy the whole number: never split one */
            for (size_t k = 0; k < digits && len + 1 < n; k++)
                buf[len++] = *p++;
            buf[len] = '\0';
            continue;
        }
        buf[len++] = *p++;
        buf[len] = '\0';
    }
}

void qc__report_describe(const qc_history *h, double origin, int64_t seq, char *buf, size_t n)
{
    const qc_event *e = qc__report_find_seq(h, seq);
    size_t len = 0;

    if (n == 0)
        return;
    buf[0] = '\0';
    put(buf, n, &len, "seq %" PRId64, seq);
    if (e == NULL) {
        put(buf, n, &len, ": not in the ledger");
        return;
    }
    if (e->t != QC_NO_TIME && e->type != QC_EV_WITNESS) /* a witness row's t is when it was read */
        put(buf, n, &len, " at %.1f ms", e->t);
    put(buf, n, &len, ": ");
    switch (e->type) {
    case QC_EV_INVOKE:
        put_who(buf, n, &len, e);
        put(buf, n, &len, " sent %s", verb_of(e->op));
        put_job_token(buf, n, &len, h, e);
        break;
    case QC_EV_OK:
        put_who(buf, n, &len, e);
        put(buf, n, &len, "'s %s", verb_of(e->op));
        put_job_token(buf, n, &len, h, e);
        put(buf, n, &len, " was acknowledged");
        if (e->rows >= 0)
            put(buf, n, &len,
                e->op == QC_OP_CLAIM ? ", the claim returned %ld row(s)" : ", %ld row(s) changed",
                (long)e->rows);
        if (qc_s(e->new_token) != NULL)
            put(buf, n, &len, ", new token %s", qc_s(e->new_token));
        put_server_times(buf, n, &len, e, origin);
        break;
    case QC_EV_FAIL:
    case QC_EV_INFO:
        put_who(buf, n, &len, e);
        put(buf, n, &len, "'s %s", verb_of(e->op));
        put_job_token(buf, n, &len, h, e);
        put(buf, n, &len,
            e->type == QC_EV_FAIL ? " failed (it did not take effect)"
                                  : " has an unknown outcome (it may have "
                                    "taken effect)");
        if (qc_s(e->error) != NULL)
            put(buf, n, &len, ": %s", qc_s(e->error));
        break;
    case QC_EV_EFFECT:
        put_who(buf, n, &len, e);
        put(buf, n, &len, " delivered the effect");
        put_job_token(buf, n, &len, h, e);
        if (qc_s(e->op_key) != NULL)
            put(buf, n, &len, " (op key %s)", qc_s(e->op_key));
        put(buf, n, &len, e->applied ? "; the sink applied it" : "; the sink deduplicated it");
        break;
    case QC_EV_FAULT:
        put(buf, n, &len, "the harness injected fault %s", qc_x(e->x)->fault != NULL ? qc_x(e->x)->fault : "?");
        if (e->job != QC_NO_JOB)
            put(buf, n, &len, " on job %" PRId64, e->job);
        if (e->worker >= 0)
            put(buf, n, &len, " (worker %d, incarnation %d)", e->worker, e->inc);
        if (qc_x(e->x)->target >= 0)
            put(buf, n, &len, " on the session of worker %d", qc_x(e->x)->target);
        if (qc_x(e->x)->until_t != QC_NO_TIME)
            put(buf, n, &len, " until %.1f ms", qc_x(e->x)->until_t);
        break;
    case QC_EV_SNAPSHOT:
        if (e->job == QC_NO_JOB) { /* the marker of an empty queue (decision 1100) */
            put(buf, n, &len, "the final snapshot has no rows");
            break;
        }
        put(buf, n, &len, "the final snapshot has job %" PRId64 " %s", e->job,
            qc_s(e->state) != NULL ? qc_s(e->state) : "in no state");
        if (e->attempt >= 0)
            put(buf, n, &len, " (attempt %d)", e->attempt);
        if (qc_s(e->token) != NULL)
            put(buf, n, &len, " with token %s", qc_s(e->token));
        if (qc_s(e->error) != NULL)
            put(buf, n, &len, ", error kept: %s", qc_s(e->error));
        break;
    case QC_EV_MONITOR:
        put(buf, n, &len, "monitor sample: %ld ready, %ld in flight, %ld expired, %ld dead",
            qc_x(e->x)->ready, qc_x(e->x)->inflight, qc_x(e->x)->expired, qc_x(e->x)->dead);
        break;
    case QC_EV_END:
        put(buf, n, &len,
            qc_x(e->x)->drained ? "end of run, every job done or dead"
                       : "end of run, the drain did not finish");
        break;
    case QC_EV_NOTE:
        put(buf, n, &len, "note: %s", qc_x(e->x)->note ? qc_x(e->x)->note : "(none)");
        if (qc_x(e->x)->calls >= 0)
            put(buf, n, &len, ", the server counted %lld claim statements", (long long)qc_x(e->x)->calls);
        if (qc_x(e->x)->pid >= 0)
            put(buf, n, &len, ", worker %d.%d on server session %d", e->worker, e->inc, qc_x(e->x)->pid);
        break;
    case QC_EV_SESSION:
        put(buf, n, &len, "the monitor saw worker %d's server session %d %s", e->worker, qc_x(e->x)->pid,
            qc_s(e->state) ? qc_s(e->state) : "(state unknown)");
        if (qc_x(e->x)->xact_ms >= 0)
            put(buf, n, &len, ", its transaction open %.0f ms", qc_x(e->x)->xact_ms);
        break;
    case QC_EV_WITNESS:
        put(buf, n, &len, "the witness saw session %s %s job %s",
            qc_x(e->x)->w_session != NULL ? qc_x(e->x)->w_session : "(unnamed)",
            qc_x(e->x)->w_change == 'i'   ? "insert"
            : qc_x(e->x)->w_change == 'd' ? "delete"
                                    : "update",
            qc_x(e->x)->w_row != NULL ? qc_x(e->x)->w_row : "?");
        if (qc_x(e->x)->w_change == 'u')
            put(buf, n, &len, " (%s -> %s", qc_x(e->x)->w_old_state ? qc_x(e->x)->w_old_state : "NULL",
                qc_x(e->x)->w_state ? qc_x(e->x)->w_state : "NULL");
        else
            put(buf, n, &len, " (%s",
                qc_x(e->x)->w_change == 'i' ? (qc_x(e->x)->w_state ? qc_x(e->x)->w_state : "NULL")
                                      : (qc_x(e->x)->w_old_state ? qc_x(e->x)->w_old_state : "NULL"));
        if (qc_x(e->x)->w_old_token != NULL || qc_x(e->x)->w_token != NULL)
            put(buf, n, &len, ", token %s -> %s", qc_x(e->x)->w_old_token ? qc_x(e->x)->w_old_token : "NULL",
                qc_x(e->x)->w_token ? qc_x(e->x)->w_token : "NULL");
        put(buf, n, &len, ")");
        if (qc_x(e->x)->w_txid >= 0)
            put(buf, n, &len, " in transaction %" PRId64, qc_x(e->x)->w_txid);
        if (qc_x(e->x)->w_now != QC_NO_TIME)
            put(buf, n, &len, " at server time %.1f", qc_x(e->x)->w_now);
        put(buf, n, &len, ", committed (witness row %" PRId64 ")", qc_x(e->x)->w_id);
        break;
    case QC_EV_SWITCH_SNAPSHOT:
        put(buf, n, &len, "job %" PRId64 " %s on the replica before its promotion (%s)", e->job,
            qc_s(e->state) ? qc_s(e->state) : "without a state", qc_x(e->x)->fault ? qc_x(e->x)->fault : "switch");
        break;
    case QC_EV_OTHER:
        put(buf, n, &len, "an event of a type this version does not know");
        if (e->job != QC_NO_JOB)
            put(buf, n, &len, " (job %" PRId64 ")", e->job);
        break;
    }
}

/* ---- escaping and files ----------------------------------------------- */

int qc__xml_escape(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p != NULL && *p; p++) {
        switch (*p) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            if (*p < 0x20 && *p != '\t' && *p != '\n')
                fputs("\xEF\xBF\xBD", f); /* U+FFFD; XML 1.0 cannot carry it */
            else
                fputc(*p, f);
        }
    }
    return ferror(f) ? -1 : 0;
}

int qc__md_escape(FILE *f, const char *s)
{
    for (const char *p = s; p != NULL && *p; p++) {
        /* An underscore inside a word never starts emphasis (CommonMark),
         * so checker names stay readable in the raw file. */
        int inword =
            *p == '_' && p > s && isalnum((unsigned char)p[-1]) && isalnum((unsigned char)p[1]);
        if (*p == '\n' || *p == '\r')
            fputc(' ', f);
        else if (!inword && strchr("\\`*_[]<>|&#!~", *p) != NULL) {
            fputc('\\', f);
            fputc(*p, f);
        } else {
            fputc(*p, f);
        }
    }
    return ferror(f) ? -1 : 0;
}

FILE *qc__report_open(const char *dir, const char *name, qc_err *err)
{
    char path[QC__PATH_MAX];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s.tmp", dir, name);
    f = fopen(path, "w");
    if (f == NULL)
        qc_err_set(err, QC_EIO, "cannot write '%s/%s': %s", dir, name, strerror(errno));
    return f;
}

int qc__report_close(FILE *f, const char *dir, const char *name, qc_err *err)
{
    char tmp[QC__PATH_MAX], path[QC__PATH_MAX];
    int bad;

    if (f == NULL)
        return QC_EIO;
    snprintf(tmp, sizeof tmp, "%s/%s.tmp", dir, name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    bad = ferror(f) != 0;
    if (fclose(f) != 0)
        bad = 1;
    if (!bad && rename(tmp, path) == 0)
        return 0;
    int e = errno;
    remove(tmp);
    return qc_err_set(err, QC_EIO, "cannot write '%s': %s", path, strerror(e));
}

/* ---- running gnuplot ------------------------------------------------- */

/* Looks gnuplot up in PATH (as execvp would); fills path, returns 1 found. */
static int find_gnuplot(char *path, size_t n)
{
    const char *env = getenv("PATH");

    if (env == NULL || *env == '\0')
        return 0;
    for (const char *p = env; *p;) {
        const char *colon = strchr(p, ':');
        size_t len = colon != NULL ? (size_t)(colon - p) : strlen(p);
        struct stat st;
        snprintf(path, n, "%.*s/gnuplot", (int)len, len > 0 ? p : ".");
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0)
            return 1;
        p += len;
        if (*p == ':')
            p++;
    }
    return 0;
}

static int file_nonempty(const char *pdir, const char *name, const char *ext)
{
    char path[QC__PATH_MAX];
    struct stat st;

    snprintf(path, sizeof path, "%s/%s.%s", pdir, name, ext);
    return stat(path, &st) == 0 && st.st_size > 0;
}

/* Runs `gnuplot NAME.gp` for every plot, in parallel, in pdir. */
static void run_gnuplot(const char *gnuplot, const char *pdir, qc__plots *p)
{
    pid_t pid[QC__MAX_PLOTS];
    char script[QC__MAX_PLOTS][48];
    int status[QC__MAX_PLOTS];
    struct timespec t0, now, nap = {0, 5 * 1000 * 1000};

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t i = 0; i < p->n; i++) {
        snprintf(script[i], sizeof script[i], "%s.gp", p->p[i].name);
        status[i] = -1;
        pid[i] = fork();
        if (pid[i] == 0) {
            /* Child: async-signal-safe calls only until exec. */
            char *argv[] = {(char *)"gnuplot", script[i], NULL};
            int in = open("/dev/null", O_RDONLY);
            int log = -1;
            if (chdir(pdir) != 0)
                _exit(126);
            log = open("gnuplot.log", O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (in >= 0)
                dup2(in, 0);
            if (log >= 0) {
                dup2(log, 1);
                dup2(log, 2);
            }
            execv(gnuplot, argv);
            _exit(127);
        }
    }
    for (;;) {
        int running = 0;
        for (size_t i = 0; i < p->n; i++) {
            if (pid[i] <= 0 || status[i] != -1)
                continue;
            int st;
            pid_t w = waitpid(pid[i], &st, WNOHANG);
            if (w == pid[i])
                status[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
            else if (w < 0 && errno != EINTR)
                status[i] = 128;
            else
                running = 1;
        }
        if (!running)
            break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > GNUPLOT_TIMEOUT_S) {
            for (size_t i = 0; i < p->n; i++)
                if (pid[i] > 0 && status[i] == -1) {
                    kill(pid[i], SIGKILL);
                    waitpid(pid[i], NULL, 0);
                    status[i] = 128;
                }
            break;
        }
        nanosleep(&nap, NULL);
    }
    for (size_t i = 0; i < p->n; i++) {
        p->p[i].drawn = pid[i] > 0 && status[i] == 0 && file_nonempty(pdir, p->p[i].name, "png") &&
                        file_nonempty(pdir, p->p[i].name, "svg");
        if (!p->p[i].drawn)
            p->gnuplot_failed = 1;
    }
}

/* Draws every plot whose script plots.c wrote, or notes why not. */
static void draw_plots(const char *dir, qc__plots *p)
{
    char pdir[QC__DIR_MAX + 16], gnuplot[QC__PATH_MAX];

    snprintf(pdir, sizeof pdir, "%s/plots", dir);
    p->gnuplot_found = find_gnuplot(gnuplot, sizeof gnuplot);
    if (!p->gnuplot_found && p->nnotes < QC__MAX_NOTES)
        snprintf(p->notes[p->nnotes++], sizeof p->notes[0],
                 "plots skipped: gnuplot not found in PATH (data and scripts are in plots/; "
                 "run `gnuplot NAME.gp` there)");
    else if (p->gnuplot_found && p->n > 0)
        run_gnuplot(gnuplot, pdir, p);
}

/* ---- the report ------------------------------------------------------- */

static void set_note(char *note, size_t notelen, const qc__plots *p)
{
    if (note == NULL || notelen == 0)
        return;
    note[0] = '\0';
    if (!p->gnuplot_found)
        snprintf(note, notelen, "plots skipped: gnuplot not found");
    else if (p->gnuplot_failed)
        snprintf(note, notelen,
                 "some plots failed: gnuplot reported errors (see plots/gnuplot.log)");
}

int qc_report_write(const char *dir, const char *const *ledgers, int nledgers,
                    int allow_inconclusive, char *note, size_t notelen, qc_err *err)
{
    char path[QC__PATH_MAX];
    const char *deflt[1];
    qc__results r;
    qc_history h;
    qc__plots *p = NULL;
    int rc;

    memset(&h, 0, sizeof h);
    if (note != NULL && notelen > 0)
        note[0] = '\0';
    if (strlen(dir) > QC__DIR_MAX)
        return qc_err_set(err, QC_EINVAL, "report folder name longer than %d bytes: '%.64s...'",
                          QC__DIR_MAX, dir);
    snprintf(path, sizeof path, "%s/results.json", dir);
    rc = qc__results_load(&r, path, err);
    if (rc != 0)
        return rc;
    if (nledgers <= 0 || ledgers == NULL) {
        snprintf(path, sizeof path, "%s/ledger.jsonl", dir);
        deflt[0] = path;
        ledgers = deflt;
        nledgers = 1;
    }
    rc = qc_history_load(&h, ledgers, nledgers, err);
    if (rc != 0)
        goto out;
    if (r.tested_json == NULL) { /* an older results.json: what the ledger says */
        r.tested_json = qc_report_tested_json(&h, ledgers[0]);
        r.tested_owned = r.tested_json != NULL;
    }
    {
        const char *role =
            json_string_value(json_object_get(json_object_get(r.tested_json, "protocol"), "role"));
        r.mutant = role != NULL && strcmp(role, "mutant") == 0;
    }
    p = calloc(1, sizeof *p);
    if (p == NULL) {
        rc = qc_err_set(err, QC_ENOMEM, "writing the report: out of memory");
        goto out;
    }
    rc = qc__junit_write(dir, &r, &h, allow_inconclusive, err);
    if (rc == 0)
        rc = qc__plots_make(dir, &h, &r, p, err);
    if (rc == 0)
        draw_plots(dir, p);
    if (rc == 0)
        rc = qc__markdown_write(dir, &r, &h, p, err);
    if (rc == 0)
        rc = qc__html_write(dir, &r, &h, p, err);
    if (rc == 0)
        set_note(note, notelen, p);
out:
    free(p);
    qc_history_fini(&h);
    qc__results_fini(&r);
    return rc;
}
