/*
 * bench_ledger.c - a benchmark, not a test: the cost of appending the
 * events a worker writes per job (invoke and ok claim, effect, invoke and
 * ok complete), one thread: built with the event builder as harness/
 * worker.c builds them (qc_ev_append), and the same events as jansson
 * objects (qc_ledger_append, as the rarer events of runner.c are built).
 * Prints ns and CPU ns per event and the bytes per line of each;
 * QC_BENCH_APPEND=ev or =json runs only one.
 *
 *   tests/bench_ledger [EVENTS] [LEDGER]     (default 500000, /tmp file)
 *
 * Under `valgrind --tool=callgrind` it gives the instruction count of the
 * append path (make bench prints neither as a pass or fail).
 *
 *   tests/bench_ledger --audit [EVENTS]      (default 125000)
 *
 * The audit's cost (issue 16): ledgers of 1x, 2x, 4x and 8x EVENTS events
 * (and 10,000,000 with BENCH_FULL=1) written by the ledger writer itself
 * (a clean run's lines: per job an ok enqueue, invoke and ok claim, an
 * effect, invoke and ok complete, and its snapshot row), each audited by
 * `qchaos audit LEDGER` in a child process (QCHAOS names another build, for
 * a before/after; QC_LEDGER_PARSER=jansson passes through).  Prints per
 * ledger: events/s of wall time, events per CPU second of the child
 * (user + system over all its threads, wait4's rusage: "per core"), its
 * peak RSS (ru_maxrss) and that divided by the events, the threads its
 * checkers ran on (qc_check_threads; QC_AUDIT_THREADS=1 for one) and the
 * 1-minute load average when it started.  Nothing is asserted: the
 * numbers are the output.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../harness/checkers.h"
#include "../harness/clock.h"
#include "../harness/history.h"
#include "../harness/ledger.h"

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static json_t *ev(const char *type, const char *op, long job, long req)
{
    json_t *e = json_object();
    json_object_set_new(e, "type", json_string(type));
    if (op)
        json_object_set_new(e, "op", json_string(op));
    json_object_set_new(e, "worker", json_integer(job % 16));
    json_object_set_new(e, "inc", json_integer(0));
    if (req >= 0)
        json_object_set_new(e, "req", json_integer(req));
    return e;
}

/* The header of a clean default run (the checkers read its bounds). */
static const char audit_header[] =
    "{\"qchaos\":\"0.1.0\",\"seed\":1,\"scenario\":\"bench\",\"protocol\":"
    "\"backends/postgres/skip_locked.sql\",\"engine\":\"postgres\",\"model\":\"lease\","
    "\"columns\":{\"enqueue\":[\"job_id\"],\"claim\":[\"job_id\",\"token\",\"lease_until_ms\","
    "\"now_ms\",\"attempt\",\"op_key\"],\"complete\":[\"now_ms\"],\"renew\":[\"token\","
    "\"lease_until_ms\",\"now_ms\"],\"fail\":[\"now_ms\"],\"reap\":[\"job_id\",\"token\","
    "\"state\",\"now_ms\"],\"snapshot\":[\"job_id\",\"state\",\"attempt\",\"token\","
    "\"error\"]},\"workers\":16,\"batch\":1,\"lease_ms\":5000,\"max_attempts\":3,"
    "\"reaper_interval_ms\":500,\"recovery_slack_ms\":2000,\"idle_base_ms\":5,"
    "\"idle_cap_ms\":200,\"idle_jitter\":0.2,\"max_idle_polls_per_s\":12.5,"
    "\"max_idle_pause_ms\":440,\"max_pickup_ms\":540,\"poison_mode\":\"fail\","
    "\"sink\":\"idempotent\",\"heartbeat\":true,\"checkers\":[\"exclusive_claim\","
    "\"double_complete\",\"no_lost_jobs\",\"acked_durable\",\"no_early_reap\",\"batch_bound\"]}";

