/*
 * flatjson.h - a scanner of flat JSON objects, the ledger's event lines
 * (issue 16: jansson's per-line parse was most of an audit's cost).
 *
 * A flat object is {"key":value,...} whose values are strings, numbers,
 * true, false or null (no nested object or array).  The scanner accepts a
 * strict subset of JSON (RFC 8259) and gives up (returns -1) on anything
 * outside it, so that its caller can hand the line to jansson, which then
 * either reads it or names the error: the scanner never rejects a valid
 * line, and never accepts an invalid one.  What it gives up on although
 * valid: a nested value, more than QC_FLAT_MAX members, an escaped key, a
 * "\uXXXX" escape, a byte >= 0x80 (its UTF-8 is left to jansson to check),
 * an integer of more than 18 digits, a real longer than 63 characters or
 * out of range.  Numbers are read as jansson reads them: a token without
 * '.', 'e' or 'E' is an integer, any other a real with strtod's value (the
 * fast path m / 10^k or m * 10^k, m <= 2^53 and k <= 22, is the same
 * correctly rounded double; the C locale: qchaos never calls setlocale).
 */
#ifndef QC_FLATJSON_H
#define QC_FLATJSON_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    QC_FLAT_NULL = 0,
    QC_FLAT_FALSE,
    QC_FLAT_TRUE,
    QC_FLAT_INT,  /* i holds it, d = (double)i */
    QC_FLAT_REAL, /* d holds it */
    QC_FLAT_STR   /* s[0..slen): the text between the quotes, escapes not decoded */
} qc_flat_kind;

typedef struct qc_flat_member {
    const char *key; /* borrowed from the line: the key's text, no escapes in it */
    uint32_t klen;
    qc_flat_kind kind;
    int esc;       /* string: 1 when s holds backslash escapes (\" \\ \/ \b \f \n \r \t) */
    const char *s; /* string: borrowed from the line */
    uint32_t slen;
    int64_t i;
    double d;
} qc_flat_member;

#define QC_FLAT_MAX 64

/* Scans the object in p[0..len) (whitespace allowed around it and between
 * tokens) into m[0..max), in the line's order; duplicate keys are kept as
 * they come.  Returns the number of members, or -1 when the line is not a
 * flat object the scanner reads (see above: hand it to jansson).  Pure,
 * thread-safe; m borrows from p. */
int qc__flat_scan(const char *p, size_t len, qc_flat_member *m, int max);

/* Decodes a string member's escapes into out (at least slen bytes), returns
 * the decoded length.  Only the escapes qc__flat_scan accepts occur, so the
 * result holds no NUL byte. */
size_t qc__flat_unescape(const char *s, size_t slen, char *out);

/* The double of the whole text s (NUL-terminated) as strtod(s, &end) with
 * *end == '\0' reads it: a JSON number within the exact fast path (m /
 * 10^k, m <= 2^53, |k| <= 22: IEEE division rounds once, as strtod does;
 * an integer of at most 18 digits), else strtod itself.  Returns 0 and sets
 * *d, or -1 when strtod would not read all of s.  Pure; thread-safe.  For
 * the server's epoch ms a worker reads from every claim (issue 16). */
int qc_parse_double(const char *s, double *d);

#endif
