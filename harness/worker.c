/*
 * worker.c - the worker loop (claim -> effect -> complete) and the reaper.
 *
 * Every protocol request is recorded twice, Jepsen style: an invoke event
 * before it is sent and a completion (ok / fail / info) after the answer, or
 * after the connection was lost (info: it may still have taken effect).
 * Invariants: a worker only ever touches its own qc_worker, its own
 * connection and ledger buffer; shared counters are atomics; no lock is held
 * across a database call.
 */
#include "worker.h"
#include "clock.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void qc_shared_fatal(qc_shared *sh, int code, const char *msg)
{
    pthread_mutex_lock(&sh->fatal_mu);
    if (!atomic_load(&sh->fatal)) {
        snprintf(sh->fatal_msg, sizeof sh->fatal_msg, "%s", msg);
        sh->fatal_code = code;
        atomic_store(&sh->fatal, 1);
    }
    pthread_mutex_unlock(&sh->fatal_mu);
    atomic_store(&sh->stop, 1);
}

static json_t *event(qc_worker *w, const char *type, const char *op, int64_t req)
{
    json_t *e = json_object();
    json_object_set_new(e, "type", json_string(type));
    if (op)
        json_object_set_new(e, "op", json_string(op));
    json_object_set_new(e, "worker", json_integer(w->id));
    json_object_set_new(e, "inc", json_integer(w->inc));
    if (req >= 0)
        json_object_set_new(e, "req", json_integer(req));
    return e;
}

static void set_job(json_t *e, int64_t job, const char *token)
{
    if (job != INT64_MIN)
        json_object_set_new(e, "job", json_integer(job));
    if (token)
        json_object_set_new(e, "token", json_string(token));
}

static int parse_i64(const char *s, int64_t *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*end)
        return -1;
    *out = v;
    return 0;
}

static double parse_time(const char *s)
{
    if (!s || !*s)
        return -1.0;
    char *end;
    double v = strtod(s, &end);
    return *end ? -1.0 : v;
}

/* SQLSTATE classes that mean the protocol file itself is wrong (syntax error,
 * undefined object, feature not supported): going on would only repeat it. */
static int is_protocol_error(const qc_err *err)
{
    if (err->code == QC_ESTATE)
        return 1;
    if (err->code != QC_EDB)
        return 0;
    return !strncmp(err->sqlstate, "42", 2) || !strncmp(err->sqlstate, "0A", 2);
}

static void drop_conn(qc_worker *w, int abrupt)
{
    if (!w->conn)
        return;
    if (abrupt)
        w->sh->drv->abort(w->conn);
    else
        w->sh->drv->close(w->conn);
    w->conn = NULL;
}

/* Connects, retrying with backoff until stop.  Returns 0 when connected. */
static int ensure_conn(qc_worker *w)
{
    qc_shared *sh = w->sh;
    double backoff = 50;
    while (!atomic_load(&sh->stop)) {
        if (w->conn && sh->drv->is_ok(w->conn))
            return 0;
        drop_conn(w, 1);
        qc_err err = {0};
        if (sh->drv->open(sh->dsn, &w->conn, &err) == 0)
            return 0;
        json_t *e = event(w, "note", NULL, -1);
        json_object_set_new(e, "note", json_string("connect failed"));
        json_object_set_new(e, "error", json_string(err.msg));
        qc_ledger_append(w->lb, e);
        qc_clock_sleep_until_stop(backoff, &sh->stop);
        backoff = backoff * 2 > 1000 ? 1000 : backoff * 2;
    }
    return -1;
}

/* Sends one step: invoke event, run, and on error the fail/info event.
 * On success the caller writes the ok event(s) (they carry step results).
 * Returns the qc_protocol_run code; *req gets the request id. */
static int request(qc_worker *w, qc_step_id step, const qc_params *in, int64_t job,
                   const char *token, qc_result *res, int64_t *req)
{
    qc_shared *sh = w->sh;
    const char *op = qc_step_name(step);
    *req = atomic_fetch_add(&sh->next_req, 1);
    json_t *e = event(w, "invoke", op, *req);
    set_job(e, job, token);
    qc_ledger_append(w->lb, e);

    qc_err err = {0};
    int rc = qc_protocol_run(sh->drv, w->conn, sh->proto, step, in, res, &err);
    if (rc == 0)
        return 0;
    atomic_fetch_add(&sh->errors, 1);
    /* A statement error is a definite failure (the transaction rolled back);
     * a lost connection leaves the outcome unknown. */
    e = event(w, rc == QC_EDB ? "fail" : "info", op, *req);
    set_job(e, job, token);
    json_object_set_new(e, "error", json_string(err.msg));
    qc_ledger_append(w->lb, e);
    if (is_protocol_error(&err)) {
        char msg[1100];
        snprintf(msg, sizeof msg, "%s: step '%s' (line %d): %s", sh->proto->path, op,
                 sh->proto->steps[step].line, err.msg);
        qc_shared_fatal(sh, QC_EINVAL, msg);
    } else if (rc == QC_ECONN || !sh->drv->is_ok(w->conn)) {
        drop_conn(w, 1);
    }
    return rc;
}

