/*
 * check_summary.c - a run's figures (figures.c: the work interval and
 * jobs/s over it, per-interval samples, latency, faults per kind, rounding)
 * from hand-written ledgers, and `qchaos summary` / `qchaos diff`
 * (summary.c) on hand-written results.json files: runs that pass and one
 * that fails, a judged checker that got worse and one that did not, and
 * the inputs they must refuse.  No database.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../harness/figures.h"
#include "../harness/summary.h"
#include "ledger_fixture.h"

/* Two jobs: job 1 claimed at 500 and completed at 610 (10 ms); job 2
 * claimed at 701, its worker killed (fault), an empty claim at 1601, job 2
 * completed by worker 0 at 1730 (30 ms), the killed owner's stale complete
 * failed at 1805 (5 ms), a monitor sample at 1900. */
static const char two_jobs[] =
    "{'type':'header','seed':1,'lease_ms':5000,'workers':2,'jobs':2}\n"
    "{'seq':1,'t':100,'type':'ok','op':'enqueue','worker':-1,'job':1}\n"
    "{'seq':2,'t':100,'type':'ok','op':'enqueue','worker':-1,'job':2}\n"
    "{'seq':3,'t':500,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"
    "{'seq':4,'t':502,'type':'ok','op':'claim','worker':0,'inc':0,'req':1,'rows':1,'job':1,"
    "'token':'a'}\n"
    "{'seq':5,'t':600,'type':'invoke','op':'complete','worker':0,'inc':0,'req':2,'job':1,"
    "'token':'a'}\n"
    "{'seq':6,'t':610,'type':'ok','op':'complete','worker':0,'inc':0,'req':2,'job':1,"
    "'token':'a','rows':1}\n"
    "{'seq':7,'t':700,'type':'invoke','op':'claim','worker':1,'inc':0,'req':3}\n"
    "{'seq':8,'t':701,'type':'ok','op':'claim','worker':1,'inc':0,'req':3,'rows':1,'job':2,"
    "'token':'b'}\n"
    "{'seq':9,'t':705,'type':'fault','fault':'kill_after_claim','job':2,'worker':1,'inc':0}\n"
    "{'seq':10,'t':1600,'type':'invoke','op':'claim','worker':0,'inc':0,'req':4}\n"
    "{'seq':11,'t':1601,'type':'ok','op':'claim','worker':0,'inc':0,'req':4,'rows':0}\n"
    "{'seq':12,'t':1700,'type':'invoke','op':'complete','worker':0,'inc':0,'req':5,'job':2,"
    "'token':'c'}\n"
    "{'seq':13,'t':1730,'type':'ok','op':'complete','worker':0,'inc':0,'req':5,'job':2,"
    "'token':'c','rows':1}\n"
    "{'seq':14,'t':1800,'type':'invoke','op':'complete','worker':1,'inc':1,'req':6,'job':2,"
    "'token':'b'}\n"
    "{'seq':15,'t':1805,'type':'fail','op':'complete','worker':1,'inc':1,'req':6,'job':2,"
    "'token':'b','error':'0 rows'}\n"
    "{'seq':16,'t':1900,'type':'monitor','ready':0,'inflight':0,'expired':0,'dead':0}\n"
    "{'seq':17,'t':1950,'type':'end','drained':true}\n";

