/*
 * main.c - the qchaos command line.  Only this file calls exit.
 *
 *   qchaos run [SCENARIO] [--dsn DSN] [--protocol FILE] [--workers N]
 *              [--jobs N] [--duration S] [--seed N] [--out DIR] [--keep]
 *              [--force] [-P S] [--repeat N] ...
 *   qchaos audit [--out DIR] LEDGER...
 *   qchaos report DIR [LEDGER...]
 *   qchaos mutation [--seeds K] ...
 *   qchaos gate PROTOCOL ...
 *   qchaos summary [--json FILE] RUNDIR|DIR...
 *   qchaos diff [--json FILE] RUNDIR_A RUNDIR_B
 *   qchaos version | -V | --version | help [COMMAND]
 *
 * Each command has its own --help.  getopt_long's own messages are off
 * (opterr = 0): a bad option is one line from bad_option(), with "qchaos" as
 * the program name, and exit 2.
 *
 * Exit codes (DESIGN.md): 0 all checkers pass; 1 a violation; 2 usage or
 * input error; 3 a database or service could not be reached or set up;
 * 4 inconclusive.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "audit.h"
#include "cli.h"
#include "../reports/report.h"
#include "explore.h"
#include "gate.h"
#include "mutation.h"
#include "shrink.h"
#include "replay.h"
#include "runner.h"
#include "shard.h"
#include "summary.h"
#include "target.h"
#include "../backends/driver.h"

extern volatile sig_atomic_t qc_interrupted;

static void on_signal(int sig)
{
    (void)sig;
    qc_interrupted = 1;
}

static const char exit_codes[] =
    "exit codes: 0 pass, 1 violation, 2 usage or input error,\n"
    "            3 database or service unreachable, 4 inconclusive or interrupted,\n"
    "            5 an adapter broke the adapter protocol\n";

/* SIGINT / SIGTERM set qc_interrupted (no SA_RESTART: a blocking waitpid
 * returns EINTR, so a parent can pass the signal on to its child run). */
static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: qchaos run [SCENARIO] [options]\n"
            "       qchaos audit [--out DIR] [--allow-inconclusive] LEDGER|RUNDIR...\n"
            "       qchaos report [--allow-inconclusive] DIR [LEDGER...]\n"
            "       qchaos mutation [--seeds K] [--out DIR] [--dsn DSN] [--only NAME] [--correct FILE]\n"
            "                       [--jobs N]\n"
            "       qchaos gate PROTOCOL [--dsn DSN] [--seeds K] [--seed N] [--out DIR] [--groups]\n"
            "                   [--fail-fast] [--jobs N] [--policy FILE]\n"
            "       qchaos shrink RUNDIR [--out DIR] [--dsn DSN] [--checker NAME] [--max-runs N]\n"
            "       qchaos explore SCENARIO [--protocol FILE] [--runs N] [--seed N] [--depth D]\n"
            "                      [--dsn DSN] [--out DIR]\n"
            "       qchaos summary [--json FILE] RUNDIR|DIR...\n"
            "       qchaos diff [--json FILE] RUNDIR_A RUNDIR_B\n"
            "       qchaos version (or -V, --version)\n"
            "\n"
            "'qchaos COMMAND --help' (or 'qchaos help COMMAND') lists a command's options.\n"
            "%s",
            exit_codes);
}

static void run_help(void)
{
    printf("usage: qchaos run [SCENARIO] [options]\n"
           "\n"
           "Runs a scenario against a database and audits it.  SCENARIO is a scenario\n"
           "file, or the name of a bundled one (default, chaos, cases/c01_snapshot_claim)\n"
           "looked up in %s/scenarios (QCHAOS_HOME sets the data folder).\n"
           "\n"
           "options:\n"
           "  --dsn DSN          database to test (libpq conninfo or URI); default: the PG*\n"
           "                     variables (PGHOST, PGPORT, PGSERVICE ...) as psql reads them,\n"
           "                     and without any of them an ephemeral PostgreSQL\n"
           "  --worker-dsn DSN   workers and reaper connect here instead (e.g. your PgBouncer)\n"
           "  --protocol FILE    protocol (backend) file, overrides the scenario's\n"
           "  --workers N        worker threads (one connection each)\n"
           "  --jobs N           jobs to enqueue\n"
           "  --duration S       chaos phase in seconds, the queue kept busy (a backlog\n"
           "                     topped up) the whole time, as pgbench -T (0: until drained)\n"
           "  --seed N           seed of the workload and fault plan\n"
           "  --out DIR          output folder (default results/NAME-SEED)\n"
           "  --force            write into an output folder that already holds a run\n"
           "  --keep             keep the queue tables (skip teardown)\n"
           "  --allow-existing   run although the schema qchaos holds tables qchaos did not\n"
           "                     create (the protocol's teardown may drop them)\n"
           "  -P, --progress S   a progress line every S seconds on stderr, terminal or\n"
           "                     not (phase, target, jobs done, jobs/s, ETA)\n"
           "  --no-progress      no progress line on a terminal (-P still prints)\n"
           "  --allow-inconclusive  junit.xml shows INCONCLUSIVE checkers as skipped\n"
           "  --repeat N         run seeds SEED..SEED+N-1 (folders OUT/seed-S), stop at the\n"
           "                     first that does not pass; then the summary of the runs\n"
           "                     (as 'qchaos summary'; JSON in OUT/summary.json)\n"
           "  --replay RUNDIR    run RUNDIR's run again (its scenario, protocol, seed, workers,\n"
           "                     jobs), imposing the order in which its actors passed the\n"
           "                     protocol's points (results in RUNDIR/replay-N); where\n"
           "                     overlapping actions diverge, other orders they allow\n"
           "                     are tried, a whole run each (OUT/attempt-K); OUT holds\n"
           "                     the attempt that reproduced the run, else the furthest\n"
           "  --replay-attempts N  at most N runs for one --replay (default 30; 1: the\n"
           "                     ledger's order only)\n"
           "  --shard I/N        be process I of N driving one run on one database (--dsn;\n"
           "                     PostgreSQL): workers I, I+N, ... and every N-th job; shard 0\n"
           "                     sets up, reaps and snapshots; then 'qchaos audit' merges\n"
           "                     the N ledgers (README \"Sharded runs\")\n"
           "  -h, --help         this help\n"
           "\n%s",
           qc_datadir(), exit_codes);
}

static void audit_help(void)
{
    printf("usage: qchaos audit [--out DIR] [--allow-inconclusive] LEDGER|RUNDIR...\n"
           "\n"
           "Re-runs the checkers on saved ledgers and prints the verdict table.  Several\n"
           "ledgers merge by sequence number; a run folder stands for its ledger.jsonl.\n"
           "\n"
           "options:\n"
           "  -o, --out DIR         write results.json and the reports into DIR\n"
           "  --allow-inconclusive  junit.xml shows INCONCLUSIVE checkers as skipped\n"
           "  -h, --help            this help\n"
           "\n%s",
           exit_codes);
}

static void report_help(void)
{
    printf("usage: qchaos report [--allow-inconclusive] DIR [LEDGER...]\n"
           "\n"
           "Re-renders junit.xml, report.md, report.html and plots/ of the run folder DIR\n"
           "from its results.json and the given ledgers (default DIR/ledger.jsonl).\n"
           "\n"
           "options:\n"
           "  --allow-inconclusive  junit.xml shows INCONCLUSIVE checkers as skipped\n"
           "  -h, --help            this help\n"
           "\n"
           "exit codes: 0 written, 2 input or file error, 3 any other failure\n");
}

static void gate_help(void)
{
    printf("usage: qchaos gate PROTOCOL [--dsn DSN] [--seeds K] [--seed N] [--out DIR] [--groups]\n"
           "                   [--fail-fast] [--jobs N] [--policy FILE] [--shard I/N]\n"
           "\n"
           "Runs the battery of scenarios that covers every checker of PROTOCOL's model\n"
           "(targeted stalls that send stale requests while the job's new owner holds it,\n"
           "contention, kills, lost answers, poison jobs, the field cases) against\n"
           "PROTOCOL, and gives one verdict, one junit.xml (a testcase per scenario and\n"
           "checker) and gate.json.  This is the CI gate for a queue implementation.\n"
           "\n"
           "options:\n"
           "  --dsn DSN     database to test (default: each run starts an ephemeral server)\n"
           "  --seeds K     seeds per scenario (default 1)\n"
           "  --seed N      first seed (default 1)\n"
           "  --out DIR     output folder (default results/gate)\n"
           "  --groups      also the grouped scenario (protocols with exclusive groups)\n"
           "  --fail-fast   start no further run after one failed (the rest: not run)\n"
           "  --jobs N      N runs at once (default 1); with --dsn (PostgreSQL) run K > 0\n"
           "                uses the database qchaos_gate_K, created on that server\n"
           "  --policy FILE lay FILE's [policy], [idle] and [sink] over every scenario\n"
           "                (gate your workers' policy: heartbeat, backoff, ...)\n"
           "  --shard I/N   only share I of N of the battery (scenario k when k %% N == I,\n"
           "                every seed): one CI job each; 'qchaos summary' of the N\n"
           "                output folders merges them\n"
           "  -h, --help    this help\n"
           "\n%s",
           exit_codes);
}

