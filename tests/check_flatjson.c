/*
 * check_flatjson.c - the ledger's fast reader (harness/flatjson.h, the flat
 * scanner behind qc_history_load) against the jansson reader it stands in
 * for (QC_LEDGER_PARSER=jansson): the same events, field by field, or the
 * same error message, on crafted lines (escapes, unicode, big numbers,
 * reordered, missing and duplicate keys, nested values, bad JSON), on the
 * fuzz corpus' ledgers, on ledgers qchaos writes on a real PostgreSQL
 * (QC_TEST_DSN: the chaos scenario with the witness, LISTEN, the proxy's
 * lost ack), and on any ledgers
 * named in QC_COMPARE_LEDGERS (space separated).  A test also asserts that
 * the fast path read the writer's lines, so a scanner that gave every line
 * to jansson would fail.
 */
#include <check.h>
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../harness/flatjson.h"
#include "../harness/history.h"
#include "event_compare.h"

#define HDR "{\"type\":\"header\",\"seed\":1,\"lease_ms\":5000}\n"

typedef struct both {
    qc_history fast, slow;
    int rc_fast, rc_slow;
    qc_err err_fast, err_slow;
} both;

static void load_both(both *b, const char *text, const char *path)
{
    memset(b, 0, sizeof *b);
    const char *paths[1] = {path};
    unsetenv("QC_LEDGER_PARSER");
    b->rc_fast = text ? qc_history_parse(&b->fast, text, &b->err_fast)
                      : qc_history_load(&b->fast, paths, 1, &b->err_fast);
    setenv("QC_LEDGER_PARSER", "jansson", 1);
    b->rc_slow = text ? qc_history_parse(&b->slow, text, &b->err_slow)
                      : qc_history_load(&b->slow, paths, 1, &b->err_slow);
    unsetenv("QC_LEDGER_PARSER");
}

/* Asserts both readers agree: rc, message, torn count and every event. */
static void assert_same(both *b, const char *what)
{
    char why[512];

    ck_assert_msg(b->rc_fast == b->rc_slow, "%s: rc %d (fast, %s) vs %d (jansson, %s)", what,
                  b->rc_fast, b->err_fast.msg, b->rc_slow, b->err_slow.msg);
    if (b->rc_fast != 0) {
        ck_assert_msg(strcmp(b->err_fast.msg, b->err_slow.msg) == 0, "%s: '%s' vs '%s'", what,
                      b->err_fast.msg, b->err_slow.msg);
        return;
    }
    ck_assert_msg(b->fast.n == b->slow.n, "%s: %zu vs %zu events", what, b->fast.n, b->slow.n);
    ck_assert_msg(b->fast.torn == b->slow.torn, "%s: torn %zu vs %zu", what, b->fast.torn,
                  b->slow.torn);
    ck_assert_msg(b->slow.fast_lines == 0, "%s: QC_LEDGER_PARSER=jansson used the fast path",
                  what);
    for (size_t i = 0; i < b->fast.n; i++)
        ck_assert_msg(!event_differs(&b->fast.ev[i], &b->slow.ev[i], why, sizeof why),
                      "%s: event %zu (line %d): %s", what, i, b->fast.ev[i].line, why);
    ck_assert_msg(memcmp(&b->fast.info, &b->slow.info, sizeof b->fast.info) == 0,
                  "%s: header info differs", what);
}

static void both_fini(both *b)
{
    qc_history_fini(&b->fast);
    qc_history_fini(&b->slow);
}

/* Lines the writer writes (harness/ledger.c: insertion order, fixed
 * decimals) and lines a user may have edited. */