/* Writes a clean run of jobs*7+1 events to path with the ledger writer. */
static int write_audit_ledger(const char *path, long jobs)
{
    json_error_t jerr;
    json_t *hdr = json_loads(audit_header, 0, &jerr);
    qc_ledger *l = NULL;
    qc_err err = {0};
    char tok[64];

    json_object_set_new(hdr, "jobs", json_integer(jobs));
    if (qc_ledger_open(path, hdr, qc_clock_ms(), &l, &err) != 0) {
        fprintf(stderr, "bench_ledger: %s\n", err.msg);
        json_decref(hdr);
        return -1;
    }
    json_decref(hdr);
    qc_lbuf *b = qc_ledger_buf(l);
    double t0 = qc_clock_ms();
    for (long job = 1; job <= jobs; job++) {
        json_t *e = ev("ok", "enqueue", -1, -1);
        json_object_set_new(e, "worker", json_integer(-1));
        json_object_set_new(e, "job", json_integer(job));
        qc_ledger_append(b, e);
    }
    for (long job = 1; job <= jobs; job++) {
        snprintf(tok, sizeof tok, "4c2fcc48-e683-45bd-9cb3-%012lx", job);
        /* the server's clock (to the microsecond) moves with the client's */
        double now = (double)(1796156990428974LL + (long long)((qc_clock_ms() - t0) * 1000)) / 1000.0;
        json_t *e = ev("invoke", "claim", job, 2 * job);
        json_object_set_new(e, "pause_ms", json_real(5.25));
        qc_ledger_append(b, e);
        e = ev("ok", "claim", job, 2 * job);
        json_object_set_new(e, "rows", json_integer(1));
        json_object_set_new(e, "job", json_integer(job));
        json_object_set_new(e, "token", json_string(tok));
        json_object_set_new(e, "lease_until", json_real(now + 5000.0));
        json_object_set_new(e, "now", json_real(now));
        json_object_set_new(e, "attempt", json_integer(1));
        json_object_set_new(e, "op_key", json_integer(job));
        qc_ledger_append(b, e);
        e = ev("effect", NULL, job, -1);
        json_object_set_new(e, "job", json_integer(job));
        json_object_set_new(e, "token", json_string(tok));
        json_object_set_new(e, "op_key", json_integer(job));
        json_object_set_new(e, "applied", json_true());
        json_object_set_new(e, "work_ms", json_real(0.0));
        qc_ledger_append(b, e);
        e = ev("invoke", "complete", job, 2 * job + 1);
        json_object_set_new(e, "job", json_integer(job));
        json_object_set_new(e, "token", json_string(tok));
        qc_ledger_append(b, e);
        e = ev("ok", "complete", job, 2 * job + 1);
        json_object_set_new(e, "job", json_integer(job));
        json_object_set_new(e, "token", json_string(tok));
        json_object_set_new(e, "rows", json_integer(1));
        json_object_set_new(e, "now", json_real(now + 0.125));
        json_object_set_new(e, "counted", json_true());
        qc_ledger_append(b, e);
    }
    for (long job = 1; job <= jobs; job++) {
        snprintf(tok, sizeof tok, "4c2fcc48-e683-45bd-9cb3-%012lx", job);
        json_t *e = json_object();
        json_object_set_new(e, "type", json_string("snapshot"));
        json_object_set_new(e, "job", json_integer(job));
        json_object_set_new(e, "state", json_string("done"));
        json_object_set_new(e, "attempt", json_integer(1));
        json_object_set_new(e, "token", json_string(tok));
        qc_ledger_append(b, e);
    }
    json_t *e = json_object();
    json_object_set_new(e, "type", json_string("end"));
    json_object_set_new(e, "drained", json_true());
    qc_ledger_append(b, e);
    if (qc_ledger_close(l, &err) != 0) {
        fprintf(stderr, "bench_ledger: %s\n", err.msg);
        return -1;
    }
    return 0;
}

/* `qchaos audit path` in a child: wall ms, CPU ms (user + sys, every
 * thread) and peak RSS (KiB) from wait4; its exit code, -1 not run. */
