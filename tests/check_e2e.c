/*
 * check_e2e.c - end-to-end runs of ./qchaos (or $QC_QCHAOS_BIN) against the real PostgreSQL that
 * tests/run.sh starts (QC_TEST_DSN).  No mocks: the harness drives real
 * worker connections through the real protocol files, and we read the
 * results.json it wrote.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_fixture.h"

static const char *dsn;

static long long opportunities(json_t *results, const char *name)
{
    return json_integer_value(json_object_get(checker(results, name), "opportunities"));
}

static const char *const core[] = {"exclusive_claim", "double_complete", "no_lost_jobs",
                                   "acked_durable"};

/* Every checker in a's results has the same verdict, opportunities and
 * violation count in b's. */
static void assert_same_verdicts(json_t *a, json_t *b)
{
    json_t *arr = json_object_get(a, "checkers");
    size_t i;
    json_t *c;
    json_array_foreach(arr, i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        json_t *o = checker(b, name);
        ck_assert_str_eq(json_string_value(json_object_get(c, "verdict")),
                         json_string_value(json_object_get(o, "verdict")));
        ck_assert_int_eq(json_integer_value(json_object_get(c, "opportunities")),
                         json_integer_value(json_object_get(o, "opportunities")));
        ck_assert_int_eq(json_integer_value(json_object_get(c, "violations_total")),
                         json_integer_value(json_object_get(o, "violations_total")));
    }
}

START_TEST(test_e2e_default_scenario_passes_and_audit_agrees)
{
    char cmd[2048];
    char *err = NULL;
    snprintf(cmd, sizeof cmd,
             "./qchaos run scenarios/default.ini --dsn '%s' --seed 1 --out %s/default "
             "--no-progress",
             dsn, outdir);
    int code = run(cmd, &err);
    ck_assert_msg(code == 0, "default scenario exit %d: %s", code, err);
    free(err);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/default", outdir);
    json_t *r = load_results(dir);
    for (size_t i = 0; i < sizeof core / sizeof *core; i++) {
        ck_assert_msg(!strcmp(verdict(r, core[i]), "PASS"), "%s is %s", core[i],
                      verdict(r, core[i]));
        ck_assert_msg(opportunities(r, core[i]) > 0, "%s had no opportunities", core[i]);
    }
    ck_assert_int_ge(opportunities(r, "exclusive_claim"), 20000);
    ck_assert_int_eq(opportunities(r, "no_lost_jobs"), 20000);
    ck_assert_int_eq(json_integer_value(json_object_get(r, "seed")), 1);

    /* qchaos audit on the saved ledger reproduces the verdict. */
    snprintf(cmd, sizeof cmd, "./qchaos audit --out %s/default-audit %s/default/ledger.jsonl",
             outdir, outdir);
    ck_assert_int_eq(run(cmd, NULL), 0);
    snprintf(dir, sizeof dir, "%s/default-audit", outdir);
    json_t *a = load_results(dir);
    assert_same_verdicts(r, a);
    /* and says what the run was, from the ledger's header */
    ck_assert_str_eq(json_string_value(json_object_get(a, "engine")), "postgres");
    ck_assert_str_eq(json_string_value(json_object_get(a, "tested_where")),
                     json_string_value(json_object_get(r, "tested_where")));
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(a, "protocol")),
                                 "skip_locked.sql"));
    json_decref(a);
    json_decref(r);
}
END_TEST