/* Rows a complete / renew / fail changed: a "rows" column when the protocol
 * reports counts with a SELECT, else the affected count, else rows returned. */
static long changed_rows(const qc_result *r)
{
    const char *v = qc_result_get(r, 0, "rows");
    if (v)
        return strtol(v, NULL, 10);
    if (r->affected >= 0)
        return r->affected;
    return r->nrows;
}

static void set_time(json_t *e, const char *key, const char *v)
{
    double t = parse_time(v);
    if (t >= 0)
        json_object_set_new(e, key, json_real(t));
}

typedef struct claimed {
    int64_t job;
    char token[128];
    char op_key[128];
    double lease_until;
} claimed;

/* One claim; fills up to max jobs into out.  Returns the number claimed, or
 * -1 when the request failed. */
static int do_claim(qc_worker *w, claimed *out, int max)
{
    qc_shared *sh = w->sh;
    char batch[16], lease[24], name[32];
    snprintf(batch, sizeof batch, "%d", max);
    snprintf(lease, sizeof lease, "%ld", sh->sc->lease_ms);
    snprintf(name, sizeof name, "w%d.%d", w->id, w->inc);
    qc_params p = {0};
    qc_params_set(&p, "batch", batch);
    qc_params_set(&p, "lease_ms", lease);
    qc_params_set(&p, "worker", name);
    qc_result r = {0};
    int64_t req;
    if (request(w, QC_STEP_CLAIM, &p, INT64_MIN, NULL, &r, &req) != 0)
        return -1;
    int n = 0;
    if (r.nrows > 0 && qc_result_col(&r, "job_id") < 0) {
        char msg[1100];
        snprintf(msg, sizeof msg, "%s: step 'claim' (line %d) returned no column job_id",
                 sh->proto->path, sh->proto->steps[QC_STEP_CLAIM].line);
        qc_shared_fatal(sh, QC_EINVAL, msg);
    }
    for (int i = 0; i < r.nrows; i++) {
        json_t *e = event(w, "ok", "claim", req);
        json_object_set_new(e, "rows", json_integer(r.nrows));
        int64_t job;
        if (parse_i64(qc_result_get(&r, i, "job_id"), &job) != 0) {
            json_object_set_new(e, "error", json_string("claim row without a job_id"));
            qc_ledger_append(w->lb, e);
            continue;
        }
        const char *tok = qc_result_get(&r, i, "token");
        const char *key = qc_result_get(&r, i, "op_key");
        set_job(e, job, tok);
        set_time(e, "lease_until", qc_result_get(&r, i, "lease_until_ms"));
        set_time(e, "now", qc_result_get(&r, i, "now_ms"));
        const char *att = qc_result_get(&r, i, "attempt");
        if (att)
            json_object_set_new(e, "attempt", json_integer(strtol(att, NULL, 10)));
        if (key)
            json_object_set_new(e, "op_key", json_string(key));
        qc_ledger_append(w->lb, e);
        if (n < max) {
            out[n].job = job;
            snprintf(out[n].token, sizeof out[n].token, "%s", tok ? tok : "");
            snprintf(out[n].op_key, sizeof out[n].op_key, "%s", key ? key : "");
            out[n].lease_until = parse_time(qc_result_get(&r, i, "lease_until_ms"));
            n++;
        }
    }
    if (r.nrows == 0) {
        json_t *e = event(w, "ok", "claim", req);
        json_object_set_new(e, "rows", json_integer(0));
        qc_ledger_append(w->lb, e);
        atomic_fetch_add(&sh->empty_claims, 1);
    }
    atomic_fetch_add(&sh->claims, n);
    qc_result_clear(&r);
    return n;
}

/* Delivers the job's effect to the sink and records it. */
static void do_effect(qc_worker *w, const claimed *c)
{
    int applied = qc_sink_deliver(w->sh->sink, c->op_key[0] ? c->op_key : NULL, c->job);
    json_t *e = event(w, "effect", NULL, -1);
    set_job(e, c->job, c->token);
    if (c->op_key[0])
        json_object_set_new(e, "op_key", json_string(c->op_key));
    json_object_set_new(e, "applied", json_boolean(applied));
    qc_ledger_append(w->lb, e);
}

/* Completes a claimed job with its token.  Returns rows changed or -1. */
static long do_complete(qc_worker *w, const claimed *c)
{
    qc_shared *sh = w->sh;
    char job[32];
    snprintf(job, sizeof job, "%" PRId64, c->job);
    qc_params p = {0};
    qc_params_set(&p, "job_id", job);
    qc_params_set(&p, "token", c->token);
    qc_result r = {0};
    int64_t req;
    if (request(w, QC_STEP_COMPLETE, &p, c->job, c->token, &r, &req) != 0)
        return -1;
    long rows = changed_rows(&r);
    json_t *e = event(w, "ok", "complete", req);
    set_job(e, c->job, c->token);
    json_object_set_new(e, "rows", json_integer(rows));
    set_time(e, "now", qc_result_get(&r, 0, "now_ms"));
    /* The worker's own bookkeeping: a 0-row complete is NOT a success
     * (the job changed owner or state; see the READPAST seed). */
    json_object_set_new(e, "counted", json_boolean(rows > 0));
    qc_ledger_append(w->lb, e);
    if (rows > 0)
        atomic_fetch_add(&sh->completes_ok, 1);
    else
        atomic_fetch_add(&sh->completes_zero, 1);
    qc_result_clear(&r);
    return rows;
}

