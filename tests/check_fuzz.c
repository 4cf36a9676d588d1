/*
 * check_fuzz.c - the fuzz targets' regression tests: every input under
 * tests/fuzz/regress/NAME/ (each crash or sanitizer report the fuzzers
 * found, kept with its fix) and every seed under tests/fuzz/corpus/NAME/
 * goes through the target NAME once more.  Built normally it proves the
 * inputs are handled; `make fuzz` also builds tests/check_fuzz-san with
 * ASan and UBSan (halting), where an input that brings a bug back aborts.
 *
 * TCases: scenario, protocol, ledger (one per target).
 */
#define QC_FUZZ_LIBRARY 1
#include <check.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_ledger.c"
#include "fuzz/fuzz_protocol.c"
#include "fuzz/fuzz_scenario.c"

typedef int (*fuzz_fn)(const uint8_t *, size_t);

/* Feeds every regular file of dir to fn; returns how many. */
static int feed_dir(const char *dir, fuzz_fn fn)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL) {
        char path[1024];
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        ck_assert_msg(f != NULL, "cannot open %s", path);
        fseek(f, 0, SEEK_END);
        long len = ftell(f);
        fseek(f, 0, SEEK_SET);
        uint8_t *buf = malloc((size_t)len + 1);
        ck_assert_ptr_nonnull(buf);
        ck_assert_uint_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
        fclose(f);
        fn(buf, (size_t)len);
        free(buf);
        n++;
    }
    closedir(d);
    return n;
}

static void feed(const char *name, fuzz_fn fn, int min_seeds)
{
    char dir[256];
    snprintf(dir, sizeof dir, "tests/fuzz/corpus/%s", name);
    int seeds = feed_dir(dir, fn);
    ck_assert_msg(seeds >= min_seeds, "%s: %d seeds (want >= %d)", dir, seeds, min_seeds);
    snprintf(dir, sizeof dir, "tests/fuzz/regress/%s", name);
    int regress = feed_dir(dir, fn);
    fprintf(stderr, "check_fuzz: %s: %d seeds, %d regression inputs\n", name, seeds, regress);
}

START_TEST(test_fuzz_scenario_inputs)
{
    feed("scenario", qc_fuzz_scenario, 10);
}
END_TEST

START_TEST(test_fuzz_protocol_inputs)
{
    feed("protocol", qc_fuzz_protocol, 10);
}
END_TEST

START_TEST(test_fuzz_ledger_inputs)
{
    feed("ledger", qc_fuzz_ledger, 3);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuzz");
    TCase *tc = tcase_create("scenario");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_fuzz_scenario_inputs);
    suite_add_tcase(s, tc);
    tc = tcase_create("protocol");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_fuzz_protocol_inputs);
    suite_add_tcase(s, tc);
    tc = tcase_create("ledger");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_fuzz_ledger_inputs);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
