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
#include "sessions.h"
#include "shard.h"
#include "sched.h"
#include "actor.h"
#include "adapter.h"
#include "audit.h"
#include "clock.h"
#include "lint.h"
#include "nemesis.h"
#include "topology.h"
#include "usage.h"
#include "owner.h"
#include "figures.h"
#include "progress.h"
#include "target.h"
#include "witness.h"
#include "../reports/report.h"
#include "worker.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t qc_interrupted = 0;

typedef struct ephemeral {
    char dir[256];
    char dsn[512];
    char script[64]; /* pg-ephemeral.sh or mariadb-ephemeral.sh */
    int running;
    pid_t watchdog;  /* destroys the server if this process dies (kill -9) */
} ephemeral;

/* A child that outlives a killed harness: when its parent is gone (it is
 * reparented), it destroys the ephemeral server so nothing is left running.
 * Started before any thread exists; stopped with SIGKILL on a normal end. */
static pid_t start_watchdog(const ephemeral *e)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s/scripts/%s' destroy '%s' >/dev/null 2>&1", qc_datadir(),
             e->script, e->dir);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0)
        return pid > 0 ? pid : 0;
    setsid();
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    while (getppid() == parent)
        sleep(1);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
}

/* Starts the engine's ephemeral server script (scripts/pg-ephemeral.sh or
 * scripts/mariadb-ephemeral.sh) in a fresh temporary folder; the script's
 * last stdout line is the connection string. */
static int ephemeral_start(ephemeral *e, const char *engine, const qc_scenario *s, qc_err *err)
{
    int maria = !strcmp(engine, "mariadb");
    if (strcmp(engine, "postgres") && !maria)
        return qc_err_set(err, QC_EINVAL,
                          "no ephemeral server for engine '%s': give the database with --dsn",
                          engine);
    if (s->replicated && maria)
        return qc_err_set(err, QC_EINVAL,
                          "%s: [topology] kind = replicated is a PostgreSQL topology, not MariaDB",
                          s->path);
    snprintf(e->script, sizeof e->script, "%s",
             maria ? "mariadb-ephemeral.sh"
             : s->replicated ? "pg-replicated.sh"
                             : "pg-ephemeral.sh");
    snprintf(e->dir, sizeof e->dir, maria ? "/tmp/qchaos-mdb.XXXXXX" : "/tmp/qchaos-pg.XXXXXX");
    if (!mkdtemp(e->dir))
        return qc_err_set(err, QC_EIO, "cannot create a temporary folder: %s", strerror(errno));
    chmod(e->dir, 0755);
    /* From here on the folder is ours to destroy, whatever happens: a
     * SIGINT or a kill -9 that lands while the script is still starting
     * the server must not leave a postmaster behind. */
    e->running = 1;
    e->watchdog = start_watchdog(e);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s/scripts/%s' start '%s'%s", qc_datadir(), e->script, e->dir,
             s->replicated && s->replication_sync ? " --sync" : "");
    fprintf(stderr, "qchaos: starting an ephemeral %s in %s\n",
            maria           ? "MariaDB"
            : s->replicated ? (s->replication_sync
                                   ? "PostgreSQL primary and synchronous streaming replica"
                                   : "PostgreSQL primary and asynchronous streaming replica")
                            : "PostgreSQL",
            e->dir);
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
    if ((st != 0 || !e->dsn[0]) && qc_interrupted)
        return qc_err_set(err, QC_ECONN, "interrupted while the ephemeral server was starting");
    if (st != 0 || !e->dsn[0]) {
        /* The folder is destroyed on the way out: show its log now. */
        char tail[2400];
        fprintf(stderr, "qchaos: the last lines of the server log (%s/log):\n", e->dir);
        snprintf(tail, sizeof tail, "tail -n 20 '%s/log' >&2", e->dir);
        if (system(tail) != 0)
            fprintf(stderr, "qchaos: (no server log)\n");
        return qc_err_set(err, QC_ECONN, "could not start the ephemeral server (%s)", cmd);
    }
    return 0;
}

static void ephemeral_stop(ephemeral *e)
{
    if (e->watchdog > 0) {
        kill(e->watchdog, SIGKILL);
        waitpid(e->watchdog, NULL, 0);
        e->watchdog = 0;
    }
    if (!e->running)
        return;
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s/scripts/%s' destroy '%s' >/dev/null 2>&1", qc_datadir(),
             e->script, e->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "qchaos: could not stop the ephemeral server in %s\n", e->dir);
    e->running = 0;
}

static const qc_driver *driver_for(const char *engine)
{
    if (!strcmp(engine, "postgres") || !strcmp(engine, "spanner"))
        return &qc_driver_pg; /* Spanner through PGAdapter speaks the PostgreSQL protocol */
    if (!strcmp(engine, "mariadb") || !strcmp(engine, "sqlserver"))
        return &qc_driver_odbc;
    return NULL;
}

static json_t *header_json(const qc_run_opts *o, const qc_protocol *proto, const char *server,
                           json_t *target)
{
    const qc_scenario *s = &o->sc;
    json_t *h = json_object();
    json_object_set_new(h, "qchaos", json_string(QC_VERSION));
    json_object_set_new(h, "seed", json_integer((json_int_t)s->seed));
    json_object_set_new(h, "scenario", json_string(s->name));
    json_object_set_new(h, "scenario_file", json_string(s->path));
    json_object_set_new(h, "protocol", json_string(proto->path));
    json_object_set_new(h, "engine", json_string(proto->engine));
    if (o->shard_count > 1) {
        json_t *sj = json_object();
        json_object_set_new(sj, "index", json_integer(o->shard_index));
        json_object_set_new(sj, "count", json_integer(o->shard_count));
        json_object_set_new(h, "shard", sj);
    }
    /* an adapter's library is judged as a lease queue (docs/adapters.md) */
    json_object_set_new(h, "model", json_string(strcmp(proto->model, "adapter") ? proto->model
                                                                                 : "lease"));
    if (proto->tested != NULL)
        json_object_set_new(h, "tested_where", json_string(proto->tested));
    json_object_set_new(h, "columns", qc_lint_columns_json(proto));
    json_object_set_new(h, "server", json_string(server));
    if (target)
        json_object_set(h, "target", target);
    json_object_set_new(h, "workers", json_integer(s->workers));
    json_object_set_new(h, "jobs", json_integer(s->jobs));
    if (s->copies > 1 || s->copies_rate > 0) {
        /* "jobs" counts messages then; each went out in its copies (C23) */
        json_object_set_new(h, "copies", json_integer(s->copies));
        json_object_set_new(h, "copies_rate", json_real(s->copies_rate));
    }
    json_object_set_new(h, "batch", json_integer(s->batch));
    json_object_set_new(h, "lease_ms", json_integer(s->lease_ms));
    json_object_set_new(h, "claim_reads_lease_ms",
                        json_boolean(proto->steps[QC_STEP_CLAIM].present &&
                                     qc_protocol_reads(proto, QC_STEP_CLAIM, "lease_ms")));
    json_object_set_new(h, "renew_reads_lease_ms",
                        json_boolean(proto->steps[QC_STEP_RENEW].present &&
                                     qc_protocol_reads(proto, QC_STEP_RENEW, "lease_ms")));
    json_object_set_new(h, "fail_reads_delay_ms",
                        json_boolean(proto->steps[QC_STEP_FAIL].present &&
                                     qc_protocol_reads(proto, QC_STEP_FAIL, "delay_ms")));
    json_object_set_new(h, "max_attempts", json_integer(s->max_attempts));
    json_object_set_new(h, "reaper_interval_ms", json_integer(s->reaper_interval_ms));
    json_object_set_new(h, "statement_timeout_ms",
                        json_integer(qc_scenario_statement_timeout_ms(s)));
    json_object_set_new(h, "recovery_slack_ms", json_integer(s->recovery_slack_ms));
    json_object_set_new(h, "idle_base_ms", json_integer(s->idle_base_ms));
    json_object_set_new(h, "idle_cap_ms", json_integer(s->idle_cap_ms));
    json_object_set_new(h, "idle_jitter", json_real(s->idle_jitter));
    json_object_set_new(h, "duration_s", json_real(s->duration_s));
    if (o->replay != NULL)
        json_object_set_new(h, "replay_of", json_string(o->replay));
    if (s->nsteps > 0 || s->explore_pct || o->replay != NULL) {
        json_object_set_new(h, "schedule",
                            json_string(o->replay ? "replay" : s->nsteps > 0 ? "script" : "pct"));
        if (s->explore_pct)
            json_object_set_new(h, "pct_depth", json_integer(s->pct_depth));
    }
    /* The idle bounds: given in [bounds], or derived from the declared
     * policy (twice the steady rate at the cap, the cap with jitter plus
     * 100 ms of scheduling slack). */
    double cap_lo = (double)s->idle_cap_ms * (1.0 - s->idle_jitter);
    double rate = s->max_idle_polls_per_s > 0 ? s->max_idle_polls_per_s
                  : cap_lo > 0                 ? 2.0 * 1000.0 / cap_lo
                                               : 1000.0;
    long pause = s->max_idle_pause_ms > 0
                     ? s->max_idle_pause_ms
                     : (long)((double)s->idle_cap_ms * (1.0 + s->idle_jitter)) + 200;
    long pickup = s->max_pickup_ms > 0 ? s->max_pickup_ms : pause + 100;
    if (proto->steps[QC_STEP_LISTEN].present) {
        /* LISTEN workers (issue 17): C28's "poll interval + 1 s" when the
         * scenario gives no bound, and the listen policy for the reader */
        if (s->max_pickup_ms <= 0 && s->listen_poll_ms > 0 && s->listen_poll_ms + 1000 > pickup)
            pickup = s->listen_poll_ms + 1000;
        json_object_set_new(h, "listen_poll_ms", json_integer(s->listen_poll_ms));
        json_object_set_new(h, "on_listen_lost",
                            json_string(s->listen_lost_ignore ? "ignore" : "fallback"));
    }
    json_object_set_new(h, "max_idle_polls_per_s", json_real(rate));
    json_object_set_new(h, "max_idle_pause_ms", json_integer(pause));
    json_object_set_new(h, "max_pickup_ms", json_integer(pickup));
    json_object_set_new(h, "max_wedged_ms", json_integer(qc_scenario_max_wedged_ms(s)));
    if (s->nclock_skew > 0) { /* each worker's client clock offset (ms), by worker id */
        json_t *sk = json_array();
        for (long i = 0; i < s->workers; i++)
            json_array_append_new(sk, json_integer(qc_scenario_clock_skew_ms(s, (int)i)));
        json_object_set_new(h, "clock_skew_ms", sk);
    }
    if (s->reaper_skew_ms != 0)
        json_object_set_new(h, "reaper_skew_ms", json_integer(s->reaper_skew_ms));
    if (s->session_time_zone[0] != '\0') /* every connection's session time zone */
        json_object_set_new(h, "session_time_zone",
                            json_string(qc_driver_session_time_zone()[0]
                                            ? qc_driver_session_time_zone()
                                            : "not set: the engine has no session time zone"));
    json_object_set_new(h, "poison_mode", json_string(s->poison_crash ? "crash" : "fail"));
    json_object_set_new(h, "sink", json_string(s->sink_idempotent ? "idempotent" : "plain"));
    json_object_set_new(h, "heartbeat", json_boolean(s->heartbeat));
    /* what a graceful stop does to the heartbeat (effects_once's excuse) */
    json_object_set_new(h, "stop_heartbeat_first", json_boolean(s->stop_heartbeat_first));
    {
        /* the workers' own lease clock (own_lease, check_runs.c): an
         * adapter's library and the transaction model keep none of qchaos's */
        static const char *const dl[] = {"sent", "answer", "none"};
        int k = s->lease_deadline >= 0 && s->lease_deadline <= 2 ? s->lease_deadline : 2;
        if (s->adapter_command[0] || !strcmp(proto->model, "transaction"))
            k = QC_LEASE_DEADLINE_NONE;
        json_object_set_new(h, "lease_deadline", json_string(dl[k]));
    }
    json_object_set_new(h, "pooler", json_string(s->pooler));
    if (strcmp(s->pooler, "none"))
        json_object_set_new(h, "pool_size", json_integer(s->pool_size));
    json_t *faults = json_object();
    for (int k = 1; k < QC_FAULT_COUNT; k++) {
        const qc_fault_spec *f = &s->faults[k];
        if (f->count > 0)
            json_object_set_new(faults, qc_fault_name((qc_fault_kind)k), json_integer(f->count));
        else if (f->count < 0 && f->rate > 0)
            json_object_set_new(faults, qc_fault_name((qc_fault_kind)k), json_real(f->rate));
    }
    json_object_set_new(h, "faults", faults);
    /* What was tested, for the reports (issue 15): the scenario's own words,
     * the protocol's header, and the values the fault plan and the nemesis
     * ran with.  Only reports/ reads these keys. */
    json_t *tested = json_object();
    json_object_set_new(tested, "description", json_string(s->description));
    if (proto->description != NULL)
        json_object_set_new(tested, "protocol_description", json_string(proto->description));
    if (proto->expect != NULL)
        json_object_set_new(tested, "protocol_expect", json_string(proto->expect));
    if (proto->base != NULL)
        json_object_set_new(tested, "protocol_base", json_string(proto->base));
    json_object_set_new(tested, "groups", json_integer(s->groups));
    json_object_set_new(tested, "work_ms_min", json_integer(s->work_ms_min));
    json_object_set_new(tested, "work_ms_max", json_integer(s->work_ms_max));
    json_object_set_new(tested, "retry_delay_ms", json_integer(s->retry_delay_ms));
    json_object_set_new(tested, "drain_timeout_s", json_real(s->drain_timeout_s));
    json_object_set_new(tested, "stall_factor", json_real(s->stall_factor));
    json_object_set_new(tested, "restart_delay_ms", json_integer(s->restart_delay_ms));
    json_object_set_new(tested, "terminate_every_ms", json_integer(s->terminate_every_ms));
    json_object_set_new(tested, "restart_at_s", json_real(s->restart_at_s));
    json_object_set_new(tested, "pause_at_s", json_real(s->pause_at_s));
    json_object_set_new(tested, "pause_ms", json_integer(s->pause_at_s > 0 ? s->pause_ms : 0));
    json_object_set_new(tested, "feed_bursts", json_integer(s->feed_bursts));
    json_object_set_new(tested, "feed_jobs", json_integer(s->feed_jobs));
    json_object_set_new(h, "tested", tested);
    json_t *judge = json_array();
    if (s->checkers[0]) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", s->checkers);
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
            json_array_append_new(judge, json_string(t));
    }
    json_object_set_new(h, "checkers", judge);
    if (o->argv_line)
        json_object_set_new(h, "command", json_string(o->argv_line));
    return h;
}

