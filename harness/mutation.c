/*
 * mutation.c - mutation self-test: detection power and false alarms.
 *
 * Each run is a child process (this executable, `run ...`), so a run's
 * threads, connections and ephemeral server never leak into the next and a
 * crash of one run is reported, not fatal.  Verdicts are read back from
 * each run's results.json.
 */
#include "mutation.h"
#include "gate.h"
#include "target.h"
#include "audit.h"
#include "scenario.h"
#include "clock.h"
#include "../backends/protocol.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <ini.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* runner.c: set by the SIGINT / SIGTERM handler of main.c */
extern volatile sig_atomic_t qc_interrupted;

typedef struct mutant {
    char name[128];
    char protocol[PATH_MAX + 256]; /* protocol file the run uses */
    char scenario[PATH_MAX + 256]; /* scenario file the run uses */
    char expect[512];         /* comma list of checkers, one must FAIL */
    char baseline[PATH_MAX + 256]; /* scenario the correct protocol/policy runs on */
    int caught;               /* seeds in which an expected checker failed */
    int runs_failed;          /* runs that could not be done (exit 2/3/crash) */
    double first_s[64];       /* seconds to the first violation, per catching seed */
    int nfirst;
    int runs_total;           /* gate runs it took to catch it, over the catching seeds */
    char caught_by[128];      /* the battery scenario that caught it (last catching seed) */
    char model[16];           /* lease or transaction */
    char base[PATH_MAX + 256]; /* the protocol the mutant overlays ("-- base:"), or "" */
    int mariadb;              /* a MariaDB mutant: its runs go to qc_mutation_opts.odbc */
} mutant;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int needs_own_server(const char *scenario)
{
    qc_scenario sc;
    qc_err err = {0};
    qc_scenario_defaults(&sc);
    if (qc_scenario_load(&sc, scenario, &err) != 0)
        return 0;
    return qc_scenario_own_server(&sc);
}

int qc__run_child(const char *scenario, const char *protocol, int seed, const char *dir,
                  const char *dsn)
{
    return qc__run_child_timed(scenario, protocol, seed, dir, dsn, 0);
}

int qc__run_child_timed(const char *scenario, const char *protocol, int seed, const char *dir,
                        const char *dsn, int timeout_s)
{
    char seedbuf[24], log[PATH_MAX + 16];
    snprintf(seedbuf, sizeof seedbuf, "%d", seed);
    snprintf(log, sizeof log, "%s/run.log", dir);
    qc_err mkerr = {0};
    if (qc_mkdirs(dir, &mkerr) != 0)
        return -1;
    /* decided before fork: the child only execs */
    int own = needs_own_server(scenario);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        const char *argv[16];
        int k = 0;
        argv[k++] = "qchaos";
        argv[k++] = "run";
        argv[k++] = scenario;
        if (protocol) {
            argv[k++] = "--protocol";
            argv[k++] = protocol;
        }
        argv[k++] = "--seed";
        argv[k++] = seedbuf;
        argv[k++] = "--out";
        argv[k++] = dir;
        argv[k++] = "--no-progress";
        argv[k++] = "--force"; /* the folder is the matrix's own: a rerun replaces it */
        if (dsn && !own) {
            argv[k++] = "--dsn";
            argv[k++] = dsn;
        }
        /* A scenario that restarts or pauses its server gets the ephemeral
         * one even when the PG* variables name a target for the others. */
        for (int i = 0; own && qc_target_env_vars[i] != NULL; i++)
            unsetenv(qc_target_env_vars[i]);
        argv[k] = NULL;
        execv("/proc/self/exe", (char *const *)argv);
        _exit(127);
    }
    /* Polled (every 50 ms), not a blocking waitpid: the caller may be one
     * of several threads each waiting for its own child, and a signal
     * interrupts only one of them.  SIGINT / SIGTERM (qc_interrupted) or
     * the timeout: SIGTERM to the child, which cancels its statements,
     * removes its ephemeral server and exits 4; SIGKILL 20 s later. */
    int st, termed = 0;
    double t0 = qc_clock_ms(), term_at = 0;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR)
            return -1;
        double now = qc_clock_ms();
        if (!termed && (qc_interrupted || (timeout_s > 0 && now - t0 > timeout_s * 1000.0))) {
            kill(pid, SIGTERM);
            termed = 1;
            term_at = now;
        } else if (termed == 1 && now - term_at > 20000.0) {
            kill(pid, SIGKILL);
            termed = 2;
        }
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (termed && !qc_interrupted)
        return QC_CHILD_TIMEOUT;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Adds the mutants of dir (*.sql with expect and scenario headers), named
 * prefix + the file's name without .sql ("mariadb:" for MariaDB's, so that
 * they differ from PostgreSQL's of the same name); --only matches that
 * name. */
