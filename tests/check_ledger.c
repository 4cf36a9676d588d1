/*
 * check_ledger.c - unit tests of the ledger writer (harness/ledger.h): its
 * own serializer must write JSON Lines that jansson and history.c read back
 * exactly as the events were appended: every value type, awkward strings
 * (quotes, backslashes, control characters, DEL, UTF-8), reals
 * that are and are not whole thousandths, the extreme integers, nested
 * values, and an event that sets "seq" and "t" itself; and the history
 * kept between the audit and the reports (qc_history_keep).
 *
 * Ledgers go to mkstemp files under /tmp, removed by each test.
 */
#include <check.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness/clock.h"
#include "../harness/history.h"
#include "../harness/ledger.h"

#define NEVENTS 6

/* Strings no escaping mistake gets through: every control character, the
 * JSON specials, DEL, multi-byte UTF-8, a slash, the empty string. */
static json_t *awkward_strings(void)
{
    char ctl[40];
    size_t n = 0;
    for (int c = 1; c < 0x20; c++)
        ctl[n++] = (char)c;
    ctl[n++] = 0x7f;
    json_t *a = json_object();
    json_object_set_new(a, "quote", json_string("say \"hi\" \\ back\\slash \\\" end"));
    json_object_set_new(a, "ctl", json_stringn(ctl, n));
    json_object_set_new(a, "utf8", json_string("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80 \xe2\x80\xa8"));
    json_object_set_new(a, "slash", json_string("</script> a/b"));
    json_object_set_new(a, "empty", json_string(""));
    json_object_set_new(a, "key with \"quote\"\n", json_string("x"));
    return a;
}

/* The events of the test, built as the workers build theirs (a fresh
 * object each, reference stolen by qc_ledger_append). */
static json_t *make_event(int i)
{
    json_t *e;
    switch (i) {
    case 0: /* a claim answer as a worker writes it */
        e = json_object();
        json_object_set_new(e, "type", json_string("ok"));
        json_object_set_new(e, "op", json_string("claim"));
        json_object_set_new(e, "worker", json_integer(3));
        json_object_set_new(e, "inc", json_integer(0));
        json_object_set_new(e, "req", json_integer(55));
        json_object_set_new(e, "rows", json_integer(1));
        json_object_set_new(e, "job", json_integer(17));
        json_object_set_new(e, "token", json_string("4c2fcc48-e683-45bd-9cb3-d7b065fa3029"));
        json_object_set_new(e, "lease_until", json_real(1796156995428.877));
        json_object_set_new(e, "now", json_real(1796156990428.974));
        json_object_set_new(e, "attempt", json_integer(1));
        json_object_set_new(e, "op_key", json_string("17"));
        return e;
    case 1: /* integers at the edges, booleans, null */
        e = json_object();
        json_object_set_new(e, "type", json_string("effect"));
        json_object_set_new(e, "job", json_integer(INT64_MAX));
        json_object_set_new(e, "req", json_integer(INT32_MIN));
        json_object_set_new(e, "worker", json_integer(-1));
        json_object_set_new(e, "inc", json_integer(0));
        json_object_set_new(e, "big", json_integer(((json_int_t)1 << 53) + 1));
        json_object_set_new(e, "applied", json_true());
        json_object_set_new(e, "counted", json_false());
        json_object_set_new(e, "group", json_null());
        return e;
    case 2: /* reals that are not whole thousandths, and extremes */
        e = json_object();
        json_object_set_new(e, "type", json_string("note"));
        json_object_set_new(e, "note", json_string("reals"));
        json_object_set_new(e, "tenth", json_real(0.1));
        json_object_set_new(e, "third", json_real(1.0 / 3.0));
        json_object_set_new(e, "tiny", json_real(1e-7));
        json_object_set_new(e, "huge", json_real(1e300));
        json_object_set_new(e, "max", json_real(DBL_MAX));
        json_object_set_new(e, "min", json_real(DBL_MIN));
        json_object_set_new(e, "neg", json_real(-2.5));
        json_object_set_new(e, "zero", json_real(0.0));
        json_object_set_new(e, "whole", json_real(5000.0));
        json_object_set_new(e, "epoch_us", json_real(1796156990428.9741));
        json_object_set_new(e, "neg_ms", json_real(-1796156990428.974));
        json_object_set_new(e, "above_2p53", json_real(1.5e16));
        json_object_set_new(e, "pause_ms", json_real(200.5));
        return e;
    case 3: /* awkward strings as values, and in a fail's error */
        e = awkward_strings();
        json_object_set_new(e, "type", json_string("fail"));
        json_object_set_new(e, "op", json_string("complete"));
        json_object_set_new(e, "worker", json_integer(2));
        json_object_set_new(e, "error", json_string("40001 could not serialize\n\t\"x\" \\ y"));
        return e;
    case 4: /* nested values (notes carry some) */
        e = json_object();
        json_object_set_new(e, "type", json_string("note"));
        json_object_set_new(e, "note", json_string("fault plan"));
        json_object_set_new(e, "plan", json_pack("{s:[i,f,s,b,n],s:{s:f}}", "a", 1, 0.25, "q\"",
                                                 1, "o", "k", 1.0 / 3.0));
        json_object_set_new(e, "strings", awkward_strings());
        return e;
    default: /* an event that sets seq and t itself: the ledger's win */
        e = json_object();
        json_object_set_new(e, "seq", json_integer(-99));
        json_object_set_new(e, "type", json_string("end"));
        json_object_set_new(e, "t", json_string("not a time"));
        json_object_set_new(e, "drained", json_true());
        return e;
    }
}

