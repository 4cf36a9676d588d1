/*
 * mutation.c - mutation self-test: detection power and false alarms.
 *
 * Each run is a child process (this executable, `run ...`), so a run's
 * threads, connections and ephemeral server never leak into the next and a
 * crash of one run is reported, not fatal.  Verdicts are read back from
 * each run's results.json.
 */
#include "mutation.h"
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

/* Did any checker in list FAIL in dir/results.json?  *first_s gets the
 * earliest first-violation time among them.  Returns 1 caught, 0 not, -1
 * no results. */
static int read_caught(const char *dir, const char *list, double *first_s, int *any_fail)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/results.json", dir);
    json_t *r = json_load_file(path, 0, NULL);
    if (!r)
        return -1;
    int caught = 0;
    *first_s = -1;
    *any_fail = 0;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r, "checkers"), i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        const char *v = json_string_value(json_object_get(c, "verdict"));
        if (!name || !v || strcmp(v, "FAIL"))
            continue;
        *any_fail = 1;
        if (!list)
            continue;
        /* name in the comma list? */
        size_t n = strlen(name);
        for (const char *p = list; (p = strstr(p, name)); p += n) {
            int start = p == list || p[-1] == ',' || p[-1] == ' ';
            int end = p[n] == 0 || p[n] == ',' || p[n] == ' ';
            if (start && end) {
                caught = 1;
                json_t *fs = json_object_get(c, "first_violation_s");
                double t = json_is_number(fs) ? json_number_value(fs) : -1;
                if (t >= 0 && (*first_s < 0 || t < *first_s))
                    *first_s = t;
                break;
            }
        }
    }
    json_decref(r);
    return caught;
}

static int add_protocol_mutants(mutant **ms, size_t *n, const char *dir, const char *only,
                                qc_err *err)
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
        if (only && !strstr(e->d_name, only))
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
        snprintf(m->name, sizeof m->name, "%.*s", (int)(len - 4), e->d_name);
        snprintf(m->protocol, sizeof m->protocol, "%s", path);
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
        if (only && !strstr(e->d_name, only))
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
        snprintf(m->scenario, sizeof m->scenario, "%s", path);
        snprintf(m->expect, sizeof m->expect, "%s", c.expect);
        if ((rc = qc_scenario_resolve(c.baseline, dir, m->baseline, sizeof m->baseline, err)) != 0)
            break;
    }
    closedir(d);
    return rc;
}

/* A scenario path as the table shows it: resolved ("mutants/../idle.ini"
 * is idle.ini) and relative to the qchaos data folder when inside it.
 * Returns a static buffer (the table is printed by one thread). */
static const char *shown_path(const char *path)
{
    static char buf[PATH_MAX];
    char real[PATH_MAX];
    const char *d = qc_datadir();
    size_t dl = strlen(d);

    if (realpath(path, real) == NULL)
        snprintf(real, sizeof real, "%s", path);
    if (!strncmp(real, d, dl) && real[dl] == '/')
        snprintf(buf, sizeof buf, "%s", real + dl + 1);
    else
        snprintf(buf, sizeof buf, "%s", real);
    return buf;
}

