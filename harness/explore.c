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
#define _XOPEN_SOURCE 700
#include "audit.h"
#include "explore.h"
#include "clock.h"
#include "mutation.h"
#include "sched.h"

#include <dirent.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

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

/* Refuses (2, err) an out folder that holds an earlier exploration (a
 * run-N folder) or a run (ledger.jsonl), unless force; with force the
 * run-N folders go, so the folder holds this exploration's runs alone. */
static int out_free(const char *out, int force, qc_err *err)
{
    char p[PATH_MAX];
    struct stat st;
    DIR *d;
    struct dirent *de;
    int held = 0;

    snprintf(p, sizeof p, "%s/ledger.jsonl", out);
    if (stat(p, &st) == 0)
        held = 1;
    if ((d = opendir(out)) == NULL)
        return 0;
    while ((de = readdir(d)) != NULL) {
        if (!qc_numbered_name(de->d_name, "run-"))
            continue;
        snprintf(p, sizeof p, "%s/%s", out, de->d_name);
        if (lstat(p, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        held = 1;
        if (force && qc_remove_tree(p) != 0) {
            closedir(d);
            qc_err_set(err, QC_EIO, "cannot remove %s (an earlier exploration's run)", p);
            return 2;
        }
    }
    closedir(d);
    if (held && !force) {
        qc_err_set(err, QC_EINVAL,
                   "output folder '%s' already holds an exploration (run-N folders) or a run; "
                   "remove it, give another --out, or pass --force",
                   out);
        return 2;
    }
    return 0;
}

/* The checkers that FAILed in dir/results.json, with the first job of
 * each ("exclusive_claim (job 1), no_lost_jobs"), into buf (size n);
 * "(see DIR/run.log)" when there is no results.json. */
static void failed_checkers(const char *dir, char *buf, size_t n)
{
    char p[PATH_MAX + 16];
    json_t *root, *c;
    size_t i, len = 0;

    buf[0] = '\0';
    snprintf(p, sizeof p, "%s/results.json", dir);
    if ((root = json_load_file(p, 0, NULL)) == NULL) {
        snprintf(buf, n, "(no results.json: see %.900s/run.log)", dir);
        return;
    }
    json_array_foreach(json_object_get(root, "checkers"), i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        const char *v = json_string_value(json_object_get(c, "verdict"));
        if (name == NULL || v == NULL || strcmp(v, "FAIL") || len + 1 >= n)
            continue;
        json_t *j = json_object_get(json_array_get(json_object_get(c, "violations"), 0), "job");
        if (json_is_integer(j))
            snprintf(buf + len, n - len, "%s%s (first on job %lld)", len ? ", " : "", name,
                     (long long)json_integer_value(j));
        else
            snprintf(buf + len, n - len, "%s%s", len ? ", " : "", name);
        len = strlen(buf);
    }
    json_decref(root);
    if (len == 0)
        snprintf(buf, n, "no checker (see %.900s/run.log)", dir);
}

/* The command that replays run folder dir, as the user can type it where
 * they are: the binary as they called it, the folder as given, and the
 * --dsn of the exploration (its password as ***), each word quoted. */
static void replay_command(const qc_explore_opts *o, const char *dir, char *buf, size_t n)
{
    char *p = qc_cli_quote(o->prog ? o->prog : "qchaos"), *d = qc_cli_quote(dir), *ds = NULL;
    if (o->dsn != NULL) {
        size_t rn = strlen(o->dsn) * 4 + 64;
        char *red = malloc(rn);
        if (red != NULL) {
            qc_redact_conninfo(o->dsn, red, rn);
            ds = qc_cli_quote(red);
            free(red);
        }
    }
    snprintf(buf, n, "%s run --replay %s%s%s", p ? p : "qchaos", d ? d : dir,
             ds ? " --dsn " : "", ds ? ds : "");
    free(p);
    free(d);
    free(ds);
}

int qc_explore_run(const qc_explore_opts *o, qc_err *err)
{
    int inconclusive = 0;
    double t0 = qc_clock_ms();

    if (o->runs < 1 || o->depth < 1)
        return qc_err_set(err, QC_EINVAL, "explore needs --runs >= 1 and --depth >= 1");
    if (out_free(o->out_dir, o->force, err) != 0)
        return 2;
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
            char cmd[2 * PATH_MAX], failed[1024];
            replay_command(o, dir, cmd, sizeof cmd);
            failed_checkers(dir, failed, sizeof failed);
            printf("qchaos: replay it with: %s\n", cmd);
            printf("qchaos: explore: FAIL: run %d of %d (seed %d) failed %s; %d runs in %.1f s\n",
                   i + 1, o->runs, seed, failed, i + 1, (qc_clock_ms() - t0) / 1000.0);
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
