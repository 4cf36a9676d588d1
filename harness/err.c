/*
 * err.c - the shared error struct, connection-string redaction and the
 * mapping from error codes to exit codes.
 *
 * Invariants: every function here touches only its arguments (no global
 * state, thread-safe); err->msg is always NUL-terminated and never longer
 * than its buffer; qc_redact_conninfo never lets a password character reach
 * out, even when out is too small or the input is malformed (an unterminated
 * quote or brace redacts to the end of the string).
 *
 * Redaction understands three syntaxes:
 *   - libpq key=value: "host=h password=secret", "password = 'a b\' c'";
 *   - libpq URIs: "postgres[ql]://user:secret@host:port/db?password=secret";
 *   - ODBC strings: "Driver={X};Server=h;PWD={a;b}}c};Uid=u" where a braced
 *     value may hold ';' and '}}' stands for '}'.
 * A string is treated as ODBC when it has a key that only ODBC uses (driver,
 * dsn, uid, pwd, server, database); libpq rejects those keys, so the two
 * syntaxes cannot be confused on a string that either library accepts.
 */
#include "err.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int qc_err_set(qc_err *err, int code, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL)
        return code;
    err->code = code;
    err->sqlstate[0] = '\0';
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

void qc_err_prefix(qc_err *err, const char *fmt, ...)
{
    char prefix[256];
    size_t plen, mlen, cap = sizeof err->msg - 1;
    va_list ap;

    if (err == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix - 2, fmt, ap);
    va_end(ap);
    strcat(prefix, ": ");
    plen = strlen(prefix);
    mlen = strnlen(err->msg, cap);
    /* Shift the old message right (losing its tail if it no longer fits)
     * and put the prefix in front. */
    if (mlen > cap - plen)
        mlen = cap - plen;
    memmove(err->msg + plen, err->msg, mlen);
    err->msg[plen + mlen] = '\0';
    memcpy(err->msg, prefix, plen);
}

int qc_err_exit_code(int code)
{
    if (code == 0)
        return 0;
    if (code == QC_EINVAL)
        return 2;
    if (code == QC_EADAPTER)
        return 5;
    return 3;
}

/* Bounded output buffer: appends while there is room, always terminated. */
typedef struct outbuf {
    char *p;
    size_t n;
    size_t len;
    /* When set, called with every password value found (as written in the
     * string: quotes, braces and escapes included). */
    void (*on_secret)(void *ctx, const char *v, size_t len);
    void *ctx;
} outbuf;



static void put(outbuf *o, const char *s, size_t len)
{
    size_t room;

    if (o->n == 0)
        return;
    room = o->n - 1 - o->len;
    if (len > room)
        len = room;
    memcpy(o->p + o->len, s, len);
    o->len += len;
    o->p[o->len] = '\0';
}

static void secret(outbuf *o, const char *v, size_t len)
{
    if (o->on_secret != NULL && len > 0)
        o->on_secret(o->ctx, v, len);
    put(o, "***", 3);
}

static int is_password_key(const char *k, size_t len)
{
    while (len > 0 && isspace((unsigned char)k[len - 1]))
        len--;
    while (len > 0 && isspace((unsigned char)*k)) {
        k++;
        len--;
    }
    return (len == 8 && strncasecmp(k, "password", 8) == 0) ||
           (len == 3 && strncasecmp(k, "pwd", 3) == 0);
}

/* Whether in has, at a key position (start, after ';' or whitespace), one of
 * the keys only ODBC connection strings use. */
static int looks_like_odbc(const char *in)
{
    static const char *const keys[] = {"driver", "dsn", "uid", "pwd", "server", "database"};
    const char *s;
    size_t i, k;

    for (s = in; *s; s++) {
        if (s != in && s[-1] != ';' && !isspace((unsigned char)s[-1]))
            continue;
        for (k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            i = strlen(keys[k]);
            if (strncasecmp(s, keys[k], i) != 0)
                continue;
            while (s[i] == ' ' || s[i] == '\t')
                i++;
            if (s[i] == '=')
                return 1;
        }
    }
    return 0;
}