static void summary_help(void)
{
    printf("usage: qchaos summary [--json FILE] RUNDIR|DIR...\n"
           "\n"
           "Summarizes runs from their results.json: one line per run (seed, verdict,\n"
           "jobs/s over its work, recovery ms p50/p95/max, failing checkers), one line per\n"
           "checker (verdicts across the runs, violations, first-violation times) and the\n"
           "aggregate (jobs/s min/median/max, recovery times pooled over every run).  A\n"
           "RUNDIR holds results.json; a DIR holding none stands for its subfolders that\n"
           "do (what 'qchaos run --repeat N --out DIR' writes).\n"
           "\n"
           "options:\n"
           "  --json FILE   write the aggregate as JSON (schema qchaos-summary/1)\n"
           "  -h, --help    this help\n"
           "\n"
           "exit codes: 0 every run passed, 1 a run failed, 2 input error (a folder without\n"
           "            results.json, a file that does not parse), 3 FILE cannot be written,\n"
           "            4 no run failed but one was inconclusive\n");
}

static void diff_help(void)
{
    printf("usage: qchaos diff [--json FILE] RUNDIR_A RUNDIR_B\n"
           "\n"
           "Compares run B with run A (say, a protocol change with the one before): each\n"
           "checker's verdict and violations in A and B, the violations new in B and gone\n"
           "from A (matched by checker and job), and the shifts of jobs/s, claim and\n"
           "complete latency and recovery time.  B is worse on a checker when B judges it\n"
           "and its verdict is worse (PASS < INCONCLUSIVE < FAIL), or it fails in both and\n"
           "B has a violation A has not.  Throughput and latency are shown, never judged.\n"
           "\n"
           "options:\n"
           "  --json FILE   write the comparison as JSON (schema qchaos-diff/1)\n"
           "  -h, --help    this help\n"
           "\n"
           "exit codes: 0 B is not worse on any judged checker, 1 it is, 2 input error,\n"
           "            3 FILE cannot be written\n");
}

static void shrink_help(void)
{
    printf("usage: qchaos shrink RUNDIR [--out DIR] [--dsn DSN] [--checker NAME] [--max-runs N]\n"
           "                     [--timeout S] [--tries K] [--confirm N]\n"
           "\n"
           "Cuts the failing run in RUNDIR down (jobs, workers, each fault, the nemesis, the\n"
           "feed, the duration) by child runs, keeping each cut while the same checker still\n"
           "FAILs, and writes the smallest scenario found (OUT/shrunk.ini, a comment saying\n"
           "where it came from and which checker fails) and the command that runs it.\n"
           "\n"
           "options:\n"
           "  --out DIR        output folder (default RUNDIR/shrink)\n"
           "  --dsn DSN        database for the child runs (default: each starts an\n"
           "                   ephemeral server)\n"
           "  --checker NAME   the checker that must keep failing (default: the run's first\n"
           "                   failing judged checker)\n"
           "  --max-runs N     child runs allowed while cutting (default 60)\n"
           "  --timeout S      wall-clock bound of each child run (default 300)\n"
           "  --tries K        runs per cut (seeds S, S+1, ...); a cut is kept when the\n"
           "                   checker failed in each of them (default 3)\n"
           "  --confirm N      runs of the result to confirm it fails (default 3)\n"
           "  -h, --help       this help\n"
           "\n"
           "exit codes: 0 a failing scenario was written, 2 usage or input error (not a run\n"
           "            folder, a run that failed no checker, its scenario or protocol file\n"
           "            gone), 3 child runs could not be done, 4 interrupted, or the failure\n"
           "            did not show again (nothing written)\n");
}

static void mutation_help(void)
{
    printf("usage: qchaos mutation [--seeds K] [--out DIR] [--dsn DSN] [--odbc CONN] [--only NAME]\n"
           "                       [--correct FILE] [--jobs N] [--shard I/N]\n"
           "\n"
           "The detection-power self-test: every known-broken protocol and policy goes\n"
           "through the gate battery of its model for seeds 1..K (its own scenario first,\n"
           "up to the first run in which an expected checker fails), and the correct\n"
           "protocols through the whole battery.  Exit 0 only when every mutant is caught\n"
           "in every seed and nothing false was raised.\n"
           "\n"
           "options:\n"
           "  --seeds K          seeds per mutant (default 3, at most 64)\n"
           "  --out DIR          output folder (default results/mutation)\n"
           "  --dsn DSN          database for the runs (scenarios that restart or pause the\n"
           "                     server get their own); default: an ephemeral PostgreSQL\n"
           "  --odbc CONN        a MariaDB server (ODBC connection string): the MariaDB\n"
           "                     mutants (mariadb:NAME) join the matrix, with the protocol\n"
           "                     each overlays on its own scenario as the correct one\n"
           "  --only NAME        only the mutants whose name contains NAME\n"
           "  --correct FILE     run FILE as the correct protocol on every scenario\n"
           "  --jobs N           runs at once in the correct protocols' batteries (see\n"
           "                     'qchaos gate --help'); default 1\n"
           "  --shard I/N        only share I of N: mutants k (name order) when k %% N == I,\n"
           "                     and share I of each correct protocol's battery; the\n"
           "                     matrix passes when all N shards exit 0\n"
           "  -h, --help         this help\n"
           "\n%s",
           exit_codes);
}

/* How the user called us, for commands we print back ("./qchaos" when run
 * from the checkout); plain "qchaos" unless argv[0] is a simple path. */
static const char *prog_name = "qchaos";

static int die(int code, const char *msg)
{
    fprintf(stderr, "qchaos: %s\n", msg);
    return code;
}

static int parse_long_arg(const char *opt, const char *v, long min, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < min) {
        fprintf(stderr, "qchaos: %s expects an integer >= %ld, got '%s'\n", opt, min, v);
        return -1;
    }
    *out = x;
    return 0;
}

/* Explains the option getopt_long (opterr = 0) refused, in one line with a
 * hint; c is what it returned ('?' or ':').  Returns 2 (exit code). */
static int bad_option(const char *cmd, const struct option *opts, int argc, char **argv, int c)
{
    const char *w = optind > 0 && optind <= argc ? argv[optind - 1] : "";
    char word[128], why[512];
    if (strncmp(w, "--", 2) != 0) {
        snprintf(word, sizeof word, "-%c", optopt > 0 && optopt < 128 ? optopt : '?');
        if (c == ':')
            snprintf(why, sizeof why, "option '%s' of '%s' needs a value", word, cmd);
        else
            snprintf(why, sizeof why, "unknown option '%s' for '%s'", word, cmd);
    } else {
        size_t n = strcspn(w + 2, "=");
        snprintf(word, sizeof word, "%.*s", (int)(n + 2 < 100 ? n + 2 : 100), w);
        const struct option *exact = NULL;
        int nprefix = 0;
        char names[256] = "";
        for (const struct option *o = opts; o->name; o++) {
            if (strncmp(o->name, w + 2, n) != 0)
                continue;
            if (strlen(o->name) == n)
                exact = o;
            if (++nprefix <= 4)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s--%s",
                         nprefix > 1 ? ", " : "", o->name);
        }
        if (!exact && nprefix == 1) {
            for (const struct option *o = opts; o->name; o++)
                if (!strncmp(o->name, w + 2, n))
                    exact = o;
        }
        if (!exact && nprefix > 1)
            snprintf(why, sizeof why, "option '%s' of '%s' is ambiguous (%s)", word, cmd, names);
        else if (!exact)
            snprintf(why, sizeof why, "unknown option '%s' for '%s'", word, cmd);
        else if (c == ':')
            snprintf(why, sizeof why, "option '--%s' of '%s' needs a value", exact->name, cmd);
        else if (exact->has_arg == no_argument && w[n + 2] == '=')
            snprintf(why, sizeof why, "option '--%s' of '%s' takes no value", exact->name, cmd);
        else
            snprintf(why, sizeof why, "bad option '%s' for '%s'", word, cmd);
    }
    fprintf(stderr, "qchaos: %s (see 'qchaos %s --help')\n", why, cmd);
    return 2;
}