/* The notify step of a job (issue 17), after its enqueue: in the enqueue's
 * transaction (so it is delivered at the commit), not at all (the job's
 * notify_lost fault), or on a connection of its own before the enqueue
 * commits (notify_early: a notification for a job not yet visible).
 * *early is that connection, opened on first use from dsn (the caller
 * closes it).  Sets *sent_t (ms since t0, just before the notify was sent;
 * -1 not sent).  Errors: the protocol's. */
static int notify_job(const qc_scenario *s, const qc_driver *d, qc_conn *c,
                      const qc_protocol *proto, const char *dsn, qc_conn **early,
                      qc_fault_kind kind, int64_t job, double t0, double *sent_t, qc_err *err)
{
    char jid[24];
    qc_params p = {0};
    qc_result r = {0};
    int rc;

    *sent_t = -1;
    if (kind == QC_FAULT_NOTIFY_LOST)
        return 0;
    if (kind == QC_FAULT_NOTIFY_EARLY) {
        if (*early == NULL && (dsn == NULL || qc_open_conn(d, dsn, 0, 0, early, err) != 0)) {
            *early = NULL;
            return dsn == NULL ? qc_err_set(err, QC_EINVAL, "notify_early: no connection")
                               : QC_ECONN;
        }
        c = *early;
    }
    snprintf(jid, sizeof jid, "%lld", (long long)job);
    qc_params_set(&p, "job_id", jid);
    qc_params_set(&p, "worker", "w-1.0");
    qc_params_set(&p, "worker_id", "-1");
    qc_params_set(&p, "incarnation", "0");
    (void)s;
    *sent_t = qc_clock_ms() - t0;
    rc = qc_protocol_run(d, c, proto, QC_STEP_NOTIFY, &p, &r, err);
    qc_result_clear(&r);
    return rc;
}

/* Physical copies of one message (shared/cases.md C23): the logical
 * message number msg of shard (0 unsharded) is enqueued in copies jobs,
 * one more when the seeded draw falls under copies_rate, and its message
 * id, a version-4-shaped UUID drawn from (seed, shard, msg), is written
 * into id (37 bytes).  A pure function of its arguments, so a replay of
 * the seed enqueues the same messages.  Returns the number of copies. */
static int message_copies(const qc_scenario *s, int shard, long msg, char id[37])
{
    qc_rng r;
    qc_rng_init(&r, s->seed, 0xc23c0b1e5ull ^ ((uint64_t)(shard + 1) << 44) ^ (uint64_t)msg);
    uint64_t a = qc_rng_next(&r), b = qc_rng_next(&r);
    /* "%08x-%04x-4%03x-%04x-%012llx" of (a >> 32, a >> 16, a, 0x8000 | b >> 48,
     * b), by hand: one enqueue a job (issue 16) */
    static const char hex[] = "0123456789abcdef";
    const struct {
        uint64_t v;
        int digits;
    } part[5] = {{a >> 32, 8}, {(a >> 16) & 0xffffu, 4}, {0x4000u | (a & 0xfffu), 4},
                 {0x8000u | ((b >> 48) & 0x3fffu), 4}, {b & 0xffffffffffffull, 12}};
    char *o = id;
    for (int k = 0; k < 5; k++) {
        if (k > 0)
            *o++ = '-';
        for (int d = part[k].digits - 1; d >= 0; d--)
            *o++ = hex[(part[k].v >> (4 * d)) & 15u];
    }
    *o = '\0';
    int n = (int)s->copies;
    if (s->copies_rate > 0 && qc_rng_unit(&r) < s->copies_rate)
        n++;
    return n;
}

/* 1 when the run enqueues copies of its messages: the enqueue events then
 * carry "message" and "copy" (message_once, check_message.c, reads them). */
static int copies_on(const qc_scenario *s)
{
    return s->copies > 1 || s->copies_rate > 0;
}

/* Which message (and which copy of it) each row of an enqueue goes out
 * as: messages first_index + 0 .. count - 1 of shard, each in its copies,
 * adjacent (so that two workers claim a message's copies at about the
 * same time, as C23's broker redelivers them). */
typedef struct enqueue_cursor {
    const qc_scenario *s;
    int shard;
    long msg, end; /* the next message, one past the last */
    int copy, ncopies;
    char id[37];   /* the current message's id */
} enqueue_cursor;

static void cursor_init(enqueue_cursor *k, const qc_scenario *s, int shard, long first, long count)
{
    memset(k, 0, sizeof *k);
    k->s = s;
    k->shard = shard;
    k->msg = first;
    k->end = first + count;
    if (k->msg < k->end)
        k->ncopies = message_copies(s, shard, k->msg, k->id);
}

/* The next row: its message number, copy and id (copied into id); 0 at
 * the end. */
static int cursor_next(enqueue_cursor *k, long *msg, int *copy, char id[37])
{
    if (k->msg >= k->end)
        return 0;
    *msg = k->msg;
    *copy = k->copy;
    memcpy(id, k->id, 37);
    if (++k->copy >= k->ncopies) {
        k->copy = 0;
        if (++k->msg < k->end)
            k->ncopies = message_copies(k->s, k->shard, k->msg, k->id);
    }
    return 1;
}

/* One enqueue row's own values: its message number, copy, message id and
 * group. */
typedef struct enqueue_row {
    long msg;
    int copy;
    char id[37];
    char group[24]; /* "" none */
} enqueue_row;

/* The parameters of the enqueue of row r (payload "job-<message>" padded
 * to payload_bytes into payload, which holds payload_bytes + 32 bytes;
 * the client clock into cnow): p borrows both, r and the fixed values. */
static void enqueue_params(const qc_scenario *s, const enqueue_row *r, char *payload,
                           char cnow[32], const char *max_att, const char *delay,
                           const char *lease, const char *batch_n, qc_params *p)
{
    memcpy(payload, "job-", 4);
    size_t len = 4 + qc_fmt_i64(payload + 4, r->msg);
    while ((long)len < s->payload_bytes)
        payload[len++] = 'x';
    payload[len] = 0;
    qc_params_set(p, "payload", payload);
    qc_params_set(p, "group_key", r->group[0] ? r->group : NULL);
    qc_params_set(p, "message_id", r->id);
    qc_params_set(p, "max_attempts", max_att);
    qc_params_set(p, "delay_ms", delay); /* enqueue: how far ahead it is due */
    /* every step gets every parameter it can know (README "Parameters");
     * the enqueuer is worker -1, as in the ledger */
    qc_params_set(p, "lease_ms", lease);
    qc_params_set(p, "batch", batch_n);
    qc_params_set(p, "worker", "w-1.0");
    qc_params_set(p, "worker_id", "-1");
    qc_params_set(p, "incarnation", "0");
    /* the enqueuer's clock has no skew; rint rounds as "%.0f" did */
    qc_fmt_i64(cnow, (int64_t)rint(qc_clock_epoch_ms()));
    qc_params_set(p, "client_now_ms", cnow);
}

/* The enqueue of rows[0..n) in one round trip (qc_protocol_run_batch: the
 * driver's pipeline), inside the caller's open transaction; ids[i] gets
 * each job's id as the server returned it.  Errors: the protocol's;
 * QC_EINVAL when the step returned no job_id; QC_ENOMEM. */
static int enqueue_chunk(const qc_scenario *s, const qc_driver *d, qc_conn *c,
                         const qc_protocol *proto, long n, const enqueue_row *rows,
                         const char *max_att, const char *delay, const char *lease,
                         const char *batch_n, int64_t *ids, qc_err *err)
{
    size_t plen = (size_t)s->payload_bytes + 32;
    char *payloads = malloc(plen * (size_t)n);
    char (*cnow)[32] = malloc(sizeof *cnow * (size_t)n);
    qc_params *ps = calloc((size_t)n, sizeof *ps);
    qc_result *rs = calloc((size_t)n, sizeof *rs);
    int rc = 0;

    if (!payloads || !cnow || !ps || !rs) {
        rc = qc_err_set(err, QC_ENOMEM, "out of memory");
        goto out;
    }
    for (long i = 0; i < n; i++)
        enqueue_params(s, &rows[i], payloads + plen * (size_t)i, cnow[i], max_att, delay, lease,
                       batch_n, &ps[i]);
    rc = qc_protocol_run_batch(d, c, proto, QC_STEP_ENQUEUE, ps, (int)n, rs, err);
    for (long i = 0; rc == 0 && i < n; i++) {
        const char *id = qc_result_get(&rs[i], 0, "job_id");
        if (!id)
            rc = qc_err_set(err, QC_EINVAL, "%s: step 'enqueue' (line %d) returned no job_id",
                            proto->steps[QC_STEP_ENQUEUE].file, proto->steps[QC_STEP_ENQUEUE].line);
        else
            ids[i] = strtoll(id, NULL, 10);
    }
out:
    for (long i = 0; rs && i < n; i++)
        qc_result_clear(&rs[i]);
    free(rs);
    free(ps);
    free(cnow);
    free(payloads);
    return rc;
}

/* Enqueues count messages (numbers first_index ..; each in its copies:
 * message_copies) of shard on connection c, in transactions of 500 jobs
 * when the enqueue step is one statement (then, on a driver that
 * pipelines and without a notify step, each transaction's 500 enqueues go
 * out in one round trip); delay_ms schedules them for later.  Ledger ok
 * events are written only after the commit that makes them real.  The new
 * job ids are appended to *ids (grown with realloc; *nids updated) when
 * ids is not NULL.  *enqueued (may be NULL) grows by each committed
 * chunk's jobs (the progress line and the backlog read it). */