START_TEST(test_work_first_claim_to_last_complete)
{
    qc_history h;
    memset(&h, 0, sizeof h);
    load(&h, two_jobs);
    qc_work w;
    qc_figures_work(&h, &w);
    ck_assert_double_eq(w.from_ms, 500);
    ck_assert_double_eq(w.to_ms, 1730);
    ck_assert_int_eq(w.completes, 2);
    ck_assert_double_eq_tol(w.jobs_per_s, 1.6, 1e-9); /* 2 / 1.23 s = 1.626 -> 1.6 */
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_work_no_complete_unknown)
{
    qc_history h;
    memset(&h, 0, sizeof h);
    load(&h, "{'type':'header','seed':1}\n"
             "{'seq':1,'t':500,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"
             "{'seq':2,'t':501,'type':'ok','op':'claim','worker':0,'inc':0,'req':1,'rows':0}\n");
    qc_work w;
    qc_figures_work(&h, &w);
    ck_assert_double_eq(w.from_ms, -1); /* unknown, not a zero-length interval */
    ck_assert_double_eq(w.to_ms, -1);
    ck_assert_double_eq(w.jobs_per_s, 0);
    json_t *f = qc_figures_json(&h, NULL, 0, 1000);
    ck_assert(json_is_null(json_object_get(json_object_get(f, "work"), "s")));
    ck_assert(json_is_null(json_object_get(json_object_get(f, "recovery_ms"), "p50")));
    json_decref(f);
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_samples_per_interval_from_first_claim)
{
    qc_history h;
    memset(&h, 0, sizeof h);
    load(&h, two_jobs);
    qc_sample *s = NULL;
    size_t n = 0;
    qc_err err = {0};
    ck_assert_int_eq(qc_figures_samples(&h, 1000, &s, &n, &err), 0);
    ck_assert_uint_eq(n, 2); /* [500, 1500) and [1500, 2500) */
    ck_assert_double_eq(s[0].t_s, 0.5);
    ck_assert_int_eq(s[0].claims, 2);
    ck_assert_int_eq(s[0].empty_claims, 0);
    ck_assert_int_eq(s[0].completes, 1);
    ck_assert_int_eq(s[0].faults, 1);
    ck_assert_int_eq(s[0].fail_info, 0);
    ck_assert_double_eq(s[0].complete_ms_p50, 10);
    ck_assert_int_eq(s[0].ready, -1); /* no monitor sample in it */
    ck_assert_double_eq(s[1].t_s, 1.5);
    ck_assert_int_eq(s[1].claims, 0);
    ck_assert_int_eq(s[1].empty_claims, 1);
    ck_assert_int_eq(s[1].completes, 1);
    ck_assert_int_eq(s[1].fail_info, 1);
    ck_assert_double_eq(s[1].jobs_per_s, 1);
    ck_assert_double_eq(s[1].complete_ms_p50, 5); /* nearest rank of {5, 30} */
    ck_assert_double_eq(s[1].complete_ms_p95, 30);
    ck_assert_double_eq(s[1].complete_ms_max, 30);
    ck_assert_int_eq(s[1].ready, 0);

    char dir[] = "/tmp/qc-check-summary.XXXXXX", path[256], line[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/samples.csv", dir);
    ck_assert_int_eq(qc_figures_write_csv(path, s, n, 1000, &err), 0);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f)); /* comment */
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "t_s,claims,empty_claims,completes,jobs_per_s,fail_info,faults,"
                           "complete_ms_p50,complete_ms_p95,complete_ms_max,ready,inflight,"
                           "expired,dead\n");
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "0.5,2,0,1,1,0,1,10,10,10,-1,-1,-1,-1\n");
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "1.5,0,1,1,1,1,0,5,30,30,0,0,0,0\n");
    ck_assert_ptr_null(fgets(line, sizeof line, f));
    fclose(f);
    unlink(path);
    rmdir(dir);
    free(s);
    ck_assert_int_eq(qc_figures_samples(&h, 0, &s, &n, &err), QC_EINVAL);
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_figures_faults_latency_rounded)
{
    qc_history h;
    memset(&h, 0, sizeof h);
    load(&h, two_jobs);
    json_t *f = qc_figures_json(&h, NULL, 0, 1000);
    ck_assert_ptr_nonnull(f);
    json_t *faults = json_object_get(f, "faults");
    ck_assert_int_eq(json_integer_value(json_object_get(faults, "kill_after_claim")), 1);
    ck_assert_uint_eq(json_object_size(faults), 1);
    json_t *c = json_object_get(json_object_get(f, "latency_ms"), "complete");
    ck_assert_int_eq(json_integer_value(json_object_get(c, "n")), 3);
    ck_assert_double_eq(json_real_value(json_object_get(c, "p50")), 10);
    ck_assert_double_eq(json_real_value(json_object_get(c, "max")), 30);
    json_t *w = json_object_get(f, "work");
    ck_assert_double_eq_tol(json_real_value(json_object_get(w, "s")), 1.23, 1e-9);
    json_decref(f);
    qc_history_fini(&h);
    /* what results.json prints: 0.03, not 0.0303559999999998 */
    json_t *x = json_pack("{s:f}", "v", qc_round(0.0303559999999998, 0.01));
    char *txt = json_dumps(x, JSON_REAL_PRECISION(15));
    ck_assert_str_eq(txt, "{\"v\": 0.03}");
    free(txt);
    json_decref(x);
    ck_assert_double_eq(qc_round(4.6299999, 0.001), 4.63);
}
END_TEST