static const char *const lines[] = {
    /* as qchaos writes them */
    "{\"type\":\"invoke\",\"op\":\"claim\",\"worker\":3,\"inc\":0,\"req\":55,\"pause_ms\":5.250,"
    "\"seq\":7,\"t\":12.345}",
    "{\"type\":\"ok\",\"op\":\"claim\",\"worker\":3,\"inc\":0,\"req\":55,\"rows\":1,\"job\":17,"
    "\"token\":\"4c2fcc48-e683-45bd-9cb3-d7b065fa3029\",\"lease_until\":1796156995428.877,"
    "\"now\":1796156990428.974,\"attempt\":1,\"op_key\":\"17\",\"seq\":9,\"t\":13.001}",
    "{\"type\":\"effect\",\"job\":17,\"op_key\":\"17\",\"token\":\"x\",\"worker\":3,\"inc\":0,"
    "\"applied\":true,\"work_ms\":0.000,\"seq\":10,\"t\":13.5}",
    "{\"type\":\"fail\",\"op\":\"complete\",\"worker\":1,\"inc\":2,\"req\":8,\"job\":4,"
    "\"error\":\"40001 could not serialize access\",\"seq\":13}",
    "{\"type\":\"fault\",\"fault\":\"kill_after_claim\",\"job\":17,\"worker\":3,\"inc\":0,"
    "\"until_t\":500.125,\"seq\":15,\"t\":14}",
    "{\"type\":\"snapshot\",\"job\":17,\"state\":\"done\",\"attempt\":1,\"token\":\"..\","
    "\"seq\":16}",
    "{\"type\":\"monitor\",\"ready\":3,\"inflight\":2,\"expired\":0,\"dead\":0,\"done\":12,"
    "\"oldest_ready_age_ms\":12.5,\"seq\":20,\"t\":100.000}",
    "{\"type\":\"note\",\"note\":\"server_count\",\"calls\":12345,\"exclusive\":true,"
    "\"seq\":21}",
    "{\"type\":\"end\",\"drained\":true,\"interrupted\":false,\"timed_out\":false,\"seq\":99}",
    "{\"type\":\"witness\",\"wid\":2,\"session\":\"qchaos-control\",\"pid\":16560,\"change\":"
    "\"insert\",\"row\":\"2\",\"old_state\":null,\"new_state\":\"ready\",\"old_token\":null,"
    "\"new_token\":null,\"old_owner\":null,\"new_owner\":null,\"txid\":346978,\"stmt_ms\":"
    "1796161531884.406,\"server_ms\":1796161531884.577,\"seq\":4724,\"t\":2925.845}",
    "{\"type\":\"session\",\"worker\":2,\"pid\":77,\"xact_ms\":3.5,\"state_ms\":1,\"sent_t\":9,"
    "\"seq\":30}",
    "{\"type\":\"ok\",\"op\":\"enqueue\",\"worker\":-1,\"job\":5,\"group\":\"g1\",\"delay_ms\":"
    "250,\"notify\":\"commit\",\"notify_t\":3.25,\"lib_id\":\"abc\",\"seq\":3}",
    "{\"type\":\"invoke\",\"op\":\"claim\",\"worker\":1,\"wake\":\"notify\",\"wait_t\":1.5,"
    "\"wait_ms\":1000,\"seq\":31}",
    "{\"type\":\"point\",\"point\":\"claim.after\",\"worker\":1,\"seq\":32}",
    /* escapes and unicode */
    "{\"type\":\"info\",\"error\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t end\",\"seq\":40}",
    "{\"type\":\"info\",\"error\":\"caf\\u00e9 \\ud83d\\ude00\",\"seq\":41}",
    "{\"type\":\"info\",\"error\":\"caf\xc3\xa9 \xf0\x9f\x98\x80\",\"seq\":42}",
    "{\"type\":\"info\",\"error\":\"bad \xff utf8\",\"seq\":43}",
    "{\"type\":\"info\",\"error\":\"nul \\u0000 inside\",\"seq\":44}",
    "{\"type\":\"info\",\"error\":\"raw\ttab\",\"seq\":45}",
    "{\"type\":\"info\",\"error\":\"\\u001b[31m\",\"seq\":46}",
    "{\"type\":\"info\",\"error\":\"bad \\x escape\",\"seq\":47}",
    /* long strings: what the 8-byte word scan must stop at, at several
     * offsets in a word (a quote, an escape, a control byte, UTF-8, DEL) */
    "{\"type\":\"info\",\"error\":\"0123456789abcdef\",\"seq\":140}",
    "{\"type\":\"info\",\"error\":\"0123456789abc\\\"def0123456\",\"seq\":141}",
    "{\"type\":\"info\",\"error\":\"01234567\\n89abcdefghijklmnop\",\"seq\":142}",
    "{\"type\":\"info\",\"error\":\"0123456789\tx0123456789\",\"seq\":143}",
    "{\"type\":\"info\",\"error\":\"01234567890123\xc3\xa9 and more\",\"seq\":144}",
    "{\"type\":\"info\",\"error\":\"0123456789ab\x7f" "0123456789\",\"seq\":145}",
    "{\"type\":\"info\",\"error\":\"0123456\x1f\",\"seq\":146}",
    "{\"type\":\"info\",\"error\":\"012345678901234\\u00e9\",\"seq\":147}",
    "{\"type\":\"info\",\"error\":\"0123456789abcdefABCDEFGH!#$%&'()*+,-./:;<=>?@[]^_`{|}~\",\"seq\":148}",
    "{\"type\":\"info\",\"error\":\"0123456789abcdef\\\\\",\"seq\":149}",
    "{\"s\\u0065q\":48,\"type\":\"ok\"}",
    "{\"seq\":49,\"type\":\"o\\u006b\",\"op\":\"cl\\u0061im\"}",
    "{\"seq\":50,\"type\":\"ok\",\"op\":\"claim\\n\"}",
    /* numbers */
    "{\"seq\":60,\"job\":9223372036854775807,\"req\":-9223372036854775808}",
    "{\"seq\":61,\"job\":12345678901234567890}",
    "{\"seq\":62,\"now\":1e400}",
    "{\"seq\":63,\"now\":-1e400}",
    "{\"seq\":64,\"now\":1e-400,\"t\":4.9e-324}",
    "{\"seq\":65,\"t\":3419.8099999999999,\"now\":1796158183926.1570}",
    "{\"seq\":66,\"job\":5.0,\"rows\":1e3,\"attempt\":2E0}",
    "{\"seq\":67,\"job\":5.5}",
    "{\"seq\":68,\"worker\":2147483648}",
    "{\"seq\":69,\"worker\":-2147483648,\"inc\":2147483647}",
    "{\"seq\":70,\"t\":-0.0,\"now\":0.1,\"lease_until\":123456789012345678901234567890}",
    "{\"seq\":71,\"t\":0.000000000000000000000000001,\"now\":9007199254740993}",
    "{\"seq\":72,\"t\":9007199254740993.5,\"now\":1.7976931348623157e308}",
    "{\"seq\":73,\"job\":01}",
    "{\"seq\":74,\"job\":-}",
    "{\"seq\":75,\"t\":1.}",
    "{\"seq\":76,\"t\":.5}",
    "{\"seq\":77,\"t\":1e}",
    "{\"seq\":78,\"t\":+1}",
    "{\"seq\":79.0,\"job\":-0}",
    "{\"seq\":80,\"job\":1e30}",
    /* reordered, missing, duplicate keys */
    "{\"seq\":90,\"t\":1,\"job\":3,\"type\":\"ok\",\"op\":\"complete\",\"rows\":1}",
    "{\"type\":\"ok\",\"op\":\"complete\",\"rows\":1}",
    "{}",
    "{\"seq\":null,\"type\":\"ok\"}",
    "{\"seq\":91,\"job\":1,\"job\":2}",
    "{\"seq\":92,\"job\":1,\"job\":null}",
    "{\"seq\":93,\"type\":\"ok\",\"type\":\"fail\"}",
    "{\"seq\":\"x\",\"seq\":94}",
    "{\"seq\":95,\"seq\":null}",
    "{\"seq\":96,\"unknown\":1,\"unknown\":\"two\",\"extra\":{\"a\":[1,2]}}",
    "{\"seq\":97,\"job\":[1]}",
    "{\"seq\":98,\"type\":5,\"op\":null}",
    "{\"seq\":99,\"op\":5}",
    "{\"seq\":100,\"token\":12345,\"op_key\":-7,\"state\":true}",
    "{\"seq\":101,\"applied\":1,\"counted\":0,\"drained\":2}",
    "{\"seq\":102,\"applied\":2.0}",
    "{\"seq\":103,\"type\":\"witness\",\"change\":\"\",\"row\":\"x\",\"job\":4}",
    "{\"seq\":104,\"type\":\"witness\",\"change\":null,\"new_token\":\"t\",\"token\":\"u\"}",
    "{\"seq\":105,\"type\":\"witness\",\"change\":5}",
    "{\"seq\":106,\"type\":\"witness\",\"change\":\"\\u0075pdate\"}",
    "{\"seq\":107,\"type\":\"witness\",\"change\":\"update\",\"change\":\"delete\"}",
    "{\"seq\":108,\"change\":\"update\",\"token\":\"\"}",
    /* whitespace, garbage */
    " { \"seq\" : 110 ,\t\"type\" : \"ok\" , \"job\" :\r 4 } ",
    "{\"seq\":111}x",
    "{\"seq\":112,}",
    "{\"seq\":113 \"job\":1}",
    "[1,2]",
    "\"text\"",
    "{\"seq\":114,\"type\":\"header\",\"seed\":1}",
    "{\"seq\":115,\"job\":nul}",
    "{\"seq\":116,\"applied\":tru}",
    "{\"seq\":117,\"applied\":falsey}",
    "{\"seq\":118,\"error\":\"unterminated}",
    "{\"seq\":119",
};

