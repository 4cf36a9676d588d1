/*
 * flatjson.c - the flat-object scanner of flatjson.h.
 *
 * One pass over the line, no allocation: keys and strings are spans of the
 * line, numbers are converted as they are met.  Every rule below is one of
 * RFC 8259's, narrowed where jansson would need a second look (a byte >=
 * 0x80 needs its UTF-8 check, "\u" its surrogate rules, a long integer its
 * overflow check): there the scanner returns -1 and jansson reads the line,
 * so both readers agree on every line by construction (tests/check_flatjson
 * compares them on real ledgers and crafted lines).
 */
#include "flatjson.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* 1 in each byte's high bit of v that may hold a '"', a '\\', a control
 * character (< 0x20) or a byte >= 0x80; 0 (exactly) when none of its 8
 * bytes does (the bit tricks of "Bit Twiddling Hacks", hasless/haszero:
 * exact about whether such a byte exists, and the lowest bit set is the
 * first such byte: a borrow only flags bytes above a true one). */
static uint64_t word_special(uint64_t v)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    uint64_t q = v ^ (ones * '"'), b = v ^ (ones * '\\');
    return ((q - ones) & ~q) | ((b - ones) & ~b) | ((v - ones * 0x20) & ~v) | (v & high);
}

/* A string starting after its opening quote at p; returns the position of
 * its closing quote or NULL (not understood).  *esc says it has escapes. */
static const char *scan_string(const char *p, const char *end, int *esc)
{
    *esc = 0;
    while (p < end) {
        /* 8 plain bytes at a time (issue 16: a ledger line is mostly
         * strings); the byte loop below takes any word that may hold a
         * byte to look at */
        while (end - p >= 8) {
            uint64_t v;
            memcpy(&v, p, sizeof v);
            uint64_t sp = word_special(v) & 0x8080808080808080u;
            if (sp != 0) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
                p += __builtin_ctzll(sp) / 8; /* the first byte to look at */
#endif
                break;
            }
            p += 8;
        }
        if (p >= end)
            break;
        unsigned char c = (unsigned char)*p;
        if (c == '"')
            return p;
        if (c < 0x20 || c >= 0x80)
            return NULL; /* a control character (invalid) or UTF-8: jansson's */
        if (c == '\\') {
            if (p + 1 >= end)
                return NULL;
            switch (p[1]) {
            case '"':
            case '\\':
            case '/':
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't':
                *esc = 1;
                p += 2;
                continue;
            default:
                return NULL; /* \uXXXX, or an invalid escape */
            }
        }
        p++;
    }
    return NULL;
}

static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A number token at p (JSON grammar); fills m, returns the position after
 * it or NULL (not understood). */
static const char *scan_number(const char *p, const char *end, qc_flat_member *m)
{
    const char *start = p;
    int neg = 0, is_real = 0, nd = 0, frac = 0, over = 0;
    uint64_t mant = 0;
    long ex = 0;

    if (p < end && *p == '-') {
        neg = 1;
        p++;
    }
    if (p >= end)
        return NULL;
    if (*p == '0') {
        p++;
        if (p < end && *p >= '0' && *p <= '9')
            return NULL; /* a leading zero: invalid */
    } else if (*p >= '1' && *p <= '9') {
        while (p < end && *p >= '0' && *p <= '9') {
            if (nd < 19)
                mant = mant * 10 + (uint64_t)(*p - '0');
            else
                over = 1;
            nd++;
            p++;
        }
    } else {
        return NULL;
    }
    if (p < end && *p == '.') {
        is_real = 1;
        p++;
        if (p >= end || *p < '0' || *p > '9')
            return NULL;
        while (p < end && *p >= '0' && *p <= '9') {
            if (nd == 0 && *p == '0') {
                frac++; /* leading zeros of 0.000x: no significant digit yet */
            } else if (nd < 19) {
                mant = mant * 10 + (uint64_t)(*p - '0');
                nd++;
                frac++;
            } else {
                over = 1;
            }
            p++;
        }
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        int eneg = 0;
        is_real = 1;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            eneg = *p++ == '-';
        if (p >= end || *p < '0' || *p > '9')
            return NULL;
        while (p < end && *p >= '0' && *p <= '9') {
            if (ex < 100000)
                ex = ex * 10 + (*p - '0');
            p++;
        }
        if (eneg)
            ex = -ex;
    }
    if (!is_real) {
        if (nd > 18)
            return NULL; /* may overflow int64: jansson says so */
        m->kind = QC_FLAT_INT;
        m->i = neg ? -(int64_t)mant : (int64_t)mant;
        m->d = (double)m->i;
        return p;
    }
    m->kind = QC_FLAT_REAL;
    long e10 = ex - frac;
    if (!over && mant <= (1ull << 53) && e10 >= -22 && e10 <= 22) {
        /* Both operands exact: IEEE division / multiplication rounds the
         * exact value once, as strtod does. */
        double d = (double)mant;
        d = e10 < 0 ? d / pow10_exact[-e10] : d * pow10_exact[e10];
        m->d = neg ? -d : d;
        return p;
    }
    /* The rest through strtod, as jansson (C locale). */
    char buf[64];
    size_t n = (size_t)(p - start);
    char *stop;
    if (n >= sizeof buf)
        return NULL;
    memcpy(buf, start, n);
    buf[n] = '\0';
    m->d = strtod(buf, &stop);
    if (stop != buf + n || isinf(m->d))
        return NULL; /* jansson: "real number overflow" */
    return p;
}