/* ---- summary and diff over hand-written results.json -------------------- */

static char root[64];

/* Writes text (' for ") as DIR/results.json, DIR under root. */
static void put_results(const char *dir, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", root, dir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/%s/results.json", root, dir);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    for (const char *c = text; *c; c++)
        fputc(*c == '\'' ? '"' : *c, f);
    fclose(f);
}

#define RESULTS(seed, verdict, code, jps, ec_verdict, ec_n, ec_viol, fv, rec)                      \
    "{'schema':'qchaos-results/1','seed':" #seed ",'verdict':'" verdict "','exit_code':" #code      \
    ",'scenario':'s','protocol':'p.sql','metrics':{'jobs_per_s':" #jps ",'work_s':2.5},"          \
    "'figures':{'recovery_ms':{'p50':100,'p95':200,'max':300,'values':" rec "},"                 \
    "'latency_ms':{'complete':{'p50':1.5,'p95':4,'p99':8}}},"                                     \
    "'checkers':[{'name':'exclusive_claim','judged':true,'verdict':'" ec_verdict "',"              \
    "'opportunities':10,'violations_total':" #ec_n ",'violations':" ec_viol ","                   \
    "'first_violation_s':" fv "},"                                                                \
    "{'name':'recovery','judged':false,'verdict':'INCONCLUSIVE','opportunities':0,"                \
    "'violations_total':0,'violations':[],'first_violation_s':null}]}"

