/*
 * main.c - the qchaos command line.  Only this file calls exit.
 *
 *   qchaos run [SCENARIO.ini] [--dsn DSN] [--protocol FILE] [--workers N]
 *              [--jobs N] [--duration S] [--seed N] [--out DIR] [--keep]
 *   qchaos audit [--out DIR] LEDGER...
 *   qchaos version | help
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

#include "audit.h"
#include "../reports/report.h"
#include "mutation.h"
#include "runner.h"
#include "../backends/driver.h"

extern volatile sig_atomic_t qc_interrupted;

static void on_signal(int sig)
{
    (void)sig;
    qc_interrupted = 1;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: qchaos run [SCENARIO.ini] [options]\n"
            "       qchaos audit [--out DIR] [--allow-inconclusive] LEDGER|RUNDIR...\n"
            "       qchaos report [--allow-inconclusive] DIR [LEDGER...]\n"
            "       qchaos mutation [--seeds K] [--out DIR] [--dsn DSN] [--only NAME] [--correct FILE]\n"
            "       qchaos version\n"
            "\n"
            "run options:\n"
            "  --dsn DSN          database to test (libpq conninfo or URI); default: start an\n"
            "                     ephemeral PostgreSQL with scripts/pg-ephemeral.sh\n"
            "  --worker-dsn DSN   workers and reaper connect here instead (e.g. your PgBouncer)\n"
            "  --protocol FILE    protocol (backend) file, overrides the scenario's\n"
            "  --workers N        worker threads (one connection each)\n"
            "  --jobs N           jobs to enqueue\n"
            "  --duration S       chaos phase in seconds (0: until drained)\n"
            "  --seed N           seed of the workload and fault plan\n"
            "  --out DIR          output folder (default results/NAME-SEED)\n"
            "  --keep             keep the queue tables (skip teardown)\n"
            "  --no-progress      no progress line even on a terminal\n"
            "  --allow-inconclusive  junit.xml shows INCONCLUSIVE checkers as skipped\n"
            "  --repeat N         run seeds SEED..SEED+N-1, stop at the first that does not pass\n"
            "\n"
            "exit codes: 0 pass, 1 violation, 2 usage or input error,\n"
            "            3 database or service unreachable, 4 inconclusive\n");
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

/* The command line, shell-quoted, with every password replaced by "***":
 * it goes into the ledger, results.json and every report.  Every argument
 * is redacted, not only the one after --dsn: getopt also takes "--ds X",
 * "--worker=X" and a connection string in any position, and redaction
 * changes nothing in an argument that holds no password. */
static char *join_argv(int argc, char **argv)
{
    size_t n = 1;
    for (int i = 0; i < argc; i++)
        n += strlen(argv[i]) * 4 + 16;
    char *s = malloc(n);
    char *red = malloc(n);
    if (!s || !red) {
        free(s);
        free(red);
        return NULL;
    }
    s[0] = 0;
    for (int i = 0; i < argc; i++) {
        if (i)
            strcat(s, " ");
        const char *arg = argv[i];
        const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
        size_t pre = eq ? (size_t)(eq - arg) + 1 : 0;
        memcpy(red, arg, pre);
        qc_redact_conninfo(arg + pre, red + pre, n - pre);
        arg = red;
        int plain = strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                "0123456789-_./=:,@") == strlen(arg);
        if (plain) {
            strcat(s, arg);
        } else {
            strcat(s, "'");
            for (const char *p = arg; *p; p++) {
                if (*p == '\'')
                    strcat(s, "'\\''");
                else
                    strncat(s, p, 1);
            }
            strcat(s, "'");
        }
    }
    free(red);
    return s;
}