int qc_parse_double(const char *s, double *d)
{
    size_t n = strlen(s);
    qc_flat_member m;
    if (n > 0 && scan_number(s, s + n, &m) == s + n) {
        /* an integer's double is its int64's, but "-0" is strtod's -0.0 */
        *d = m.kind == QC_FLAT_INT && m.i == 0 && s[0] == '-' ? -0.0 : m.d;
        return 0;
    }
    char *stop;
    double v = strtod(s, &stop);
    if (stop == s || *stop != '\0')
        return -1;
    *d = v;
    return 0;
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && is_ws(*p))
        p++;
    return p;
}

static const char *scan_literal(const char *p, const char *end, const char *word, size_t n)
{
    if ((size_t)(end - p) < n || memcmp(p, word, n) != 0)
        return NULL;
    return p + n;
}

int qc__flat_scan(const char *p, size_t len, qc_flat_member *m, int max)
{
    const char *end = p + len;
    int n = 0, esc;

    p = skip_ws(p, end);
    if (p >= end || *p != '{')
        return -1;
    p = skip_ws(p + 1, end);
    if (p < end && *p == '}')
        return skip_ws(p + 1, end) == end ? 0 : -1;
    for (;;) {
        qc_flat_member *x;
        const char *q;
        if (n == max || p >= end || *p != '"')
            return -1;
        x = &m[n];
        q = scan_string(p + 1, end, &esc);
        if (q == NULL || esc)
            return -1; /* an escaped key could spell a known one: jansson's */
        x->key = p + 1;
        x->klen = (uint32_t)(q - p - 1);
        p = skip_ws(q + 1, end);
        if (p >= end || *p != ':')
            return -1;
        p = skip_ws(p + 1, end);
        if (p >= end)
            return -1;
        x->esc = 0;
        x->s = NULL;
        x->slen = 0;
        x->i = 0;
        x->d = 0;
        switch (*p) {
        case '"':
            q = scan_string(p + 1, end, &x->esc);
            if (q == NULL)
                return -1;
            x->kind = QC_FLAT_STR;
            x->s = p + 1;
            x->slen = (uint32_t)(q - p - 1);
            p = q + 1;
            break;
        case 't':
            x->kind = QC_FLAT_TRUE;
            p = scan_literal(p, end, "true", 4);
            break;
        case 'f':
            x->kind = QC_FLAT_FALSE;
            p = scan_literal(p, end, "false", 5);
            break;
        case 'n':
            x->kind = QC_FLAT_NULL;
            p = scan_literal(p, end, "null", 4);
            break;
        default:
            p = scan_number(p, end, x);
            break;
        }
        if (p == NULL)
            return -1;
        n++;
        p = skip_ws(p, end);
        if (p >= end)
            return -1;
        if (*p == '}')
            return skip_ws(p + 1, end) == end ? n : -1;
        if (*p != ',')
            return -1;
        p = skip_ws(p + 1, end);
    }
}

size_t qc__flat_unescape(const char *s, size_t slen, char *out)
{
    size_t o = 0;

    for (size_t i = 0; i < slen; i++) {
        char c = s[i];
        if (c == '\\' && i + 1 < slen) {
            i++;
            switch (s[i]) {
            case 'b':
                c = '\b';
                break;
            case 'f':
                c = '\f';
                break;
            case 'n':
                c = '\n';
                break;
            case 'r':
                c = '\r';
                break;
            case 't':
                c = '\t';
                break;
            default: /* " \ / */
                c = s[i];
                break;
            }
        }
        out[o++] = c;
    }
    return o;
}
