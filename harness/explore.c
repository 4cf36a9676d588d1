/*
 * explore.c - `qchaos explore` (explore.h).
 *
 * Each run is a child `qchaos run` of a copy of the scenario with
 * "[schedule] explore = pct" added (the copy lives in the run's folder; its
 * protocol is passed resolved, so the copy's folder does not matter).
 * Verdicts are read back from each run's exit code; the schedule of the
 * failing run is printed from its ledger (qc_sched_load_replay), as the
 * step lines a script would have.
 */
#include "explore.h"
#include "clock.h"
#include "mutation.h"
#include "sched.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern volatile sig_atomic_t qc_interrupted;

/* Writes dir/explore.ini: the scenario's text and the PCT switch. */
static int write_copy(const char *scenario, const char *dir, int depth, char *path, size_t n,
                      qc_err *err)
{
    char mk[PATH_MAX + 16];
    FILE *in, *out;
    char buf[8192];
    size_t k;

    snprintf(mk, sizeof mk, "mkdir -p '%s'", dir);
    if (system(mk) != 0)
        return qc_err_set(err, QC_EIO, "cannot create %s", dir);
    snprintf(path, n, "%s/explore.ini", dir);
    if ((in = fopen(scenario, "r")) == NULL)
        return qc_err_set(err, QC_EINVAL, "cannot read scenario %s", scenario);
    if ((out = fopen(path, "w")) == NULL) {
        fclose(in);
        return qc_err_set(err, QC_EIO, "cannot write %s", path);
    }
    fprintf(out, "; %s with a PCT schedule (qchaos explore)\n", scenario);
    while ((k = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, k, out);
    fprintf(out, "\n[schedule]\nexplore = pct\npct_depth = %d\n", depth);
    fclose(in);
    if (fclose(out) != 0)
        return qc_err_set(err, QC_EIO, "cannot write %s", path);
    return 0;
}

static void print_schedule(const char *dir)
{
    char ledger[PATH_MAX + 32];
    qc_sched_entry *v = NULL;
    int n = 0;
    qc_err err = {0};

    snprintf(ledger, sizeof ledger, "%s/ledger.jsonl", dir);
    if (qc_sched_load_replay(ledger, &v, &n, &err) != 0) {
        fprintf(stderr, "qchaos: %s\n", err.msg);
        return;
    }
    printf("qchaos: the failing run's order of points (%d), as [schedule] steps:\n", n);
    for (int i = 0; i < n && i < 60; i++) {
        char who[16];
        qc_actor_name(v[i].actor, who, sizeof who);
        if (v[i].job != INT64_MIN)
            printf("  step = %s %s    ; job %lld, seq %ld%s\n", who, v[i].point,
                   (long long)v[i].job, v[i].where, v[i].nowait ? ", blocked" : "");
        else
            printf("  step = %s %s    ; seq %ld%s\n", who, v[i].point, v[i].where,
                   v[i].nowait ? ", blocked" : "");
    }
    if (n > 60)
        printf("  ... %d more in %s\n", n - 60, ledger);
    free(v);
}

int qc_explore_run(const qc_explore_opts *o, qc_err *err)
{
    int inconclusive = 0;
    double t0 = qc_clock_ms();

    if (o->runs < 1 || o->depth < 1)
        return qc_err_set(err, QC_EINVAL, "explore needs --runs >= 1 and --depth >= 1");
    for (int i = 0; i < o->runs && !qc_interrupted; i++) {
        int seed = o->first_seed + i;
        char dir[PATH_MAX], copy[PATH_MAX + 32];
        snprintf(dir, sizeof dir, "%s/run-%d", o->out_dir, seed);
        if (write_copy(o->scenario, dir, o->depth, copy, sizeof copy, err) != 0)
            return 2;
        int rc = qc__run_child(copy, o->protocol, seed, dir, o->dsn);
        printf("qchaos: explore: run %d of %d (seed %d): %s\n", i + 1, o->runs, seed,
               rc == 0   ? "PASS"
               : rc == 1 ? "FAIL"
               : rc == 4 ? "INCONCLUSIVE"
                         : "could not be done");
        fflush(stdout);
        if (rc == 1) {
            printf("qchaos: explore: the first failing schedule is seed %d; its run: %s/ "
                   "(run.log, results.json)\n",
                   seed, dir);
            print_schedule(dir);
            printf("qchaos: replay it with: qchaos run --replay %s\n", dir);
            printf("qchaos: explore: %d runs in %.1f s\n", i + 1, (qc_clock_ms() - t0) / 1000.0);
            return 1;
        }
        if (rc == 4)
            inconclusive++;
        else if (rc != 0) {
            qc_err_set(err, QC_EIO, "run %d (seed %d) could not be done: see %s/run.log", i + 1,
                       seed, dir);
            return 3;
        }
    }
    printf("qchaos: explore: no failing schedule in %d runs (%d inconclusive), %.1f s\n",
           o->runs, inconclusive, (qc_clock_ms() - t0) / 1000.0);
    if (qc_interrupted)
        return 4;
    return inconclusive ? 4 : 0;
}