static int add_protocol_mutants(mutant **ms, size_t *n, const char *dir, const char *prefix,
                                const char *only, qc_err *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) && rc == 0) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".sql"))
            continue;
        char pname[300];
        snprintf(pname, sizeof pname, "%s%.*s", prefix, (int)(len - 4), e->d_name);
        if (only && !strstr(pname, only))
            continue;
        char path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        qc_protocol *p = NULL;
        if ((rc = qc_protocol_load(path, QC_PARAM_DOLLAR, &p, err)) != 0)
            break;
        if (!p->expect || !p->scenario) {
            rc = qc_err_set(err, QC_EINVAL,
                            "%s: a mutant needs '-- expect:' and '-- scenario:' header lines",
                            path);
            qc_protocol_destroy(p);
            break;
        }
        mutant *grown = realloc(*ms, sizeof **ms * (*n + 1));
        if (!grown) {
            qc_protocol_destroy(p);
            return qc_err_set(err, QC_ENOMEM, "out of memory");
        }
        *ms = grown;
        mutant *m = &(*ms)[(*n)++];
        memset(m, 0, sizeof *m);
        snprintf(m->name, sizeof m->name, "%.120s", pname);
        snprintf(m->protocol, sizeof m->protocol, "%s", path);
        snprintf(m->base, sizeof m->base, "%s", p->base ? p->base : "");
        m->mariadb = !strcmp(p->engine, "mariadb");
        snprintf(m->expect, sizeof m->expect, "%s", p->expect);
        rc = qc_scenario_resolve(p->scenario, qc_datadir(), m->scenario, sizeof m->scenario, err);
        snprintf(m->baseline, sizeof m->baseline, "%s", m->scenario);
        qc_protocol_destroy(p);
    }
    closedir(d);
    return rc;
}

typedef struct expect_ctx {
    char expect[512];
    char baseline[PATH_MAX];
} expect_ctx;

static int expect_handler(void *user, const char *section, const char *name, const char *value)
{
    expect_ctx *c = user;
    if (!strcmp(section, "checks") && !strcmp(name, "expect"))
        snprintf(c->expect, sizeof c->expect, "%s", value);
    if (!strcmp(section, "checks") && !strcmp(name, "baseline"))
        snprintf(c->baseline, sizeof c->baseline, "%s", value);
    return 1;
}

static int add_policy_mutants(mutant **ms, size_t *n, const char *dir, const char *only,
                              const char *correct, qc_err *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) && rc == 0) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".ini"))
            continue;
        char pname[300];
        snprintf(pname, sizeof pname, "policy:%s", e->d_name);
        if (only && !strstr(pname, only)) /* "--only policy:" keeps them all */
            continue;
        char path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        /* the full parser validates the file; the expect key is read here */
        qc_scenario sc;
        qc_scenario_defaults(&sc);
        if ((rc = qc_scenario_load(&sc, path, err)) != 0)
            break;
        expect_ctx c = {{0}, {0}};
        ini_parse(path, expect_handler, &c);
        if (!c.expect[0] || !c.baseline[0]) {
            rc = qc_err_set(err, QC_EINVAL,
                            "%s: a policy mutant needs [checks] expect = CHECKERS and "
                            "baseline = the correct scenario",
                            path);
            break;
        }
        mutant *grown = realloc(*ms, sizeof **ms * (*n + 1));
        if (!grown)
            return qc_err_set(err, QC_ENOMEM, "out of memory");
        *ms = grown;
        mutant *m = &(*ms)[(*n)++];
        memset(m, 0, sizeof *m);
        snprintf(m->name, sizeof m->name, "policy:%.*s", (int)(len - 4), e->d_name);
        snprintf(m->protocol, sizeof m->protocol, "%s", correct);
        /* a LISTEN policy (issue 17) needs a protocol that LISTENs: its own */
        qc_protocol *lp = NULL;
        qc_err lerr = {0};
        char own[PATH_MAX + 256];
        if (sc.protocol[0] &&
            qc_scenario_resolve(sc.protocol, dir, own, sizeof own, &lerr) == 0 &&
            qc_protocol_load(own, QC_PARAM_DOLLAR, &lp, &lerr) == 0 &&
            lp->steps[QC_STEP_LISTEN].present)
            snprintf(m->protocol, sizeof m->protocol, "%s", own);
        qc_protocol_destroy(lp);
        snprintf(m->scenario, sizeof m->scenario, "%s", path);
        snprintf(m->expect, sizeof m->expect, "%s", c.expect);
        if ((rc = qc_scenario_resolve(c.baseline, dir, m->baseline, sizeof m->baseline, err)) != 0)
            break;
    }
    closedir(d);
    return rc;
}

