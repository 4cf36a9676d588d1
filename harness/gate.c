/*
 * gate.c - `qchaos gate PROTOCOL` (gate.h): a battery of scenarios, each
 * opening one bug class's window on purpose, run against one protocol.
 *
 * Which scenarios: those of the protocol's model (lease or transaction)
 * and engine, each listed with the checkers it is there for, so the table
 * says what each run can show.  Every run is a child process (as in the
 * mutation matrix: a crash of one run is reported, not fatal); verdicts are
 * read back from each run's results.json, never re-derived.
 */
#include "gate.h"
#include "audit.h"
#include "clock.h"
#include "mutation.h"
#include "scenario.h"
#include "../backends/protocol.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gate_scenario {
    const char *file;  /* under the data folder's scenarios/ */
    const char *model; /* "lease", "transaction" or NULL: both */
    const char *why;   /* the bug classes it opens a window for */
    int pg_only;       /* needs PostgreSQL (a pooler, pg_stat_statements) */
    int groups;        /* only with --groups */
} gate_scenario;

static const gate_scenario battery[] = {
    {"gate/stale_complete.ini", "lease",
     "stale renew / complete accepted (stale_token_rejected, no_early_reap)", 0, 0},
    {"gate/stale_fail.ini", "lease", "stale fail accepted (stale_token_rejected)", 0, 0},
    {"gate/contention.ini", NULL, "two workers take one job (exclusive_claim, double_complete)",
     0, 0},
    {"scripts/naive_race.ini", NULL,
     "scripted: two claims between their read and their write (exclusive_claim)", 0, 0},
    {"scripts/lock_wait.ini", NULL,
     "scripted: a claim's write waiting for another's uncommitted row (exclusive_claim)", 0, 0},
    {"scripts/kill_reclaim.ini", "lease",
     "scripted: a kill after claim, the reap, the next claim (no_early_reap, no_lost_jobs)", 0,
     0},
    {"scripts/c09_rescuer.ini", "lease",
     "scripted: a rescuer between its read and its write while the owner completes (C09)", 0,
     0},
    {"scripts/reap_snapshot_race.ini", "lease",
     "scripted: a reaper pass meets a complete held before its COMMIT, a one-statement reaper "
     "that writes by id from an unlocked read (double_complete)",
     0, 0},
    {"scripts/c04_aba.ini", NULL,
     "scripted: a claim between its read and its write while another worker claims and fails "
     "the job (C04: retry_delay)",
     0, 0},
    /* model "renew": lease protocols whose workers renew with the renew
     * step (a heartbeat step replaces it while they work: decision 968) */
    {"scripts/renew_toctou.ini", "renew",
     "scripted: a renew held between its token check and its write while the job is reaped and "
     "claimed again (stale_token_rejected)",
     0, 0},
    {"gate/late_renew.ini", "renew",
     "a heartbeat renew just after the complete revives the done job (double_complete)", 0, 0},
    {"scripts/reap_renew_race.ini", "renew",
     "scripted: a reaper between its read and its write while the owner renews (no_early_reap)",
     0, 0},
    {"scripts/renew_after_reap.ini", "renew",
     "scripted: a stale renew between the reap of its job and its next claim (exclusive_claim)",
     0, 0},
    {"scripts/renew_meets_reap_commit.ini", "renew",
     "scripted: the owner's renew waits on the reaper's uncommitted reap (exclusive_claim)", 0,
     0},
    {"scripts/c01_snapshot.ini", "transaction",
     "scripted: a claim's snapshot taken before another worker completes the job (C01)", 0, 0},
    {"kill_after_claim.ini", NULL,
     "recovery, early reap, lost or phantom jobs (recovery, no_early_reap, no_lost_jobs)", 0, 0},
    {"kill_after_effect.ini", "lease", "an unstable op key (effects_once)", 0, 0},
    {"gate/lease_granted.ini", "lease",
     "a lease shorter than the lease_ms asked for: a job reaped mid-work and run twice "
     "(effects_once)",
     0, 0},
    {"lost_ack.ini", NULL, "a lost answer to a committed complete (acked_durable, "
                           "no_false_success)", 0, 0},
    {"poison.ini", "lease",
     "no dead letter, no error kept, a retry before its delay (bounded_failure, retry_delay)", 0,
     0},
    {"max_attempts.ini", "lease", "max_attempts not honoured (no_lost_jobs, bounded_failure)", 0,
     0},
    {"cases/c12_poison_crash.ini", "lease", "a crash loop never dead-lettered (C12)", 0, 0},
    {"cases/c02_batch_limit.ini", "lease", "a batch claim larger than asked for (batch_bound)", 0,
     0},
    {"gate/batch_poison.ini", "lease",
     "a fail or reap of one job of a batch putting back the others still held (exclusive_claim)",
     0, 0},
    {"cases/c09_rescuer.ini", "lease", "a rescuer overwriting a completion (C09)", 0, 0},
    {"cases/c03_pooler.ini", "lease", "session state behind a transaction pooler (C03)", 1, 0},
    {"idle.ini", "lease", "a hot loop on an empty queue (bounded_idle_polling)", 1, 0},
    {"txn.ini", "transaction", "two open claims of one job (exclusive_claim)", 0, 0},
    {"cases/c01_snapshot_claim.ini", "transaction", "a claim from an old snapshot (C01)", 0, 0},
    {"slow_work.ini", "lease",
     "work longer than a lease: a worker that does not renew (exclusive_run, effects_once)", 0,
     0},
    {"stall_in_work.ini", "lease",
     "a worker frozen mid-work whose renew is refused carries on (exclusive_run)", 0, 0},
    {"grouped.ini", "lease", "a group run twice at once or out of order (group_*)", 0, 1},
    {"scripts/group_head_race.ini", "lease",
     "scripted: a claim past a group's head locked by a claim held before its commit "
     "(group_exclusive, group_order)",
     0, 1},
    {"network_lost_ack_fail.ini", "lease",
     "the proxy drops a committed complete's answer, the worker fails the job (effects_once)",
     1, 0},
    {"network_half_open.ini", "lease",
     "a half-open connection: a worker without a client timeout wedges (no_lost_jobs)", 1, 0},
    {"network_latency_lease.ini", "lease",
     "network latency longer than the lease allows: late completes refused (no_false_success)",
     1, 0},
    {"network_partition.ini", "lease",
     "two workers cut off longer than the lease: their retried completes refused "
     "(no_false_success)", 1, 0},
    {"network_bandwidth.ini", "lease",
     "a slow link and a large claim answer: a worker's own lease measured from the answer "
     "(own_lease)",
     1, 0},
    {"network_reset.ini", "lease",
     "a reset connection: the retried complete must still be the owner's (no_early_reap)", 1, 0},
    {"cases/c20_wedged.ini", "lease",
     "a worker left in a transaction after an error, every request failing (C20, "
     "worker_progress)", 0, 0},
    {"cases/c19_pop_deadlock.ini", "lease",
     "a claim that deadlocks with the complete of a finished job: the refused complete's job runs "
     "again (C19, effects_once)",
     0, 0},
    {"clock_skew.ini", "lease", "leases stamped on a skewed client clock (C24, effects_once)", 0,
     0},
    {"clock_skew_reaper.ini", "lease",
     "a reaper on a skewed clock takes live leases (C24, no_early_reap)", 0, 0},
    /* model "heartbeat": lease protocols that keep leases alive, with a
     * heartbeat step or a renew step (decisions 961, 1102) */
    {"gate/heartbeat_restart.ini", "heartbeat",
     "a restarted worker's heartbeat or renews extending its dead incarnation's leases "
     "(recovery)",
     0, 0},
    /* model "listen": lease protocols with a listen step only (issue 17) */
    {"listen.ini", "listen",
     "LISTEN wake-ups under listen kills and lost notifications: a hot loop on a dead listen "
     "connection (bounded_idle_polling)", 1, 0},
    {"listen_slow_poll.ini", "listen",
     "notifications that never reach the listeners, slow fallback poll (bounded_idle_polling)",
     1, 0},
    /* model "dedup": protocols with a dedup step only (shared/cases.md C23):
     * a queue without one makes no promise about copies of a message */
    {"cases/c23_outbox_copies.ini", "dedup",
     "two copies of one message claimed at once both run the handler: a check-then-act outbox "
     "(C23, message_once)",
     0, 0},
};