/* Writes the events to a new ledger; path (size 64) gets its name. */
static void write_ledger(char *path)
{
    snprintf(path, 64, "/tmp/qc-ledger-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    json_t *hdr = json_pack("{s:i,s:s,s:i}", "seed", 7, "model", "lease", "jobs", 1);
    qc_ledger *l = NULL;
    qc_err err = {0};
    ck_assert_msg(qc_ledger_open(path, hdr, qc_clock_ms(), &l, &err) == 0, "%s", err.msg);
    json_decref(hdr);
    qc_lbuf *b = qc_ledger_buf(l);
    ck_assert_ptr_nonnull(b);
    for (int i = 0; i < NEVENTS; i++)
        ck_assert_int_eq(qc_ledger_append(b, make_event(i)), i + 1);
    ck_assert_msg(qc_ledger_close(l, &err) == 0, "%s", err.msg);
}

/* Whether a and b hold the same members, values equal (reals bit for bit
 * as doubles; json_equal compares reals with ==, which 0.0 == -0.0 would
 * pass, so reals are checked again here). */
static void assert_same(json_t *want, json_t *got, int line)
{
    const char *key;
    json_t *v;
    ck_assert_msg(json_equal(want, got), "line %d differs from the event appended", line);
    json_object_foreach(want, key, v)
    {
        json_t *g = json_object_get(got, key);
        ck_assert_msg(g != NULL, "line %d: member \"%s\" lost", line, key);
        ck_assert_msg(json_typeof(g) == json_typeof(v), "line %d: member \"%s\" changed type",
                      line, key);
        if (json_is_real(v))
            ck_assert_msg(memcmp(&(double){json_real_value(v)}, &(double){json_real_value(g)},
                                 sizeof(double)) == 0,
                          "line %d: real \"%s\" %.17g read back as %.17g", line, key,
                          json_real_value(v), json_real_value(g));
    }
}

START_TEST(test_ledger_append_every_value_type_round_trips)
{
    char path[64];
    write_ledger(path);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int lines = 0;
    double last_t = -1;
    while ((n = getline(&line, &cap, f)) > 0) {
        json_error_t jerr;
        ck_assert_msg(line[n - 1] == '\n', "line %d not terminated", lines + 1);
        json_t *got = json_loadb(line, (size_t)n, 0, &jerr);
        ck_assert_msg(json_is_object(got), "line %d is not a JSON object: %s: %s", lines + 1,
                      jerr.text, line);
        if (lines > 0) {
            int i = lines - 1;
            json_t *want = make_event(i);
            /* the ledger's own members */
            ck_assert_int_eq(json_integer_value(json_object_get(got, "seq")), i + 1);
            json_t *t = json_object_get(got, "t");
            ck_assert_msg(json_is_real(t), "line %d: t is not a real", lines + 1);
            ck_assert(json_real_value(t) >= last_t);
            last_t = json_real_value(t);
            /* t has 3 decimals at most: ms to the microsecond */
            double us = json_real_value(t) * 1000.0;
            ck_assert(fabs(us - round(us)) < 1e-3);
            json_object_del(got, "seq");
            json_object_del(got, "t");
            json_object_del(want, "seq");
            json_object_del(want, "t");
            assert_same(want, got, lines + 1);
            assert_same(got, want, lines + 1);
            json_decref(want);
        }
        json_decref(got);
        lines++;
    }
    free(line);
    fclose(f);
    unlink(path);
    ck_assert_int_eq(lines, NEVENTS + 1);
}
END_TEST

/* The same line jansson would write, but for reals: every event without a
 * real but t compares byte for byte, t aside. */
START_TEST(test_ledger_append_matches_jansson_text_but_reals)
{
    char path[64];
    write_ledger(path);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char *line = NULL;
    size_t cap = 0;
    int lines = 0, compared = 0;
    while (getline(&line, &cap, f) > 0) {
        int i = lines++ - 1;
        if (i != 1 && i != 3)
            continue; /* only these events hold no real */
        json_t *want = make_event(i);
        json_object_set_new(want, "seq", json_integer(i + 1));
        char *text = json_dumps(want, JSON_COMPACT);
        json_decref(want);
        char *t = strstr(line, ",\"t\":");
        ck_assert_ptr_nonnull(t);
        *t = '\0';
        size_t len = strlen(text);
        ck_assert_msg(text[len - 1] == '}', "%s", text);
        text[len - 1] = '\0';
        ck_assert_str_eq(line, text);
        free(text);
        compared++;
    }
    free(line);
    fclose(f);
    unlink(path);
    ck_assert_int_eq(compared, 2);
}
END_TEST

START_TEST(test_ledger_history_reads_fields_back_exactly)
{
    char path[64];
    write_ledger(path);
    qc_history h = {0};
    qc_err err = {0};
    const char *paths[] = {path};
    ck_assert_msg(qc_history_load(&h, paths, 1, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(h.info.seed, 7);
    ck_assert_uint_eq(h.n, NEVENTS);
    const qc_event *e = &h.ev[0];
    ck_assert_int_eq(e->seq, 1);
    ck_assert_int_eq(e->type, QC_EV_OK);
    ck_assert_int_eq(e->op, QC_OP_CLAIM);
    ck_assert_int_eq(e->worker, 3);
    ck_assert_int_eq(e->req, 55);
    ck_assert_int_eq(e->job, 17);
    ck_assert_int_eq(e->rows, 1);
    ck_assert_str_eq(qc_s(e->token), "4c2fcc48-e683-45bd-9cb3-d7b065fa3029");
    ck_assert(e->lease_until == 1796156995428.877);
    ck_assert(e->now == 1796156990428.974);
    ck_assert_int_eq(e->attempt, 1);
    ck_assert_str_eq(qc_s(e->op_key), "17");
    e = &h.ev[1];
    ck_assert(e->job == INT64_MAX);
    ck_assert(e->req == INT32_MIN);
    ck_assert_int_eq(e->applied, 1);
    ck_assert_int_eq(e->counted, 0);
    ck_assert_ptr_null(qc_s(e->group));
    e = &h.ev[2];
    ck_assert(e->pause_ms == 200.5);
    e = &h.ev[3];
    ck_assert_int_eq(e->type, QC_EV_FAIL);
    ck_assert_str_eq(qc_s(e->error), "40001 could not serialize\n\t\"x\" \\ y");
    e = &h.ev[5];
    ck_assert_int_eq(e->seq, 6);
    ck_assert_int_eq(e->type, QC_EV_END);
    ck_assert_int_eq(qc_x(e->x)->drained, 1);
    ck_assert(e->t >= h.ev[4].t);
    qc_history_fini(&h);
    unlink(path);
}
END_TEST

/* The same members through the event builder (qc_ev), in the same order;
 * nested values are copied in (qc_ev_json steals a reference). */
static void ev_from_json(qc_ev *ev, json_t *o)
{
    const char *key;
    json_t *v;
    qc_ev_init(ev);
    json_object_foreach(o, key, v)
    {
        switch (json_typeof(v)) {
        case JSON_STRING: qc_ev_strn(ev, key, json_string_value(v), json_string_length(v)); break;
        case JSON_INTEGER: qc_ev_int(ev, key, (int64_t)json_integer_value(v)); break;
        case JSON_REAL: qc_ev_real(ev, key, json_real_value(v)); break;
        case JSON_TRUE: qc_ev_bool(ev, key, 1); break;
        case JSON_FALSE: qc_ev_bool(ev, key, 0); break;
        case JSON_NULL: qc_ev_null(ev, key); break;
        default: qc_ev_json(ev, key, json_deep_copy(v));
        }
    }
}

/* A line without its "seq" and "t" (the part both writers choose alike). */
static void cut_seq(char *line)
{
    char *p = strstr(line, "\"seq\":");
    ck_assert_ptr_nonnull(p);
    *p = '\0';
}

START_TEST(test_ev_builder_writes_the_lines_of_jansson_objects)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/qc-ledger-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    json_t *hdr = json_pack("{s:i}", "seed", 7);
    qc_ledger *l = NULL;
    qc_err err = {0};
    ck_assert_msg(qc_ledger_open(path, hdr, qc_clock_ms(), &l, &err) == 0, "%s", err.msg);
    json_decref(hdr);
    qc_lbuf *b = qc_ledger_buf(l);
    qc_ev ev;
    /* each event twice: the jansson object, then the builder */
    for (int i = 0; i < NEVENTS; i++) {
        json_t *o = make_event(i);
        ev_from_json(&ev, o); /* its keys are o's: o lives until both appends */
        qc_ledger_append(b, json_incref(o));
        qc_ev_append(b, &ev);
        json_decref(o);
    }
    /* set again: replaced in place, as json_object_set_new does; strings
     * past the inline arena; a string freed before the append */
    json_t *o = json_object();
    json_object_set_new(o, "type", json_string("invoke"));
    json_object_set_new(o, "op", json_string("claim"));
    json_object_set_new(o, "job", json_integer(1));
    json_object_set_new(o, "type", json_string("ok"));
    json_object_set_new(o, "job", json_string("now a string"));
    qc_ev_init(&ev);
    qc_ev_str(&ev, "type", "invoke");
    qc_ev_str(&ev, "op", "claim");
    qc_ev_int(&ev, "job", 1);
    qc_ev_str(&ev, "type", "ok");
    char *tmp = strdup("now a string");
    qc_ev_str(&ev, "job", tmp);
    free(tmp);
    ck_assert_str_eq(qc_ev_get_str(&ev, "type"), "ok");
    ck_assert_ptr_null(qc_ev_get_str(&ev, "missing"));
    char big[3000];
    for (int k = 0; k < 4; k++) {
        char key[16];
        memset(big, 'a' + k, sizeof big - 1);
        big[sizeof big - 1] = '\0';
        big[k] = '"';
        snprintf(key, sizeof key, "long%d", k);
        json_object_set_new(o, key, json_string(big));
        qc_ev_str(&ev, strdup(key), big); /* a key alive until the append */
    }
    json_object_set_new(o, "error", json_null());
    qc_ev_null(&ev, "error");
    /* no string: nothing set, an earlier value kept (json_string gives NULL
     * for NULL and for text that is not UTF-8, and set_new then sets
     * nothing) */
    static const char *bad_utf8[] = {"\xc3", "a\xc0\xaf" "b", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                     "\xe0\x80\xaf", "\xff", "\x80"};
    for (size_t k = 0; k < sizeof bad_utf8 / sizeof *bad_utf8; k++) {
        ck_assert_ptr_null(json_string(bad_utf8[k]));
        json_object_set_new(o, "op", json_string(bad_utf8[k]));
        qc_ev_str(&ev, "op", bad_utf8[k]);
        json_object_set_new(o, "nothing", json_string(bad_utf8[k]));
        qc_ev_str(&ev, "nothing", bad_utf8[k]);
    }
    json_object_set_new(o, "nothing", json_string(NULL));
    qc_ev_str(&ev, "nothing", NULL);
    json_object_set_new(o, "ok_utf8", json_string("\xf4\x8f\xbf\xbf \xed\x9f\xbf \xc2\x80"));
    qc_ev_str(&ev, "ok_utf8", "\xf4\x8f\xbf\xbf \xed\x9f\xbf \xc2\x80");
    ck_assert_str_eq(qc_ev_get_str(&ev, "op"), "claim");
    const char *keys[4] = {ev.m[3].key, ev.m[4].key, ev.m[5].key, ev.m[6].key};
    ck_assert_int_eq(ev.n, 9);
    qc_ledger_append(b, o);
    qc_ev_append(b, &ev);
    for (int k = 0; k < 4; k++)
        free((void *)keys[k]);
    ck_assert_msg(qc_ledger_close(l, &err) == 0, "%s", err.msg);

    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char *a = NULL, *c = NULL;
    size_t acap = 0, ccap = 0;
    ck_assert_int_gt(getline(&a, &acap, f), 0); /* the header */
    int pairs = 0;
    while (getline(&a, &acap, f) > 0) {
        ck_assert_int_gt(getline(&c, &ccap, f), 0);
        cut_seq(a);
        cut_seq(c);
        ck_assert_str_eq(c, a);
        pairs++;
    }
    ck_assert_int_eq(pairs, NEVENTS + 1);
    free(a);
    free(c);
    fclose(f);
    unlink(path);
}
END_TEST

/* qc_history_keep: the next load of the same unchanged ledger takes the
 * kept history (the same events array: nothing parsed again); a changed
 * ledger, or another path, is parsed afresh. */
START_TEST(test_history_keep_reused_once_and_only_while_unchanged)
{
    char path[64];
    write_ledger(path);
    const char *paths[] = {path};
    qc_history h = {0}, h2 = {0};
    qc_err err = {0};
    ck_assert_msg(qc_history_load(&h, paths, 1, &err) == 0, "%s", err.msg);
    const qc_event *ev = h.ev;
    size_t n = h.n;
    qc_history_keep(&h, paths, 1);
    ck_assert_ptr_null(h.ev);
    ck_assert_msg(qc_history_load(&h2, paths, 1, &err) == 0, "%s", err.msg);
    ck_assert_ptr_eq(h2.ev, ev); /* taken over, not parsed */
    ck_assert_uint_eq(h2.n, n);
    ck_assert_int_eq(h2.ev[0].job, 17);
    /* taken once: a second load parses */
    ck_assert_msg(qc_history_load(&h, paths, 1, &err) == 0, "%s", err.msg);
    ck_assert_ptr_ne(h.ev, h2.ev);
    ck_assert_uint_eq(h.n, n);
    qc_history_fini(&h2);
    /* kept, then the ledger changes: parsed again, the new line seen */
    qc_history_keep(&h, paths, 1);
    FILE *f = fopen(path, "a");
    ck_assert_ptr_nonnull(f);
    fputs("{\"type\":\"note\",\"note\":\"later\",\"seq\":99}\n", f);
    fclose(f);
    ck_assert_msg(qc_history_load(&h, paths, 1, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(h.n, n + 1);
    qc_history_fini(&h);
    unlink(path);
}
END_TEST

/* A ledger read in many blocks (QC_LEDGER_READ_BLOCK) loads the same
 * events as in one, names a bad line by its line in the file, and still
 * skips only a torn last line. */
static void write_lines(const char *path, int nlines, int bad_line, int torn)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"type\":\"header\",\"seed\":5}\n", f);
    for (int i = 2; i <= nlines; i++) {
        if (i == bad_line) {
            fputs("{\"seq\": oops}\n", f);
            continue;
        }
        /* seq out of file order in pairs, as writer buffers leave them */
        int seq = i % 2 ? i - 1 : i + 1;
        fprintf(f,
                "{\"type\":\"ok\",\"op\":\"claim\",\"worker\":%d,\"inc\":0,\"req\":%d,"
                "\"rows\":1,\"job\":%d,\"token\":\"tok-%d-aaaaaaaaaaaaaaaaaaaaaaaaaaaa\","
                "\"now\":1796156990428.%03d,\"seq\":%d,\"t\":%d.125}\n",
                i % 16, i, i, i, i % 1000, seq, i);
    }
    if (torn)
        fputs("{\"type\":\"ok\",\"seq\":99999", f);
    fclose(f);
}

START_TEST(test_history_load_in_blocks_same_as_whole)
{
    char path[64] = "/tmp/qc-blocks-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    const int nlines = 40000; /* about 6 MB: 3 blocks of 2.1 MB */
    write_lines(path, nlines, 0, 1);
    const char *paths[] = {path};
    qc_history a = {0}, b = {0};
    qc_err err = {0};
    unsetenv("QC_LEDGER_READ_BLOCK");
    ck_assert_msg(qc_history_load(&a, paths, 1, &err) == 0, "%s", err.msg);
    setenv("QC_LEDGER_READ_BLOCK", "2100000", 1);
    ck_assert_msg(qc_history_load(&b, paths, 1, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(a.n, (size_t)nlines - 1);
    ck_assert_uint_eq(b.n, a.n);
    ck_assert_uint_eq(a.torn, 1);
    ck_assert_uint_eq(b.torn, 1);
    for (size_t i = 0; i < a.n; i++) {
        if (i > 0)
            ck_assert(b.ev[i].seq > b.ev[i - 1].seq);
        /* the line numbers survive the blocks: line L wrote seq L -/+ 1 */
        ck_assert_int_eq(b.ev[i].seq, b.ev[i].line % 2 ? b.ev[i].line - 1 : b.ev[i].line + 1);
        ck_assert_int_eq(a.ev[i].seq, b.ev[i].seq);
        ck_assert_int_eq(a.ev[i].job, b.ev[i].job);
        ck_assert_int_eq(a.ev[i].line, b.ev[i].line);
        ck_assert(a.ev[i].now == b.ev[i].now && a.ev[i].t == b.ev[i].t);
        ck_assert_str_eq(qc_s(a.ev[i].token), qc_s(b.ev[i].token));
        ck_assert_int_eq(a.ev[i].invoke, b.ev[i].invoke);
    }
    qc_history_fini(&a);
    qc_history_fini(&b);
    write_lines(path, nlines, 33333, 0);
    ck_assert_int_eq(qc_history_load(&b, paths, 1, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":33333: invalid JSON") != NULL, "%s", err.msg);
    unsetenv("QC_LEDGER_READ_BLOCK");
    unlink(path);
}
END_TEST

static Suite *ledger_suite(void)
{
    Suite *s = suite_create("ledger");
    TCase *tc = tcase_create("serializer");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_ledger_append_every_value_type_round_trips);
    tcase_add_test(tc, test_ledger_append_matches_jansson_text_but_reals);
    tcase_add_test(tc, test_ledger_history_reads_fields_back_exactly);
    tcase_add_test(tc, test_ev_builder_writes_the_lines_of_jansson_objects);
    suite_add_tcase(s, tc);
    tc = tcase_create("keep");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_history_keep_reused_once_and_only_while_unchanged);
    suite_add_tcase(s, tc);
    tc = tcase_create("blocks");
    tcase_set_timeout(tc, 120); /* 3 loads of 6 MB: seconds on a busy machine */
    tcase_add_test(tc, test_history_load_in_blocks_same_as_whole);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(ledger_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