/* 0 when dir holds no earlier run (no ledger.jsonl) or force is set; else
 * says so and returns 2: a second run would overwrite the first's evidence. */
static int out_is_free(const char *dir, int force)
{
    char p[1100];
    struct stat st;
    snprintf(p, sizeof p, "%s/ledger.jsonl", dir);
    if (force || stat(p, &st) != 0)
        return 0;
    fprintf(stderr,
            "qchaos: output folder '%s' already holds a run (ledger.jsonl); remove it or pass "
            "--force\n",
            dir);
    return 2;
}

/* The output folder of the run with this seed: --out, or results/NAME-SEED;
 * with --repeat, OUT/seed-SEED (or results/NAME-SEED). */
static void run_out_dir(char *dir, size_t n, const char *out, const char *name, uint64_t seed,
                        long repeat_n)
{
    if (out && repeat_n > 0)
        snprintf(dir, n, "%.900s/seed-%" PRIu64, out, seed);
    else if (out)
        snprintf(dir, n, "%s", out);
    else
        snprintf(dir, n, "results/%.200s-%" PRIu64, name, seed);
}

/* The summary after --repeat: the runs of seeds first..last that left a
 * results.json (a run that could not start leaves none), printed as
 * `qchaos summary` prints it, JSON into OUT/summary.json (without --out,
 * results/NAME-seeds-FIRST-LAST.json).  It never changes the exit code:
 * that is the runs'. */
static void repeat_summary(const char *out, const char *name, uint64_t first, uint64_t last)
{
    char **dirs = calloc((size_t)(last - first + 1), sizeof *dirs);
    int n = 0;
    for (uint64_t s = first; dirs && s <= last; s++) {
        char dir[1100], rj[1200];
        struct stat st;
        run_out_dir(dir, sizeof dir, out, name, s, 1);
        snprintf(rj, sizeof rj, "%s/results.json", dir);
        if (stat(rj, &st) == 0 && (dirs[n] = strdup(dir)) != NULL)
            n++;
    }
    if (n > 0) {
        char json[1200];
        if (out)
            snprintf(json, sizeof json, "%.1000s/summary.json", out);
        else
            snprintf(json, sizeof json, "results/%.200s-seeds-%" PRIu64 "-%" PRIu64 ".json", name,
                     first, last);
        qc_err err = {0};
        printf("\n");
        if (qc_summary_run((const char *const *)dirs, n, json, stdout, &err) == 2 ||
            err.msg[0])
            fprintf(stderr, "qchaos: --repeat summary: %s\n", err.msg);
        else
            printf("qchaos: --repeat summary of %d runs in %s\n", n, json);
    }
    for (int i = 0; i < n; i++)
        free(dirs[i]);
    free(dirs);
}

/* The words of `qchaos run` as typed (getopt_long reorders argv), for the
 * repeat line; freed by main. */
static char **run_typed;

static const char *jstr(const json_t *v)
{
    return json_is_string(v) ? json_string_value(v) : "";
}

/* What --replay RUNDIR takes from the run's ledger header. */
typedef struct replay_src {
    char ledger[4200];
    char scenario[4096];
    char protocol[1000];
    uint64_t seed;
    long workers, jobs;
    double duration_s;
} replay_src;

/* Reads RUNDIR/ledger.jsonl's header.  Errors: QC_EINVAL naming the file
 * (not a run folder, a ledger without a header). */
static int replay_load(const char *dir, replay_src *r, qc_err *err)
{
    char *line = NULL;
    size_t cap = 0;
    FILE *f;
    json_t *h;
    json_error_t je;

    snprintf(r->ledger, sizeof r->ledger, "%s/ledger.jsonl", dir);
    if ((f = fopen(r->ledger, "r")) == NULL)
        return qc_err_set(err, QC_EINVAL, "--replay %s: no ledger.jsonl there (give the folder "
                                          "of a run)", dir);
    if (getline(&line, &cap, f) < 0) {
        fclose(f);
        free(line);
        return qc_err_set(err, QC_EINVAL, "%s:1: empty ledger", r->ledger);
    }
    fclose(f);
    h = json_loads(line, 0, &je);
    free(line);
    if (h == NULL || strcmp(jstr(json_object_get(h, "type")), "header")) {
        json_decref(h);
        return qc_err_set(err, QC_EINVAL, "%s:1: expected the run's header line", r->ledger);
    }
    const char *sc = json_string_value(json_object_get(h, "scenario_file"));
    const char *pr = json_string_value(json_object_get(h, "protocol"));
    if (pr == NULL || !json_is_integer(json_object_get(h, "seed"))) {
        json_decref(h);
        return qc_err_set(err, QC_EINVAL, "%s:1: the header names no protocol or seed",
                          r->ledger);
    }
    snprintf(r->scenario, sizeof r->scenario, "%s", sc ? sc : "");
    snprintf(r->protocol, sizeof r->protocol, "%s", pr);
    r->seed = (uint64_t)json_integer_value(json_object_get(h, "seed"));
    r->workers = (long)json_integer_value(json_object_get(h, "workers"));
    r->jobs = (long)json_integer_value(json_object_get(h, "jobs"));
    r->duration_s = json_number_value(json_object_get(h, "duration_s"));
    json_decref(h);
    if (r->scenario[0] == '\0')
        return qc_err_set(err, QC_EINVAL,
                          "%s:1: the run had no scenario file; give it: qchaos run FILE "
                          "--replay %s",
                          r->ledger, dir);
    if (r->workers < 1)
        return qc_err_set(err, QC_EINVAL, "%s:1: the header has no worker count", r->ledger);
    return 0;
}

/* The first violation's job of checker name in results.json root, or
 * INT64_MIN. */
static int64_t first_job(json_t *root, const char *name, int *failed)
{
    size_t i;
    json_t *c;
    *failed = 0;
    json_array_foreach(json_object_get(root, "checkers"), i, c)
    {
        if (strcmp(jstr(json_object_get(c, "name")), name))
            continue;
        *failed = !strcmp(jstr(json_object_get(c, "verdict")), "FAIL");
        json_t *v = json_array_get(json_object_get(c, "violations"), 0);
        json_t *j = json_object_get(v, "job");
        return json_is_integer(j) ? (int64_t)json_integer_value(j) : INT64_MIN;
    }
    return INT64_MIN;
}

/* Whether checker name of results root failed on job (among all its
 * violations, not only the first: a replay may add one, say a late
 * effect of another worker listed before it). */
static int failed_on(json_t *root, const char *name, int64_t job)
{
    size_t i, k;
    json_t *c, *v;
    json_array_foreach(json_object_get(root, "checkers"), i, c)
    {
        if (strcmp(jstr(json_object_get(c, "name")), name) ||
            strcmp(jstr(json_object_get(c, "verdict")), "FAIL"))
            continue;
        json_array_foreach(json_object_get(c, "violations"), k, v)
        {
            json_t *j = json_object_get(v, "job");
            if (json_is_integer(j) ? (int64_t)json_integer_value(j) == job : job == INT64_MIN)
                return 1;
        }
    }
    return 0;
}

/* Whether checker name is in the comma list (NULL: every checker is). */
static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p != NULL && *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *e = p;
        while (*e && *e != ',' && *e != ' ')
            e++;
        if ((size_t)(e - p) == n && !strncmp(p, name, n))
            return 1;
        p = e;
    }
    return list == NULL;
}

/* Says (unless quiet), per checker that failed in the original run,
 * whether the replay failed it again on the same job.  Returns 1 when
 * every one did (and there was one), else 0; with only (a comma list: a
 * mutant's expected checkers), the return counts those checkers alone
 * when the original failed any of them. */