#define NBATTERY (sizeof battery / sizeof battery[0])

/* runner.c: set by main.c's SIGINT / SIGTERM handler */
extern volatile sig_atomic_t qc_interrupted;

/* gate_run.exit of a run --fail-fast left out */
#define GATE_NOT_RUN (-2)

/* What one run showed. */
typedef struct gate_run {
    int exit;            /* child exit code, -1 died */
    char failed[512];    /* failing checkers, comma list */
    char unjudged[512];  /* judged checkers INCONCLUSIVE, comma list */
    json_t *results;     /* results.json, or NULL */
    double secs;         /* wall time of the child run */
    double first_stop_s; /* first violation of a stop_on checker, s; -1 */
    int stop_hit;        /* a stop_on checker (any checker without stop_on) FAILed */
} gate_run;

static void append(char *buf, size_t n, const char *name)
{
    size_t len = strlen(buf);
    snprintf(buf + len, n - len, "%s%s", len ? ", " : "", name);
}

static void read_run(const char *dir, gate_run *r)
{
    char path[PATH_MAX + 256];
    size_t i;
    json_t *c;

    snprintf(path, sizeof path, "%s/results.json", dir);
    r->results = json_load_file(path, 0, NULL);
    r->failed[0] = r->unjudged[0] = '\0';
    if (r->results == NULL)
        return;
    json_array_foreach(json_object_get(r->results, "checkers"), i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        const char *v = json_string_value(json_object_get(c, "verdict"));
        if (name == NULL || v == NULL)
            continue;
        if (!strcmp(v, "FAIL"))
            append(r->failed, sizeof r->failed, name);
        if (!strcmp(v, "INCONCLUSIVE") && json_is_true(json_object_get(c, "judged")))
            append(r->unjudged, sizeof r->unjudged, name);
    }
}

static void xml_escape(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
                fputc(*s, f);
        }
    }
}