START_TEST(test_e2e_select_then_update_mutant_fails_with_jobs_named)
{
    char cmd[2048];
    char *err = NULL;
    snprintf(cmd, sizeof cmd,
             "./qchaos run scenarios/default.ini --protocol "
             "backends/postgres/mutants/select_then_update.sql --dsn '%s' --seed 2 "
             "--out %s/naive --no-progress",
             dsn, outdir);
    int code = run(cmd, &err);
    ck_assert_msg(code == 1, "mutant exit %d (want 1): %s", code, err);
    free(err);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/naive", outdir);
    json_t *r = load_results(dir);
    json_t *ec = checker(r, "exclusive_claim");
    json_t *dc = checker(r, "double_complete");
    int failed = !strcmp(verdict(r, "exclusive_claim"), "FAIL") ||
                 !strcmp(verdict(r, "double_complete"), "FAIL");
    ck_assert_msg(failed, "neither exclusive_claim nor double_complete failed");
    json_t *c = !strcmp(verdict(r, "exclusive_claim"), "FAIL") ? ec : dc;
    json_t *v = json_array_get(json_object_get(c, "violations"), 0);
    ck_assert_ptr_nonnull(v);
    ck_assert_int_gt(json_integer_value(json_object_get(v, "job")), 0);
    ck_assert_int_ge(json_array_size(json_object_get(v, "seq")), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(r, "exit_code")), 1);

    /* The run folder holds every output; a FAIL in results.json is a
     * <failure> in junit.xml; the HTML report is self-contained. */
    static const char *const files[] = {"ledger.jsonl", "results.json",  "junit.xml",
                                        "report.md",    "report.html",   "plots/throughput.png",
                                        "plots/throughput.svg", "plots/latency.png"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(cmd, sizeof cmd, "test -s %s/naive/%s", outdir, files[i]);
        ck_assert_msg(run(cmd, NULL) == 0, "%s missing or empty", files[i]);
    }
    snprintf(cmd, sizeof cmd,
             "grep -q '<testcase[^>]*name=\"exclusive_claim\"' %s/naive/junit.xml && "
             "awk '/name=\"exclusive_claim\"/{f=1} f&&/<failure/{print; exit}' "
             "%s/naive/junit.xml | grep -q failure && "
             "grep -q 'data:image/png;base64' %s/naive/report.html && "
             "! grep -q 'src=\"http' %s/naive/report.html",
             outdir, outdir, outdir, outdir);
    ck_assert_msg(run(cmd, NULL) == 0, "junit.xml / report.html do not carry the FAIL");
    if (qc_system("command -v xmllint >/dev/null 2>&1") == 0) {
        snprintf(cmd, sizeof cmd, "xmllint --noout %s/naive/junit.xml", outdir);
        ck_assert_int_eq(run(cmd, NULL), 0);
    }

    snprintf(cmd, sizeof cmd, "./qchaos audit --out %s/naive-audit %s/naive",
             outdir, outdir);
    ck_assert_int_eq(run(cmd, NULL), 1);
    snprintf(dir, sizeof dir, "%s/naive-audit", outdir);
    json_t *a = load_results(dir);
    assert_same_verdicts(r, a);
    json_decref(a);
    json_decref(r);
}
END_TEST