static int replay_compare(const char *orig_dir, const char *new_dir, int quiet, const char *only)
{
    char p1[1300], p2[1300];
    json_t *a, *b;
    size_t i;
    json_t *c;
    int same = 0, differ = 0, same_only = 0, differ_only = 0;

    snprintf(p1, sizeof p1, "%s/results.json", orig_dir);
    snprintf(p2, sizeof p2, "%s/results.json", new_dir);
    a = json_load_file(p1, 0, NULL);
    b = json_load_file(p2, 0, NULL);
    if (a == NULL || b == NULL) {
        json_decref(a);
        json_decref(b);
        return 0;
    }
    json_array_foreach(json_object_get(a, "checkers"), i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        int f1, f2;
        if (name == NULL ||
            strcmp(jstr(json_object_get(c, "verdict")), "FAIL"))
            continue;
        int64_t j1 = first_job(a, name, &f1), j2 = first_job(b, name, &f2);
        if (f2 && (j1 == j2 || failed_on(b, name, j1))) {
            same++;
            if (in_list(only, name))
                same_only++;
            if (!quiet && j1 == INT64_MIN)
                printf("qchaos: replay: %s failed again (no job), as in %s\n", name, orig_dir);
            else if (!quiet)
                printf("qchaos: replay: %s failed again on job %lld, as in %s\n", name,
                   (long long)j1, orig_dir);
        } else {
            differ++;
            if (in_list(only, name))
                differ_only++;
            if (quiet)
                ;
            else if (f2)
                printf("qchaos: replay: %s failed, but first on job %lld (the original: job "
                       "%lld)\n", name, (long long)j2, (long long)j1);
            else
                printf("qchaos: replay: %s did NOT fail again (the original failed it on job "
                       "%lld)\n", name, (long long)j1);
        }
    }
    if (same + differ == 0 && !quiet)
        printf("qchaos: replay: the original run had no failing checker\n");
    json_decref(a);
    json_decref(b);
    if (only != NULL && same_only + differ_only > 0)
        return same_only > 0 && differ_only == 0;
    return same > 0 && differ == 0;
}

/* Whether a replay attempt (its folder new_dir, run in the order e[0..n))
 * carried out the order as far as the original's evidence: it did not
 * diverge, or every entry it left undone was passed in the earlier run
 * after the last ledger event that proves the original's first violation
 * of each checker compared (only, else every failing one).  An attempt
 * that diverged before that and then failed the same way running freely
 * was lucky, not a replay (the newcomer of decision 1134 saw one diverge
 * at entry 2 of 273 and be called a reproduction).  *why (size n) says
 * where it diverged when it was not faithful. */
static int replay_faithful(const char *orig_dir, const char *new_dir, const qc_sched_entry *e,
                           int n, const char *only, long *diverged_seq, long *evidence_seq)
{
    char p1[1300], ledger[1300];
    long seq, consumed;
    *diverged_seq = *evidence_seq = -1;
    snprintf(ledger, sizeof ledger, "%s/ledger.jsonl", new_dir);
    if (!qc_replay_divergence(ledger, &seq, &consumed, NULL, 0, NULL))
        return 1;
    long undone = -1; /* the least seq of the entries from the diverging one on */
    int d = -1;
    for (int k = 0; k < n && d < 0; k++)
        if (e[k].where == seq)
            d = k;
    /* the evidence that is in the order: a snapshot row, a note or what
     * the stop made is no entry, and no replay carries it out */
    long first_where = -1, last_where = -1;
    for (int k = 0; k < n; k++) {
        if (first_where < 0 || e[k].where < first_where)
            first_where = e[k].where;
        if (e[k].where > last_where)
            last_where = e[k].where;
    }
    for (int k = d < 0 ? n : d; k < n; k++)
        if (undone < 0 || e[k].where < undone)
            undone = e[k].where;
    *diverged_seq = seq;
    snprintf(p1, sizeof p1, "%s/results.json", orig_dir);
    json_t *a = json_load_file(p1, 0, NULL);
    if (a == NULL)
        return 0;
    long last = -1;
    int any_only = 0;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(a, "checkers"), i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        if (name != NULL && !strcmp(jstr(json_object_get(c, "verdict")), "FAIL") &&
            in_list(only, name))
            any_only = 1;
    }
    json_array_foreach(json_object_get(a, "checkers"), i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        if (name == NULL || strcmp(jstr(json_object_get(c, "verdict")), "FAIL") ||
            (any_only && !in_list(only, name)))
            continue;
        json_t *v = json_array_get(json_object_get(c, "violations"), 0);
        size_t k;
        json_t *s;
        json_array_foreach(json_object_get(v, "seq"), k, s)
        {
            long q = json_is_integer(s) ? (long)json_integer_value(s) : -1;
            int entry = 0;
            for (int x = 0; x < n && !entry && q >= first_where && q <= last_where; x++)
                entry = e[x].where == q;
            if (entry && q > last)
                last = q;
        }
    }
    json_decref(a);
    *evidence_seq = last;
    return d >= 0 && undone > last;
}

/* After "cannot connect to ..." (exit 3): what a newcomer can do about it.
 * Prints one line on stderr; nothing for other errors. */
static void connect_hint(int code, const qc_err *err)
{
    if (code != 3 || strstr(err->msg, "cannot connect to") == NULL)
        return;
    fprintf(stderr, "qchaos: is that server up?  Without --dsn (and without PG* variables) "
                    "qchaos starts a throwaway server of its own; scripts/pg-ephemeral.sh "
                    "start DIR (or mariadb-ephemeral.sh) starts one and prints its DSN\n");
}