/* junit.xml: a testcase per scenario, seed and judged checker; a FAIL is a
 * failure carrying its first violation, a run that could not be done an
 * error, an INCONCLUSIVE judged checker a skip with its reason. */
static void write_junit(const char *path, const char *protocol, const gate_scenario **sc,
                        gate_run *runs, size_t nsc, int seeds, int first_seed, double secs)
{
    FILE *f = fopen(path, "w");
    long tests = 0, failures = 0, errors = 0, skipped = 0;

    if (f == NULL)
        return;
    for (size_t k = 0; k < nsc * (size_t)seeds; k++) {
        gate_run *r = &runs[k];
        size_t i;
        json_t *c;
        if (r->exit == GATE_NOT_RUN) {
            tests++;
            skipped++;
            continue;
        }
        if (r->results == NULL) {
            tests++;
            errors++;
            continue;
        }
        json_array_foreach(json_object_get(r->results, "checkers"), i, c)
        {
            const char *v = json_string_value(json_object_get(c, "verdict"));
            int judged = json_is_true(json_object_get(c, "judged"));
            if (!judged && (v == NULL || strcmp(v, "FAIL") != 0))
                continue;
            tests++;
            failures += v != NULL && !strcmp(v, "FAIL");
            skipped += v != NULL && !strcmp(v, "INCONCLUSIVE");
        }
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"qchaos gate\" tests=\"%ld\" failures=\"%ld\" errors=\"%ld\" "
               "skipped=\"%ld\" time=\"%.1f\">\n",
            tests, failures, errors, skipped, secs);
    fprintf(f, "  <testsuite name=\"qchaos gate ");
    xml_escape(f, protocol);
    fprintf(f, "\" tests=\"%ld\" failures=\"%ld\" errors=\"%ld\" skipped=\"%ld\" time=\"%.1f\">\n",
            tests, failures, errors, skipped, secs);
    for (size_t s = 0; s < nsc; s++) {
        for (int k = 0; k < seeds; k++) {
            gate_run *r = &runs[s * (size_t)seeds + (size_t)k];
            size_t i;
            json_t *c;
            if (r->exit == GATE_NOT_RUN) {
                fprintf(f, "    <testcase classname=\"");
                xml_escape(f, sc[s]->file);
                fprintf(f, "\" name=\"run seed %d\"><skipped message=\"not run: the gate "
                           "stopped at the first failing run (--fail-fast)\"/></testcase>\n",
                        first_seed + k);
                continue;
            }
            if (r->results == NULL) {
                fprintf(f, "    <testcase classname=\"");
                xml_escape(f, sc[s]->file);
                fprintf(f, "\" name=\"run seed %d\"><error message=\"the run could not be done "
                           "(exit %d)\"/></testcase>\n",
                        first_seed + k, r->exit);
                continue;
            }
            json_array_foreach(json_object_get(r->results, "checkers"), i, c)
            {
                const char *name = json_string_value(json_object_get(c, "name"));
                const char *v = json_string_value(json_object_get(c, "verdict"));
                int judged = json_is_true(json_object_get(c, "judged"));
                if (name == NULL || v == NULL || (!judged && strcmp(v, "FAIL") != 0))
                    continue;
                fprintf(f, "    <testcase classname=\"");
                xml_escape(f, sc[s]->file);
                fprintf(f, " seed %d\" name=\"%s\">", first_seed + k, name);
                if (!strcmp(v, "FAIL")) {
                    json_t *v0 = json_array_get(json_object_get(c, "violations"), 0);
                    fprintf(f, "<failure message=\"");
                    xml_escape(f, json_string_value(json_object_get(v0, "explanation")));
                    fprintf(f, "\">");
                    xml_escape(f, json_string_value(json_object_get(c, "summary")));
                    fprintf(f, "</failure>");
                } else if (!strcmp(v, "INCONCLUSIVE")) {
                    fprintf(f, "<skipped message=\"no opportunity: ");
                    xml_escape(f, json_string_value(json_object_get(c, "summary")));
                    fprintf(f, "\"/>");
                }
                fprintf(f, "</testcase>\n");
            }
        }
    }
    fprintf(f, "  </testsuite>\n</testsuites>\n");
    fclose(f);
}

/* Is name in the comma list?  (NULL list: every name is.) */
static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    if (list == NULL)
        return 1;
    for (const char *p = list; (p = strstr(p, name)); p += n) {
        int start = p == list || p[-1] == ',' || p[-1] == ' ';
        int end = p[n] == 0 || p[n] == ',' || p[n] == ' ';
        if (start && end)
            return 1;
    }
    return 0;
}

/* Did a stop_on checker FAIL in r?  Sets r->stop_hit and first_stop_s. */
static void judge_stop(gate_run *r, const char *stop_on)
{
    size_t i;
    json_t *c;
    r->stop_hit = 0;
    r->first_stop_s = -1;
    json_array_foreach(json_object_get(r->results, "checkers"), i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        const char *v = json_string_value(json_object_get(c, "verdict"));
        if (name == NULL || v == NULL || strcmp(v, "FAIL") != 0 || !in_list(stop_on, name))
            continue;
        r->stop_hit = 1;
        json_t *fs = json_object_get(c, "first_violation_s");
        double t = json_is_number(fs) ? json_number_value(fs) : -1;
        if (t >= 0 && (r->first_stop_s < 0 || t < r->first_stop_s))
            r->first_stop_s = t;
    }
}