START_TEST(test_fast_reader_crafted_line_same_as_jansson)
{
    char text[4096];
    both b;

    snprintf(text, sizeof text, HDR "%s\n", lines[_i]);
    load_both(&b, text, NULL);
    assert_same(&b, lines[_i]);
    both_fini(&b);
    /* the same line as a torn last line (no '\n') */
    snprintf(text, sizeof text, HDR "%s", lines[_i]);
    load_both(&b, text, NULL);
    assert_same(&b, lines[_i]);
    both_fini(&b);
}
END_TEST

/* The writer's own lines must take the fast path (else it is no faster). */
START_TEST(test_fast_reader_writer_lines_take_fast_path)
{
    char text[16384] = HDR;
    both b;

    for (int i = 0; i < 13; i++) {
        strcat(text, lines[i]);
        strcat(text, "\n");
    }
    load_both(&b, text, NULL);
    assert_same(&b, "writer lines");
    ck_assert_uint_eq(b.fast.n, 13);
    ck_assert_uint_eq(b.fast.fast_lines, 13);
    ck_assert_uint_eq(b.fast.jansson_lines, 1); /* the header */
    ck_assert_uint_eq(b.slow.jansson_lines, 14);
    both_fini(&b);
}
END_TEST

/* The scanner's numbers are strtod's, bit for bit, over many shapes. */
START_TEST(test_flat_scan_numbers_match_strtod)
{
    uint64_t x = 88172645463325252ull;
    char line[128];
    qc_flat_member m[2];

    for (int i = 0; i < 200000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double d;
        switch (i % 4) {
        case 0:
            d = (double)(x % 2000000000000000ull) / 1000.0;
            break;
        case 1:
            d = (double)(x >> 11) / (double)(1ull << 53) * pow(10, (double)(int)(x % 40) - 20);
            break;
        case 2:
            memcpy(&d, &x, sizeof d);
            if (!isfinite(d))
                d = 1.5;
            break;
        default:
            d = (double)(int64_t)(x % 100000000) - 5e7;
            break;
        }
        char num[80];
        switch (i % 7) {
        case 0: snprintf(num, sizeof num, "%.3f", d); break;
        case 1: snprintf(num, sizeof num, "%.17g", d); break;
        case 2: snprintf(num, sizeof num, "%.15g", d); break;
        case 3: snprintf(num, sizeof num, "%.6e", d); break;
        case 4: snprintf(num, sizeof num, "%.1f", d); break;
        case 5: snprintf(num, sizeof num, "%.0f", d); break;
        default: snprintf(num, sizeof num, "%.10f", d); break;
        }
        if (strlen(num) > 60 || strchr(num, 'n') || strchr(num, 'i'))
            continue;
        snprintf(line, sizeof line, "{\"t\":%s}", num);
        int n = qc__flat_scan(line, strlen(line), m, 2);
        if (n < 0)
            continue; /* given to jansson: fine */
        ck_assert_int_eq(n, 1);
        if (m[0].kind == QC_FLAT_INT) {
            /* jansson: an integer token is strtoll's */
            ck_assert_msg(strchr(num, '.') == NULL && strchr(num, 'e') == NULL, "%s", num);
            ck_assert_msg(m[0].i == strtoll(num, NULL, 10), "%s", num);
            continue;
        }
        double want = strtod(num, NULL), got = m[0].d;
        ck_assert_int_eq(m[0].kind, QC_FLAT_REAL);
        ck_assert_msg(memcmp(&got, &want, sizeof got) == 0, "%s: %.17g vs %.17g", num, got,
                      want);
    }
}
END_TEST