static int cmd_run(int argc, char **argv)
{
    enum { O_DSN = 256, O_WORKER_DSN, O_PROTOCOL, O_WORKERS, O_JOBS, O_DURATION, O_SEED, O_OUT, O_KEEP,
           O_NOPROGRESS, O_ALLOW_INC, O_REPEAT,
           O_FORCE, O_ALLOW_EXISTING, O_REPLAY, O_PROGRESS, O_SHARD, O_REPLAY_ATTEMPTS };
    static const struct option opts[] = {
        {"dsn", required_argument, 0, O_DSN}, {"worker-dsn", required_argument, 0, O_WORKER_DSN},         {"protocol", required_argument, 0, O_PROTOCOL},
        {"workers", required_argument, 0, O_WORKERS}, {"jobs", required_argument, 0, O_JOBS},
        {"duration", required_argument, 0, O_DURATION}, {"seed", required_argument, 0, O_SEED},
        {"out", required_argument, 0, O_OUT},         {"keep", no_argument, 0, O_KEEP},
        {"no-progress", no_argument, 0, O_NOPROGRESS}, {"help", no_argument, 0, 'h'},
        {"allow-inconclusive", no_argument, 0, O_ALLOW_INC},
        {"repeat", required_argument, 0, O_REPEAT},
        {"force", no_argument, 0, O_FORCE},
        {"allow-existing", no_argument, 0, O_ALLOW_EXISTING},
        {"replay", required_argument, 0, O_REPLAY},
        {"replay-attempts", required_argument, 0, O_REPLAY_ATTEMPTS},
        {"progress", required_argument, 0, O_PROGRESS},
        {"shard", required_argument, 0, O_SHARD},
        {0, 0, 0, 0}};
    if ((run_typed = calloc((size_t)argc + 1, sizeof *run_typed)) == NULL)
        return die(3, "out of memory");
    memcpy(run_typed, argv, (size_t)argc * sizeof *run_typed);
    const char *dsn = NULL, *worker_dsn = NULL, *protocol = NULL, *out = NULL, *seed = NULL, *duration = NULL;
    const char *replay = NULL;
    long replay_attempts = 30; /* decision 69 */
    int replay_attempts_set = 0;
    double progress_s = 0;
    long workers = -1, jobs = -1, repeat_n = 0;
    int keep = 0, noprogress = 0, allow_inc = 0, force = 0, allow_existing = 0, c;
    int shard_index = 0, shard_count = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":hP:", opts, NULL)) != -1) {
        switch (c) {
        case 'P':
        case O_PROGRESS: {
            char *end;
            double x = strtod(optarg, &end);
            if (end == optarg || *end || x != x || x < 0.1 || x > 86400) {
                fprintf(stderr, "qchaos: -P/--progress expects seconds between 0.1 and 86400, "
                        "got '%s'\n", optarg);
                return 2;
            }
            progress_s = x;
            break;
        }
        case O_DSN: dsn = optarg; break;
        case O_WORKER_DSN: worker_dsn = optarg; break;
        case O_PROTOCOL: protocol = optarg; break;
        case O_WORKERS:
            if (parse_long_arg("--workers", optarg, 1, &workers)) return 2;
            break;
        case O_JOBS:
            if (parse_long_arg("--jobs", optarg, 0, &jobs)) return 2;
            break;
        case O_DURATION: duration = optarg; break;
        case O_SEED: seed = optarg; break;
        case O_OUT: out = optarg; break;
        case O_KEEP: keep = 1; break;
        case O_ALLOW_EXISTING: allow_existing = 1; break;
        case O_NOPROGRESS: noprogress = 1; break;
        case O_ALLOW_INC: allow_inc = 1; break;
        case O_REPEAT:
            if (parse_long_arg("--repeat", optarg, 1, &repeat_n)) return 2;
            break;
        case O_FORCE: force = 1; break;
        case O_REPLAY: replay = optarg; break;
        case O_REPLAY_ATTEMPTS: {
            char *end;
            errno = 0;
            replay_attempts = strtol(optarg, &end, 10);
            replay_attempts_set = 1;
            if (errno || end == optarg || *end || replay_attempts < 1 || replay_attempts > 1000)
                return die(2, "--replay-attempts expects a number of runs 1..1000");
            break;
        }
        case O_SHARD: {
            qc_err serr = {0};
            if (qc_shard_parse(optarg, &shard_index, &shard_count, &serr) != 0)
                return die(2, serr.msg);
            break;
        }
        case 'h': run_help(); return 0;
        default: return bad_option("run", opts, argc, argv, c);
        }
    }
    if (argc - optind > 1)
        return die(2, "run takes at most one scenario file");

    qc_run_opts o;
    memset(&o, 0, sizeof o);
    qc_scenario_defaults(&o.sc);
    qc_err err = {0};
    char base_dir[1024] = "", scenario[4096];
    replay_src rp;
    memset(&rp, 0, sizeof rp);
    if (replay == NULL && replay_attempts_set)
        return die(2, "--replay-attempts goes with --replay RUNDIR");
    if (replay != NULL) {
        if (repeat_n > 0 || workers > 0 || jobs >= 0 || duration != NULL)
            return die(2, "--replay runs the earlier run as it was: it takes no --repeat, "
                          "--workers, --jobs or --duration");
        if (replay_load(replay, &rp, &err) != 0)
            return die(2, err.msg);
        if (seed != NULL && strtoull(seed, NULL, 10) != rp.seed)
        {
            fprintf(stderr, "qchaos: --replay: the run had --seed %" PRIu64
                            " (a replay runs the run's own)\n", rp.seed);
            return 2;
        }
    }
    const char *scen_arg = optind < argc ? argv[optind] : replay != NULL ? rp.scenario : NULL;
    if (replay != NULL && protocol == NULL)
        protocol = rp.protocol; /* the run's own, whatever its scenario file says now */
    if (scen_arg != NULL) {
        if (qc_scenario_find(scen_arg, scenario, sizeof scenario, &err) != 0 ||
            qc_scenario_load(&o.sc, scenario, &err) != 0)
            return die(qc_err_exit_code(err.code), err.msg);
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s", scenario);
        snprintf(base_dir, sizeof base_dir, "%s", dirname(tmp));
    }
    if (protocol)
        snprintf(o.sc.protocol, sizeof o.sc.protocol, "%s", protocol);
    char proto_name[1024];
    snprintf(proto_name, sizeof proto_name, "%s", o.sc.protocol);
    if (qc_scenario_resolve(proto_name, protocol ? NULL : (base_dir[0] ? base_dir : NULL),
                            o.sc.protocol, sizeof o.sc.protocol, &err) != 0)
        return die(2, err.msg);
    if (replay != NULL) {
        char want[4096], have[4096];
        if (realpath(rp.protocol, want) == NULL)
            snprintf(want, sizeof want, "%s", rp.protocol);
        if (realpath(o.sc.protocol, have) == NULL)
            snprintf(have, sizeof have, "%s", o.sc.protocol);
        if (strcmp(want, have)) {
            fprintf(stderr,
                    "qchaos: %s: the ledger was recorded with protocol %s, not %s: a replay runs "
                    "the protocol the run had (drop --protocol, or give that file)\n",
                    rp.ledger, rp.protocol, o.sc.protocol);
            return 2;
        }
        o.sc.seed = rp.seed;
        o.sc.seed_set = 1;
        o.sc.workers = rp.workers;
        o.sc.jobs = rp.jobs;
        o.sc.duration_s = rp.duration_s;
        /* the recorded order is the schedule: a script or PCT does not also run */
        o.sc.nsteps = 0;
        o.sc.explore_pct = 0;
        o.replay = rp.ledger;
        if (out == NULL) {
            static char rdir[1200];
            for (int k = 1; k < 1000; k++) {
                struct stat st;
                snprintf(rdir, sizeof rdir, "%s/replay-%d", replay, k);
                if (stat(rdir, &st) != 0)
                    break;
            }
            out = rdir;
        }
    }
    if (workers > 0)
        o.sc.workers = workers;
    if (jobs >= 0)
        o.sc.jobs = jobs;
    if (duration) {
        char *end;
        double x = strtod(duration, &end);
        if (end == duration || *end || x != x || x < 0 || x > 1e7) {
            fprintf(stderr, "qchaos: --duration expects seconds >= 0, got '%s'\n", duration);
            return 2;
        }
        o.sc.duration_s = x;
    }
    if (seed) {
        char *end;
        errno = 0;
        unsigned long long x = strtoull(seed, &end, 10);
        if (errno || end == seed || *end || seed[0] == '-') {
            fprintf(stderr, "qchaos: --seed expects a non-negative integer, got '%s'\n", seed);
            return 2;
        }
        o.sc.seed = x;
        o.sc.seed_set = 1;
    }
    if (!o.sc.seed_set) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        o.sc.seed = ((uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec) % 1000000000u;
    }
    if (qc_scenario_validate(&o.sc, &err) != 0)
        return die(2, err.msg);
    run_out_dir(o.out_dir, sizeof o.out_dir, out, o.sc.name, o.sc.seed, repeat_n);
    o.dsn = dsn;
    o.worker_dsn = worker_dsn;
    if (worker_dsn && !dsn && qc_target_env(NULL, 0) == 0)
        return die(2, "--worker-dsn needs --dsn or the PG* variables (the direct connection for "
                      "setup and checks)");
    o.keep = keep;
    o.allow_existing = allow_existing;
    o.shard_index = shard_index;
    o.shard_count = shard_count;
    if (shard_count > 1 && repeat_n > 0)
        return die(2, "--shard runs one seed: it takes no --repeat");
    if (shard_count > 1 && !dsn && qc_target_env(NULL, 0) == 0)
        return die(2, "--shard needs the database all shards share: --dsn or the PG* variables "
                      "(an ephemeral server is one process's)");
    o.allow_inconclusive = allow_inc;
    o.progress = !noprogress && progress_s <= 0 && isatty(2);
    o.progress_s = progress_s;

    /* Refused before anything runs: an output folder that holds a run (for
     * --repeat, any of the seeds' folders). */
    for (long k = 0; k < (repeat_n > 0 ? repeat_n : 1); k++) {
        char dir[sizeof o.out_dir];
        run_out_dir(dir, sizeof dir, out, o.sc.name, o.sc.seed + (uint64_t)k, repeat_n);
        if (out_is_free(dir, force) != 0)
            return 2;
    }
    char *repeat = NULL;
    catch_signals();
    signal(SIGPIPE, SIG_IGN);

    /* The ODBC environment is created once, before any thread starts. */
    if (qc_odbc_global_init(&err) != 0)
        return die(3, err.msg);
    /* --repeat N: seeds seed .. seed+N-1, stopping at the first run that is
     * not a pass, whose exact command is printed. */
    uint64_t first_seed = o.sc.seed;
    int code = 0;
    qc_replay_search *search = NULL;
    char expect_buf[512] = "";
    const char *expect = NULL;
    if (replay != NULL) {
        qc_sched_entry *ents = NULL;
        int nents = 0;
        if (qc_sched_load_replay(o.replay, &ents, &nents, &err) != 0)
            return die(2, err.msg);
        search = qc_replay_search_new(ents, nents, replay_attempts);
        free(ents);
        if (search == NULL)
            return die(3, "out of memory");
        /* a mutant's expected checkers are what the search must reproduce
         * (its header's expect:, a policy mutant's [checks] expect), any
         * other run's every failing one */
        qc_protocol *pr = NULL;
        qc_err perr = {0};
        if (qc_protocol_load(o.sc.protocol, QC_PARAM_DOLLAR, &pr, &perr) == 0 && pr->expect)
            snprintf(expect_buf, sizeof expect_buf, "%s", pr->expect);
        else if (o.sc.expect[0])
            snprintf(expect_buf, sizeof expect_buf, "%s", o.sc.expect); /* a policy mutant's */
        qc_protocol_destroy(pr);
        expect = expect_buf[0] ? expect_buf : NULL;
    }
    long runs = repeat_n > 0 ? repeat_n : 1;
    int codes[1001]; /* the replay search's attempts' exit codes */
    int same_att = 0; /* the first attempt that failed the same way, not in the run's order */
    long same_dseq = -1, same_eseq = -1;
    char replay_out[sizeof o.out_dir] = "";
    if (search != NULL) {
        run_out_dir(replay_out, sizeof replay_out, out, o.sc.name, o.sc.seed, repeat_n);
        if (qc_replay_clear_attempts(replay_out, &err) < 0)
            return die(2, err.msg);
    }
    for (long k = 0; k < runs; k++) {
        o.sc.seed = first_seed + (uint64_t)k;
        run_out_dir(o.out_dir, sizeof o.out_dir, out, o.sc.name, o.sc.seed, repeat_n);
        /* The exact command that repeats this run: the words as typed, with
         * this run's seed and folder, without --repeat. */
        free(repeat);
        repeat = qc_cli_repeat_line(prog_name, argc, run_typed, opts, o.sc.seed, o.out_dir);
        o.argv_line = repeat;
        memset(&err, 0, sizeof err);
        int attempt = 0;
        if (search != NULL) {
            o.replay_entries = qc_replay_search_order(search, &o.replay_nentries);
            /* attempt 1 in the replay's folder, attempt a in OUT/attempt-a */
            attempt = qc_replay_search_attempts(search) + 1;
            qc_replay_attempt_dir(replay_out, attempt, o.out_dir, sizeof o.out_dir);
        }
        code = qc_run(&o, &err);
        if ((code == 2 || code == 3 || code == 5) && err.msg[0]) {
            fprintf(stderr, "qchaos: %s\n", err.msg);
            connect_hint(code, &err);
        }
        if (search != NULL && (code == 0 || code == 1 || code == 4) && !qc_interrupted) {
            /* the replay search (replay.h): another order of the actions
             * that overlapped, while the run is not reproduced */
            char ledger[1300], why[600];
            snprintf(ledger, sizeof ledger, "%s/ledger.jsonl", o.out_dir);
            if (attempt >= 1 && attempt <= 1000)
                codes[attempt - 1] = code;
            long dseq, eseq;
            int same = replay_compare(replay, o.out_dir, 1, expect);
            int faithful = replay_faithful(replay, o.out_dir, o.replay_entries,
                                           o.replay_nentries, expect, &dseq, &eseq);
            if (same && !faithful) {
                printf("qchaos: replay search: attempt %d failed the same way, but it diverged at "
                       "seq %ld, before the original's evidence (to seq %ld) was replayed: not "
                       "a reproduction\n",
                       attempt, dseq, eseq);
                if (same_att == 0) {
                    same_att = attempt;
                    same_dseq = dseq;
                    same_eseq = eseq;
                }
            }
            int again = qc_replay_search_next(search, ledger, same && faithful, why, sizeof why);
            if (again && same_att > 0 &&
                qc_replay_search_stale(search) >= QC_REPLAY_STALE_AFTER_SAME) {
                /* the violation came back at attempt same_att; the search
                 * for the run's order has got no further in the last
                 * attempts: stop (decision 1140) */
                again = 0;
                snprintf(why, sizeof why,
                         "attempt %d failed the same way, and the last %d attempts got no "
                         "further in the run's order",
                         same_att, qc_replay_search_stale(search));
            }
            if (again) {
                printf("qchaos: replay search: %s\n", why);
                k--; /* the same run again, in the new order */
                continue;
            }
            if (why[0])
                printf("qchaos: replay search: stopped after %d attempts: %s\n",
                       qc_replay_search_attempts(search), why);
            else if (qc_replay_search_attempts(search) > 1)
                printf("qchaos: replay search: attempt %d reproduced the run\n",
                       qc_replay_search_attempts(search));
            /* the replay's folder keeps the attempt that reproduced the
             * run, else the first that failed the same way out of the
             * run's order (decision 1136), else the one that got furthest
             * (decision 67) */
            int reproduced, place, nent = 0;
            int n_att = qc_replay_search_attempts(search);
            int kept = qc_replay_search_kept(search, &reproduced, &place);
            int same_way = !reproduced && same_att > 0;
            if (same_way) {
                kept = same_att;
                place = qc_replay_search_place(search, same_att);
            }
            qc_replay_search_order(search, &nent);
            snprintf(o.out_dir, sizeof o.out_dir, "%s", replay_out);
            qc_err kerr = {0};
            if (qc_replay_keep(replay_out, kept, n_att, &kerr) != 0 ||
                qc_replay_annotate(replay_out, replay, kept, n_att, reproduced, same_way, place,
                                   nent, &kerr) != 0) {
                fprintf(stderr, "qchaos: replay: %s\n", kerr.msg);
            } else {
                char why_kept[300];
                if (reproduced)
                    snprintf(why_kept, sizeof why_kept, "it reproduced the run");
                else if (same_way)
                    snprintf(why_kept, sizeof why_kept,
                             "it failed the same way, but diverged at seq %ld, before the "
                             "original's evidence (to seq %ld) was replayed: the violation came "
                             "back, the run's order did not",
                             same_dseq, same_eseq);
                else if (place >= 0 && place < nent)
                    snprintf(why_kept, sizeof why_kept,
                             "none reproduced the run; it got furthest, to entry %d of %d",
                             place + 1, nent);
                else
                    snprintf(why_kept, sizeof why_kept,
                             "none reproduced the run; it got furthest (it did not diverge)");
                printf("qchaos: replay: %s/ holds attempt %d of %d (%s)%s%s%s\n", replay_out,
                       kept, n_att, why_kept, n_att > 1 ? "; each attempt's run: " : "",
                       n_att > 1 ? replay_out : "", n_att > 1 ? "/attempt-N/" : "");
                if (kept >= 1 && kept <= 1000)
                    code = codes[kept - 1];
            }
        }
        if (replay != NULL && (code == 0 || code == 1 || code == 4))
            replay_compare(replay, o.out_dir, 0, NULL);
        if (code != 0 || qc_interrupted) {
            if (repeat_n > 0 && code != 0)
                fprintf(stderr, "qchaos: --repeat stopped at seed %" PRIu64 " (run %ld of %ld, exit %d); "
                        "repeat it with: %s\n",
                        o.sc.seed, k + 1, repeat_n, code, repeat ? repeat : "");
            break;
        }
    }
    if (repeat_n > 0 && code == 0)
        fprintf(stderr, "qchaos: --repeat: seeds %" PRIu64 "..%" PRIu64 " all passed\n", first_seed,
                first_seed + (uint64_t)repeat_n - 1);
    if (repeat_n > 0)
        repeat_summary(out, o.sc.name, first_seed, o.sc.seed);
    qc_odbc_global_fini();
    free(repeat);
    qc_replay_search_free(search);
    return code;
}