/* Bounded pause after an empty claim: exponential from base to cap, with
 * jitter; reset by a non-empty claim. */
static void idle_pause(qc_worker *w)
{
    const qc_scenario *sc = w->sh->sc;
    double d = (double)sc->idle_base_ms;
    for (long i = 0; i < w->idle_step && d < (double)sc->idle_cap_ms; i++)
        d *= 2;
    if (d > (double)sc->idle_cap_ms)
        d = (double)sc->idle_cap_ms;
    d *= 1.0 + sc->idle_jitter * (2.0 * qc_rng_unit(&w->rng) - 1.0);
    w->idle_step++;
    qc_clock_sleep_until_stop(d, &w->sh->stop);
}

static void *worker_main(void *arg)
{
    qc_worker *w = arg;
    qc_shared *sh = w->sh;
    const qc_scenario *sc = sh->sc;
    int batch = (int)sc->batch;
    claimed *jobs = calloc((size_t)batch, sizeof *jobs);
    if (!jobs) {
        qc_shared_fatal(sh, QC_ENOMEM, "out of memory");
        return NULL;
    }
    qc_err err = {0};
    if (sh->drv->open(sh->dsn, &w->conn, &err) != 0) {
        atomic_fetch_add(&sh->connect_failed, 1);
        qc_shared_fatal(sh, QC_ECONN, err.msg);
        free(jobs);
        return NULL;
    }
    atomic_fetch_add(&sh->connected, 1);
    while (!atomic_load(&sh->stop)) {
        if (ensure_conn(w) != 0)
            break;
        int n = do_claim(w, jobs, batch);
        if (n < 0) {
            qc_clock_sleep_until_stop(10, &sh->stop);
            continue;
        }
        if (n == 0) {
            idle_pause(w);
            continue;
        }
        w->idle_step = 0;
        for (int i = 0; i < n && !atomic_load(&sh->fatal); i++) {
            do_effect(w, &jobs[i]);
            long work = qc_rng_range(&w->rng, sc->work_ms_min, sc->work_ms_max);
            if (work > 0)
                qc_clock_sleep_ms((double)work);
            if (ensure_conn(w) != 0)
                break;
            do_complete(w, &jobs[i]);
        }
    }
    free(jobs);
    return NULL;
}

/* The reaper: returns expired leases to ready on its own connection. */
static void *reaper_main(void *arg)
{
    qc_worker *w = arg;
    qc_shared *sh = w->sh;
    while (!atomic_load(&sh->stop)) {
        if (qc_clock_sleep_until_stop((double)sh->sc->reaper_interval_ms, &sh->stop))
            break;
        if (ensure_conn(w) != 0)
            break;
        qc_params p = {0};
        qc_result r = {0};
        int64_t req;
        if (request(w, QC_STEP_REAP, &p, INT64_MIN, NULL, &r, &req) != 0)
            continue;
        int64_t job;
        for (int i = 0; i < r.nrows; i++) {
            json_t *e = event(w, "ok", "reap", req);
            json_object_set_new(e, "rows", json_integer(r.nrows));
            if (parse_i64(qc_result_get(&r, i, "job_id"), &job) == 0)
                set_job(e, job, qc_result_get(&r, i, "token"));
            const char *st = qc_result_get(&r, i, "state");
            if (st)
                json_object_set_new(e, "state", json_string(st));
            set_time(e, "now", qc_result_get(&r, i, "now_ms"));
            qc_ledger_append(w->lb, e);
        }
        if (r.nrows == 0) {
            json_t *e = event(w, "ok", "reap", req);
            json_object_set_new(e, "rows", json_integer(r.affected > 0 ? r.affected : 0));
            qc_ledger_append(w->lb, e);
        }
        atomic_fetch_add(&sh->reaped, r.nrows);
        qc_result_clear(&r);
    }
    return NULL;
}

int qc_worker_start(qc_worker *w, qc_shared *sh, int id)
{
    w->id = id;
    w->sh = sh;
    w->conn = NULL;
    w->idle_step = 0;
    qc_rng_init(&w->rng, sh->sc->seed, (uint64_t)(id + 2));
    w->lb = qc_ledger_buf(sh->ledger);
    if (!w->lb)
        return QC_ENOMEM;
    if (pthread_create(&w->thread, NULL, id < 0 ? reaper_main : worker_main, w) != 0)
        return QC_EIO;
    return 0;
}

void qc_worker_join(qc_worker *w)
{
    pthread_join(w->thread, NULL);
    drop_conn(w, 0);
}