/* Writes scenario file `from` with the [policy], [idle] and [sink] lines
 * of `policy` laid over it (appended: the scenario reader keeps the last
 * value of a key) to `to`; the scenario's own protocol line is left out
 * (the gate names the protocol).  Returns 0 or -1 with err. */
static int write_overlay(const char *from, const char *policy, const char *to, qc_err *err)
{
    FILE *in = fopen(from, "r"), *pol = fopen(policy, "r"), *f = fopen(to, "w");
    char line[1024], sec[64] = "";
    int rc = 0;
    if (in == NULL || pol == NULL || f == NULL) {
        rc = qc_err_set(err, QC_EIO, "gate: cannot lay '%s' over '%s' into '%s'", policy, from,
                        to);
        goto out;
    }
    fprintf(f, "; %s with the worker policy of %s laid over it (qchaos gate --policy)\n", from,
            policy);
    while (fgets(line, sizeof line, in)) {
        const char *t = line + strspn(line, " \t");
        if (*t == '[')
            snprintf(sec, sizeof sec, "%.*s", (int)strcspn(t + 1, "]"), t + 1);
        else if (!strcmp(sec, "scenario") && !strncmp(t, "protocol", 8) &&
                 strchr(" \t=", t[8]) != NULL)
            continue;
        fputs(line, f);
    }
    fprintf(f, "\n; --- laid over from %s ---\n", policy);
    int keep = 0;
    while (fgets(line, sizeof line, pol)) {
        const char *t = line + strspn(line, " \t");
        if (*t == '[') {
            snprintf(sec, sizeof sec, "%.*s", (int)strcspn(t + 1, "]"), t + 1);
            keep = !strcmp(sec, "policy") || !strcmp(sec, "idle") || !strcmp(sec, "sink");
        }
        if (keep)
            fputs(line, f);
    }
out:
    if (in)
        fclose(in);
    if (pol)
        fclose(pol);
    if (f && fclose(f) != 0 && rc == 0)
        rc = qc_err_set(err, QC_EIO, "gate: cannot write '%s'", to);
    return rc;
}

/* Is dsn a libpq keyword string a "dbname=" can be appended to?  (A URI
 * cannot take a second database.) */
static int keyword_dsn(const char *dsn)
{
    return strncmp(dsn, "postgres://", 11) != 0 && strncmp(dsn, "postgresql://", 13) != 0;
}

/* Slot k's database on the server of dsn: qchaos_gate_K, created when
 * missing.  Returns 1 created, 0 there already, -1 with err. */
static int slot_database(const char *dsn, int k, qc_err *err)
{
    char name[64], q[256];
    snprintf(name, sizeof name, "qchaos_gate_%d", k);
    PGconn *c = PQconnectdb(dsn);
    int rc = -1;
    if (PQstatus(c) != CONNECTION_OK) {
        char red[1024];
        qc_redact_conninfo(dsn, red, sizeof red);
        qc_err_set(err, QC_ECONN, "gate --jobs: cannot connect to %s: %s", red,
                   PQerrorMessage(c));
        PQfinish(c);
        return -1;
    }
    const char *pv[1] = {name};
    PGresult *r = PQexecParams(c, "SELECT 1 FROM pg_database WHERE datname = $1", 1, NULL, pv,
                               NULL, NULL, 0);
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
        rc = 0;
    } else {
        PQclear(r);
        snprintf(q, sizeof q, "CREATE DATABASE %s", name);
        r = PQexec(c, q);
        if (PQresultStatus(r) == PGRES_COMMAND_OK)
            rc = 1;
        else
            qc_err_set(err, QC_EDB, "gate --jobs: %s: %s", q, PQresultErrorMessage(r));
    }
    PQclear(r);
    PQfinish(c);
    return rc;
}

static void drop_slot_database(const char *dsn, int k)
{
    char q[128];
    snprintf(q, sizeof q, "DROP DATABASE IF EXISTS qchaos_gate_%d", k);
    PGconn *c = PQconnectdb(dsn);
    if (PQstatus(c) == CONNECTION_OK)
        PQclear(PQexec(c, q));
    PQfinish(c);
}

static int nfailed_runs(const gate_run *runs, size_t n)
{
    int k = 0;
    for (size_t i = 0; i < n; i++)
        k += runs[i].exit != GATE_NOT_RUN && (runs[i].exit == 1 || runs[i].failed[0]);
    return k;
}

typedef struct gate_ctx {
    const qc_gate_opts *o;
    const gate_scenario **sc;
    char (*files)[PATH_MAX + 256];
    gate_run *runs;
    size_t n;              /* nsc x seeds */
    atomic_size_t next;    /* next run to start */
    atomic_int stop;       /* --fail-fast: a run failed, start no further run */
    pthread_mutex_t print; /* the table's lines */
    size_t nsc;
} gate_ctx;

typedef struct gate_slot {
    gate_ctx *g;
    const char *dsn; /* this slot's database, or NULL */
    pthread_t tid;
} gate_slot;