static int cmd_mutation(int argc, char **argv)
{
    static const struct option opts[] = {{"seeds", required_argument, 0, 'k'},
                                          {"out", required_argument, 0, 'o'},
                                          {"dsn", required_argument, 0, 'd'},
                                          {"only", required_argument, 0, 'n'},
                                          {"odbc", required_argument, 0, 'O'},
                                          {"correct", required_argument, 0, 'c'},
                                          {"jobs", required_argument, 0, 'j'},
                                          {"shard", required_argument, 0, 'S'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    qc_mutation_opts o = {.seeds = 3, .out_dir = "results/mutation"};
    qc_err serr = {0};
    long k;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'k':
            if (parse_long_arg("--seeds", optarg, 1, &k)) return 2;
            o.seeds = (int)(k > 64 ? 64 : k);
            break;
        case 'o': o.out_dir = optarg; break;
        case 'd': o.dsn = optarg; break;
        case 'n': o.only = optarg; break;
        case 'O': o.odbc = optarg; break;
        case 'c': o.correct = optarg; break;
        case 'j':
            if (parse_long_arg("--jobs", optarg, 1, &k)) return 2;
            o.jobs = (int)(k > 64 ? 64 : k);
            break;
        case 'S':
            if (qc_shard_parse(optarg, &o.shard_index, &o.shard_count, &serr) != 0)
                return die(2, serr.msg);
            break;
        case 'h': mutation_help(); return 0;
        default: return bad_option("mutation", opts, argc, argv, c);
        }
    }
    if (optind < argc)
        return die(2, "mutation takes no file arguments");
    catch_signals();
    qc_err err = {0};
    int code = qc_mutation_run(&o, &err);
    if ((code == 2 || code == 3) && err.msg[0])
        fprintf(stderr, "qchaos: %s\n", err.msg);
    return code;
}