static void setup_root(void)
{
    snprintf(root, sizeof root, "/tmp/qc-check-summary.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
    char p[128];
    snprintf(p, sizeof p, "%s/many", root);
    mkdir(p, 0755);
    put_results("many/seed-1", RESULTS(1, "PASS", 0, 100.5, "PASS", 0, "[]", "null", "[100,300]"));
    put_results("many/seed-2",
                RESULTS(2, "FAIL", 1, 80, "FAIL", 2,
                        "[{'job':7,'seq':[3,9],'explanation':'job 7 claimed twice'},"
                        "{'job':8,'seq':[4,10],'explanation':'job 8 claimed twice'}]",
                        "1.25", "[200]"));
    put_results("pass2", RESULTS(2, "PASS", 0, 90, "PASS", 0, "[]", "null", "[]"));
    put_results("fail3",
                RESULTS(2, "FAIL", 1, 80, "FAIL", 3,
                        "[{'job':7,'seq':[3,9],'explanation':'job 7 claimed twice'},"
                        "{'job':8,'seq':[4,10],'explanation':'job 8 claimed twice'},"
                        "{'job':9,'seq':[5,11],'explanation':'job 9 claimed twice'}]",
                        "1.5", "[]"));
    put_results("inc", RESULTS(5, "INCONCLUSIVE", 4, 50, "INCONCLUSIVE", 0, "[]", "null", "[]"));
    put_results("bad", "{'schema':'qchaos-results/1',\n'checkers': [,]}");
    put_results("other", "{'hello':1}");
    snprintf(p, sizeof p, "%s/empty", root);
    mkdir(p, 0755);
}

static void teardown_root(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    ck_assert_int_eq(system(cmd), 0);
}

static json_t *agg_of(const char *a, const char *b)
{
    char pa[128], pb[128];
    snprintf(pa, sizeof pa, "%s/%s", root, a);
    snprintf(pb, sizeof pb, "%s/%s", root, b ? b : "");
    const char *paths[2] = {pa, pb};
    qc_err err = {0};
    json_t *runs = qc_summary_collect(paths, b ? 2 : 1, &err);
    ck_assert_msg(runs != NULL, "collect: %s", err.msg);
    json_t *agg = qc_summary_aggregate(runs);
    json_decref(runs);
    return agg;
}

START_TEST(test_summary_folder_of_runs_one_failing)
{
    json_t *agg = agg_of("many", NULL);
    ck_assert_int_eq(json_integer_value(json_object_get(agg, "runs")), 2);
    json_t *v = json_object_get(agg, "verdicts");
    ck_assert_int_eq(json_integer_value(json_object_get(v, "PASS")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(v, "FAIL")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(agg, "exit_code")), 1);
    json_t *ec = json_object_get(json_object_get(agg, "checkers"), "exclusive_claim");
    ck_assert_int_eq(json_integer_value(json_object_get(ec, "PASS")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(ec, "FAIL")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(ec, "violations_total")), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(ec, "judged_runs")), 2);
    json_t *fs = json_object_get(ec, "failing_seeds");
    ck_assert_uint_eq(json_array_size(fs), 1);
    ck_assert_int_eq(json_integer_value(json_array_get(fs, 0)), 2);
    json_t *fv = json_object_get(ec, "first_violation_s");
    ck_assert_int_eq(json_integer_value(json_object_get(fv, "n")), 1);
    ck_assert_double_eq(json_real_value(json_object_get(fv, "max")), 1.25);
    /* recovery pooled over both runs: {100, 200, 300} */
    json_t *r = json_object_get(agg, "recovery_ms");
    ck_assert_int_eq(json_integer_value(json_object_get(r, "measured")), 3);
    ck_assert_double_eq(json_real_value(json_object_get(r, "p50")), 200);
    ck_assert_double_eq(json_real_value(json_object_get(r, "max")), 300);
    json_t *j = json_object_get(agg, "jobs_per_s");
    ck_assert_double_eq(json_real_value(json_object_get(j, "min")), 80);
    ck_assert_double_eq(json_real_value(json_object_get(j, "max")), 100.5);
    /* the table is in folder-name order */
    json_t *t = json_object_get(agg, "table");
    ck_assert_uint_eq(json_array_size(t), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(t, 0), "seed")), 1);
    json_t *failing = json_object_get(json_array_get(t, 1), "failing");
    ck_assert_str_eq(json_string_value(json_array_get(failing, 0)), "exclusive_claim");
    json_decref(agg);
}
END_TEST

START_TEST(test_summary_all_pass_zero_inconclusive_four)
{
    json_t *agg = agg_of("many/seed-1", "pass2");
    ck_assert_int_eq(json_integer_value(json_object_get(agg, "exit_code")), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(agg, "runs")), 2);
    /* a run without recovery values adds none; no zero is invented */
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(agg, "recovery_ms"), "measured")), 2);
    json_decref(agg);
    agg = agg_of("pass2", "inc");
    ck_assert_int_eq(json_integer_value(json_object_get(agg, "exit_code")), 4);
    json_decref(agg);
}
END_TEST

START_TEST(test_summary_bad_input_named)
{
    char p[128];
    qc_err err = {0};
    const char *paths[1] = {p};
    snprintf(p, sizeof p, "%s/empty", root);
    ck_assert_ptr_null(qc_summary_collect(paths, 1, &err));
    ck_assert_int_eq(err.code, QC_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "holds no results.json"));
    memset(&err, 0, sizeof err);
    snprintf(p, sizeof p, "%s/bad", root);
    ck_assert_ptr_null(qc_summary_collect(paths, 1, &err));
    ck_assert_msg(strstr(err.msg, "bad/results.json:2:") != NULL, "no file:line in '%s'", err.msg);
    memset(&err, 0, sizeof err);
    snprintf(p, sizeof p, "%s/other", root);
    ck_assert_ptr_null(qc_summary_collect(paths, 1, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "not a qchaos results file"));
    FILE *devnull = fopen("/dev/null", "w");
    ck_assert_int_eq(qc_summary_run(paths, 1, NULL, devnull, &err), 2);
    fclose(devnull);
}
END_TEST

