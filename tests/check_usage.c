/*
 * check_usage.c - the harness's own resources (issue 16, 1,000 workers):
 *   - the stop bell (clock.h): a thread in qc_clock_sleep_until_stop is
 *     woken by qc_clock_stop long before its sleep would end, sees a flag
 *     stored without the bell within its 1 s slice, and sleeps its full
 *     time (returning 0) when nobody stops it;
 *   - qc_usage_reserve_fds raises the soft open-files limit up to the hard
 *     one and refuses a need above the hard limit with both numbers named;
 *   - qc_usage_json's arithmetic (CPU seconds, cores, CPU ms per 1,000
 *     jobs, peak RSS in MiB) on readings given by hand, and qc_usage_now
 *     on this process.
 * The deadlines below are bounds of correctness (a sleep of 10 s woken
 * within 5 s), far from the values expected, never speed targets.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../harness/clock.h"
#include "../harness/usage.h"

typedef struct sleeper {
    atomic_int *flag;
    double ms;
    int rc;
    double took_ms;
} sleeper;

static void *sleeper_main(void *arg)
{
    sleeper *s = arg;
    double t0 = qc_clock_ms();
    s->rc = qc_clock_sleep_until_stop(s->ms, s->flag);
    s->took_ms = qc_clock_ms() - t0;
    return NULL;
}

/* Four threads sleeping 10 s on one flag: qc_clock_stop wakes them all. */
START_TEST(test_clock_stop_wakes_every_sleeper)
{
    atomic_int flag = 0;
    sleeper s[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        s[i] = (sleeper){&flag, 10000.0, -1, 0};
        ck_assert_int_eq(pthread_create(&t[i], NULL, sleeper_main, &s[i]), 0);
    }
    qc_clock_sleep_ms(50);
    qc_clock_stop(&flag);
    ck_assert_int_eq(atomic_load(&flag), 1);
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(s[i].rc, 1);
        ck_assert_msg(s[i].took_ms < 5000, "sleeper %d took %.0f ms", i, s[i].took_ms);
    }
}
END_TEST

/* A flag stored without the bell is still seen (the 1 s slices). */
START_TEST(test_clock_plain_store_seen_within_slices)
{
    atomic_int flag = 0;
    sleeper s = {&flag, 10000.0, -1, 0};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, sleeper_main, &s), 0);
    qc_clock_sleep_ms(50);
    atomic_store(&flag, 1);
    pthread_join(t, NULL);
    ck_assert_int_eq(s.rc, 1);
    ck_assert_msg(s.took_ms < 5000, "took %.0f ms", s.took_ms);
}
END_TEST

/* Nobody stops it: the whole sleep, 0; a stop of another flag does not
 * end it either; a flag already set returns 1 at once. */
START_TEST(test_clock_sleep_unstopped_runs_its_time)
{
    atomic_int flag = 0, other = 0;
    sleeper s = {&flag, 300.0, -1, 0};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, sleeper_main, &s), 0);
    qc_clock_sleep_ms(20);
    qc_clock_stop(&other);
    pthread_join(t, NULL);
    ck_assert_int_eq(s.rc, 0);
    ck_assert_msg(s.took_ms >= 299.0, "took %.1f ms", s.took_ms);
    atomic_store(&flag, 1);
    ck_assert_int_eq(qc_clock_sleep_until_stop(10000.0, &flag), 1);
    ck_assert_int_eq(qc_clock_sleep_until_stop(0, &other), 1);
}
END_TEST

/* Soft 64, hard 128 (this forked test's own limits): a need of 100 raises
 * the soft limit to 100; 50 leaves it; 200 is refused naming 200 and 128. */
