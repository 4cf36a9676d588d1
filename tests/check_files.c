/*
 * check_files.c - every protocol file in backends/ and every scenario file
 * in scenarios/ loads cleanly (the untested engines' files too: a broken
 * SQL Server or Spanner protocol must at least not be a broken file), and
 * every mutant names the checkers that must catch it and a scenario that
 * exists.
 */
#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../backends/protocol.h"
#include "../harness/scenario.h"

static const char *const patterns[] = {"backends/*/*.sql", "backends/*/mutants/*.sql",
                                       "backends/*/unreproduced/*.sql"};

START_TEST(test_files_every_protocol_loads)
{
    int n = 0;
    for (size_t k = 0; k < sizeof patterns / sizeof *patterns; k++) {
        glob_t g;
        if (glob(patterns[k], 0, NULL, &g) != 0)
            continue;
        for (size_t i = 0; i < g.gl_pathc; i++) {
            const char *path = g.gl_pathv[i];
            qc_protocol *p = NULL;
            qc_err err = {0};
            qc_param_style style =
                (strstr(path, "/mariadb/") || strstr(path, "/sqlserver/")) ? QC_PARAM_QMARK
                                                                             : QC_PARAM_DOLLAR;
            ck_assert_msg(qc_protocol_load(path, style, &p, &err) == 0, "%s", err.msg);
            if (strstr(path, "/mutants/")) {
                ck_assert_msg(p->expect && *p->expect, "%s has no -- expect:", path);
                ck_assert_msg(p->scenario && access(p->scenario, R_OK) == 0,
                              "%s: scenario '%s' missing", path, p->scenario ? p->scenario : "");
            }
            qc_protocol_destroy(p);
            n++;
        }
        globfree(&g);
    }
    ck_assert_int_ge(n, 20);
}
END_TEST

START_TEST(test_files_every_scenario_loads)
{
    const char *const pats[] = {"scenarios/*.ini", "scenarios/*/*.ini"};
    int n = 0;
    for (size_t k = 0; k < 2; k++) {
        glob_t g;
        if (glob(pats[k], 0, NULL, &g) != 0)
            continue;
        for (size_t i = 0; i < g.gl_pathc; i++) {
            qc_scenario s;
            qc_err err = {0};
            qc_scenario_defaults(&s);
            ck_assert_msg(qc_scenario_load(&s, g.gl_pathv[i], &err) == 0, "%s", err.msg);
            ck_assert_msg(qc_scenario_validate(&s, &err) == 0, "%s", err.msg);
            n++;
        }
        globfree(&g);
    }
    ck_assert_int_ge(n, 20);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("files");
    TCase *tc = tcase_create("load");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_files_every_protocol_loads);
    tcase_add_test(tc, test_files_every_scenario_loads);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