static void run_one(gate_ctx *g, size_t idx, const char *dsn)
{
    const qc_gate_opts *o = g->o;
    size_t s = idx / (size_t)o->seeds;
    int seed = o->first_seed + (int)(idx % (size_t)o->seeds);
    gate_run *r = &g->runs[idx];
    char dir[PATH_MAX + 128], name[128];
    snprintf(name, sizeof name, "%s", g->sc[s]->file);
    for (char *p = name; *p; p++)
        if (*p == '/')
            *p = '_';
    if (strlen(name) > 4 && !strcmp(name + strlen(name) - 4, ".ini"))
        name[strlen(name) - 4] = '\0';
    snprintf(dir, sizeof dir, "%s/%s/seed%d", o->out_dir, name, seed);
    double t0 = qc_clock_ms();
    r->exit = qc__run_child_timed(g->files[s], o->protocol, seed, dir, dsn,
                                  o->timeout_s > 0 ? o->timeout_s : 900);
    r->secs = (qc_clock_ms() - t0) / 1000.0;
    read_run(dir, r);
    judge_stop(r, o->stop_on);
    if (o->fail_fast && (o->stop_on ? r->stop_hit : (r->exit == 1 || r->failed[0] != '\0')))
        atomic_store(&g->stop, 1);
    if (o->quiet)
        return;
    pthread_mutex_lock(&g->print);
    printf("%-32s %-6d %5d %6.1f  %s%s%s\n", g->sc[s]->file, seed, r->exit, r->secs,
           r->results == NULL ? "no results" : r->failed, r->failed[0] && r->unjudged[0] ? "; " : "",
           r->unjudged);
    const char *released = json_string_value(json_object_get(r->results, "schedule_released"));
    if (released != NULL) /* judged as it ran: the scripted race did not happen */
        printf("    script released, the race could not be set up on this protocol: %.300s\n",
               released);
    if (r->exit != 0) /* where to look, and how to run it again */
        printf("    %s/ (%s); repeat: %s run %s --protocol %s "
               "--seed %d%s%s\n",
               dir, r->results == NULL ? "run.log" : "run.log, report.html",
               o->prog ? o->prog : "qchaos", g->files[s], o->protocol, seed,
               o->dsn ? " --dsn " : "", o->dsn ? "'...'" : "");
    fflush(stdout);
    pthread_mutex_unlock(&g->print);
}

static void *slot_main(void *arg)
{
    gate_slot *sl = arg;
    gate_ctx *g = sl->g;
    for (;;) {
        if (qc_interrupted || atomic_load(&g->stop))
            break;
        size_t idx = atomic_fetch_add(&g->next, 1);
        if (idx >= g->n)
            break;
        run_one(g, idx, sl->dsn);
    }
    return NULL;
}

/* Is f (a path) one of the battery's scenarios, of any model? */
static int in_battery(const char *f)
{
    char want[PATH_MAX], real[PATH_MAX], b[PATH_MAX + 64];
    if (realpath(f, want) == NULL)
        return 0;
    for (size_t i = 0; i < NBATTERY; i++) {
        snprintf(b, sizeof b, "%s/scenarios/%s", qc_datadir(), battery[i].file);
        if (realpath(b, real) && !strcmp(real, want))
            return 1;
    }
    return 0;
}

/* The scenarios run besides the battery (gate.h: first outside it, then
 * extra), as entries of their own: file is the path under the data
 * folder's scenarios/ when it is there (the run folder's name and
 * stopped_by, as for the battery's), else the path given.  Each names a
 * file that exists and is in no battery entry; duplicates are dropped.
 * Fills xs (room for 1 + o->nextra) and their paths; returns how many. */
