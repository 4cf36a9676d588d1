/*
 * input.h - opening the files qchaos reads (scenario, protocol, ledger) so
 * that what is not a regular file is refused at once: a FIFO would block
 * the open or the read for ever, /dev/zero would be read until memory runs
 * out.
 */
#ifndef QC_INPUT_H
#define QC_INPUT_H

#include <stdio.h>

#include "err.h"

/* The longest ledger line a reader accepts, in bytes (a line is one JSON
 * event; real ones are a few hundred bytes). */
#define QC_MAX_LEDGER_LINE (1024 * 1024)

/* Opens path for reading ("rb") when it is a regular file (symlinks
 * followed).  The open never blocks: it is done with O_NONBLOCK, checked
 * with fstat, then the descriptor is set back to blocking.  what names the
 * input in messages ("ledger", "protocol", "scenario").  *out receives the
 * stream (the caller fcloses it).  Errors: QC_EINVAL "WHAT 'PATH' is not a
 * regular file (a FIFO)" (or a device, a folder, a socket), QC_EIO "cannot
 * open WHAT 'PATH': reason".  Thread-safe. */
int qc_open_input(const char *path, const char *what, FILE **out, qc_err *err);

#endif
