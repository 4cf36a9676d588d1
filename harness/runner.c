/*
 * runner.c - drives one scenario run (DESIGN.md "Phases of a run").
 *
 * The main thread owns the control connection: setup, enqueue, monitor
 * samples (which also decide when the queue has drained), the final
 * snapshot and teardown.  Workers and the reaper have their own connections.
 * The verdict is computed by reading the ledger back from disk (audit.c), so
 * `qchaos audit` on the same ledger gives the same verdict.
 */
#include "runner.h"
#include "audit.h"
#include "clock.h"
#include "worker.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t qc_interrupted = 0;

typedef struct ephemeral {
    char dir[256];
    char dsn[512];
    int running;
} ephemeral;

/* Starts scripts/pg-ephemeral.sh in a fresh temporary folder; the script's
 * last stdout line is the conninfo. */
static int ephemeral_start(ephemeral *e, qc_err *err)
{
    snprintf(e->dir, sizeof e->dir, "/tmp/qchaos-pg.XXXXXX");
    if (!mkdtemp(e->dir))
        return qc_err_set(err, QC_EIO, "cannot create a temporary folder: %s", strerror(errno));
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s/scripts/pg-ephemeral.sh' start '%s'", qc_datadir(), e->dir);
    fprintf(stderr, "qchaos: starting an ephemeral PostgreSQL in %s\n", e->dir);
    FILE *p = popen(cmd, "r");
    if (!p)
        return qc_err_set(err, QC_ECONN, "cannot run %s", cmd);
    char line[512];
    e->dsn[0] = 0;
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = 0;
        if (line[0])
            snprintf(e->dsn, sizeof e->dsn, "%s", line);
    }
    int st = pclose(p);
    if (st != 0 || !e->dsn[0])
        return qc_err_set(err, QC_ECONN,
                          "could not start the ephemeral PostgreSQL (%s); see %s/log", cmd, e->dir);
    e->running = 1;
    return 0;
}

static void ephemeral_stop(ephemeral *e)
{
    if (!e->running)
        return;
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s/scripts/pg-ephemeral.sh' destroy '%s' >/dev/null 2>&1",
             qc_datadir(), e->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "qchaos: could not stop the ephemeral PostgreSQL in %s\n", e->dir);
    e->running = 0;
}

static const qc_driver *driver_for(const char *engine)
{
    if (!strcmp(engine, "postgres") || !strcmp(engine, "spanner"))
        return &qc_driver_pg;
    return NULL;
}

static json_t *header_json(const qc_run_opts *o, const qc_protocol *proto, const char *server)
{
    const qc_scenario *s = &o->sc;
    json_t *h = json_object();
    json_object_set_new(h, "qchaos", json_string(QC_VERSION));
    json_object_set_new(h, "seed", json_integer((json_int_t)s->seed));
    json_object_set_new(h, "scenario", json_string(s->name));
    json_object_set_new(h, "scenario_file", json_string(s->path));
    json_object_set_new(h, "protocol", json_string(proto->path));
    json_object_set_new(h, "engine", json_string(proto->engine));
    json_object_set_new(h, "model", json_string(proto->model));
    json_object_set_new(h, "server", json_string(server));
    json_object_set_new(h, "workers", json_integer(s->workers));
    json_object_set_new(h, "jobs", json_integer(s->jobs));
    json_object_set_new(h, "batch", json_integer(s->batch));
    json_object_set_new(h, "lease_ms", json_integer(s->lease_ms));
    json_object_set_new(h, "max_attempts", json_integer(s->max_attempts));
    json_object_set_new(h, "reaper_interval_ms", json_integer(s->reaper_interval_ms));
    json_object_set_new(h, "recovery_slack_ms", json_integer(s->recovery_slack_ms));
    json_object_set_new(h, "idle_base_ms", json_integer(s->idle_base_ms));
    json_object_set_new(h, "idle_cap_ms", json_integer(s->idle_cap_ms));
    json_object_set_new(h, "idle_jitter", json_real(s->idle_jitter));
    json_object_set_new(h, "duration_s", json_real(s->duration_s));
    if (o->argv_line)
        json_object_set_new(h, "command", json_string(o->argv_line));
    return h;
}

/* Enqueues sc->jobs jobs on the control connection, in transactions of 500
 * when the enqueue step is one statement.  Ledger ok events are written only
 * after the commit that makes them real. */
