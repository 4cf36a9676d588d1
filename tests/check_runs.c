/*
 * check_runs.c - unit tests of exclusive_run (harness/check_runs.c, issue
 * 18): runs of one job (claim to effect) never overlap across actors.
 * Hand-written ledgers (' for ") that violate the rule, and ones with the
 * innocent explanations it must not call a violation.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/checkers.h"
#include "../harness/history.h"
#include "ledger_fixture.h"

#define HDR(hb) "{'type':'header','seed':7,'lease_ms':1000,'sink':'idempotent','heartbeat':" hb "}\n"

/* Worker 3 claims job 17 (lease 1000.25 .. 2000.25); its renew at t 1500
 * is refused (the lease ran out, the reaper took it, worker 9 claimed it at
 * 2500.5); worker 3 works on and delivers its effect at t 2600, after
 * worker 9's claim: two runs of job 17 at once, and worker 3 knew. */
#define KNEW_BODY                                                                                  \
    "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"                    \
    "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,'job':17,"        \
    "'token':'a','now':1000.25,'lease_until':2000.25}\n"                                           \
    "{'seq':3,'t':1499,'type':'invoke','op':'claim','worker':9,'inc':0,'req':2}\n"                 \
    "{'seq':4,'t':1500,'type':'ok','op':'claim','worker':9,'inc':0,'req':2,'rows':1,'job':17,"     \
    "'token':'b','now':2500.5,'lease_until':3500.5}\n"                                             \
    "{'seq':5,'t':1600,'type':'invoke','op':'renew','worker':3,'inc':0,'req':3,'job':17,"          \
    "'token':'a'}\n"                                                                               \
    "{'seq':6,'t':1601,'type':'ok','op':'renew','worker':3,'inc':0,'req':3,'job':17,"              \
    "'token':'a','rows':0}\n"                                                                      \
    "{'seq':7,'t':1700,'type':'effect','worker':9,'inc':0,'job':17,'token':'b','op_key':'17',"     \
    "'applied':true,'work_ms':100}\n"                                                              \
    "{'seq':8,'t':2600,'type':'effect','worker':3,'inc':0,'job':17,'token':'a','op_key':'17',"     \
    "'applied':false,'work_ms':2500}\n"