static size_t outside_battery(const qc_gate_opts *o, gate_scenario *xs,
                              char (*paths)[PATH_MAX + 256], char (*names)[PATH_MAX + 256])
{
    size_t n = 0;
    char dir[PATH_MAX + 16], dreal[PATH_MAX], real[PATH_MAX], seen[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/scenarios", qc_datadir());
    if (realpath(dir, dreal) == NULL)
        dreal[0] = '\0';
    for (size_t k = 0; k < 1 + o->nextra; k++) {
        const char *f = k == 0 ? o->first : o->extra[k - 1];
        size_t j, dl = strlen(dreal);
        if (f == NULL || realpath(f, real) == NULL || in_battery(f))
            continue;
        for (j = 0; j < n; j++)
            if (realpath(paths[j], seen) && !strcmp(seen, real))
                break;
        if (j < n)
            continue;
        snprintf(paths[n], sizeof paths[n], "%s", f);
        if (dl > 0 && !strncmp(real, dreal, dl) && real[dl] == '/')
            snprintf(names[n], sizeof names[n], "%s", real + dl + 1);
        else
            snprintf(names[n], sizeof names[n], "%s", f);
        xs[n] = (gate_scenario){names[n], NULL,
                                "not in the battery: a mutant's own scenario (qchaos mutation)",
                                0, 0};
        n++;
    }
    return n;
}

int qc_gate_run(const qc_gate_opts *o, qc_gate_result *res, qc_err *err)
{
    qc_protocol *proto = NULL;
    size_t nmax = NBATTERY + 1 + o->nextra;
    const gate_scenario **sc = calloc(nmax, sizeof *sc);
    char (*files)[PATH_MAX + 256] = calloc(nmax, sizeof *files);
    gate_scenario *xs = calloc(1 + o->nextra, sizeof *xs);
    char (*xpaths)[PATH_MAX + 256] = calloc(1 + o->nextra, sizeof *xpaths);
    char (*xnames)[PATH_MAX + 256] = calloc(1 + o->nextra, sizeof *xnames);
    size_t nsc = 0, nx = 0;
    gate_run *runs = NULL;
    int code = 0, any_fail = 0, any_error = 0, any_inc = 0, not_run = 0;
    double t0 = qc_clock_ms();
    char path[PATH_MAX + 64];
    int jobs = o->jobs > 0 ? o->jobs : 1, created[64] = {0};
    char slot_dsn[64][1280];
    gate_slot slots[64];

    if (res != NULL)
        memset(res, 0, sizeof *res);
    if (files == NULL || sc == NULL || xs == NULL || xpaths == NULL || xnames == NULL) {
        code = 3;
        qc_err_set(err, QC_ENOMEM, "out of memory");
        goto done;
    }
    if (qc_protocol_load(o->protocol, QC_PARAM_DOLLAR, &proto, err) != 0) {
        code = 2;
        goto done;
    }
    nx = outside_battery(o, xs, xpaths, xnames);
    int pg = !strcmp(proto->engine, "postgres");
    /* the scenario to run first (qchaos mutation: the mutant's own) */
    char first_real[PATH_MAX] = "";
    if (o->first && realpath(o->first, first_real) == NULL)
        first_real[0] = '\0';
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < NBATTERY; i++) {
            const gate_scenario *g = &battery[i];
            char f[PATH_MAX + 64], real[PATH_MAX];
            if (g->model != NULL && !strcmp(g->model, "listen")) {
                if (strcmp(proto->model, "lease") != 0 || !proto->steps[QC_STEP_LISTEN].present)
                    continue;
            } else if (g->model != NULL && !strcmp(g->model, "renew")) {
                if (strcmp(proto->model, "lease") != 0 || !proto->steps[QC_STEP_RENEW].present ||
                    proto->steps[QC_STEP_HEARTBEAT].present)
                    continue;
            } else if (g->model != NULL && !strcmp(g->model, "dedup")) {
                if (!proto->steps[QC_STEP_DEDUP].present)
                    continue;
            } else if (g->model != NULL && !strcmp(g->model, "heartbeat")) {
                /* a renew keyed by the worker's stable name extends a dead
                 * incarnation's lease as a heartbeat does (decision 1102) */
                if (strcmp(proto->model, "lease") != 0 ||
                    (!proto->steps[QC_STEP_HEARTBEAT].present &&
                     !proto->steps[QC_STEP_RENEW].present))
                    continue;
            } else if (g->model != NULL && strcmp(g->model, proto->model) != 0) {
                continue;
            }
            if ((g->pg_only && !pg) || (g->groups && !o->groups))
                continue;
            snprintf(f, sizeof f, "%s/scenarios/%s", qc_datadir(), g->file);
            int is_first = first_real[0] && realpath(f, real) && !strcmp(real, first_real);
            if (is_first != (pass == 0))
                continue;
            if (o->nonly > 0) {
                size_t k;
                char want[PATH_MAX];
                for (k = 0; k < o->nonly; k++)
                    if (realpath(o->only[k], want) && realpath(f, real) && !strcmp(want, real))
                        break;
                if (k == o->nonly)
                    continue;
            }
            snprintf(files[nsc], sizeof files[nsc], "%s", f);
            sc[nsc++] = g;
        }
        /* the scenarios outside the battery: first (if it is one of
         * them) before the battery, the others after it */
        for (size_t i = 0; i < nx; i++) {
            char real[PATH_MAX];
            int is_first = first_real[0] && realpath(xpaths[i], real) &&
                           !strcmp(real, first_real);
            if (is_first != (pass == 0))
                continue;
            if (o->nonly > 0) {
                size_t k;
                char want[PATH_MAX];
                for (k = 0; k < o->nonly; k++)
                    if (realpath(o->only[k], want) && realpath(xpaths[i], real) &&
                        !strcmp(want, real))
                        break;
                if (k == o->nonly)
                    continue;
            }
            snprintf(files[nsc], sizeof files[nsc], "%s", xpaths[i]);
            sc[nsc++] = &xs[i];
        }
    }
    if (o->shard_count > 1) {
        /* --shard I/N: scenario k of the battery's list to shard k % N */
        size_t kept = 0;
        for (size_t k = 0; k < nsc; k++) {
            if ((int)(k % (size_t)o->shard_count) != o->shard_index)
                continue;
            if (kept != k)
                memcpy(files[kept], files[k], sizeof files[k]);
            sc[kept++] = sc[k];
        }
        nsc = kept;
    }
    if (o->jobs > 64)
        jobs = 64;
    runs = calloc(nsc * (size_t)o->seeds + 1, sizeof *runs);
    if (runs == NULL || qc_mkdirs(o->out_dir, err) != 0) {
        code = runs == NULL ? 3 : 2;
        nsc = 0; /* no run results to free */
        goto done;
    }
    /* --policy: every scenario with the policy laid over it */
    if (o->policy) {
        snprintf(path, sizeof path, "%s/scenarios", o->out_dir);
        if (qc_mkdirs(path, err) != 0) {
            code = 2;
            goto done;
        }
        for (size_t s = 0; s < nsc; s++) {
            char to[PATH_MAX + 256], name[128];
            snprintf(name, sizeof name, "%s", sc[s]->file);
            for (char *p = name; *p; p++)
                if (*p == '/')
                    *p = '_';
            snprintf(to, sizeof to, "%s/%s", path, name);
            if (write_overlay(files[s], o->policy, to, err) != 0) {
                code = 2;
                goto done;
            }
            snprintf(files[s], sizeof files[s], "%s", to);
        }
    }
    /* --jobs with --dsn: a database per slot (qchaos_gate_K) on the same
     * server, as two runs on one database collide on the schema qchaos */
    for (int k = 0; k < jobs; k++)
        snprintf(slot_dsn[k], sizeof slot_dsn[k], "%s", o->dsn ? o->dsn : "");
    if (o->dsn && jobs > 1) {
        if (!pg || !keyword_dsn(o->dsn)) {
            if (!o->quiet)
                printf("qchaos: gate: --jobs %d needs a PostgreSQL keyword=value --dsn (a "
                       "database per run); running one at a time\n",
                       jobs);
            jobs = 1;
        }
        for (int k = 1; k < jobs; k++) {
            int c = slot_database(o->dsn, k, err);
            if (c < 0) {
                if (!o->quiet)
                    printf("qchaos: gate: %s; running %d at a time\n", err->msg, k);
                jobs = k;
                err->msg[0] = '\0';
                break;
            }
            created[k] = c == 1;
            snprintf(slot_dsn[k], sizeof slot_dsn[k], "%s dbname=qchaos_gate_%d", o->dsn, k);
        }
    }
    if (!o->quiet) {
        char shard_note[64] = "";
        if (o->shard_count > 1)
            snprintf(shard_note, sizeof shard_note, " (shard %d of %d of the battery)",
                     o->shard_index, o->shard_count);
        printf("qchaos: gate: %s (%s model, %s): %zu scenarios%s x %d seeds, %d at a time%s%s\n",
               o->protocol, proto->model, proto->engine, nsc, shard_note, o->seeds, jobs,
               o->policy ? ", policy of " : "", o->policy ? o->policy : "");
        printf("%-32s %-6s %5s %6s  %s\n", "scenario", "seed", "exit", "secs",
               "failed / judged without an opportunity");
        fflush(stdout);
    }
    gate_ctx g = {.o = o, .sc = sc, .files = files, .runs = runs, .n = nsc * (size_t)o->seeds,
                  .nsc = nsc};
    atomic_init(&g.next, 0);
    atomic_init(&g.stop, 0);
    pthread_mutex_init(&g.print, NULL);
    for (size_t k = 0; k < g.n; k++)
        runs[k].exit = GATE_NOT_RUN;
    for (int k = 0; k < jobs; k++) {
        slots[k].g = &g;
        slots[k].dsn = o->dsn ? slot_dsn[k] : NULL;
    }
    if (jobs == 1) {
        slot_main(&slots[0]);
    } else {
        int started = 0;
        for (int k = 0; k < jobs; k++, started++)
            if (pthread_create(&slots[k].tid, NULL, slot_main, &slots[k]) != 0)
                break;
        if (started == 0)
            slot_main(&slots[0]);
        for (int k = 0; k < started; k++)
            pthread_join(slots[k].tid, NULL);
    }
    pthread_mutex_destroy(&g.print);
    for (int k = 1; k < 64; k++)
        if (created[k])
            drop_slot_database(o->dsn, k);

    for (size_t k = 0; k < g.n; k++) {
        gate_run *r = &runs[k];
        if (r->exit == GATE_NOT_RUN) {
            not_run++;
            continue;
        }
        any_fail |= r->exit == 1 || r->failed[0];
        any_error |= r->results == NULL || r->exit == 2 || r->exit == 3 || r->exit < 0 ||
                     r->exit == QC_CHILD_TIMEOUT;
        any_inc |= r->exit == 4;
        if (res != NULL) {
            res->runs++;
            if (r->stop_hit && !res->stopped) {
                res->stopped = 1;
                res->first_violation_s = r->first_stop_s;
                snprintf(res->stopped_by, sizeof res->stopped_by, "%s",
                         sc[k / (size_t)o->seeds]->file);
            }
        }
    }
    if (res != NULL)
        res->not_run = not_run;
    double secs = (qc_clock_ms() - t0) / 1000.0;
    code = any_fail ? 1 : any_error ? 3 : any_inc ? 4 : 0;
    if ((qc_interrupted || (not_run && !any_fail)) && code != 1)
        code = 4; /* stopped: what ran is written, the rest was not judged */

    json_t *root = json_object(), *arr = json_array();
    json_object_set_new(root, "schema", json_string("qchaos-gate/1"));
    json_object_set_new(root, "protocol", json_string(o->protocol));
    json_object_set_new(root, "model", json_string(proto->model));
    json_object_set_new(root, "engine", json_string(proto->engine));
    if (o->policy)
        json_object_set_new(root, "policy", json_string(o->policy));
    json_object_set_new(root, "seconds", json_real(secs));
    json_object_set_new(root, "jobs", json_integer(jobs));
    json_object_set_new(root, "fail_fast", json_boolean(o->fail_fast));
    if (o->shard_count > 1) {
        json_t *sj = json_object();
        json_object_set_new(sj, "index", json_integer(o->shard_index));
        json_object_set_new(sj, "count", json_integer(o->shard_count));
        json_object_set_new(root, "shard", sj);
    }
    for (size_t s = 0; s < nsc; s++) {
        for (int k = 0; k < o->seeds; k++) {
            gate_run *r = &runs[s * (size_t)o->seeds + (size_t)k];
            json_t *x = json_object();
            json_object_set_new(x, "scenario", json_string(sc[s]->file));
            json_object_set_new(x, "for", json_string(sc[s]->why));
            json_object_set_new(x, "seed", json_integer(o->first_seed + k));
            if (r->exit == GATE_NOT_RUN) {
                json_object_set_new(x, "run", json_false());
                json_array_append_new(arr, x);
                continue;
            }
            json_object_set_new(x, "run", json_true());
            json_object_set_new(x, "exit", json_integer(r->exit));
            json_object_set_new(x, "seconds", json_real(r->secs));
            json_object_set_new(x, "failed", json_string(r->failed));
            json_object_set_new(x, "inconclusive", json_string(r->unjudged));
            json_t *rel = json_object_get(r->results, "schedule_released");
            if (json_is_string(rel))
                json_object_set(x, "schedule_released", rel);
            json_array_append_new(arr, x);
        }
    }
    json_object_set_new(root, "runs", arr);
    json_object_set_new(root, "exit_code", json_integer(code));
    snprintf(path, sizeof path, "%s/gate.json", o->out_dir);
    if (json_dump_file(root, path, JSON_INDENT(2)) != 0)
        fprintf(stderr, "qchaos: cannot write '%s'\n", path);
    json_decref(root);
    snprintf(path, sizeof path, "%s/junit.xml", o->out_dir);
    write_junit(path, o->protocol, sc, runs, nsc, o->seeds, o->first_seed, secs);
    if (o->quiet)
        goto done;

    /* every scenario, in the battery's order, with what became of it */
    if (not_run) {
        printf("qchaos: gate: --fail-fast stopped the battery; not run:");
        int nn = 0;
        for (size_t s = 0; s < nsc; s++)
            for (int k = 0; k < o->seeds; k++)
                if (runs[s * (size_t)o->seeds + (size_t)k].exit == GATE_NOT_RUN)
                    printf("%s %s seed %d", nn++ ? "," : "", sc[s]->file, o->first_seed + k);
        printf("\n");
    }
    int seeds_passed = 0;
    for (int k = 0; k < o->seeds; k++) {
        int ok = 1;
        for (size_t s = 0; s < nsc; s++)
            ok &= runs[s * (size_t)o->seeds + (size_t)k].exit == 0;
        seeds_passed += ok;
    }
    printf("qchaos: gate: %d of %d seeds passed every scenario; %d runs failed a checker\n",
           seeds_passed, o->seeds, nfailed_runs(runs, g.n));
    printf("qchaos: gate results in %s/ (gate.json, junit.xml, one folder per run), %.1f s\n",
           o->out_dir, secs);
    if (code == 1) {
        printf("qchaos: verdict: FAIL: the protocol failed the gate:");
        int nf = 0;
        for (size_t s = 0; s < nsc; s++)
            for (int k = 0; k < o->seeds; k++) {
                gate_run *r = &runs[s * (size_t)o->seeds + (size_t)k];
                if (r->failed[0])
                    printf("%s %s seed %d (%s)", nf++ ? ";" : "", sc[s]->file, o->first_seed + k,
                           r->failed);
            }
        printf("\n");
    } else if (qc_interrupted) {
        printf("qchaos: verdict: INCONCLUSIVE: the gate was interrupted (SIGINT / SIGTERM) "
               "before all its runs were done\n");
    } else if (code == 3) {
        printf("qchaos: verdict: ERROR: some runs could not be done (exit 2/3, or a run that "
               "timed out: see their run.log)\n");
    } else if (code == 4) {
        printf("qchaos: verdict: INCONCLUSIVE: no violation, but a judged checker had no "
               "opportunity in some run (see the table)%s\n",
               not_run ? ", or runs were left out" : "");
    } else {
        printf("qchaos: verdict: PASS: %zu scenarios x %d seeds, no violation\n", nsc, o->seeds);
    }
done:
    for (size_t k = 0; runs != NULL && k < nsc * (size_t)o->seeds; k++)
        json_decref(runs[k].results);
    free(runs);
    free(files);
    free(sc);
    free(xs);
    free(xpaths);
    free(xnames);
    qc_protocol_destroy(proto);
    return code;
}