static int enqueue_jobs(const qc_scenario *s, const qc_driver *d, qc_conn *c,
                        const qc_protocol *proto, qc_lbuf *lb, long count, long first_index,
                        int shard, long delay_ms, int64_t **ids, size_t *nids,
                        atomic_long *enqueued, const char *dsn, double t0, qc_err *err)
{
    int notify = proto->steps[QC_STEP_NOTIFY].present;
    long total = s->jobs + s->feed_bursts * s->feed_jobs;
    qc_conn *early = NULL;
    double ntime[500];
    qc_fault_kind nkind[500];
    int wrap = proto->steps[QC_STEP_ENQUEUE].nstmts == 1;
    long chunk = 500;
    int64_t *batch = malloc(sizeof *batch * (size_t)chunk);
    enqueue_row *rows = calloc((size_t)chunk, sizeof *rows);
    char *payload = malloc((size_t)s->payload_bytes + 32);
    if (!batch || !payload || !rows) {
        free(batch);
        free(payload);
        free(rows);
        return qc_err_set(err, QC_ENOMEM, "out of memory");
    }
    char max_att[24], delay[24], lease[24], batch_n[24];
    snprintf(max_att, sizeof max_att, "%ld", s->max_attempts);
    snprintf(delay, sizeof delay, "%ld", delay_ms);
    snprintf(lease, sizeof lease, "%ld", s->lease_ms);
    snprintf(batch_n, sizeof batch_n, "%ld", s->batch);
    enqueue_cursor cur;
    cursor_init(&cur, s, shard, first_index, count);
    int rc = 0;
    /* SIGINT / SIGTERM: stop enqueueing; the jobs already in are the run. */
    for (;;) {
        if (rc != 0 || qc_interrupted)
            break;
        long n = 0;
        while (n < chunk && cursor_next(&cur, &rows[n].msg, &rows[n].copy, rows[n].id)) {
            rows[n].group[0] = 0;
            if (s->groups > 0) /* the copies of a message are in its group */
                snprintf(rows[n].group, sizeof rows[n].group, "g%ld", rows[n].msg % s->groups);
            n++;
        }
        if (n == 0)
            break;
        /* when this chunk's first request left (client ms like the
         * ledger's t): each enqueue ran after it, so a job's run_after is
         * at least this plus its delay (retry_delay's enqueue rule,
         * decision 1123) */
        double chunk_sent = qc_clock_ms() - t0;
        if (wrap && (rc = d->begin(c, err)) != 0)
            break;
        if (wrap && !notify && d->exec_batch != NULL) {
            /* one round trip for the chunk (pipeline mode, issue 16) */
            rc = enqueue_chunk(s, d, c, proto, n, rows, max_att, delay, lease, batch_n, batch,
                               err);
            if (rc == 0)
                rc = d->commit(c, err);
            else if (rc != QC_ECONN) {
                qc_err ignore = {0};
                d->rollback(c, &ignore);
            }
            if (rc != 0)
                break;
            for (long i = 0; i < n; i++) {
                nkind[i] = QC_FAULT_NONE;
                ntime[i] = -1;
            }
            goto committed;
        }
        for (long i = 0; i < n; i++) {
            qc_params p = {0};
            char cnow[32];
            enqueue_params(s, &rows[i], payload, cnow, max_att, delay, lease, batch_n, &p);
            qc_result r = {0};
            rc = qc_protocol_run(d, c, proto, QC_STEP_ENQUEUE, &p, &r, err);
            const char *id = rc == 0 ? qc_result_get(&r, 0, "job_id") : NULL;
            if (rc == 0 && !id)
                rc = qc_err_set(err, QC_EINVAL, "%s: step 'enqueue' (line %d) returned no job_id",
                                proto->steps[QC_STEP_ENQUEUE].file,
                                proto->steps[QC_STEP_ENQUEUE].line);
            if (rc == 0)
                batch[i] = strtoll(id, NULL, 10);
            qc_result_clear(&r);
            nkind[i] = QC_FAULT_NONE;
            ntime[i] = -1;
            if (rc == 0 && notify) {
                nkind[i] = qc_fault_notify_pick(s->seed, s->faults, rows[i].msg, total);
                rc = notify_job(s, d, c, proto, dsn, &early, nkind[i], batch[i], t0, &ntime[i],
                                err);
            }
            if (rc != 0)
                break;
        }
        if (rc == 0 && wrap)
            rc = d->commit(c, err);
        if (rc != 0)
            break;
    committed:
        for (long i = 0; i < n; i++) {
            qc_ev ev, *e = &ev; /* on the stack (ledger.h qc_ev, issue 16) */
            qc_ev_init(e);
            qc_ev_str(e, "type", ("ok"));
            qc_ev_str(e, "op", ("enqueue"));
            qc_ev_int(e, "worker", (-1));
            qc_ev_int(e, "job", (batch[i]));
            if (copies_on(s)) {
                /* the logical message this job is a copy of (C23) */
                qc_ev_str(e, "message", (rows[i].id));
                qc_ev_int(e, "copy", (rows[i].copy));
            }
            if (delay_ms > 0) {
                qc_ev_int(e, "delay_ms", (delay_ms));
                qc_ev_real(e, "sent_t", ((double)(int64_t)(chunk_sent * 1000) / 1000.0));
            }
            if (rows[i].group[0])
                qc_ev_str(e, "group", (rows[i].group));
            if (notify) {
                /* how its notification went (issue 17): "commit" sent in the
                 * enqueue's transaction, "lost" not sent, "early" committed
                 * on its own before the enqueue committed; notify_t: when
                 * it was sent (ms since the run's t0) */
                qc_ev_str(e, "notify", (nkind[i] == QC_FAULT_NOTIFY_LOST
                                                                 ? "lost"
                                                             : nkind[i] == QC_FAULT_NOTIFY_EARLY
                                                                 ? "early"
                                                                 : "commit"));
                if (ntime[i] >= 0)
                    qc_ev_real(e, "notify_t", ((double)(int64_t)(ntime[i] * 1000) / 1000.0));
            }
            qc_ev_append(lb, e);
            if (notify && nkind[i] != QC_FAULT_NONE) {
                json_t *f = json_object();
                json_object_set_new(f, "type", json_string("fault"));
                json_object_set_new(f, "fault", json_string(qc_fault_name(nkind[i])));
                json_object_set_new(f, "worker", json_integer(-1));
                json_object_set_new(f, "job", json_integer(batch[i]));
                if (ntime[i] >= 0)
                    json_object_set_new(f, "sent_t",
                                        json_real((double)(int64_t)(ntime[i] * 1000) / 1000.0));
                qc_ledger_append(lb, f);
            }
        }
        if (enqueued)
            atomic_fetch_add(enqueued, n);
        if (ids) {
            int64_t *grown = realloc(*ids, sizeof **ids * (*nids + (size_t)n));
            if (!grown) {
                rc = qc_err_set(err, QC_ENOMEM, "out of memory");
                break;
            }
            memcpy(grown + *nids, batch, sizeof *batch * (size_t)n);
            *ids = grown;
            *nids += (size_t)n;
        }
    }
    free(batch);
    free(payload);
    free(rows);
    if (early != NULL)
        d->close(early);
    return rc;
}

/* The feeder: enqueues [feed] bursts during the run on its own connection
 * (workloads with idle phases: bursts separated by quiet periods, jobs
 * scheduled for later), or, in a --duration run whose scenario has no
 * [feed] bursts, keeps a backlog (backlog_loop). */
typedef struct feeder {
    qc_shared *sh;
    const char *dsn;
    qc_lbuf *lb;
    pthread_t thread;
    atomic_int done;
    atomic_long enqueued;
    atomic_long *total;  /* every job of the run enqueued so far (run-wide) */
    long backlog;        /* > 0: keep this many jobs not yet done during the chaos
                            phase (--duration) instead of the [feed] bursts */
    int started;
    long conns;        /* connections it opened (qc_seed_session) */
    qc_conn_slot slot; /* the feeder's connection, for cancel_all */
} feeder;

/* Enqueues count jobs on the feeder's connection (opened, or reopened
 * after a lost one, here), retrying every 200 ms until they go in (the
 * server may be restarting).  Returns 0 when they went in, 1 when the run
 * stops first or a protocol error made it fatal. */
static int feed_jobs(feeder *f, qc_conn **c, long count, long first_index, long delay_ms)
{
    qc_shared *sh = f->sh;
    for (;;) {
        qc_err err = {0};
        if (!*c) {
            if (qc_open_conn(sh->drv, f->dsn, 0, sh->stmt_timeout_ms, c, &err) != 0) {
                *c = NULL;
            } else {
                qc_seed_session(sh->drv, *c, sh->sc->seed, -2, f->conns++);
                if (qc_witness_is_on(sh->sc) &&
                    qc_witness_name_session(sh->drv, *c, sh->proto->engine, "qchaos-feeder",
                                            &err) != 0) {
                    sh->drv->close(*c); /* an unnamed session's rows would be a stranger's */
                    *c = NULL;
                } else {
                    qc_slot_publish(&f->slot, *c);
                }
            }
        }
        if (!*c) {
            /* not reachable yet: retry below */
        } else if (enqueue_jobs(sh->sc, sh->drv, *c, sh->proto, f->lb, count, first_index, 0,
                                delay_ms, NULL, NULL, f->total, f->dsn, sh->t0, &err) == 0) {
            atomic_fetch_add(&f->enqueued, count);
            return 0;
        } else if (!sh->drv->is_ok(*c)) {
            qc_slot_publish(&f->slot, NULL);
            sh->drv->close(*c);
            *c = NULL;
        } else if (atomic_load(&sh->stop)) {
            return 1; /* cancelled by a signal (cancel_all): not a protocol error */
        } else {
            char msg[1100];
            snprintf(msg, sizeof msg, "feed enqueue: %s", err.msg);
            qc_shared_fatal(sh, err.code == QC_EINVAL ? QC_EINVAL : QC_ECONN, msg);
            return 1;
        }
        if (qc_clock_sleep_until_stop(200, &sh->stop))
            return 1;
    }
}

/* The backlog of a --duration run (pgbench's -T, README "--duration"):
 * while the chaos phase lasts, whenever the jobs enqueued but not yet
 * completed (acknowledged) fall below three quarters of f->backlog, enqueue enough to
 * bring them back to it, so the workers never run dry before the chaos
 * phase ends.  Poison jobs that went dead stay counted as not completed
 * (the backlog is then a little smaller than asked, never larger). */
static void backlog_loop(feeder *f, qc_conn **c)
{
    qc_shared *sh = f->sh;
    while (!atomic_load(&sh->stop) && atomic_load(&sh->chaos)) {
        long total = atomic_load(f->total);
        long left = total - atomic_load(&sh->completes_ok);
        if (left >= f->backlog / 4 * 3) {
            qc_clock_sleep_ms(20);
            continue;
        }
        if (feed_jobs(f, c, f->backlog - (left > 0 ? left : 0), total, 0) != 0)
            break;
    }
}

static void *feeder_main(void *arg)
{
    feeder *f = arg;
    qc_shared *sh = f->sh;
    const qc_scenario *s = sh->sc;
    qc_conn *c = NULL;
    double start = qc_clock_ms();
    if (f->backlog > 0)
        backlog_loop(f, &c);
    for (long b = 0; f->backlog <= 0 && b < s->feed_bursts && !atomic_load(&sh->stop); b++) {
        double at = start + (double)s->feed_start_ms + (double)b * (double)s->feed_gap_ms;
        while (!atomic_load(&sh->stop) && qc_clock_ms() < at)
            qc_clock_sleep_ms(5);
        if (atomic_load(&sh->stop))
            break;
        if (feed_jobs(f, &c, s->feed_jobs, s->jobs + b * s->feed_jobs, s->feed_delay_ms) != 0)
            break;
    }
    qc_slot_publish(&f->slot, NULL);
    if (c)
        sh->drv->close(c);
    atomic_store(&f->done, 1);
    return NULL;
}

/* SIGINT / SIGTERM: with sh->stop set, cancels the statement every thread
 * of the run is in, again every 200 ms until every worker, the reaper and
 * the feeder have left their loops (a statement sent just after a cancel
 * gets the next one), for at most 60 s (the statement timeout bounds each
 * statement anyway).  Cancelled requests are ordinary fail events. */
static void cancel_all(qc_shared *sh, qc_worker *workers, int nworkers, qc_worker *reaper,
                       feeder *feed, qc_nemesis *nem)
{
    double deadline = qc_clock_ms() + 60000;
    for (;;) {
        int left = 0;
        for (int i = 0; i < nworkers; i++) {
            if (!atomic_load(&workers[i].exited)) {
                qc_actor_for(sh->sc)->cancel(&workers[i]);
                left++;
            }
        }
        if (reaper != NULL && !atomic_load(&reaper->exited)) {
            qc_worker_cancel(reaper);
            left++;
        }
        if (feed->started && !atomic_load(&feed->done)) {
            qc_slot_cancel(&feed->slot, sh->drv);
            left++;
        }
        qc_nemesis_cancel(nem);
        if (left == 0 || qc_clock_ms() >= deadline)
            break;
        qc_clock_sleep_ms(200);
    }
}

/* Starts scripts/pgbouncer-ephemeral.sh in transaction pooling mode in
 * front of the server at dsn, accepting `clients` client connections over
 * `pool` server connections; its last stdout line is the pooler's
 * conninfo. */
static int pooler_start(const char *dir, const char *dsn, long clients, long pool, char *out,
                        size_t n, qc_err *err)
{
    char cmd[3000];
    snprintf(cmd, sizeof cmd, "'%s/scripts/pgbouncer-ephemeral.sh' start '%s' '%s' %ld %ld",
             qc_datadir(), dir, dsn, clients, pool);
    FILE *p = popen(cmd, "r");
    if (!p)
        return qc_err_set(err, QC_ECONN, "cannot run %s", cmd);
    char line[512];
    out[0] = 0;
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = 0;
        if (line[0])
            snprintf(out, n, "%s", line);
    }
    if (pclose(p) != 0 || !out[0])
        return qc_err_set(err, QC_ECONN, "could not start PgBouncer (%s); see %s/pgbouncer.log",
                          cmd, dir);
    return 0;
}

/* [network] proxy = on: starts the proxy between the workers and
 * app_dsn (proxy.h) and says where it listens.  PostgreSQL only.  Returns
 * 0, QC_EINVAL (exit 2) or another code (exit 3), with err set. */
static int proxy_start(const qc_scenario *s, const qc_protocol *proto, const char *app_dsn,
                       double t0, qc_ledger *ledger, qc_shared *sh, qc_err *err)
{
    (void)proto; /* the engine was checked with the input (PostgreSQL only) */
    int rc = qc_proxy_create(&s->network, app_dsn, (int)s->workers, s->seed,
                             qc_ledger_buf(ledger), t0, &sh->stop, &sh->proxy, err);
    if (rc != 0)
        return rc;
    fprintf(stderr, "qchaos: proxy: %ld workers connect through 127.0.0.1 listeners (latency "
            "%ld ms, jitter %ld ms, bandwidth %ld B/s%s); the reaper, monitor and snapshot "
            "connect directly\n",
            s->workers, s->network.latency_ms, s->network.jitter_ms, s->network.bandwidth,
            s->network.bandwidth ? "" : " = unlimited");
    return 0;
}

/* Stops the proxy after the workers; its counters go to the ledger and
 * stderr. */
static void proxy_stop(qc_shared *sh, qc_lbuf *lb)
{
    qc_proxy_stats st;
    if (!sh->proxy)
        return;
    qc_proxy_get_stats(sh->proxy, &st);
    qc_proxy_destroy(sh->proxy);
    sh->proxy = NULL;
    char what[256];
    snprintf(what, sizeof what, "proxy: %ld connections, %lld bytes to the server, %lld to the "
             "workers, %ld reset, %ld answers dropped", st.connections, st.bytes_up,
             st.bytes_down, st.resets, st.lost_acks);
    json_t *e = json_object();
    json_object_set_new(e, "type", json_string("note"));
    json_object_set_new(e, "note", json_string(what));
    qc_ledger_append(lb, e);
    fprintf(stderr, "qchaos: %s\n", what);
}

static void pooler_stop(const char *dir)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s/scripts/pgbouncer-ephemeral.sh' stop '%s' >/dev/null 2>&1",
             qc_datadir(), dir);
    if (system(cmd) != 0)
        fprintf(stderr, "qchaos: could not stop PgBouncer in %s\n", dir);
}

/* pg_stat_statements keeps a query's text with its constants replaced by
 * $n (and a constant may be a keyword in our text: extract(epoch FROM ..)
 * becomes extract($8 FROM ..)).  A server text matches our statement when,
 * token by token, each server token equals ours or is a $n placeholder. */
