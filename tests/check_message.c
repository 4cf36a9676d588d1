/*
 * check_message.c - unit tests of the message_once checker
 * (harness/check_message.c, shared/cases.md C23: two physical copies of
 * one message both run the handler) and of the effect sink's per-job keys
 * that keep the harness from hiding that race (harness/sink.h).
 *
 * Hand-written ledgers (' for "): two copies of message A (jobs 1 and 2,
 * adjacent) claimed by two workers at once; the check-then-act outbox lets
 * both run (FAIL, with both copies' claims, dedup answers and effects),
 * the insert-first outbox suppresses the second (PASS); a queue with no
 * dedup step at all (FAIL, claims and effects only); one copy's own
 * redelivery after a crash (effects_once's, not this rule: PASS); a run
 * whose second copy was never claimed (INCONCLUSIVE); ledgers without
 * copies (NOT_APPLICABLE).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/checkers.h"
#include "../harness/history.h"
#include "../harness/sink.h"
#include "ledger_fixture.h"

#define HEADER                                                                                     \
    "{'type':'header','seed':7,'lease_ms':5000,'max_attempts':3,'reaper_interval_ms':500,"         \
    "'recovery_slack_ms':2000,'batch':1,'sink':'plain','copies':2}\n"

#define MSG_A "5b1e0c2a-0000-4000-8000-00000000000a"
#define MSG_B "5b1e0c2a-0000-4000-8000-00000000000b"

/* Message A in two copies (jobs 1, 2), message B in two (jobs 3, 4). */
#define ENQUEUE                                                                                    \
    "{'seq':1,'t':0,'type':'ok','op':'enqueue','worker':-1,'job':1,'message':'" MSG_A "',"        \
    "'copy':0}\n"                                                                                  \
    "{'seq':2,'t':0,'type':'ok','op':'enqueue','worker':-1,'job':2,'message':'" MSG_A "',"        \
    "'copy':1}\n"                                                                                  \
    "{'seq':3,'t':0,'type':'ok','op':'enqueue','worker':-1,'job':3,'message':'" MSG_B "',"        \
    "'copy':0}\n"                                                                                  \
    "{'seq':4,'t':0,'type':'ok','op':'enqueue','worker':-1,'job':4,'message':'" MSG_B "',"        \
    "'copy':1}\n"

/* Worker W claims job J with token T (seqs S, S + 1). */
#define CLAIM(s1, s2, w, j, tok)                                                                   \
    "{'seq':" s1 ",'t':" s1 ",'type':'invoke','op':'claim','worker':" w ",'inc':0,'req':" s1 "}\n" \
    "{'seq':" s2 ",'t':" s2 ",'type':'ok','op':'claim','worker':" w ",'inc':0,'req':" s1 ","      \
    "'rows':1,'job':" j ",'token':'" tok "','attempt':1,'now':1000" s2 ",'lease_until':9000" s2  \
    "}\n"

/* Its outbox check, answered run = RUN (seqs S, S + 1). */
#define DEDUP(s1, s2, w, j, tok, run)                                                              \
    "{'seq':" s1 ",'t':" s1 ",'type':'invoke','op':'dedup','worker':" w ",'inc':0,'req':" s1     \
    ",'job':" j ",'token':'" tok "'}\n"                                                            \
    "{'seq':" s2 ",'t':" s2 ",'type':'ok','op':'dedup','worker':" w ",'inc':0,'req':" s1         \
    ",'job':" j ",'token':'" tok "','rows':1,'run':" run "}\n"

#define EFFECT(s, w, j, tok)                                                                       \
    "{'seq':" s ",'t':" s ",'type':'effect','worker':" w ",'inc':0,'job':" j ",'token':'" tok    \
    "','op_key':'" j "','applied':true,'work_ms':30}\n"