static int enqueue_all(const qc_run_opts *o, const qc_driver *d, qc_conn *c,
                       const qc_protocol *proto, qc_lbuf *lb, qc_err *err)
{
    const qc_scenario *s = &o->sc;
    int wrap = proto->steps[QC_STEP_ENQUEUE].nstmts == 1;
    long chunk = 500;
    int64_t *ids = malloc(sizeof *ids * (size_t)chunk);
    char *payload = malloc((size_t)s->payload_bytes + 32);
    if (!ids || !payload) {
        free(ids);
        free(payload);
        return qc_err_set(err, QC_ENOMEM, "out of memory");
    }
    char max_att[24];
    snprintf(max_att, sizeof max_att, "%ld", s->max_attempts);
    int rc = 0;
    for (long done = 0; done < s->jobs && rc == 0;) {
        long n = s->jobs - done < chunk ? s->jobs - done : chunk;
        if (wrap && (rc = d->begin(c, err)) != 0)
            break;
        for (long i = 0; i < n; i++) {
            int len = snprintf(payload, 32, "job-%ld", done + i);
            while (len < s->payload_bytes)
                payload[len++] = 'x';
            payload[len] = 0;
            qc_params p = {0};
            qc_params_set(&p, "payload", payload);
            qc_params_set(&p, "group_key", NULL);
            qc_params_set(&p, "max_attempts", max_att);
            qc_params_set(&p, "delay_ms", "0");
            qc_result r = {0};
            rc = qc_protocol_run(d, c, proto, QC_STEP_ENQUEUE, &p, &r, err);
            const char *id = rc == 0 ? qc_result_get(&r, 0, "job_id") : NULL;
            if (rc == 0 && !id)
                rc = qc_err_set(err, QC_EINVAL, "%s: step 'enqueue' (line %d) returned no job_id",
                                proto->path, proto->steps[QC_STEP_ENQUEUE].line);
            if (rc == 0)
                ids[i] = strtoll(id, NULL, 10);
            qc_result_clear(&r);
            if (rc != 0)
                break;
        }
        if (rc == 0 && wrap)
            rc = d->commit(c, err);
        if (rc != 0)
            break;
        for (long i = 0; i < n; i++) {
            json_t *e = json_object();
            json_object_set_new(e, "type", json_string("ok"));
            json_object_set_new(e, "op", json_string("enqueue"));
            json_object_set_new(e, "worker", json_integer(-1));
            json_object_set_new(e, "job", json_integer(ids[i]));
            qc_ledger_append(lb, e);
        }
        done += n;
    }
    free(ids);
    free(payload);
    return rc;
}

typedef struct monitor_sample {
    long ready, inflight, expired, dead, done;
    int ok;
} monitor_sample;

static void sample_monitor(const qc_driver *d, qc_conn *c, const qc_protocol *proto, qc_lbuf *lb,
                           monitor_sample *m)
{
    m->ok = 0;
    qc_step_id step = proto->steps[QC_STEP_MONITOR].present ? QC_STEP_MONITOR : QC_STEP_SNAPSHOT;
    qc_params p = {0};
    qc_result r = {0};
    qc_err err = {0};
    if (qc_protocol_run(d, c, proto, step, &p, &r, &err) != 0)
        return;
    if (step == QC_STEP_MONITOR) {
        static const char *const keys[] = {"ready", "inflight", "expired", "dead", "done",
                                           "oldest_ready_age_ms"};
        long *dst[] = {&m->ready, &m->inflight, &m->expired, &m->dead, &m->done, NULL};
        json_t *e = json_object();
        json_object_set_new(e, "type", json_string("monitor"));
        for (int i = 0; i < 6; i++) {
            const char *v = qc_result_get(&r, 0, keys[i]);
            long x = v ? strtol(v, NULL, 10) : -1;
            if (dst[i])
                *dst[i] = x;
            if (v)
                json_object_set_new(e, keys[i], json_integer(x));
        }
        qc_ledger_append(lb, e);
    } else {
        memset(m, 0, sizeof *m);
        for (int i = 0; i < r.nrows; i++) {
            const char *st = qc_result_get(&r, i, "state");
            if (!st)
                continue;
            if (!strcmp(st, "ready"))
                m->ready++;
            else if (!strcmp(st, "inflight"))
                m->inflight++;
            else if (!strcmp(st, "dead"))
                m->dead++;
            else if (!strcmp(st, "done"))
                m->done++;
        }
    }
    m->ok = 1;
    qc_result_clear(&r);
}

