/*
 * fuzz_ledger.c - libFuzzer target for the ledger reader: the input is
 * ledger text (JSON Lines), parsed by qc_history_parse; a history that
 * parses goes through every checker (qc_check_all), which is where the
 * readers' output is used.  Any error is fine; a crash, a sanitizer report
 * or a hang is a bug.  The same text is also read with jansson alone
 * (QC_LEDGER_PARSER=jansson): the fast reader (flatjson.h) must give the
 * same result, error message or events field by field, or the target
 * aborts (a differential fuzz of the two readers).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../harness/checkers.h"
#include "../../harness/history.h"
#include "../event_compare.h"

int qc_fuzz_ledger(const uint8_t *data, size_t size);

int qc_fuzz_ledger(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    qc_history h;
    qc_err err = {0};

    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    int rc = qc_history_parse(&h, text, &err);
    if (rc == 0) {
        qc_check *c = NULL;
        size_t n = 0;
        if (qc_check_all(&h, &c, &n) == 0)
            qc_checks_free(c, n);
    }
    /* the jansson reader must agree */
    qc_history hj;
    qc_err errj = {0};
    char why[512];
    setenv("QC_LEDGER_PARSER", "jansson", 1);
    int rcj = qc_history_parse(&hj, text, &errj);
    unsetenv("QC_LEDGER_PARSER");
    if (rc != rcj || (rc != 0 && strcmp(err.msg, errj.msg) != 0) ||
        (rc == 0 && (h.n != hj.n || h.torn != hj.torn))) {
        fprintf(stderr, "fuzz_ledger: readers differ: %d '%s' vs %d '%s'\n", rc, err.msg, rcj,
                errj.msg);
        abort();
    }
    for (size_t i = 0; rc == 0 && i < h.n; i++)
        if (event_differs(&h.ev[i], &hj.ev[i], why, sizeof why)) {
            fprintf(stderr, "fuzz_ledger: event %zu (line %d): %s\n", i, h.ev[i].line, why);
            abort();
        }
    qc_history_fini(&hj);
    qc_history_fini(&h);
    free(text);
    return 0;
}

#ifndef QC_FUZZ_LIBRARY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return qc_fuzz_ledger(data, size);
}
#endif