static int audit_child(const char *qchaos, const char *path, double *wall, double *cpu,
                       long *rss_kb)
{
    double w0 = qc_clock_ms();
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (freopen("/dev/null", "w", stdout) == NULL)
            _exit(127);
        execl(qchaos, qchaos, "audit", path, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid)
        return -1;
    *wall = qc_clock_ms() - w0;
    *cpu = ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3 + ru.ru_stime.tv_sec * 1e3 +
           ru.ru_stime.tv_usec / 1e3;
    *rss_kb = ru.ru_maxrss;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* qc_history_load alone, in a forked child of this process (its own peak
 * RSS): CPU ms of the load (CLOCK_PROCESS_CPUTIME_ID, every thread) and
 * the child's peak RSS (KiB, getrusage); -1 when it failed. */
static int load_child(const char *path, double *cpu, long *rss_kb, size_t *fast)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        double r[3] = {-1, 0, 0};
        qc_history h;
        qc_err err = {0};
        const char *paths[1] = {path};
        double c0 = cpu_ms();
        if (qc_history_load(&h, paths, 1, &err) == 0) {
            struct rusage ru;
            r[0] = cpu_ms() - c0;
            getrusage(RUSAGE_SELF, &ru);
            r[1] = (double)ru.ru_maxrss;
            r[2] = (double)h.fast_lines;
        }
        if (write(fds[1], r, sizeof r) != (ssize_t)sizeof r)
            _exit(1);
        _exit(0);
    }
    close(fds[1]);
    double r[3] = {-1, 0, 0};
    ssize_t got = read(fds[0], r, sizeof r);
    close(fds[0]);
    waitpid(pid, NULL, 0);
    if (got != (ssize_t)sizeof r || r[0] < 0)
        return -1;
    *cpu = r[0];
    *rss_kb = (long)r[1];
    *fast = (size_t)r[2];
    return 0;
}

static int bench_audit(long base)
{
    const char *qchaos = getenv("QCHAOS") ? getenv("QCHAOS") : "./qchaos";
    const char *full = getenv("BENCH_FULL");
    long sizes[5] = {base, 2 * base, 4 * base, 8 * base, 10000000};
    int nsizes = full != NULL && strcmp(full, "1") == 0 ? 5 : 4;
    char path[] = "/tmp/qc-bench-audit.XXXXXX";
    int fd = mkstemp(path);

    if (fd < 0) {
        perror("bench_ledger: mkstemp");
        return 2;
    }
    close(fd);
    printf("bench_ledger: audit of generated ledgers by %s%s (left: `qchaos audit` in a child; "
           "right: this build's qc_history_load alone)\n",
           qchaos, getenv("QC_LEDGER_PARSER") ? " (QC_LEDGER_PARSER set)" : "");
    printf("%10s %10s %9s %12s %16s %10s %12s %5s %7s %6s | %15s %10s %12s\n", "events",
           "MB_on_disk", "wall_s", "events/s", "events/s/core", "peak_MB", "bytes/event", "exit",
           "threads", "load1", "load_ev/s/core", "load_MB", "load_B/event");
    for (int i = 0; i < nsizes; i++) {
        long jobs = sizes[i] / 7;
        struct stat st;
        double wall = 0, cpu = 0;
        long rss = 0;
        if (write_audit_ledger(path, jobs) != 0 || stat(path, &st) != 0) {
            unlink(path);
            return 2;
        }
        long events = jobs * 7 + 1;
        double la[1] = {-1};
        if (getloadavg(la, 1) < 1)
            la[0] = -1;
        int rc = audit_child(qchaos, path, &wall, &cpu, &rss);
        double lcpu = 0;
        long lrss = 0;
        size_t fast = 0;
        /* threads: the checkers' (qc_check_threads, QC_AUDIT_THREADS passes
         * through); load1: the 1-minute load average as the audit started */
        printf("%10ld %10.1f %9.2f %12.0f %16.0f %10.1f %12.0f %5d %7d %6.1f", events,
               st.st_size / 1048576.0, wall / 1e3, events / (wall / 1e3),
               events / (cpu > 0 ? cpu / 1e3 : 1e-3), rss / 1024.0, rss * 1024.0 / events, rc,
               qc_check_threads((size_t)events), la[0]);
        if (load_child(path, &lcpu, &lrss, &fast) == 0)
            printf(" | %15.0f %10.1f %12.0f%s\n", events / (lcpu > 0 ? lcpu / 1e3 : 1e-3),
                   lrss / 1024.0, lrss * 1024.0 / events, fast == 0 ? " (jansson)" : "");
        else
            printf(" | load failed\n");
        fflush(stdout);
    }
    if (getenv("BENCH_KEEP") != NULL)
        printf("bench_ledger: the last ledger is kept in %s\n", path);
    else
        unlink(path);
    return 0;
}

