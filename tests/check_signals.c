/*
 * check_signals.c - SIGINT / SIGTERM end a run within a bounded time, even
 * while a statement runs for minutes (the batch_in_subquery mutant on
 * 30,000 jobs: one claim takes minutes), and every statement has a timeout.
 * Runs ./qchaos against the real PostgreSQL of tests/run.sh (QC_TEST_DSN);
 * waits on the server's pg_stat_activity for a claim in flight, never on a
 * bare sleep, and polls the child with a generous deadline.
 */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *dsn;
static char outdir[256];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Writes a scenario: the slow mutant, 3 workers, jobs, the statement
 * timeout and drain timeout given. */
static void write_scenario(const char *path, long jobs, long timeout_ms, long drain_s)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "[scenario]\nname = signals\n"
            "protocol = backends/postgres/mutants/batch_in_subquery.sql\n"
            "[workload]\nworkers = 3\njobs = %ld\nbatch = 10\n"
            "[lease]\nstatement_timeout_ms = %ld\n"
            "[drain]\ntimeout_s = %ld\n"
            "[checks]\njudge = exclusive_claim, double_complete, no_lost_jobs, acked_durable, "
            "batch_bound\n",
            jobs, timeout_ms, drain_s);
    fclose(f);
}

/* Starts ./qchaos run SCENARIO --dsn DSN --out OUT (stdout and stderr to
 * OUT.log). */
