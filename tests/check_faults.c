/*
 * check_faults.c - unit tests of the fault checkers (harness/checkers.h:
 * stale_token_rejected, no_false_success, effects_once, recovery,
 * bounded_failure, no_early_reap, batch_bound) and of the ledger fields
 * they read (header batch / poison_mode / checkers, "counted").
 *
 * Every checker is fed hand-written ledgers: one that violates its rule,
 * ones that do not (the tricky cases that must not raise a false alarm),
 * and one without opportunities.  The tests assert the verdict, the counts,
 * and the job ids and ledger seqs of the evidence.
 *
 * Ledgers are written with ' for " so that they read as JSON Lines; load()
 * turns them back into JSON.  Server times carry a fraction of a ms where a
 * rule compares them: a ledger whose times are all whole seconds shows a
 * clock of one-second resolution, and the rules then allow that margin
 * (qc__clock_resolution).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/checkers.h"
#include "../harness/history.h"
#include "ledger_fixture.h"


#define ASSERT_MSG_HAS(c, i, text)                                                                 \
    ck_assert_msg(strstr((c)->v[(i)].msg, (text)) != NULL, "message \"%s\" lacks \"%s\"",          \
                  (c)->v[(i)].msg, (text))

/* Bound of recovery: 5000 + 500 + 2000 = 7500 ms. */
#define HEADER                                                                                     \
    "{'type':'header','seed':7,'lease_ms':5000,'max_attempts':3,'reaper_interval_ms':500,"         \
    "'recovery_slack_ms':2000,'batch':2}\n"

/* Worker 3 claims job 17 (token a, lease server 1000.25..6000.25). */
#define CLAIM_17_A                                                                                 \
    "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"                    \
    "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,'job':17,"        \
    "'token':'a','now':1000.25,'lease_until':6000.25}\n"

/* ---- stale_token_rejected --------------------------------------------- */

/* Worker 3 stalls past its lease; worker 9 claims the job again (token b,
 * seq 5); worker 3 then completes with its old token a (seqs 6, 7). */
#define STALL_PREFIX                                                                               \
    HEADER                                                                                         \
    CLAIM_17_A                                                                                     \
    "{'seq':3,'t':10,'type':'fault','fault':'stall_beyond_lease','job':17,'token':'a',"            \
    "'worker':3,'inc':0,'until_t':12510}\n"                                                        \
    "{'seq':4,'t':7000,'type':'invoke','op':'claim','worker':9,'inc':0,'req':2}\n"                 \
    "{'seq':5,'t':7001,'type':'ok','op':'claim','worker':9,'inc':0,'req':2,'rows':1,'job':17,"     \
    "'token':'b','now':8000,'lease_until':13000}\n"                                                \
    "{'seq':6,'t':12600,'type':'invoke','op':'complete','worker':3,'inc':0,'req':3,'job':17,"      \
    "'token':'a'}\n"

START_TEST(test_stale_token_rejected_old_token_accepted_after_reclaim_fails)
{
    qc_check c;

    run(qc_check_stale_token_rejected,
        STALL_PREFIX "{'seq':7,'t':12601,'type':'ok','op':'complete','worker':3,'inc':0,'req':3,"
                     "'job':17,'token':'a','rows':1,'now':13600}\n",
        &c);
    ck_assert_str_eq(c.name, "stale_token_rejected");
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 2, 4, 5, 6, 7);
    ck_assert_str_eq(c.v[0].msg, "job 17: complete by worker 3 with token a (from claim seq 2), "
                                 "superseded at seq 5 (claim by worker 9, sent seq 4), was accepted "
                                 "with rows 1 (invoked seq 6, answered seq 7)");
    free(c.v);
}
END_TEST