/* A worker's events of one job, built with the event builder as
 * harness/worker.c builds them (ledger.h qc_ev: no allocation). */
static void append_job_ev(qc_lbuf *b, long job, const char *tok, double now)
{
    qc_ev e;
    qc_ev_init(&e);
    qc_ev_str(&e, "type", "invoke");
    qc_ev_str(&e, "op", "claim");
    qc_ev_int(&e, "worker", job % 16);
    qc_ev_int(&e, "inc", 0);
    qc_ev_int(&e, "req", 2 * job);
    qc_ev_real(&e, "pause_ms", 5.25);
    qc_ev_append(b, &e);
    qc_ev_init(&e);
    qc_ev_str(&e, "type", "ok");
    qc_ev_str(&e, "op", "claim");
    qc_ev_int(&e, "worker", job % 16);
    qc_ev_int(&e, "inc", 0);
    qc_ev_int(&e, "req", 2 * job);
    qc_ev_int(&e, "rows", 1);
    qc_ev_int(&e, "job", job);
    qc_ev_str(&e, "token", tok);
    qc_ev_real(&e, "lease_until", now + 5000.0);
    qc_ev_real(&e, "now", now);
    qc_ev_int(&e, "attempt", 1);
    qc_ev_str(&e, "op_key", "17");
    qc_ev_append(b, &e);
    qc_ev_init(&e);
    qc_ev_str(&e, "type", "effect");
    qc_ev_int(&e, "worker", job % 16);
    qc_ev_int(&e, "inc", 0);
    qc_ev_int(&e, "job", job);
    qc_ev_str(&e, "token", tok);
    qc_ev_str(&e, "op_key", "17");
    qc_ev_bool(&e, "applied", 1);
    qc_ev_real(&e, "work_ms", 0.0);
    qc_ev_append(b, &e);
    qc_ev_init(&e);
    qc_ev_str(&e, "type", "invoke");
    qc_ev_str(&e, "op", "complete");
    qc_ev_int(&e, "worker", job % 16);
    qc_ev_int(&e, "inc", 0);
    qc_ev_int(&e, "req", 2 * job + 1);
    qc_ev_int(&e, "job", job);
    qc_ev_str(&e, "token", tok);
    qc_ev_append(b, &e);
    qc_ev_init(&e);
    qc_ev_str(&e, "type", "ok");
    qc_ev_str(&e, "op", "complete");
    qc_ev_int(&e, "worker", job % 16);
    qc_ev_int(&e, "inc", 0);
    qc_ev_int(&e, "req", 2 * job + 1);
    qc_ev_int(&e, "job", job);
    qc_ev_str(&e, "token", tok);
    qc_ev_int(&e, "rows", 1);
    qc_ev_real(&e, "now", now + 0.125);
    qc_ev_bool(&e, "counted", 1);
    qc_ev_append(b, &e);
}

/* The same five events as jansson objects (qc_ledger_append: the notes,
 * faults and server-side events of runner.c and nemesis.c are built so). */