static pid_t spawn_run(const char *scenario, const char *out)
{
    char log[400];
    snprintf(log, sizeof log, "%s.log", out);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (freopen(log, "w", stdout) == NULL || dup2(fileno(stdout), 2) < 0)
            _exit(126);
        execl("./qchaos", "qchaos", "run", scenario, "--dsn", dsn, "--out", out, "--seed", "1",
              "--no-progress", (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Polls the child until it exits or timeout_s passes; returns its wait
 * status, or -1 on the deadline (the child is then killed). */
static int wait_child(pid_t pid, double timeout_s)
{
    double end = now_s() + timeout_s;
    int st;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return st;
        if (now_s() >= end) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        sleep_ms(100);
    }
}

#define CLAIM_IN_FLIGHT                                                                     \
    "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'qchaos' AND state = "    \
    "'active' AND query LIKE '%SKIP LOCKED%' AND now() - query_start > interval '1 second'"
#define ANY_QCHAOS_SESSION                                                                  \
    "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'qchaos' AND pid <> "   \
    "pg_backend_pid()"

/* Waits until count query (one count(*) cell) is > 0 on the server --
 * CLAIM_IN_FLIGHT: a qchaos claim (the mutant's UPDATE ... IN (SELECT ...
 * FOR UPDATE SKIP LOCKED)) running for at least a second; 0 when seen, -1
 * when the child exited first or timeout_s passed. */
static int wait_server(pid_t pid, const char *query, double timeout_s)
{
    PGconn *c = PQconnectdb(dsn);
    double end = now_s() + timeout_s;
    int rc = -1;
    ck_assert_msg(PQstatus(c) == CONNECTION_OK, "cannot connect: %s", PQerrorMessage(c));
    while (now_s() < end) {
        PGresult *r = PQexec(c, query);
        int n = PQresultStatus(r) == PGRES_TUPLES_OK ? atoi(PQgetvalue(r, 0, 0)) : 0;
        PQclear(r);
        if (n > 0) {
            rc = 0;
            break;
        }
        if (waitpid(pid, NULL, WNOHANG) == pid)
            break;
        sleep_ms(200);
    }
    PQfinish(c);
    return rc;
}

/* Ends what a failed test may have left running on the server. */
static void terminate_leftovers(void)
{
    PGconn *c = PQconnectdb(dsn);
    if (PQstatus(c) == CONNECTION_OK)
        PQclear(PQexec(c, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
                          "application_name = 'qchaos' AND pid <> pg_backend_pid()"));
    PQfinish(c);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return strdup("");
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void signal_ends_run(int sig, const char *name)
{
    char scen[400], out[400], path[500];
    snprintf(scen, sizeof scen, "%s/%s.ini", outdir, name);
    snprintf(out, sizeof out, "%s/%s", outdir, name);
    /* a statement timeout far beyond the deadline below: only the cancel
     * can end the claim in time */
    write_scenario(scen, 30000, 600000, 120);
    pid_t pid = spawn_run(scen, out);
    int seen = wait_server(pid, CLAIM_IN_FLIGHT, 180);
    if (seen != 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        terminate_leftovers();
    }
    ck_assert_msg(seen == 0, "no claim of the slow mutant seen in flight (see %s.log)", out);
    double t0 = now_s();
    ck_assert_int_eq(kill(pid, sig), 0);
    int st = wait_child(pid, 90);
    double took = now_s() - t0;
    if (st == -1)
        terminate_leftovers();
    char logp[420];
    snprintf(logp, sizeof logp, "%s.log", out);
    char *log = slurp(logp);
    ck_assert_msg(st != -1, "%s: qchaos still running 90 s after the signal; log:\n%s", name, log);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 4, "%s: exit %d after %.1f s, want 4; log:\n%s",
                  name, WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st), took, log);
    ck_assert_msg(strstr(log, "canceling statement due to user request") != NULL,
                  "%s: the claim was not cancelled; log:\n%s", name, log);
    free(log);
    struct stat sb;
    snprintf(path, sizeof path, "%s/ledger.jsonl", out);
    ck_assert_msg(stat(path, &sb) == 0 && sb.st_size > 0, "%s: no ledger kept", name);
    snprintf(path, sizeof path, "%s/results.json", out);
    json_error_t je;
    json_t *r = json_load_file(path, 0, &je);
    ck_assert_msg(r != NULL, "%s: cannot read %s: %s", name, path, je.text);
    ck_assert_int_eq(json_integer_value(json_object_get(r, "exit_code")), 4);
    ck_assert(json_is_true(json_object_get(json_object_get(r, "metrics"), "interrupted")));
    json_decref(r);
    fprintf(stderr, "check_signals: %s: exit 4, %.1f s after the signal\n", name, took);
}

START_TEST(test_sigterm_cancels_a_long_claim_and_exits_4)
{
    signal_ends_run(SIGTERM, "sigterm");
}
END_TEST

START_TEST(test_sigint_cancels_a_long_claim_and_exits_4)
{
    signal_ends_run(SIGINT, "sigint");
}
END_TEST

/* [lease] statement_timeout_ms: the server cancels a claim running longer;
 * it is a fail event in the ledger (SQLSTATE 57014), the run goes on and
 * ends at its drain timeout. */
START_TEST(test_statement_timeout_makes_a_long_claim_a_fail_event)
{
    char scen[400], out[400], path[500];
    snprintf(scen, sizeof scen, "%s/timeout.ini", outdir);
    snprintf(out, sizeof out, "%s/timeout", outdir);
    write_scenario(scen, 8000, 500, 3);
    pid_t pid = spawn_run(scen, out);
    int st = wait_child(pid, 240);
    if (st == -1)
        terminate_leftovers();
    ck_assert_msg(st != -1, "qchaos still running after 240 s with a 500 ms statement timeout");
    ck_assert(WIFEXITED(st));
    snprintf(path, sizeof path, "%s/ledger.jsonl", out);
    char *ledger = slurp(path);
    ck_assert_msg(strstr(ledger, "\"statement_timeout_ms\": 500") != NULL ||
                      strstr(ledger, "\"statement_timeout_ms\":500") != NULL,
                  "the ledger header does not record the statement timeout");
    ck_assert_msg(strstr(ledger, "57014 canceling statement due to statement timeout") != NULL,
                  "no claim ended by the statement timeout in %s", path);
    ck_assert_msg(strstr(ledger, "\"type\": \"fail\"") != NULL ||
                      strstr(ledger, "\"type\":\"fail\"") != NULL,
                  "a timed-out claim is not a fail event");
    free(ledger);
}
END_TEST

/* Counts the qchaos sessions on the server until there are none or
 * timeout_s passes; returns the last count. */
static int sessions_left(double timeout_s)
{
    PGconn *c = PQconnectdb(dsn);
    double end = now_s() + timeout_s;
    int n = -1;
    ck_assert_msg(PQstatus(c) == CONNECTION_OK, "cannot connect: %s", PQerrorMessage(c));
    for (;;) {
        PGresult *r = PQexec(c, ANY_QCHAOS_SESSION);
        n = PQresultStatus(r) == PGRES_TUPLES_OK ? atoi(PQgetvalue(r, 0, 0)) : -1;
        PQclear(r);
        if (n == 0 || now_s() >= end)
            break;
        sleep_ms(200);
    }
    PQfinish(c);
    return n;
}

/* `qchaos mutation` passes SIGTERM on to the run it is in (which cancels
 * its statements), starts no further run and exits 4. */
START_TEST(test_sigterm_stops_mutation_and_its_child_run)
{
    char out[400], log[420];
    snprintf(out, sizeof out, "%s/mutation", outdir);
    snprintf(log, sizeof log, "%s.log", out);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (freopen(log, "w", stdout) == NULL || dup2(fileno(stdout), 2) < 0)
            _exit(126);
        execl("./qchaos", "qchaos", "mutation", "--only", "batch_in", "--seeds", "3", "--dsn", dsn,
              "--out", out, (char *)NULL);
        _exit(127);
    }
    int seen = wait_server(pid, ANY_QCHAOS_SESSION, 180);
    if (seen != 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        terminate_leftovers();
    }
    ck_assert_msg(seen == 0, "no run of the mutation seen on the server (see %s)", log);
    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    int st = wait_child(pid, 90);
    int left = sessions_left(30);
    if (st == -1 || left != 0)
        terminate_leftovers();
    char *text = slurp(log);
    ck_assert_msg(st != -1, "qchaos mutation still running 90 s after SIGTERM; log:\n%s", text);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 4, "mutation: %s %d, want exit 4; log:\n%s",
                  WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
                  text);
    ck_assert_msg(left == 0, "%d qchaos sessions still on the server: the child run went on", left);
    ck_assert_msg(strstr(text, "interrupted") != NULL, "log:\n%s", text);
    free(text);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("signals");
    if (dsn) {
        TCase *tc = tcase_create("live");
        tcase_set_timeout(tc, 900);
        tcase_add_test(tc, test_sigterm_cancels_a_long_claim_and_exits_4);
        tcase_add_test(tc, test_sigint_cancels_a_long_claim_and_exits_4);
        tcase_add_test(tc, test_statement_timeout_makes_a_long_claim_a_fail_event);
        tcase_add_test(tc, test_sigterm_stops_mutation_and_its_child_run);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    dsn = getenv("QC_TEST_DSN");
    if (!dsn || !*dsn) {
        fprintf(stderr, "check_signals: QC_TEST_DSN unset: skipping the live runs\n");
        dsn = NULL;
    }
    snprintf(outdir, sizeof outdir, "/tmp/qc_signals.%d", (int)getpid());
    if (mkdir(outdir, 0755) != 0)
        return EXIT_FAILURE;
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