static int cmd_gate(int argc, char **argv)
{
    static const struct option opts[] = {{"dsn", required_argument, 0, 'd'},
                                          {"seeds", required_argument, 0, 'k'},
                                          {"seed", required_argument, 0, 's'},
                                          {"out", required_argument, 0, 'o'},
                                          {"groups", no_argument, 0, 'g'},
                                          {"fail-fast", no_argument, 0, 'f'},
                                          {"jobs", required_argument, 0, 'j'},
                                          {"policy", required_argument, 0, 'p'},
                                          {"shard", required_argument, 0, 'S'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    qc_gate_opts o = {.seeds = 1, .first_seed = 1, .out_dir = "results/gate", .prog = prog_name};
    qc_err serr = {0};
    long k;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'd': o.dsn = optarg; break;
        case 'k':
            if (parse_long_arg("--seeds", optarg, 1, &k)) return 2;
            o.seeds = (int)(k > 64 ? 64 : k);
            break;
        case 's':
            if (parse_long_arg("--seed", optarg, 0, &k)) return 2;
            o.first_seed = (int)(k > 1000000000 ? 1000000000 : k);
            break;
        case 'o': o.out_dir = optarg; break;
        case 'g': o.groups = 1; break;
        case 'f': o.fail_fast = 1; break;
        case 'j':
            if (parse_long_arg("--jobs", optarg, 1, &k)) return 2;
            o.jobs = (int)(k > 64 ? 64 : k);
            break;
        case 'p': o.policy = optarg; break;
        case 'S':
            if (qc_shard_parse(optarg, &o.shard_index, &o.shard_count, &serr) != 0)
                return die(2, serr.msg);
            break;
        case 'h': gate_help(); return 0;
        default: return bad_option("gate", opts, argc, argv, c);
        }
    }
    if (argc - optind != 1)
        return die(2, "gate takes one protocol file (see 'qchaos gate --help')");
    char proto[1024];
    qc_err err = {0};
    if (qc_scenario_resolve(argv[optind], NULL, proto, sizeof proto, &err) != 0)
        return die(2, err.msg);
    struct stat pst;
    if (stat(proto, &pst) == 0 && !S_ISREG(pst.st_mode))
        return die(2, "gate: the protocol must be a file (a .sql protocol), not a folder");
    char abs[4096];
    o.protocol = realpath(proto, abs) ? abs : proto;
    if (o.policy) {
        qc_scenario psc;
        qc_scenario_defaults(&psc);
        if (qc_scenario_load(&psc, o.policy, &err) != 0)
            return die(2, err.msg);
    }
    catch_signals(); /* SIGINT / SIGTERM: the running child is stopped, no further run */
    int code = qc_gate_run(&o, NULL, &err);
    if ((code == 2 || code == 3) && err.msg[0]) {
        fprintf(stderr, "qchaos: %s\n", err.msg);
        connect_hint(code, &err);
    }
    return code;
}

static int cmd_shrink(int argc, char **argv)
{
    static const struct option opts[] = {{"out", required_argument, 0, 'o'},
                                          {"dsn", required_argument, 0, 'd'},
                                          {"checker", required_argument, 0, 'c'},
                                          {"max-runs", required_argument, 0, 'm'},
                                          {"timeout", required_argument, 0, 't'},
                                          {"tries", required_argument, 0, 'k'},
                                          {"confirm", required_argument, 0, 'n'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    qc_shrink_opts o = {
        .max_runs = 60, .timeout_s = 300, .tries = 3, .confirm = 3, .prog = prog_name};
    long k;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': o.out_dir = optarg; break;
        case 'd': o.dsn = optarg; break;
        case 'c': o.checker = optarg; break;
        case 'm':
            if (parse_long_arg("--max-runs", optarg, 1, &k)) return 2;
            o.max_runs = (int)(k > 1000 ? 1000 : k);
            break;
        case 't':
            if (parse_long_arg("--timeout", optarg, 1, &k)) return 2;
            o.timeout_s = (int)(k > 86400 ? 86400 : k);
            break;
        case 'k':
            if (parse_long_arg("--tries", optarg, 1, &k)) return 2;
            o.tries = (int)(k > 20 ? 20 : k);
            break;
        case 'n':
            if (parse_long_arg("--confirm", optarg, 0, &k)) return 2;
            o.confirm = (int)(k > 20 ? 20 : k);
            break;
        case 'h': shrink_help(); return 0;
        default: return bad_option("shrink", opts, argc, argv, c);
        }
    }
    if (argc - optind != 1)
        return die(2, "shrink takes one run folder (see 'qchaos shrink --help')");
    o.run_dir = argv[optind];
    catch_signals(); /* SIGINT / SIGTERM: the running child is stopped, no further run */
    qc_err err = {0};
    int code = qc_shrink_run(&o, &err);
    if ((code == 2 || code == 3) && err.msg[0])
        fprintf(stderr, "qchaos: %s\n", err.msg);
    return code;
}

static void explore_help(void)
{
    printf("usage: qchaos explore SCENARIO [--protocol FILE] [--runs N] [--seed N] [--depth D]\n"
           "                      [--dsn DSN] [--out DIR] [--force]\n"
           "\n"
           "Runs SCENARIO again and again, each run under a different PCT schedule (one actor\n"
           "at a time at the protocol's named points, random priorities and D-1 random\n"
           "priority changes from the run's seed), and stops at the first run that fails:\n"
           "prints its folder, its order of points, the command that replays it and, last,\n"
           "the checkers that failed.\n"
           "Keep the scenario small (2-3 workers, a few jobs): each run is serial.\n"
           "\n"
           "options:\n"
           "  --protocol FILE  protocol file, overrides the scenario's\n"
           "  --runs N         at most N runs (default 20)\n"
           "  --seed N         first seed (default 1); runs use seeds N, N+1, ... (folder run-SEED)\n"
           "  --depth D        PCT depth (default 3)\n"
           "  --dsn DSN        database (default: an ephemeral PostgreSQL per run)\n"
           "  --out DIR        runs go to DIR/run-SEED (default results/explore); a DIR that\n"
           "                   holds an earlier exploration or a run is refused (exit 2)\n"
           "  --force          write over it (its run-N folders are removed first)\n"
           "\n%s",
           exit_codes);
}

static int cmd_explore(int argc, char **argv)
{
    static const struct option opts[] = {{"dsn", required_argument, 0, 'd'},
                                          {"protocol", required_argument, 0, 'p'},
                                          {"runs", required_argument, 0, 'r'},
                                          {"seed", required_argument, 0, 's'},
                                          {"depth", required_argument, 0, 'D'},
                                          {"out", required_argument, 0, 'o'},
                                          {"force", no_argument, 0, 'f'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    qc_explore_opts o = {.runs = 20, .first_seed = 1, .depth = 3, .out_dir = "results/explore",
                         .prog = prog_name};
    long k;
    int c;
    char scen[4096], proto[1024], pabs[4096], sabs[4096];
    qc_err err = {0};
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'd': o.dsn = optarg; break;
        case 'p': o.protocol = optarg; break;
        case 'r':
            if (parse_long_arg("--runs", optarg, 1, &k)) return 2;
            o.runs = (int)(k > 100000 ? 100000 : k);
            break;
        case 's':
            if (parse_long_arg("--seed", optarg, 0, &k)) return 2;
            o.first_seed = (int)(k > 1000000000 ? 1000000000 : k);
            break;
        case 'D':
            if (parse_long_arg("--depth", optarg, 1, &k)) return 2;
            o.depth = (int)(k > 9 ? 9 : k);
            break;
        case 'o': o.out_dir = optarg; break;
        case 'f': o.force = 1; break;
        case 'h': explore_help(); return 0;
        default: return bad_option("explore", opts, argc, argv, c);
        }
    }
    if (argc - optind != 1)
        return die(2, "explore takes one scenario file (see 'qchaos explore --help')");
    if (qc_scenario_find(argv[optind], scen, sizeof scen, &err) != 0)
        return die(2, err.msg);
    qc_scenario probe;
    qc_scenario_defaults(&probe);
    if (qc_scenario_load(&probe, scen, &err) != 0)
        return die(2, err.msg);
    if (probe.nsteps > 0)
        return die(2, "explore: the scenario has [schedule] steps (a script); explore makes "
                      "its own schedules: give a scenario without steps");
    o.scenario = realpath(scen, sabs) ? sabs : scen;
    if (o.protocol != NULL) {
        if (qc_scenario_resolve(o.protocol, NULL, proto, sizeof proto, &err) != 0)
            return die(2, err.msg);
        o.protocol = realpath(proto, pabs) ? pabs : proto;
    }
    catch_signals();
    int code = qc_explore_run(&o, &err);
    if ((code == 2 || code == 3) && err.msg[0])
        fprintf(stderr, "qchaos: %s\n", err.msg);
    return code;
}

