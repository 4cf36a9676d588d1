/*
 * fuzz_scenario.c - libFuzzer target for the scenario loader: the input is
 * a scenario file's bytes, parsed by qc_scenario_parse (the text entry point
 * of qc_scenario_load) and then validated.  Any error is fine; a crash, a
 * sanitizer report or a hang is a bug.  `make fuzz` builds it; with
 * QC_FUZZ_LIBRARY defined (tests/check_fuzz.c) it is a plain function.
 */
#include <stddef.h>
#include <stdint.h>

#include "../../harness/scenario.h"

int qc_fuzz_scenario(const uint8_t *data, size_t size);

int qc_fuzz_scenario(const uint8_t *data, size_t size)
{
    qc_scenario s;
    qc_err err = {0};

    qc_scenario_defaults(&s);
    if (qc_scenario_parse(&s, "fuzz.ini", (const char *)data, size, &err) == 0)
        (void)qc_scenario_validate(&s, &err);
    return 0;
}

#ifndef QC_FUZZ_LIBRARY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return qc_fuzz_scenario(data, size);
}
#endif