int qc_mutation_run(const qc_mutation_opts *o, qc_err *err)
{
    char dir[PATH_MAX], correct[PATH_MAX];
    mutant *ms = NULL;
    size_t n = 0;
    int code = 0;
    if (qc_scenario_resolve(o->correct ? o->correct : "backends/postgres/skip_locked.sql", NULL,
                            correct, sizeof correct, err) != 0)
        return 2;
    snprintf(dir, sizeof dir, "%s/backends/postgres/mutants", qc_datadir());
    if (add_protocol_mutants(&ms, &n, dir, o->only, err) != 0) {
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
        if (o->only)
            qc_err_set(err, QC_EINVAL,
                       "no mutant name contains '%s' (see backends/postgres/mutants/ and "
                       "scenarios/mutants/ under %s)",
                       o->only, qc_datadir());
        else
            qc_err_set(err, QC_EINVAL, "no mutants found under %s", qc_datadir());
        return 2;
    }
    int K = o->seeds > 64 ? 64 : o->seeds;
    fprintf(stderr, "qchaos: mutation: %zu mutants x %d seeds\n", n, K);
    for (size_t i = 0; i < n && !qc_interrupted; i++) {
        mutant *m = &ms[i];
        for (int s = 1; s <= K && !qc_interrupted; s++) {
            char out[PATH_MAX];
            snprintf(out, sizeof out, "%s/%s/seed%d", o->out_dir, m->name, s);
            int rc = qc__run_child(m->scenario, m->protocol, s, out, o->dsn);
            double first = -1;
            int any = 0;
            int caught = read_caught(out, m->expect, &first, &any);
            if (rc != 0 && rc != 1 && rc != 4)
                m->runs_failed++;
            if (caught == 1) {
                m->caught++;
                if (first >= 0)
                    m->first_s[m->nfirst++] = first;
            }
            fprintf(stderr, "qchaos: mutation: %s seed %d: exit %d, %s\n", m->name, s, rc,
                    caught == 1 ? "caught" : caught == 0 ? "ESCAPED" : "no results");
        }
    }
    /* The correct protocol against every distinct scenario. */
    char (*scen)[PATH_MAX] = calloc(n, sizeof *scen);
    int *fp = calloc(n, sizeof *fp), *fp_failed = calloc(n, sizeof *fp_failed);
    size_t ns = 0;
    if (!scen || !fp || !fp_failed) {
        free(ms);
        free(scen);
        free(fp);
        free(fp_failed);
        qc_err_set(err, QC_ENOMEM, "out of memory");
        return 3;
    }
    for (size_t i = 0; i < n; i++) {
        size_t j;
        for (j = 0; j < ns && strcmp(scen[j], ms[i].baseline); j++)
            ;
        if (j == ns)
            snprintf(scen[ns++], PATH_MAX, "%s", ms[i].baseline);
    }
    for (size_t j = 0; j < ns && !qc_interrupted; j++) {
        const char *base = strrchr(scen[j], '/');
        base = base ? base + 1 : scen[j];
        for (int s = 1; s <= K && !qc_interrupted; s++) {
            char out[PATH_MAX];
            snprintf(out, sizeof out, "%s/correct-%.*s/seed%d", o->out_dir,
                     (int)(strlen(base) > 4 ? strlen(base) - 4 : strlen(base)), base, s);
            /* the scenario's own (correct) protocol, unless --correct names one */
            int rc = qc__run_child(scen[j], o->correct ? correct : NULL, s, out, o->dsn);
            double first;
            int any = 0;
            read_caught(out, NULL, &first, &any);
            if (any || rc == 1)
                fp[j]++;
            else if (rc != 0 && rc != 4)
                fp_failed[j]++;
            fprintf(stderr, "qchaos: mutation: correct protocol on %s seed %d: exit %d%s\n", base,
                    s, rc, any ? " FALSE POSITIVE" : "");
        }
    }

    json_t *root = json_object();
    json_t *rows = json_array();
    int wn = 6, we = 16, ws = 28;
    for (size_t i = 0; i < n; i++) {
        wn = (int)strlen(ms[i].name) > wn ? (int)strlen(ms[i].name) : wn;
        we = (int)strlen(ms[i].expect) > we ? (int)strlen(ms[i].expect) : we;
    }
    printf("%-*s  %-*s %8s %9s %9s\n", wn, "mutant", we, "expected checker", "caught", "median_s",
           "max_s");
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
        printf("%-*s  %-*s %8s %9s %9s%s\n", wn, m->name, we, m->expect, caught, meds, maxs,
               m->runs_failed ? "  (runs failed)" : "");
        if (m->caught < K || m->runs_failed)
            code = 1;
        json_t *r = json_object();
        json_object_set_new(r, "mutant", json_string(m->name));
        json_object_set_new(r, "protocol", json_string(m->protocol));
        json_object_set_new(r, "scenario", json_string(m->scenario));
        json_object_set_new(r, "expect", json_string(m->expect));
        json_object_set_new(r, "seeds", json_integer(K));
        json_object_set_new(r, "caught", json_integer(m->caught));
        json_object_set_new(r, "runs_failed", json_integer(m->runs_failed));
        json_object_set_new(r, "median_first_violation_s", med >= 0 ? json_real(med) : json_null());
        json_object_set_new(r, "max_first_violation_s", max >= 0 ? json_real(max) : json_null());
        json_array_append_new(rows, r);
    }
    json_object_set_new(root, "mutants", rows);
    json_t *fps = json_array();
    for (size_t j = 0; j < ns; j++)
        ws = (int)strlen(shown_path(scen[j])) > ws ? (int)strlen(shown_path(scen[j])) : ws;
    printf("\n%-*s  %s\n", ws, "correct protocol on scenario", "false positives");
    for (size_t j = 0; j < ns; j++) {
        printf("%-*s  %13d/%d%s\n", ws, shown_path(scen[j]), fp[j], K,
               fp_failed[j] ? "  (runs failed)" : "");
        if (fp[j] || fp_failed[j])
            code = 1;
        json_t *r = json_object();
        json_object_set_new(r, "scenario", json_string(scen[j]));
        json_object_set_new(r, "seeds", json_integer(K));
        json_object_set_new(r, "false_positives", json_integer(fp[j]));
        json_object_set_new(r, "runs_failed", json_integer(fp_failed[j]));
        json_array_append_new(fps, r);
    }
    json_object_set_new(root, "correct_protocol",
                        json_string(o->correct ? correct : "each scenario's own protocol"));
    json_object_set_new(root, "false_positives", fps);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/mutation.json", o->out_dir);
    if (qc_mkdirs(o->out_dir, err) == 0 && json_dump_file(root, path, JSON_INDENT(2)) == 0)
        printf("qchaos: mutation table in %s\n", path);
    json_decref(root);
    free(ms);
    free(scen);
    free(fp);
    free(fp_failed);
    if (qc_interrupted) {
        /* the table covers the runs done so far: inconclusive, as a run */
        fprintf(stderr, "qchaos: mutation: interrupted; the table covers the runs that finished\n");
        return 4;
    }
    return code;
}