#define COMPLETE(s1, s2, w, j, tok)                                                                \
    "{'seq':" s1 ",'t':" s1 ",'type':'invoke','op':'complete','worker':" w ",'inc':0,'req':" s1  \
    ",'job':" j ",'token':'" tok "'}\n"                                                            \
    "{'seq':" s2 ",'t':" s2 ",'type':'ok','op':'complete','worker':" w ",'inc':0,'req':" s1      \
    ",'job':" j ",'token':'" tok "','rows':1,'counted':true}\n"

/* Message B: the first copy runs, the second is suppressed. */
#define MESSAGE_B_ONCE                                                                             \
    CLAIM("40", "41", "2", "3", "c") DEDUP("42", "43", "2", "3", "c", "true")                      \
        EFFECT("44", "2", "3", "c") COMPLETE("45", "46", "2", "3", "c")                            \
            CLAIM("47", "48", "3", "4", "d") DEDUP("49", "50", "3", "4", "d", "false")             \
                COMPLETE("51", "52", "3", "4", "d")

/* C23: both copies of message A are claimed before either's dedup is
 * answered; the check-then-act outbox finds no record for either, and
 * both run the handler. */
START_TEST(test_message_once_check_then_act_both_copies_run_fails)
{
    qc_check c;

    run(qc_check_message_once,
        HEADER ENQUEUE CLAIM("10", "11", "0", "1", "a") CLAIM("12", "13", "1", "2", "b")
            DEDUP("14", "15", "0", "1", "a", "true") DEDUP("16", "17", "1", "2", "b", "true")
                EFFECT("18", "0", "1", "a") EFFECT("19", "1", "2", "b")
                    COMPLETE("20", "21", "0", "1", "a") COMPLETE("22", "23", "1", "2", "b")
                        MESSAGE_B_ONCE,
        &c);
    ck_assert_str_eq(c.name, "message_once");
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 1);
    /* both claims, both dedup answers, both applied effects */
    ASSERT_VIOLATION(&c, 0, 1, 11, 13, 15, 17, 18, 19);
    ck_assert_str_eq(c.v[0].msg,
                     "message " MSG_A " applied by 2 of its 2 copies: job 1 (worker 0: claim seq "
                     "11, dedup said run seq 15, effect seq 18), job 2 (worker 1: claim seq 13, "
                     "dedup said run seq 17, effect seq 19)");
    ck_assert_msg(strstr(c.summary, "2 messages in 4 copies") != NULL &&
                      strstr(c.summary, "4 dedup answers (1 copies suppressed)") != NULL &&
                      strstr(c.summary, "1 messages applied by more than one copy") != NULL,
                  "%s", c.summary);
    free(c.v);
}
END_TEST

/* The insert-first outbox: the same interleaving, but the second copy's
 * dedup finds the first's record and says run false; it is completed
 * without an effect. */