START_TEST(test_e2e_bad_scenario_exits_2_with_file_line)
{
    char p[300], cmd[2048];
    char *err = NULL;
    snprintf(p, sizeof p, "%s/bad.ini", outdir);
    FILE *f = fopen(p, "w");
    fputs("[workload]\nworkers = 4\nwrokers = 5\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "./qchaos run %s --dsn '%s' --out %s/bad", p, dsn, outdir);
    ck_assert_int_eq(run(cmd, &err), 2);
    char want[400];
    snprintf(want, sizeof want, "%s:3: unknown key 'wrokers'", p);
    ck_assert_msg(strstr(err, want), "stderr: %s", err);
    free(err);
}
END_TEST

START_TEST(test_e2e_protocol_missing_statement_exits_2_before_connecting)
{
    char p[300], cmd[2048];
    char *err = NULL;
    snprintf(p, sizeof p, "%s/broken.sql", outdir);
    FILE *f = fopen(p, "w");
    fputs("-- engine: postgres\n-- name: setup\nSELECT 1;\n-- name: teardown\nSELECT 1;\n"
          "-- name: enqueue\nSELECT 1 AS job_id;\n",
          f);
    fclose(f);
    /* The DSN points nowhere: exit 2 (not 3) proves the file was checked
     * before any connection. */
    snprintf(cmd, sizeof cmd,
             "./qchaos run --protocol %s --dsn 'host=127.0.0.1 port=1 connect_timeout=2' "
             "--out %s/broken",
             p, outdir);
    ck_assert_int_eq(run(cmd, &err), 2);
    ck_assert_msg(strstr(err, p) && strstr(err, "claim"), "stderr: %s", err);
    free(err);
}
END_TEST

START_TEST(test_e2e_unreachable_database_exits_3_without_password)
{
    char cmd[2048];
    char *err = NULL;
    snprintf(cmd, sizeof cmd,
             "./qchaos run --jobs 10 --dsn 'host=127.0.0.1 port=1 user=u password=Sekr1tPw "
             "connect_timeout=2' --out %s/unreach",
             outdir);
    ck_assert_int_eq(run(cmd, &err), 3);
    ck_assert_msg(strstr(err, "127.0.0.1") && strstr(err, "1"), "stderr: %s", err);
    ck_assert_msg(!strstr(err, "Sekr1tPw"), "password leaked: %s", err);
    free(err);
    /* ...and not in any file it wrote either. */
    snprintf(cmd, sizeof cmd, "! grep -rq Sekr1tPw %s/unreach", outdir);
    ck_assert_int_eq(run(cmd, NULL), 0);
}
END_TEST

/* A --worker-dsn that does not connect: the message says it was the
 * worker DSN, not the --dsn that setup used and that worked. */
START_TEST(test_e2e_worker_dsn_failure_names_worker_dsn)
{
    char cmd[2048];
    char *err = NULL;
    snprintf(cmd, sizeof cmd,
             "./qchaos run --jobs 10 --workers 2 --dsn '%s' --worker-dsn 'host=127.0.0.1 port=1 "
             "password=Wd5ecret' --out %s/wdsn --no-progress",
             dsn, outdir);
    ck_assert_int_eq(run(cmd, &err), 3);
    ck_assert_msg(strstr(err, "cannot connect with --worker-dsn: cannot connect to 127.0.0.1:1"),
                  "stderr: %s", err);
    ck_assert_msg(!strstr(err, "Wd5ecret"), "password leaked: %s", err);
    free(err);
}
END_TEST

START_TEST(test_e2e_ephemeral_postgres_when_no_dsn)
{
    char cmd[2048];
    char *err = NULL;
    snprintf(cmd, sizeof cmd,
             "./qchaos run scenarios/default.ini --jobs 300 --workers 4 --seed 5 --out %s/eph "
             "--no-progress",
             outdir);
    int code = run(cmd, &err);
    ck_assert_msg(code == 0, "exit %d: %s", code, err);
    free(err);
}
END_TEST

/* A password in --dsn reaches the server but never the output: not stdout,
 * not stderr, not the ledger, results.json, junit.xml or the reports (the
 * repeat command keeps the connection string with "***"). */
START_TEST(test_e2e_password_never_written)
{
    char cmd[2048];
    char *err = NULL;
    snprintf(cmd, sizeof cmd,
             "./qchaos run scenarios/default.ini --protocol "
             "backends/postgres/mutants/select_then_update.sql --jobs 400 --seed 9 "
             "--dsn '%s password=Pw9Secret' --out %s/pw --no-progress",
             dsn, outdir);
    int code = run(cmd, &err);
    ck_assert_msg(code == 1, "exit %d: %s", code, err);
    ck_assert_msg(!strstr(err, "Pw9Secret"), "password on stderr");
    free(err);
    snprintf(cmd, sizeof cmd, "! grep -rq Pw9Secret %s/pw %s/stdout.txt", outdir, outdir);
    ck_assert_int_eq(run(cmd, NULL), 0);
    snprintf(cmd, sizeof cmd, "grep -q 'password=\\*\\*\\*' %s/pw/results.json", outdir);
    ck_assert_int_eq(run(cmd, NULL), 0);
}
END_TEST

/* Issue 18: every step gets :worker, :worker_id, :incarnation, :lease_ms
 * ...: a protocol whose complete / fail fence on locked_by = :worker and
 * whose renew fences on 'w' || :worker_id || '.' || :incarnation runs and
 * passes, through worker restarts (kill_after_claim: new incarnations) and
 * heartbeats (renew). */
START_TEST(test_e2e_protocol_fencing_on_worker_passes)
{
    static const char *const scen[] = {"kill_after_claim", "slow_work"};
    for (size_t k = 0; k < 2; k++) {
        char cmd[2048], dir[512];
        char *err = NULL;
        snprintf(dir, sizeof dir, "%s/fence-%s", outdir, scen[k]);
        snprintf(cmd, sizeof cmd,
                 "./qchaos run scenarios/%s.ini --protocol tests/protocols/fence_on_worker.sql "
                 "--dsn '%s' --jobs %d --seed 1 --out %s --no-progress",
                 scen[k], dsn, k == 0 ? 400 : 24, dir);
        int code = run(cmd, &err);
        ck_assert_msg(code == 0, "%s: exit %d: %s", scen[k], code, err);
        ck_assert_msg(strstr(err, "no value for parameter") == NULL, "%s", err);
        free(err);
        json_t *r = load_results(dir);
        for (size_t i = 0; i < sizeof core / sizeof *core; i++)
            ck_assert_msg(!strcmp(verdict(r, core[i]), "PASS"), "%s: %s is %s", scen[k],
                          core[i], verdict(r, core[i]));
        json_decref(r);
        /* the fenced steps really ran: acknowledged renews (slow_work) and
         * completes by restarted incarnations (kill_after_claim) */
        snprintf(cmd, sizeof cmd,
                 "grep '\"type\":\"ok\",\"op\":\"%s\"' %s/ledger.jsonl | grep -q '%s'",
                 k == 0 ? "complete" : "renew", dir,
                 k == 0 ? "\"inc\":[1-9].*\"rows\":1" : "\"rows\":1");
        ck_assert_msg(run(cmd, NULL) == 0, "%s: no acknowledged fenced %s", scen[k],
                      k == 0 ? "complete by a restarted worker" : "renew");
    }
}
END_TEST

/* Decision 1100: a protocol whose complete deletes the row ("missing:
 * done") ends a drained run with an empty queue; the snapshot is still
 * recorded (a job-less snapshot event), so no_lost_jobs and acked_durable
 * judge every job, under kills after claim (reaped, re-claimed, deleted),
 * instead of ending INCONCLUSIVE with "no final snapshot". */
START_TEST(test_e2e_delete_on_complete_empty_snapshot_judged)
{
    char cmd[2048], dir[512];
    char *err = NULL;
    snprintf(dir, sizeof dir, "%s/delete-done", outdir);
    snprintf(cmd, sizeof cmd,
             "./qchaos run scenarios/kill_after_claim.ini --protocol tests/protocols/delete_done.sql "
             "--dsn '%s' --jobs 300 --seed 1 --out %s --no-progress",
             dsn, dir);
    int code = run(cmd, &err);
    ck_assert_msg(code == 0, "exit %d: %s", code, err);
    free(err);
    json_t *r = load_results(dir);
    ck_assert_str_eq(verdict(r, "no_lost_jobs"), "PASS");
    ck_assert_str_eq(verdict(r, "acked_durable"), "PASS");
    ck_assert_str_eq(verdict(r, "recovery"), "PASS");
    ck_assert_int_eq(opportunities(r, "no_lost_jobs"), 300);
    ck_assert_int_ge(opportunities(r, "acked_durable"), 300);
    json_decref(r);
    /* the queue really was empty: one job-less snapshot event, no rows */
    snprintf(cmd, sizeof cmd,
             "test \"$(grep -c '\"type\":\"snapshot\"' %s/ledger.jsonl)\" = 1 && "
             "! grep '\"type\":\"snapshot\"' %s/ledger.jsonl | grep -q '\"job\"'",
             dir, dir);
    ck_assert_msg(run(cmd, NULL) == 0, "expected one job-less snapshot event in %s", dir);
}
END_TEST

/* Decision 1103: correct protocols built differently from skip_locked.sql
 * pass the gate's scripts and latency scenario with every judged checker
 * given its opportunity: a reaper of two statements that locks the row it
 * read (held at reap.1, the owner's complete / renew waits and is refused,
 * the job is claimed again and finished) and a claim of two statements
 * under 100-180 ms of latency each way. */
START_TEST(test_e2e_correct_variants_pass_scripts_and_latency)
{
    static const struct {
        const char *scenario, *protocol;
    } runs[] = {
        {"scripts/c09_rescuer", "reap_locks_row"},
        {"scripts/reap_renew_race", "reap_locks_row"},
        {"network_latency_lease", "claim_two_statements"},
    };
    for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
        char cmd[2048], dir[512];
        char *err = NULL;
        snprintf(dir, sizeof dir, "%s/variant-%zu", outdir, k);
        snprintf(cmd, sizeof cmd,
                 "./qchaos run scenarios/%s.ini --protocol tests/protocols/%s.sql --dsn '%s' "
                 "--seed 1 --out %s --no-progress",
                 runs[k].scenario, runs[k].protocol, dsn, dir);
        int code = run(cmd, &err);
        ck_assert_msg(code == 0, "%s on %s: exit %d: %s", runs[k].protocol, runs[k].scenario,
                      code, err);
        free(err);
        /* exit 0 means every judged checker passed with an opportunity; the
         * script really held the reaper between its read and its write */
        if (k < 2) {
            snprintf(cmd, sizeof cmd,
                     "grep -q '\"point\":\"reap.1\"' %s/ledger.jsonl && "
                     "! grep -q 'schedule abandoned' %s/ledger.jsonl",
                     dir, dir);
            ck_assert_msg(run(cmd, NULL) == 0, "%s: no reap.1 point, or the script was abandoned",
                          dir);
        }
    }
}
END_TEST

