/*
 * fuzz_protocol.c - libFuzzer target for the protocol loader: the input is
 * a protocol file's text, parsed by qc_protocol_parse for both placeholder
 * styles (libpq $n and ODBC ?).  The path names a folder that does not
 * exist, so a relative "-- base:" finds nothing.  Any error is fine; a
 * crash, a sanitizer report or a hang is a bug.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../backends/protocol.h"

int qc_fuzz_protocol(const uint8_t *data, size_t size);

int qc_fuzz_protocol(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);

    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    for (int style = QC_PARAM_DOLLAR; style <= QC_PARAM_QMARK; style++) {
        qc_protocol *p = NULL;
        qc_err err = {0};
        if (qc_protocol_parse("/nonexistent-qchaos-fuzz/p.sql", text, (qc_param_style)style, &p,
                              &err) == 0)
            qc_protocol_destroy(p);
    }
    free(text);
    return 0;
}

#ifndef QC_FUZZ_LIBRARY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return qc_fuzz_protocol(data, size);
}
#endif