static const char *next_token(const char *p, char *tok, size_t n)
{
    while (*p && isspace((unsigned char)*p))
        p++;
    if (!*p)
        return NULL;
    size_t k = 0;
    if (*p == '\'') {
        tok[k++] = *p++;
        while (*p && k + 1 < n) {
            if (*p == '\'' && p[1] == '\'') {
                tok[k++] = *p++;
                tok[k++] = *p++;
                continue;
            }
            tok[k++] = *p;
            if (*p++ == '\'')
                break;
        }
    } else if (*p == '$' && isdigit((unsigned char)p[1])) {
        p++;
        while (isdigit((unsigned char)*p))
            p++;
        tok[k++] = '$';
    } else if (isalnum((unsigned char)*p) || *p == '_' || *p == '.') {
        while ((isalnum((unsigned char)*p) || *p == '_' || *p == '.') && k + 1 < n)
            tok[k++] = (char)tolower((unsigned char)*p++);
    } else {
        tok[k++] = *p++;
    }
    tok[k] = 0;
    return p;
}

static int query_matches(const char *server, const char *ours)
{
    char a[512], b[512];
    for (;;) {
        server = next_token(server, a, sizeof a);
        ours = next_token(ours, b, sizeof b);
        if (!server || !ours)
            return !server && !ours;
        if (strcmp(a, "$") && strcmp(a, b))
            return 0;
    }
}

/* The server's own count of claim statements (pg_stat_statements), so the
 * idle-polling check does not rest on the harness's word alone.  The
 * server's statistics are never reset (they may be the user's): the count
 * is the difference of two reads of the claim statement's calls in this
 * database, one before the workers start and one after they are joined.
 * Between the two, pg_stat_statements may have evicted entries
 * (pg_stat_statements_info.dealloc, PostgreSQL 14+) or been reset by
 * someone else (stats_reset); then the count is unknown. */
typedef struct server_count {
    int ok;               /* 1: the extension answered */
    int found;            /* 1: some entry's text matched the claim statement */
    long long calls;      /* summed calls of the entries matching the claim */
    long long dealloc;    /* pg_stat_statements_info.dealloc, -1 unknown (< 14) */
    char stats_reset[64]; /* pg_stat_statements_info.stats_reset, "" unknown */
} server_count;

/* The claim step's first statement that is not a setting (SET, RESET)
 * or transaction control (BEGIN, START TRANSACTION, COMMIT, END,
 * ROLLBACK, SAVEPOINT, RELEASE): the one that runs on every claim (a later
 * one may be skipped by an empty result).  A claim that sends its own
 * BEGIN would otherwise be counted by its BEGIN, which pg_stat_statements
 * counts apart from the claims (a false "server counted" violation of
 * bounded_idle_polling, decision 1141).  With :name parameters already
 * rewritten to $n; NULL when none. */
static const char *claim_sql(const qc_protocol *proto)
{
    static const char *skip[] = {"set",   "reset",    "begin",     "start", "commit",
                                 "end",   "rollback", "savepoint", "release", "abort"};
    const qc_step *st = &proto->steps[QC_STEP_CLAIM];
    if (!st->present)
        return NULL;
    for (int k = 0; k < st->nstmts; k++) {
        const char *q = st->stmts[k].sql;
        while (isspace((unsigned char)*q))
            q++;
        size_t w = 0;
        while (isalpha((unsigned char)q[w]))
            w++;
        int control = 0;
        for (size_t j = 0; j < sizeof skip / sizeof *skip && !control; j++)
            control = w == strlen(skip[j]) && !strncasecmp(q, skip[j], w);
        if (!control)
            return st->stmts[k].sql;
    }
    return NULL;
}

static void server_count_read(const qc_driver *d, qc_conn *c, const qc_protocol *proto,
                              server_count *out)
{
    memset(out, 0, sizeof *out);
    out->dealloc = -1;
    const char *sql = claim_sql(proto);
    if (!sql || !c || !d->is_ok(c))
        return;
    qc_result r = {0};
    qc_err err = {0};
    if (d->exec(c, -1, 0,
                "SELECT query, calls FROM pg_stat_statements WHERE calls > 0 AND dbid = "
                "(SELECT oid FROM pg_database WHERE datname = current_database()) AND userid = "
                "(SELECT oid FROM pg_roles WHERE rolname = current_user)",
                0, NULL, &r, &err) != 0) {
        qc_result_clear(&r);
        return;
    }
    for (int i = 0; i < r.nrows; i++) {
        const char *q = qc_result_get(&r, i, "query");
        const char *v = qc_result_get(&r, i, "calls");
        if (q && v && query_matches(q, sql)) {
            out->calls += strtoll(v, NULL, 10);
            out->found = 1;
        }
    }
    qc_result_clear(&r);
    out->ok = 1;
    if (d->exec(c, -1, 0, "SELECT dealloc, stats_reset FROM pg_stat_statements_info", 0, NULL, &r,
                &err) == 0 &&
        r.nrows == 1) {
        const char *v = qc_result_get(&r, 0, "dealloc");
        const char *t = qc_result_get(&r, 0, "stats_reset");
        out->dealloc = v ? strtoll(v, NULL, 10) : -1;
        snprintf(out->stats_reset, sizeof out->stats_reset, "%s", t ? t : "");
    }
    qc_result_clear(&r);
}

/* Reads the count again and writes the difference to the ledger as a
 * "server_count" note (exclusive: on a server qchaos started), or a
 * "server_count unavailable: why" note when it cannot be trusted. */
static void server_count_record(const qc_driver *d, qc_conn *c, const qc_protocol *proto,
                                const server_count *before, qc_lbuf *lb, int exclusive)
{
    server_count after;
    server_count_read(d, c, proto, &after);
    char why[256] = "";
    if (!after.ok)
        snprintf(why, sizeof why, "pg_stat_statements did not answer after the run");
    else if (!after.found)
        /* 0 would be read as "the server ran no claim": a text that does
         * not match (another normalisation, texts lost by the extension's
         * garbage collection) is an unknown count, never a zero */
        snprintf(why, sizeof why, "no pg_stat_statements entry matches the claim statement");
    else if (after.dealloc != before->dealloc)
        snprintf(why, sizeof why, "pg_stat_statements evicted entries during the run "
                 "(dealloc %lld -> %lld)", before->dealloc, after.dealloc);
    else if (strcmp(after.stats_reset, before->stats_reset))
        snprintf(why, sizeof why, "pg_stat_statements was reset during the run");
    else if (after.calls < before->calls)
        snprintf(why, sizeof why, "the claim's calls went down (%lld -> %lld): the statistics "
                 "were lost (a server restart?)", before->calls, after.calls);
    json_t *e = json_object();
    json_object_set_new(e, "type", json_string("note"));
    if (why[0]) {
        char note[320];
        snprintf(note, sizeof note, "server_count unavailable: %s", why);
        json_object_set_new(e, "note", json_string(note));
    } else {
        json_object_set_new(e, "note", json_string("server_count"));
        json_object_set_new(e, "op", json_string("claim"));
        json_object_set_new(e, "source", json_string("pg_stat_statements"));
        /* On a server qchaos did not start, other clients may run the
         * same statement: only the lower bound of the count can be
         * judged there. */
        json_object_set_new(e, "exclusive", json_boolean(exclusive));
        json_object_set_new(e, "calls", json_integer(after.calls - before->calls));
    }
    qc_ledger_append(lb, e);
}

typedef struct monitor_sample {
    long ready, inflight, expired, dead, done;
    int ok;
} monitor_sample;

/* One sample of the queue's depth by state into *m (m->ok 0 when the step
 * failed) and, from a monitor or monitor_live step, a "monitor" event into
 * the ledger (the columns the step returned; a monitor_live sample has no
 * done and says "sample":"live").  live: the protocol's monitor_live step
 * (O(live rows)), else its monitor, else its snapshot (counted here, not
 * written). */
static void sample_monitor(const qc_driver *d, qc_conn *c, const qc_protocol *proto, qc_lbuf *lb,
                           int live, monitor_sample *m)
{
    m->ok = 0;
    qc_step_id step = live && proto->steps[QC_STEP_MONITOR_LIVE].present ? QC_STEP_MONITOR_LIVE
                      : proto->steps[QC_STEP_MONITOR].present            ? QC_STEP_MONITOR
                                                                         : QC_STEP_SNAPSHOT;
    qc_params p = {0};
    qc_result r = {0};
    qc_err err = {0};
    if (qc_protocol_run(d, c, proto, step, &p, &r, &err) != 0)
        return;
    if (step == QC_STEP_MONITOR || step == QC_STEP_MONITOR_LIVE) {
        static const char *const keys[] = {"ready", "inflight", "expired", "dead", "done",
                                           "oldest_ready_age_ms"};
        long *dst[] = {&m->ready, &m->inflight, &m->expired, &m->dead, &m->done, NULL};
        json_t *e = json_object();
        json_object_set_new(e, "type", json_string("monitor"));
        if (step == QC_STEP_MONITOR_LIVE)
            json_object_set_new(e, "sample", json_string("live"));
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
    long written = 0;
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
        written++;
    }
    if (written == 0) {
        /* an empty queue at the end (a protocol that deletes what it
         * finishes, header "missing: done"): a job-less snapshot event
         * records that the snapshot was taken, so the checkers judge
         * "every job missing" instead of "no final snapshot" (decision
         * 1100) */
        json_t *e = json_object();
        json_object_set_new(e, "type", json_string("snapshot"));
        qc_ledger_append(lb, e);
    }
    *rows = r.nrows;
    qc_result_clear(&r);
    return 0;
}

/* --shard: every job id in the queue (the snapshot step's job_id column),
 * for the fault plan over the whole run.  *ids is malloc'ed (caller frees). */
static int read_job_ids(const qc_driver *d, qc_conn *c, const qc_protocol *proto, int64_t **ids,
                        size_t *n, qc_err *err)
{
    qc_params p = {0};
    qc_result r = {0};
    int rc = qc_protocol_run(d, c, proto, QC_STEP_SNAPSHOT, &p, &r, err);
    if (rc != 0)
        return rc;
    *ids = malloc(sizeof **ids * (size_t)(r.nrows > 0 ? r.nrows : 1));
    *n = 0;
    if (*ids == NULL) {
        qc_result_clear(&r);
        return qc_err_set(err, QC_ENOMEM, "out of memory");
    }
    for (int i = 0; i < r.nrows; i++) {
        const char *id = qc_result_get(&r, i, "job_id");
        if (id)
            (*ids)[(*n)++] = strtoll(id, NULL, 10);
    }
    qc_result_clear(&r);
    return 0;
}

/* "host:port/dbname" of the target object (never a password), for the
 * progress line. */
static void target_short(const json_t *t, char *buf, size_t n)
{
    const char *host = json_string_value(json_object_get(t, "host"));
    const char *port = json_string_value(json_object_get(t, "port"));
    const char *db = json_string_value(json_object_get(t, "dbname"));
    snprintf(buf, n, "%s:%s/%s", host && host[0] ? host : "?", port && port[0] ? port : "?",
             db && db[0] ? db : "?");
}

/* The backlog a --duration run keeps (backlog_loop): a hundred claims'
 * worth per worker, at least 1000 jobs, so that no worker meets an empty queue
 * (and backs off) between two top-ups, and the drain after the chaos phase
 * is short; 0 (no backlog) without --duration or with [feed] bursts.  The
 * scenario's jobs are enqueued before the chaos phase as always. */
static long backlog_size(const qc_scenario *s)
{
    if (s->duration_s <= 0 || s->feed_bursts > 0)
        return 0;
    long n = 100 * s->workers * (s->batch > 0 ? s->batch : 1);
    return n > 1000 ? n : 1000;
}

/* The schedule's lock check (sched.h qc_sched_lock_fn) on PostgreSQL:
 * whether the actor's backend waits for a lock (pg_stat_activity, as
 * isolationtester's pg_isolation_test_session_is_blocked), on a connection
 * of its own opened at the first question. */
typedef struct lock_check {
    const qc_driver *d;
    const char *dsn;
    qc_conn *c;
    atomic_int *pids;
    long workers;
    int failed;
} lock_check;

static int lock_check_fn(void *ctx, int actor)
{
    lock_check *k = ctx;
    qc_err e = {0};
    qc_result r = {0};
    char pid[24];
    int v = -1;

    if (k->failed)
        return -1;
    if (k->c == NULL && k->d->open(k->dsn, &k->c, &e) != 0) {
        k->c = NULL;
        k->failed = 1;
        return -1;
    }
    int p = atomic_load(&k->pids[actor >= 0 ? actor : (int)k->workers]);
    if (p <= 0)
        return -1;
    snprintf(pid, sizeof pid, "%d", p);
    const char *params[1] = {pid};
    if (k->d->exec(k->c, 0, 0,
                   "SELECT (wait_event_type IS NOT DISTINCT FROM 'Lock')::int AS b "
                   "FROM pg_stat_activity WHERE pid = $1::int",
                   1, params, &r, &e) == 0) {
        const char *b = qc_result_get(&r, 0, "b");
        if (b != NULL)
            v = atoi(b) ? 1 : 0;
    } else if (!k->d->is_ok(k->c)) {
        k->d->close(k->c);
        k->c = NULL;
    }
    qc_result_clear(&r);
    return v;
}

/* Whether a ledger file holds its run's end event (a complete run). */
static int ledger_has_end(const char *path)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    int found = 0;
    if (f == NULL)
        return 0;
    while (!found && getline(&line, &cap, f) > 0)
        found = strstr(line, "\"type\":\"end\"") != NULL;
    free(line);
    fclose(f);
    return found;
}

/* A replay's partition window, anchored to the points (proxy.h
 * qc_proxy_anchor_fn): the seqs of the earlier run's first partition fault
 * event and of its first "partition healed" note, -1 when absent. */