static int cmd_run(int argc, char **argv)
{
    enum { O_DSN = 256, O_WORKER_DSN, O_PROTOCOL, O_WORKERS, O_JOBS, O_DURATION, O_SEED, O_OUT, O_KEEP,
           O_NOPROGRESS, O_ALLOW_INC, O_REPEAT };
    static const struct option opts[] = {
        {"dsn", required_argument, 0, O_DSN}, {"worker-dsn", required_argument, 0, O_WORKER_DSN},         {"protocol", required_argument, 0, O_PROTOCOL},
        {"workers", required_argument, 0, O_WORKERS}, {"jobs", required_argument, 0, O_JOBS},
        {"duration", required_argument, 0, O_DURATION}, {"seed", required_argument, 0, O_SEED},
        {"out", required_argument, 0, O_OUT},         {"keep", no_argument, 0, O_KEEP},
        {"no-progress", no_argument, 0, O_NOPROGRESS}, {"help", no_argument, 0, 'h'},
        {"allow-inconclusive", no_argument, 0, O_ALLOW_INC},
        {"repeat", required_argument, 0, O_REPEAT},
        {0, 0, 0, 0}};
    const char *dsn = NULL, *worker_dsn = NULL, *protocol = NULL, *out = NULL, *seed = NULL, *duration = NULL;
    long workers = -1, jobs = -1, repeat_n = 0;
    int keep = 0, noprogress = 0, allow_inc = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
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
        case O_NOPROGRESS: noprogress = 1; break;
        case O_ALLOW_INC: allow_inc = 1; break;
        case O_REPEAT:
            if (parse_long_arg("--repeat", optarg, 1, &repeat_n)) return 2;
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (argc - optind > 1)
        return die(2, "run takes at most one scenario file");

    qc_run_opts o;
    memset(&o, 0, sizeof o);
    qc_scenario_defaults(&o.sc);
    qc_err err = {0};
    char base_dir[1024] = "";
    if (optind < argc) {
        if (qc_scenario_load(&o.sc, argv[optind], &err) != 0)
            return die(qc_err_exit_code(err.code), err.msg);
        char tmp[1024];
        snprintf(tmp, sizeof tmp, "%s", argv[optind]);
        snprintf(base_dir, sizeof base_dir, "%s", dirname(tmp));
    }
    if (protocol)
        snprintf(o.sc.protocol, sizeof o.sc.protocol, "%s", protocol);
    char proto_name[1024];
    snprintf(proto_name, sizeof proto_name, "%s", o.sc.protocol);
    if (qc_scenario_resolve(proto_name, protocol ? NULL : (base_dir[0] ? base_dir : NULL),
                            o.sc.protocol, sizeof o.sc.protocol, &err) != 0)
        return die(2, err.msg);
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
    if (out)
        snprintf(o.out_dir, sizeof o.out_dir, "%s", out);
    else
        snprintf(o.out_dir, sizeof o.out_dir, "results/%s-%" PRIu64, o.sc.name, o.sc.seed);
    o.dsn = dsn;
    o.worker_dsn = worker_dsn;
    if (worker_dsn && !dsn)
        return die(2, "--worker-dsn needs --dsn (the direct connection for setup and checks)");
    o.keep = keep;
    o.allow_inconclusive = allow_inc;
    o.progress = !noprogress && isatty(2);

    /* The exact command that repeats a run: the arguments without --seed,
     * --out and --repeat, then this run's seed and folder. */
    char **kept = calloc((size_t)argc + 1, sizeof *kept);
    int nkept = 0;
    for (int i = 0; kept && i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--seed") || !strcmp(a, "--out") || !strcmp(a, "--repeat")) {
            i++;
            continue;
        }
        if (!strncmp(a, "--seed=", 7) || !strncmp(a, "--out=", 6) || !strncmp(a, "--repeat=", 9))
            continue;
        kept[nkept++] = argv[i];
    }
    char *line = kept ? join_argv(nkept, kept) : NULL;
    free(kept);
    char *repeat = line ? malloc(strlen(prog_name) + strlen(line) + sizeof o.out_dir + 64) : NULL;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    /* The ODBC environment is created once, before any thread starts. */
    if (qc_odbc_global_init(&err) != 0)
        return die(3, err.msg);
    /* --repeat N: seeds seed .. seed+N-1, stopping at the first run that is
     * not a pass, whose exact command is printed. */
    uint64_t first_seed = o.sc.seed;
    char base_out[1024];
    snprintf(base_out, sizeof base_out, "%s", o.out_dir);
    int code = 0;
    long runs = repeat_n > 0 ? repeat_n : 1;
    for (long k = 0; k < runs; k++) {
        o.sc.seed = first_seed + (uint64_t)k;
        if (repeat_n > 0) {
            if (out)
                snprintf(o.out_dir, sizeof o.out_dir, "%.900s/seed-%" PRIu64, base_out,
                         o.sc.seed);
            else
                snprintf(o.out_dir, sizeof o.out_dir, "results/%.200s-%" PRIu64, o.sc.name,
                         o.sc.seed);
        }
        if (repeat)
            sprintf(repeat, "%s %s --seed %" PRIu64 " --out %s", prog_name, line, o.sc.seed,
                    o.out_dir);
        o.argv_line = repeat;
        memset(&err, 0, sizeof err);
        code = qc_run(&o, &err);
        if ((code == 2 || code == 3) && err.msg[0])
            fprintf(stderr, "qchaos: %s\n", err.msg);
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
    qc_odbc_global_fini();
    free(line);
    free(repeat);
    return code;
}

static int cmd_mutation(int argc, char **argv)
{
    static const struct option opts[] = {{"seeds", required_argument, 0, 'k'},
                                          {"out", required_argument, 0, 'o'},
                                          {"dsn", required_argument, 0, 'd'},
                                          {"only", required_argument, 0, 'n'},
                                          {"correct", required_argument, 0, 'c'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    qc_mutation_opts o = {.seeds = 3, .out_dir = "results/mutation"};
    long k;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'k':
            if (parse_long_arg("--seeds", optarg, 1, &k)) return 2;
            o.seeds = (int)(k > 64 ? 64 : k);
            break;
        case 'o': o.out_dir = optarg; break;
        case 'd': o.dsn = optarg; break;
        case 'n': o.only = optarg; break;
        case 'c': o.correct = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc)
        return die(2, "mutation takes no file arguments");
    qc_err err = {0};
    int code = qc_mutation_run(&o, &err);
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
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'a': allow_inc = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
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
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'a': allow_inc = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
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

int main(int argc, char **argv)
{
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
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "audit"))
        return cmd_audit(argc - 1, argv + 1);
    if (!strcmp(cmd, "report"))
        return cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "mutation"))
        return cmd_mutation(argc - 1, argv + 1);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("qchaos %s\n", QC_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "qchaos: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