/* Issue 18: a scenario value the protocol never reads is a warning naming
 * file:line and a ledger note; a missing column a judged rule needs is a
 * note; the header's "columns" says what each step returns. */
START_TEST(test_e2e_unused_value_and_missing_column_named)
{
    char cmd[2048], dir[512];
    char *err = NULL;
    snprintf(dir, sizeof dir, "%s/blind", outdir);
    snprintf(cmd, sizeof cmd,
             "./qchaos run scenarios/default.ini --protocol tests/protocols/blind_spots.sql "
             "--dsn '%s' --jobs 100 --workers 4 --seed 1 --out %s --no-progress",
             dsn, dir);
    int code = run(cmd, &err);
    ck_assert_msg(code == 0, "exit %d: %s", code, err);
    ck_assert_msg(strstr(err, "qchaos: warning: scenarios/default.ini:20: max_attempts = 3 is set "
                              "but tests/protocols/blind_spots.sql never reads :max_attempts "
                              "(its enqueue ignores it)\n") != NULL,
                  "%s", err);
    ck_assert_msg(strstr(err, "qchaos: note: tests/protocols/blind_spots.sql: reap returns no "
                              "now_ms: no_early_reap ") != NULL,
                  "%s", err);
    free(err);
    snprintf(cmd, sizeof cmd,
             "grep -q '\"note\":\"unused scenario value\",\"key\":\"max_attempts\",.*"
             "\"parameter\":\"max_attempts\"' %s/ledger.jsonl",
             dir);
    ck_assert_int_eq(run(cmd, NULL), 0);
    snprintf(cmd, sizeof cmd,
             "head -n1 %s/ledger.jsonl | grep -q '\"reap\":\\[\"job_id\",\"token\",\"state\"\\]'",
             dir);
    ck_assert_int_eq(run(cmd, NULL), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("e2e");
    TCase *in = tcase_create("bad_input");
    tcase_set_timeout(in, 60);
    tcase_add_test(in, test_e2e_bad_scenario_exits_2_with_file_line);
    tcase_add_test(in, test_e2e_protocol_missing_statement_exits_2_before_connecting);
    tcase_add_test(in, test_e2e_unreachable_database_exits_3_without_password);
    suite_add_tcase(s, in);
    TCase *eph = tcase_create("ephemeral");
    tcase_set_timeout(eph, 180);
    tcase_add_test(eph, test_e2e_ephemeral_postgres_when_no_dsn);
    suite_add_tcase(s, eph);
    if (dsn) {
        TCase *live = tcase_create("postgres");
        tcase_set_timeout(live, 900);
        tcase_add_test(live, test_e2e_default_scenario_passes_and_audit_agrees);
        tcase_add_test(live, test_e2e_select_then_update_mutant_fails_with_jobs_named);
        tcase_add_test(live, test_e2e_password_never_written);
        tcase_add_test(live, test_e2e_worker_dsn_failure_names_worker_dsn);
        suite_add_tcase(s, live);
        TCase *fence = tcase_create("worker_params");
        tcase_set_timeout(fence, 300);
        tcase_add_test(fence, test_e2e_protocol_fencing_on_worker_passes);
        tcase_add_test(fence, test_e2e_unused_value_and_missing_column_named);
        tcase_add_test(fence, test_e2e_delete_on_complete_empty_snapshot_judged);
        tcase_add_test(fence, test_e2e_correct_variants_pass_scripts_and_latency);
        suite_add_tcase(s, fence);
    }
    return s;
}

int main(void)
{
    dsn = getenv("QC_TEST_DSN");
    if (!dsn || !*dsn) {
        fprintf(stderr, "check_e2e: QC_TEST_DSN unset: skipping the live PostgreSQL runs\n");
        dsn = NULL;
    }
    snprintf(outdir, sizeof outdir, "/tmp/qc_e2e.%d", (int)getpid());
    char cmd[300];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", outdir);
    if (qc_system(cmd) != 0)
        return EXIT_FAILURE;
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