/* ODBC: attributes separated by ';', values optionally braced. */
static void redact_odbc(const char *s, outbuf *o)
{
    while (*s) {
        const char *key = s, *val;
        size_t keylen;

        while (*s && *s != '=' && *s != ';')
            s++;
        keylen = (size_t)(s - key);
        put(o, key, keylen);
        if (*s != '=') {
            if (*s == ';')
                put(o, s++, 1);
            continue;
        }
        put(o, s++, 1);
        val = s;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '{') {
            for (s++; *s; s++) {
                if (*s == '}' && s[1] == '}')
                    s++;
                else if (*s == '}')
                    break;
            }
            if (*s == '}')
                s++;
        }
        while (*s && *s != ';')
            s++;
        if (is_password_key(key, keylen))
            secret(o, val, (size_t)(s - val));
        else
            put(o, val, (size_t)(s - val));
    }
}

/* libpq key = value pairs separated by whitespace; values may be
 * single-quoted, and backslash escapes the next character either way. */
static void redact_keyvalue(const char *s, outbuf *o)
{
    while (*s) {
        const char *key, *val;
        size_t keylen;

        while (isspace((unsigned char)*s))
            put(o, s++, 1);
        key = s;
        while (*s && *s != '=' && !isspace((unsigned char)*s))
            s++;
        keylen = (size_t)(s - key);
        put(o, key, keylen);
        while (isspace((unsigned char)*s))
            put(o, s++, 1);
        if (*s != '=')
            continue;
        put(o, s++, 1);
        while (isspace((unsigned char)*s))
            put(o, s++, 1);
        val = s;
        if (*s == '\'') {
            for (s++; *s && *s != '\''; s++)
                if (*s == '\\' && s[1])
                    s++;
            if (*s == '\'')
                s++;
        } else {
            for (; *s && !isspace((unsigned char)*s); s++)
                if (*s == '\\' && s[1])
                    s++;
        }
        if (is_password_key(key, keylen))
            secret(o, val, (size_t)(s - val));
        else
            put(o, val, (size_t)(s - val));
    }
}

/* postgres://user:pass@hosts/db?k=v&password=x */
static void redact_uri(const char *s, const char *rest, outbuf *o)
{
    const char *query = strchr(rest, '?');
    const char *end = query ? query : rest + strlen(rest);
    const char *at = NULL, *colon, *p;

    /* The userinfo ends at the last '@' before the query, so a password
     * holding an unencoded '/' or '@' is still covered. */
    for (p = rest; p < end; p++)
        if (*p == '@')
            at = p;
    put(o, s, (size_t)(rest - s));
    if (at != NULL) {
        colon = memchr(rest, ':', (size_t)(at - rest));
        if (colon != NULL) {
            put(o, rest, (size_t)(colon - rest) + 1);
            secret(o, colon + 1, (size_t)(at - colon - 1));
            rest = at;
        }
    }
    put(o, rest, (size_t)(end - rest));
    if (query == NULL)
        return;
    put(o, query, 1);
    for (p = query + 1; *p;) {
        const char *k = p, *eq;

        while (*p && *p != '&')
            p++;
        eq = memchr(k, '=', (size_t)(p - k));
        if (eq != NULL && is_password_key(k, (size_t)(eq - k))) {
            put(o, k, (size_t)(eq - k) + 1);
            secret(o, eq + 1, (size_t)(p - eq - 1));
        } else {
            put(o, k, (size_t)(p - k));
        }
        if (*p == '&')
            put(o, p++, 1);
    }
}

void qc_redact_conninfo(const char *in, char *out, size_t n)
{
    outbuf o = {out, n, 0, NULL, NULL};

    if (n == 0)
        return;
    out[0] = '\0';
    if (in == NULL)
        return;
    if (strncasecmp(in, "postgresql://", 13) == 0)
        redact_uri(in, in + 13, &o);
    else if (strncasecmp(in, "postgres://", 11) == 0)
        redact_uri(in, in + 11, &o);
    else if (looks_like_odbc(in))
        redact_odbc(in, &o);
    else
        redact_keyvalue(in, &o);
    /* A string that mixes the syntaxes ("host=h password=x database=d"
     * reads as ODBC, one attribute "host") still loses every value that
     * any syntax calls a password. */
    qc_scrub_conninfo(out, n, in);
}

void qc_scrub_secret(char *buf, size_t n, const char *secret)
{
    size_t slen, len, tail;
    char *hit;

    if (secret == NULL || (slen = strlen(secret)) == 0 || n < 4)
        return;
    while ((hit = strstr(buf, secret)) != NULL) {
        len = strlen(buf);
        tail = len - (size_t)(hit - buf) - slen;
        if ((size_t)(hit - buf) + 3 + tail >= n)
            tail = n - 1 - (size_t)(hit - buf) - 3;
        memmove(hit + 3, hit + slen, tail);
        hit[3 + tail] = '\0';
        memcpy(hit, "***", 3);
    }
}