START_TEST(test_message_once_insert_first_second_copy_suppressed_passes)
{
    qc_check c;

    run(qc_check_message_once,
        HEADER ENQUEUE CLAIM("10", "11", "0", "1", "a") CLAIM("12", "13", "1", "2", "b")
            DEDUP("14", "15", "0", "1", "a", "true") DEDUP("16", "17", "1", "2", "b", "false")
                EFFECT("18", "0", "1", "a") COMPLETE("20", "21", "0", "1", "a")
                    COMPLETE("22", "23", "1", "2", "b") MESSAGE_B_ONCE,
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_msg(strstr(c.summary, "(2 copies suppressed)") != NULL, "%s", c.summary);
    free(c.v);
}
END_TEST

/* A queue without a dedup step delivers both copies to the handler: the
 * evidence is the two claims and the two effects. */
START_TEST(test_message_once_no_dedup_step_both_copies_run_fails)
{
    qc_check c;

    run(qc_check_message_once,
        HEADER ENQUEUE CLAIM("10", "11", "0", "1", "a") CLAIM("12", "13", "1", "2", "b")
            EFFECT("18", "0", "1", "a") EFFECT("19", "1", "2", "b")
                COMPLETE("20", "21", "0", "1", "a") COMPLETE("22", "23", "1", "2", "b"),
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 1, 11, 13, 18, 19);
    ck_assert_msg(strstr(c.v[0].msg, "job 1 (worker 0: claim seq 11, effect seq 18)") != NULL,
                  "%s", c.v[0].msg);
    free(c.v);
}
END_TEST

/* Copy 1's worker dies after its effect; the reaper gives the job back and
 * worker 2 runs it again (the outbox record is its own job's): two
 * applied effects of one copy are effects_once's rule, not this one's.
 * Copy 2 is suppressed. */
START_TEST(test_message_once_one_copy_redelivered_not_judged_passes)
{
    qc_check c;

    run(qc_check_message_once,
        HEADER ENQUEUE CLAIM("10", "11", "0", "1", "a") DEDUP("14", "15", "0", "1", "a", "true")
            EFFECT("18", "0", "1", "a")
            "{'seq':19,'t':19,'type':'fault','fault':'kill_after_effect','worker':0,'inc':0,"
            "'job':1,'token':'a'}\n" CLAIM("24", "25", "1", "2", "b")
                DEDUP("26", "27", "1", "2", "b", "false") COMPLETE("28", "29", "1", "2", "b")
                    CLAIM("30", "31", "2", "1", "e") DEDUP("32", "33", "2", "1", "e", "true")
                        EFFECT("34", "2", "1", "e") COMPLETE("35", "36", "2", "1", "e"),
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* Copies were enqueued, but the run ended before any message had its
 * second copy claimed: no opportunity, never a PASS. */
START_TEST(test_message_once_second_copy_never_claimed_inconclusive)
{
    qc_check c;

    run(qc_check_message_once,
        HEADER ENQUEUE CLAIM("10", "11", "0", "1", "a") DEDUP("14", "15", "0", "1", "a", "true")
            EFFECT("18", "0", "1", "a") COMPLETE("20", "21", "0", "1", "a")
            "{'seq':30,'t':30,'type':'end','interrupted':true}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_msg(strstr(c.summary, "no message had two of its copies claimed") != NULL, "%s",
                  c.summary);
    free(c.v);
}
END_TEST

/* copies = 1: every message is its own job (no "message" on the enqueues,
 * or each message once): the rule does not apply, whatever the effects. */
START_TEST(test_message_once_without_copies_not_applicable)
{
    qc_check c;

    run(qc_check_message_once,
        "{'type':'header','seed':7,'lease_ms':5000}\n"
        "{'seq':1,'t':0,'type':'ok','op':'enqueue','worker':-1,'job':1}\n"
        "{'seq':2,'t':0,'type':'ok','op':'enqueue','worker':-1,'job':2}\n" CLAIM(
            "10", "11", "0", "1", "a") CLAIM("12", "13", "1", "2", "b") EFFECT("18", "0", "1", "a")
            EFFECT("19", "1", "2", "b"),
        &c);
    ck_assert_int_eq(c.verdict, QC_NOT_APPLICABLE);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);

    run(qc_check_message_once,
        "{'type':'header','seed':7,'lease_ms':5000}\n"
        "{'seq':1,'t':0,'type':'ok','op':'enqueue','worker':-1,'job':1,'message':'" MSG_A "'}\n"
        "{'seq':2,'t':0,'type':'ok','op':'enqueue','worker':-1,'job':2,'message':'" MSG_B "'}\n"
            CLAIM("10", "11", "0", "1", "a") CLAIM("12", "13", "1", "2", "b")
                EFFECT("18", "0", "1", "a") EFFECT("19", "1", "2", "b"),
        &c);
    ck_assert_int_eq(c.verdict, QC_NOT_APPLICABLE);
    ck_assert_msg(strstr(c.summary, "no message was enqueued in more than one copy") != NULL,
                  "%s", c.summary);
    free(c.v);
}
END_TEST

/* The ledger reader: "dedup" is an op of its own, "run" and "message"
 * are read, by the flat scanner (_i 0) and by jansson (_i 1) alike. */
START_TEST(test_message_ledger_fields_parsed)
{
    qc_history h;

    if (_i == 1)
        setenv("QC_LEDGER_PARSER", "jansson", 1); /* CK_FORK: this test's process only */
    memset(&h, 0, sizeof h);
    load(&h, HEADER ENQUEUE DEDUP("14", "15", "0", "1", "a", "false")
                 "{'seq':16,'t':16,'type':'ok','op':'dedup','worker':0,'inc':0,'req':14,"
                 "'job':1,'token':'a','rows':1,'run':true}\n");
    ck_assert_uint_eq(h.n, 7);
    ck_assert_str_eq(qc_x(h.ev[0].x)->message, MSG_A);
    ck_assert_int_eq(h.ev[4].op, QC_OP_DEDUP);
    ck_assert_int_eq(h.ev[4].type, QC_EV_INVOKE);
    ck_assert_int_eq(h.ev[5].op, QC_OP_DEDUP);
    ck_assert_int_eq(qc_x(h.ev[5].x)->run, 0);
    ck_assert_int_eq(h.ev[5].invoke, 4);
    ck_assert_int_eq(qc_x(h.ev[6].x)->run, 1);
    ck_assert_int_eq(qc_x(h.ev[4].x)->run, -1);
    ck_assert_ptr_null(qc_x(h.ev[4].x)->message);
    ck_assert_str_eq(qc_op_name(QC_OP_DEDUP), "dedup");
    if (_i == 1)
        ck_assert_uint_eq(h.fast_lines, 0);
    qc_history_fini(&h);
}
END_TEST

/* With copies the sink keys an effect by job and op key: two copies with
 * one op key both apply, one copy's redelivery is still deduplicated; the
 * sink without per-job keys would have hidden the second copy. */
START_TEST(test_sink_per_job_keys_copies_both_apply)
{
    qc_sink *s = qc_sink_create(1, 1);
    long delivered, applied;

    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(qc_sink_deliver(s, MSG_A, 1), 1);
    ck_assert_int_eq(qc_sink_deliver(s, MSG_A, 2), 1);
    ck_assert_int_eq(qc_sink_deliver(s, MSG_A, 1), 0);
    ck_assert_int_eq(qc_sink_deliver(s, NULL, 3), 1);
    ck_assert_int_eq(qc_sink_deliver(s, NULL, 3), 0);
    qc_sink_counts(s, &delivered, &applied);
    ck_assert_int_eq(delivered, 5);
    ck_assert_int_eq(applied, 3);
    qc_sink_destroy(s);

    s = qc_sink_create(1, 0);
    ck_assert_int_eq(qc_sink_deliver(s, MSG_A, 1), 1);
    ck_assert_int_eq(qc_sink_deliver(s, MSG_A, 2), 0);
    qc_sink_destroy(s);

    s = qc_sink_create(0, 1); /* plain: every delivery */
    ck_assert_int_eq(qc_sink_deliver(s, MSG_A, 1), 1);
    ck_assert_int_eq(qc_sink_deliver(s, MSG_A, 1), 1);
    qc_sink_destroy(s);
    qc_sink_destroy(NULL);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("message");
    TCase *t = tcase_create("message_once");
    tcase_set_timeout(t, 30);
    tcase_add_test(t, test_message_once_check_then_act_both_copies_run_fails);
    tcase_add_test(t, test_message_once_insert_first_second_copy_suppressed_passes);
    tcase_add_test(t, test_message_once_no_dedup_step_both_copies_run_fails);
    tcase_add_test(t, test_message_once_one_copy_redelivered_not_judged_passes);
    tcase_add_test(t, test_message_once_second_copy_never_claimed_inconclusive);
    tcase_add_test(t, test_message_once_without_copies_not_applicable);
    tcase_add_loop_test(t, test_message_ledger_fields_parsed, 0, 2);
    suite_add_tcase(s, t);
    TCase *k = tcase_create("sink");
    tcase_set_timeout(k, 30);
    tcase_add_test(k, test_sink_per_job_keys_copies_both_apply);
    suite_add_tcase(s, k);
    return s;
}

int main(void)
{
    SRunner *r = srunner_create(suite());
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