/* diff of root/a against root/b: the exit code, the JSON in *out. */
static int diff_of(const char *a, const char *b, json_t **out)
{
    char pa[128], pb[128], pj[128];
    snprintf(pa, sizeof pa, "%s/%s", root, a);
    snprintf(pb, sizeof pb, "%s/%s", root, b);
    snprintf(pj, sizeof pj, "%s/diff.json", root);
    qc_err err = {0};
    FILE *devnull = fopen("/dev/null", "w");
    int code = qc_diff_run(pa, pb, pj, devnull, &err);
    fclose(devnull);
    *out = code == 2 ? NULL : json_load_file(pj, 0, NULL);
    return code;
}

START_TEST(test_diff_pass_to_fail_judged_worse)
{
    json_t *d;
    ck_assert_int_eq(diff_of("pass2", "fail3", &d), 1);
    ck_assert_ptr_nonnull(d);
    json_t *w = json_object_get(d, "worse");
    ck_assert_uint_eq(json_array_size(w), 1);
    ck_assert_str_eq(json_string_value(json_array_get(w, 0)), "exclusive_claim");
    ck_assert_uint_eq(json_array_size(json_object_get(d, "new_violations")), 3);
    json_t *jps = json_object_get(json_object_get(d, "figures"), "jobs/s over the work");
    ck_assert_double_eq(json_real_value(json_object_get(jps, "a")), 90);
    ck_assert_double_eq(json_real_value(json_object_get(jps, "b")), 80);
    json_decref(d);
}
END_TEST

START_TEST(test_diff_fail_with_new_job_worse_same_not)
{
    json_t *d;
    /* both FAIL, B has job 9 that A has not: worse */
    ck_assert_int_eq(diff_of("many/seed-2", "fail3", &d), 1);
    json_t *nv = json_object_get(d, "new_violations");
    ck_assert_uint_eq(json_array_size(nv), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(nv, 0), "key")), "job 9");
    json_decref(d);
    /* the other way round: B lost a violation, gained none: not worse */
    ck_assert_int_eq(diff_of("fail3", "many/seed-2", &d), 0);
    ck_assert_uint_eq(json_array_size(json_object_get(d, "gone_violations")), 1);
    ck_assert_uint_eq(json_array_size(json_object_get(d, "worse")), 0);
    json_decref(d);
    /* FAIL -> PASS, and a run against itself: not worse */
    ck_assert_int_eq(diff_of("fail3", "pass2", &d), 0);
    json_decref(d);
    ck_assert_int_eq(diff_of("pass2", "pass2", &d), 0);
    json_decref(d);
    /* PASS -> INCONCLUSIVE on a judged checker: worse */
    ck_assert_int_eq(diff_of("pass2", "inc", &d), 1);
    json_decref(d);
}
END_TEST

START_TEST(test_diff_bad_input)
{
    json_t *d;
    ck_assert_int_eq(diff_of("pass2", "empty", &d), 2);
    ck_assert_int_eq(diff_of("bad", "pass2", &d), 2);
}
END_TEST

static Suite *summary_suite(void)
{
    Suite *s = suite_create("summary");
    TCase *tc = tcase_create("figures");
    tcase_add_test(tc, test_work_first_claim_to_last_complete);
    tcase_add_test(tc, test_work_no_complete_unknown);
    tcase_add_test(tc, test_samples_per_interval_from_first_claim);
    tcase_add_test(tc, test_figures_faults_latency_rounded);
    tcase_set_timeout(tc, 10);
    suite_add_tcase(s, tc);
    tc = tcase_create("summary");
    tcase_add_checked_fixture(tc, setup_root, teardown_root);
    tcase_add_test(tc, test_summary_folder_of_runs_one_failing);
    tcase_add_test(tc, test_summary_all_pass_zero_inconclusive_four);
    tcase_add_test(tc, test_summary_bad_input_named);
    tcase_set_timeout(tc, 10);
    suite_add_tcase(s, tc);
    tc = tcase_create("diff");
    tcase_add_checked_fixture(tc, setup_root, teardown_root);
    tcase_add_test(tc, test_diff_pass_to_fail_judged_worse);
    tcase_add_test(tc, test_diff_fail_with_new_job_worse_same_not);
    tcase_add_test(tc, test_diff_bad_input);
    tcase_set_timeout(tc, 10);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(summary_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