START_TEST(test_stale_token_rejected_stall_late_complete_refused_passes)
{
    qc_check c;

    run(qc_check_stale_token_rejected,
        STALL_PREFIX "{'seq':7,'t':12601,'type':'ok','op':'complete','worker':3,'inc':0,'req':3,"
                     "'job':17,'token':'a','rows':0,'now':13600}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_stale_token_rejected_rotated_token_accepted_fails)
{
    qc_check c;

    /* The renew at seq 4 rotated a into a2; a fail with a is then stale. */
    run(qc_check_stale_token_rejected,
        HEADER CLAIM_17_A
        "{'seq':3,'t':100,'type':'invoke','op':'renew','worker':3,'req':2,'job':17,'token':'a'}\n"
        "{'seq':4,'t':101,'type':'ok','op':'renew','worker':3,'req':2,'job':17,'token':'a',"
        "'rows':1,'new_token':'a2','lease_until':7000,'now':2000}\n"
        "{'seq':5,'t':200,'type':'invoke','op':'fail','worker':3,'req':3,'job':17,'token':'a'}\n"
        "{'seq':6,'t':201,'type':'ok','op':'fail','worker':3,'req':3,'job':17,'token':'a',"
        "'rows':1}\n"
        /* the new token is not stale */
        "{'seq':7,'t':300,'type':'invoke','op':'complete','worker':3,'req':4,'job':17,"
        "'token':'a2'}\n"
        "{'seq':8,'t':301,'type':'ok','op':'complete','worker':3,'req':4,'job':17,'token':'a2',"
        "'rows':1}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 2, 4, 5, 6);
    ASSERT_MSG_HAS(&c, 0, "fail by worker 3 with token a");
    ASSERT_MSG_HAS(&c, 0, "superseded at seq 4 (renew that rotated it)");
    free(c.v);
}
END_TEST

START_TEST(test_stale_token_rejected_sent_before_superseding_claim_not_judged)
{
    qc_check c;

    /* The complete was sent (seq 3) before the new claim was acknowledged
     * (seq 5): it may have run first, so it proves nothing. */
    run(qc_check_stale_token_rejected,
        HEADER CLAIM_17_A
        "{'seq':3,'t':6500,'type':'invoke','op':'complete','worker':3,'req':2,'job':17,"
        "'token':'a'}\n"
        "{'seq':4,'t':6500,'type':'invoke','op':'claim','worker':9,'req':3}\n"
        "{'seq':5,'t':6501,'type':'ok','op':'claim','worker':9,'req':3,'rows':1,'job':17,"
        "'token':'b','now':7000,'lease_until':12000}\n"
        "{'seq':6,'t':6502,'type':'ok','op':'complete','worker':3,'req':2,'job':17,'token':'a',"
        "'rows':1}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_stale_token_rejected_token_given_out_again_passes)
{
    qc_check c;

    /* Token a is superseded by worker 9's claim (b), then worker 4's claim
     * hands out a again: worker 4's complete with a is its own, not stale;
     * worker 9's late complete with b is stale (worker 4 claimed since)
     * and was refused. */
    run(qc_check_stale_token_rejected,
        HEADER CLAIM_17_A
        "{'seq':3,'t':6990,'type':'invoke','op':'claim','worker':9,'req':2}\n"
        "{'seq':4,'t':7000,'type':'ok','op':'claim','worker':9,'req':2,'rows':1,'job':17,"
        "'token':'b','now':8000,'lease_until':13000}\n"
        "{'seq':5,'t':13990,'type':'invoke','op':'claim','worker':4,'req':3}\n"
        "{'seq':6,'t':14000,'type':'ok','op':'claim','worker':4,'req':3,'rows':1,'job':17,"
        "'token':'a','now':15000,'lease_until':20000}\n"
        "{'seq':7,'t':14010,'type':'invoke','op':'complete','worker':4,'req':4,'job':17,"
        "'token':'a'}\n"
        "{'seq':8,'t':14011,'type':'ok','op':'complete','worker':4,'req':4,'job':17,"
        "'token':'a','rows':1}\n"
        "{'seq':9,'t':14020,'type':'invoke','op':'complete','worker':9,'req':5,'job':17,"
        "'token':'b'}\n"
        "{'seq':10,'t':14021,'type':'ok','op':'complete','worker':9,'req':5,'job':17,"
        "'token':'b','rows':0}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_stale_token_rejected_token_derived_from_job_accepted_fails)
{
    qc_check c;

    /* Issue 18: the protocol hands every claim of job 17 the same token a
     * (derived from the job).  Worker 9 claimed the job since worker 3 did
     * (sent seq 3, after worker 3's claim was answered at seq 2): worker
     * 3's complete is stale whatever its token says, and it was accepted. */
    run(qc_check_stale_token_rejected,
        HEADER CLAIM_17_A
        "{'seq':3,'t':7000,'type':'invoke','op':'claim','worker':9,'req':2}\n"
        "{'seq':4,'t':7001,'type':'ok','op':'claim','worker':9,'req':2,'rows':1,'job':17,"
        "'token':'a','now':8000,'lease_until':13000}\n"
        "{'seq':5,'t':14000,'type':'invoke','op':'complete','worker':3,'req':3,'job':17,"
        "'token':'a'}\n"
        "{'seq':6,'t':14000,'type':'invoke','op':'claim','worker':4,'req':4}\n"
        "{'seq':7,'t':14001,'type':'ok','op':'claim','worker':4,'req':4,'rows':1,'job':17,"
        "'token':'a','now':15000,'lease_until':20000}\n"
        "{'seq':8,'t':14002,'type':'ok','op':'complete','worker':3,'req':3,'job':17,"
        "'token':'a','rows':1}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 2, 3, 4, 5, 8);
    free(c.v);
}
END_TEST

START_TEST(test_stale_token_rejected_starved_superseding_claim_not_judged)
{
    qc_check c;

    /* Worker 9's claim was sent (seq 1) before worker 3's claim was
     * answered (seq 3): with a starved client it may have run first (its
     * lease expired, the job was recovered, then worker 3 claimed it), so
     * worker 3's complete proves nothing. */
    run(qc_check_stale_token_rejected,
        HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':9,'inc':0,'req':1}\n"
               "{'seq':2,'t':1,'type':'invoke','op':'claim','worker':3,'inc':0,'req':2}\n"
               "{'seq':3,'t':6000,'type':'ok','op':'claim','worker':3,'inc':0,'req':2,'rows':1,"
               "'job':17,'token':'a','now':7000,'lease_until':12000}\n"
               "{'seq':4,'t':6001,'type':'ok','op':'claim','worker':9,'inc':0,'req':1,'rows':1,"
               "'job':17,'token':'b','now':1000,'lease_until':6000}\n"
               "{'seq':5,'t':6010,'type':'invoke','op':'complete','worker':3,'inc':0,'req':3,"
               "'job':17,'token':'a'}\n"
               "{'seq':6,'t':6011,'type':'ok','op':'complete','worker':3,'inc':0,'req':3,"
               "'job':17,'token':'a','rows':1}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
}
END_TEST

/* Worker 3 completes job 17 (token a) and its answer says rows 1 (seq 4);
 * a heartbeat renew with token a is sent after that answer (seq 5). */
#define DONE_THEN_RENEW(header)                                                                    \
    header CLAIM_17_A                                                                              \
    "{'seq':3,'t':10,'type':'invoke','op':'complete','worker':3,'inc':0,'req':2,'job':17,"         \
    "'token':'a'}\n"                                                                               \
    "{'seq':4,'t':11,'type':'ok','op':'complete','worker':3,'inc':0,'req':2,'job':17,"             \
    "'token':'a','rows':1}\n"                                                                      \
    "{'seq':5,'t':12,'type':'invoke','op':'renew','worker':3,'inc':0,'req':3,'job':17,"            \
    "'token':'a'}\n"

START_TEST(test_stale_token_rejected_renew_after_acked_complete_accepted_fails)
{
    qc_check c;

    run(qc_check_stale_token_rejected,
        DONE_THEN_RENEW(HEADER) "{'seq':6,'t':13,'type':'ok','op':'renew','worker':3,'inc':0,"
                                "'req':3,'job':17,'token':'a','rows':1,'now':1012.5,"
                                "'lease_until':6012.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 2, 4, 5, 6);
    ck_assert_str_eq(c.v[0].msg, "job 17: renew by worker 3 with token a (from claim seq 2), "
                                 "superseded at seq 4 (complete by worker 3 answered rows 1: the "
                                 "job was done), was accepted with rows 1 (invoked seq 5, answered "
                                 "seq 6)");
    free(c.v);
}
END_TEST

START_TEST(test_stale_token_rejected_renew_after_acked_complete_refused_passes)
{
    qc_check c;

    run(qc_check_stale_token_rejected,
        DONE_THEN_RENEW(HEADER) "{'seq':6,'t':13,'type':'ok','op':'renew','worker':3,'inc':0,"
                                "'req':3,'job':17,'token':'a','rows':0}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_stale_token_rejected_renew_racing_complete_not_judged)
{
    qc_check c;

    /* (a) The renew was sent before the complete's answer came (seq 4 <
     * seq 5): it may have run first, its rows 1 proves nothing.  (b) A
     * complete whose answer was lost (an info) did not end the lease as
     * far as the worker knows.  (c) The transaction model: a complete's
     * answer precedes its COMMIT. */
    run(qc_check_stale_token_rejected,
        HEADER CLAIM_17_A
        "{'seq':3,'t':10,'type':'invoke','op':'complete','worker':3,'inc':0,'req':2,'job':17,"
        "'token':'a'}\n"
        "{'seq':4,'t':10.5,'type':'invoke','op':'renew','worker':3,'inc':0,'req':3,'job':17,"
        "'token':'a'}\n"
        "{'seq':5,'t':11,'type':'ok','op':'complete','worker':3,'inc':0,'req':2,'job':17,"
        "'token':'a','rows':1}\n"
        "{'seq':6,'t':13,'type':'ok','op':'renew','worker':3,'inc':0,'req':3,'job':17,"
        "'token':'a','rows':1,'now':1012.5,'lease_until':6012.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
    run(qc_check_stale_token_rejected,
        HEADER CLAIM_17_A
        "{'seq':3,'t':10,'type':'invoke','op':'complete','worker':3,'inc':0,'req':2,'job':17,"
        "'token':'a'}\n"
        "{'seq':4,'t':11,'type':'info','op':'complete','worker':3,'inc':0,'req':2,'job':17,"
        "'token':'a','error':'lost ack'}\n"
        "{'seq':5,'t':12,'type':'invoke','op':'renew','worker':3,'inc':0,'req':3,'job':17,"
        "'token':'a'}\n"
        "{'seq':6,'t':13,'type':'ok','op':'renew','worker':3,'inc':0,'req':3,'job':17,"
        "'token':'a','rows':1,'now':1012.5,'lease_until':6012.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
    run(qc_check_stale_token_rejected,
        DONE_THEN_RENEW("{'type':'header','seed':7,'model':'transaction','max_attempts':3}\n")
        "{'seq':6,'t':13,'type':'ok','op':'renew','worker':3,'inc':0,'req':3,'job':17,"
        "'token':'a','rows':1}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
}
END_TEST

START_TEST(test_stale_token_rejected_no_stale_requests_inconclusive)
{
    qc_check c;

    /* A complete with the live token, one with a token of unknown origin,
     * and one without an invoke: nothing to judge. */
    run(qc_check_stale_token_rejected,
        HEADER CLAIM_17_A
        "{'seq':3,'t':10,'type':'invoke','op':'complete','worker':3,'req':2,'job':17,"
        "'token':'a'}\n"
        "{'seq':4,'t':11,'type':'ok','op':'complete','worker':3,'req':2,'job':17,'token':'a',"
        "'rows':1}\n"
        "{'seq':5,'t':20,'type':'invoke','op':'complete','worker':5,'req':3,'job':17,"
        "'token':'zz'}\n"
        "{'seq':6,'t':21,'type':'ok','op':'complete','worker':5,'req':3,'job':17,'token':'zz',"
        "'rows':1}\n"
        "{'seq':7,'t':22,'type':'ok','op':'claim','worker':9,'req':4,'rows':1,'job':17,"
        "'token':'b','now':9000,'lease_until':14000}\n"
        "{'seq':8,'t':23,'type':'ok','op':'complete','worker':8,'job':17,'token':'a',"
        "'rows':1}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* ---- no_false_success ------------------------------------------------- */

START_TEST(test_no_false_success_zero_row_complete_counted_fails)
{
    qc_check c;

    run(qc_check_no_false_success,
        HEADER "{'seq':1,'t':0,'type':'invoke','op':'complete','worker':3,'req':1,'job':17,"
               "'token':'a'}\n"
               "{'seq':2,'t':1,'type':'ok','op':'complete','worker':3,'req':1,'job':17,"
               "'token':'a','rows':0,'counted':true}\n"
               "{'seq':3,'type':'ok','op':'complete','worker':4,'job':18,'token':'b','rows':0,"
               "'counted':false}\n"
               "{'seq':4,'type':'ok','op':'complete','worker':4,'job':19,'token':'c','rows':1,"
               "'counted':true}\n"
               "{'seq':5,'type':'ok','op':'complete','worker':4,'job':20,'token':'d','rows':0}\n",
        &c);
    ck_assert_str_eq(c.name, "no_false_success");
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 1, 2);
    ck_assert_str_eq(c.v[0].msg, "job 17: complete by worker 3 with token a answered rows 0 "
                                 "(seq 2) was counted as a success");
    free(c.v);
}
END_TEST

START_TEST(test_no_false_success_zero_row_complete_not_counted_passes)
{
    qc_check c;

    run(qc_check_no_false_success,
        HEADER "{'seq':1,'type':'ok','op':'complete','worker':3,'job':17,'token':'a','rows':0,"
               "'counted':false}\n"
               "{'seq':2,'type':'ok','op':'complete','worker':3,'job':18,'token':'b','rows':1,"
               "'counted':true}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_no_false_success_no_zero_row_complete_inconclusive)
{
    qc_check c;

    /* rows 0 without "counted" (an older worker) is not judged; an INFO
     * complete has no rows. */
    run(qc_check_no_false_success,
        HEADER "{'seq':1,'type':'ok','op':'complete','worker':3,'job':17,'token':'a','rows':0}\n"
               "{'seq':2,'type':'info','op':'complete','worker':3,'job':18,'token':'b',"
               "'counted':true}\n"
               "{'seq':3,'type':'ok','op':'complete','worker':3,'job':19,'token':'c','rows':1,"
               "'counted':true}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
}
END_TEST

/* ---- effects_once ----------------------------------------------------- */

START_TEST(test_effects_once_two_applied_effects_fail)
{
    qc_check c;

    /* Job 17's op key changed between deliveries (an unstable op key), so
     * the sink applied both; job 18 was delivered once. */
    run(qc_check_effects_once,
        HEADER "{'seq':3,'type':'effect','job':17,'op_key':'k1','token':'a','worker':3,"
               "'applied':true}\n"
               "{'seq':4,'type':'effect','job':18,'op_key':'18','token':'c','worker':4,"
               "'applied':true}\n"
               "{'seq':9,'type':'effect','job':17,'op_key':'k2','token':'b','worker':9,"
               "'applied':true}\n",
        &c);
    ck_assert_str_eq(c.name, "effects_once");
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 3, 9);
    ck_assert_str_eq(c.v[0].msg, "job 17: effect applied 2 times: seq 3 (op key k1), seq 9 (op "
                                 "key k2); the op key changed between deliveries");
    free(c.v);
}
END_TEST

/* Plain sink, heartbeat on (slow_work.ini): worker 3 claims job 17 (lease
 * 1000.25 .. 2000.25 on a server 1000 ms ahead of the client), plans 1500
 * ms of work renewing every lease/3, but its thread is starved: no renew
 * goes out, the lease runs out, worker 9 claims the job at 2500.5 and runs
 * it; worker 3's late effect is applied too.  The queue did nothing wrong
 * and the plan fitted: the re-run is excused (issue 11). */
#define PLAIN_RERUN(hb, w3_work)                                                                   \
    "{'type':'header','seed':7,'lease_ms':1000,'sink':'plain','heartbeat':" hb "}\n"              \
    "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"                    \
    "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,'job':17,"        \
    "'token':'a','now':1000.25,'lease_until':2000.25,'op_key':'17'}\n"                             \
    "{'seq':3,'t':1499,'type':'invoke','op':'claim','worker':9,'inc':0,'req':2}\n"                 \
    "{'seq':4,'t':1500,'type':'ok','op':'claim','worker':9,'inc':0,'req':2,'rows':1,'job':17,"     \
    "'token':'b','now':2500.5,'lease_until':3500.5,'op_key':'17'}\n"                               \
    "{'seq':5,'t':1600,'type':'effect','worker':9,'inc':0,'job':17,'token':'b','op_key':'17',"     \
    "'applied':true,'work_ms':100}\n"                                                              \
    "{'seq':6,'t':4000,'type':'effect','worker':3,'inc':0,'job':17,'token':'a','op_key':'17',"     \
    "'applied':true,'work_ms':" w3_work "}\n"                                                      \
    "{'seq':7,'t':4100,'type':'invoke','op':'renew','worker':3,'inc':0,'req':3,'job':17,"          \
    "'token':'a'}\n"

/* Decision 1114: jobs 17 and 18 carry one op key (the enqueue's time):
 * the sink applied 17's effect and dropped 18's, which completed without
 * its work.  Jobs 20 and 21 share a key too but both were applied (copies
 * keyed per job): judged, no violation. */
START_TEST(test_effects_once_shared_op_key_never_applied_fails)
{
    qc_check c;

    run(qc_check_effects_once,
        HEADER "{'seq':3,'type':'effect','job':17,'op_key':'t0','token':'a','worker':3,"
               "'applied':true}\n"
               "{'seq':4,'type':'effect','job':18,'op_key':'t0','token':'c','worker':4,"
               "'applied':false}\n"
               "{'seq':5,'type':'effect','job':20,'op_key':'m1','token':'d','worker':4,"
               "'applied':true}\n"
               "{'seq':6,'type':'effect','job':21,'op_key':'m1','token':'e','worker':3,"
               "'applied':true}\n"
               "{'seq':7,'type':'effect','job':22,'op_key':'22','token':'f','worker':3,"
               "'applied':true}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 4);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 18, 3, 4);
    ASSERT_MSG_HAS(&c, 0, "job 18: its effect was never applied: 1 deliveries with op key t0, "
                          "which job 17's delivery (applied) also carried");
    free(c.v);
}
END_TEST

START_TEST(test_effects_once_starved_worker_rerun_excused_passes)
{
    qc_check c;

    run(qc_check_effects_once, PLAIN_RERUN("true", "1500"), &c);
    ck_assert_msg(c.nviolations == 0, "%s", c.nstored > 0 ? c.v[0].msg : c.summary);
    ck_assert_msg(strstr(c.summary, "1 re-runs excused") != NULL, "%s", c.summary);
    free(c.v);
}
END_TEST

/* shared/cases.md C19 (decision 1108): worker 3 ran job 17 and sent its
 * complete at t 4, well inside its 3 s reservation; the server killed it as
 * a deadlock victim (a definite error: rolled back).  Worker 9 claims the
 * job after the reservation ran out and runs it again.  Not the thread's
 * lateness: a violation.  Sent at t 3100, after the reservation, the same
 * failure is lateness again, and the plan (2 ms of work) fitted: excused. */
#define C19_RERUN(complete_t)                                                                      \
    "{'type':'header','seed':7,'lease_ms':3000,'sink':'plain','heartbeat':false}\n"              \
    "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"                    \
    "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,'job':17,"        \
    "'token':'a','now':1000.25,'lease_until':4000.25,'op_key':'17'}\n"                             \
    "{'seq':3,'t':3,'type':'effect','worker':3,'inc':0,'job':17,'token':'a','op_key':'17',"        \
    "'applied':true,'work_ms':2}\n"                                                                \
    "{'seq':4,'t':" complete_t ",'type':'invoke','op':'complete','worker':3,'inc':0,'req':2,"      \
    "'job':17,'token':'a'}\n"                                                                      \
    "{'seq':5,'t':" complete_t ",'type':'fail','op':'complete','worker':3,'inc':0,'req':2,"        \
    "'job':17,'token':'a','error':'40001 Deadlock found when trying to get lock'}\n"               \
    "{'seq':6,'t':3200,'type':'invoke','op':'claim','worker':9,'inc':0,'req':3}\n"                 \
    "{'seq':7,'t':3201,'type':'ok','op':'claim','worker':9,'inc':0,'req':3,'rows':1,'job':17,"     \
    "'token':'b','now':4200.5,'lease_until':7200.5,'op_key':'17'}\n"                              \
    "{'seq':8,'t':3203,'type':'effect','worker':9,'inc':0,'job':17,'token':'b','op_key':'17',"     \
    "'applied':true,'work_ms':2}\n"

START_TEST(test_effects_once_rerun_after_refused_complete_fails)
{
    qc_check c;

    run(qc_check_effects_once, C19_RERUN("4"), &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert_msg(strstr(c.summary, "0 re-runs excused") != NULL, "%s", c.summary);
    free(c.v);
    run(qc_check_effects_once, C19_RERUN("3100"), &c);
    ck_assert_msg(c.nviolations == 0, "%s", c.nstored > 0 ? c.v[0].msg : c.summary);
    ck_assert_msg(strstr(c.summary, "1 re-runs excused") != NULL, "%s", c.summary);
    free(c.v);
}
END_TEST

START_TEST(test_effects_once_no_heartbeat_plan_lapses_fails)
{
    qc_check c;

    /* The same, but the worker does not renew (policy mutant no_heartbeat)
     * and planned 1500 ms of work on a 1000 ms lease: its plan let the
     * lease lapse, the job ran twice. */
    run(qc_check_effects_once, PLAIN_RERUN("false", "1500"), &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    free(c.v);
}
END_TEST

/* shared/cases.md C07: worker 3 claims job 17 (lease until 2000.25),
 * renews once (until 2333.5), and is asked to stop gracefully (fault
 * graceful_stop, seq 5); it works on for 3500 ms in all.  Its lease runs
 * out, worker 9 claims the job at server 2500.5 and runs it; worker 3's
 * effect is applied too.  shf: the header's stop_heartbeat_first; stop:
 * the fault line (before worker 9's claim here, or "" for none); late:
 * a fault line after worker 9's claim. */
#define STOPPED_RERUN(shf, stop, late)                                                             \
    "{'type':'header','seed':7,'lease_ms':1000,'sink':'plain','heartbeat':true" shf "}\n"          \
    "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"                    \
    "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,'job':17,"        \
    "'token':'a','now':1000.25,'lease_until':2000.25,'op_key':'17'}\n"                             \
    "{'seq':3,'t':333,'type':'invoke','op':'renew','worker':3,'inc':0,'req':2,'job':17,"           \
    "'token':'a'}\n"                                                                               \
    "{'seq':4,'t':334,'type':'ok','op':'renew','worker':3,'inc':0,'req':2,'job':17,"               \
    "'token':'a','rows':1,'now':1333.5,'lease_until':2333.5}\n" stop                               \
    "{'seq':7,'t':1499,'type':'invoke','op':'claim','worker':9,'inc':0,'req':3}\n"                 \
    "{'seq':8,'t':1500,'type':'ok','op':'claim','worker':9,'inc':0,'req':3,'rows':1,'job':17,"     \
    "'token':'b','now':2500.5,'lease_until':3500.5,'op_key':'17'}\n" late                          \
    "{'seq':10,'t':1600,'type':'effect','worker':9,'inc':0,'job':17,'token':'b','op_key':'17',"    \
    "'applied':true,'work_ms':100}\n"                                                              \
    "{'seq':11,'t':3501,'type':'effect','worker':3,'inc':0,'job':17,'token':'a','op_key':'17',"    \
    "'applied':true,'work_ms':3500}\n"
#define STOP_AT(seq, worker, inc)                                                                  \
    "{'seq':" seq ",'t':335,'type':'fault','fault':'graceful_stop','worker':" worker ",'inc':" inc \
    ",'job':17,'token':'a'}\n"

START_TEST(test_effects_once_heartbeat_stopped_first_rerun_fails)
{
    qc_check c;

    /* stop_heartbeat_first (the policy mutant): from the stop on the
     * worker renews no more by plan, so the lapse is not its thread's
     * lateness: the re-run is a violation, not excused. */
    run(qc_check_effects_once,
        STOPPED_RERUN(",'stop_heartbeat_first':true", STOP_AT("5", "3", "0"), ""), &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 10, 11);
    ck_assert_msg(strstr(c.summary, "0 re-runs excused") != NULL, "%s", c.summary);
    free(c.v);
}
END_TEST

START_TEST(test_effects_once_heartbeat_kept_at_stop_rerun_excused_passes)
{
    qc_check c;

    /* The same ledger from the correct policy (stop_heartbeat_first
     * false), and from an older ledger without the key: a worker that
     * renews on after the stop lost its lease only by lateness (its
     * renews did not go out): excused as before. */
    run(qc_check_effects_once,
        STOPPED_RERUN(",'stop_heartbeat_first':false", STOP_AT("5", "3", "0"), ""), &c);
    ck_assert_msg(c.nviolations == 0, "%s", c.nstored > 0 ? c.v[0].msg : c.summary);
    ck_assert_msg(strstr(c.summary, "1 re-runs excused") != NULL, "%s", c.summary);
    free(c.v);
    run(qc_check_effects_once, STOPPED_RERUN("", STOP_AT("5", "3", "0"), ""), &c);
    ck_assert_msg(c.nviolations == 0, "%s", c.nstored > 0 ? c.v[0].msg : c.summary);
    free(c.v);
}
END_TEST

START_TEST(test_effects_once_stop_not_before_takeover_excused_passes)
{
    qc_check c;

    /* stop_heartbeat_first, but no stop of this claim came before worker
     * 9's claim: after it (the lease had lapsed while the worker still
     * meant to renew), or to another incarnation of worker 3, or to
     * another worker: the plan held when the lease ran out. */
    run(qc_check_effects_once,
        STOPPED_RERUN(",'stop_heartbeat_first':true", "", STOP_AT("9", "3", "0")), &c);
    ck_assert_msg(c.nviolations == 0, "%s", c.nstored > 0 ? c.v[0].msg : c.summary);
    ck_assert_msg(strstr(c.summary, "1 re-runs excused") != NULL, "%s", c.summary);
    free(c.v);
    run(qc_check_effects_once,
        STOPPED_RERUN(",'stop_heartbeat_first':true", STOP_AT("5", "3", "1"), ""), &c);
    ck_assert_msg(c.nviolations == 0, "%s", c.nstored > 0 ? c.v[0].msg : c.summary);
    free(c.v);
    run(qc_check_effects_once,
        STOPPED_RERUN(",'stop_heartbeat_first':true", STOP_AT("5", "4", "0"), ""), &c);
    ck_assert_msg(c.nviolations == 0, "%s", c.nstored > 0 ? c.v[0].msg : c.summary);
    free(c.v);
}
END_TEST

START_TEST(test_effects_once_rerun_within_live_lease_fails)
{
    qc_check c;

    /* Worker 9's claim ran at server 1500.5, inside worker 3's lease (until
     * 2000.25): the queue handed out a live job; no excuse. */
    run(qc_check_effects_once,
        "{'type':'header','seed':7,'lease_ms':1000,'sink':'plain','heartbeat':true}\n"
        "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"
        "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,'job':17,"
        "'token':'a','now':1000.25,'lease_until':2000.25,'op_key':'17'}\n"
        "{'seq':3,'t':499,'type':'invoke','op':'claim','worker':9,'inc':0,'req':2}\n"
        "{'seq':4,'t':500,'type':'ok','op':'claim','worker':9,'inc':0,'req':2,'rows':1,'job':17,"
        "'token':'b','now':1500.5,'lease_until':2500.5,'op_key':'17'}\n"
        "{'seq':5,'t':600,'type':'effect','worker':9,'inc':0,'job':17,'token':'b','op_key':'17',"
        "'applied':true,'work_ms':100}\n"
        "{'seq':6,'t':700,'type':'effect','worker':3,'inc':0,'job':17,'token':'a','op_key':'17',"
        "'applied':true,'work_ms':500}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    free(c.v);
}
END_TEST

START_TEST(test_effects_once_stable_key_redelivery_deduplicated_passes)
{
    qc_check c;

    run(qc_check_effects_once,
        HEADER "{'seq':3,'type':'effect','job':17,'op_key':'17','token':'a','worker':3,"
               "'applied':true}\n"
               "{'seq':9,'type':'effect','job':17,'op_key':'17','token':'b','worker':9,"
               "'applied':false}\n"
               "{'seq':10,'type':'effect','job':18,'op_key':'18','token':'c','worker':9,"
               "'applied':true}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_effects_once_single_deliveries_inconclusive)
{
    qc_check c;

    run(qc_check_effects_once,
        HEADER "{'seq':3,'type':'effect','job':17,'op_key':'17','applied':true}\n"
               "{'seq':4,'type':'effect','job':18,'op_key':'18','applied':true}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
}
END_TEST

/* A job whose execution a fault or an unknown outcome put at risk, yet
 * delivered once: an opportunity (a rerun could have duplicated it), PASS. */
START_TEST(test_effects_once_fault_or_unknown_outcome_single_delivery_passes)
{
    qc_check c;

    run(qc_check_effects_once,
        HEADER "{'seq':3,'type':'effect','job':17,'op_key':'17','token':'a','worker':1,"
               "'applied':true}\n"
               "{'seq':4,'type':'invoke','op':'complete','job':17,'token':'a','worker':1,"
               "'req':5}\n"
               "{'seq':5,'type':'info','op':'complete','job':17,'token':'a','worker':1,"
               "'req':5}\n"
               "{'seq':6,'type':'fault','fault':'lost_ack','job':17,'token':'a','worker':1}\n"
               "{'seq':7,'type':'effect','job':18,'op_key':'18','token':'b','worker':2,"
               "'applied':true}\n"
               "{'seq':8,'type':'info','op':'complete','job':19,'token':'c','worker':2,"
               "'req':9}\n"
               "{'seq':9,'type':'effect','job':19,'op_key':'19','token':'c','worker':2,"
               "'applied':true}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 2); /* jobs 17 and 19; job 18 was never at risk */
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* ---- recovery --------------------------------------------------------- */

/* Worker 3 is killed after claiming job 17 at t 100 (seq 3).  Its lease
 * (server 1000.25 .. 6000.25, claim answered at client t 1) has expired on
 * the client's clock by t 5001; with the 2000 ms slack, a reap pass sent
 * after about t 7001 must give the job back. */
#define KILL_PREFIX                                                                                \
    HEADER                                                                                         \
    CLAIM_17_A                                                                                     \
    "{'seq':3,'t':100,'type':'fault','fault':'kill_after_claim','job':17,'token':'a',"             \
    "'worker':3,'inc':0}\n"                                                                        \
    "{'seq':4,'t':5500,'type':'invoke','op':'reap','worker':-1,'inc':0,'req':8}\n"                 \
    "{'seq':5,'t':5501,'type':'ok','op':'reap','worker':-1,'inc':0,'req':8,'rows':0}\n"

/* ... the pass at t 7600 returns it, worker 9 claims it. */
static const char *const kill_reaped =
    KILL_PREFIX "{'seq':6,'t':7600,'type':'invoke','op':'reap','worker':-1,'inc':0,'req':9}\n"
                "{'seq':7,'t':7601,'type':'ok','op':'reap','worker':-1,'inc':0,'req':9,'rows':1,"
                "'job':17,'token':'a','state':'ready','now':8601.5}\n"
                "{'seq':8,'t':7610,'type':'invoke','op':'claim','worker':9,'inc':0,'req':2}\n"
                "{'seq':9,'t':7611,'type':'ok','op':'claim','worker':9,'inc':0,'req':2,'rows':1,"
                "'job':17,'token':'b','now':8611.5,'lease_until':13611.5}\n"
                "{'seq':10,'type':'snapshot','job':17,'state':'done'}\n";

START_TEST(test_recovery_kill_after_claim_reaped_after_expiry_passes)
{
    qc_history h;
    qc_check c;
    double ms[4];

    run(qc_check_recovery, kill_reaped, &c);
    ck_assert_str_eq(c.name, "recovery");
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_str_eq(c.summary, "1 faults: 1 claimable again in min 7501 / median 7501 / p95 7501 "
                                "/ max 7501 ms, 0 at an unknown time, 0 never, 0 not in a "
                                "snapshot; 1 reap passes and claims judged after a lease expired "
                                "(slack 2000 ms)");
    free(c.v);
    memset(&h, 0, sizeof h);
    load(&h, kill_reaped);
    ck_assert_uint_eq(qc_recovery_times(&h, ms, 4), 1);
    ck_assert(ms[0] == 7501.0);
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_recovery_reap_pass_after_expiry_misses_job_fails)
{
    qc_check c;

    /* The pass sent at t 7600, after the lease expired and the slack
     * passed, returned nothing: the reaper left job 17's expired lease. */
    run(qc_check_recovery,
        KILL_PREFIX "{'seq':6,'t':7600,'type':'invoke','op':'reap','worker':-1,'inc':0,'req':9}\n"
                    "{'seq':7,'t':7601,'type':'ok','op':'reap','worker':-1,'inc':0,'req':9,"
                    "'rows':0}\n"
                    "{'seq':10,'type':'snapshot','job':17,'state':'inflight'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 2); /* the missed pass, and never recovered */
    ASSERT_VIOLATION(&c, 0, 17, 2, 3, 6, 7);
    ASSERT_MSG_HAS(&c, 0, "the reap pass sent at seq 6");
    ASSERT_MSG_HAS(&c, 0, "returned 0 jobs but not this one");
    free(c.v);
}
END_TEST

START_TEST(test_recovery_bounded_reap_batch_not_judged)
{
    qc_check c;

    /* Decision 967: the same pass returned job 18 but not job 17 (a reaper
     * that takes a bounded batch per pass made progress); the next pass
     * returns job 17.  Not a violation of rule (1). */
    run(qc_check_recovery,
        KILL_PREFIX "{'seq':6,'t':7600,'type':'invoke','op':'reap','worker':-1,'inc':0,'req':9}\n"
                    "{'seq':7,'t':7601,'type':'ok','op':'reap','worker':-1,'inc':0,'req':9,"
                    "'rows':1,'job':18,'token':'q','state':'ready','now':8601.5}\n"
                    "{'seq':8,'t':7700,'type':'invoke','op':'reap','worker':-1,'inc':0,'req':10}\n"
                    "{'seq':9,'t':7701,'type':'ok','op':'reap','worker':-1,'inc':0,'req':10,"
                    "'rows':1,'job':17,'token':'a','state':'ready','now':8701.5}\n"
                    "{'seq':10,'type':'snapshot','job':17,'state':'done'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* Decision 961: worker 3 loses job 17 (lost_request at t 100) and lives
 * on; a heartbeat (no job named) is answered with rows at t 3000, sent by
 * incarnation INC; the reap pass sent at t 7600, after the claim's lease
 * and the slack, does not return job 17; a later pass does. */
#define HEARTBEAT_LEDGER(inc)                                                                      \
    HEADER                                                                                         \
    CLAIM_17_A                                                                                     \
    "{'seq':3,'t':100,'type':'fault','fault':'lost_request','job':17,'token':'a',"                 \
    "'worker':3,'inc':0}\n"                                                                        \
    "{'seq':4,'t':3000,'type':'invoke','op':'heartbeat','worker':3,'inc':" inc ",'req':30}\n"      \
    "{'seq':5,'t':3001,'type':'ok','op':'heartbeat','worker':3,'inc':" inc ",'req':30,"            \
    "'rows':1,'now':4001.5,'lease_until':9001.5}\n"                                                \
    "{'seq':6,'t':7600,'type':'invoke','op':'reap','worker':-1,'inc':0,'req':9}\n"                 \
    "{'seq':7,'t':7601,'type':'ok','op':'reap','worker':-1,'inc':0,'req':9,'rows':0}\n"            \
    "{'seq':8,'t':12000,'type':'invoke','op':'reap','worker':-1,'inc':0,'req':10}\n"               \
    "{'seq':9,'t':12001,'type':'ok','op':'reap','worker':-1,'inc':0,'req':10,'rows':1,"            \
    "'job':17,'token':'a','state':'ready','now':13001.5}\n"                                        \
    "{'seq':10,'type':'snapshot','job':17,'state':'done'}\n"

START_TEST(test_recovery_own_heartbeat_may_extend_lease_passes)
{
    qc_check c;

    /* the owner's own incarnation heartbeats after its claim: the heartbeat
     * contract lets it extend every live lease of the incarnation, so the
     * lease's end is unknown and the pass at t 7600 is not judged */
    run(qc_check_recovery, HEARTBEAT_LEDGER("0"), &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_recovery_other_incarnation_heartbeat_no_excuse_fails)
{
    qc_check c;

    /* the same ledger with the heartbeat sent by incarnation 1 (worker 3
     * restarted under its name): it must not touch incarnation 0's lease,
     * so the pass that left the expired lease in place is a violation */
    run(qc_check_recovery, HEARTBEAT_LEDGER("1"), &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 2, 3, 6, 7);
    ASSERT_MSG_HAS(&c, 0, "the reap pass sent at seq 6");
    free(c.v);
}
END_TEST

START_TEST(test_recovery_starved_reaper_late_passes)
{
    qc_check c;

    /* A starved harness: the reaper's next pass is sent only at t 30000,
     * 25 s after the lease expired; it returns the job at once.  The queue
     * did its part: no violation, only a long recovery time. */
    run(qc_check_recovery,
        KILL_PREFIX "{'seq':6,'t':30000,'type':'invoke','op':'reap','worker':-1,'inc':0,'req':9}\n"
                    "{'seq':7,'t':30001,'type':'ok','op':'reap','worker':-1,'inc':0,'req':9,"
                    "'rows':1,'job':17,'token':'a','state':'ready','now':31001.5}\n"
                    "{'seq':10,'type':'snapshot','job':17,'state':'done'}\n",
        &c);
    ck_assert_msg(c.verdict == QC_PASS, "%s", c.nstored > 0 ? c.v[0].msg : c.summary);
    free(c.v);
}
END_TEST

/* A failover: jobs 17 and 18 were inflight on the promoted replica (switch
 * snapshot, after its marker at seq 2).  17 is claimed again after it and
 * done; 18 is never touched again and still inflight at the end: stuck in
 * flight on the new primary. */
START_TEST(test_recovery_job_stuck_after_switch_fails)
{
    qc_check c;

    run(qc_check_recovery,
        HEADER "{'seq':2,'t':1000,'type':'switch_snapshot','fault':'failover'}\n"
               "{'seq':3,'t':1001,'type':'switch_snapshot','fault':'failover','job':17,"
               "'state':'inflight'}\n"
               "{'seq':4,'t':1001,'type':'switch_snapshot','fault':'failover','job':18,"
               "'state':'inflight'}\n"
               "{'seq':5,'t':1500,'type':'invoke','op':'claim','worker':2,'inc':0,'req':7}\n"
               "{'seq':6,'t':1600,'type':'ok','op':'claim','worker':2,'inc':0,'req':7,'job':17,"
               "'token':'b','rows':1}\n"
               "{'seq':7,'type':'snapshot','job':17,'state':'done'}\n"
               "{'seq':8,'type':'snapshot','job':18,'state':'inflight'}\n"
               "{'seq':9,'type':'end','drained':true,'timed_out':false,'interrupted':false}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 18, 4, 8);
    ck_assert_ptr_nonnull(strstr(c.v[0].msg, "inflight on the replica promoted by the failover"));
    ck_assert_ptr_nonnull(strstr(c.summary, "2 jobs in flight at the switch of the primary: 1 "
                                            "taken up again (median 600 / max 600 ms after it), 1 "
                                            "stuck"));
    free(c.v);
}
END_TEST

START_TEST(test_recovery_jobs_taken_up_after_switch_pass)
{
    qc_check c;

    /* 17 reaped, 18 completed by its owner after reconnecting */
    run(qc_check_recovery,
        HEADER "{'seq':2,'t':1000,'type':'switch_snapshot','fault':'failover'}\n"
               "{'seq':3,'t':1001,'type':'switch_snapshot','fault':'failover','job':17,"
               "'state':'inflight'}\n"
               "{'seq':4,'t':1001,'type':'switch_snapshot','fault':'failover','job':18,"
               "'state':'inflight'}\n"
               "{'seq':5,'t':1200,'type':'ok','op':'reap','worker':-1,'inc':0,'req':8,'job':17,"
               "'state':'ready','rows':1}\n"
               "{'seq':6,'t':1300,'type':'invoke','op':'complete','worker':3,'inc':0,'req':9,"
               "'job':18,'token':'a'}\n"
               "{'seq':7,'t':1400,'type':'ok','op':'complete','worker':3,'inc':0,'req':9,"
               "'job':18,'token':'a','rows':1}\n"
               "{'seq':8,'type':'snapshot','job':17,'state':'done'}\n"
               "{'seq':9,'type':'snapshot','job':18,'state':'done'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_ptr_nonnull(strstr(c.summary, "2 taken up again (median "));
    ck_assert_ptr_nonnull(strstr(c.summary, " / max 400 ms after it), 0 stuck"));
    free(c.v);
}
END_TEST

START_TEST(test_recovery_pass_with_owner_request_in_flight_not_judged)
{
    qc_check c;

    /* Job 17's stalled owner wakes and sends its renew (seq 6) before the
     * pass sent at t 7600 is answered: the row may have been held by that
     * request, so the pass proves nothing. */
    run(qc_check_recovery,
        HEADER CLAIM_17_A
        "{'seq':3,'t':100,'type':'fault','fault':'stall_beyond_lease','job':17,'token':'a',"
        "'worker':3,'inc':0,'until_t':7599}\n"
        "{'seq':4,'t':7600,'type':'invoke','op':'reap','worker':-1,'inc':0,'req':9}\n"
        "{'seq':6,'t':7600,'type':'invoke','op':'renew','worker':3,'inc':0,'req':2,'job':17,"
        "'token':'a'}\n"
        "{'seq':7,'t':7601,'type':'ok','op':'reap','worker':-1,'inc':0,'req':9,'rows':0}\n"
        "{'seq':8,'t':7602,'type':'ok','op':'renew','worker':3,'inc':0,'req':2,'job':17,"
        "'token':'a','rows':0}\n"
        "{'seq':10,'type':'snapshot','job':17,'state':'done'}\n",
        &c);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_recovery_no_reaper_empty_claim_after_expiry_fails)
{
    qc_check c;

    /* No reaper in the ledger: the claim must take expired leases.
     * Worker 9's claim sent at t 8000 (after the expiry and the slack)
     * found nothing while job 17 lay abandoned. */
    run(qc_check_recovery,
        HEADER CLAIM_17_A
        "{'seq':3,'t':100,'type':'fault','fault':'kill_after_claim','job':17,'token':'a',"
        "'worker':3,'inc':0}\n"
        "{'seq':4,'t':6000,'type':'invoke','op':'claim','worker':9,'inc':0,'req':2}\n"
        "{'seq':5,'t':6001,'type':'ok','op':'claim','worker':9,'inc':0,'req':2,'rows':0}\n"
        "{'seq':6,'t':8000,'type':'invoke','op':'claim','worker':9,'inc':0,'req':3}\n"
        "{'seq':7,'t':8001,'type':'ok','op':'claim','worker':9,'inc':0,'req':3,'rows':0}\n"
        "{'seq':10,'type':'snapshot','job':17,'state':'inflight'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ASSERT_VIOLATION(&c, 0, 17, 2, 3, 6, 7);
    ASSERT_MSG_HAS(&c, 0, "found nothing");
    free(c.v);
}
END_TEST

/* Issue 13: the bound is the lease the claim recorded.  A job whose
 * recorded lease (a library's 4-hour lock) outlived the run is not called
 * unrecovered; the same job with a lease that ran out before the run's end
 * is. */
START_TEST(test_recovery_never_within_recorded_lease_not_a_violation)
{
    qc_check c;
    static const char *const lease[2] = {"14401000.25", "2000.25"};

    for (int k = 0; k < 2; k++) {
        char text[2048];
        snprintf(text, sizeof text,
                 HEADER
                 "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"
                 "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,"
                 "'job':17,'token':'a','now':1000.25,'lease_until':%s}\n"
                 "{'seq':3,'t':2,'type':'fault','fault':'kill_after_claim','job':17,'token':'a',"
                 "'worker':3}\n"
                 "{'seq':10,'t':30000,'type':'snapshot','job':17,'state':'inflight'}\n"
                 "{'seq':11,'t':30001,'type':'end','drained':false,'timed_out':true}\n",
                 lease[k]);
        run(qc_check_recovery, text, &c);
        if (k == 0) {
            /* nothing could have failed: no opportunity, INCONCLUSIVE
             * (decision 1142; it said PASS with 1) */
            ck_assert_int_eq(c.opportunities, 0);
            ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
            ck_assert_int_eq(c.nviolations, 0);
            ck_assert_ptr_nonnull(strstr(c.summary, "1 never (1 of them within a lease that "
                                                    "outlived the run)"));
        } else {
            ck_assert_int_eq(c.opportunities, 1);
            ck_assert_int_eq(c.verdict, QC_FAIL);
            ck_assert_int_eq(c.nviolations, 1);
        }
        free(c.v);
    }
}
END_TEST

START_TEST(test_recovery_never_recovered_and_not_done_fails)
{
    qc_check c;

    /* Job 17 was never claimed again and is still in flight at the end;
     * job 18 shows no recovery event but ended done (recovered, time
     * unknown); job 19 is not in the snapshot (not judged here). */
    run(qc_check_recovery,
        HEADER CLAIM_17_A
        "{'seq':3,'t':100,'type':'fault','fault':'kill_after_effect','job':17,'token':'a',"
        "'worker':3}\n"
        "{'seq':4,'t':200,'type':'fault','fault':'lost_request','job':18,'token':'c',"
        "'worker':4}\n"
        "{'seq':5,'t':300,'type':'fault','fault':'kill_after_claim','job':19,'token':'d',"
        "'worker':5}\n"
        "{'seq':6,'t':400,'type':'fault','fault':'lost_ack','job':20,'token':'e','worker':6}\n"
        "{'seq':10,'type':'snapshot','job':17,'state':'inflight'}\n"
        "{'seq':11,'type':'snapshot','job':18,'state':'done'}\n"
        "{'seq':12,'type':'snapshot','job':20,'state':'done'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 3);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 3, 10);
    ck_assert_str_eq(c.v[0].msg, "job 17: kill_after_effect at seq 3 was never recovered (no "
                                 "later claim or reap) and the job is inflight in the final "
                                 "snapshot (seq 10)");
    ck_assert_str_eq(c.summary, "3 faults: no recovery time measured, 1 at an unknown time, 1 "
                                "never, 1 not in a snapshot; 0 reap passes and claims judged "
                                "after a lease expired (slack 2000 ms)");
    free(c.v);
}
END_TEST

START_TEST(test_recovery_stall_completed_by_other_token_passes)
{
    qc_history h;
    qc_check c;
    double ms[1] = {-1};
    /* Job 17: the stalled worker's token a; worker 9 (whose claim answer was
     * lost) completes it with token b at t 5100.  Job 18: the stalled worker
     * itself completes with its own token c (not a recovery), done at the
     * end: recovered at an unknown time. */
    static const char *const ledger = HEADER CLAIM_17_A
        "{'seq':3,'t':100,'type':'fault','fault':'stall_beyond_lease','job':17,'token':'a',"
        "'worker':3,'until_t':12600}\n"
        "{'seq':4,'t':5100,'type':'ok','op':'complete','worker':9,'job':17,'token':'b',"
        "'rows':1}\n"
        "{'seq':5,'t':200,'type':'fault','fault':'stall_beyond_lease','job':18,'token':'c',"
        "'worker':4,'until_t':12700}\n"
        "{'seq':6,'t':12800,'type':'ok','op':'complete','worker':4,'job':18,'token':'c',"
        "'rows':1}\n"
        "{'seq':7,'type':'snapshot','job':17,'state':'done'}\n"
        "{'seq':8,'type':'snapshot','job':18,'state':'done'}\n";

    run(qc_check_recovery, ledger, &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
    memset(&h, 0, sizeof h);
    load(&h, ledger);
    ck_assert_uint_eq(qc_recovery_times(&h, NULL, 0), 1);
    ck_assert_uint_eq(qc_recovery_times(&h, ms, 1), 1);
    ck_assert(ms[0] == 5000.0);
    qc_history_fini(&h);
}
END_TEST

/* A poison job kills its worker (seq 3, t 100); the reaper moves it to
 * dead at t 6000 (seq 4). */
#define POISON_REAPED(mode)                                                                        \
    "{'type':'header','seed':7,'lease_ms':5000,'reaper_interval_ms':500,"                          \
    "'recovery_slack_ms':2000,'poison_mode':'" mode "'}\n" CLAIM_17_A                              \
    "{'seq':3,'t':100,'type':'fault','fault':'poison','job':17,'token':'a','worker':3}\n"          \
    "{'seq':4,'t':6000,'type':'ok','op':'reap','worker':-1,'req':9,'rows':1,'job':17,"             \
    "'token':'a','state':'dead','now':7000}\n"

START_TEST(test_recovery_poison_crash_reaped_dead_passes)
{
    qc_history h;
    qc_check c;
    double ms[2];

    run(qc_check_recovery, POISON_REAPED("crash"), &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    memset(&h, 0, sizeof h);
    load(&h, POISON_REAPED("crash"));
    ck_assert(h.info.poison_crash == 1);
    ck_assert_uint_eq(qc_recovery_times(&h, ms, 2), 1);
    ck_assert(ms[0] == 5900.0);
    qc_history_fini(&h);
    free(c.v);
}
END_TEST

START_TEST(test_recovery_poison_fail_mode_not_judged_inconclusive)
{
    qc_check c;

    /* In fail mode the worker gives the job back itself: no abandoned
     * lease, nothing to recover. */
    run(qc_check_recovery, POISON_REAPED("fail"), &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_str_eq(c.summary, "0 faults: no recovery time measured, 0 at an unknown time, 0 "
                                "never, 0 not in a snapshot; 0 reap passes and claims judged "
                                "after a lease expired (slack 2000 ms)");
    free(c.v);
}
END_TEST

START_TEST(test_recovery_times_several_faults_in_seq_order)
{
    qc_history h;
    double ms[2] = {-1, -1};

    /* Faults of jobs 18 (seq 1) and 17 (seq 2): times come in fault order,
     * not job order; only the first max are stored. */
    memset(&h, 0, sizeof h);
    load(&h, HEADER "{'seq':1,'t':0,'type':'fault','fault':'lost_request','job':18}\n"
                    "{'seq':2,'t':10,'type':'fault','fault':'kill_after_claim','job':17}\n"
                    "{'seq':3,'t':30,'type':'fault','fault':'kill_after_effect','job':19}\n"
                    "{'seq':4,'t':1010,'type':'ok','op':'claim','worker':1,'rows':1,'job':17}\n"
                    "{'seq':5,'t':2000,'type':'ok','op':'claim','worker':1,'rows':1,'job':18}\n"
                    "{'seq':6,'type':'ok','op':'claim','worker':1,'rows':1,'job':19}\n");
    ck_assert_uint_eq(qc_recovery_times(&h, ms, 1), 2);
    ck_assert(ms[0] == 2000.0);
    ck_assert(ms[1] == -1);
    ck_assert_uint_eq(qc_recovery_times(&h, ms, 2), 2);
    ck_assert(ms[0] == 2000.0 && ms[1] == 1000.0);
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_recovery_no_faults_inconclusive)
{
    qc_check c;

    run(qc_check_recovery,
        HEADER CLAIM_17_A "{'seq':3,'t':5,'type':'fault','fault':'lost_ack','job':17}\n", &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
}
END_TEST

/* ---- bounded_failure -------------------------------------------------- */

/* Poison job 17 claimed three times (seqs 1, 3, 5), its poison fault after
 * each (seqs 2, 4, 6). */
#define POISON_17_THRICE                                                                           \
    "{'seq':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'a'}\n"                \
    "{'seq':2,'type':'fault','fault':'poison','job':17,'token':'a'}\n"                             \
    "{'seq':3,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'b'}\n"                \
    "{'seq':4,'type':'fault','fault':'poison','job':17,'token':'b'}\n"                             \
    "{'seq':5,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'c'}\n"                \
    "{'seq':6,'type':'fault','fault':'poison','job':17,'token':'c'}\n"

/* Poison job 18 claimed three times (seqs 11, 13, 15). */
#define POISON_18_THRICE                                                                           \
    "{'seq':11,'type':'ok','op':'claim','worker':4,'rows':1,'job':18,'token':'x'}\n"              \
    "{'seq':12,'type':'fault','fault':'poison','job':18,'token':'x'}\n"                           \
    "{'seq':13,'type':'ok','op':'claim','worker':4,'rows':1,'job':18,'token':'y'}\n"              \
    "{'seq':14,'type':'fault','fault':'poison','job':18,'token':'y'}\n"                           \
    "{'seq':15,'type':'ok','op':'claim','worker':4,'rows':1,'job':18,'token':'z'}\n"              \
    "{'seq':16,'type':'fault','fault':'poison','job':18,'token':'z'}\n"

/* ... and a fourth time (seq 7, fault seq 8). */
#define POISON_17_FOUR_TIMES                                                                       \
    POISON_17_THRICE                                                                               \
    "{'seq':7,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'d'}\n"                \
    "{'seq':8,'type':'fault','fault':'poison','job':17,'token':'d'}\n"

START_TEST(test_bounded_failure_claimed_max_attempts_dead_with_error_passes)
{
    qc_check c;

    run(qc_check_bounded_failure,
        HEADER POISON_17_THRICE
        "{'seq':90,'type':'snapshot','job':17,'state':'dead','error':'poison: the effect "
        "failed'}\n",
        &c);
    ck_assert_str_eq(c.name, "bounded_failure");
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_str_eq(c.summary, "1 poison jobs (max_attempts 3): 0 claimed too often, 0 dead too early, 0 not dead, "
                                "0 dead without an error");
    free(c.v);
}
END_TEST

START_TEST(test_bounded_failure_too_many_claims_not_dead_no_error_fails)
{
    qc_check c;

    /* Job 17: four claims with max_attempts 3.  Job 18: ready at the end.
     * Job 19: dead without its error.  Job 20: a plain job, not judged. */
    run(qc_check_bounded_failure,
        HEADER POISON_17_FOUR_TIMES
        "{'seq':80,'type':'ok','op':'claim','worker':4,'rows':1,'job':18,'token':'e'}\n"
        "{'seq':81,'type':'fault','fault':'poison','job':18,'token':'e'}\n"
        "{'seq':82,'type':'ok','op':'claim','worker':4,'rows':1,'job':19,'token':'f'}\n"
        "{'seq':83,'type':'fault','fault':'poison','job':19,'token':'f'}\n"
        "{'seq':84,'type':'ok','op':'claim','worker':4,'rows':1,'job':20,'token':'g'}\n"
        "{'seq':90,'type':'snapshot','job':17,'state':'dead','error':'poison'}\n"
        "{'seq':91,'type':'snapshot','job':18,'state':'ready'}\n"
        "{'seq':92,'type':'snapshot','job':19,'state':'dead','error':''}\n"
        "{'seq':93,'type':'snapshot','job':20,'state':'inflight'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 3);
    ck_assert_int_eq(c.nviolations, 4);
    ASSERT_VIOLATION(&c, 0, 17, 1, 2, 3, 5, 7);
    ck_assert_str_eq(c.v[0].msg, "poison job 17 was claimed 4 times, more than max_attempts 3 "
                                 "(claims at seq 1, 3, 5, 7; poison fault seq 2)");
    ASSERT_VIOLATION(&c, 1, 18, 80, 81, 91);
    ck_assert_str_eq(c.v[1].msg, "poison job 18 is ready in the final snapshot (seq 91), not "
                                 "dead, after 1 claims (poison fault seq 81)");
    /* job 19 also died after 1 of its 3 attempts (decision 1113) */
    ASSERT_VIOLATION(&c, 2, 19, 82, 83, 92);
    ASSERT_MSG_HAS(&c, 2, "after 1 claims (seq 82), fewer than max_attempts 3");
    ASSERT_VIOLATION(&c, 3, 19, 83, 92);
    ASSERT_MSG_HAS(&c, 3, "error was not kept (an empty error)");
    free(c.v);
}
END_TEST

/* Decision 1113: a poison job dead after fewer claims than max_attempts
 * was not retried as the queue allows; not judged when some claim of the
 * run has an unknown outcome (its answer lost, or never came). */
START_TEST(test_bounded_failure_dead_too_early_fails)
{
    qc_check c;
    const char *two =
        "{'seq':1,'type':'invoke','op':'claim','worker':3,'req':1}\n"
        "{'seq':2,'type':'ok','op':'claim','worker':3,'req':1,'rows':1,'job':17,'token':'a'}\n"
        "{'seq':3,'type':'fault','fault':'poison','job':17,'token':'a'}\n"
        "{'seq':4,'type':'invoke','op':'claim','worker':3,'req':2}\n"
        "{'seq':5,'type':'ok','op':'claim','worker':3,'req':2,'rows':1,'job':17,'token':'b'}\n"
        "{'seq':6,'type':'fault','fault':'poison','job':17,'token':'b'}\n";
    char buf[4096];

    snprintf(buf, sizeof buf, "%s%s%s", HEADER, two,
             "{'seq':90,'type':'snapshot','job':17,'state':'dead','error':'poison'}\n");
    run(qc_check_bounded_failure, buf, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 2, 3, 5, 90);
    ASSERT_MSG_HAS(&c, 0, "after 2 claims (seq 2, 5), fewer than max_attempts 3");
    free(c.v);
    /* a claim whose answer was lost: it may have been a third claim */
    snprintf(buf, sizeof buf, "%s%s%s", HEADER, two,
             "{'seq':7,'type':'invoke','op':'claim','worker':4,'req':3}\n"
             "{'seq':8,'type':'info','op':'claim','worker':4,'req':3,'error':'lost'}\n"
             "{'seq':90,'type':'snapshot','job':17,'state':'dead','error':'poison'}\n");
    run(qc_check_bounded_failure, buf, &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    free(c.v);
    /* a claim with no answer at all */
    snprintf(buf, sizeof buf, "%s%s%s", HEADER, two,
             "{'seq':7,'type':'invoke','op':'claim','worker':4,'req':3}\n"
             "{'seq':90,'type':'snapshot','job':17,'state':'dead','error':'poison'}\n");
    run(qc_check_bounded_failure, buf, &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    free(c.v);
}
END_TEST

/* Issue 13: a poison job with attempts left when the drain timed out
 * (graphile-worker's own backoff spaces its attempts 2.7 s and 7.4 s apart)
 * is not finished, not a violation; with its attempts used up, or when the
 * drain did not time out, it still is. */
START_TEST(test_bounded_failure_attempts_left_at_drain_timeout_not_judged)
{
    qc_check c;

    run(qc_check_bounded_failure,
        HEADER
        "{'seq':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'a'}\n"
        "{'seq':2,'type':'fault','fault':'poison','job':17,'token':'a'}\n"
        "{'seq':3,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'b'}\n"
        "{'seq':4,'type':'fault','fault':'poison','job':17,'token':'b'}\n" POISON_18_THRICE
        "{'seq':90,'type':'snapshot','job':17,'state':'ready'}\n"
        "{'seq':91,'type':'snapshot','job':18,'state':'ready'}\n"
        "{'seq':99,'type':'end','drained':false,'timed_out':true}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1); /* job 18: 3 claims of 3, still ready */
    ASSERT_MSG_HAS(&c, 0, "poison job 18 is ready");
    ck_assert_ptr_nonnull(strstr(c.summary, "1 not dead yet with attempts left when the drain "
                                            "timed out"));
    free(c.v);
    run(qc_check_bounded_failure,
        HEADER
        "{'seq':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'a'}\n"
        "{'seq':2,'type':'fault','fault':'poison','job':17,'token':'a'}\n"
        "{'seq':90,'type':'snapshot','job':17,'state':'ready'}\n"
        "{'seq':99,'type':'end','drained':true,'timed_out':false}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    free(c.v);
}
END_TEST

/* Issue 12: a drain that timed out while the queue was still finishing
 * jobs (done rose over the last 5 s of monitor samples: MariaDB on a
 * loaded machine) leaves poison job 18 ready after one claim, waiting for
 * its retry: it may have died later, so it is not judged (INCONCLUSIVE,
 * no violation).  The same ledger without progress is a violation, and so
 * is a job ready after max_attempts claims even while progressing. */
#define POISON_DRAIN(d1, d2, more)                                                                 \
    "{'seq':1,'t':0,'type':'ok','op':'enqueue','worker':-1,'job':18}\n"                           \
    "{'seq':2,'t':100,'type':'ok','op':'claim','worker':4,'rows':1,'job':18,'token':'e'}\n"       \
    "{'seq':3,'t':101,'type':'fault','fault':'poison','job':18,'token':'e'}\n" more               \
    "{'seq':40,'t':9000,'type':'monitor','ready':1,'inflight':0,'done':" d1 ",'dead':0}\n"        \
    "{'seq':50,'t':12000,'type':'monitor','ready':1,'inflight':0,'done':" d2 ",'dead':0}\n"       \
    "{'seq':60,'t':12100,'type':'snapshot','job':18,'state':'ready','attempt':1}\n"               \
    "{'seq':62,'t':12102,'type':'end','drained':false,'timed_out':true}\n"

START_TEST(test_bounded_failure_drain_cut_short_while_progressing_not_judged)
{
    qc_check c;

    run(qc_check_bounded_failure, HEADER POISON_DRAIN("0", "5", ""), &c);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_msg(strstr(c.summary, "1 poison jobs with attempts left not judged") != NULL,
                  "%s", c.summary);
    free(c.v);
    /* nothing finished in the last 5 s: the queue stopped, which no_lost_jobs
     * judges; job 18 still had attempts left, so bounded_failure does not */
    run(qc_check_bounded_failure, HEADER POISON_DRAIN("5", "5", ""), &c);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_int_ne(c.verdict, QC_PASS);
    free(c.v);
    /* progressing, but ready after its 3 allowed claims: judged */
    run(qc_check_bounded_failure,
        HEADER POISON_DRAIN("0", "5",
                            "{'seq':4,'t':200,'type':'ok','op':'claim','worker':4,'rows':1,'job':18,"
                            "'token':'f'}\n"
                            "{'seq':5,'t':300,'type':'ok','op':'claim','worker':4,'rows':1,'job':18,"
                            "'token':'g'}\n"),
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_MSG_HAS(&c, 0, "not dead, after 3 claims");
    free(c.v);
}
END_TEST

START_TEST(test_bounded_failure_snapshot_without_error_column_not_judged)
{
    qc_check c;

    /* Issue 18: the protocol's snapshot returns no 'error' column (the
     * ledger header's "columns" says so): a dead poison job without an
     * error is not a violation; the rule says it was not judged.  The same
     * job with the column declared is a violation. */
    run(qc_check_bounded_failure,
        "{'type':'header','seed':7,'max_attempts':3,'columns':{'snapshot':['job_id','state',"
        "'attempt','token']}}\n" POISON_17_THRICE
        "{'seq':90,'type':'snapshot','job':17,'state':'dead'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_msg(strstr(c.summary, "error rule NOT JUDGED") != NULL, "%s", c.summary);
    free(c.v);
    run(qc_check_bounded_failure,
        "{'type':'header','seed':7,'max_attempts':3,'columns':{'snapshot':['job_id','state',"
        "'attempt','token','error']}}\n" POISON_17_THRICE
        "{'seq':90,'type':'snapshot','job':17,'state':'dead'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    free(c.v);
}
END_TEST

/* A protocol that deletes a job's row when it finishes says so in its
 * header ("missing: done" or "missing: dead"): a poison job absent from a
 * final snapshot is in that state.  missing dead after max_attempts
 * claims: PASS (its error cannot be read: not judged); missing dead after
 * one claim: dead too early; missing done: finished, not dead.  Without
 * the header a missing row is no_lost_jobs' to judge, not this one's. */
START_TEST(test_bounded_failure_missing_header)
{
    qc_check c;
    const char *other = "{'seq':90,'type':'snapshot','job':99,'state':'done'}\n";
    char text[4096];

    snprintf(text, sizeof text,
             "{'type':'header','seed':7,'max_attempts':3,'missing':'dead'}\n" POISON_17_THRICE
             "%s",
             other);
    run(qc_check_bounded_failure, text, &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_msg(strstr(c.summary, "error rule NOT JUDGED for 1") != NULL, "%s", c.summary);
    free(c.v);

    snprintf(text, sizeof text,
             "{'type':'header','seed':7,'max_attempts':3,'missing':'dead'}\n"
             "{'seq':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'a'}\n"
             "{'seq':2,'type':'fault','fault':'poison','job':17,'token':'a'}\n%s",
             other);
    run(qc_check_bounded_failure, text, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_MSG_HAS(&c, 0, "missing from the final snapshot, which the protocol's header "
                          "'missing: dead' reads as dead, after 1 claims");
    free(c.v);

    snprintf(text, sizeof text,
             "{'type':'header','seed':7,'max_attempts':3,'missing':'done'}\n" POISON_17_THRICE
             "%s",
             other);
    run(qc_check_bounded_failure, text, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_MSG_HAS(&c, 0, "'missing: done' reads as done, not dead, after 3 claims");
    free(c.v);

    snprintf(text, sizeof text, "{'type':'header','seed':7,'max_attempts':3}\n" POISON_17_THRICE "%s",
             other);
    run(qc_check_bounded_failure, text, &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_bounded_failure_unknown_max_attempts_judges_snapshot_only)
{
    qc_check c;

    /* Without max_attempts, four claims prove nothing; dead with its error
     * kept passes. */
    run(qc_check_bounded_failure,
        "{'type':'header','seed':7}\n" POISON_17_FOUR_TIMES
        "{'seq':90,'type':'snapshot','job':17,'state':'dead','error':'poison'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* A drain that timed out while the queue was still finishing jobs (done
 * rose in the last 5 s of monitor samples; a loaded machine) leaves poison
 * job 18, claimed once of its 3 attempts, ready: not judged (INCONCLUSIVE,
 * it may have died later), nor after a drain that timed out without
 * progress (no_lost_jobs judges that queue); job 17, ready after all 3 of
 * its attempts, is judged (FAIL) even when the drain was cut short. */
#define CUT_SHORT(d1, d2)                                                                          \
    "{'seq':40,'t':9000,'type':'monitor','ready':1,'inflight':0,'done':" d1 ",'dead':0}\n"        \
    "{'seq':50,'t':12000,'type':'monitor','ready':1,'inflight':0,'done':" d2 ",'dead':0}\n"       \
    "{'seq':62,'t':12102,'type':'end','drained':false,'timed_out':true}\n"

START_TEST(test_bounded_failure_drain_cut_short_attempts_left_not_judged)
{
    qc_check c;
    const char *job18 =
        "{'seq':80,'t':500,'type':'ok','op':'claim','worker':4,'rows':1,'job':18,'token':'e'}\n"
        "{'seq':81,'t':501,'type':'fault','fault':'poison','job':18,'token':'e'}\n"
        "{'seq':91,'t':12100,'type':'snapshot','job':18,'state':'ready'}\n";
    char text[2048];

    snprintf(text, sizeof text, "%s%s%s", HEADER, job18, CUT_SHORT("10", "20"));
    run(qc_check_bounded_failure, text, &c);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_msg(strstr(c.summary, "still finishing") != NULL, "%s", c.summary);
    free(c.v);
    /* a drain that timed out without progress: job 18 still had attempts
     * left, so it is unfinished (no_lost_jobs judges a queue that stopped),
     * not a poison job that failed to die */
    snprintf(text, sizeof text, "%s%s%s", HEADER, job18, CUT_SHORT("20", "20"));
    run(qc_check_bounded_failure, text, &c);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_int_ne(c.verdict, QC_PASS);
    free(c.v);
    snprintf(text, sizeof text, "%s%s%s", HEADER POISON_17_THRICE,
             "{'seq':90,'t':12100,'type':'snapshot','job':17,'state':'ready'}\n",
             CUT_SHORT("10", "20"));
    run(qc_check_bounded_failure, text, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_MSG_HAS(&c, 0, "not dead, after 3 claims");
    free(c.v);
}
END_TEST

START_TEST(test_bounded_failure_no_poison_jobs_inconclusive)
{
    qc_check c;

    run(qc_check_bounded_failure,
        HEADER CLAIM_17_A "{'seq':3,'type':'fault','fault':'kill_after_claim','job':17}\n"
                          "{'seq':4,'type':'snapshot','job':17,'state':'dead'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
}
END_TEST

/* ---- no_early_reap ---------------------------------------------------- */

/* Job 17's lease (claim seq 2, until 6000) renewed at seq 4 until 9000. */
#define RENEWED_17                                                                                 \
    HEADER                                                                                         \
    CLAIM_17_A                                                                                     \
    "{'seq':3,'t':3000,'type':'invoke','op':'renew','worker':3,'req':2,'job':17,"                  \
    "'token':'a'}\n"                                                                               \
    "{'seq':4,'t':3002,'type':'ok','op':'renew','worker':3,'req':2,'job':17,'token':'a',"          \
    "'rows':1,'lease_until':9000.25,'now':4000.25}\n"

START_TEST(test_no_early_reap_reap_before_renewed_lease_end_fails)
{
    qc_check c;

    run(qc_check_no_early_reap,
        RENEWED_17 "{'seq':5,'t':5000,'type':'invoke','op':'reap','worker':-1,'req':9}\n"
                   "{'seq':6,'t':5001,'type':'ok','op':'reap','worker':-1,'req':9,'rows':1,"
                   "'job':17,'token':'a','state':'ready','now':6000.5}\n",
        &c);
    ck_assert_str_eq(c.name, "no_early_reap");
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 2); /* the renew and the reap */
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 2, 4, 6);
    ck_assert_str_eq(c.v[0].msg, "job 17: reaped with token a at seq 6 (at the latest +5001 ms "
                                 "after the claim's server time) while its lease ran until "
                                 "+8000 ms (renew seq 4): 2999 ms early");
    free(c.v);
}
END_TEST

/* decision 1125: a renew that sets a lease shorter than the claim's (a
 * fixed extension) is what the server holds: a reap after the renewed
 * lease ran out is not early, though the claim's lease would still run. */
START_TEST(test_no_early_reap_reap_after_shortening_renew_passes)
{
    qc_check c;

    run(qc_check_no_early_reap,
        HEADER CLAIM_17_A
        "{'seq':3,'t':600,'type':'invoke','op':'renew','worker':3,'req':2,'job':17,"
        "'token':'a'}\n"
        "{'seq':4,'t':602,'type':'ok','op':'renew','worker':3,'req':2,'job':17,'token':'a',"
        "'rows':1,'lease_until':2600.25,'now':1600.25}\n"
        "{'seq':5,'t':2000,'type':'invoke','op':'reap','worker':-1,'req':9}\n"
        "{'seq':6,'t':2001,'type':'ok','op':'reap','worker':-1,'req':9,'rows':1,"
        "'job':17,'token':'a','state':'ready','now':3000.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_int_ge(c.opportunities, 1);
    free(c.v);
}
END_TEST

/* decision 1127: the shortening renew was sent before the reap was
 * answered and acknowledged (rows 1) after it: it matched the token, so it
 * ran before the reap, and the lease the reap saw ended at +1600; a reap at
 * +1800 is not early.  The same renew refused (rows 0) ran after the reap:
 * the claim's lease (+5000) held, and the reap is early. */
#define SHORT_RENEW_IN_FLIGHT(rows)                                                                \
    HEADER CLAIM_17_A                                                                              \
    "{'seq':3,'t':600,'type':'invoke','op':'renew','worker':3,'req':2,'job':17,"                   \
    "'token':'a'}\n"                                                                               \
    "{'seq':4,'t':1790,'type':'invoke','op':'reap','worker':-1,'req':9}\n"                         \
    "{'seq':5,'t':1801,'type':'ok','op':'reap','worker':-1,'req':9,'rows':1,"                      \
    "'job':17,'token':'a','state':'ready','now':2800.5}\n"                                         \
    "{'seq':6,'t':1802,'type':'ok','op':'renew','worker':3,'req':2,'job':17,'token':'a',"          \
    "'rows':" rows ",'lease_until':2600.25,'now':1600.25}\n"

START_TEST(test_no_early_reap_renew_in_flight_during_reap)
{
    qc_check c;

    run(qc_check_no_early_reap, SHORT_RENEW_IN_FLIGHT("1"), &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_int_ge(c.opportunities, 1);
    free(c.v);
    run(qc_check_no_early_reap, SHORT_RENEW_IN_FLIGHT("0"), &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert_msg(strstr(c.v[0].msg, "claim seq 2") != NULL, "%s", c.v[0].msg);
    free(c.v);
}
END_TEST

/* Rule (c): a claim that reads :lease_ms (header) and grants less than
 * half of it.  Job 17: asked 800 ms, granted 0 (lease_ms / 1000 in integer
 * seconds); job 18: granted 300 of 800 but 150 ms in flight, so it may
 * have been up to 451 ms long (not short); job 19: granted 5000. */
#define GRANT_HEADER(reads)                                                                        \
    "{'type':'header','seed':7,'lease_ms':800,'max_attempts':3,'reaper_interval_ms':500,"          \
    "'recovery_slack_ms':2000,'batch':1,'claim_reads_lease_ms':" reads "}\n"
#define GRANTS                                                                                     \
    "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"                    \
    "{'seq':2,'t':2,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,'job':17,"        \
    "'token':'a','now':1000.25,'lease_until':1000.25}\n"                                           \
    "{'seq':3,'t':10,'type':'invoke','op':'claim','worker':4,'inc':0,'req':1}\n"                   \
    "{'seq':4,'t':160,'type':'ok','op':'claim','worker':4,'inc':0,'req':1,'rows':1,'job':18,"      \
    "'token':'b','now':1160.5,'lease_until':1460.5}\n"                                             \
    "{'seq':5,'t':170,'type':'invoke','op':'claim','worker':5,'inc':0,'req':1}\n"                  \
    "{'seq':6,'t':171,'type':'ok','op':'claim','worker':5,'inc':0,'req':1,'rows':1,'job':19,"      \
    "'token':'c','now':1171.5,'lease_until':6171.5}\n"

START_TEST(test_no_early_reap_short_lease_grant_fails)
{
    qc_check c;

    run(qc_check_no_early_reap, GRANT_HEADER("true") GRANTS, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 3);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 1, 2);
    ck_assert_str_eq(c.v[0].msg, "job 17: claim by worker 3 (seq 2) was granted a lease of 0 ms "
                                 "(lease_until - its now; at most 2 ms counting its 2 ms in "
                                 "flight) where it asked for :lease_ms = 800 ms: the lease is "
                                 "short");
    free(c.v);
}
END_TEST

START_TEST(test_no_early_reap_short_lease_not_asked_is_not_judged)
{
    qc_check c;

    /* a claim that does not read :lease_ms picks its own lease; an older
     * ledger does not say */
    run(qc_check_no_early_reap, GRANT_HEADER("false") GRANTS, &c);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    free(c.v);
    run(qc_check_no_early_reap, HEADER GRANTS, &c);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
}
END_TEST

/* Rule (c) for renews (decision 962): job 17 claimed with a full 800 ms
 * lease, then renewed by its owner; the renew's lease_until - now is
 * renew_until - 1261.5. */
#define RENEW_GRANT(reads, renew_until)                                                            \
    "{'type':'header','seed':7,'lease_ms':800,'max_attempts':3,'reaper_interval_ms':500,"          \
    "'recovery_slack_ms':2000,'batch':1,'claim_reads_lease_ms':true,"                              \
    "'renew_reads_lease_ms':" reads "}\n"                                                          \
    "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"                    \
    "{'seq':2,'t':2,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,'job':17,"        \
    "'token':'a','now':1000.25,'lease_until':1800.25}\n"                                           \
    "{'seq':3,'t':260,'type':'invoke','op':'renew','worker':3,'inc':0,'req':2,'job':17,"           \
    "'token':'a'}\n"                                                                               \
    "{'seq':4,'t':262,'type':'ok','op':'renew','worker':3,'inc':0,'req':2,'job':17,"               \
    "'token':'a','rows':1,'now':1261.5,'lease_until':" renew_until "}\n"

START_TEST(test_no_early_reap_short_renew_grant_fails)
{
    qc_check c;

    /* :lease_ms / 1000 in integer seconds in the renew: 800 ms -> 0 s */
    run(qc_check_no_early_reap, RENEW_GRANT("true", "1261.5"), &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 3, 4);
    ck_assert_str_eq(c.v[0].msg, "job 17: renew by worker 3 (seq 4) was granted a lease of 0 ms "
                                 "(lease_until - its now; at most 2 ms counting its 2 ms in "
                                 "flight) where it asked for :lease_ms = 800 ms: the lease is "
                                 "short");
    free(c.v);
}
END_TEST

START_TEST(test_no_early_reap_full_renew_grant_passes)
{
    qc_check c;

    /* the same renew granting its 800 ms: no violation; a renew that does
     * not read :lease_ms (its own lease) is not judged */
    run(qc_check_no_early_reap, RENEW_GRANT("true", "2061.5"), &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
    run(qc_check_no_early_reap, RENEW_GRANT("false", "1261.5"), &c);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_no_early_reap_reap_at_lease_end_passes)
{
    qc_check c;

    /* Job 17: the reap at 9000.25 is exactly at the renewed lease's end.
     * Job 18: the renew answered (seq 13) after the reap was sent (seq 12)
     * may have run after it, so the reap at 15002.5 is judged against the
     * claim's lease until 15000.25 only.  Server times run 1000 ms ahead
     * of the client's throughout (a consistent clock). */
    run(qc_check_no_early_reap,
        RENEWED_17 "{'seq':5,'t':8000,'type':'invoke','op':'reap','worker':-1,'req':9}\n"
                   "{'seq':6,'t':8001,'type':'ok','op':'reap','worker':-1,'req':9,'rows':1,"
                   "'job':17,'token':'a','state':'ready','now':9000.25}\n"
                   "{'seq':10,'t':9000,'type':'ok','op':'claim','worker':4,'req':10,'rows':1,"
                   "'job':18,'token':'x','now':10000.25,'lease_until':15000.25}\n"
                   "{'seq':11,'t':14000,'type':'invoke','op':'renew','worker':4,'req':11,"
                   "'job':18,'token':'x'}\n"
                   "{'seq':12,'t':14001,'type':'invoke','op':'reap','worker':-1,'req':12}\n"
                   "{'seq':13,'t':14002,'type':'ok','op':'renew','worker':4,'req':11,'job':18,"
                   "'token':'x','rows':1,'lease_until':20000.25,'now':15001.25}\n"
                   "{'seq':14,'t':14003,'type':'ok','op':'reap','worker':-1,'req':12,'rows':1,"
                   "'job':18,'token':'x','state':'ready','now':15002.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_int_eq(c.opportunities, 3); /* two reaps, one renew */
    free(c.v);
}
END_TEST

START_TEST(test_no_early_reap_complete_refused_before_lease_end_fails)
{
    qc_check c;

    /* Sent at t 2000, answered at t 2010: it ran by server 1000 + 2010 =
     * 3010 (+ margin), well before 6000, yet was refused. */
    run(qc_check_no_early_reap,
        HEADER CLAIM_17_A
        "{'seq':3,'t':2000,'type':'invoke','op':'complete','worker':3,'inc':0,'req':2,'job':17,"
        "'token':'a'}\n"
        "{'seq':4,'t':2010,'type':'ok','op':'complete','worker':3,'inc':0,'req':2,'job':17,"
        "'token':'a','rows':0}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 2, 3, 4);
    ck_assert_str_eq(c.v[0].msg, "job 17: complete by its owner worker 3 with the current token a "
                                 "was refused (rows 0, seq 4) although it ran by +2013 ms at the "
                                 "latest, before the lease's end at +5000 ms (claim seq 2)");
    free(c.v);
}
END_TEST

/* The proxy's reset (issue 17): the complete's info is followed by its
 * worker's reset fault of the job and token, so the complete never reached
 * the server and the retry, refused while the lease was live, is judged. */
#define RESET_17_A                                                                                 \
    "{'seq':3,'t':2000,'type':'invoke','op':'complete','worker':3,'inc':0,'req':2,'job':17,"       \
    "'token':'a'}\n"                                                                               \
    "{'seq':4,'t':2001,'type':'info','op':'complete','worker':3,'inc':0,'req':2,'job':17,"         \
    "'token':'a','error':'connection lost'}\n"

START_TEST(test_no_early_reap_retry_after_proxy_reset_refused_fails)
{
    qc_check c;

    run(qc_check_no_early_reap,
        HEADER CLAIM_17_A RESET_17_A
        "{'seq':5,'t':2002,'type':'fault','fault':'reset','job':17,'token':'a','worker':3,"
        "'inc':0,'dropped':'complete'}\n"
        "{'seq':6,'t':2010,'type':'invoke','op':'complete','worker':3,'inc':0,'req':3,'job':17,"
        "'token':'a'}\n"
        "{'seq':7,'t':2020,'type':'ok','op':'complete','worker':3,'inc':0,'req':3,'job':17,"
        "'token':'a','rows':0}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 2, 6, 7);
    free(c.v);
}
END_TEST

START_TEST(test_no_early_reap_retry_after_proxy_reset_accepted_passes)
{
    qc_check c;

    run(qc_check_no_early_reap,
        HEADER CLAIM_17_A RESET_17_A
        "{'seq':5,'t':2002,'type':'fault','fault':'reset','job':17,'token':'a','worker':3,"
        "'inc':0,'dropped':'complete'}\n"
        "{'seq':6,'t':2010,'type':'invoke','op':'complete','worker':3,'inc':0,'req':3,'job':17,"
        "'token':'a'}\n"
        "{'seq':7,'t':2020,'type':'ok','op':'complete','worker':3,'inc':0,'req':3,'job':17,"
        "'token':'a','rows':1}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* An info with no reset after it (here the worker's next event is the
 * retry; another worker's reset fault of the job does not count) may have
 * completed the job: its 0-row retry is a lost ack's, rightly refused. */
START_TEST(test_no_early_reap_retry_after_unknown_complete_not_judged)
{
    qc_check c;

    run(qc_check_no_early_reap,
        HEADER CLAIM_17_A RESET_17_A
        "{'seq':5,'t':2010,'type':'invoke','op':'complete','worker':3,'inc':0,'req':3,'job':17,"
        "'token':'a'}\n"
        "{'seq':6,'t':2012,'type':'fault','fault':'reset','job':17,'token':'a','worker':4,"
        "'inc':0}\n"
        "{'seq':7,'t':2020,'type':'ok','op':'complete','worker':3,'inc':0,'req':3,'job':17,"
        "'token':'a','rows':0}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_no_early_reap_renew_refused_then_complete_one_violation)
{
    qc_check c;

    /* The first refusal is the violation; the complete refused after it is
     * a consequence, not a second one. */
    run(qc_check_no_early_reap,
        HEADER CLAIM_17_A
        "{'seq':3,'t':1000,'type':'invoke','op':'renew','worker':3,'req':2,'job':17,'token':'a'}\n"
        "{'seq':4,'t':1002,'type':'ok','op':'renew','worker':3,'req':2,'job':17,'token':'a',"
        "'rows':0}\n"
        "{'seq':5,'t':1010,'type':'invoke','op':'complete','worker':3,'req':3,'job':17,"
        "'token':'a'}\n"
        "{'seq':6,'t':1012,'type':'ok','op':'complete','worker':3,'req':3,'job':17,'token':'a',"
        "'rows':0}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 2, 3, 4);
    ASSERT_MSG_HAS(&c, 0, "renew by its owner worker 3");
    free(c.v);
}
END_TEST

START_TEST(test_no_early_reap_lost_ack_retry_refused_passes)
{
    qc_check c;

    /* The complete committed but its answer was thrown away (info); the
     * retry is rightly refused: it is not judged. */
    run(qc_check_no_early_reap,
        RENEWED_17
        "{'seq':5,'t':3100,'type':'invoke','op':'complete','worker':3,'req':3,'job':17,"
        "'token':'a'}\n"
        "{'seq':6,'t':3101,'type':'info','op':'complete','worker':3,'req':3,'job':17,"
        "'token':'a','error':'lost_ack: answer thrown away'}\n"
        "{'seq':7,'t':3102,'type':'fault','fault':'lost_ack','job':17,'token':'a','worker':3}\n"
        "{'seq':8,'t':3150,'type':'invoke','op':'complete','worker':3,'req':4,'job':17,"
        "'token':'a'}\n"
        "{'seq':9,'t':3152,'type':'ok','op':'complete','worker':3,'req':4,'job':17,'token':'a',"
        "'rows':0}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1); /* the renew */
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_no_early_reap_complete_refused_after_lease_end_passes)
{
    qc_check c;

    /* Job 17's complete may have run as late as 1000 + 5200 = 6200, after
     * its lease's end at 6000: rightly refused, not judged.  Job 18 (owner
     * worker 4): worker 5's refused complete and renew with its token are
     * not the owner's; the owner's own complete succeeds in time. */
    run(qc_check_no_early_reap,
        HEADER CLAIM_17_A
        "{'seq':3,'t':5190,'type':'invoke','op':'complete','worker':3,'req':2,'job':17,"
        "'token':'a'}\n"
        "{'seq':4,'t':5200,'type':'ok','op':'complete','worker':3,'req':2,'job':17,'token':'a',"
        "'rows':0}\n"
        "{'seq':5,'t':6000,'type':'invoke','op':'claim','worker':4,'req':3}\n"
        "{'seq':6,'t':6001,'type':'ok','op':'claim','worker':4,'req':3,'rows':1,'job':18,"
        "'token':'c','now':7000,'lease_until':12000}\n"
        "{'seq':7,'t':6010,'type':'invoke','op':'complete','worker':5,'req':4,'job':18,"
        "'token':'c'}\n"
        "{'seq':8,'t':6011,'type':'ok','op':'complete','worker':5,'req':4,'job':18,"
        "'token':'c','rows':0}\n"
        "{'seq':9,'t':6012,'type':'invoke','op':'renew','worker':5,'req':6,'job':18,"
        "'token':'c'}\n"
        "{'seq':10,'t':6013,'type':'ok','op':'renew','worker':5,'req':6,'job':18,"
        "'token':'c','rows':0}\n"
        "{'seq':11,'t':6020,'type':'invoke','op':'complete','worker':4,'req':5,'job':18,"
        "'token':'c'}\n"
        "{'seq':12,'t':6021,'type':'ok','op':'complete','worker':4,'req':5,'job':18,"
        "'token':'c','rows':1}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_no_early_reap_tokenless_reap_without_time_fails)
{
    qc_check c;

    /* Issue 18: a reap that returns only the job id (no token, no now_ms).
     * The lease it took is job 17's only one; the reap was answered at
     * client t 501, so it ran by server 1000.25 + 501 (+ margin), long
     * before the lease's end at 6000.25. */
    run(qc_check_no_early_reap,
        HEADER CLAIM_17_A "{'seq':3,'t':500,'type':'invoke','op':'reap','worker':-1,'req':9}\n"
                          "{'seq':4,'t':501,'type':'ok','op':'reap','worker':-1,'req':9,'rows':1,"
                          "'job':17}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 2, 4);
    ASSERT_MSG_HAS(&c, 0, "reaped with no token at seq 4");
    free(c.v);
}
END_TEST

START_TEST(test_no_early_reap_reap_rule_unjudged_says_so)
{
    qc_check c;

    /* Neither the claim nor the reap carries a server time: the reap rule
     * cannot judge, and the summary says so (never a silent pass). */
    run(qc_check_no_early_reap,
        HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"
               "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,"
               "'job':17,'token':'a'}\n"
               "{'seq':3,'t':500,'type':'invoke','op':'reap','worker':-1,'req':9}\n"
               "{'seq':4,'t':501,'type':'ok','op':'reap','worker':-1,'req':9,'rows':1,"
               "'job':17}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_msg(strstr(c.summary, "reap rule NOT JUDGED") != NULL, "%s", c.summary);
    free(c.v);
}
END_TEST

START_TEST(test_no_early_reap_whole_second_reap_clock_passes)
{
    qc_check c;

    /* The reap reports whole seconds (its clock truncated): at server
     * 6000.9 it says 6000, before the lease's end at 6000.25, but every
     * reap time is a whole second, so a second of margin is allowed. */
    run(qc_check_no_early_reap,
        HEADER CLAIM_17_A "{'seq':3,'t':5000,'type':'invoke','op':'reap','worker':-1,'req':9}\n"
                          "{'seq':4,'t':5001,'type':'ok','op':'reap','worker':-1,'req':9,'rows':1,"
                          "'job':17,'token':'a','now':6000}\n",
        &c);
    ck_assert_msg(c.verdict == QC_PASS, "%s", c.nstored > 0 ? c.v[0].msg : c.summary);
    free(c.v);
}
END_TEST

START_TEST(test_no_early_reap_server_clock_step_not_judged)
{
    qc_check c;

    /* The server's clock stepped 3 s forward after the claim: by its own
     * clock the lease expired at client t ~2000, the reap at server 6500.5
     * was right, and the owner's complete at t 2600 was rightly refused.
     * The anchor bound (claim at server 1000.25, client 0) would call the
     * refusal early: the step is seen and the owner rule not judged. */
    run(qc_check_no_early_reap,
        HEADER CLAIM_17_A "{'seq':3,'t':2500,'type':'invoke','op':'reap','worker':-1,'req':9}\n"
                          "{'seq':4,'t':2501,'type':'ok','op':'reap','worker':-1,'req':9,'rows':1,"
                          "'job':17,'token':'a','now':6500.5}\n"
                          "{'seq':5,'t':2600,'type':'invoke','op':'complete','worker':3,'inc':0,"
                          "'req':2,'job':17,'token':'a'}\n"
                          "{'seq':6,'t':2601,'type':'ok','op':'complete','worker':3,'inc':0,"
                          "'req':2,'job':17,'token':'a','rows':0}\n",
        &c);
    ck_assert_msg(c.nviolations == 0, "%s", c.nstored > 0 ? c.v[0].msg : c.summary);
    ck_assert_msg(strstr(c.summary, "stepped") != NULL, "%s", c.summary);
    free(c.v);
}
END_TEST

START_TEST(test_no_early_reap_no_leases_inconclusive)
{
    qc_check c;

    /* A claim without an invoke or lease_until bounds nothing; a reap of a
     * token the ledger never saw claimed is not judged. */
    run(qc_check_no_early_reap,
        HEADER "{'seq':1,'t':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,"
               "'token':'a','now':1000}\n"
               "{'seq':2,'t':5,'type':'ok','op':'complete','worker':3,'job':17,'token':'a',"
               "'rows':0}\n"
               "{'seq':3,'t':6,'type':'ok','op':'reap','worker':-1,'rows':1,'job':18,"
               "'token':'q','state':'ready','now':1}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
}
END_TEST

/* ---- batch_bound ------------------------------------------------------ */

START_TEST(test_batch_bound_claim_above_batch_fails)
{
    qc_check c;

    run(qc_check_batch_bound,
        HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'req':5}\n"
               "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'req':5,'rows':3,'job':17,"
               "'token':'a'}\n"
               "{'seq':3,'t':1,'type':'ok','op':'claim','worker':3,'req':5,'rows':3,'job':18,"
               "'token':'b'}\n"
               "{'seq':4,'t':1,'type':'ok','op':'claim','worker':3,'req':5,'rows':3,'job':19,"
               "'token':'c'}\n"
               "{'seq':5,'t':2,'type':'invoke','op':'claim','worker':4,'req':6}\n"
               "{'seq':6,'t':3,'type':'ok','op':'claim','worker':4,'req':6,'rows':2,'job':20,"
               "'token':'d'}\n"
               "{'seq':7,'t':3,'type':'ok','op':'claim','worker':4,'req':6,'rows':2,'job':21,"
               "'token':'e'}\n",
        &c);
    ck_assert_str_eq(c.name, "batch_bound");
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 1, 2, 3, 4);
    ck_assert_str_eq(c.v[0].msg, "claim by worker 3 (req 5) returned 3 jobs, more than the batch "
                                 "of 2: jobs 17, 18, 19");
    free(c.v);
}
END_TEST

START_TEST(test_batch_bound_long_job_list_is_cut_between_ids)
{
    /* One claim returns 40 jobs (10000..10039) with batch 2 (field case
     * C02 took 4,793): the message lists whole job ids only, then "...". */
    char ledger[8192];
    size_t len = (size_t)snprintf(ledger, sizeof ledger, "%s",
                                  HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim',"
                                         "'worker':0,'req':1}\n");
    for (int i = 0; i < 40; i++)
        len += (size_t)snprintf(ledger + len, sizeof ledger - len,
                                "{'seq':%d,'t':1,'type':'ok','op':'claim','worker':0,'req':1,"
                                "'rows':40,'job':%d,'token':'t%d'}\n",
                                i + 2, 10000 + i, i);
    qc_check c;
    run(qc_check_batch_bound, ledger, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    const char *m = c.v[0].msg;
    ASSERT_MSG_HAS(&c, 0, "returned 40 jobs, more than the batch of 2: jobs 10000, 10001, ");
    ck_assert_msg(strstr(m, ",,") == NULL, "message \"%s\" has an empty item", m);
    size_t ml = strlen(m);
    ck_assert_msg(ml > 5 && !strcmp(m + ml - 5, ", ..."), "message \"%s\" is not cut", m);
    /* the last listed id is whole: five digits after the last ", " before "..." */
    const char *last = m + ml - 5;
    while (last > m && last[-1] != ' ')
        last--;
    ck_assert_msg(m + ml - 5 - last == 5, "message \"%s\" cuts an id", m);
    free(c.v);
}
END_TEST

START_TEST(test_batch_bound_violations_in_answer_order)
{
    /* Worker 5's claim was answered first, worker 2's later: the first
     * violation is worker 5's (the first in time, the one a replay meets
     * first), not the lower worker number's. */
    qc_check c;

    run(qc_check_batch_bound,
        HEADER "{'seq':1,'type':'invoke','op':'claim','worker':2,'req':1}\n"
               "{'seq':2,'type':'invoke','op':'claim','worker':5,'req':1}\n"
               "{'seq':3,'type':'ok','op':'claim','worker':5,'req':1,'rows':3,'job':1}\n"
               "{'seq':4,'type':'ok','op':'claim','worker':5,'req':1,'rows':3,'job':2}\n"
               "{'seq':5,'type':'ok','op':'claim','worker':5,'req':1,'rows':3,'job':3}\n"
               "{'seq':6,'type':'ok','op':'claim','worker':2,'req':1,'rows':3,'job':4}\n"
               "{'seq':7,'type':'ok','op':'claim','worker':2,'req':1,'rows':3,'job':5}\n"
               "{'seq':8,'type':'ok','op':'claim','worker':2,'req':1,'rows':3,'job':6}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 2);
    ck_assert_int_eq(c.v[0].job, 1);
    ck_assert_int_eq(c.v[1].job, 4);
    free(c.v);
}
END_TEST

START_TEST(test_batch_bound_claims_within_batch_passes)
{
    qc_check c;

    /* Same req number from two workers are two claims; an empty claim is
     * not counted. */
    run(qc_check_batch_bound,
        HEADER "{'seq':1,'type':'ok','op':'claim','worker':3,'req':5,'rows':2,'job':17}\n"
               "{'seq':2,'type':'ok','op':'claim','worker':3,'req':5,'rows':2,'job':18}\n"
               "{'seq':3,'type':'ok','op':'claim','worker':4,'req':5,'rows':1,'job':19}\n"
               "{'seq':4,'type':'ok','op':'claim','worker':5,'req':7,'rows':0}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_batch_bound_unknown_batch_inconclusive)
{
    qc_check c;

    run(qc_check_batch_bound,
        "{'type':'header','seed':7}\n"
        "{'seq':1,'type':'ok','op':'claim','worker':3,'req':5,'rows':3,'job':17}\n"
        "{'seq':2,'type':'ok','op':'claim','worker':3,'req':5,'rows':3,'job':18}\n"
        "{'seq':3,'type':'ok','op':'claim','worker':3,'req':5,'rows':3,'job':19}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* ---- ledger fields ---------------------------------------------------- */

START_TEST(test_history_header_fault_fields_parsed)
{
    qc_history h;

    memset(&h, 0, sizeof h);
    load(&h, "{'type':'header','seed':7,'batch':4,'poison_mode':'crash',"
             "'checkers':['recovery','effects_once']}\n"
             "{'seq':1,'type':'ok','op':'complete','job':1,'rows':0,'counted':false}\n"
             "{'seq':2,'type':'ok','op':'complete','job':2,'rows':1,'counted':true}\n"
             "{'seq':3,'type':'ok','op':'complete','job':3,'rows':1}\n");
    ck_assert_int_eq(h.info.batch, 4);
    ck_assert_int_eq(h.info.poison_crash, 1);
    ck_assert_str_eq(h.info.checkers, "recovery,effects_once");
    ck_assert_int_eq(h.ev[0].counted, 0);
    ck_assert_int_eq(h.ev[1].counted, 1);
    ck_assert_int_eq(h.ev[2].counted, -1);
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_history_header_fault_fields_absent_defaults)
{
    qc_history h;

    memset(&h, 0, sizeof h);
    load(&h, "{'type':'header','seed':7,'poison_mode':'fail','checkers':[]}\n"
             "{'seq':1,'type':'ok','op':'claim','rows':0}\n");
    ck_assert_int_eq(h.info.batch, -1);
    ck_assert_int_eq(h.info.poison_crash, 0);
    ck_assert_str_eq(h.info.checkers, "");
    qc_history_fini(&h);
    memset(&h, 0, sizeof h);
    load(&h, "{'seq':1,'type':'ok','op':'claim','rows':0}\n");
    ck_assert_int_eq(h.info.batch, -1);
    ck_assert_str_eq(h.info.checkers, "");
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_history_header_bad_checkers_einval)
{
    static const char *const bad[] = {
        "{\"type\":\"header\",\"checkers\":[1]}\n{\"seq\":1,\"type\":\"end\"}\n",
        "{\"type\":\"header\",\"checkers\":{}}\n{\"seq\":1,\"type\":\"end\"}\n",
        "{\"type\":\"header\",\"poison_mode\":3}\n{\"seq\":1,\"type\":\"end\"}\n",
        "{\"type\":\"header\",\"batch\":\"x\"}\n{\"seq\":1,\"type\":\"end\"}\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        qc_history h;
        qc_err err;
        memset(&h, 0, sizeof h);
        memset(&err, 0, sizeof err);
        ck_assert_int_eq(qc_history_parse(&h, bad[i], &err), QC_EINVAL);
        ck_assert_msg(strstr(err.msg, "(text):1: field") != NULL, "%s", err.msg);
        qc_history_fini(&h);
    }
}
END_TEST

static Suite *faults_suite(void)
{
    Suite *s = suite_create("faults");
    TCase *tc;

    tc = tcase_create("stale_token_rejected");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_stale_token_rejected_old_token_accepted_after_reclaim_fails);
    tcase_add_test(tc, test_stale_token_rejected_stall_late_complete_refused_passes);
    tcase_add_test(tc, test_stale_token_rejected_rotated_token_accepted_fails);
    tcase_add_test(tc, test_stale_token_rejected_sent_before_superseding_claim_not_judged);
    tcase_add_test(tc, test_stale_token_rejected_token_given_out_again_passes);
    tcase_add_test(tc, test_stale_token_rejected_token_derived_from_job_accepted_fails);
    tcase_add_test(tc, test_stale_token_rejected_starved_superseding_claim_not_judged);
    tcase_add_test(tc, test_stale_token_rejected_no_stale_requests_inconclusive);
    tcase_add_test(tc, test_stale_token_rejected_renew_after_acked_complete_accepted_fails);
    tcase_add_test(tc, test_stale_token_rejected_renew_after_acked_complete_refused_passes);
    tcase_add_test(tc, test_stale_token_rejected_renew_racing_complete_not_judged);
    suite_add_tcase(s, tc);

    tc = tcase_create("no_false_success");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_no_false_success_zero_row_complete_counted_fails);
    tcase_add_test(tc, test_no_false_success_zero_row_complete_not_counted_passes);
    tcase_add_test(tc, test_no_false_success_no_zero_row_complete_inconclusive);
    suite_add_tcase(s, tc);

    tc = tcase_create("effects_once");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_effects_once_two_applied_effects_fail);
    tcase_add_test(tc, test_effects_once_shared_op_key_never_applied_fails);
    tcase_add_test(tc, test_effects_once_starved_worker_rerun_excused_passes);
    tcase_add_test(tc, test_effects_once_rerun_after_refused_complete_fails);
    tcase_add_test(tc, test_effects_once_no_heartbeat_plan_lapses_fails);
    tcase_add_test(tc, test_effects_once_heartbeat_stopped_first_rerun_fails);
    tcase_add_test(tc, test_effects_once_heartbeat_kept_at_stop_rerun_excused_passes);
    tcase_add_test(tc, test_effects_once_stop_not_before_takeover_excused_passes);
    tcase_add_test(tc, test_effects_once_rerun_within_live_lease_fails);
    tcase_add_test(tc, test_effects_once_stable_key_redelivery_deduplicated_passes);
    tcase_add_test(tc, test_effects_once_single_deliveries_inconclusive);
    tcase_add_test(tc, test_effects_once_fault_or_unknown_outcome_single_delivery_passes);
    suite_add_tcase(s, tc);

    tc = tcase_create("recovery");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_recovery_kill_after_claim_reaped_after_expiry_passes);
    tcase_add_test(tc, test_recovery_reap_pass_after_expiry_misses_job_fails);
    tcase_add_test(tc, test_recovery_bounded_reap_batch_not_judged);
    tcase_add_test(tc, test_recovery_own_heartbeat_may_extend_lease_passes);
    tcase_add_test(tc, test_recovery_other_incarnation_heartbeat_no_excuse_fails);
    tcase_add_test(tc, test_recovery_starved_reaper_late_passes);
    tcase_add_test(tc, test_recovery_pass_with_owner_request_in_flight_not_judged);
    tcase_add_test(tc, test_recovery_no_reaper_empty_claim_after_expiry_fails);
    tcase_add_test(tc, test_recovery_never_recovered_and_not_done_fails);
    tcase_add_test(tc, test_recovery_never_within_recorded_lease_not_a_violation);
    tcase_add_test(tc, test_recovery_stall_completed_by_other_token_passes);
    tcase_add_test(tc, test_recovery_poison_crash_reaped_dead_passes);
    tcase_add_test(tc, test_recovery_poison_fail_mode_not_judged_inconclusive);
    tcase_add_test(tc, test_recovery_times_several_faults_in_seq_order);
    tcase_add_test(tc, test_recovery_no_faults_inconclusive);
    tcase_add_test(tc, test_recovery_job_stuck_after_switch_fails);
    tcase_add_test(tc, test_recovery_jobs_taken_up_after_switch_pass);
    suite_add_tcase(s, tc);

    tc = tcase_create("bounded_failure");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_bounded_failure_claimed_max_attempts_dead_with_error_passes);
    tcase_add_test(tc, test_bounded_failure_too_many_claims_not_dead_no_error_fails);
    tcase_add_test(tc, test_bounded_failure_dead_too_early_fails);
    tcase_add_test(tc, test_bounded_failure_attempts_left_at_drain_timeout_not_judged);
    tcase_add_test(tc, test_bounded_failure_snapshot_without_error_column_not_judged);
    tcase_add_test(tc, test_bounded_failure_missing_header);
    tcase_add_test(tc, test_bounded_failure_drain_cut_short_while_progressing_not_judged);
    tcase_add_test(tc, test_bounded_failure_unknown_max_attempts_judges_snapshot_only);
    tcase_add_test(tc, test_bounded_failure_no_poison_jobs_inconclusive);
    tcase_add_test(tc, test_bounded_failure_drain_cut_short_attempts_left_not_judged);
    suite_add_tcase(s, tc);

    tc = tcase_create("no_early_reap");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_no_early_reap_reap_before_renewed_lease_end_fails);
    tcase_add_test(tc, test_no_early_reap_reap_after_shortening_renew_passes);
    tcase_add_test(tc, test_no_early_reap_renew_in_flight_during_reap);
    tcase_add_test(tc, test_no_early_reap_reap_at_lease_end_passes);
    tcase_add_test(tc, test_no_early_reap_short_lease_grant_fails);
    tcase_add_test(tc, test_no_early_reap_short_lease_not_asked_is_not_judged);
    tcase_add_test(tc, test_no_early_reap_short_renew_grant_fails);
    tcase_add_test(tc, test_no_early_reap_full_renew_grant_passes);
    tcase_add_test(tc, test_no_early_reap_complete_refused_before_lease_end_fails);
    tcase_add_test(tc, test_no_early_reap_renew_refused_then_complete_one_violation);
    tcase_add_test(tc, test_no_early_reap_lost_ack_retry_refused_passes);
    tcase_add_test(tc, test_no_early_reap_complete_refused_after_lease_end_passes);
    tcase_add_test(tc, test_no_early_reap_no_leases_inconclusive);
    tcase_add_test(tc, test_no_early_reap_tokenless_reap_without_time_fails);
    tcase_add_test(tc, test_no_early_reap_reap_rule_unjudged_says_so);
    tcase_add_test(tc, test_no_early_reap_whole_second_reap_clock_passes);
    tcase_add_test(tc, test_no_early_reap_server_clock_step_not_judged);
    tcase_add_test(tc, test_no_early_reap_retry_after_proxy_reset_refused_fails);
    tcase_add_test(tc, test_no_early_reap_retry_after_proxy_reset_accepted_passes);
    tcase_add_test(tc, test_no_early_reap_retry_after_unknown_complete_not_judged);
    suite_add_tcase(s, tc);

    tc = tcase_create("batch_bound");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_batch_bound_claim_above_batch_fails);
    tcase_add_test(tc, test_batch_bound_claims_within_batch_passes);
    tcase_add_test(tc, test_batch_bound_violations_in_answer_order);
    tcase_add_test(tc, test_batch_bound_long_job_list_is_cut_between_ids);
    tcase_add_test(tc, test_batch_bound_unknown_batch_inconclusive);
    suite_add_tcase(s, tc);

    tc = tcase_create("ledger_fields");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_history_header_fault_fields_parsed);
    tcase_add_test(tc, test_history_header_fault_fields_absent_defaults);
    tcase_add_test(tc, test_history_header_bad_checkers_einval);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(faults_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