static void append_job_json(qc_lbuf *b, long job, const char *tok, double now)
{
    json_t *e = ev("invoke", "claim", job, 2 * job);
    json_object_set_new(e, "pause_ms", json_real(5.25));
    qc_ledger_append(b, e);
    e = ev("ok", "claim", job, 2 * job);
    json_object_set_new(e, "rows", json_integer(1));
    json_object_set_new(e, "job", json_integer(job));
    json_object_set_new(e, "token", json_string(tok));
    json_object_set_new(e, "lease_until", json_real(now + 5000.0));
    json_object_set_new(e, "now", json_real(now));
    json_object_set_new(e, "attempt", json_integer(1));
    json_object_set_new(e, "op_key", json_string("17"));
    qc_ledger_append(b, e);
    e = ev("effect", NULL, job, -1);
    json_object_set_new(e, "job", json_integer(job));
    json_object_set_new(e, "token", json_string(tok));
    json_object_set_new(e, "op_key", json_string("17"));
    json_object_set_new(e, "applied", json_true());
    json_object_set_new(e, "work_ms", json_real(0.0));
    qc_ledger_append(b, e);
    e = ev("invoke", "complete", job, 2 * job + 1);
    json_object_set_new(e, "job", json_integer(job));
    json_object_set_new(e, "token", json_string(tok));
    qc_ledger_append(b, e);
    e = ev("ok", "complete", job, 2 * job + 1);
    json_object_set_new(e, "job", json_integer(job));
    json_object_set_new(e, "token", json_string(tok));
    json_object_set_new(e, "rows", json_integer(1));
    json_object_set_new(e, "now", json_real(now + 0.125));
    json_object_set_new(e, "counted", json_true());
    qc_ledger_append(b, e);
}

/* n events (5 a job) appended to a new ledger at path, built with the
 * event builder (use_ev) or as jansson objects; prints the cost. */
static int bench_append(const char *path, long n, int use_ev, int keep)
{
    json_t *hdr = json_pack("{s:i}", "seed", 1);
    qc_ledger *l = NULL;
    qc_err err = {0};
    if (qc_ledger_open(path, hdr, qc_clock_ms(), &l, &err) != 0) {
        fprintf(stderr, "bench_ledger: %s\n", err.msg);
        json_decref(hdr);
        return 2;
    }
    json_decref(hdr);
    qc_lbuf *b = qc_ledger_buf(l);
    char tok[64];
    double w0 = qc_clock_ms(), c0 = cpu_ms();
    long events = 0;
    for (long job = 1; events < n; job++) {
        snprintf(tok, sizeof tok, "4c2fcc48-e683-45bd-9cb3-%012lx", job);
        /* server epoch ms as the database returns them: to the microsecond */
        double now = (double)(1796156990428974LL + job * 251) / 1000.0;
        if (use_ev)
            append_job_ev(b, job, tok, now);
        else
            append_job_json(b, job, tok, now);
        events += 5;
    }
    double wall = qc_clock_ms() - w0, cpu = cpu_ms() - c0;
    if (qc_ledger_close(l, &err) != 0) {
        fprintf(stderr, "bench_ledger: %s\n", err.msg);
        return 2;
    }
    struct stat st;
    stat(path, &st);
    printf("bench_ledger: %ld events, %.0f ns/event wall, %.0f ns/event CPU (%s), %.1f "
           "bytes/line\n",
           events, wall * 1e6 / events, cpu * 1e6 / events,
           use_ev ? "built with qc_ev, as the workers do" : "built as jansson objects",
           (double)st.st_size / events);
    if (!keep)
        unlink(path);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--audit") == 0)
        return bench_audit(argc > 2 ? atol(argv[2]) : 125000);
    long n = argc > 1 ? atol(argv[1]) : 500000;
    char path[256];
    snprintf(path, sizeof path, "%s", argc > 2 ? argv[2] : "/tmp/qc-bench-ledger.jsonl");
    /* QC_BENCH_APPEND=ev|json: only one of the two (a callgrind count) */
    const char *only = getenv("QC_BENCH_APPEND");
    int rc = 0;
    if (only == NULL || strcmp(only, "json") == 0)
        rc = bench_append(path, n, 0, argc > 2);
    if (rc == 0 && (only == NULL || strcmp(only, "ev") == 0))
        rc = bench_append(path, n, 1, argc > 2);
    return rc;
}