static int write_snapshot(const qc_driver *d, qc_conn *c, const qc_protocol *proto, qc_lbuf *lb,
                          long *rows, qc_err *err)
{
    qc_params p = {0};
    qc_result r = {0};
    int rc = qc_protocol_run(d, c, proto, QC_STEP_SNAPSHOT, &p, &r, err);
    if (rc != 0)
        return rc;
    for (int i = 0; i < r.nrows; i++) {
        const char *id = qc_result_get(&r, i, "job_id");
        if (!id)
            continue;
        json_t *e = json_object();
        json_object_set_new(e, "type", json_string("snapshot"));
        json_object_set_new(e, "job", json_integer(strtoll(id, NULL, 10)));
        const char *st = qc_result_get(&r, i, "state");
        json_object_set_new(e, "state", st ? json_string(st) : json_null());
        const char *att = qc_result_get(&r, i, "attempt");
        if (att)
            json_object_set_new(e, "attempt", json_integer(strtol(att, NULL, 10)));
        const char *tok = qc_result_get(&r, i, "token");
        if (tok)
            json_object_set_new(e, "token", json_string(tok));
        const char *er = qc_result_get(&r, i, "error");
        if (er)
            json_object_set_new(e, "error", json_string(er));
        qc_ledger_append(lb, e);
    }
    *rows = r.nrows;
    qc_result_clear(&r);
    return 0;
}

static void progress(const qc_shared *sh, double elapsed_s, long total, double *last_claims_t,
                     long *last_claims, int final)
{
    long claims = atomic_load(&sh->claims);
    double dt = elapsed_s - *last_claims_t;
    double rate = dt > 0 ? (double)(claims - *last_claims) / dt : 0;
    *last_claims = claims;
    *last_claims_t = elapsed_s;
    long delivered, applied;
    qc_sink_counts(sh->sink, &delivered, &applied);
    fprintf(stderr,
            "\r[%6.1fs] done %ld/%ld  claims/s %.0f  empty %ld  errors %ld  faults %ld  "
            "repeated effects %ld ",
            elapsed_s, atomic_load(&sh->completes_ok), total, rate,
            atomic_load(&sh->empty_claims), atomic_load(&sh->errors), atomic_load(&sh->faults),
            delivered - applied);
    if (final)
        fputc('\n', stderr);
}