typedef struct partition_anchor {
    qc_sched *sched;
    long seq[2];
} partition_anchor;

static int partition_anchor_fn(void *ctx, int edge)
{
    partition_anchor *a = ctx;
    if (edge < 0 || edge > 1 || a->seq[edge] < 0)
        return -1;
    return qc_sched_replay_reached(a->sched, a->seq[edge]);
}

/* A replay's server answers through the proxy (proxy.h qc_proxy_answer_fn,
 * decision 1132). */
static void server_answered_fn(void *ctx, int worker)
{
    qc_sched_server_answered(ctx, worker);
}

/* Reads the partition's edges from a ledger (see partition_anchor). */
static void partition_edges(const char *path, long seq[2])
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    seq[0] = seq[1] = -1;
    if (f == NULL)
        return;
    while ((seq[0] < 0 || seq[1] < 0) && getline(&line, &cap, f) > 0) {
        int edge = strstr(line, "\"fault\":\"partition\"") != NULL        ? 0
                   : strstr(line, "\"note\":\"partition healed\"") != NULL ? 1
                                                                            : -1;
        if (edge < 0 || seq[edge] >= 0)
            continue;
        json_t *e = json_loads(line, 0, NULL);
        json_t *v = json_object_get(e, "seq");
        if (json_is_integer(v))
            seq[edge] = (long)json_integer_value(v);
        json_decref(e);
    }
    free(line);
    fclose(f);
}

/* The run's schedule (sched.h): a replay of o->replay's ledger, the
 * scenario's script (its steps on points this protocol lacks are dropped,
 * each with a note), or PCT exploration; *out stays NULL without one.
 * Errors: QC_EIO / QC_EINVAL reading the replayed ledger, QC_ENOMEM. */
static int make_schedule(const qc_run_opts *o, const qc_protocol *proto, int txn_model,
                         qc_ledger *ledger, qc_lbuf *lb, qc_sched **out, qc_err *err)
{
    const qc_scenario *s = &o->sc;
    qc_sched_entry *v = NULL;
    int n = 0, rc;
    qc_sched_mode mode;
    char source[1100];
    qc_lbuf *slb;

    *out = NULL;
    if (o->replay == NULL && s->nsteps == 0 && !s->explore_pct)
        return 0;
    if (o->replay != NULL) {
        if (o->replay_entries != NULL) {
            n = o->replay_nentries;
            if ((v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v)) == NULL)
                return qc_err_set(err, QC_ENOMEM, "out of memory");
            memcpy(v, o->replay_entries, (size_t)n * sizeof *v);
        } else if ((rc = qc_sched_load_replay(o->replay, &v, &n, err)) != 0)
            return rc;
        if (!ledger_has_end(o->replay)) {
            /* a ledger cut short (a killed harness, a truncated file): its
             * prefix is imposed, what came after it is not known */
            char msg[1400];
            snprintf(msg, sizeof msg,
                     "replay of %s: the ledger has no end event (cut short after %d points): "
                     "only those were imposed, the rest of the run ran freely",
                     o->replay, n);
            fprintf(stderr, "qchaos: %s\n", msg);
            json_t *e = json_object();
            json_object_set_new(e, "type", json_string("note"));
            json_object_set_new(e, "note", json_string("schedule abandoned"));
            json_object_set_new(e, "error", json_string(msg));
            qc_ledger_append(lb, e);
        }
        mode = QC_SCHED_REPLAY;
        snprintf(source, sizeof source, "%s", o->replay);
    } else if (s->nsteps > 0) {
        mode = QC_SCHED_SCRIPT;
        snprintf(source, sizeof source, "%s", s->path);
        if ((v = calloc((size_t)s->nsteps, sizeof *v)) == NULL)
            return qc_err_set(err, QC_ENOMEM, "out of memory");
        for (int i = 0; i < s->nsteps; i++) {
            int actor;
            if (qc_actor_parse(s->steps[i].actor, &actor) != 0)
                continue; /* checked at load */
            int hold = (s->hold_claim_commit ? QC_HOLD_CLAIM_COMMIT : 0) |
                       (s->hold_complete_commit ? QC_HOLD_COMPLETE_COMMIT : 0) |
                       (s->hold_reap_commit ? QC_HOLD_REAP_COMMIT : 0);
            if (!qc_point_in_protocol(s->steps[i].point, proto, txn_model, hold)) {
                char msg[1400];
                snprintf(msg, sizeof msg,
                         "%s:%d: step '%s %s' dropped: protocol %s has no such point (a step "
                         "it lacks, or fewer statements)",
                         s->path, s->steps[i].line, s->steps[i].actor, s->steps[i].point,
                         proto->path);
                fprintf(stderr, "qchaos: %s\n", msg);
                json_t *e = json_object();
                json_object_set_new(e, "type", json_string("note"));
                json_object_set_new(e, "note", json_string("schedule step dropped"));
                json_object_set_new(e, "error", json_string(msg));
                qc_ledger_append(lb, e);
                continue;
            }
            v[n].actor = actor;
            snprintf(v[n].point, sizeof v[n].point, "%s", s->steps[i].point);
            v[n].job = s->steps[i].with_job ? QC_SCHED_ANY_JOB : INT64_MIN;
            v[n].where = s->steps[i].line;
            n++;
        }
    } else {
        mode = QC_SCHED_PCT;
        snprintf(source, sizeof source, "PCT seed %llu", (unsigned long long)s->seed);
    }
    if ((slb = qc_ledger_buf(ledger)) == NULL ||
        (*out = qc_sched_new(mode, v, n, (int)s->workers, s->seed, (int)s->pct_depth,
                             s->block_ms, qc_scenario_hold_timeout_ms(s), slb, source)) == NULL) {
        free(v);
        return qc_err_set(err, QC_ENOMEM, "out of memory");
    }
    free(v);
    return 0;
}
/* After the control connection was opened again (a restart, a failover):
 * the run lock went with the old session (owner.h); takes it again, and
 * says so when another run took it in between (its setup may have reset
 * this run's tables: the verdict is in doubt). */
static void relock(const qc_driver *d, qc_conn *ctl, const char *engine, int shared, int held)
{
    int taken = 0;
    qc_err e = {0};
    if (!held || !ctl)
        return;
    if (qc_owner_lock(d, ctl, engine, shared, &taken, &e) == QC_ESTATE)
        fprintf(stderr, "qchaos: warning: after the control connection was opened again: %s\n",
                e.msg);
}