START_TEST(test_usage_reserve_fds_raises_soft_refuses_above_hard)
{
    struct rlimit rl = {64, 128};
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
    long soft = 0;
    qc_err err = {0};
    ck_assert_int_eq(qc_usage_reserve_fds(100, &soft, &err), 0);
    ck_assert_int_eq(soft, 100);
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    ck_assert_int_eq((long)rl.rlim_cur, 100);
    ck_assert_int_eq((long)rl.rlim_max, 128);
    ck_assert_int_eq(qc_usage_reserve_fds(50, &soft, &err), 0);
    ck_assert_int_eq(soft, 100);
    ck_assert_int_eq(qc_usage_reserve_fds(200, &soft, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "200 open files needed") && strstr(err.msg, "hard limit is 128"),
                  "got '%s'", err.msg);
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    ck_assert_int_eq((long)rl.rlim_cur, 100); /* untouched by the refusal */
}
END_TEST

/* 3 s of CPU (2 user, 1 sys) over 6 s for 20,000 jobs: 0.5 cores, 150 ms
 * per 1,000 jobs; 153,600 KiB peak is 150 MiB. */
START_TEST(test_usage_json_arithmetic)
{
    qc_usage a = {1.0, 0.5, 1000.0, 1000};
    qc_usage b = {3.0, 1.5, 7000.0, 153600};
    json_t *o = qc_usage_json(&a, &b, 20000);
    ck_assert_ptr_nonnull(o);
    ck_assert_double_eq_tol(json_real_value(json_object_get(o, "cpu_s")), 3.0, 1e-9);
    ck_assert_double_eq_tol(json_real_value(json_object_get(o, "cpu_user_s")), 2.0, 1e-9);
    ck_assert_double_eq_tol(json_real_value(json_object_get(o, "cpu_sys_s")), 1.0, 1e-9);
    ck_assert_double_eq_tol(json_real_value(json_object_get(o, "wall_s")), 6.0, 1e-9);
    ck_assert_double_eq_tol(json_real_value(json_object_get(o, "cores")), 0.5, 1e-9);
    ck_assert_double_eq_tol(json_real_value(json_object_get(o, "cpu_ms_per_1000_jobs")), 150.0,
                            1e-9);
    ck_assert_double_eq_tol(json_real_value(json_object_get(o, "peak_rss_mb")), 150.0, 1e-9);
    json_decref(o);
    /* no jobs: no per-job figure rather than a division by zero */
    o = qc_usage_json(&a, &b, 0);
    ck_assert_ptr_null(json_object_get(o, "cpu_ms_per_1000_jobs"));
    json_decref(o);
}
END_TEST

/* This process's own reading: CPU grows with work, the peak RSS is set. */
START_TEST(test_usage_now_reads_this_process)
{
    qc_usage a, b;
    qc_usage_now(&a);
    volatile double x = 0;
    double t0 = qc_clock_ms();
    while (qc_clock_ms() - t0 < 50) /* 50 ms of CPU */
        for (int i = 0; i < 10000; i++)
            x += i * 0.5;
    qc_usage_now(&b);
    ck_assert(b.user_s + b.sys_s > a.user_s + a.sys_s);
    ck_assert(b.wall_ms >= a.wall_ms + 50);
    ck_assert_int_gt(b.maxrss_kb, 0);
    ck_assert_int_ge(b.maxrss_kb, a.maxrss_kb);
}
END_TEST

static Suite *usage_suite(void)
{
    Suite *s = suite_create("usage");
    TCase *tc = tcase_create("stop_bell");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_clock_stop_wakes_every_sleeper);
    tcase_add_test(tc, test_clock_plain_store_seen_within_slices);
    tcase_add_test(tc, test_clock_sleep_unstopped_runs_its_time);
    suite_add_tcase(s, tc);
    TCase *tr = tcase_create("resources");
    tcase_set_timeout(tr, 10);
    tcase_add_test(tr, test_usage_reserve_fds_raises_soft_refuses_above_hard);
    tcase_add_test(tr, test_usage_json_arithmetic);
    tcase_add_test(tr, test_usage_now_reads_this_process);
    suite_add_tcase(s, tr);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(usage_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