/* qc_parse_double reads what strtod reads, bit for bit, and refuses what
 * strtod would not read whole (the worker's server times). */
START_TEST(test_parse_double_is_strtod)
{
    uint64_t x = 1181783497276652981ull;
    int fast = 0;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double d = i % 2 ? (double)(x % 2000000000000000000ull) / 1000000.0
                         : (double)(x >> 11) / (double)(1ull << 53) *
                               pow(10, (double)(int)(x % 60) - 30);
        char num[80];
        switch (i % 6) {
        case 0: snprintf(num, sizeof num, "%.3f", d); break;
        case 1: snprintf(num, sizeof num, "%.17g", d); break;
        case 2: snprintf(num, sizeof num, "%.6f", d); break;
        case 3: snprintf(num, sizeof num, "%.0f", d); break;
        case 4: snprintf(num, sizeof num, "-%.9e", d); break;
        default: snprintf(num, sizeof num, "%.1f", d); break;
        }
        double got, want = strtod(num, NULL);
        ck_assert_int_eq(qc_parse_double(num, &got), 0);
        ck_assert_msg(memcmp(&got, &want, sizeof got) == 0, "%s: %.17g vs %.17g", num, got,
                      want);
        fast += strchr(num, 'e') == NULL && strlen(num) < 17;
    }
    ck_assert_int_gt(fast, 50000);
    /* what strtod reads though JSON does not, and what it does not read */
    static const char *ok[] = {"1796158990428.974", " 12.5", "+3", ".5", "5.", "1e3", "0x10",
                               "00012", "123456789012345678901234", "-0"};
    for (size_t k = 0; k < sizeof ok / sizeof *ok; k++) {
        double got;
        ck_assert_int_eq(qc_parse_double(ok[k], &got), 0);
        double want = strtod(ok[k], NULL);
        ck_assert_msg(memcmp(&got, &want, sizeof got) == 0, "%s", ok[k]);
    }
    static const char *bad[] = {"", "abc", "12abc", "1.5 ", "--1", "1e"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        double got = 7;
        ck_assert_msg(qc_parse_double(bad[k], &got) == -1, "%s read", bad[k]);
    }
}
END_TEST

