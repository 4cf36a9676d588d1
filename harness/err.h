/*
 * err.h - error codes and the error struct shared by every qchaos module.
 *
 * Functions return 0 or a negative QC_E* code (libuv style) and, when the
 * caller passes a qc_err, fill it with a message that names what failed and
 * with what value.  Messages never contain a password: connection strings
 * are redacted with qc_redact_conninfo() before they are quoted.
 */
#ifndef QC_ERR_H
#define QC_ERR_H

#include <stddef.h>

enum {
    QC_OK = 0,
    QC_EINVAL = -1,  /* bad input: scenario, protocol, CLI (exit 2) */
    QC_ECONN = -2,   /* cannot connect / connection lost (exit 3 at setup) */
    QC_EDB = -3,     /* the server rejected a statement (SQLSTATE in err) */
    QC_ENOMEM = -4,  /* out of memory */
    QC_EIO = -5,     /* file or process I/O failed */
    QC_ESTATE = -6,  /* protocol returned something impossible (missing column) */
    QC_EADAPTER = -7 /* an adapter process broke the adapter protocol (exit 5; docs/adapters.md) */
};

typedef struct qc_err {
    int code;          /* one of QC_E*, 0 when unset */
    char sqlstate[8];  /* SQLSTATE / ODBC state, "" when none */
    char msg[768];     /* human message with context, no trailing newline */
} qc_err;

/* Fills err (may be NULL) with code and a printf-style message; returns code.
 * Thread-safe (touches only *err). */
int qc_err_set(qc_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepends "prefix: " to err->msg (context from an outer layer). */
void qc_err_prefix(qc_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copies a libpq conninfo / URI or an ODBC connection string into out
 * (size n) with every password value replaced by "***".  Recognises
 * password=..., PWD=..., Pwd=... (case-insensitive) and the password part of
 * postgres://user:pass@host URIs.  Thread-safe. */
void qc_redact_conninfo(const char *in, char *out, size_t n);

/* Replaces every occurrence of secret (when non-empty) in buf by "***",
 * for server messages that may echo a password; buf stays NUL-terminated
 * within n bytes.  Thread-safe (buf is the caller's). */
void qc_scrub_secret(char *buf, size_t n, const char *secret);

/* Replaces in buf (size n, NUL-terminated) by "***" every password value
 * conninfo holds, reading conninfo as an ODBC string, as libpq key=value
 * pairs and as a URI all at once (a string written for one library and
 * given to the other still cannot leak): each value as written, trimmed,
 * unquoted / unbraced with escapes undone, percent-decoded, and each
 * piece of 3+ characters between spaces, ';', quotes or braces.  For
 * messages built from a library's error text or from parts of conninfo.
 * Thread-safe (buf is the caller's). */
void qc_scrub_conninfo(char *buf, size_t n, const char *conninfo);

/* Maps an error code to the documented exit code (DESIGN.md): QC_EINVAL -> 2,
 * QC_EADAPTER -> 5,
 * QC_ECONN -> 3, anything else non-zero -> 3. */
int qc_err_exit_code(int code);

#endif