/* The scrub target of qc_scrub_conninfo. */
typedef struct scrub_ctx {
    char *buf;
    size_t n;
} scrub_ctx;

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Scrubs each piece of v between separators.  Pieces shorter than 3
 * characters are left: they would scrub ordinary text and tell little of
 * the secret; so are pieces followed by '=' (key names).  Modifies v
 * temporarily. */
static void scrub_pieces(scrub_ctx *c, char *v)
{
    size_t i = 0, len;

    while (v[i]) {
        len = strcspn(v + i, " \t\r\n;'\"{}\\%@:/&=");
        /* a piece followed by '=' is the next key ("pwd=x host=h" read as
         * one ODBC value), not a part of the secret */
        if (len >= 3 && v[i + len] != '=') {
            char save = v[i + len];
            v[i + len] = '\0';
            qc_scrub_secret(c->buf, c->n, v + i);
            v[i + len] = save;
        }
        i += len;
        if (v[i])
            i++;
    }
}

/* Scrubs one password value in the forms a library or a server may show
 * it: as written, trimmed, without its quotes or braces (escapes undone),
 * percent-decoded, and each piece of 3 or more characters between spaces,
 * ';', quotes or braces. */
static void scrub_value(void *ctx, const char *v, size_t len)
{
    scrub_ctx *c = ctx;
    char *raw = malloc(3 * (len + 1)), *plain, *dec;
    size_t i, j = 0, k = 0;

    if (raw == NULL) { /* cannot look: show nothing rather than a secret */
        c->buf[0] = '\0';
        return;
    }
    plain = raw + len + 1;
    dec = plain + len + 1;
    memcpy(raw, v, len);
    raw[len] = '\0';
    qc_scrub_secret(c->buf, c->n, raw);
    while (len > 0 && isspace((unsigned char)raw[len - 1]))
        raw[--len] = '\0';
    for (i = 0; isspace((unsigned char)raw[i]); i++)
        ;
    qc_scrub_secret(c->buf, c->n, raw + i);
    if (raw[i] == '\'') { /* libpq quoting: 'a\'b' */
        for (i++; raw[i] && raw[i] != '\''; i++) {
            if (raw[i] == '\\' && raw[i + 1])
                i++;
            plain[j++] = raw[i];
        }
    } else if (raw[i] == '{') { /* ODBC braces: {a}}b} */
        for (i++; raw[i]; i++) {
            if (raw[i] == '}' && raw[i + 1] == '}')
                i++;
            else if (raw[i] == '}')
                break;
            plain[j++] = raw[i];
        }
    } else {
        for (; raw[i]; i++) {
            if (raw[i] == '\\' && raw[i + 1])
                i++;
            plain[j++] = raw[i];
        }
    }
    plain[j] = '\0';
    qc_scrub_secret(c->buf, c->n, plain);
    for (i = 0; plain[i]; i++) {
        if (plain[i] == '%' && hexval(plain[i + 1]) >= 0 && hexval(plain[i + 2]) >= 0) {
            dec[k++] = (char)(hexval(plain[i + 1]) * 16 + hexval(plain[i + 2]));
            i += 2;
        } else {
            dec[k++] = plain[i];
        }
    }
    dec[k] = '\0';
    qc_scrub_secret(c->buf, c->n, dec);
    /* Pieces: a library that splits the value at a space, a ';', a quote
     * or a brace ("Pwd=a b" read by libpq) may quote one piece. */
    scrub_pieces(c, raw);
    scrub_pieces(c, dec);
    free(raw);
}

void qc_scrub_conninfo(char *buf, size_t n, const char *conninfo)
{
    scrub_ctx ctx = {buf, n};
    outbuf o = {NULL, 0, 0, scrub_value, &ctx};
    const char *p;

    if (buf == NULL || n == 0 || conninfo == NULL)
        return;
    /* Every syntax, whatever the string looks like: a string written for
     * one library and given to the other must not leak either. */
    redact_odbc(conninfo, &o);
    redact_keyvalue(conninfo, &o);
    for (p = conninfo; *p; p++)
        if (strncmp(p, "://", 3) == 0) {
            redact_uri(conninfo, p + 3, &o);
            break;
        }
}