static int compared; /* ledgers compared by compare_file */

static void compare_file(const char *path)
{
    both b;

    load_both(&b, NULL, path);
    assert_same(&b, path);
    if (b.rc_fast == 0)
        compared++;
    both_fini(&b);
}

START_TEST(test_fast_reader_corpus_same_as_jansson)
{
    DIR *d = opendir("tests/fuzz/corpus/ledger");
    struct dirent *de;
    char path[1024];

    ck_assert_ptr_nonnull(d);
    compared = 0;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "tests/fuzz/corpus/ledger/%s", de->d_name);
        compare_file(path);
    }
    closedir(d);
    ck_assert_int_gt(compared, 10);
}
END_TEST

/* QC_COMPARE_LEDGERS="a.jsonl b.jsonl ..." (or a file of paths with @FILE). */
START_TEST(test_fast_reader_named_ledgers_same_as_jansson)
{
    const char *list = getenv("QC_COMPARE_LEDGERS");
    char *copy, *save = NULL;
    int n = 0;

    if (list == NULL || *list == '\0')
        return;
    compared = 0;
    if (list[0] == '@') {
        FILE *f = fopen(list + 1, "r");
        char line[4096];
        ck_assert_ptr_nonnull(f);
        while (fgets(line, sizeof line, f) != NULL) {
            line[strcspn(line, "\n")] = '\0';
            if (line[0] != '\0') {
                compare_file(line);
                n++;
            }
        }
        fclose(f);
    } else {
        copy = strdup(list);
        for (char *p = strtok_r(copy, " \n", &save); p != NULL; p = strtok_r(NULL, " \n", &save)) {
            compare_file(p);
            n++;
        }
        free(copy);
    }
    printf("check_flatjson: %d ledgers named, %d loaded and compared\n", n, compared);
}
END_TEST

