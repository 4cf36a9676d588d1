/*
 * e2e_fixture.h - what the end-to-end test binaries (check_e2e,
 * check_scenarios, check_target) share: the qchaos binary under test,
 * running shell command lines with it, and reading a run's results.json.
 * Header-only (static), like ledger_fixture.h; each binary sets outdir.
 */
#ifndef QC_TESTS_E2E_FIXTURE_H
#define QC_TESTS_E2E_FIXTURE_H

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The folder runs write into (set by each binary's main). */
static char outdir[256];

/* The qchaos binary under test: QC_QCHAOS_BIN (tests/run.sh runs these
 * tests once more with ./qchaos-asan), default ./qchaos. */
static inline const char *qc_bin(void)
{
    const char *b = getenv("QC_QCHAOS_BIN");
    return b && *b ? b : "./qchaos";
}

/* system(cmd) with every "./qchaos " replaced by qc_bin(). */
static inline int qc_system(const char *cmd)
{
    const char *bin = qc_bin(), *p;
    size_t n = strlen(cmd) + 1, blen = strlen(bin);
    for (p = cmd; (p = strstr(p, "./qchaos ")) != NULL; p += 9)
        n += blen;
    char *out = malloc(n), *o = out;
    if (out == NULL)
        return -1;
    for (p = cmd; *p;) {
        if (strncmp(p, "./qchaos ", 9) == 0) {
            memcpy(o, bin, blen);
            o += blen;
            *o++ = ' ';
            p += 9;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    int st = system(out);
    free(out);
    return st;
}

/* Runs a shell command line (qc_system); returns its exit code, and its
 * stderr text in *errtext (malloc'd) when errtext is not NULL. */
static inline int run(const char *cmd, char **errtext)
{
    char errpath[300], full[8192];
    snprintf(errpath, sizeof errpath, "%s/stderr.%d.txt", outdir, (int)getpid());
    snprintf(full, sizeof full, "%s >%s/stdout.txt 2>%s", cmd, outdir, errpath);
    int st = qc_system(full);
    if (errtext) {
        FILE *f = fopen(errpath, "r");
        *errtext = calloc(1, 65536);
        if (f) {
            size_t n = fread(*errtext, 1, 65535, f);
            (*errtext)[n] = 0;
            fclose(f);
        }
    }
    ck_assert_msg(WIFEXITED(st), "command died: %s", cmd);
    return WEXITSTATUS(st);
}

/* dir/results.json, parsed (the test fails when it cannot be read). */
static inline json_t *load_results(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/results.json", dir);
    json_error_t je;
    json_t *r = json_load_file(p, 0, &je);
    ck_assert_msg(r != NULL, "cannot read %s: %s", p, je.text);
    return r;
}

/* The checker called name in results (the test fails when it is missing). */
static inline json_t *checker(json_t *results, const char *name)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(results, "checkers"), i, c)
    {
        if (!strcmp(json_string_value(json_object_get(c, "name")), name))
            return c;
    }
    ck_abort_msg("checker %s not in results", name);
    return NULL;
}

static inline const char *verdict(json_t *results, const char *name)
{
    return json_string_value(json_object_get(checker(results, name), "verdict"));
}

#endif