static int cmp_mutant_name(const void *a, const void *b)
{
    return strcmp(((const mutant *)a)->name, ((const mutant *)b)->name);
}

/* One correct protocol's battery, for the false positives. */
typedef struct correct_run {
    char protocol[PATH_MAX];
    int groups;
    const char *model;
    const char *dsn;   /* NULL: qc_mutation_opts.dsn */
    const char *only1; /* "mariadb": the one scenario it runs (its mutant's own) */
    const char *label; /* the false-positive table's name of it, or NULL: the file's */
} correct_run;

#define QC_MUTATION_MAX_CORRECT 24

int qc_mutation_run(const qc_mutation_opts *o, qc_err *err)
{
    char dir[PATH_MAX], correct[PATH_MAX];
    mutant *ms = NULL;
    size_t n = 0;
    int code = 0;
    double t0 = qc_clock_ms();
    if (qc_scenario_resolve(o->correct ? o->correct : "backends/postgres/skip_locked.sql", NULL,
                            correct, sizeof correct, err) != 0)
        return 2;
    snprintf(dir, sizeof dir, "%s/backends/postgres/mutants", qc_datadir());
    if (add_protocol_mutants(&ms, &n, dir, "", o->only, err) != 0) {
        free(ms);
        return 2;
    }
    snprintf(dir, sizeof dir, "%s/backends/mariadb/mutants", qc_datadir());
    if (o->odbc != NULL && add_protocol_mutants(&ms, &n, dir, "mariadb:", o->only, err) != 0) {
        free(ms);
        return 2;
    }
    snprintf(dir, sizeof dir, "%s/scenarios/mutants", qc_datadir());
    if (add_policy_mutants(&ms, &n, dir, o->only, correct, err) != 0) {
        free(ms);
        return 2;
    }
    if (n == 0) {
        free(ms);
        if (o->only && !strncmp(o->only, "mariadb:", 8) && o->odbc == NULL)
            qc_err_set(err, QC_EINVAL,
                       "the MariaDB mutants ('%s') run only with --odbc CONN (a MariaDB server's "
                       "ODBC connection string)",
                       o->only);
        else if (o->only)
            qc_err_set(err, QC_EINVAL,
                       "no mutant name contains '%s' (see backends/postgres/mutants/ and "
                       "scenarios/mutants/ under %s)",
                       o->only, qc_datadir());
        else
            qc_err_set(err, QC_EINVAL, "no mutants found under %s", qc_datadir());
        return 2;
    }
    int K = o->seeds > 64 ? 64 : o->seeds;
    /* The matrix in name order (readdir's order is the file system's), so
     * that --shard I/N means the same mutants on every machine. */
    qsort(ms, n, sizeof *ms, cmp_mutant_name);
    /* Which correct protocols' batteries the whole matrix needs, before
     * --shard keeps this shard's mutants: every shard runs its share of
     * each of those batteries, whatever mutants it got. */
    int need_lease = 0, need_txn = 0, need_groups = 0, need_listen = 0, need_heartbeat = 0,
        need_dedup = 0;
    for (size_t i = 0; i < n; i++) {
        qc_protocol *p = NULL;
        qc_err perr = {0};
        int txn = 0;
        if (ms[i].mariadb)
            continue; /* its base protocol on its own scenario (below) */
        if (qc_protocol_load(ms[i].protocol, QC_PARAM_DOLLAR, &p, &perr) == 0) {
            txn = !strcmp(p->model, "transaction");
            need_listen |= p->steps[QC_STEP_LISTEN].present;
            need_heartbeat |= p->steps[QC_STEP_HEARTBEAT].present;
            need_dedup |= p->steps[QC_STEP_DEDUP].present;
            qc_protocol_destroy(p);
        }
        int groups = strstr(ms[i].expect, "group_") != NULL;
        need_groups |= groups;
        need_txn |= txn;
        need_lease |= !groups && !txn;
    }
    /* --only: the correct protocols run on the chosen mutants' own
     * scenarios, those of the whole matrix (a shard may keep none of them) */
    char **only_all = calloc(n + 1, sizeof *only_all);
    size_t nonly_all = 0;
    for (size_t i = 0; o->only && only_all && i < n; i++)
        if ((only_all[nonly_all] = strdup(!strncmp(ms[i].name, "policy:", 7) ? ms[i].baseline
                                                                             : ms[i].scenario)))
            nonly_all++;
    /* The policy mutants' baselines on the correct protocol they are
     * compared with, also those outside the battery (the gate drops the
     * others): the correct policy's runs of the whole matrix, before
     * --shard keeps this shard's mutants (the gate shards them with the
     * battery) */
    const char **extra = calloc(n + 1, sizeof *extra);
    size_t nextra = 0;
    for (size_t i = 0; extra && i < n; i++)
        if (!strncmp(ms[i].name, "policy:", 7) && !strcmp(ms[i].protocol, correct) &&
            (extra[nextra] = strdup(ms[i].baseline)) != NULL)
            nextra++;
    if (o->shard_count > 1) {
        size_t kept = 0;
        for (size_t i = 0; i < n; i++)
            if ((int)(i % (size_t)o->shard_count) == o->shard_index) {
                if (kept != i)
                    memcpy(&ms[kept], &ms[i], sizeof *ms);
                kept++;
            }
        fprintf(stderr, "qchaos: mutation: shard %d of %d: %zu of the %zu mutants, and share %d "
                        "of each correct protocol's battery\n",
                o->shard_index, o->shard_count, kept, n, o->shard_index);
        n = kept;
    }
    fprintf(stderr, "qchaos: mutation: %zu mutants x %d seeds, each through the gate battery "
                    "(its own scenario first, up to the first run that catches it)\n",
            n, K);
    /* Each mutant through the gate's battery of its model: caught when an
     * expected checker FAILs in a run; the battery stops there. */
    for (size_t i = 0; i < n && !qc_interrupted; i++) {
        mutant *m = &ms[i];
        int policy = !strncmp(m->name, "policy:", 7);
        qc_protocol *p = NULL;
        qc_err perr = {0};
        const char *model = "lease";
        if (qc_protocol_load(m->protocol, QC_PARAM_DOLLAR, &p, &perr) == 0) {
            model = !strcmp(p->model, "transaction") ? "transaction" : "lease";
            qc_protocol_destroy(p);
        }
        int groups = strstr(m->expect, "group_") != NULL;
        snprintf(m->model, sizeof m->model, "%s", model);
        if (!m->mariadb) {
            need_groups |= groups;
            need_txn |= !strcmp(model, "transaction");
            need_lease |= !groups && !strcmp(model, "lease");
        }
        for (int s = 1; s <= K && !qc_interrupted; s++) {
            char out[PATH_MAX];
            snprintf(out, sizeof out, "%s/%s/seed%d", o->out_dir, m->name, s);
            qc_gate_opts g = {.protocol = m->protocol,
                              .dsn = m->mariadb ? o->odbc : o->dsn,
                              .out_dir = out,
                              .seeds = 1,
                              .first_seed = s,
                              .groups = groups,
                              .fail_fast = 1,
                              .jobs = 1,
                              .policy = policy ? m->scenario : NULL,
                              .stop_on = m->expect,
                              .first = policy ? m->baseline : m->scenario,
                              .quiet = 1};
            qc_gate_result res;
            qc_err gerr = {0};
            int rc = qc_gate_run(&g, &res, &gerr);
            if (res.stopped) {
                m->caught++;
                if (res.first_violation_s >= 0)
                    m->first_s[m->nfirst++] = res.first_violation_s;
                m->runs_total += res.runs;
                snprintf(m->caught_by, sizeof m->caught_by, "%s", res.stopped_by);
            } else if (rc == 2 || rc == 3) {
                m->runs_failed++;
            }
            fprintf(stderr, "qchaos: mutation: %s seed %d: %s%s%s (%d runs)%s%s\n", m->name, s,
                    res.stopped ? "caught by " : "ESCAPED the gate",
                    res.stopped ? res.stopped_by : "", "", res.runs,
                    gerr.msg[0] ? ": " : "", gerr.msg);
        }
    }
    /* The correct protocols through the whole battery: every FAIL is a
     * false positive of the scenario it came from. */
    correct_run cr[QC_MUTATION_MAX_CORRECT];
    size_t ncr = 0;
    memset(cr, 0, sizeof cr);
    if (o->correct) {
        snprintf(cr[ncr].protocol, sizeof cr[ncr].protocol, "%s", correct);
        cr[ncr].groups = 0;
        cr[ncr++].model = "given";
    } else {
        const char *names[3] = {"backends/postgres/skip_locked.sql",
                                "backends/postgres/skip_locked_txn.sql",
                                "backends/postgres/group_fifo.sql"};
        int want[3] = {need_lease, need_txn, need_groups};
        for (int k = 0; k < 3; k++) {
            if (!want[k])
                continue;
            snprintf(cr[ncr].protocol, sizeof cr[ncr].protocol, "%s/%s", qc_datadir(), names[k]);
            cr[ncr].groups = k == 2;
            cr[ncr++].model = k == 1 ? "transaction" : "lease";
        }
        if (need_listen) { /* the LISTEN protocol on the listen scenarios only */
            snprintf(cr[ncr].protocol, sizeof cr[ncr].protocol, "%s/%s", qc_datadir(),
                     "backends/postgres/skip_locked_listen.sql");
            cr[ncr].groups = 0;
            cr[ncr++].model = "listen";
        }
        if (need_heartbeat) { /* the heartbeat protocol on its scenario only */
            snprintf(cr[ncr].protocol, sizeof cr[ncr].protocol, "%s/%s", qc_datadir(),
                     "backends/postgres/skip_locked_heartbeat.sql");
            cr[ncr].groups = 0;
            cr[ncr++].model = "heartbeat";
        }
        if (need_dedup) { /* the outbox protocol on the copies scenario only (C23) */
            snprintf(cr[ncr].protocol, sizeof cr[ncr].protocol, "%s/%s", qc_datadir(),
                     "backends/postgres/outbox.sql");
            cr[ncr].groups = 0;
            cr[ncr++].model = "dedup";
        }
    }
    /* A MariaDB mutant's correct protocol is the one it overlays, on the
     * mutant's own scenario only (its whole battery takes minutes a seed:
     * tests/bench_gate.sh mariadb runs it); every shard runs them, as the
     * correct protocols' batteries.  All mutants of the matrix, before
     * --shard, would be the rule; this shard's suffice here since the
     * MariaDB part is small and each pair is independent. */
    for (size_t i = 0; i < n && ncr < QC_MUTATION_MAX_CORRECT; i++) {
        if (!ms[i].mariadb || !ms[i].base[0])
            continue;
        size_t j;
        for (j = 0; j < ncr; j++)
            if (cr[j].only1 != NULL && !strcmp(cr[j].protocol, ms[i].base) &&
                !strcmp(cr[j].only1, ms[i].scenario))
                break;
        if (j < ncr)
            continue;
        snprintf(cr[ncr].protocol, sizeof cr[ncr].protocol, "%s", ms[i].base);
        cr[ncr].model = "mariadb";
        cr[ncr].dsn = o->odbc;
        cr[ncr].only1 = ms[i].scenario;
        cr[ncr++].label = "mariadb-";
    }
    char listen_only[2][PATH_MAX];
    const char *listen_list[2] = {listen_only[0], listen_only[1]};
    snprintf(listen_only[0], sizeof listen_only[0], "%s/scenarios/listen.ini", qc_datadir());
    snprintf(listen_only[1], sizeof listen_only[1], "%s/scenarios/listen_slow_poll.ini",
             qc_datadir());
    char heartbeat_only[PATH_MAX];
    const char *heartbeat_list[1] = {heartbeat_only};
    snprintf(heartbeat_only, sizeof heartbeat_only, "%s/scenarios/gate/heartbeat_restart.ini",
             qc_datadir());
    char dedup_only[PATH_MAX];
    const char *dedup_list[1] = {dedup_only};
    snprintf(dedup_only, sizeof dedup_only, "%s/scenarios/cases/c23_outbox_copies.ini",
             qc_datadir());
    /* false positives per protocol and scenario */
    typedef struct fp_row {
        char protocol[64], scenario[128];
        int fp, failed, runs;
    } fp_row;
    fp_row *fps_rows = calloc(64 * 3, sizeof *fps_rows);
    size_t nfp = 0;
    if (fps_rows == NULL) {
        free(ms);
        for (size_t i = 0; only_all && i < nonly_all; i++)
            free(only_all[i]);
        free(only_all);
        for (size_t i = 0; i < nextra; i++)
            free((char *)extra[i]);
        free(extra);
        qc_err_set(err, QC_ENOMEM, "out of memory");
        return 3;
    }
    /* --only: the correct protocols on the chosen mutants' own scenarios
     * and the battery scenarios that caught them (a policy mutant's own
     * baseline need not be in the battery) only: a quick check while
     * working on one mutant */
    const char **only = calloc(2 * nonly_all + 1, sizeof *only);
    char (*caught_paths)[PATH_MAX] = o->only ? calloc(n + 1, sizeof *caught_paths) : NULL;
    size_t nonly = 0;
    for (size_t i = 0; only && i < nonly_all; i++)
        only[nonly++] = only_all[i];
    for (size_t i = 0; only && caught_paths && i < n && nonly < 2 * nonly_all; i++)
        if (ms[i].caught_by[0]) {
            snprintf(caught_paths[i], PATH_MAX, "%s/scenarios/%s", qc_datadir(), ms[i].caught_by);
            only[nonly++] = caught_paths[i];
        }
    for (size_t c = 0; c < ncr && !qc_interrupted; c++) {
        char out[PATH_MAX + 64], base[64];
        const char *b = strrchr(cr[c].protocol, '/');
        snprintf(base, sizeof base, "%s%.52s", cr[c].label ? cr[c].label : "",
                 b ? b + 1 : cr[c].protocol);
        if (strlen(base) > 4 && !strcmp(base + strlen(base) - 4, ".sql"))
            base[strlen(base) - 4] = '\0';
        snprintf(out, sizeof out, "%s/correct-%s", o->out_dir, base);
        qc_gate_opts g = {.protocol = cr[c].protocol,
                          .dsn = cr[c].dsn != NULL ? cr[c].dsn : o->dsn,
                          .out_dir = out,
                          .seeds = K,
                          .first_seed = 1,
                          .groups = cr[c].groups,
                          .jobs = o->jobs > 0 ? o->jobs : 1,
                          .only = only,
                          .nonly = nonly,
                          .quiet = 1,
                          .shard_index = o->shard_index,
                          .shard_count = o->shard_count};
        if (!strcmp(cr[c].model, "listen") && nonly == 0) {
            g.only = listen_list;
            g.nonly = 2;
        }
        if (!strcmp(cr[c].model, "heartbeat") && nonly == 0) {
            g.only = heartbeat_list;
            g.nonly = 1;
        }
        if (!strcmp(cr[c].model, "dedup") && nonly == 0) {
            g.only = dedup_list;
            g.nonly = 1;
        }
        if (!strcmp(cr[c].model, "mariadb")) {
            g.first = cr[c].only1; /* it may be outside the battery */
            g.only = &cr[c].only1;
            g.nonly = 1;
            g.shard_count = 0; /* one run a seed: every shard does it */
        }
        if (!cr[c].groups && (!strcmp(cr[c].model, "lease") || !strcmp(cr[c].model, "given"))) {
            /* the protocol the policy mutants are compared with (not
             * group_fifo's battery, also of the lease model) */
            g.extra = extra;
            g.nextra = nextra;
        }
        qc_err gerr = {0};
        double tg = qc_clock_ms();
        int rc = qc_gate_run(&g, NULL, &gerr);
        char gj[PATH_MAX + 80];
        snprintf(gj, sizeof gj, "%s/gate.json", out);
        json_t *root = json_load_file(gj, 0, NULL), *r;
        size_t i, nran = 0;
        json_array_foreach(json_object_get(root, "runs"), i, r) nran +=
            json_is_true(json_object_get(r, "run"));
        if (nran == 0 && rc == 0 && g.nonly > 0)
            /* --only: none of the chosen scenarios is in this protocol's
             * battery (another model's); an exit 0 of no run is no pass */
            fprintf(stderr, "qchaos: mutation: correct protocol %s: none of the chosen scenarios "
                            "is in its battery (0 runs): not judged\n",
                    base);
        else
            fprintf(stderr, "qchaos: mutation: correct protocol %s through the gate (%d seeds, %d "
                            "at a time): %zu runs, exit %d in %.0f s%s%s\n",
                    base, K, g.jobs, nran, rc, (qc_clock_ms() - tg) / 1000.0,
                    gerr.msg[0] ? ": " : "", gerr.msg);
        json_array_foreach(json_object_get(root, "runs"), i, r)
        {
            const char *scen = json_string_value(json_object_get(r, "scenario"));
            if (scen == NULL || !json_is_true(json_object_get(r, "run")))
                continue;
            size_t j;
            for (j = 0; j < nfp; j++)
                if (!strcmp(fps_rows[j].protocol, base) && !strcmp(fps_rows[j].scenario, scen))
                    break;
            if (j == nfp && nfp < 64 * 3) {
                snprintf(fps_rows[nfp].protocol, sizeof fps_rows[nfp].protocol, "%s", base);
                snprintf(fps_rows[nfp].scenario, sizeof fps_rows[nfp].scenario, "%s", scen);
                nfp++;
            }
            if (j == nfp)
                continue;
            long ex = (long)json_integer_value(json_object_get(r, "exit"));
            const char *failed = json_string_value(json_object_get(r, "failed"));
            fps_rows[j].runs++;
            if ((failed && failed[0]) || ex == 1)
                fps_rows[j].fp++;
            else if (ex != 0 && ex != 4)
                fps_rows[j].failed++;
        }
        json_decref(root);
    }

    json_t *root = json_object();
    json_t *rows = json_array();
    int wn = 6, we = 16, ws = 28;
    for (size_t i = 0; i < n; i++) {
        wn = (int)strlen(ms[i].name) > wn ? (int)strlen(ms[i].name) : wn;
        we = (int)strlen(ms[i].expect) > we ? (int)strlen(ms[i].expect) : we;
    }
    printf("%-*s  %-*s %8s %9s %9s  %s\n", wn, "mutant", we, "expected checker", "caught",
           "median_s", "max_s", "caught by (last seed)");
    for (size_t i = 0; i < n; i++) {
        mutant *m = &ms[i];
        double med = -1, max = -1;
        if (m->nfirst > 0) {
            qsort(m->first_s, (size_t)m->nfirst, sizeof *m->first_s, cmp_double);
            int h = m->nfirst / 2;
            med = m->nfirst % 2 ? m->first_s[h] : (m->first_s[h - 1] + m->first_s[h]) / 2;
            max = m->first_s[m->nfirst - 1];
        }
        char caught[32];
        snprintf(caught, sizeof caught, "%d/%d", m->caught, K);
        char meds[16] = "-", maxs[16] = "-";
        if (med >= 0)
            snprintf(meds, sizeof meds, "%.2f", med);
        if (max >= 0)
            snprintf(maxs, sizeof maxs, "%.2f", max);
        printf("%-*s  %-*s %8s %9s %9s  %s%s\n", wn, m->name, we, m->expect, caught, meds, maxs,
               m->caught_by[0] ? m->caught_by : "-", m->runs_failed ? "  (runs failed)" : "");
        if (m->caught < K || m->runs_failed)
            code = 1;
        json_t *r = json_object();
        json_object_set_new(r, "mutant", json_string(m->name));
        json_object_set_new(r, "protocol", json_string(m->protocol));
        json_object_set_new(r, "scenario", json_string(m->scenario));
        json_object_set_new(r, "model", json_string(m->model));
        json_object_set_new(r, "expect", json_string(m->expect));
        json_object_set_new(r, "seeds", json_integer(K));
        json_object_set_new(r, "caught", json_integer(m->caught));
        json_object_set_new(r, "caught_by", json_string(m->caught_by));
        json_object_set_new(r, "gate_runs", json_integer(m->runs_total));
        json_object_set_new(r, "runs_failed", json_integer(m->runs_failed));
        json_object_set_new(r, "median_first_violation_s", med >= 0 ? json_real(med) : json_null());
        json_object_set_new(r, "max_first_violation_s", max >= 0 ? json_real(max) : json_null());
        json_array_append_new(rows, r);
    }
    json_object_set_new(root, "mutants", rows);
    json_t *fps = json_array();
    for (size_t j = 0; j < nfp; j++) {
        int w = (int)(strlen(fps_rows[j].protocol) + strlen(fps_rows[j].scenario) + 2);
        ws = w > ws ? w : ws;
    }
    printf("\n%-*s  %s\n", ws, "correct protocol on scenario", "false positives");
    for (size_t j = 0; j < nfp; j++) {
        char label[256];
        snprintf(label, sizeof label, "%s: %s", fps_rows[j].protocol, fps_rows[j].scenario);
        printf("%-*s  %13d/%d%s\n", ws, label, fps_rows[j].fp, fps_rows[j].runs,
               fps_rows[j].failed ? "  (runs failed)" : "");
        if (fps_rows[j].fp || fps_rows[j].failed)
            code = 1;
        json_t *r = json_object();
        json_object_set_new(r, "protocol", json_string(fps_rows[j].protocol));
        json_object_set_new(r, "scenario", json_string(fps_rows[j].scenario));
        json_object_set_new(r, "seeds", json_integer(fps_rows[j].runs));
        json_object_set_new(r, "false_positives", json_integer(fps_rows[j].fp));
        json_object_set_new(r, "runs_failed", json_integer(fps_rows[j].failed));
        json_array_append_new(fps, r);
    }
    if (nfp == 0 && ncr > 0 && !qc_interrupted && o->shard_count > 1)
        fprintf(stderr, "qchaos: mutation: shard %d of %d: its share of the correct protocols' "
                        "batteries is empty (the battery has fewer scenarios than shards)\n",
                o->shard_index, o->shard_count);
    else if (nfp == 0 && ncr > 0 && !qc_interrupted)
        code = 1; /* the correct protocols' batteries left nothing to read */
    json_object_set_new(root, "correct_protocol",
                        json_string(o->correct ? correct : "skip_locked, skip_locked_txn, "
                                                           "group_fifo (as the mutants need)"));
    json_object_set_new(root, "false_positives", fps);
    json_object_set_new(root, "seconds", json_real((qc_clock_ms() - t0) / 1000.0));
    if (o->shard_count > 1) {
        json_t *sj = json_object();
        json_object_set_new(sj, "index", json_integer(o->shard_index));
        json_object_set_new(sj, "count", json_integer(o->shard_count));
        json_object_set_new(root, "shard", sj);
    }
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/mutation.json", o->out_dir);
    if (qc_mkdirs(o->out_dir, err) == 0 && json_dump_file(root, path, JSON_INDENT(2)) == 0)
        printf("qchaos: mutation table in %s (%.0f s)\n", path, (qc_clock_ms() - t0) / 1000.0);
    json_decref(root);
    free(ms);
    free(fps_rows);
    free(only);
    free(caught_paths);
    for (size_t i = 0; only_all && i < nonly_all; i++)
        free(only_all[i]);
    free(only_all);
    for (size_t i = 0; i < nextra; i++)
        free((char *)extra[i]);
    free(extra);
    if (qc_interrupted) {
        /* the table covers the runs done so far: inconclusive, as a run */
        fprintf(stderr, "qchaos: mutation: interrupted; the table covers the runs that finished\n");
        return 4;
    }
    return code;
}