/* Real ledgers written by qchaos on a real PostgreSQL: a fault scenario
 * (every client fault, nemesis, monitor, notes), the witness, LISTEN. */
START_TEST(test_fast_reader_e2e_ledgers_same_as_jansson)
{
    static const char *const runs[] = {
        "scenarios/chaos.ini --jobs 200 --workers 6",
        "scenarios/listen.ini --jobs 100 --workers 4",
        "scenarios/network_lost_ack.ini --jobs 100 --workers 4",
    };
    const char *dsn = getenv("QC_TEST_DSN");
    char dir[] = "/tmp/qc_flatjson.XXXXXX", cmd[2048], path[1100];

    if (dsn == NULL || *dsn == '\0')
        return;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char scen[256];
        sscanf(runs[i], "%255s", scen);
        if (access(scen, R_OK) != 0)
            continue;
        snprintf(cmd, sizeof cmd,
                 "%s./qchaos run %s --dsn '%s' --seed 7 --out %s/r%zu --no-progress >%s/r%zu.log "
                 "2>&1",
                 i == 0 ? "QCHAOS_WITNESS=yes " : "", runs[i], dsn, dir, i, dir, i);
        int rc = system(cmd);
        snprintf(path, sizeof path, "%s/r%zu/ledger.jsonl", dir, i);
        ck_assert_msg(access(path, R_OK) == 0, "%s: no ledger (exit %d)", runs[i], rc);
        both b;
        load_both(&b, NULL, path);
        assert_same(&b, path);
        ck_assert_int_eq(b.rc_fast, 0);
        ck_assert_msg(b.fast.fast_lines + 1 >= b.fast.n, "%s: %zu of %zu lines fast", path,
                      b.fast.fast_lines, b.fast.n);
        printf("check_flatjson: %s: %zu events, %zu read by the scanner, %zu by jansson\n", runs[i],
               b.fast.n, b.fast.fast_lines, b.fast.jansson_lines);
        both_fini(&b);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("flatjson");
    TCase *tc = tcase_create("crafted");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_fast_reader_crafted_line_same_as_jansson, 0,
                        (int)(sizeof lines / sizeof lines[0]));
    tcase_add_test(tc, test_fast_reader_writer_lines_take_fast_path);
    tcase_add_test(tc, test_flat_scan_numbers_match_strtod);
    tcase_add_test(tc, test_parse_double_is_strtod);
    suite_add_tcase(s, tc);
    tc = tcase_create("ledgers");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_fast_reader_corpus_same_as_jansson);
    tcase_add_test(tc, test_fast_reader_named_ledgers_same_as_jansson);
    tcase_add_test(tc, test_fast_reader_e2e_ledgers_same_as_jansson);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
