/*
 * fuzz_ledger.c - libFuzzer target for the ledger reader: the input is
 * ledger text (JSON Lines), parsed by qc_history_parse; a history that
 * parses goes through every checker (qc_check_all), which is where the
 * readers' output is used.  Any error is fine; a crash, a sanitizer report
 * or a hang is a bug.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../harness/checkers.h"
#include "../../harness/history.h"

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
    if (qc_history_parse(&h, text, &err) == 0) {
        qc_check *c = NULL;
        size_t n = 0;
        if (qc_check_all(&h, &c, &n) == 0)
            qc_checks_free(c, n);
    }
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
