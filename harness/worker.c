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
#include "witness.h"
#include "clock.h"
#include "usage.h"
#include "flatjson.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void qc_shared_fatal(qc_shared *sh, int code, const char *msg)
{
    pthread_mutex_lock(&sh->fatal_mu);
    if (!atomic_load(&sh->fatal)) {
        snprintf(sh->fatal_msg, sizeof sh->fatal_msg, "%s", msg);
        sh->fatal_code = code;
        atomic_store(&sh->fatal, 1);
    }
    pthread_mutex_unlock(&sh->fatal_mu);
    qc_clock_stop(&sh->stop);
}

/* Starts event e (the caller's, on its stack: ledger.h qc_ev, no
 * allocation on the hot path) with the members every worker event has. */
static qc_ev *event(qc_worker *w, qc_ev *e, const char *type, const char *op, int64_t req)
{
    qc_ev_init(e);
    qc_ev_str(e, "type", type);
    if (op)
        qc_ev_str(e, "op", op);
    qc_ev_int(e, "worker", w->id);
    qc_ev_int(e, "inc", w->inc);
    if (req >= 0)
        qc_ev_int(e, "req", req);
    return e;
}

static void listen_drop(qc_worker *w, const char *state, const char *error);

static void set_job(qc_ev *e, int64_t job, const char *token)
{
    if (job != INT64_MIN)
        qc_ev_int(e, "job", job);
    if (token)
        qc_ev_str(e, "token", token);
}

/* s (NULL: "") into dst (size n), cut to fit, NUL-terminated: what
 * snprintf(dst, n, "%s", s) gives, without its cost on the hot path. */
static void copy_str(char *dst, size_t n, const char *s)
{
    size_t k = s != NULL ? strlen(s) : 0;
    if (k >= n)
        k = n - 1;
    memcpy(dst, s != NULL ? s : "", k);
    dst[k] = '\0';
}

/* Appends e and passes the named point it marks (sched.h): the schedule may
 * hold the actor here until its next action is granted.  job: the job the
 * point is passed for (INT64_MIN: none). */
static void emit(qc_worker *w, qc_ev *e, int64_t job)
{
    char buf[64];
    const char *pt = NULL;
    if (w->sh->sched != NULL)
        pt = qc_point_of_event(qc_ev_get_str(e, "type"), qc_ev_get_str(e, "op"),
                               qc_ev_get_str(e, "point"), qc_ev_get_str(e, "fault"), buf,
                               sizeof buf);
    if (pt != NULL && pt != buf) {
        copy_str(buf, sizeof buf, pt); /* e's own string goes with e */
        pt = buf;
    }
    if (pt != NULL)
        qc_sched_turn(w->sh->sched, w->id); /* a replay: the event in its turn */
    qc_ev_append(w->lb, e);
    if (pt != NULL)
        qc_sched_point(w->sh->sched, w->id, pt, job);
}

/* Protocol hooks (protocol.h): a statement on the wire, for the
 * schedule's blocked rule, and the points between a step's statements. */
static void hook_wire(void *ctx, int in)
{
    qc_worker *w = ctx;
    qc_sched_request(w->sh->sched, w->id, in);
}

static void hook_point(void *ctx, const char *name)
{
    qc_worker *w = ctx;
    qc_ev ev, *e = &ev;
    qc_ev_init(e);
    qc_ev_str(e, "type", "point");
    qc_ev_str(e, "point", name);
    qc_ev_int(e, "worker", w->id);
    qc_ev_int(e, "inc", w->inc);
    qc_ev_int(e, "req", w->cur_req);
    if (w->cur_job != INT64_MIN)
        qc_ev_int(e, "job", w->cur_job);
    emit(w, e, w->cur_job);
}

/* A replay: the earlier run's server aborted this request here (a
 * deadlock victim, a serialization failure); the statement is answered
 * with its error, not sent, and a note says so (decision 1144). */
static int hook_abort(void *ctx, char *msg, size_t n)
{
    qc_worker *w = ctx;
    if (!qc_sched_replay_abort(w->sh->sched, w->id, msg, n))
        return 0;
    qc_ev ev, *e = &ev;
    qc_ev_init(e);
    qc_ev_str(e, "type", "note");
    qc_ev_str(e, "note", "server abort replayed");
    qc_ev_int(e, "worker", w->id);
    qc_ev_int(e, "inc", w->inc);
    qc_ev_int(e, "req", w->cur_req);
    if (w->cur_job != INT64_MIN)
        qc_ev_int(e, "job", w->cur_job);
    qc_ev_str(e, "error", msg);
    qc_ev_append(w->lb, e);
    return 1;
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
    double v;
    if (!s || !*s)
        return -1.0;
    return qc_parse_double(s, &v) == 0 ? v : -1.0; /* strtod's value, faster */
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

void qc_slot_init(qc_conn_slot *s)
{
    pthread_mutex_init(&s->mu, NULL);
    s->conn = NULL;
}

void qc_slot_destroy(qc_conn_slot *s)
{
    pthread_mutex_destroy(&s->mu);
}

void qc_slot_publish(qc_conn_slot *s, qc_conn *c)
{
    pthread_mutex_lock(&s->mu);
    s->conn = c;
    pthread_mutex_unlock(&s->mu);
}

void qc_slot_cancel(qc_conn_slot *s, const qc_driver *d)
{
    pthread_mutex_lock(&s->mu);
    if (s->conn != NULL && d->cancel != NULL)
        (void)d->cancel(s->conn);
    pthread_mutex_unlock(&s->mu);
}

int qc_open_conn(const qc_driver *d, const char *dsn, int no_prepare, long timeout_ms,
                 qc_conn **out, qc_err *err)
{
    qc_conn *c = NULL;
    char ms[24];
    int rc = d->open(dsn, &c, err);

    if (rc != 0)
        return rc;
    if (no_prepare)
        d->set_option(c, "prepare", "off", NULL);
    if (timeout_ms > 0) {
        snprintf(ms, sizeof ms, "%ld", timeout_ms);
        if ((rc = d->set_option(c, "statement_timeout_ms", ms, err)) != 0) {
            qc_err_prefix(err, "setting the statement timeout (%s ms)", ms);
            d->close(c);
            return rc;
        }
    }
    *out = c;
    return 0;
}

void qc_seed_session(const qc_driver *d, qc_conn *c, uint64_t seed, long who, long inc)
{
    char v[40];
    const char *params[1] = {v};
    qc_result r = {0};
    qc_err e = {0};

    if (d == NULL || c == NULL || strcmp(d->name, "pg"))
        return;
    /* splitmix64 of (seed, who, inc): 53 bits -> [-1, 1) */
    uint64_t x = seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(who + 3)) ^
                 (0xbf58476d1ce4e5b9ull * (uint64_t)(inc + 1));
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    snprintf(v, sizeof v, "%.17g", (double)(x >> 11) / 4503599627370496.0 - 1.0);
    (void)d->exec(c, 0, 0, "SELECT setseed($1::float8)", 1, params, &r, &e);
    qc_result_clear(&r);
}

static void drop_conn(qc_worker *w, int abrupt)
{
    w->in_txn = 0; /* the server rolls an open transaction back */
    if (!w->conn)
        return;
    qc_slot_publish(&w->slot, NULL);
    if (abrupt)
        w->sh->drv->abort(w->conn);
    else
        w->sh->drv->close(w->conn);
    w->conn = NULL;
}

/* Where this actor connects: a worker through its listener of the proxy
 * when there is one, the reaper (id -1) always directly. */
static const char *conn_dsn(const qc_worker *w)
{
    const char *d = w->id >= 0 ? qc_proxy_dsn(w->sh->proxy, w->id) : NULL;
    return d ? d : w->sh->dsn;
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
        if (qc_open_conn(sh->drv, conn_dsn(w), sh->no_prepare, sh->stmt_timeout_ms, &w->conn,
                         &err) == 0 &&
            qc_witness_name_actor(sh->drv, w->conn, sh->sc, sh->proto->engine, w->id, w->inc,
                                  &err) == 0) {
            qc_seed_session(sh->drv, w->conn, sh->sc->seed, w->id, w->inc * 1000L + w->reconnects++);
            qc_slot_publish(&w->slot, w->conn);
            return 0;
        }
        if (w->conn != NULL) /* connected, but its session could not be named */
            sh->drv->close(w->conn);
        w->conn = NULL;
        qc_ev e_ev, *e = event(w, &e_ev, "note", NULL, -1);
        qc_ev_str(e, "note", ("connect failed"));
        qc_ev_str(e, "error", (err.msg));
        qc_ev_append(w->lb, e);
        qc_clock_sleep_until_stop(backoff, &sh->stop);
        backoff = backoff * 2 > 1000 ? 1000 : backoff * 2;
    }
    return -1;
}

/* Rolls back the transaction the worker holds open (the transaction
 * model's claim, a [schedule] hold_*_commit wrap); errors are ignored (a
 * dead connection is noticed at the next request). */
static void rollback_open_txn(qc_worker *w)
{
    qc_err ignore = {0};
    w->sh->drv->rollback(w->conn, &ignore);
    w->in_txn = 0;
}

/* Sends one step: invoke event, run, and on error the fail/info event.
 * On success the caller writes the ok event(s) (they carry step results).
 * Returns the qc_protocol_run code; *req gets the request id. */
