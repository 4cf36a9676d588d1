/*
 * result.c - accessors for qc_result, the driver-neutral copy of one
 * statement's rows.
 *
 * Invariants: a qc_result either is all zero (no columns, no rows, affected
 * 0) or owns ncols column names and nrows * ncols cells, every one allocated
 * with malloc, or all of them and the two arrays in one block (a NULL cell
 * is SQL NULL).  Nothing here allocates, so none of
 * these functions can fail; all are thread-safe on distinct results.
 * Also the drivers' one process-wide setting, the session time zone
 * (driver.h qc_driver_set_session_time_zone).
 */
#include "driver.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stdio.h>

int qc_result_col(const qc_result *r, const char *name)
{
    int i;

    if (r == NULL || name == NULL || r->cols == NULL)
        return -1;
    /* the names are lower-cased: the first character rules most out */
    int first = tolower((unsigned char)name[0]);
    for (i = 0; i < r->ncols; i++)
        if (r->cols[i] != NULL && r->cols[i][0] == first && strcasecmp(r->cols[i], name) == 0)
            return i;
    return -1;
}

const char *qc_result_get(const qc_result *r, int row, const char *name)
{
    int col = qc_result_col(r, name);

    if (col < 0 || row < 0 || row >= r->nrows || r->cells == NULL)
        return NULL;
    return r->cells[(size_t)row * (size_t)r->ncols + (size_t)col];
}

void qc_result_clear(qc_result *r)
{
    size_t i, ncells;

    if (r == NULL)
        return;
    if (r->block != NULL) {
        free(r->block);
        memset(r, 0, sizeof *r);
        return;
    }
    if (r->cols != NULL)
        for (i = 0; i < (size_t)(r->ncols > 0 ? r->ncols : 0); i++)
            free(r->cols[i]);
    if (r->cells != NULL && r->ncols > 0 && r->nrows > 0) {
        ncells = (size_t)r->nrows * (size_t)r->ncols;
        for (i = 0; i < ncells; i++)
            free(r->cells[i]);
    }
    free(r->cols);
    free(r->cells);
    memset(r, 0, sizeof *r);
}

void qc_result_move(qc_result *dst, qc_result *src)
{
    if (dst == src)
        return;
    qc_result_clear(dst);
    if (src == NULL)
        return;
    *dst = *src;
    memset(src, 0, sizeof *src);
}

static char session_tz[8];

int qc_valid_utc_offset(const char *s)
{
    if (s == NULL || strlen(s) != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':')
        return 0;
    for (int i = 1; i < 6; i++)
        if (i != 3 && (s[i] < '0' || s[i] > '9'))
            return 0;
    int hh = (s[1] - '0') * 10 + (s[2] - '0'), mm = (s[4] - '0') * 10 + (s[5] - '0');
    return hh <= 14 && mm <= 59;
}

int qc_driver_set_session_time_zone(const char *tz, qc_err *err)
{
    if (tz == NULL || *tz == '\0') {
        session_tz[0] = '\0';
        return 0;
    }
    if (!qc_valid_utc_offset(tz))
        return qc_err_set(err, QC_EINVAL, "session time zone must be +HH:MM or -HH:MM, got '%s'",
                          tz);
    memcpy(session_tz, tz, 7);
    return 0;
}

const char *qc_driver_session_time_zone(void)
{
    return session_tz;
}