int qc_run(const qc_run_opts *o, qc_err *err)
{
    const qc_scenario *s = &o->sc;
    int code = 3;
    int run_locked = 0; /* the run lock (owner.h) is held by ctl's session */
    int made_out = 0;  /* the results folder did not exist: this run created it */
    qc_protocol *proto = NULL;
    ephemeral eph = {0};
    qc_conn *ctl = NULL;
    qc_ledger *ledger = NULL;
    qc_sink *sink = NULL;
    qc_worker *workers = NULL;
    qc_sched *sched = NULL;
    lock_check lk = {0};
    partition_anchor panchor = {NULL, {-1, -1}};
    qc_worker reaper;
    int nstarted = 0, reaper_started = 0;
    qc_shared sh;
    memset(&sh, 0, sizeof sh);
    pthread_mutex_init(&sh.fatal_mu, NULL);
    char ledger_path[1100];
    char server[128] = "unknown";
    double t0 = qc_clock_ms();
    const qc_driver *d = NULL;
    int64_t *job_ids = NULL;
    size_t njob_ids = 0;
    qc_fault_plan *plan = NULL;
    atomic_int *pids = NULL, *listen_slots = NULL;
    feeder feed;
    memset(&feed, 0, sizeof feed);
    qc_nemesis nem;
    memset(&nem, 0, sizeof nem);
    char pooler_dir[400] = "", pooler_dsn[512] = "";
    int pooler_running = 0;
    json_t *target = NULL;
    qc_owner owner;
    memset(&owner, 0, sizeof owner);
    qc_witness_cfg wcfg;
    int wit = qc_witness_is_on(s);
    int wit_installed = 0;
    const qc_actor_ops *actor = qc_actor_for(s);
    qc_adapter_hello hello;
    memset(&hello, 0, sizeof hello);
    qc_progress *prog = NULL;
    atomic_long enqueued = 0; /* every job enqueued, before and during the chaos phase */
    char *table = NULL;       /* the verdict table, printed once the progress has stopped */
    size_t table_len = 0;

    /* Input first: nothing connects before the files are known good. */
    qc_protocol *probe = NULL;
    int rc = qc_protocol_load(s->protocol, QC_PARAM_DOLLAR, &probe, err);
    if (rc != 0) {
        code = rc == QC_EINVAL ? 2 : 3;
        goto out;
    }
    d = driver_for(probe->engine);
    if (!d) {
        qc_err_set(err, QC_EINVAL, "%s: no driver for engine '%s'", s->protocol, probe->engine);
        qc_protocol_destroy(probe);
        code = 2;
        goto out;
    }
    /* decision 1129: MariaDB takes offsets from -12:59 to +13:00 only
     * (SET time_zone refuses '+14:00' with HY000): refused here, as bad
     * input naming the scenario's line, not as an unreachable server. */
    if (!strcmp(probe->engine, "mariadb") && s->session_time_zone[0] != '\0') {
        int sign = s->session_time_zone[0] == '-' ? -1 : 1;
        int mins = atoi(s->session_time_zone + 1) * 60 + atoi(s->session_time_zone + 4);
        if ((sign > 0 && mins > 13 * 60) || (sign < 0 && mins > 12 * 60 + 59)) {
            qc_err_set(err, QC_EINVAL,
                       "%s:%d: session_time_zone %s is outside what MariaDB / MySQL accept "
                       "(-12:59 to +13:00)",
                       s->path, qc_scenario_line_of(s, "faults.session_time_zone"),
                       s->session_time_zone);
            qc_protocol_destroy(probe);
            code = 2;
            goto out;
        }
    }
    /* decision 1120: before the first connection of the run.  SQL Server
     * has no session time zone (GETDATE() is the host's): the run goes on
     * in the server's own, and the ledger header says so. */
    if (qc_driver_set_session_time_zone(strcmp(probe->engine, "sqlserver") ? s->session_time_zone
                                                                            : NULL,
                                        err) != 0) {
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
    if (!strcmp(proto->model, "adapter") != !!s->adapter_command[0]) {
        qc_err_set(err, QC_EINVAL,
                   s->adapter_command[0]
                       ? "%s: [adapter] command needs a library's file (-- model: adapter), not "
                         "%s"
                       : "%s: %s is a library's file (-- model: adapter): the scenario needs an "
                         "[adapter] command",
                   s->path[0] ? s->path : "scenario", proto->path);
        code = 2;
        goto out;
    }
    if (s->adapter_command[0] && (rc = qc_adapter_check(s, err)) != 0) {
        code = 2; /* at load: what the adapter cannot honour (adapter.h) */
        goto out;
    }
    if (s->network.proxy && strcmp(proto->engine, "postgres") != 0) {
        qc_err_set(err, QC_EINVAL,
                   "%s: [network] proxy = on speaks PostgreSQL's protocol only; the "
                   "protocol's engine is %s",
                   s->path[0] ? s->path : "scenario", proto->engine);
        code = 2;
        goto out;
    }
    if (!strcmp(proto->model, "transaction") && s->batch != 1) {
        qc_err_set(err, QC_EINVAL,
                   "%s: the transaction model claims one job per transaction: batch must be 1 "
                   "(the scenario says %ld)",
                   proto->path, s->batch);
        code = 2;
        goto out;
    }
    const int nshards = o->shard_count > 1 ? o->shard_count : 1, shard = o->shard_index;
    if (nshards > 1) {
        const char *why = strcmp(proto->engine, "postgres") != 0 ? "runs on PostgreSQL only"
                          : s->adapter_command[0]             ? "does not drive adapters"
                          : qc_witness_is_on(s)               ? "runs without the witness"
                          : (s->nsteps > 0 || s->explore_pct || o->replay)
                              ? "takes no schedule (a script, explore or --replay orders "
                                "the points of one process)"
                          : (s->faults[QC_FAULT_STALL_UNTIL_RECLAIMED].count > 0 ||
                             s->faults[QC_FAULT_STALL_UNTIL_RECLAIMED].rate > 0)
                              ? "takes no stall_until_reclaimed (its hold waits for a claim "
                                "seen in its own process; split the gate with gate --shard)"
                          : (s->faults[QC_FAULT_LOST_ACK_ON_FAIL].count > 0 ||
                             s->faults[QC_FAULT_LOST_ACK_ON_FAIL].rate > 0)
                              ? "takes no lost_ack_on_fail (its hold waits for a claim seen "
                                "in its own process; split the gate with gate --shard)"
                              : NULL;
        if (why != NULL) {
            qc_err_set(err, QC_EINVAL, "%s: --shard %d/%d %s", s->path[0] ? s->path : "scenario",
                       shard, nshards, why);
            code = 2;
            goto out;
        }
    }
    /* A connection string the client library rejects is an input error
     * (exit 2), found before any server starts or anything connects. */
    const char *const given[2][2] = {{"--dsn", o->dsn}, {"--worker-dsn", o->worker_dsn}};
    for (int i = 0; i < 2 && d->check_conninfo; i++) {
        if (given[i][1] && (rc = d->check_conninfo(given[i][1], err)) != 0) {
            qc_err_prefix(err, "%s", given[i][0]);
            code = rc == QC_EINVAL ? 2 : 3;
            goto out;
        }
    }
    if (wit && (rc = qc_witness_config(s, proto, &wcfg, err)) != 0) {
        code = 2;
        goto out;
    }
    if (wit && (strcmp(s->pooler, "none") != 0 || o->worker_dsn) && !s->witness_on) {
        /* Switched on for a whole matrix (QCHAOS_WITNESS) and met a pooler
         * scenario: this run goes without it, saying so; the variable is
         * cleared before any thread starts so no session is named. */
        fprintf(stderr, "qchaos: warning: QCHAOS_WITNESS ignored for %s: the witness tells "
                        "workers apart by their server session, which a pooler hides\n",
                s->path);
        setenv("QCHAOS_WITNESS", "no", 1);
        wit = 0;
    }
    if (wit && (strcmp(s->pooler, "none") != 0 || o->worker_dsn)) {
        /* behind a pooler a server session is not one worker's */
        qc_err_set(err, QC_EINVAL,
                   "%s: the witness tells workers apart by their server session: it cannot run "
                   "behind a pooler ([topology] pooler, --worker-dsn)",
                   s->path);
        code = 2;
        goto out;
    }
    /* A descriptor per connection: each worker's (and its listen and
     * proxy sockets), the reaper's, monitor, feeder, nemesis, ledger; the
     * soft limit is raised, a hard limit too low is refused before
     * anything starts. */
    if ((rc = qc_usage_reserve_fds(qc_shard_share(s->workers, shard, nshards) *
                                           (1 + proto->steps[QC_STEP_LISTEN].present +
                                            3 * s->network.proxy) +
                                       64,
                                   NULL, err)) != 0) {
        code = rc == QC_EINVAL ? 2 : 3;
        goto out;
    }
    qc_lint_print(stderr, s, proto); /* what the run will be blind to */
    struct stat out_st;
    made_out = stat(o->out_dir, &out_st) != 0; /* ours to remove if nothing is recorded */
    if ((rc = qc_mkdirs(o->out_dir, err)) != 0) {
        made_out = 0;
        code = 2;
        goto out;
    }
    if (o->progress_s > 0 || o->progress)
        prog = qc_progress_start(o->progress_s > 0 ? o->progress_s : 1.0, o->progress_s <= 0,
                                 s->jobs, s->duration_s);

    const char *dsn = o->dsn;
    const char *how = dsn ? "dsn" : "ephemeral";
    char env_vars[256] = "";
    char topo_dsn[512] = "";
    const char *topo_dir = qc_topology_dir(s);
    if (!dsn && topo_dir != NULL) {
        /* a replicated topology started by scripts/pg-replicated.sh */
        if ((rc = qc_topology_dsn(topo_dir, topo_dsn, sizeof topo_dsn, err)) != 0) {
            code = 2;
            goto out;
        }
        dsn = topo_dsn;
        how = "dsn";
    }
    if (!dsn && qc_target_env(env_vars, sizeof env_vars) > 0) {
        if (d == &qc_driver_pg) {
            /* libpq reads the PG* variables itself for what "" omits */
            dsn = "";
            how = "environment";
        } else {
            fprintf(stderr, "qchaos: %s ignored: engine '%s' is reached through ODBC (give it "
                            "--dsn)\n", env_vars, proto->engine);
            env_vars[0] = 0;
        }
    }
    if (!dsn) {
        char cleared[512];
        if (qc_target_env_clear(cleared, sizeof cleared) > 0 && d == &qc_driver_pg)
            fprintf(stderr, "qchaos: %s not used for the ephemeral server\n", cleared);
        if (ephemeral_start(&eph, proto->engine, s, err) != 0) {
            /* interrupted: nothing ran, nothing can be judged (as any
             * interrupted run: 4) */
            code = qc_interrupted ? 4 : err->code == QC_EINVAL ? 2 : 3;
            goto out;
        }
        dsn = eph.dsn;
    }
    if (s->replicated && topo_dir == NULL && eph.running)
        topo_dir = eph.dir;
    if (qc_nemesis_check(s, proto->engine, s->replicated ? topo_dir : eph.running ? eph.dir : NULL,
                         err) != 0) {
        code = 2;
        goto out;
    }
    if (d->open(dsn, &ctl, err) != 0)
        goto out;
    /* one run at a time on a database (owner.h): before anything is read
     * or touched; exit 3, the target is busy */
    if ((rc = qc_owner_lock(d, ctl, proto->engine, nshards > 1, &run_locked, err)) != 0)
        goto out;
    d->server_version(ctl, server, sizeof server);
    target = qc_target_json(d, ctl, how, !strcmp(how, "environment") ? env_vars : "", server);
    if (target) {
        char ts[256];
        qc_target_print(stderr, target);
        target_short(target, ts, sizeof ts);
        qc_progress_set_target(prog, ts);
    }

    /* --shard: shards 1..N-1 touch no table before shard 0 has set the run
     * up; they join it (shard.h) and leave setup, marks and teardown to it. */
    if (shard > 0) {
        fprintf(stderr, "qchaos: shard %d of %d: waiting for shard 0 to set up the run\n", shard,
                nshards);
        if ((rc = qc_shard_join(d, ctl, s->seed, shard, nshards, 120, err)) != 0)
            goto out;
        goto setup_done;
    }
    /* Nothing of the user's is touched: the protocol's teardown runs only
     * on tables qchaos created (owner.h). */
    if ((rc = qc_owner_check(d, ctl, proto->engine, o->allow_existing, &owner, err)) != 0) {
        code = rc == QC_EINVAL ? 2 : 3;
        goto out;
    }
    if (owner.kind == 0 && !eph.running)
        fprintf(stderr, "qchaos: warning: for engine '%s' qchaos cannot tell its tables from "
                        "yours: the protocol's teardown drops the tables it names\n",
                proto->engine);
    else if (owner.foreign[0])
        fprintf(stderr, "qchaos: warning: --allow-existing: running on tables qchaos did not "
                        "create: %s\n", owner.foreign);

    /* Setup: teardown first (a previous run may have been killed). */
    {
        qc_params p = {0};
        qc_result r = {0};
        qc_err ignore = {0};
        qc_protocol_run(d, ctl, proto, QC_STEP_TEARDOWN, &p, &r, &ignore);
        qc_result_clear(&r);
        if ((rc = qc_protocol_run(d, ctl, proto, QC_STEP_SETUP, &p, &r, err)) != 0) {
            qc_err_prefix(err, "%s: setup (line %d) failed", proto->steps[QC_STEP_SETUP].file,
                          proto->steps[QC_STEP_SETUP].line);
            code = (rc == QC_EDB && !strncmp(err->sqlstate, "42", 2)) ? 2 : 3;
            goto out;
        }
        qc_result_clear(&r);
        /* the coordination table before the mark, so it is marked too */
        if (nshards > 1 && (rc = qc_shard_create(d, ctl, s->seed, nshards, err)) != 0)
            goto out;
        if ((rc = qc_owner_mark(d, ctl, &owner, err)) != 0)
            goto out;
        /* after the mark: a witness refused (no such column) leaves only
         * marked tables, which the next run's teardown may drop; the side
         * table marks itself */
        if (wit && !s->adapter_command[0] &&
            ((rc = qc_witness_install(d, ctl, &wcfg, err)) != 0 ||
                    (rc = qc_witness_name_session(d, ctl, proto->engine, "qchaos-control",
                                                  err)) != 0)) {
            code = rc == QC_EINVAL ? 2 : 3;
            goto out;
        }
        wit_installed = wit && !s->adapter_command[0];
    }
setup_done:

    if (s->adapter_command[0]) {
        /* the library's own enqueuer sets up its schema and says hello
         * (library, version, what it exposes) before the ledger opens */
        if ((rc = qc_adapter_prepare(s, o->out_dir, o->worker_dsn ? o->worker_dsn : dsn, err)) !=
                0 ||
            (rc = qc_adapter_enqueuer_start(&hello, err)) != 0) {
            code = qc_err_exit_code(rc);
            goto out;
        }
        /* a library makes its own table (its migrations, in the enqueuer's
         * start): the witness goes on it after the hello, before enqueue */
        if (wit && ((rc = qc_witness_install(d, ctl, &wcfg, err)) != 0 ||
                    (rc = qc_witness_name_session(d, ctl, proto->engine, "qchaos-control",
                                                  err)) != 0)) {
            qc_adapter_enqueuer_stop();
            code = rc == QC_EINVAL ? 2 : 3;
            goto out;
        }
        wit_installed = wit;
    }
    snprintf(ledger_path, sizeof ledger_path, "%s/ledger.jsonl", o->out_dir);
    json_t *hdr = header_json(o, proto, server, target);
    if (wit) {
        json_object_set_new(hdr, "witness", qc_witness_header_json(&wcfg));
        /* with the witness on, its checkers are judged too (an empty list
         * judges every checker already) */
        json_t *judge = json_object_get(hdr, "checkers");
        if (json_array_size(judge) > 0) {
            json_array_append_new(judge, json_string("witness_agrees"));
            json_array_append_new(judge, json_string("witness_owner"));
        }
    }
    if (proto->missing != NULL)
        json_object_set_new(hdr, "missing", json_string(proto->missing));
    if (s->adapter_command[0]) {
        json_object_set_new(hdr, "adapter", qc_adapter_header(s, &hello));
        qc_adapter_columns(json_object_get(hdr, "columns"), &hello);
    }
    rc = qc_ledger_open(ledger_path, hdr, t0, &ledger, err);
    json_decref(hdr);
    if (rc != 0)
        goto out;
    qc_lbuf *lb = qc_ledger_buf(ledger);
    qc_lint_ledger(lb, s, proto);

    fprintf(stderr, "qchaos: seed %" PRIu64 ", scenario %s, protocol %s, %ld workers, %ld jobs\n",
            s->seed, s->name, proto->path, s->workers, s->jobs);
    qc_progress_phase(prog, QC_PHASE_ENQUEUE);
    qc_progress_attach(prog, NULL, &enqueued);
    /* the control session's random() is seeded too: an enqueue drawing on
     * it replays (qc_seed_session) */
    qc_seed_session(d, ctl, s->seed, -4, shard);
    if (s->adapter_command[0]) {
        rc = qc_adapter_enqueue(lb, s->jobs, 1, &job_ids, &njob_ids, err);
        qc_adapter_enqueuer_stop();
        if (rc != 0) {
            code = qc_err_exit_code(rc);
            qc_ledger_close(ledger, NULL); /* what was recorded is kept */
            ledger = NULL;
            goto out;
        }
        atomic_store(&enqueued, (long)njob_ids);
    } else if ((rc = enqueue_jobs(s, d, ctl, proto, lb, qc_shard_share(s->jobs, shard, nshards),
                                  0, shard, 0, &job_ids, &njob_ids, &enqueued, dsn, t0, err)) !=
               0) {
        code = rc == QC_EINVAL ? 2 : 3;
        goto out;
    }
    if (nshards > 1) {
        /* Every shard's jobs are in before any worker starts; then the
         * fault plan is built over all of them, as one process would. */
        int64_t *all = NULL;
        size_t nall = 0;
        if ((rc = qc_shard_set(d, ctl, shard, QC_SHARD_ENQUEUED, (long)njob_ids, err)) != 0 ||
            (rc = qc_shard_wait(d, &ctl, dsn, QC_SHARD_ENQUEUED, nshards, 300, err)) != 0 ||
            (rc = read_job_ids(d, ctl, proto, &all, &nall, err)) != 0) {
            qc_err_prefix(err, "shard %d of %d", shard, nshards);
            qc_ledger_close(ledger, NULL); /* what was recorded is kept */
            ledger = NULL;
            goto out;
        }
        plan = qc_fault_plan_create(s->seed, s->faults, all, nall);
        free(all);
    } else {
        plan = qc_fault_plan_create(s->seed, s->faults, job_ids, njob_ids);
    }
    if (!plan) {
        qc_err_set(err, QC_ENOMEM, "out of memory");
        goto out;
    }
    for (int k = 1; k < QC_FAULT_COUNT && shard == 0; k++) {
        if (qc_fault_plan_count(plan, (qc_fault_kind)k) > 0) {
            json_t *e = json_object();
            json_object_set_new(e, "type", json_string("note"));
            json_object_set_new(e, "note", json_string("fault plan"));
            json_object_set_new(e, "fault", json_string(qc_fault_name((qc_fault_kind)k)));
            json_object_set_new(e, "planned",
                                json_integer(qc_fault_plan_count(plan, (qc_fault_kind)k)));
            qc_ledger_append(lb, e);
        }
    }

    /* with copies of a message, an op key names one copy's deliveries: the
     * sink never dedups one copy's effect against another's (C23) */
    sink = qc_sink_create(s->sink_idempotent, copies_on(s));
    /* this process's workers: global ids shard, shard + N, ... (shard.h) */
    const long my_workers = qc_shard_share(s->workers, shard, nshards);
    workers = calloc((size_t)(my_workers > 0 ? my_workers : 1), sizeof *workers);
    pids = calloc((size_t)s->workers + 1, sizeof *pids);
    /* issue 17: listen session ids, then the nemesis' close requests */
    listen_slots = calloc((size_t)s->workers * 2, sizeof *listen_slots);
    if (!sink || !workers || !pids || !listen_slots) {
        qc_err_set(err, QC_ENOMEM, "out of memory");
        goto out;
    }
    /* Workers and the reaper are the application: behind the pooler when
     * there is one.  Setup, monitor, snapshot and the nemesis go direct. */
    const char *app_dsn = o->worker_dsn ? o->worker_dsn : dsn;
    if (!strcmp(s->pooler, "pgbouncer") && !o->worker_dsn) {
        if (!eph.running) {
            qc_err_set(err, QC_EINVAL,
                       "%s: [topology] pooler = pgbouncer starts PgBouncer in front of the "
                       "ephemeral PostgreSQL; with --dsn, give your pooler with --worker-dsn",
                       s->path);
            code = 2;
            goto out;
        }
        snprintf(pooler_dir, sizeof pooler_dir, "%s/pgbouncer", eph.dir);
        /* every worker's connection (and its listen connection), the
         * reaper's, and room for incarnations whose old socket the pooler
         * has not seen close yet */
        long clients = s->workers * (proto->steps[QC_STEP_LISTEN].present ? 2 : 1) + 64;
        if (pooler_start(pooler_dir, dsn, clients, s->pool_size, pooler_dsn, sizeof pooler_dsn,
                         err) != 0)
            goto out;
        pooler_running = 1;
        app_dsn = pooler_dsn;
    }
    sh.sc = s;
    sh.drv = d;
    sh.proto = proto;
    sh.dsn = app_dsn;
    sh.dsn_role = o->worker_dsn ? "--worker-dsn"
                  : pooler_running ? "the PgBouncer of [topology] pooler"
                                   : NULL;
    sh.ledger = ledger;
    sh.sink = sink;
    sh.plan = plan;
    sh.pids = pids;
    if (proto->steps[QC_STEP_LISTEN].present) {
        sh.listen_pids = listen_slots;
        sh.listen_close = listen_slots + s->workers;
    }
    sh.t0 = t0;
    sh.no_prepare = !strcmp(s->pooler, "pgbouncer");
    sh.txn_model = !strcmp(proto->model, "transaction");
    sh.stmt_timeout_ms = qc_scenario_statement_timeout_ms(s);
    if (s->network.proxy && (rc = proxy_start(s, proto, app_dsn, t0, ledger, &sh, err)) != 0) {
        code = rc == QC_EINVAL ? 2 : 3;
        goto out;
    }
    sh.shards = nshards;
    if ((rc = make_schedule(o, proto, !strcmp(proto->model, "transaction"), ledger, lb, &sched,
                            err)) != 0) {
        code = rc == QC_EINVAL || rc == QC_EIO ? 2 : 3;
        goto out;
    }
    sh.sched = sched;
    if (sched != NULL && o->replay != NULL && sh.proxy != NULL)
        /* an answer's time on the wire overlaps the next actions, as it
         * did in the run (decision 1132) */
        qc_proxy_set_answer_hook(sh.proxy, server_answered_fn, sched);
    if (sched != NULL && o->replay != NULL && sh.proxy != NULL && s->network.partition[0]) {
        /* the window comes where it came in the run (decision 1111) */
        panchor.sched = sched;
        partition_edges(o->replay, panchor.seq);
        if (panchor.seq[0] >= 0)
            qc_proxy_set_anchor(sh.proxy, partition_anchor_fn, &panchor);
    }
    lk.d = d;
    lk.dsn = dsn;
    lk.pids = pids;
    lk.workers = s->workers;
    if (sched != NULL && !strcmp(proto->engine, "postgres") && !sh.no_prepare)
        qc_sched_set_lock_check(sched, lock_check_fn, &lk);
    atomic_store(&sh.chaos, 1);
    server_count count_before = {0};
    /* --shard: no server count (the server's counter is shared by every
     * shard, whose workers start at moments this one cannot see) */
    if (!strcmp(proto->engine, "postgres") && nshards <= 1)
        server_count_read(d, ctl, proto, &count_before);
    qc_progress_attach(prog, &sh, &enqueued);
    qc_progress_phase(prog, QC_PHASE_CHAOS);
    qc_phase phase = QC_PHASE_CHAOS;
    /* the harness's own CPU and memory from here (workers connecting
     * included) to the workers' join: metrics.harness (usage.h) */
    qc_usage use_start, use_drained = {0}, use_end;
    qc_usage_now(&use_start);
    for (long i = 0; i < my_workers; i++) {
        if (actor->start(&workers[i], &sh, (int)(shard + i * nshards)) != 0) {
            qc_shared_fatal(&sh, QC_EIO, "cannot start worker threads");
            break;
        }
        nstarted++;
    }
    if (proto->steps[QC_STEP_REAP].present && !atomic_load(&sh.fatal) && shard == 0) {
        if (qc_worker_start(&reaper, &sh, -1) == 0)
            reaper_started = 1;
    }
    if (!reaper_started)
        qc_sched_exit(sched, QC_SCHED_REAPER); /* no reaper: nobody waits for it */
    feed.backlog = shard == 0 ? backlog_size(s) : 0; /* the feeder: shard 0's */
    if (shard == 0 && ((s->feed_bursts > 0 && s->feed_jobs > 0) || feed.backlog > 0)) {
        feed.sh = &sh;
        feed.dsn = dsn;
        feed.lb = qc_ledger_buf(ledger);
        feed.total = &enqueued;
        if (feed.backlog > 0) {
            char what[160];
            snprintf(what, sizeof what, "feed: a backlog of %ld jobs kept during the %.1f s "
                     "chaos phase (--duration)", feed.backlog, s->duration_s);
            json_t *e = json_object();
            json_object_set_new(e, "type", json_string("note"));
            json_object_set_new(e, "note", json_string(what));
            qc_ledger_append(lb, e);
        }
        qc_slot_init(&feed.slot);
        if (feed.lb && pthread_create(&feed.thread, NULL, feeder_main, &feed) == 0)
            feed.started = 1;
        else
            qc_shared_fatal(&sh, QC_EIO, "cannot start the feeder thread");
    } else {
        atomic_store(&feed.done, 1);
    }
    if (shard == 0 &&
        qc_nemesis_start(&nem, &sh, dsn, s->replicated ? topo_dir : eph.running ? eph.dir : NULL,
                         err) != 0) {
        qc_shared_fatal(&sh, err->code, err->msg);
    }

    /* Chaos, then drain: sample the monitor until the queue is empty or the
     * drain timeout passes.  The control connection reconnects as often as
     * it must (the server may be restarting). */
    double start = qc_clock_ms();
    int drained = 0, timed_out = 0;
    double drained_at = 0;
    double sched_wait_s = 0; /* s: how long the schedule held its actors after the chaos
                                phase (at most 120) */
    int sched_done = 0;      /* the schedule was done, released or abandoned */
    monitor_sample m = {0};
    /* With a monitor_live step (issue 16) most samples are live ones, O(live
     * rows); the full monitor (done counted by reading the table) comes
     * every monitor_full_interval_ms, at least 50 round trips of its own
     * apart (at most 2 % of the control connection's time), and once more
     * at the end, so the ledger's last sample has done. */
    int has_live = proto->steps[QC_STEP_MONITOR_LIVE].present &&
                   proto->steps[QC_STEP_MONITOR].present;
    double full_at = -1e300, full_cost_ms = 0; /* client ms */
    int last_full = 0;
    while (!atomic_load(&sh.stop)) {
        qc_clock_sleep_ms((double)s->monitor_interval_ms);
        double now = qc_clock_ms();
        double el = (now - start) / 1000.0;
        if (qc_interrupted)
            break;
        if (!ctl || !d->is_ok(ctl)) {
            if (ctl)
                d->close(ctl);
            ctl = NULL;
            qc_err e2 = {0};
            if (d->open(dsn, &ctl, &e2) != 0)
                ctl = NULL;
            relock(d, ctl, proto->engine, nshards > 1, run_locked);
        }
        m.ok = 0;
        if (ctl) {
            int full = !has_live ||
                       now - full_at >= fmax((double)s->monitor_full_interval_ms, 50.0 * full_cost_ms);
            double sent = qc_clock_ms();
            sample_monitor(d, ctl, proto, lb, !full, &m);
            if (full && m.ok) {
                full_at = sent;
                full_cost_ms = qc_clock_ms() - sent;
            }
            last_full = full && m.ok;
        }
        /* worker_progress's samples (sessions.h): only where a worker's
         * published id is its own server session (no pooler between). */
        if (ctl && !s->adapter_command[0] && strcmp(s->pooler, "pgbouncer") && !sh.dsn_role)
            qc_sessions_sample(d, ctl, proto->engine, pids, s->workers, sh.t0, lb);
        int chaos_over = s->duration_s <= 0 || el >= s->duration_s;
        if (chaos_over && s->duration_s > 0 && atomic_load(&sh.chaos)) {
            /* heal: faults stop, stalled workers wake */
            atomic_store(&sh.chaos, 0);
            json_t *e = json_object();
            json_object_set_new(e, "type", json_string("note"));
            json_object_set_new(e, "note", json_string("heal: chaos phase over"));
            qc_ledger_append(lb, e);
            qc_progress_phase(prog, phase = QC_PHASE_HEAL);
        }
        /* heal lasts until no lease a fault left behind is still expired */
        if (phase == QC_PHASE_HEAL && (!m.ok || m.expired <= 0))
            qc_progress_phase(prog, phase = QC_PHASE_DRAIN);
        if (!drained && chaos_over && m.ok && m.ready == 0 && m.inflight == 0 &&
            atomic_load(&feed.done) && atomic_load(&sh.connected) == nstarted &&
            atomic_load(&sh.stalled) == 0 &&
            qc_sched_settled(sched) &&
            /* a queue drained on a primary about to be switched is not
             * (once the chaos phase is over, a switch not begun never
             * will be) */
            (!nem.started || !qc_scenario_switches_primary(s) ||
             atomic_load(&nem.switch_state) == 2 ||
             (atomic_load(&nem.switch_state) == 0 && !atomic_load(&sh.chaos)))) {
            drained = 1;
            drained_at = el;
            if (nshards > 1) {
                qc_err ignore = {0};
                qc_shard_set(d, ctl, shard, QC_SHARD_DRAINED, -1, &ignore);
            }
            if (s->idle_tail_s > 0) {
                qc_usage_now(&use_drained); /* the idle tail's own cost */
                json_t *e = json_object();
                json_object_set_new(e, "type", json_string("note"));
                json_object_set_new(e, "note", json_string("drained: idle tail begins"));
                qc_ledger_append(lb, e);
            }
        }
        if (drained && el >= drained_at + s->idle_tail_s)
            break;
        /* The drain timeout does not run while a schedule still holds its
         * actors (a job the schedule holds is not lost): the schedule's own
         * hold timeout abandons it first, and the drain timeout counts
         * from then on (issue 12: a two-statement claim held by a script
         * was judged a lost job). */
        if (sched != NULL && !sched_done) {
            if (qc_sched_settled(sched))
                sched_done = 1;
            else if (chaos_over)
                sched_wait_s = fmin(120.0, el - s->duration_s);
        }
        if (!drained && chaos_over && el >= s->duration_s + sched_wait_s + s->drain_timeout_s) {
            timed_out = 1;
            break;
        }
    }
    if (has_live && !last_full && ctl && d->is_ok(ctl) && !qc_interrupted) {
        monitor_sample last = {0};
        sample_monitor(d, ctl, proto, lb, 0, &last); /* the closing full sample */
    }
    atomic_store(&sh.chaos, 0);
    {
        /* what comes after this the stop made (silent connections reset,
         * sleepers woken): a replay does not order it (decision 1135) */
        json_t *e = json_object();
        json_object_set_new(e, "type", json_string("note"));
        json_object_set_new(e, "note", json_string("run stopping"));
        json_object_set_new(e, "worker", json_integer(-3));
        qc_ledger_append(lb, e);
    }
    /* nobody waits at a point once the run stops; a replay's entries left
     * are recorded before the stop wakes anyone */
    qc_sched_finish(sched);
    qc_clock_stop(&sh.stop);
    if (sched != NULL) {
        int done_n, total_n, blocked_n, wire_n;
        qc_sched_stats(sched, &done_n, &total_n, &blocked_n, &wire_n);
        if (qc_sched_abandoned(sched))
            fprintf(stderr, "qchaos: schedule abandoned: %s\n", qc_sched_abandoned(sched));
        else if (qc_sched_released(sched))
            fprintf(stderr, "qchaos: schedule released after %d of %d steps: %s\n", done_n,
                    total_n, qc_sched_released(sched));
        else if (total_n > 0 && wire_n > 0)
            fprintf(stderr,
                    "qchaos: schedule: %d of %d steps carried out, %d blocked, %d let go at the "
                    "server's answer (on the wire)\n",
                    done_n, total_n, blocked_n, wire_n);
        else if (total_n > 0)
            fprintf(stderr, "qchaos: schedule: %d of %d steps carried out, %d blocked\n", done_n,
                    total_n, blocked_n);
    }
    if (qc_interrupted) {
        fprintf(stderr, "qchaos: interrupted: cancelling the statements in flight\n");
        cancel_all(&sh, workers, nstarted, reaper_started ? &reaper : NULL, &feed, &nem);
    }
    for (int i = 0; i < nstarted; i++)
        actor->join(&workers[i]);
    if (reaper_started)
        qc_worker_join(&reaper);
    if (feed.started)
        pthread_join(feed.thread, NULL);
    feed.started = 0;
    int nem_started = nem.started;
    qc_nemesis_join(&nem);
    proxy_stop(&sh, lb);
    /* A server fault the scenario asked for but the run ended before: say
     * so, in the ledger and here, so a PASS is not read as surviving it. */
    if (nem_started && !qc_interrupted &&
        ((s->restart_at_s > 0 && !nem.restarted) || (s->pause_at_s > 0 && !nem.paused) ||
         (qc_scenario_switches_primary(s) && !nem.switched))) {
        char what[160];
        snprintf(what, sizeof what, "the scenario's server %s at %.1f s never happened: the run's "
                 "chaos phase ended first",
                 qc_scenario_switches_primary(s) ? "switch of the primary"
                 : s->pause_at_s > 0 && !nem.paused ? "pause"
                                                     : "restart",
                 qc_scenario_switches_primary(s)
                     ? s->failover_at_s + s->switchover_at_s + s->unfenced_primary_at_s
                 : s->pause_at_s > 0 && !nem.paused ? s->pause_at_s
                                                     : s->restart_at_s);
        fprintf(stderr, "qchaos: warning: %s\n", what);
        if (lb != NULL) {
            json_t *e = json_object();
            json_object_set_new(e, "type", json_string("note"));
            json_object_set_new(e, "note", json_string(what));
            qc_ledger_append(lb, e);
        }
    }
    if (pooler_running) {
        /* before the ephemeral server (and the folder holding the pooler's
         * pid file) goes away */
        pooler_stop(pooler_dir);
        pooler_running = 0;
    }
    if (count_before.ok && nem.switched)
        qc_topology_note_switch(lb); /* the claim count was read on another server */
    else if (count_before.ok)
        server_count_record(d, ctl, proto, &count_before, lb, eph.running);
    if (nshards > 1 && !atomic_load(&sh.fatal)) {
        /* this shard's workers are gone; shard 0 snapshots once all are */
        qc_err serr = {0};
        if (!ctl || !d->is_ok(ctl) ||
            qc_shard_set(d, ctl, shard, QC_SHARD_STOPPED, -1, &serr) != 0) {
            for (int tries = 0; tries < 50; tries++) {
                if (ctl)
                    d->close(ctl);
                ctl = NULL;
                if (d->open(dsn, &ctl, &serr) == 0 &&
                    (relock(d, ctl, proto->engine, 1, run_locked),
                     qc_shard_set(d, ctl, shard, QC_SHARD_STOPPED, -1, &serr) == 0))
                    break;
                qc_clock_sleep_ms(200);
            }
        }
        if (shard == 0 &&
            qc_shard_wait(d, &ctl, dsn, QC_SHARD_STOPPED, nshards,
                          s->duration_s + s->drain_timeout_s + 60, &serr) != 0) {
            char what[900];
            snprintf(what, sizeof what, "shards: the final snapshot was taken although %s",
                     serr.msg);
            fprintf(stderr, "qchaos: warning: %s\n", what);
            json_t *e = json_object();
            json_object_set_new(e, "type", json_string("note"));
            json_object_set_new(e, "note", json_string(what));
            qc_ledger_append(lb, e);
        }
    }
    double elapsed = (qc_clock_ms() - start) / 1000.0;
    qc_usage_now(&use_end);

    if (atomic_load(&sh.fatal)) {
        code = qc_err_exit_code(sh.fatal_code);
        qc_err_set(err, sh.fatal_code, "%s", sh.fatal_msg);
        /* keep the ledger: what was recorded is not lost */
        qc_ledger_close(ledger, NULL);
        ledger = NULL;
        goto out;
    }

    long snap_rows = 0;
    for (int tries = 0; tries < 150 && (!ctl || !d->is_ok(ctl)); tries++) {
        if (ctl)
            d->close(ctl);
        ctl = NULL;
        qc_err e2 = {0};
        if (d->open(dsn, &ctl, &e2) != 0) {
            ctl = NULL;
            qc_clock_sleep_ms(200);
        } else {
            relock(d, ctl, proto->engine, nshards > 1, run_locked);
        }
    }
    if (!ctl) {
        qc_err_set(err, QC_ECONN, "the database did not come back for the final snapshot");
        qc_ledger_close(ledger, NULL);
        ledger = NULL;
        goto out;
    }
    if (nem.switched && (d->close(ctl), d->open(dsn, &ctl, err) != 0)) {
        /* the primary was switched: the snapshot is of the node that is
         * primary now, on a session opened after the switch (the control
         * session may still be on the old one, or dead without knowing) */
        ctl = NULL;
        qc_err_prefix(err, "final snapshot after the %s", "switch of the primary");
        qc_ledger_close(ledger, NULL);
        ledger = NULL;
        goto out;
    }
    if (nem.switched)
        relock(d, ctl, proto->engine, nshards > 1, run_locked);
    if (shard == 0 && write_snapshot(d, ctl, proto, lb, &snap_rows, err) != 0) {
        qc_err_prefix(err, "final snapshot");
        qc_ledger_close(ledger, NULL);
        ledger = NULL;
        goto out;
    }
    if (wit) {
        long wrows = 0;
        qc_err werr = {0};
        if (qc_witness_read(d, ctl, &wcfg, lb, &wrows, &werr) != 0)
            fprintf(stderr, "qchaos: warning: the witness was read only in part (%ld rows): %s\n",
                    wrows, werr.msg);
        else
            fprintf(stderr, "qchaos: witness: %ld row changes of %s read\n", wrows, wcfg.table);
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
    if (nshards > 1 && shard == 0) {
        qc_err ignore = {0};
        qc_shard_set(d, ctl, 0, QC_SHARD_FINISHED, -1, &ignore);
        if (!o->keep)
            qc_shard_drop(d, ctl);
    }
    if (!o->keep && shard == 0) {
        qc_params p = {0};
        qc_result r = {0};
        qc_err ignore = {0};
        if (wit_installed)
            qc_witness_remove(d, ctl, &wcfg);
        wit_installed = 0;
        qc_protocol_run(d, ctl, proto, QC_STEP_TEARDOWN, &p, &r, &ignore);
        qc_result_clear(&r);
        char note[1200];
        qc_owner_finish(d, ctl, &owner, note, sizeof note);
        if (note[0])
            fprintf(stderr, "qchaos: %s\n", note);
    }
    d->close(ctl);
    ctl = NULL;
    ephemeral_stop(&eph);
    if (nshards > 1) {
        /* One shard's ledger alone is not the run: the merged ledgers are
         * audited (qchaos audit LEDGER...), never one of them. */
        printf("qchaos: shard %d of %d: seed %" PRIu64 ", %ld jobs enqueued here, %ld of %ld "
               "workers, %.1f s%s\n",
               shard, nshards, s->seed, atomic_load(&enqueued), my_workers, s->workers, elapsed,
               drained ? "" : (timed_out ? ", DRAIN TIMED OUT" : ", interrupted"));
        printf("qchaos: shard %d of %d: ledger in %s; judge the run with: qchaos audit --out DIR "
               "followed by every shard's ledger\n",
               shard, nshards, ledger_path);
        code = qc_interrupted ? 4 : 0;
        goto out;
    }

    json_t *metrics = json_object();
    json_object_set_new(metrics, "scenario", json_string(s->name));
    json_object_set_new(metrics, "scenario_file", json_string(s->path));
    json_object_set_new(metrics, "protocol", json_string(proto->path));
    json_object_set_new(metrics, "engine", json_string(proto->engine));
    if (proto->tested != NULL)
        json_object_set_new(metrics, "tested_where", json_string(proto->tested));
    json_t *ver = json_object();
    json_object_set_new(ver, "qchaos", json_string(QC_VERSION));
    json_object_set_new(ver, "server", json_string(server));
    json_object_set_new(metrics, "versions", ver);
    if (target)
        json_object_set(metrics, "target", target);
    json_t *mm = json_object();
    json_object_set_new(mm, "elapsed_s", json_real(qc_round(elapsed, 0.001)));
    json_object_set_new(mm, "workers", json_integer(s->workers));
    json_object_set_new(mm, "jobs", json_integer(atomic_load(&enqueued)));
    json_object_set_new(mm, "jobs_before_chaos", json_integer((json_int_t)njob_ids));
    if (feed.backlog > 0)
        json_object_set_new(mm, "backlog", json_integer(feed.backlog));
    if (s->duration_s > 0)
        json_object_set_new(mm, "duration_s", json_real(qc_round(s->duration_s, 0.001)));
    json_object_set_new(mm, "claims", json_integer(atomic_load(&sh.claims)));
    json_object_set_new(mm, "empty_claims", json_integer(atomic_load(&sh.empty_claims)));
    json_object_set_new(mm, "completes_ok", json_integer(atomic_load(&sh.completes_ok)));
    json_object_set_new(mm, "completes_zero_rows", json_integer(atomic_load(&sh.completes_zero)));
    json_object_set_new(mm, "own_lease_gave_up", json_integer(atomic_load(&sh.own_lease_gave_up)));
    json_object_set_new(mm, "errors", json_integer(atomic_load(&sh.errors)));
    json_object_set_new(mm, "reaped", json_integer(atomic_load(&sh.reaped)));
    json_object_set_new(mm, "drained", json_boolean(drained));
    json_object_set_new(mm, "interrupted", json_boolean(qc_interrupted != 0));
    json_object_set_new(mm, "harness", qc_usage_json(&use_start, &use_end, atomic_load(&enqueued)));
    if (use_drained.wall_ms > 0)
        json_object_set_new(mm, "harness_idle_tail", qc_usage_json(&use_drained, &use_end, 0));
    json_object_set_new(metrics, "metrics", mm); /* the audit adds work_s and jobs_per_s */
    json_object_set_new(metrics, "description", json_string(s->description));
    json_t *planned = json_object();
    for (int k = 1; k < QC_FAULT_COUNT; k++)
        if (qc_fault_plan_count(plan, (qc_fault_kind)k) > 0)
            json_object_set_new(planned, qc_fault_name((qc_fault_kind)k),
                                json_integer(qc_fault_plan_count(plan, (qc_fault_kind)k)));
    json_object_set_new(metrics, "faults_planned", planned);
    if (o->argv_line)
        json_object_set_new(metrics, "command", json_string(o->argv_line));

    const char *paths[1] = {ledger_path};
    char verdict_line[1024] = "";
    qc_progress_phase(prog, QC_PHASE_AUDIT);
    /* The table goes to a buffer and out once the progress has stopped, so
     * that no progress line lands between its rows. */
    FILE *tf = prog ? open_memstream(&table, &table_len) : NULL;
    code = qc_audit_ex(paths, 1, o->out_dir, metrics, tf ? tf : stdout, verdict_line,
                       sizeof verdict_line, err);
    if (tf)
        fclose(tf);
    qc_progress_stop(prog);
    prog = NULL;
    if (table)
        fputs(table, stdout);
    double work_s = json_real_value(json_object_get(mm, "work_s"));
    double jps = json_real_value(json_object_get(mm, "jobs_per_s"));
    if (code == 0 || code == 1 || code == 4) {
        char note[256] = "";
        qc_err rerr = {0};
        if (qc_report_write(o->out_dir, paths, 1, o->allow_inconclusive, note, sizeof note,
                            &rerr) != 0)
            fprintf(stderr, "qchaos: reports not written: %s\n", rerr.msg);
        else if (note[0])
            fprintf(stderr, "qchaos: %s\n", note);
    }
    /* a work interval under 0.1 s keeps its milliseconds ("over 0.034 s", not "0.0") */
    printf("qchaos: seed %" PRIu64 ", %ld jobs, %ld workers, %.1f s, %.0f jobs/s over %.*f s of "
           "work (first claim to last complete)%s\n",
           s->seed, atomic_load(&enqueued), s->workers, elapsed, jps,
           work_s > 0 && work_s < 0.1 ? 3 : 1, work_s,
           drained ? "" : (timed_out ? ", DRAIN TIMED OUT" : ", interrupted"));
    json_decref(metrics);
    long nerr = atomic_load(&sh.errors);
    fflush(stdout); /* the summary line first, when both go to one file */
    if (nerr > 0) {
        pthread_mutex_lock(&sh.fatal_mu);
        fprintf(stderr, "qchaos: %ld requests failed or lost their answer; the first: %s\n", nerr,
                sh.first_error);
        pthread_mutex_unlock(&sh.fatal_mu);
    }
    printf("qchaos: results in %s/ (ledger.jsonl, results.json, junit.xml, report.html, "
           "report.md)\n",
           o->out_dir);
    if (code == 1 && o->argv_line) {
        printf("qchaos: repeat with: %s\n", o->argv_line);
        /* its --out is this run's folder, which a run refuses (exit 2)
         * without --force: say so where the command is (a newcomer's
         * reading) */
        const char *fw = strstr(o->argv_line, " --force");
        if (fw == NULL || (fw[8] != ' ' && fw[8] != '\0'))
            printf("qchaos: (its --out is this run's folder: add --force to overwrite it, or "
                   "give another --out to keep it)\n");
    }
    if (verdict_line[0])
        printf("%s\n", verdict_line); /* the last line, whatever came before */

out:
    qc_sched_release(sched);
    qc_progress_stop(prog);
    free(table);
    if (workers && atomic_load(&sh.stop) == 0) {
        qc_clock_stop(&sh.stop);
        for (int i = 0; i < nstarted; i++)
            actor->join(&workers[i]);
        if (reaper_started)
            qc_worker_join(&reaper);
    }
    if (feed.started) {
        qc_clock_stop(&sh.stop);
        pthread_join(feed.thread, NULL);
    }
    qc_nemesis_join(&nem);
    qc_proxy_destroy(sh.proxy); /* before the ledger closes: its thread appends */
    sh.proxy = NULL;
    qc_adapter_enqueuer_stop();
    qc_adapter_hello_free(&hello);
    if (pooler_running)
        pooler_stop(pooler_dir);
    int recorded = ledger != NULL;
    if (ledger)
        qc_ledger_close(ledger, NULL);
    if (ctl)
        d->close(ctl);
    ephemeral_stop(&eph);
    /* A run that failed before its ledger was opened (the database
     * unreachable: exit 3; bad input found late: 2) recorded nothing: the
     * results folder it created is removed again, so that no empty folder
     * reads as a run (rmdir: only when it is still empty). */
    if (made_out && !recorded && code != 0)
        rmdir(o->out_dir);
    free(workers);
    free(pids);
    free(listen_slots);
    free(job_ids);
    qc_fault_plan_destroy(plan);
    qc_sched_free(sched);
    if (lk.c != NULL)
        lk.d->close(lk.c);
    qc_sink_destroy(sink);
    qc_protocol_destroy(proto);
    json_decref(target);
    pthread_mutex_destroy(&sh.fatal_mu);
    qc_driver_set_session_time_zone(NULL, NULL); /* every thread of the run has ended */
    return code;
}