static int cmd_audit(int argc, char **argv)
{
    static const struct option opts[] = {{"out", required_argument, 0, 'o'},
                                          {"allow-inconclusive", no_argument, 0, 'a'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    const char *out = NULL;
    int c, allow_inc = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'a': allow_inc = 1; break;
        case 'h': audit_help(); return 0;
        default: return bad_option("audit", opts, argc, argv, c);
        }
    }
    if (optind >= argc)
        return die(2, "audit needs at least one ledger file");
    /* A run folder stands for its ledger.jsonl (what `qchaos run` wrote). */
    for (int i = optind; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            size_t n = strlen(argv[i]) + sizeof "/ledger.jsonl";
            char *p = malloc(n);
            if (p == NULL)
                return die(3, "out of memory");
            snprintf(p, n, "%s/ledger.jsonl", argv[i]);
            argv[i] = p; /* lives until exit */
        }
    }
    /* The same ledger twice would merge with itself: every event twice. */
    for (int i = optind; i < argc; i++) {
        char a[4096], b[4096];
        if (!realpath(argv[i], a))
            continue;
        for (int k = optind; k < i; k++)
            if (realpath(argv[k], b) && !strcmp(a, b)) {
                fprintf(stderr, "qchaos: ledger '%s' is given twice\n", argv[i]);
                return 2;
            }
    }
    qc_err err = {0};
    const char *const *ledgers = (const char *const *)&argv[optind];
    int code = qc_audit(ledgers, argc - optind, out, NULL, stdout, &err);
    if ((code == 2 || code == 3) && err.msg[0])
        fprintf(stderr, "qchaos: %s\n", err.msg);
    if (out && (code == 0 || code == 1 || code == 4)) {
        char note[256] = "";
        qc_err rerr = {0};
        if (qc_report_write(out, ledgers, argc - optind, allow_inc, note, sizeof note, &rerr))
            fprintf(stderr, "qchaos: reports not written: %s\n", rerr.msg);
        else if (note[0])
            fprintf(stderr, "qchaos: %s\n", note);
    }
    return code;
}

static int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {{"allow-inconclusive", no_argument, 0, 'a'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int allow_inc = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'a': allow_inc = 1; break;
        case 'h': report_help(); return 0;
        default: return bad_option("report", opts, argc, argv, c);
        }
    }
    if (optind >= argc)
        return die(2, "report needs a run folder (it holds results.json and ledger.jsonl)");
    const char *dir = argv[optind];
    char ledger[4096];
    const char *ledgers[64];
    int n = 0;
    if (optind + 1 < argc) {
        for (int i = optind + 1; i < argc && n < 64; i++)
            ledgers[n++] = argv[i];
    } else {
        snprintf(ledger, sizeof ledger, "%s/ledger.jsonl", dir);
        ledgers[n++] = ledger;
    }
    char note[256] = "";
    qc_err err = {0};
    int rc = qc_report_write(dir, ledgers, n, allow_inc, note, sizeof note, &err);
    if (rc != 0) {
        fprintf(stderr, "qchaos: %s\n", err.msg);
        return rc == QC_EINVAL || rc == QC_EIO ? 2 : 3;
    }
    if (note[0])
        fprintf(stderr, "qchaos: %s\n", note);
    printf("qchaos: reports in %s/ (junit.xml, report.html, report.md, plots/)\n", dir);
    return 0;
}

static int cmd_summary(int argc, char **argv)
{
    static const struct option opts[] = {{"json", required_argument, 0, 'j'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    const char *json = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = optarg; break;
        case 'h': summary_help(); return 0;
        default: return bad_option("summary", opts, argc, argv, c);
        }
    }
    if (optind >= argc)
        return die(2, "summary needs at least one run folder (see 'qchaos summary --help')");
    qc_err err = {0};
    int code = qc_summary_run((const char *const *)&argv[optind], argc - optind, json, stdout,
                              &err);
    if ((code == 2 || code == 3) && err.msg[0])
        fprintf(stderr, "qchaos: %s\n", err.msg);
    return code;
}

static int cmd_diff(int argc, char **argv)
{
    static const struct option opts[] = {{"json", required_argument, 0, 'j'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    const char *json = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = optarg; break;
        case 'h': diff_help(); return 0;
        default: return bad_option("diff", opts, argc, argv, c);
        }
    }
    if (argc - optind != 2)
        return die(2, "diff takes two run folders, A then B (see 'qchaos diff --help')");
    qc_err err = {0};
    int code = qc_diff_run(argv[optind], argv[optind + 1], json, stdout, &err);
    if ((code == 2 || code == 3) && err.msg[0])
        fprintf(stderr, "qchaos: %s\n", err.msg);
    return code;
}

/* The help of one command; 0, or 2 for an unknown one. */
static int command_help(const char *cmd)
{
    if (!strcmp(cmd, "run"))
        run_help();
    else if (!strcmp(cmd, "audit"))
        audit_help();
    else if (!strcmp(cmd, "report"))
        report_help();
    else if (!strcmp(cmd, "mutation"))
        mutation_help();
    else if (!strcmp(cmd, "gate"))
        gate_help();
    else if (!strcmp(cmd, "explore"))
        explore_help();
    else if (!strcmp(cmd, "summary"))
        summary_help();
    else if (!strcmp(cmd, "diff"))
        diff_help();
    else if (!strcmp(cmd, "shrink"))
        shrink_help();
    else if (!strcmp(cmd, "version"))
        printf("usage: qchaos version (or -V, --version)\n");
    else {
        fprintf(stderr, "qchaos: unknown command '%s' (see 'qchaos --help')\n", cmd);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    /* Lines reach a log file in the order they were written, stdout's and
     * stderr's interleaved (stdout is fully buffered when not a terminal). */
    setvbuf(stdout, NULL, _IOLBF, 0);
    opterr = 0; /* bad_option() explains, as "qchaos" */
    if (argc > 0 && argv[0] != NULL && strchr(argv[0], '/') != NULL &&
        strlen(argv[0]) < 512 &&
        strspn(argv[0], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+") ==
            strlen(argv[0]))
        prog_name = argv[0];
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    int code;
    /* The audit's thread count (checkers.h qc_check_threads): a value that
     * is not a count is refused here rather than silently ignored. */
    const char *threads = getenv("QC_AUDIT_THREADS");
    if (threads != NULL && threads[0] != '\0' &&
        (strspn(threads, "0123456789") != strlen(threads) || atol(threads) < 1 ||
         strlen(threads) > 4)) {
        fprintf(stderr, "qchaos: QC_AUDIT_THREADS='%.32s' is not a thread count (1..9999)\n",
                threads);
        return 2;
    }
    if (!strcmp(cmd, "run")) {
        code = cmd_run(argc - 1, argv + 1);
        free(run_typed);
        return code;
    }
    if (!strcmp(cmd, "audit"))
        return cmd_audit(argc - 1, argv + 1);
    if (!strcmp(cmd, "report"))
        return cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "mutation"))
        return cmd_mutation(argc - 1, argv + 1);
    if (!strcmp(cmd, "gate"))
        return cmd_gate(argc - 1, argv + 1);
    if (!strcmp(cmd, "explore"))
        return cmd_explore(argc - 1, argv + 1);
    if (!strcmp(cmd, "summary"))
        return cmd_summary(argc - 1, argv + 1);
    if (!strcmp(cmd, "diff"))
        return cmd_diff(argc - 1, argv + 1);
    if (!strcmp(cmd, "shrink"))
        return cmd_shrink(argc - 1, argv + 1);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        printf("qchaos %s\n", QC_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        if (argc > 2)
            return command_help(argv[2]);
        usage(stdout);
        return 0;
    }
    if (cmd[0] == '-')
        fprintf(stderr, "qchaos: unknown option '%s' (see 'qchaos --help')\n", cmd);
    else
        fprintf(stderr, "qchaos: unknown command '%s' (see 'qchaos --help')\n", cmd);
    return 2;
}