int qc_run(const qc_run_opts *o, qc_err *err)
{
    const qc_scenario *s = &o->sc;
    int code = 3;
    qc_protocol *proto = NULL;
    ephemeral eph = {0};
    qc_conn *ctl = NULL;
    qc_ledger *ledger = NULL;
    qc_sink *sink = NULL;
    qc_worker *workers = NULL;
    qc_worker reaper;
    int nstarted = 0, reaper_started = 0;
    qc_shared sh;
    memset(&sh, 0, sizeof sh);
    pthread_mutex_init(&sh.fatal_mu, NULL);
    char ledger_path[1100];
    char server[128] = "unknown";
    double t0 = qc_clock_ms();
    const qc_driver *d = NULL;

    /* Input first: nothing connects before the files are known good. */
    qc_protocol *probe = NULL;
    int rc = qc_protocol_load(s->protocol, QC_PARAM_DOLLAR, &probe, err);
    if (rc != 0) {
        code = rc == QC_EINVAL ? 2 : 3;
        goto out;
    }
    d = driver_for(probe->engine);
    if (!d) {
        qc_err_set(err, QC_EINVAL,
                   "%s: engine '%s' needs the ODBC driver, which this build does not have yet",
                   s->protocol, probe->engine);
        qc_protocol_destroy(probe);
        code = 2;
        goto out;
    }
    if (d->style == QC_PARAM_DOLLAR) {
        proto = probe;
    } else {
        qc_protocol_destroy(probe);
        if ((rc = qc_protocol_load(s->protocol, d->style, &proto, err)) != 0) {
            code = rc == QC_EINVAL ? 2 : 3;
            goto out;
        }
    }
    if ((rc = qc_mkdirs(o->out_dir, err)) != 0) {
        code = 2;
        goto out;
    }

    const char *dsn = o->dsn;
    if (!dsn) {
        if (ephemeral_start(&eph, err) != 0)
            goto out;
        dsn = eph.dsn;
    }
    if (d->open(dsn, &ctl, err) != 0)
        goto out;
    d->server_version(ctl, server, sizeof server);

    /* Setup: teardown first (a previous run may have been killed). */
    {
        qc_params p = {0};
        qc_result r = {0};
        qc_err ignore = {0};
        qc_protocol_run(d, ctl, proto, QC_STEP_TEARDOWN, &p, &r, &ignore);
        qc_result_clear(&r);
        if ((rc = qc_protocol_run(d, ctl, proto, QC_STEP_SETUP, &p, &r, err)) != 0) {
            qc_err_prefix(err, "%s: setup (line %d) failed", proto->path,
                          proto->steps[QC_STEP_SETUP].line);
            code = (rc == QC_EDB && !strncmp(err->sqlstate, "42", 2)) ? 2 : 3;
            goto out;
        }
        qc_result_clear(&r);
    }

    snprintf(ledger_path, sizeof ledger_path, "%s/ledger.jsonl", o->out_dir);
    json_t *hdr = header_json(o, proto, server);
    rc = qc_ledger_open(ledger_path, hdr, t0, &ledger, err);
    json_decref(hdr);
    if (rc != 0)
        goto out;
    qc_lbuf *lb = qc_ledger_buf(ledger);

    fprintf(stderr, "qchaos: seed %" PRIu64 ", scenario %s, protocol %s, %ld workers, %ld jobs\n",
            s->seed, s->name, proto->path, s->workers, s->jobs);
    if ((rc = enqueue_all(o, d, ctl, proto, lb, err)) != 0) {
        code = rc == QC_EINVAL ? 2 : 3;
        goto out;
    }

    sink = qc_sink_create(1);
    workers = calloc((size_t)s->workers, sizeof *workers);
    if (!sink || !workers) {
        qc_err_set(err, QC_ENOMEM, "out of memory");
        goto out;
    }
    sh.sc = s;
    sh.drv = d;
    sh.proto = proto;
    sh.dsn = dsn;
    sh.ledger = ledger;
    sh.sink = sink;
    for (long i = 0; i < s->workers; i++) {
        if (qc_worker_start(&workers[i], &sh, (int)i) != 0) {
            qc_shared_fatal(&sh, QC_EIO, "cannot start worker threads");
            break;
        }
        nstarted++;
    }
    if (proto->steps[QC_STEP_REAP].present && !atomic_load(&sh.fatal)) {
        if (qc_worker_start(&reaper, &sh, -1) == 0)
            reaper_started = 1;
    }

    /* Chaos, then drain: sample the monitor until the queue is empty or the
     * drain timeout passes. */
    double start = qc_clock_ms();
    double last_progress = start, last_claims_t = 0;
    long last_claims = 0;
    int drained = 0, timed_out = 0;
    monitor_sample m = {0};
    while (!atomic_load(&sh.stop)) {
        qc_clock_sleep_ms((double)s->monitor_interval_ms);
        double now = qc_clock_ms();
        double el = (now - start) / 1000.0;
        if (qc_interrupted)
            break;
        sample_monitor(d, ctl, proto, lb, &m);
        if (!d->is_ok(ctl)) {
            d->close(ctl);
            ctl = NULL;
            qc_err e2 = {0};
            if (d->open(dsn, &ctl, &e2) != 0)
                ctl = NULL;
            if (!ctl)
                break;
        }
        int chaos_over = s->duration_s <= 0 || el >= s->duration_s;
        if (chaos_over && m.ok && m.ready == 0 && m.inflight == 0 &&
            atomic_load(&sh.connected) == nstarted) {
            drained = 1;
            break;
        }
        if (chaos_over && el >= s->duration_s + s->drain_timeout_s) {
            timed_out = 1;
            break;
        }
        if (o->progress && now - last_progress >= 1000) {
            progress(&sh, el, s->jobs, &last_claims_t, &last_claims, 0);
            last_progress = now;
        }
    }
    atomic_store(&sh.stop, 1);
    for (int i = 0; i < nstarted; i++)
        qc_worker_join(&workers[i]);
    if (reaper_started)
        qc_worker_join(&reaper);
    double elapsed = (qc_clock_ms() - start) / 1000.0;
    if (o->progress)
        progress(&sh, elapsed, s->jobs, &last_claims_t, &last_claims, 1);

    if (atomic_load(&sh.fatal)) {
        code = sh.fatal_code == QC_EINVAL ? 2 : 3;
        qc_err_set(err, sh.fatal_code, "%s", sh.fatal_msg);
        /* keep the ledger: what was recorded is not lost */
        qc_ledger_close(ledger, NULL);
        ledger = NULL;
        goto out;
    }

    long snap_rows = 0;
    if (!ctl || write_snapshot(d, ctl, proto, lb, &snap_rows, err) != 0) {
        qc_err_prefix(err, "final snapshot");
        qc_ledger_close(ledger, NULL);
        ledger = NULL;
        goto out;
    }
    {
        json_t *e = json_object();
        json_object_set_new(e, "type", json_string("end"));
        json_object_set_new(e, "drained", json_boolean(drained));
        json_object_set_new(e, "timed_out", json_boolean(timed_out));
        json_object_set_new(e, "interrupted", json_boolean(qc_interrupted != 0));
        json_object_set_new(e, "elapsed_s", json_real(elapsed));
        qc_ledger_append(lb, e);
    }
    if ((rc = qc_ledger_close(ledger, err)) != 0) {
        ledger = NULL;
        goto out;
    }
    ledger = NULL;
    if (!o->keep) {
        qc_params p = {0};
        qc_result r = {0};
        qc_err ignore = {0};
        qc_protocol_run(d, ctl, proto, QC_STEP_TEARDOWN, &p, &r, &ignore);
        qc_result_clear(&r);
    }
    d->close(ctl);
    ctl = NULL;
    ephemeral_stop(&eph);

    json_t *metrics = json_object();
    json_object_set_new(metrics, "scenario", json_string(s->name));
    json_object_set_new(metrics, "scenario_file", json_string(s->path));
    json_object_set_new(metrics, "protocol", json_string(proto->path));
    json_object_set_new(metrics, "engine", json_string(proto->engine));
    json_t *ver = json_object();
    json_object_set_new(ver, "qchaos", json_string(QC_VERSION));
    json_object_set_new(ver, "server", json_string(server));
    json_object_set_new(metrics, "versions", ver);
    json_t *mm = json_object();
    json_object_set_new(mm, "elapsed_s", json_real(elapsed));
    json_object_set_new(mm, "workers", json_integer(s->workers));
    json_object_set_new(mm, "jobs", json_integer(s->jobs));
    json_object_set_new(mm, "claims", json_integer(atomic_load(&sh.claims)));
    json_object_set_new(mm, "empty_claims", json_integer(atomic_load(&sh.empty_claims)));
    json_object_set_new(mm, "completes_ok", json_integer(atomic_load(&sh.completes_ok)));
    json_object_set_new(mm, "completes_zero_rows", json_integer(atomic_load(&sh.completes_zero)));
    json_object_set_new(mm, "errors", json_integer(atomic_load(&sh.errors)));
    json_object_set_new(mm, "reaped", json_integer(atomic_load(&sh.reaped)));
    json_object_set_new(mm, "drained", json_boolean(drained));
    json_object_set_new(mm, "jobs_per_s",
                        json_real(elapsed > 0 ? (double)atomic_load(&sh.completes_ok) / elapsed : 0));
    json_object_set_new(metrics, "metrics", mm);
    if (o->argv_line)
        json_object_set_new(metrics, "command", json_string(o->argv_line));

    const char *paths[1] = {ledger_path};
    code = qc_audit(paths, 1, o->out_dir, metrics, stdout, err);
    json_decref(metrics);
    printf("qchaos: seed %" PRIu64 ", %ld jobs, %ld workers, %.1f s, %.0f jobs/s%s\n", s->seed,
           s->jobs, s->workers, elapsed,
           elapsed > 0 ? (double)atomic_load(&sh.completes_ok) / elapsed : 0.0,
           drained ? "" : (timed_out ? ", DRAIN TIMED OUT" : ", interrupted"));
    printf("qchaos: results in %s/ (ledger.jsonl, results.json)\n", o->out_dir);
    if (code == 1 && o->argv_line)
        printf("qchaos: repeat with: %s\n", o->argv_line);

out:
    if (workers && atomic_load(&sh.stop) == 0) {
        atomic_store(&sh.stop, 1);
        for (int i = 0; i < nstarted; i++)
            qc_worker_join(&workers[i]);
        if (reaper_started)
            qc_worker_join(&reaper);
    }
    if (ledger)
        qc_ledger_close(ledger, NULL);
    if (ctl)
        d->close(ctl);
    ephemeral_stop(&eph);
    free(workers);
    qc_sink_destroy(sink);
    qc_protocol_destroy(proto);
    pthread_mutex_destroy(&sh.fatal_mu);
    return code;
}
