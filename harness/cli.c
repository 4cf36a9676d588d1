/*
 * cli.c - shell quoting and the command that repeats a run (cli.h).
 *
 * The repeat line walks the words as the user typed them with the same
 * option table getopt_long parsed them with, so an abbreviation or a value
 * that looks like an option ("--dsn --jobs" is a DSN of "--jobs") is read
 * the way the run read it.
 */
#include "cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

char *qc_cli_quote(const char *arg)
{
    size_t len = strlen(arg);
    int plain = len > 0 && strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789-_./=:,@") == len;
    char *s = malloc(len * 4 + 3);
    if (!s)
        return NULL;
    if (plain) {
        memcpy(s, arg, len + 1);
        return s;
    }
    size_t k = 0;
    s[k++] = '\'';
    for (const char *p = arg; *p; p++) {
        if (*p == '\'') {
            memcpy(s + k, "'\\''", 4);
            k += 4;
        } else {
            s[k++] = *p;
        }
    }
    s[k++] = '\'';
    s[k] = '\0';
    return s;
}

/* The option a word "--name" or "--name=value" stands for, as getopt_long
 * reads it: the exact name, else the first name it is a prefix of (getopt
 * has already refused an ambiguous one).  NULL when none. */
static const struct option *find_long(const struct option *opts, const char *word)
{
    const char *name = word + 2;
    size_t n = strcspn(name, "=");
    const struct option *prefix = NULL;
    if (n == 0)
        return NULL;
    for (const struct option *o = opts; o->name; o++) {
        if (strlen(o->name) == n && !strncmp(o->name, name, n))
            return o;
        if (!prefix && strlen(o->name) > n && !strncmp(o->name, name, n))
            prefix = o;
    }
    return prefix;
}

/* A growing line of shell words. */
typedef struct line {
    char *s;
    size_t len, cap;
    int oom;
} line;

/* Appends word quoted (pre, when not NULL, goes in front of it inside the
 * same word: "--seed=" "5"). */
static void add_word(line *l, const char *pre, const char *word)
{
    if (l->oom)
        return;
    size_t pl = pre ? strlen(pre) : 0;
    char *joined = malloc(pl + strlen(word) + 1);
    char *q = NULL;
    if (joined) {
        memcpy(joined, pre ? pre : "", pl);
        strcpy(joined + pl, word);
        q = qc_cli_quote(joined);
    }
    free(joined);
    if (!q) {
        l->oom = 1;
        return;
    }
    size_t ql = strlen(q);
    if (l->len + ql + 2 > l->cap) {
        size_t cap = (l->len + ql + 2) * 2;
        char *s = realloc(l->s, cap);
        if (!s) {
            free(q);
            l->oom = 1;
            return;
        }
        l->s = s;
        l->cap = cap;
    }
    if (l->len)
        l->s[l->len++] = ' ';
    memcpy(l->s + l->len, q, ql + 1);
    l->len += ql;
    free(q);
}

/* Appends a connection string with its password replaced by ***. */
static void add_secret(line *l, const char *pre, const char *conninfo)
{
    size_t n = strlen(conninfo) * 4 + 64;
    char *red = malloc(n);
    if (!red) {
        l->oom = 1;
        return;
    }
    qc_redact_conninfo(conninfo, red, n);
    add_word(l, pre, red);
    free(red);
}

char *qc_cli_repeat_line(const char *prog, int argc, char *const *argv, const struct option *opts,
                         uint64_t seed, const char *out)
{
    line l = {0};
    char seed_s[32];
    snprintf(seed_s, sizeof seed_s, "%" PRIu64, seed);
    int seed_done = 0, out_done = 0, options_end = 0;
    add_word(&l, NULL, prog);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const struct option *o = NULL;
        if (i > 0 && !options_end && !strcmp(a, "--"))
            options_end = 1;
        else if (i > 0 && !options_end && !strncmp(a, "--", 2))
            o = find_long(opts, a);
        if (!o) {
            /* every word is redacted: a connection string may stand anywhere
             * getopt takes it, and redaction leaves other words alone */
            add_secret(&l, NULL, a);
            continue;
        }
        const char *eq = strchr(a, '=');
        const char *value = NULL;
        if (eq)
            value = eq + 1;
        else if (o->has_arg == required_argument && i + 1 < argc)
            value = argv[++i];
        /* what the user typed before the value: "--se" or "--se=" */
        size_t pl = eq ? (size_t)(eq - a) + 1 : strlen(a);
        char *pre = malloc(pl + 1);
        if (!pre) {
            l.oom = 1;
            break;
        }
        memcpy(pre, a, pl);
        pre[pl] = '\0';
        int is_seed = !strcmp(o->name, "seed"), is_out = !strcmp(o->name, "out");
        if (!strcmp(o->name, "repeat")) {
            /* dropped: the line repeats one run */
        } else if (is_seed || is_out) {
            const char *v = is_seed ? seed_s : out;
            if (eq) {
                add_word(&l, pre, v);
            } else {
                add_word(&l, NULL, pre);
                add_word(&l, NULL, v);
            }
            seed_done |= is_seed;
            out_done |= is_out;
        } else if (value && (!strcmp(o->name, "dsn") || !strcmp(o->name, "worker-dsn"))) {
            if (eq) {
                add_secret(&l, pre, value);
            } else {
                add_word(&l, NULL, pre);
                add_secret(&l, NULL, value);
            }
        } else if (eq) {
            add_secret(&l, pre, value);
        } else {
            add_word(&l, NULL, pre);
            if (value)
                add_secret(&l, NULL, value);
        }
        free(pre);
    }
    if (!seed_done) {
        add_word(&l, NULL, "--seed");
        add_word(&l, NULL, seed_s);
    }
    if (!out_done) {
        add_word(&l, NULL, "--out");
        add_word(&l, NULL, out);
    }
    if (l.oom) {
        free(l.s);
        return NULL;
    }
    return l.s;
}