static int request(qc_worker *w, qc_step_id step, const qc_params *in, int64_t job,
                   const char *token, qc_result *res, int64_t *req)
{
    qc_shared *sh = w->sh;
    const char *op = qc_step_name(step);
    /* A previous request may have lost the connection (a terminated
     * session, a restart): reconnect before sending anything. */
    if ((!w->conn || !sh->drv->is_ok(w->conn)) && ensure_conn(w) != 0) {
        *req = -1;
        return QC_ECONN;
    }
    *req = atomic_fetch_add(&sh->next_req, 1);
    qc_ev e_ev, *e = event(w, &e_ev, "invoke", op, *req);
    set_job(e, job, token);
    if (step == QC_STEP_CLAIM && w->planned_pause_ms >= 0) {
        /* The idle policy's own pause: the pause rule of
         * bounded_idle_polling judges it, not the measured gap, which a
         * starved thread stretches. */
        qc_ev_real(e, "pause_ms", (w->planned_pause_ms));
        w->planned_pause_ms = -1;
    }
    if (step == QC_STEP_CLAIM && w->wake != NULL) {
        /* how the LISTEN wait before this claim ended (issue 17): the
         * pickup rule of bounded_idle_polling reads it */
        qc_ev_str(e, "wake", (w->wake));
        if (w->wait_t >= 0)
            qc_ev_real(e, "wait_t", ((double)(int64_t)(w->wait_t * 1000) / 1000.0));
        if (w->wait_ms >= 0)
            qc_ev_real(e, "wait_ms", (w->wait_ms));
        w->wake = NULL;
    }
    /* the send, by the worker's clock: read before the invoke's "t" is
     * taken, so a deadline from it is never later than one from the
     * ledger's (own_lease, check_runs.c) */
    w->last_send_ms = qc_clock_ms();
    emit(w, e, job);

    qc_err err = {0};
    qc_step_hooks hooks = {hook_wire, hook_point, w, hook_abort};
    w->cur_req = *req;
    w->cur_job = job;
    /* the points between statements are recorded in every run, so that
     * --replay of a run without a schedule can impose them */
    int rc = qc_protocol_run_hooked(sh->drv, w->conn, sh->proto, step, in, res, &err, !w->in_txn,
                                    &hooks);
    if (rc == 0)
        return 0;
    if (w->in_txn && rc == QC_EDB)
        rollback_open_txn(w); /* the statement error aborted the claim's transaction */
    if (atomic_fetch_add(&sh->errors, 1) == 0) {
        pthread_mutex_lock(&sh->fatal_mu);
        size_t ol = strlen(op);
        if (strncmp(err.msg, op, ol) == 0 && err.msg[ol] == ':')
            snprintf(sh->first_error, sizeof sh->first_error, "%s", err.msg);
        else
            snprintf(sh->first_error, sizeof sh->first_error, "%s: %s", op, err.msg);
        /* server messages end in a newline; the diagnostic adds its own */
        for (size_t n = strlen(sh->first_error);
             n > 0 && (sh->first_error[n - 1] == '\n' || sh->first_error[n - 1] == ' ');)
            sh->first_error[--n] = '\0';
        pthread_mutex_unlock(&sh->fatal_mu);
    }
    /* A statement error is a definite failure (the transaction rolled back);
     * a lost connection leaves the outcome unknown. */
    event(w, e, rc == QC_EDB ? "fail" : "info", op, *req);
    set_job(e, job, token);
    qc_ev_str(e, "error", (err.msg));
    /* 25006 read_only_sql_transaction: this session is on a node that
     * takes no writes (a replica, a demoted primary): said as such in the
     * ledger, and the session is dropped so that the next one goes where
     * the conninfo's target_session_attrs sends it (README "Failover"). */
    int read_only = rc == QC_EDB && !strcmp(err.sqlstate, "25006");
    if (read_only) {
        qc_ev_str(e, "sqlstate", (err.sqlstate));
        qc_ev_bool(e, "read_only", 1);
    }
    emit(w, e, job);
    if (is_protocol_error(&err)) {
        char msg[1100];
        snprintf(msg, sizeof msg, "%s: step '%s' (line %d): %s", sh->proto->steps[step].file, op,
                 sh->proto->steps[step].line, err.msg);
        qc_shared_fatal(sh, QC_EINVAL, msg);
    } else if (rc == QC_ECONN || read_only || !sh->drv->is_ok(w->conn)) {
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

static void set_time(qc_ev *e, const char *key, const char *v)
{
    double t = parse_time(v);
    if (t >= 0)
        qc_ev_real(e, key, t);
}

typedef qc_actor_params actor_params;

/* Binds w's identity and the scenario's lease_ms, batch, delay_ms (the
 * retry delay of fail) and max_attempts into p; b holds the text and must
 * outlive p.  The text but :client_now_ms is the incarnation's own, made
 * at its first bind (issue 16: eight snprintf calls a request were a
 * quarter of a worker's instructions). */
static void bind_actor(qc_worker *w, actor_params *b, qc_params *p)
{
    const qc_scenario *sc = w->sh->sc;
    if (w->names_inc != w->inc + 1) {
        actor_params *nb = &w->names;
        char *o = nb->worker;
        if (sc->worker_name_kept == QC_WORKER_NAME_HOST) { /* threads share their host's name */
            *o++ = 'h';
            qc_fmt_i64(o, (int64_t)w->id % (sc->hosts > 0 ? sc->hosts : 1) + 1);
        } else if (sc->worker_name_kept) { /* a pod name: the same after a restart */
            *o++ = 'w';
            qc_fmt_i64(o, w->id);
        } else {
            *o++ = 'w';
            o += qc_fmt_i64(o, w->id);
            *o++ = '.';
            qc_fmt_i64(o, w->inc);
        }
        qc_fmt_i64(nb->worker_id, w->id);
        qc_fmt_i64(nb->incarnation, w->inc);
        qc_fmt_i64(nb->lease, sc->lease_ms);
        qc_fmt_i64(nb->batch, sc->batch);
        qc_fmt_i64(nb->delay, sc->retry_delay_ms);
        qc_fmt_i64(nb->max_att, sc->max_attempts);
        w->names_inc = w->inc + 1;
    }
    memcpy(b, &w->names, offsetof(actor_params, client_now));
    qc_params_set(p, "worker", b->worker);
    qc_params_set(p, "worker_id", b->worker_id);
    qc_params_set(p, "incarnation", b->incarnation);
    qc_params_set(p, "lease_ms", b->lease);
    qc_params_set(p, "batch", b->batch);
    qc_params_set(p, "delay_ms", b->delay);
    qc_params_set(p, "max_attempts", b->max_att);
    /* :client_now_ms: the application's clock (epoch ms, CLOCK_REALTIME)
     * plus this worker's [faults] clock_skew_ms (the reaper's:
     * reaper_skew_ms), read when the step is bound, as an application
     * server stamps a time it computes.  Under a replay the step's turn
     * comes first (a no-op otherwise): read before the wait for it, the
     * clock was stale by that wait when the statement went out, and a
     * lease stamped on it came out shorter than the run's (a renew
     * granted 924 ms of 2,000 where the run had 1,999: decision 1140). */
    qc_sched_turn(w->sh->sched, w->id);
    /* rint: the nearest integer, ties to even, as "%.0f" rounds */
    qc_fmt_i64(b->client_now,
               (int64_t)rint(qc_clock_epoch_ms() + (double)qc_scenario_actor_skew_ms(sc, w->id)));
    qc_params_set(p, "client_now_ms", b->client_now);
}

typedef struct claimed {
    int64_t job;
    char token[128];
    char op_key[128];
    char message_id[64]; /* the claim's message_id column (C23), "" when none */
    double lease_until;
    long attempt; /* the claim's attempt column; -1 when it returns none */
    double lease_from; /* [policy] lease_deadline: the worker's own lease runs lease_ms
                          from here (qc_clock_ms: the claim's send, or its last granted
                          renew's; the answer's with lease_deadline = answer) */
} claimed;

/* Opens a transaction of the worker's own on its connection (connecting
 * first if it has none): the transaction model's claim, and a claim or
 * complete held before its COMMIT ([schedule] hold_claim_commit /
 * hold_complete_commit).  Returns 0 with w->in_txn set, or -1 (the
 * connection dropped when BEGIN failed). */
static int begin_txn(qc_worker *w)
{
    qc_err err = {0};
    if ((!w->conn || !w->sh->drv->is_ok(w->conn)) && ensure_conn(w) != 0)
        return -1;
    if (w->sh->drv->begin(w->conn, &err) != 0) {
        drop_conn(w, 1);
        return -1;
    }
    w->in_txn = 1;
    return 0;
}

/* Commits the transaction the worker holds open after op's request req:
 * passes point pt first (NULL: none; w->cur_req / cur_job name it), then
 * sends COMMIT on the schedule's wire.  When the COMMIT fails it records
 * op's `fail` (QC_EDB: rolled back) or `info` (the connection lost: the
 * outcome unknown) with job and token (job INT64_MIN: none), counts the
 * error and drops a lost connection.  Returns 0, or the driver's code. */
static int commit_open_txn(qc_worker *w, const char *pt, const char *op, int64_t req,
                           int64_t job, const char *token)
{
    qc_shared *sh = w->sh;
    qc_err cerr = {0};
    if (pt != NULL)
        hook_point(w, pt);
    qc_sched_request(sh->sched, w->id, 1);
    int crc = sh->drv->commit(w->conn, &cerr);
    qc_sched_request(sh->sched, w->id, 0);
    w->in_txn = 0;
    if (crc != 0) {
        qc_ev f_ev, *f = event(w, &f_ev, crc == QC_EDB ? "fail" : "info", op, req);
        if (job != INT64_MIN)
            set_job(f, job, token);
        qc_ev_str(f, "error", (cerr.msg));
        emit(w, f, job);
        atomic_fetch_add(&sh->errors, 1);
        if (crc != QC_EDB)
            drop_conn(w, 1);
    }
    return crc;
}

/* One claim; fills up to max jobs into out.  Returns the number claimed, or
 * -1 when the request failed. */
static int do_claim(qc_worker *w, claimed *out, int max)
{
    qc_shared *sh = w->sh;
    char batch[16];
    actor_params ap;
    qc_fmt_i64(batch, max);
    qc_params p = {0};
    bind_actor(w, &ap, &p);
    qc_params_set(&p, "batch", batch);
    qc_result r = {0};
    int64_t req;
    /* The claim's transaction stays open while the job is worked on;
     * complete (or fail) commits it, a crash rolls it back. */
    if (sh->txn_model && begin_txn(w) != 0)
        return -1;
    /* [schedule] hold_claim_commit: the claim's one statement in a
     * transaction of the worker's own, with a "claim.commit" point before
     * its COMMIT where a script can hold it (sched.h qc_claim_commit_held;
     * docs/decisions.md: the same transaction autocommit gives it) */
    int held = qc_claim_commit_held(sh->proto, sh->txn_model, sh->sc->hold_claim_commit);
    if (held && begin_txn(w) != 0)
        return -1;
    if (request(w, QC_STEP_CLAIM, &p, INT64_MIN, NULL, &r, &req) != 0) {
        if (held && w->in_txn)
            rollback_open_txn(w);
        return -1;
    }
    /* the claim's send (request), or, for the mutant lease_deadline =
     * answer, the moment its answer was read */
    double lease_from = sh->sc->lease_deadline == QC_LEASE_DEADLINE_ANSWER ? qc_clock_ms()
                                                                          : w->last_send_ms;
    if (held && w->in_txn) {
        /* after the statement, before its COMMIT: the claim's rows are
         * locked and its new state is not yet visible to anyone else; a
         * failed COMMIT: the claim did not take effect (rolled back) or
         * may have (a lost connection) */
        w->cur_req = req;
        w->cur_job = INT64_MIN;
        if (commit_open_txn(w, "claim.commit", "claim", req, INT64_MIN, NULL) != 0) {
            qc_result_clear(&r);
            return -1;
        }
    }
    if (w->in_txn && r.nrows == 0)
        rollback_open_txn(w);
    int n = 0;
    if (r.nrows > 0 && (qc_result_col(&r, "job_id") < 0 || qc_result_col(&r, "token") < 0)) {
        char msg[1100];
        snprintf(msg, sizeof msg, "%s: step 'claim' (line %d) returned no column %s",
                 sh->proto->steps[QC_STEP_CLAIM].file, sh->proto->steps[QC_STEP_CLAIM].line,
                 qc_result_col(&r, "job_id") < 0 ? "job_id" : "token");
        qc_shared_fatal(sh, QC_EINVAL, msg);
    }
    for (int i = 0; i < r.nrows; i++) {
        qc_ev e_ev, *e = event(w, &e_ev, "ok", "claim", req);
        qc_ev_int(e, "rows", (r.nrows));
        int64_t job;
        if (parse_i64(qc_result_get(&r, i, "job_id"), &job) != 0) {
            qc_ev_str(e, "error", ("claim row without a job_id"));
            qc_ev_append(w->lb, e);
            continue;
        }
        const char *tok = qc_result_get(&r, i, "token");
        const char *key = qc_result_get(&r, i, "op_key");
        set_job(e, job, tok);
        set_time(e, "lease_until", qc_result_get(&r, i, "lease_until_ms"));
        set_time(e, "now", qc_result_get(&r, i, "now_ms"));
        /* a replay times the entries that found a lease run out by the
         * replay's own leases (decision 1133) */
        if (sh->sched != NULL)
            qc_sched_lease(sh->sched, job, parse_time(qc_result_get(&r, i, "lease_until_ms")),
                           parse_time(qc_result_get(&r, i, "now_ms")));
        const char *att = qc_result_get(&r, i, "attempt");
        if (att)
            qc_ev_int(e, "attempt", (strtol(att, NULL, 10)));
        if (key)
            qc_ev_str(e, "op_key", (key));
        const char *grp = qc_result_get(&r, i, "group_key");
        if (grp)
            qc_ev_str(e, "group", (grp));
        qc_ev_append(w->lb, e);
        /* after the answer is in the ledger: a targeted stall waiting for
         * this claim sends its stale requests only once it can be proven
         * to follow it */
        qc_fault_plan_note_claim(sh->plan, job);
        if (n < max) {
            out[n].job = job;
            copy_str(out[n].token, sizeof out[n].token, tok);
            copy_str(out[n].op_key, sizeof out[n].op_key, key);
            const char *mid = qc_result_get(&r, i, "message_id");
            copy_str(out[n].message_id, sizeof out[n].message_id, mid);
            out[n].lease_until = parse_time(qc_result_get(&r, i, "lease_until_ms"));
            out[n].attempt = att ? strtol(att, NULL, 10) : -1;
            out[n].lease_from = lease_from;
            n++;
        }
    }
    if (r.nrows == 0) {
        qc_ev e_ev, *e = event(w, &e_ev, "ok", "claim", req);
        qc_ev_int(e, "rows", (0));
        emit(w, e, INT64_MIN);
        atomic_fetch_add(&sh->empty_claims, 1);
    } else {
        /* every row of the answer is in the ledger: one point */
        qc_sched_point(sh->sched, w->id, "claim.after", n > 0 ? out[0].job : INT64_MIN);
    }
    atomic_fetch_add(&sh->claims, n);
    qc_result_clear(&r);
    return n;
}

/* Delivers the job's effect to the sink and records it. */
static void do_effect(qc_worker *w, const claimed *c)
{
    qc_sched_turn(w->sh->sched, w->id); /* a replay: the delivery in its turn */
    int applied = qc_sink_deliver(w->sh->sink, c->op_key[0] ? c->op_key : NULL, c->job);
    qc_ev e_ev, *e = event(w, &e_ev, "effect", NULL, -1);
    set_job(e, c->job, c->token);
    if (c->op_key[0])
        qc_ev_str(e, "op_key", (c->op_key));
    qc_ev_bool(e, "applied", (applied));
    /* What the worker meant to spend before the effect: a delivery that
     * came after its lease ran out although the plan fitted the lease was
     * late because the thread was starved (effects_once). */
    qc_ev_real(e, "work_ms", (w->planned_work_ms));
    emit(w, e, c->job);
}

/* Publishes this worker's server session id for the nemesis: the
 * protocol's server_pid step where it has one, else the driver's view. */
static void publish_pid(qc_worker *w)
{
    qc_shared *sh = w->sh;
    if (!sh->pids)
        return;
    int pid = 0;
    if (sh->proto->steps[QC_STEP_SERVER_PID].present) {
        qc_params p = {0};
        qc_result r = {0};
        qc_err err = {0};
        if (qc_protocol_run(sh->drv, w->conn, sh->proto, QC_STEP_SERVER_PID, &p, &r, &err) == 0) {
            const char *v = qc_result_get(&r, 0, "pid");
            pid = v ? atoi(v) : 0;
        }
        qc_result_clear(&r);
    } else if (sh->drv->backend_pid) {
        pid = sh->drv->backend_pid(w->conn);
    }
    /* the reaper's is after the workers' (the schedule's lock check) */
    atomic_store(&sh->pids[w->id >= 0 ? w->id : (int)sh->sc->workers], pid);
    if (pid > 0) {
        /* Which session this incarnation now talks on: worker_progress
         * maps the monitor's session samples to worker and incarnation by
         * it (check_wedged.c). */
        qc_ev e_ev, *e = event(w, &e_ev, "note", NULL, -1);
        qc_ev_str(e, "note", ("session"));
        qc_ev_int(e, "pid", (pid));
        emit(w, e, INT64_MIN);
    }
}

/* Records a fault the harness injects on purpose. until_ms > 0 marks the
 * end of its window (client ms since the run started). */
static void record_fault(qc_worker *w, qc_fault_kind k, const claimed *c, double until_ms)
{
    qc_ev e_ev, *e = event(w, &e_ev, "fault", NULL, -1);
    qc_ev_str(e, "fault", (qc_fault_name(k)));
    if (c)
        set_job(e, c->job, c->token);
    if (until_ms > 0)
        qc_ev_real(e, "until_t", (until_ms));
    emit(w, e, c ? c->job : INT64_MIN);
    atomic_fetch_add(&w->sh->faults, 1);
}

/* The worker "process" dies: its connection is dropped abruptly (the
 * server rolls back anything open), and after restart_delay_ms a new
 * incarnation starts on a new connection, as a supervisor would restart it. */
static void die_and_restart(qc_worker *w)
{
    qc_shared *sh = w->sh;
    drop_conn(w, 1);
    listen_drop(w, "closed", "the worker died");
    w->listens = 0; /* the next incarnation LISTENs on a connection of its own */
    if (sh->pids && w->id >= 0)
        atomic_store(&sh->pids[w->id], 0);
    qc_clock_sleep_until_stop((double)sh->sc->restart_delay_ms, &sh->stop);
    w->inc++;
}

/* The end of an incarnation asked to stop gracefully ([faults]
 * graceful_stop), once the jobs it held are done: its connections are
 * closed cleanly (nothing is open: its jobs were completed, failed or
 * given up), a note "graceful stop" says so, and after restart_delay_ms a
 * new incarnation starts, as a supervisor restarts a stopped process
 * (the same restart as die_and_restart's). */
static void graceful_restart(qc_worker *w)
{
    qc_shared *sh = w->sh;
    qc_ev e_ev, *e = event(w, &e_ev, "note", NULL, -1);
    qc_ev_str(e, "note", ("graceful stop"));
    qc_ev_str(e, "heartbeat", (sh->sc->stop_heartbeat_first ? "stopped first" : "kept"));
    qc_ev_append(w->lb, e);
    w->stop_requested = 0;
    drop_conn(w, 0);
    listen_drop(w, "closed", "the worker stopped");
    w->listens = 0;
    if (sh->pids && w->id >= 0)
        atomic_store(&sh->pids[w->id], 0);
    qc_clock_sleep_until_stop((double)sh->sc->restart_delay_ms, &sh->stop);
    w->inc++;
}

/* A complete, renew or fail: invoke, run, and the ok event with rows.
 * Returns rows changed, or -1 when the request failed (fail / info already
 * recorded).  discard: the answer is thrown away (lost_ack): the ledger gets
 * an info event as if it never came, and the connection is dropped. */
static long do_update(qc_worker *w, qc_step_id step, claimed *c, const char *error, int discard)
{
    qc_shared *sh = w->sh;
    char job[32];
    actor_params ap;
    qc_fmt_i64(job, c->job);
    qc_params p = {0};
    bind_actor(w, &ap, &p);
    qc_params_set(&p, "job_id", job);
    qc_params_set(&p, "token", c->token);
    qc_params_set(&p, "error", error);
    qc_params_set(&p, "op_key", c->op_key[0] ? c->op_key : NULL);
    if (c->message_id[0])
        qc_params_set(&p, "message_id", c->message_id);
    qc_result r = {0};
    int64_t req;
    const char *op = qc_step_name(step);
    /* [schedule] hold_complete_commit: a complete of one statement in a
     * transaction of the worker's own, with "complete.commit" before its
     * COMMIT (sched.h qc_complete_commit_held, decision 1105) */
    int held = step == QC_STEP_COMPLETE &&
               qc_complete_commit_held(sh->proto, sh->txn_model, sh->sc->hold_complete_commit);
    if (held && begin_txn(w) != 0)
        return -1;
    if (request(w, step, &p, c->job, c->token, &r, &req) != 0) {
        if (held && w->in_txn)
            rollback_open_txn(w);
        return -1;
    }
    if (w->in_txn && step != QC_STEP_RENEW) {
        /* transaction model: the step is real only once the claim's
         * transaction commits (hold_complete_commit: the complete's own) */
        char pt[40];
        snprintf(pt, sizeof pt, "%s.commit", op);
        w->cur_req = req;
        w->cur_job = c->job;
        if (commit_open_txn(w, pt, op, req, c->job, c->token) != 0) {
            qc_result_clear(&r);
            return -1;
        }
    }
    long rows = changed_rows(&r);
    qc_ev e_ev, *e = event(w, &e_ev, discard ? "info" : "ok", op, req);
    set_job(e, c->job, c->token);
    if (discard) {
        /* What the server said: the step committed; double_complete counts
         * a discarded rows > 0 as a completion (decision 1101). */
        qc_ev_int(e, "discarded_rows", (rows));
        qc_ev_str(e, "error", ("lost_ack: answer thrown away"));
        emit(w, e, c->job);
        qc_result_clear(&r);
        return -1;
    }
    qc_ev_int(e, "rows", (rows));
    set_time(e, "now", qc_result_get(&r, 0, "now_ms"));
    if (sh->sched != NULL)
        qc_sched_lease(sh->sched, step == QC_STEP_RENEW && rows > 0 ? c->job : INT64_MIN,
                       step == QC_STEP_RENEW ? parse_time(qc_result_get(&r, 0, "lease_until_ms"))
                                             : -1,
                       parse_time(qc_result_get(&r, 0, "now_ms")));
    if (step == QC_STEP_RENEW) {
        set_time(e, "lease_until", qc_result_get(&r, 0, "lease_until_ms"));
        const char *tok = qc_result_get(&r, 0, "token");
        if (rows > 0 && tok && strcmp(tok, c->token)) {
            qc_ev_str(e, "new_token", (tok));
            copy_str(c->token, sizeof c->token, tok);
        }
    }
    if (step == QC_STEP_FAIL) {
        /* what the fail asked for and what the server made of it: the
         * retry_delay checker (check_retry.c) judges the next claim by them.
         * The delay is what the worker asked for, whether or not the fail
         * step reads :delay_ms (decision 960: a fail that ignores the
         * delay asked for, retrying at once, is judged like one that
         * honours it; the header's fail_reads_delay_ms says which) */
        if (sh->sc->retry_delay_ms > 0)
            qc_ev_int(e, "delay_ms", (sh->sc->retry_delay_ms));
        const char *st = qc_result_get(&r, 0, "state");
        if (st)
            qc_ev_str(e, "state", (st));
    }
    if (step == QC_STEP_COMPLETE) {
        /* The worker's own bookkeeping: a 0-row complete is NOT a success
         * (the job changed owner or state; see the READPAST seed). */
        qc_ev_bool(e, "counted", (rows > 0 || sh->sc->count_zero_rows));
        atomic_fetch_add(rows > 0 ? &sh->completes_ok : &sh->completes_zero, 1);
    }
    emit(w, e, c->job);
    qc_result_clear(&r);
    return rows;
}

/* Completes a claimed job; when the answer is lost (connection gone) the
 * worker reconnects and retries once with the same token, as a client with
 * a retry would.  Returns rows changed or -1. */
static long complete_with_retry(qc_worker *w, claimed *c, int lose_ack)
{
    /* [network] lost_ack = proxy: the proxy drops the server's answer
     * (proxy.h) instead of the client throwing it away */
    int via_proxy = lose_ack && w->sh->proxy && w->sh->sc->network.lost_ack_proxy;
    if (via_proxy)
        qc_proxy_arm(w->sh->proxy, w->id, QC_PROXY_ARM_LOST_ACK);
    long rows = do_update(w, QC_STEP_COMPLETE, c, NULL, lose_ack && !via_proxy);
    if (via_proxy) {
        char tag[32];
        if (qc_proxy_take_fired(w->sh->proxy, w->id, tag, sizeof tag)) {
            qc_ev e_ev, *e = event(w, &e_ev, "fault", NULL, -1);
            qc_ev_str(e, "fault", (qc_fault_name(QC_FAULT_LOST_ACK)));
            set_job(e, c->job, c->token);
            qc_ev_str(e, "via", ("proxy"));
            qc_ev_str(e, "answer", (tag));
            emit(w, e, c->job);
            atomic_fetch_add(&w->sh->faults, 1);
        } else {
            /* the complete failed before its answer (or its connection
             * broke first): no answer was lost, so no fault is recorded */
            qc_ev e_ev, *e = event(w, &e_ev, "note", NULL, -1);
            set_job(e, c->job, c->token);
            qc_ev_str(e, "note", ("lost_ack via the proxy did not fire: "
                                                       "the complete had no answer to lose"));
            qc_ev_append(w->lb, e);
            lose_ack = 0;
        }
    }
    if (rows >= 0)
        return rows;
    if (lose_ack && !via_proxy)
        record_fault(w, QC_FAULT_LOST_ACK, c, 0);
    if (lose_ack)
        drop_conn(w, 1);
    if (w->conn && w->sh->drv->is_ok(w->conn) && !lose_ack)
        return -1; /* a definite failure (statement error): no retry */
    if (ensure_conn(w) != 0)
        return -1;
    publish_pid(w);
    /* delayed_job's reaction (shared/cases.md C06): a complete that seems to
     * have failed is treated as a job failure.  The protocol must reject
     * that fail (the job is already done), or the job runs again. */
    if (lose_ack && w->sh->sc->lost_ack_fail && w->sh->proto->steps[QC_STEP_FAIL].present)
        return do_update(w, QC_STEP_FAIL, c, "complete failed (answer lost)", 0);
    return do_update(w, QC_STEP_COMPLETE, c, NULL, 0);
}

/* The protocol's per-worker heartbeat step (issue 13): one request keyed by
 * :worker that extends every live lease of this worker incarnation, as
 * libraries with a worker heartbeat do.  The ledger names no job (the
 * checkers cannot tell which leases it extended, so it extends none of
 * theirs: they may miss a bug, never raise a false alarm).  Returns the
 * rows it changed, or -1 (fail / info recorded). */
static long do_heartbeat(qc_worker *w)
{
    actor_params ap;
    qc_params p = {0};
    qc_result r = {0};
    int64_t req;

    bind_actor(w, &ap, &p);
    if (request(w, QC_STEP_HEARTBEAT, &p, INT64_MIN, NULL, &r, &req) != 0)
        return -1;
    long rows = changed_rows(&r);
    qc_ev e_ev, *e = event(w, &e_ev, "ok", qc_step_name(QC_STEP_HEARTBEAT), req);
    qc_ev_int(e, "rows", (rows));
    set_time(e, "now", qc_result_get(&r, 0, "now_ms"));
    set_time(e, "lease_until", qc_result_get(&r, 0, "lease_until_ms"));
    qc_ev_append(w->lb, e);
    qc_result_clear(&r);
    return rows;
}

/* [faults] graceful_stop (shared/cases.md C07): the request to stop
 * gracefully reaches the worker during c's work.  Recorded as a fault
 * event of c's job; from here on the incarnation takes no new claim and
 * ends after the jobs it holds (graceful_restart).  The correct policy
 * keeps renewing them until they are completed; stop_heartbeat_first =
 * yes (db-scheduler before PR #368) stops the heartbeat here and lets
 * the work run on.  Returns 1 when the worker renews no more. */
static int graceful_stop_arrives(qc_worker *w, const claimed *c)
{
    record_fault(w, QC_FAULT_GRACEFUL_STOP, c, 0);
    w->stop_requested = 1;
    return w->sh->sc->stop_heartbeat_first;
}

/* Simulated work of work_ms; with heartbeat on, renews every lease/3 with
 * the current token (taking a rotated token), or runs the protocol's
 * heartbeat step when it has one.  stop: the job's planned graceful stop
 * fires during this work, right after its first renew (work of one renew
 * period or less, or no heartbeat: halfway through it).  A worker that
 * stops heartbeating at a graceful stop (stop_heartbeat_first) renews
 * nothing after it, in this job and the rest of its batch.  Returns 0
 * when the lease is still ours, -1 when a renew was rejected or failed,
 * or a heartbeat changed no row (the job is given up). */
static int work(qc_worker *w, claimed *c, int stall, int stop)
{
    const qc_scenario *sc = w->sh->sc;
    double left = (double)qc_rng_range(&w->rng, sc->work_ms_min, sc->work_ms_max);
    w->planned_work_ms = left;
    double every = sc->heartbeat_every_ms > 0 ? (double)sc->heartbeat_every_ms
                                              : (double)sc->lease_ms / 3.0;
    int renewing = sc->heartbeat && !(w->stop_requested && sc->stop_heartbeat_first);
    /* ms of work after which the graceful stop arrives; -1: none (or done) */
    double done = 0, stop_after = !stop ? -1 : (renewing && left > every) ? every : left / 2.0;
    while (left > 0) {
        double chunk = (renewing && left > every) ? every : left;
        if (stop_after > done && done + chunk > stop_after)
            chunk = stop_after - done;
        /* a stop (SIGINT, the end of the run) cuts the work short */
        if (qc_clock_sleep_until_stop(chunk, &w->sh->stop))
            return -1;
        left -= chunk;
        done += chunk;
        if (stall && left > 0) {
            /* stall_in_work: the worker freezes past its lease between two
             * renews; a correct worker gives the job up when the next renew
             * is refused */
            double ms = (double)sc->lease_ms * sc->stall_factor;
            record_fault(w, QC_FAULT_STALL_IN_WORK, c, qc_clock_ms() - w->sh->t0 + ms);
            qc_clock_sleep_until_stop(ms, &w->sh->stop);
            stall = 0;
        }
        long got = 1;
        int renewed = 0;
        if (left > 0 && renewing && w->sh->proto->steps[QC_STEP_HEARTBEAT].present) {
            got = do_heartbeat(w);
            renewed = 1;
        } else if (left > 0 && renewing && w->sh->proto->steps[QC_STEP_RENEW].present) {
            got = do_update(w, QC_STEP_RENEW, c, NULL, 0);
            renewed = 1;
        }
        /* A refused renew means the lease is gone, and so does one that got
         * no answer (or failed): its outcome is unknown, the lease may have
         * run out.  The worker gives the job up; a policy mutant keeps
         * working (on_renew_refused = continue: exclusive_run; on_renew_lost
         * = continue: own_lease, decision 951), taking the renew as
         * granted. */
        if (renewed && got < 0 && sc->renew_lost_continue && !sc->renew_refused_continue) {
            /* the mutant: its heartbeat gives up with a log line and the
             * handler runs on to its effect, its lease taken as renewed
             * when the error came back */
            renewing = 0;
            c->lease_from = qc_clock_ms();
        } else if (renewed && got <= 0 && !sc->renew_refused_continue) {
            if (stop_after >= 0)
                graceful_stop_arrives(w, c); /* the job is given up; the stop still comes */
            return -1;
        } else if (renewed) {
            /* a renew granted (or taken as granted): the worker's own
             * lease runs from its send (lease_deadline = answer: from now) */
            c->lease_from =
                sc->lease_deadline == QC_LEASE_DEADLINE_ANSWER ? qc_clock_ms() : w->last_send_ms;
        }
        if (stop_after >= 0 && done >= stop_after) {
            /* after the renew that was due here, if any */
            if (graceful_stop_arrives(w, c))
                renewing = 0;
            stop_after = -1;
        }
    }
    if (stop_after >= 0)
        graceful_stop_arrives(w, c); /* no work to hold it (work_ms 0): at its end */
    return 0;
}

/* [policy] lease_deadline (docs/decisions.md 950): may the worker still
 * start c's `what` ("effect" or "complete") by its own clock?  1 when more
 * than QC_LEASE_MARGIN_MS of its lease (lease_ms from c->lease_from) are
 * left, or the worker keeps no deadline (lease_deadline = none, or the
 * transaction model, where the claim lives in its transaction); else it
 * notes "own lease ran out" and gives the job up (0): no effect, no
 * complete, the queue's reaper takes the job back.  Called right before
 * the effect, and before the first complete after its connection is up
 * (a reconnect can take long), so that only the thread's own lateness
 * after this test can make the event late. */
static int own_lease_left(qc_worker *w, const claimed *c, const char *what)
{
    const qc_scenario *sc = w->sh->sc;
    if (sc->lease_deadline == QC_LEASE_DEADLINE_NONE || w->sh->txn_model || c->lease_from < 0)
        return 1;
    double now = qc_clock_ms(), deadline = c->lease_from + (double)sc->lease_ms;
    /* A replay takes the earlier run's decision: its next point for this
     * job after the effect's test is effect.after, after the complete's
     * complete.before; any other point means that run gave the job up
     * here (decision 1111).  Its clock would decide by the replay's own
     * pace, slower or faster than the run's. */
    char next[40];
    int64_t next_job = INT64_MIN;
    int replayed = qc_sched_replay_next(w->sh->sched, w->id, next, sizeof next, &next_job);
    if (replayed) {
        const char *went_on = !strcmp(what, "effect") ? "effect.after" : "complete.before";
        if (next_job == c->job && !strcmp(next, went_on))
            return 1;
    } else if (now + QC_LEASE_MARGIN_MS < deadline) {
        return 1;
    }
    char msg[240];
    snprintf(msg, sizeof msg,
             "gave the job up before its %s: %.1f ms of its %ld ms lease left by its own clock "
             "(%s %.1f ms ago)%s",
             what, deadline - now, sc->lease_ms,
             sc->lease_deadline == QC_LEASE_DEADLINE_ANSWER ? "answer read" : "request sent",
             now - c->lease_from, replayed ? "; as the replayed run did" : "");
    qc_ev e_ev, *e = event(w, &e_ev, "note", NULL, -1);
    qc_ev_str(e, "note", ("own lease ran out"));
    set_job(e, c->job, c->token);
    qc_ev_str(e, "point", (what));
    qc_ev_str(e, "error", (msg));
    qc_ev_append(w->lb, e);
    atomic_fetch_add(&w->sh->own_lease_gave_up, 1);
    return 0;
}

/* Before the first complete of c: connected (a reconnect first), then
 * own_lease_left.  0: do not send it. */
static int may_complete(qc_worker *w, const claimed *c)
{
    if (ensure_conn(w) != 0)
        return 0;
    return own_lease_left(w, c, "complete");
}

/* Runs one claimed job through work, effect and complete, injecting the
 * job's planned fault.  Returns 1 when the worker died (the rest of its
 * batch is abandoned), else 0. */
/* Records a hold (issue 12): an actor kept at a point of its protocol
 * until a condition on other actors held, or until its time ran out (the
 * condition never came: recorded, never silently skipped), or until the
 * run stopped. */
static void record_hold(qc_worker *w, const claimed *c, const char *point, const char *until,
                        int met, double waited_ms)
{
    qc_ev e_ev, *e = event(w, &e_ev, "note", NULL, -1);
    qc_ev_str(e, "note", ("hold"));
    set_job(e, c->job, c->token);
    qc_ev_str(e, "point", (point));
    qc_ev_str(e, "until", (until));
    /* a hold cut short by the end of the run (SIGINT, a fatal error) did
     * not run out of time: "interrupted" (decision 1129) */
    qc_ev_str(e, "outcome", (met                         ? "met"
                                                  : atomic_load(&w->sh->stop) ? "interrupted"
                                                                              : "timed out"));
    qc_ev_real(e, "waited_ms", ((double)(int64_t)(waited_ms * 100) / 100.0));
    qc_ev_append(w->lb, e);
}

/* The new owner of a job whose old owner is stalled on purpose waits before
 * its effect until the old owner's stale requests were answered, so they
 * meet the job in flight under the new owner's claim (a protocol that does
 * not check the token accepts them then).  At most half a lease, so the new
 * owner's lease stays live. */
static void hold_before_effect(qc_worker *w, const claimed *c)
{
    qc_shared *sh = w->sh;
    double start = qc_clock_ms(), limit = (double)sh->sc->lease_ms / 2.0;
    int met = 1;

    if (!qc_fault_plan_held(sh->plan, c->job))
        return;
    while (qc_fault_plan_held(sh->plan, c->job)) {
        if (qc_clock_ms() - start > limit || atomic_load(&sh->stop)) {
            met = 0;
            break;
        }
        qc_clock_sleep_ms(1);
    }
    record_hold(w, c, "before_effect", "the old owner's stale requests answered", met,
                qc_clock_ms() - start);
}

/* A stalled worker wakes and carries on with its old token: renews, then
 * completes (or fails, after_stall = fail).  The protocol must refuse. */
static void stale_requests(qc_worker *w, claimed *c)
{
    qc_shared *sh = w->sh;

    /* a worker that never renews ([policy] heartbeat = no) sends none
     * after its stall either: its late complete meets the lease as it ran
     * out (scripts/reap_snapshot_race.ini, decision 1105) */
    if (sh->proto->steps[QC_STEP_RENEW].present && sh->sc->heartbeat)
        do_update(w, QC_STEP_RENEW, c, NULL, 0);
    if (sh->sc->stall_then_fail && sh->proto->steps[QC_STEP_FAIL].present)
        do_update(w, QC_STEP_FAIL, c, "stalled: work timed out", 0);
    else
        do_update(w, QC_STEP_COMPLETE, c, NULL, 0);
}

/* The targeted stall (stall_until_reclaimed): after its effect the worker
 * waits until another worker has claimed the job (the job's claim count
 * passed the one seen when this claim was processed), holding the new
 * owner before its effect, then renews and completes (or fails) with its
 * old token, and lets the new owner go.  The wait ends at 6 leases (at
 * least 3 s), or at the heal; a wait that ran out is recorded as such. */
static void stall_until_reclaimed(qc_worker *w, claimed *c, int seen)
{
    qc_shared *sh = w->sh;
    const qc_scenario *sc = sh->sc;
    double start = qc_clock_ms();
    double limit = (double)sc->lease_ms * 6.0 > 3000.0 ? (double)sc->lease_ms * 6.0 : 3000.0;
    int met = 1;

    qc_fault_plan_set_hold(sh->plan, c->job, 1);
    record_fault(w, QC_FAULT_STALL_UNTIL_RECLAIMED, c, 0);
    while (qc_fault_plan_claims(sh->plan, c->job) <= seen) {
        if (qc_clock_ms() - start > limit || atomic_load(&sh->stop) || !atomic_load(&sh->chaos)) {
            met = 0;
            break;
        }
        qc_clock_sleep_ms(2);
    }
    record_hold(w, c, "stale_requests", "the job claimed by another worker", met,
                qc_clock_ms() - start);
    if (ensure_conn(w) == 0)
        stale_requests(w, c);
    qc_fault_plan_set_hold(sh->plan, c->job, 0);
}

/* [faults] lost_ack_on_fail (decision 1124): this attempt's effect fails,
 * the worker fails the job, and the answer to its fail is lost (thrown
 * away and the connection dropped, as lost_ack does to a complete).
 * Reconnected, it waits until another worker has claimed the job, holding
 * that new owner before its effect, and sends the fail again with its old
 * token, as a client retrying a request it got no answer to would; then
 * it lets the new owner go.  The hold is set before the first fail is
 * sent, so no reclaim can slip past it.  A protocol that writes a fresh
 * token with every claim refuses the retry (rows 0); one that keeps the
 * token across a fail and hands it to the next claim lets the old owner
 * fail the new owner's claim (stale_token_rejected).  The wait ends as
 * stall_until_reclaimed's does (6 leases, at least 3 s, or the heal) and
 * is recorded either way.  A protocol without a fail step completes the
 * job as if no fault was planned. */
static void lost_ack_on_fail(qc_worker *w, claimed *c, int seen)
{
    qc_shared *sh = w->sh;
    const qc_scenario *sc = sh->sc;
    double start, limit = (double)sc->lease_ms * 6.0 > 3000.0 ? (double)sc->lease_ms * 6.0 : 3000.0;
    int met = 1;

    if (!sh->proto->steps[QC_STEP_FAIL].present) {
        do_effect(w, c);
        if (may_complete(w, c))
            complete_with_retry(w, c, 0);
        return;
    }
    qc_fault_plan_set_hold(sh->plan, c->job, 1);
    record_fault(w, QC_FAULT_LOST_ACK_ON_FAIL, c, 0);
    (void)do_update(w, QC_STEP_FAIL, c, "lost_ack_on_fail: the effect failed", 1);
    drop_conn(w, 1);
    start = qc_clock_ms();
    while (qc_fault_plan_claims(sh->plan, c->job) <= seen) {
        if (qc_clock_ms() - start > limit || atomic_load(&sh->stop) || !atomic_load(&sh->chaos)) {
            met = 0;
            break;
        }
        qc_clock_sleep_ms(2);
    }
    record_hold(w, c, "fail_retry", "the job claimed by another worker", met,
                qc_clock_ms() - start);
    if (ensure_conn(w) == 0) {
        publish_pid(w);
        (void)do_update(w, QC_STEP_FAIL, c, "lost_ack_on_fail: the fail retried", 0);
    }
    qc_fault_plan_set_hold(sh->plan, c->job, 0);
}

/* The truth of a dedup answer's run column: 1 for t, true, 1, y, yes, on
 * (any case), 0 for f, false, 0, n, no, off and SQL NULL; -1 for anything
 * else. */
static int run_value(const char *v)
{
    static const char *const yes[] = {"t", "true", "1", "y", "yes", "on"};
    static const char *const no[] = {"f", "false", "0", "n", "no", "off"};
    if (v == NULL)
        return 0;
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        if (!strcasecmp(v, yes[i]))
            return 1;
        if (!strcasecmp(v, no[i]))
            return 0;
    }
    return -1;
}

/* The protocol's outbox check (shared/cases.md C23): the dedup step for
 * the claimed copy c, with :job_id, :token, :op_key and :message_id (the
 * claim's message_id column) bound.  Returns 1 when this copy is to run
 * its handler (the first row's run column is true), 0 when it is a
 * duplicate to complete without its work and effect (false, NULL, or no
 * row), -1 when the request failed (fail / info recorded: the worker
 * gives the job up, its lease runs out and the reaper takes it back) or
 * run held something else (a fatal protocol error).  The ok event says
 * "run" true or false. */
static int do_dedup(qc_worker *w, const claimed *c)
{
    qc_shared *sh = w->sh;
    char job[32];
    actor_params ap;
    qc_params p = {0};
    qc_result r = {0};
    int64_t req;

    qc_fmt_i64(job, c->job);
    bind_actor(w, &ap, &p);
    qc_params_set(&p, "job_id", job);
    qc_params_set(&p, "token", c->token);
    qc_params_set(&p, "error", NULL);
    qc_params_set(&p, "op_key", c->op_key[0] ? c->op_key : NULL);
    qc_params_set(&p, "message_id", c->message_id[0] ? c->message_id : NULL);
    if (request(w, QC_STEP_DEDUP, &p, c->job, c->token, &r, &req) != 0)
        return -1;
    const char *v = r.nrows > 0 ? qc_result_get(&r, 0, "run") : NULL;
    int run = run_value(v);
    qc_ev e_ev, *e = event(w, &e_ev, "ok", qc_step_name(QC_STEP_DEDUP), req);
    set_job(e, c->job, c->token);
    qc_ev_int(e, "rows", (r.nrows));
    if (run >= 0)
        qc_ev_bool(e, "run", (run));
    else
        qc_ev_str(e, "error", ("run is neither true nor false"));
    emit(w, e, c->job);
    if (run < 0) {
        char msg[1100];
        snprintf(msg, sizeof msg,
                 "%s: step 'dedup' (line %d) returned run = '%.64s' (expected true or false)",
                 sh->proto->steps[QC_STEP_DEDUP].file, sh->proto->steps[QC_STEP_DEDUP].line, v);
        qc_shared_fatal(sh, QC_EINVAL, msg);
    }
    qc_result_clear(&r);
    return run;
}

static int process(qc_worker *w, claimed *c)
{
    qc_shared *sh = w->sh;
    const qc_scenario *sc = sh->sc;
    qc_fault_kind f = qc_fault_plan_get(sh->plan, c->job);
    /* A replay: the fault taken, the claims counted, in its turn.  Poison
     * takes nothing (every attempt fails, the claims are not read), so it
     * waits for no turn here: its work's sleep begins at the claim's
     * answer, as in the run, not when the cursor reaches its next entry
     * (a wait of a whole renew period per poison claim, decision 1143). */
    if (f != QC_FAULT_NONE && f != QC_FAULT_POISON)
        qc_sched_turn(sh->sched, w->id);
    int seen = qc_fault_plan_claims(sh->plan, c->job);
    /* Poison is a property of the job and fails every attempt; the other
     * faults fire once, and only during the chaos phase. */
    int fire = f != QC_FAULT_NONE && f != QC_FAULT_POISON && atomic_load(&sh->chaos) &&
               (sh->shards <= 1 || c->attempt <= 1) && qc_fault_plan_take(sh->plan, c->job);

    if (fire && f == QC_FAULT_KILL_AFTER_CLAIM) {
        record_fault(w, f, c, 0);
        die_and_restart(w);
        return 1;
    }
    if (fire && f == QC_FAULT_HALF_OPEN) {
        /* the connection goes silent from the next request on (proxy.h);
         * only a client-side timeout gets the worker out */
        record_fault(w, f, c, 0);
        qc_proxy_arm(sh->proxy, w->id, QC_PROXY_ARM_HALF_OPEN);
    }
    if (sh->proto->steps[QC_STEP_DEDUP].present) {
        /* the outbox check between the claim and the handler (C23): a
         * duplicate copy is completed without its work and its effect (a
         * fault planned on it does not fire: nothing of it runs) */
        int run = do_dedup(w, c);
        if (run < 0)
            return 0; /* unknown: given up, the lease runs out */
        if (run == 0) {
            if (sh->txn_model && !w->in_txn)
                return 0;
            if (may_complete(w, c))
                complete_with_retry(w, c, 0);
            return 0;
        }
    }
    if (work(w, c, fire && f == QC_FAULT_STALL_IN_WORK, fire && f == QC_FAULT_GRACEFUL_STOP) != 0)
        return 0;
    if (sh->txn_model && !w->in_txn)
        return 0; /* the claim's transaction is gone: so is the claim */
    if (fire && f == QC_FAULT_LOST_ACK_ON_FAIL) {
        lost_ack_on_fail(w, c, seen);
        return 0;
    }
    if (f == QC_FAULT_POISON) {
        record_fault(w, f, c, 0);
        if (sc->poison_crash) {
            die_and_restart(w);
            return 1;
        }
        if (sh->proto->steps[QC_STEP_FAIL].present)
            do_update(w, QC_STEP_FAIL, c, "poison: the effect failed", 0);
        return 0;
    }
    hold_before_effect(w, c);
    if (!own_lease_left(w, c, "effect"))
        return 0;
    do_effect(w, c);
    if (!fire) {
        if (may_complete(w, c))
            complete_with_retry(w, c, 0);
        return 0;
    }
    switch (f) {
    case QC_FAULT_KILL_AFTER_EFFECT:
        record_fault(w, f, c, 0);
        die_and_restart(w);
        return 1;
    case QC_FAULT_STALL_BEYOND_LEASE: {
        /* A pause (GC, swap, SIGSTOP) past the lease; then the worker carries
         * on with its old token, which must be rejected. */
        double ms = (double)sc->lease_ms * sc->stall_factor;
        double now_rel = qc_clock_ms() - sh->t0;
        record_fault(w, f, c, now_rel + ms);
        atomic_fetch_add(&sh->stalled, 1);
        qc_clock_sleep_until_stop(ms, &sh->stop);
        if (ensure_conn(w) == 0)
            stale_requests(w, c);
        atomic_fetch_sub(&sh->stalled, 1);
        return 0;
    }
    case QC_FAULT_STALL_UNTIL_RECLAIMED:
        stall_until_reclaimed(w, c, seen);
        return 0;
    case QC_FAULT_LOST_REQUEST:
        /* The connection dies just before complete is sent; the worker gives
         * the job up and the lease must run out for it to be recovered. */
        record_fault(w, f, c, 0);
        drop_conn(w, 1);
        return 0;
    case QC_FAULT_LOST_ACK:
        if (may_complete(w, c))
            complete_with_retry(w, c, 1);
        return 0;
    case QC_FAULT_RESET: {
        /* RST when the complete is sent: it never reaches the server; the
         * worker reconnects and retries.  The fault is recorded after the
         * complete's info and only when the proxy dropped the complete
         * itself (its first bytes on an established connection), so the
         * ledger says that this unknown outcome did not happen: the
         * checkers may judge the retry (check_leases.c, rule (b)). */
        if (!may_complete(w, c))
            return 0;
        qc_proxy_arm(sh->proxy, w->id, QC_PROXY_ARM_RESET);
        long rows = do_update(w, QC_STEP_COMPLETE, c, NULL, 0);
        if (qc_proxy_take_fired(sh->proxy, w->id, NULL, 0)) {
            qc_ev e_ev, *e = event(w, &e_ev, "fault", NULL, -1);
            qc_ev_str(e, "fault", (qc_fault_name(f)));
            set_job(e, c->job, c->token);
            qc_ev_str(e, "dropped", ("complete"));
            emit(w, e, c->job);
            atomic_fetch_add(&sh->faults, 1);
        } else {
            qc_ev e_ev, *e = event(w, &e_ev, "note", NULL, -1);
            set_job(e, c->job, c->token);
            qc_ev_str(e, "note", ("reset via the proxy did not fire: the "
                                                       "complete went through"));
            qc_ev_append(w->lb, e);
        }
        if (rows >= 0 || (w->conn && sh->drv->is_ok(w->conn)))
            return 0; /* answered, or a definite failure: no retry */
        if (ensure_conn(w) != 0)
            return 0;
        publish_pid(w);
        do_update(w, QC_STEP_COMPLETE, c, NULL, 0);
        return 0;
    }
    case QC_FAULT_LATE_RENEW: {
        /* A heartbeat thread whose timer fires as the handler returns (a
         * renew racing the complete, or sent just after it): one renew
         * with the job's token once its complete was acknowledged.  The
         * job is done: the protocol must change nothing; a renew that
         * matches by id and token alone revives it, its lease runs out and
         * it runs again (decision 1106). */
        if (!may_complete(w, c))
            return 0;
        long rows = complete_with_retry(w, c, 0);
        if (rows > 0 && sh->proto->steps[QC_STEP_RENEW].present) {
            record_fault(w, f, c, 0);
            do_update(w, QC_STEP_RENEW, c, NULL, 0);
        }
        return 0;
    }
    default:
        if (may_complete(w, c))
            complete_with_retry(w, c, 0);
        return 0;
    }
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
    w->planned_pause_ms = (double)(int64_t)(d * 100.0) / 100.0;
    qc_clock_sleep_until_stop(d, &w->sh->stop);
}

/* ---- LISTEN/NOTIFY wake-ups (issue 17, shared/cases.md C28) ----
 *
 * A protocol with a listen step gives each worker incarnation a second
 * connection of its own that ran the step (LISTEN channel).  After an
 * empty claim the worker waits on it for a notification, at most
 * [idle] listen_poll_ms (the fallback poll; 0 = until notified), instead
 * of the idle policy's pause.  Its listen connection's fate is in the
 * ledger as notes "listen" with state open / lost / closed / failed; the
 * claim after each wait says how the wait ended ("wake": notify, poll,
 * lost; "listen" right after a (re-)LISTEN, which claims at once since a
 * job enqueued before the LISTEN registered sends it nothing).  While it
 * has no listen connection the worker polls at the idle policy's rate and
 * tries a new LISTEN before each wait (on_listen_lost = fallback); the
 * policy mutant on_listen_lost = ignore keeps waiting on the dead one. */
static void listen_note(qc_worker *w, const char *state, const char *error)
{
    qc_ev e_ev, *e = event(w, &e_ev, "note", NULL, -1);
    qc_ev_str(e, "note", ("listen"));
    qc_ev_str(e, "state", (state));
    if (error != NULL && *error)
        qc_ev_str(e, "error", (error));
    qc_ev_append(w->lb, e);
}

static void listen_drop(qc_worker *w, const char *state, const char *error)
{
    qc_shared *sh = w->sh;
    if (w->lconn == NULL)
        return;
    if (sh->listen_pids != NULL && w->id >= 0)
        atomic_store(&sh->listen_pids[w->id], 0);
    sh->drv->abort(w->lconn);
    w->lconn = NULL;
    if (state != NULL)
        listen_note(w, state, error);
}

/* Opens the listen connection and runs the listen step on it.  Returns 0
 * when the LISTEN was answered (so it is registered: a notify committed
 * after this is delivered to it). */
static int listen_open(qc_worker *w)
{
    qc_shared *sh = w->sh;
    qc_err err = {0};
    qc_params p = {0};
    qc_result r = {0};
    actor_params ap;
    qc_conn *c = NULL;

    if (qc_open_conn(sh->drv, sh->dsn, sh->no_prepare, sh->stmt_timeout_ms, &c, &err) != 0) {
        listen_note(w, "failed", err.msg);
        return -1;
    }
    bind_actor(w, &ap, &p);
    if (qc_protocol_run(sh->drv, c, sh->proto, QC_STEP_LISTEN, &p, &r, &err) != 0) {
        qc_result_clear(&r);
        sh->drv->abort(c);
        if (is_protocol_error(&err)) {
            char msg[1200];
            snprintf(msg, sizeof msg, "%s: step 'listen' (line %d): %s",
                     sh->proto->steps[QC_STEP_LISTEN].file, sh->proto->steps[QC_STEP_LISTEN].line,
                     err.msg);
            qc_shared_fatal(sh, QC_EINVAL, msg);
        }
        listen_note(w, "failed", err.msg);
        return -1;
    }
    qc_result_clear(&r);
    w->lconn = c;
    w->listens++;
    w->listen_lost_seen = 0;
    int pid = sh->drv->backend_pid ? sh->drv->backend_pid(c) : 0;
    qc_ev e_ev, *e = event(w, &e_ev, "note", NULL, -1);
    qc_ev_str(e, "note", ("listen"));
    qc_ev_str(e, "state", ("open"));
    qc_ev_int(e, "pid", (pid));
    if (w->listens > 1)
        qc_ev_bool(e, "reopen", 1);
    qc_ev_append(w->lb, e);
    if (sh->listen_pids != NULL && w->id >= 0)
        atomic_store(&sh->listen_pids[w->id], pid);
    return 0;
}

/* The wait after an empty claim, in listen mode.  Sets w->wake for the
 * next claim's invoke. */
static void listen_wait(qc_worker *w)
{
    qc_shared *sh = w->sh;
    const qc_scenario *sc = sh->sc;

    if (w->lconn == NULL && (!sc->listen_lost_ignore || w->listens == 0)) {
        if (listen_open(w) == 0) {
            w->wake = "listen";
            w->wait_t = -1;
            w->wait_ms = -1;
            return; /* claim at once: nothing told us about jobs before the LISTEN */
        }
        idle_pause(w); /* no listen connection: poll at the idle policy's rate */
        return;
    }
    double start = qc_clock_ms();
    double T = sc->listen_poll_ms > 0 ? (double)sc->listen_poll_ms : -1;
    w->wait_t = start - sh->t0;
    w->wait_ms = T;
    w->wake = "poll";
    for (;;) {
        if (atomic_load(&sh->stop)) {
            /* the run ended during the wait: read what came in, then
             * record the wait (no claim follows to carry it) */
            int count = 0;
            qc_err err = {0};
            if (w->lconn != NULL && sh->drv->wait_notify(w->lconn, 0, &count, &err) == 0 &&
                count == 0) {
                qc_ev e_ev, *e = event(w, &e_ev, "note", NULL, -1);
                qc_ev_str(e, "note", ("listen wait"));
                qc_ev_str(e, "wake", ("stop"));
                qc_ev_real(e, "wait_t", ((double)(int64_t)(w->wait_t * 1000) / 1000.0));
                if (T >= 0)
                    qc_ev_real(e, "wait_ms", (T));
                qc_ev_append(w->lb, e);
            }
            w->wake = NULL;
            return;
        }
        if (sh->listen_close != NULL && w->id >= 0 &&
            atomic_exchange(&sh->listen_close[w->id], 0) == 1 && w->lconn != NULL) {
            /* the nemesis asked: qchaos drops the listen connection */
            qc_ev e_ev, *e = event(w, &e_ev, "fault", NULL, -1);
            qc_ev_str(e, "fault", (qc_fault_name(QC_FAULT_LISTEN_CLOSE)));
            emit(w, e, INT64_MIN);
            atomic_fetch_add(&sh->faults, 1);
            listen_drop(w, "closed", "listen_close: dropped by qchaos");
            w->wake = "lost";
            return;
        }
        double left = T < 0 ? 50.0 : T - (qc_clock_ms() - start);
        if (T >= 0 && left <= 0)
            return; /* the fallback timer ran out: "poll" */
        int count = 0;
        qc_err err = {0};
        int rc = w->lconn == NULL ? QC_ECONN
                                  : sh->drv->wait_notify(w->lconn, left < 50 ? (long)left + 1 : 50,
                                                         &count, &err);
        if (rc != 0) {
            w->wake = "lost";
            if (!sc->listen_lost_ignore) {
                listen_drop(w, "lost", err.msg);
            } else if (!w->listen_lost_seen) {
                /* the mutant: noted once, then it keeps waiting on it */
                w->listen_lost_seen = 1;
                listen_note(w, "lost", err.msg);
                if (sh->listen_pids != NULL && w->id >= 0)
                    atomic_store(&sh->listen_pids[w->id], 0);
            }
            return;
        }
        if (count > 0) {
            w->wake = "notify";
            return;
        }
    }
}

/* After an empty claim: the idle policy's pause, or with a listen step
 * the wait for a notification. */
static void idle_wait(qc_worker *w)
{
    qc_shared *sh = w->sh;
    if (!sh->proto->steps[QC_STEP_LISTEN].present || sh->drv->wait_notify == NULL) {
        idle_pause(w);
        return;
    }
    listen_wait(w);
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
    int rc0 = qc_open_conn(sh->drv, conn_dsn(w), sh->no_prepare, sh->stmt_timeout_ms, &w->conn,
                           &err);
    if (rc0 == 0 &&
        (rc0 = qc_witness_name_actor(sh->drv, w->conn, sc, sh->proto->engine, w->id, w->inc,
                                     &err)) != 0)
        sh->drv->close(w->conn);
    if (rc0 != 0) {
        w->conn = NULL;
        atomic_fetch_add(&sh->connect_failed, 1);
        if (sh->dsn_role != NULL)
            qc_err_prefix(&err, "%s cannot connect with %s", w->id < 0 ? "the reaper" : "a worker",
                          sh->dsn_role);
        qc_shared_fatal(sh, err.code == QC_EINVAL ? QC_EINVAL : QC_ECONN, err.msg);
        free(jobs);
        return NULL;
    }
    qc_seed_session(sh->drv, w->conn, sc->seed, w->id, w->inc * 1000L + w->reconnects++);
    qc_slot_publish(&w->slot, w->conn);
    atomic_fetch_add(&sh->connected, 1);
    publish_pid(w);
    qc_sched_begin(sh->sched, w->id);
    while (!atomic_load(&sh->stop)) {
        int had = w->conn != NULL;
        if (ensure_conn(w) != 0)
            break;
        if (!had)
            publish_pid(w);
        int n = do_claim(w, jobs, batch);
        if (n < 0) {
            qc_clock_sleep_until_stop(10, &sh->stop);
            continue;
        }
        if (n == 0) {
            idle_wait(w);
            continue;
        }
        w->idle_step = 0;
        for (int i = 0; i < n && !atomic_load(&sh->fatal); i++) {
            if (ensure_conn(w) != 0)
                break;
            if (process(w, &jobs[i]))
                break; /* died: the rest of the batch is abandoned */
        }
        if (w->stop_requested && !atomic_load(&sh->stop))
            graceful_restart(w); /* its jobs are done: the incarnation ends */
        w->stop_requested = 0;
    }
    free(jobs);
    return NULL;
}

/* The reaper: returns expired leases to ready on its own connection. */
static void *reaper_main(void *arg)
{
    qc_worker *w = arg;
    qc_shared *sh = w->sh;
    qc_sched_begin(sh->sched, w->id);
    while (!atomic_load(&sh->stop)) {
        if (qc_clock_sleep_until_stop((double)sh->sc->reaper_interval_ms, &sh->stop))
            break;
        int had = w->conn != NULL;
        if (ensure_conn(w) != 0)
            break;
        if (!had)
            publish_pid(w);
        qc_params p = {0};
        actor_params ap;
        bind_actor(w, &ap, &p);
        qc_result r = {0};
        int64_t req;
        /* [schedule] hold_reap_commit: the reap's one statement in a
         * transaction of the reaper's own, with a "reap.commit" point
         * before its COMMIT (sched.h qc_reap_commit_held, decision 1146) */
        int held = qc_reap_commit_held(sh->proto, sh->sc->hold_reap_commit);
        if (held && begin_txn(w) != 0)
            continue;
        if (request(w, QC_STEP_REAP, &p, INT64_MIN, NULL, &r, &req) != 0) {
            if (held && w->in_txn)
                rollback_open_txn(w);
            continue;
        }
        if (held && w->in_txn) {
            /* after the statement, before its COMMIT: the rows it took
             * back are locked and their new state not yet visible; an
             * empty pass holds nothing and passes no point */
            int64_t j0 = INT64_MIN;
            if (r.nrows > 0 && parse_i64(qc_result_get(&r, 0, "job_id"), &j0) != 0)
                j0 = INT64_MIN;
            w->cur_req = req;
            w->cur_job = j0;
            int crc = commit_open_txn(w, r.nrows > 0 ? "reap.commit" : NULL, "reap", req,
                                      INT64_MIN, NULL);
            w->cur_job = INT64_MIN;
            if (crc != 0) {
                qc_result_clear(&r);
                continue;
            }
        }
        int64_t job, first = INT64_MIN;
        for (int i = 0; i < r.nrows; i++) {
            qc_ev e_ev, *e = event(w, &e_ev, "ok", "reap", req);
            qc_ev_int(e, "rows", (r.nrows));
            if (parse_i64(qc_result_get(&r, i, "job_id"), &job) == 0) {
                set_job(e, job, qc_result_get(&r, i, "token"));
                if (i == 0)
                    first = job;
            }
            const char *st = qc_result_get(&r, i, "state");
            if (st)
                qc_ev_str(e, "state", (st));
            set_time(e, "now", qc_result_get(&r, i, "now_ms"));
            if (sh->sched != NULL)
                qc_sched_lease(sh->sched, INT64_MIN, -1,
                               parse_time(qc_result_get(&r, i, "now_ms")));
            qc_ev_append(w->lb, e);
        }
        if (r.nrows == 0) {
            qc_ev e_ev, *e = event(w, &e_ev, "ok", "reap", req);
            qc_ev_int(e, "rows", (r.affected > 0 ? r.affected : 0));
            emit(w, e, INT64_MIN);
        } else {
            qc_sched_point(sh->sched, w->id, "reap.after", first);
        }
        atomic_fetch_add(&sh->reaped, r.nrows);
        qc_result_clear(&r);
    }
    return NULL;
}

/* The thread body: the worker or reaper loop, then the exited flag the
 * main thread polls while it cancels statements. */
static void *thread_main(void *arg)
{
    qc_worker *w = arg;
    if (w->id < 0)
        reaper_main(w);
    else
        worker_main(w);
    qc_sched_exit(w->sh->sched, w->id);
    atomic_store(&w->exited, 1);
    return NULL;
}

int qc_worker_start(qc_worker *w, qc_shared *sh, int id)
{
    qc_slot_init(&w->slot);
    atomic_store(&w->exited, 0);
    w->id = id;
    w->sh = sh;
    w->conn = NULL;
    w->names_inc = 0; /* bind_actor makes the incarnation's text at its first bind */
    w->idle_step = 0;
    w->planned_pause_ms = -1;
    w->cur_req = -1;
    w->cur_job = INT64_MIN;
    w->lconn = NULL;
    w->listens = 0;
    w->listen_lost_seen = 0;
    w->stop_requested = 0;
    w->wake = NULL;
    w->wait_t = w->wait_ms = -1;
    qc_rng_init(&w->rng, sh->sc->seed, (uint64_t)(id + 2));
    w->lb = qc_ledger_buf(sh->ledger);
    if (!w->lb)
        return QC_ENOMEM;
    /* a small stack: 1,000 workers must not reserve 8 GB (usage.h) */
    pthread_attr_t attr;
    int rc = pthread_attr_init(&attr);
    if (rc == 0) {
        if ((rc = pthread_attr_setstacksize(&attr, QC_WORKER_STACK_BYTES)) == 0)
            rc = pthread_create(&w->thread, &attr, thread_main, w);
        pthread_attr_destroy(&attr);
    }
    if (rc != 0) {
        atomic_store(&w->exited, 1);
        return QC_EIO;
    }
    return 0;
}

void qc_worker_join(qc_worker *w)
{
    pthread_join(w->thread, NULL);
    drop_conn(w, 0);
    if (w->lconn != NULL)
        w->sh->drv->close(w->lconn);
    w->lconn = NULL;
    qc_slot_destroy(&w->slot);
}

void qc_worker_cancel(qc_worker *w)
{
    qc_slot_cancel(&w->slot, w->sh->drv);
}