START_TEST(test_exclusive_run_worked_on_after_refused_renew_fails)
{
    qc_check c;

    run(qc_check_exclusive_run, HDR("true") KNEW_BODY, &c);
    ck_assert_str_eq(c.name, "exclusive_run");
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert_int_eq(c.opportunities, 1);
    ASSERT_VIOLATION(&c, 0, 17, 2, 4, 7, 8);
    ck_assert_msg(strstr(c.v[0].msg, "after its renew had been refused") != NULL, "%s",
                  c.v[0].msg);
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_run_starved_worker_excused_passes)
{
    qc_check c;

    /* The same without the refused renew: worker 3 renews while working
     * (heartbeat) but its thread was starved, its lease ran out and the
     * queue rightly gave the job to worker 9; worker 3 was never told. */
    run(qc_check_exclusive_run,
        HDR("true") "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"
                    "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,"
                    "'job':17,'token':'a','now':1000.25,'lease_until':2000.25}\n"
                    "{'seq':3,'t':1499,'type':'invoke','op':'claim','worker':9,'inc':0,'req':2}\n"
                    "{'seq':4,'t':1500,'type':'ok','op':'claim','worker':9,'inc':0,'req':2,"
                    "'rows':1,'job':17,'token':'b','now':2500.5,'lease_until':3500.5}\n"
                    "{'seq':5,'t':1700,'type':'effect','worker':9,'inc':0,'job':17,'token':'b',"
                    "'op_key':'17','applied':true,'work_ms':100}\n"
                    "{'seq':6,'t':2600,'type':'effect','worker':3,'inc':0,'job':17,'token':'a',"
                    "'op_key':'17','applied':false,'work_ms':2500}\n"
                    "{'seq':7,'t':2601,'type':'invoke','op':'renew','worker':3,'inc':0,'req':3,"
                    "'job':17,'token':'a'}\n",
        &c);
    ck_assert_msg(c.nviolations == 0, "%s", c.nstored > 0 ? c.v[0].msg : c.summary);
    ck_assert_int_eq(c.verdict, QC_PASS);
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_run_job_handed_out_within_live_lease_fails)
{
    qc_check c;

    /* Worker 9's claim ran at server 1500.5, inside worker 3's lease: no
     * excuse, whatever worker 3 planned. */
    run(qc_check_exclusive_run,
        HDR("true") "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"
                    "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,"
                    "'job':17,'token':'a','now':1000.25,'lease_until':2000.25}\n"
                    "{'seq':3,'t':499,'type':'invoke','op':'claim','worker':9,'inc':0,'req':2}\n"
                    "{'seq':4,'t':500,'type':'ok','op':'claim','worker':9,'inc':0,'req':2,"
                    "'rows':1,'job':17,'token':'b','now':1500.5,'lease_until':2500.5}\n"
                    "{'seq':5,'t':600,'type':'effect','worker':9,'inc':0,'job':17,'token':'b',"
                    "'op_key':'17','applied':true,'work_ms':100}\n"
                    "{'seq':6,'t':700,'type':'effect','worker':3,'inc':0,'job':17,'token':'a',"
                    "'op_key':'17','applied':false,'work_ms':500}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_run_sequential_runs_and_group_overlap)
{
    qc_check c;

    /* Job 17: worker 3's run ended (effect seq 3) before worker 9 claimed
     * it (seq 5): no overlap.  Jobs 20 and 21 of group g1: worker 4 claimed
     * 21 (seq 9) while worker 2 was running 20 (effect at seq 10). */
    run(qc_check_exclusive_run,
        HDR("true") "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"
                    "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,"
                    "'job':17,'token':'a','now':1000.25,'lease_until':2000.25}\n"
                    "{'seq':3,'t':5,'type':'effect','worker':3,'inc':0,'job':17,'token':'a',"
                    "'applied':true,'work_ms':3}\n"
                    "{'seq':4,'t':9,'type':'invoke','op':'claim','worker':9,'inc':0,'req':2}\n"
                    "{'seq':5,'t':10,'type':'ok','op':'claim','worker':9,'inc':0,'req':2,'rows':1,"
                    "'job':17,'token':'b','now':1010.5,'lease_until':2010.5}\n"
                    "{'seq':6,'t':12,'type':'effect','worker':9,'inc':0,'job':17,'token':'b',"
                    "'applied':false,'work_ms':1}\n"
                    "{'seq':7,'t':20,'type':'ok','op':'claim','worker':2,'inc':0,'req':3,'rows':1,"
                    "'job':20,'token':'c','now':1020.5,'lease_until':2020.5,'group':'g1'}\n"
                    "{'seq':8,'t':21,'type':'invoke','op':'claim','worker':4,'inc':0,'req':4}\n"
                    "{'seq':9,'t':22,'type':'ok','op':'claim','worker':4,'inc':0,'req':4,'rows':1,"
                    "'job':21,'token':'d','now':1022.5,'lease_until':2022.5,'group':'g1'}\n"
                    "{'seq':10,'t':30,'type':'effect','worker':2,'inc':0,'job':20,'token':'c',"
                    "'applied':true,'work_ms':10}\n"
                    "{'seq':11,'t':31,'type':'effect','worker':4,'inc':0,'job':21,'token':'d',"
                    "'applied':true,'work_ms':10}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 21, 7, 9, 10, 11);
    ck_assert_msg(strstr(c.v[0].msg, "group 'g1'") != NULL, "%s", c.v[0].msg);
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_run_single_runs_inconclusive)
{
    qc_check c;

    run(qc_check_exclusive_run,
        HDR("true") "{'seq':1,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,"
                    "'job':17,'token':'a','now':1000.25,'lease_until':2000.25}\n"
                    "{'seq':2,'t':5,'type':'effect','worker':3,'inc':0,'job':17,'token':'a',"
                    "'applied':true,'work_ms':3}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("runs");
    TCase *tc = tcase_create("exclusive_run");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_exclusive_run_worked_on_after_refused_renew_fails);
    tcase_add_test(tc, test_exclusive_run_starved_worker_excused_passes);
    tcase_add_test(tc, test_exclusive_run_job_handed_out_within_live_lease_fails);
    tcase_add_test(tc, test_exclusive_run_sequential_runs_and_group_overlap);
    tcase_add_test(tc, test_exclusive_run_single_runs_inconclusive);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
