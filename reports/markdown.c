/*
 * markdown.c - report.md and report.html: the verdict table first, then
 * each violation with its evidence in plain words, then the plots, then the
 * exact command and seed that repeat the run (in that order, so a reviewer
 * reads the answer before the detail).
 *
 * report.html is self-contained: one file with its styles inline and every
 * plot embedded as a data:image/png;base64 URI, so it can be mailed or
 * attached to a CI run and still render.  The only references out of it are
 * optional relative links to the SVG versions.
 *
 * Invariants: every string from results.json or the ledger is escaped for
 * its target (qc__md_escape / qc__xml_escape); both files tell the same
 * facts, built by the same helpers below; verdict words are mapped to a
 * fixed set of CSS classes, never pasted into markup.
 */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- facts shared by both formats ---------------------------------------- */

static const char *verdict_class(const char *v)
{
    if (strcmp(v, "PASS") == 0)
        return "pass";
    if (strcmp(v, "FAIL") == 0)
        return "fail";
    if (strcmp(v, "INCONCLUSIVE") == 0)
        return "inconclusive";
    if (strcmp(v, "NOT_APPLICABLE") == 0)
        return "na";
    return "other";
}

static const char *overall(const qc__results *r)
{
    if (r->verdict[0] != '\0')
        return r->verdict;
    for (size_t i = 0; i < r->nc; i++)
        if (strcmp(r->c[i].verdict, "FAIL") == 0)
            return "FAIL";
    return "UNKNOWN";
}

static long total_of(const qc__rcheck *c)
{
    return c->violations_total >= 0 ? c->violations_total : (long)c->nv;
}

static void fmt_long(char *buf, size_t n, long v)
{
    if (v >= 0)
        snprintf(buf, n, "%ld", v);
    else
        snprintf(buf, n, "-");
}

/* One line about the run: "seed 1, scenario default (scenarios/x.ini), ..." */
static void run_line(const qc__results *r, char *buf, size_t n)
{
    size_t len = 0;

#define ADD(...)                                                                                   \
    do {                                                                                           \
        if (len < n)                                                                               \
            len += (size_t)snprintf(buf + len, n - len, __VA_ARGS__);                              \
    } while (0)
    buf[0] = '\0';
    if (r->has_seed)
        ADD("seed %" PRIu64, r->seed);
    else
        ADD("seed unknown");
    if (r->scenario[0] != '\0')
        ADD(", scenario %s", r->scenario);
    if (r->scenario_file[0] != '\0')
        ADD(" (%s)", r->scenario_file);
    if (r->protocol[0] != '\0')
        ADD(", protocol %s", r->protocol);
    if (r->engine[0] != '\0')
        ADD(" on %s", r->engine);
    if (r->server[0] != '\0')
        ADD(" (%s)", r->server);
    if (r->workers >= 0)
        ADD(", %ld workers", r->workers);
    if (r->jobs >= 0)
        ADD(", %ld jobs", r->jobs);
    if (r->elapsed_s >= 0)
        ADD(", %.1f s", r->elapsed_s);
    if (r->version[0] != '\0')
        ADD(", qchaos %s", r->version);
    if (r->exit_code >= 0)
        ADD(", exit code %d", r->exit_code);
    if (r->mutant)
        ADD("; the protocol is a known-broken mutant (see What was tested)");
    else if (r->tested[0] != '\0')
        ADD("; protocol tested: %s", r->tested);
    if (r->target_how[0] != '\0')
        ADD("; target host %s port %s, database %s, user %s (%s)", r->target_host, r->target_port,
            r->target_dbname, r->target_user,
            !strcmp(r->target_how, "ephemeral") ? "an ephemeral server qchaos started"
            : !strcmp(r->target_how, "dsn")     ? "given by --dsn"
                                                : "from the PG* environment variables");
#undef ADD
}

static size_t told(const qc__rcheck *c)
{
    return c->nv < QC__REPORT_MAX_TOLD ? c->nv : QC__REPORT_MAX_TOLD;
}

static void untold_line(const qc__rcheck *c, char *buf, size_t n)
{
    snprintf(buf, n,
             "%ld more violation(s) of %s are not told here: see junit.xml and "
             "results.json",
             total_of(c) - (long)told(c), c->name);
}

static int any_violation(const qc__results *r)
{
    for (size_t i = 0; i < r->nc; i++)
        if (r->c[i].nv > 0 || total_of(&r->c[i]) > 0)
            return 1;
    return 0;
}

/* Client time (ms) of the event with seq, or NAN. */
static double seq_t(const qc_history *h, int64_t seq)
{
    const qc_event *e = qc__report_find_seq(h, seq);

    return e != NULL && e->t != QC_NO_TIME ? e->t : NAN;
}

/* The violations of c told in full before the plots: the first (the one
 * whose earliest cited seq is smallest) and the widest (its cited events
 * span the longest client time; SIZE_MAX when it is the first or there
 * is only one). */
static void pick(const qc__rcheck *c, const qc_history *h, size_t *first, size_t *widest)
{
    int64_t best = INT64_MAX;
    double span = -1;

    *first = *widest = SIZE_MAX;
    for (size_t k = 0; k < c->nv; k++) {
        const qc__rviolation *v = &c->v[k];
        double lo = INFINITY, hi = -INFINITY;
        int64_t m = INT64_MAX;
        for (size_t s = 0; s < v->nseq; s++) {
            double t = seq_t(h, v->seq[s]);
            m = v->seq[s] < m ? v->seq[s] : m;
            if (!isnan(t)) {
                lo = t < lo ? t : lo;
                hi = t > hi ? t : hi;
            }
        }
        if (*first == SIZE_MAX || m < best) {
            best = m;
            *first = k;
        }
        if (hi >= lo && hi - lo > span) {
            span = hi - lo;
            *widest = k;
        }
    }
    if (*widest == *first || c->nv < 2)
        *widest = SIZE_MAX;
}

static void card_head(const qc__rcheck *c, size_t k, int widest, char *buf, size_t n)
{
    const qc__rviolation *v = &c->v[k];
    char job[48] = "";

    if (v->has_job)
        snprintf(job, sizeof job, ", job %" PRId64, v->job);
    snprintf(buf, n, "%s: the %s of %ld violation%s%s", c->name,
             widest ? "widest (its evidence spans the longest time)" : "first", total_of(c),
             total_of(c) == 1 ? "" : "s", job);
}

static void latency_row(const char *what, long n, const double *pct, char cells[7][32])
{
    snprintf(cells[0], 32, "%s", what);
    snprintf(cells[1], 32, "%ld", n);
    for (int k = 0; k < 5; k++) {
        if (pct[k] >= 0)
            snprintf(cells[2 + k], 32, "%.2f", pct[k]);
        else
            snprintf(cells[2 + k], 32, "-");
    }
}

/* "Faults the recovery checker judges: 2, recovery time measured for 2
 * (p50 ... ms)." */
static void recovery_line(const qc__plots *p, char *buf, size_t n)
{
    if (p->recovered > 0)
        snprintf(buf, n,
                 "Faults the recovery checker judges: %ld, recovery time measured for %ld "
                 "(p50 %.0f ms, max %.0f ms).",
                 p->faults, p->recovered, p->recovery_p50, p->recovery_max);
    else
        snprintf(buf, n, "Faults the recovery checker judges: %ld, recovery time measured for %ld.",
                 p->faults, p->recovered);
}

static const char *const latency_heads[7] = {"request", "answered", "p50 ms", "p90 ms",
                                             "p99 ms",  "p99.9 ms", "max ms"};

static const char *repeat_intro(const qc__results *r)
{
    return r->command != NULL ? "This command repeats the run (the same seed gives the same "
                                "workload and fault plan):"
                              : "The command of this run was not recorded (an audit of saved "
                                "ledgers); run qchaos again with the seed below.";
}

/* ---- report.md -------------------------------------------------------------- */

static void md_cell(FILE *f, const char *s)
{
    fputs(" ", f);
    qc__md_escape(f, s);
    fputs(" |", f);
}

int qc__markdown_write(const char *dir, const qc__results *r, const qc_history *h,
                       const qc__plots *p, qc_err *err)
{
    char line[1024], num[2][32], cells[7][32];
    double origin = qc__report_server_origin(h);
    FILE *f = qc__report_open(dir, "report.md", err);

    if (f == NULL)
        return QC_EIO;
    fputs("# qchaos report: ", f);
    qc__md_escape(f, r->scenario[0] != '\0' ? r->scenario : "run");
    fputs(" - ", f);
    qc__md_escape(f, overall(r));
    fputs("\n\n| checker | verdict | opportunities | violations | summary |\n"
          "|---|---|---:|---:|---|\n",
          f);
    /* judged checkers first, as the terminal's table (audit.c) */
    for (size_t k = 0; k < 2 * r->nc; k++) {
        const qc__rcheck *c = &r->c[k % r->nc];
        if ((c->judged != 0) != (k < r->nc))
            continue;
        const char *cls = verdict_class(c->verdict);
        /* What the scenario does not judge is information, not a
         * finding (only a FAIL of it counts): no bold, marked "(info)". */
        int info = !c->judged && strcmp(c->verdict, "FAIL") != 0;
        int bold = !info && strcmp(cls, "pass") != 0 && strcmp(cls, "na") != 0;
        fmt_long(num[0], sizeof num[0], c->opportunities);
        fmt_long(num[1], sizeof num[1], total_of(c));
        fputs("|", f);
        md_cell(f, c->name);
        fputs(bold ? " **" : " ", f);
        qc__md_escape(f, c->verdict);
        fputs(bold ? "**" : "", f);
        fputs(info ? " (info) |" : " |", f);
        md_cell(f, num[0]);
        md_cell(f, num[1]);
        md_cell(f, c->summary);
        fputs("\n", f);
    }
    run_line(r, line, sizeof line);
    fputs("\nRun: ", f);
    qc__md_escape(f, line);
    fputs("\n", f);
    qc__tested_md(f, r);
    qc__library_md(f, h);
    fputs("\n## Violations\n\n", f);
    if (!any_violation(r))
        fputs("None: no checker found a violation.\n", f);
    else
        fputs(
            "| checker | violations | first at (s after the first claim) | stored in results.json "
            "|\n|---|---:|---:|---:|\n",
            f);
    for (size_t i = 0; i < r->nc; i++) {
        const qc__rcheck *c = &r->c[i];
        if (total_of(c) <= 0 && c->nv == 0)
            continue;
        fputs("|", f);
        md_cell(f, c->name);
        fprintf(f, " %ld |", total_of(c));
        if (c->first_violation_s >= 0)
            fprintf(f, " %.3f |", c->first_violation_s);
        else
            fputs(" - |", f);
        fprintf(f, " %zu |\n", c->nv);
    }
    if (any_violation(r))
        fputs("\nEach checker's first violation, and its widest, told in full with its "
              "timeline (times in ms since the run started; bold seqs are the ones the "
              "violation cites; the other stored violations are listed after the plots):\n\n",
              f);
    for (size_t i = 0; i < r->nc; i++) {
        const qc__rcheck *c = &r->c[i];
        size_t ks[2];
        pick(c, h, &ks[0], &ks[1]);
        for (int w = 0; w < 2; w++) {
            if (ks[w] == SIZE_MAX)
                continue;
            const qc__rviolation *v = &c->v[ks[w]];
            card_head(c, ks[w], w, line, sizeof line);
            fputs("### ", f);
            qc__md_escape(f, line);
            fputs("\n\n", f);
            qc__report_explain(v->explanation, origin, line, sizeof line);
            qc__md_escape(f, line[0] != '\0' ? line : "(no explanation)");
            fputs("\n\nTimeline of the job's events:\n\n", f);
            if (qc__timeline_md(f, h, origin, v) != 0)
                fputs("(none of its events is in the ledger)\n\n", f);
            if (v->nseq > 0)
                fputs("Evidence from the ledger:\n\n", f);
            for (size_t q = 0; q < v->nseq; q++) {
                qc__report_describe(h, origin, v->seq[q], line, sizeof line);
                fputs("- ", f);
                qc__md_escape(f, line);
                fputs("\n", f);
            }
            if (v->nwitness > 0)
                fputs("\nConfirmed by the server's witness:\n\n", f);
            for (size_t s = 0; s < v->nwitness; s++) {
                qc__report_describe(h, origin, v->wseq[s], line, sizeof line);
                fputs("- ", f);
                qc__md_escape(f, line);
                fputs("\n", f);
            }
            fputs("\n", f);
        }
    }
    for (size_t i = 0; i < r->nc; i++) {
        if (strcmp(r->c[i].verdict, "INCONCLUSIVE") != 0 || !r->c[i].judged)
            continue;
        fputs("\n**", f);
        qc__md_escape(f, r->c[i].name);
        fputs("** is INCONCLUSIVE: it had no opportunity to catch a violation, so the run "
              "proves nothing about it.\n",
              f);
    }

    fputs("\n## Plots\n\n", f);
    fputs("This file is self-contained text: it links the plots rather than showing them, "
          "because a relative image is broken where report.md is read on its own (a GitHub "
          "job summary, `cat report.md >> $GITHUB_STEP_SUMMARY`).  The images are embedded in "
          "report.html; publish the run folder (report.html and plots/) as a build artifact "
          "to see them.\n\n",
          f);
    for (size_t i = 0; i < p->n; i++) {
        const qc__plot *pl = &p->p[i];
        fputs("### ", f);
        qc__md_escape(f, pl->title);
        fputs("\n\n", f);
        if (pl->drawn)
            fprintf(f,
                    "Image: [plots/%s.png](plots/%s.png) ([SVG](plots/%s.svg)), data "
                    "`plots/%s.dat`\n\n",
                    pl->name, pl->name, pl->name, pl->name);
        else
            fprintf(f, "Not drawn%s; data `plots/%s.dat`, script `plots/%s.gp`.\n\n",
                    p->gnuplot_found ? " (gnuplot failed, see `plots/gnuplot.log`)"
                                     : " (gnuplot not found)",
                    pl->name, pl->name);
    }
    for (size_t i = 0; i < p->nnotes; i++) {
        fputs("- ", f);
        qc__md_escape(f, p->notes[i]);
        fputs("\n", f);
    }
    fputs("\nLatency (client time from a request's invoke to its answer):\n\n|", f);
    for (int k = 0; k < 7; k++)
        md_cell(f, latency_heads[k]);
    fputs("\n|---|---:|---:|---:|---:|---:|---:|\n", f);
    for (int w = 0; w < 2; w++) {
        latency_row(w == 0 ? "claim" : "complete", w == 0 ? p->claim_n : p->complete_n,
                    w == 0 ? p->claim_pct : p->complete_pct, cells);
        fputs("|", f);
        for (int k = 0; k < 7; k++)
            md_cell(f, cells[k]);
        fputs("\n", f);
    }
    recovery_line(p, line, sizeof line);
    fprintf(f, "\n%s\n", line);

    if (any_violation(r))
        fputs("\n## All stored violations\n\n", f);
    for (size_t i = 0; i < r->nc; i++) {
        const qc__rcheck *c = &r->c[i];
        if (c->nv == 0)
            continue;
        fputs("**", f);
        qc__md_escape(f, c->name);
        fprintf(f, "** (%ld in all):\n\n", total_of(c));
        for (size_t k = 0; k < told(c); k++) {
            const qc__rviolation *v = &c->v[k];
            fputs("- ", f);
            if (v->has_job)
                fprintf(f, "job %" PRId64 ", ", v->job);
            fputs("seq", f);
            for (size_t q = 0; q < v->nseq; q++)
                fprintf(f, " %" PRId64, v->seq[q]);
            fputs(": ", f);
            qc__report_explain(v->explanation, origin, line, sizeof line);
            qc__md_escape(f, line);
            fputs("\n", f);
        }
        if (total_of(c) > (long)told(c)) {
            untold_line(c, line, sizeof line);
            fputs("\n", f);
            qc__md_escape(f, line);
            fputs("\n", f);
        }
        fputs("\n", f);
    }

    fputs("\n## Repeat this run\n\n", f);
    fputs(repeat_intro(r), f);
    fputs("\n\n", f);
    if (r->command != NULL) {
        /* An indented code block shows its text literally. */
        fputs("    ", f);
        for (const char *s = r->command; *s; s++)
            fputc(*s == '\n' ? ' ' : *s, f);
        fputs("\n\n", f);
    }
    if (r->has_seed)
        fprintf(f, "Seed: %" PRIu64 "\n", r->seed);
    return qc__report_close(f, dir, "report.md", err);
}

/* ---- report.html ------------------------------------------------------------ */

static const char css[] =
    "body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:2em auto;"
    "max-width:1060px;padding:0 1em;color:#222;line-height:1.45}"
    "h1{font-size:1.6em;margin-bottom:.4em}h2{border-bottom:1px solid #ddd;"
    "padding-bottom:.2em;margin-top:1.8em}h3{font-size:1.05em;margin-bottom:.3em}"
    "table{border-collapse:collapse;margin:.6em 0}"
    "th,td{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}"
    "th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}"
    ".v{font-weight:bold;white-space:nowrap}"
    ".pass{color:#1e7b34}.fail{color:#fff;background:#c62828}"
    ".inconclusive{color:#222;background:#ffd54f}.na{color:#666}.other{color:#fff;"
    "background:#6a1b9a}"
    ".badge{display:inline-block;padding:.1em .5em;border-radius:.3em}"
    ".run{color:#555;font-size:.92em}"
    ".violation{border-left:4px solid #c62828;padding:.2em .9em;margin:1em 0;"
    "background:#fdf3f3}"
    ".evidence{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.86em}"
    "figure{margin:1.2em 0}figure img{max-width:100%;border:1px solid #ddd}"
    "figcaption{color:#555;font-size:.9em}"
    "pre{background:#f6f8fa;border:1px solid #ddd;padding:.8em;overflow-x:auto;"
    "white-space:pre-wrap;word-break:break-all}"
    ".note{color:#8a6d00}"
    ".cols{display:flex;gap:2em;flex-wrap:wrap;align-items:flex-start}"
    ".tl{overflow-x:auto;margin:.6em 0}.tl svg{background:#fff;border:1px solid #ddd}"
    "details{margin:.5em 0}summary{cursor:pointer;font-weight:bold}"
    ".cols>div{flex:1;min-width:320px}#settings{font-size:.88em}#settings td{padding:.15em .5em}";

static void esc(FILE *f, const char *s)
{
    qc__xml_escape(f, s);
}

/* Writes the file DIR/plots/NAME.png as base64; 0, or -1 when unreadable. */
static int put_base64_png(FILE *f, const char *dir, const char *name)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char path[QC__PATH_MAX];
    unsigned char in[3 * 1024];
    char out[4 * 1024];
    size_t got;
    FILE *img;

    snprintf(path, sizeof path, "%s/plots/%s.png", dir, name);
    img = fopen(path, "rb");
    if (img == NULL)
        return -1;
    while ((got = fread(in, 1, sizeof in, img)) > 0) {
        size_t o = 0;
        for (size_t i = 0; i < got; i += 3) {
            unsigned v = (unsigned)in[i] << 16;
            if (i + 1 < got)
                v |= (unsigned)in[i + 1] << 8;
            if (i + 2 < got)
                v |= in[i + 2];
            out[o++] = b64[(v >> 18) & 63];
            out[o++] = b64[(v >> 12) & 63];
            out[o++] = i + 1 < got ? b64[(v >> 6) & 63] : '=';
            out[o++] = i + 2 < got ? b64[v & 63] : '=';
        }
        fwrite(out, 1, o, f);
        if (got < sizeof in)
            break; /* only the last block may be short (padding) */
    }
    int bad = ferror(img);
    fclose(img);
    return bad ? -1 : 0;
}

static void html_cell(FILE *f, const char *cls, const char *s)
{
    if (cls != NULL)
        fprintf(f, "<td class=\"%s\">", cls);
    else
        fputs("<td>", f);
    esc(f, s);
    fputs("</td>", f);
}

static void html_plots(FILE *f, const char *dir, const qc__plots *p)
{
    char cells[7][32], line[256];

    for (size_t i = 0; i < p->n; i++) {
        const qc__plot *pl = &p->p[i];
        fputs("<figure>\n", f);
        if (pl->drawn) {
            fputs("<img alt=\"", f);
            esc(f, pl->title);
            fputs("\" width=\"1000\" src=\"data:image/png;base64,", f);
            if (put_base64_png(f, dir, pl->name) != 0)
                fputs("\">\n<p class=\"note\">The image could not be read.</p>\n", f);
            else
                fputs("\">\n", f);
        } else {
            fprintf(f,
                    "<p class=\"note\">Not drawn (%s); data plots/%s.dat, script "
                    "plots/%s.gp.</p>\n",
                    p->gnuplot_found ? "gnuplot failed, see plots/gnuplot.log"
                                     : "gnuplot not found",
                    pl->name, pl->name);
        }
        fputs("<figcaption>", f);
        esc(f, pl->title);
        if (pl->drawn)
            fprintf(f, " (<a href=\"plots/%s.svg\">SVG</a>)", pl->name);
        fputs("</figcaption>\n</figure>\n", f);
    }
    if (p->nnotes > 0) {
        fputs("<ul>\n", f);
        for (size_t i = 0; i < p->nnotes; i++) {
            fputs("<li class=\"note\">", f);
            esc(f, p->notes[i]);
            fputs("</li>\n", f);
        }
        fputs("</ul>\n", f);
    }
    fputs("<p>Latency (client time from a request's invoke to its answer):</p>\n"
          "<table>\n<tr>",
          f);
    for (int k = 0; k < 7; k++) {
        fputs("<th>", f);
        esc(f, latency_heads[k]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (int w = 0; w < 2; w++) {
        latency_row(w == 0 ? "claim" : "complete", w == 0 ? p->claim_n : p->complete_n,
                    w == 0 ? p->claim_pct : p->complete_pct, cells);
        fputs("<tr>", f);
        for (int k = 0; k < 7; k++)
            html_cell(f, k == 0 ? NULL : "num", cells[k]);
        fputs("</tr>\n", f);
    }
    recovery_line(p, line, sizeof line);
    fputs("</table>\n<p>", f);
    esc(f, line);
    fputs("</p>\n", f);
}

int qc__html_write(const char *dir, const qc__results *r, const qc_history *hist,
                   const qc__plots *p, qc_err *err)
{
    char line[1024], num[32];
    const char *v = overall(r);
    double origin = qc__report_server_origin(hist);
    FILE *f = qc__report_open(dir, "report.html", err);

    if (f == NULL)
        return QC_EIO;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          f);
    fputs("qchaos report: ", f);
    esc(f, r->scenario[0] != '\0' ? r->scenario : "run");
    fputs(" - ", f);
    esc(f, v);
    fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>qchaos report: ", css);
    esc(f, r->scenario[0] != '\0' ? r->scenario : "run");
    fprintf(f, " <span class=\"badge %s\">", verdict_class(v));
    esc(f, v);
    fputs("</span></h1>\n", f);

    fputs("<table id=\"verdicts\">\n<tr><th>checker</th><th>verdict</th><th>opportunities</th>"
          "<th>violations</th><th>summary</th></tr>\n",
          f);
    for (size_t k = 0; k < 2 * r->nc; k++) { /* judged first, as report.md's */
        const qc__rcheck *c = &r->c[k % r->nc];
        if ((c->judged != 0) != (k < r->nc))
            continue;
        fputs("<tr>", f);
        html_cell(f, NULL, c->name);
        fprintf(f, "<td class=\"v\"><span class=\"badge %s\">", verdict_class(c->verdict));
        esc(f, c->verdict);
        fputs(!c->judged && strcmp(c->verdict, "FAIL") != 0 ? "</span> (info)</td>"
                                                            : "</span></td>",
              f);
        fmt_long(num, sizeof num, c->opportunities);
        html_cell(f, "num", num);
        fmt_long(num, sizeof num, total_of(c));
        html_cell(f, "num", num);
        html_cell(f, NULL, c->summary);
        fputs("</tr>\n", f);
    }
    run_line(r, line, sizeof line);
    fputs("</table>\n<p class=\"run\">Run: ", f);
    esc(f, line);
    fputs("</p>\n", f);
    qc__tested_html(f, r);
    qc__library_html(f, hist);
    fputs("\n<h2 id=\"violations\">Violations</h2>\n", f);
    if (!any_violation(r))
        fputs("<p>None: no checker found a violation.</p>\n", f);
    else
        fputs("<table id=\"violation-counts\">\n<tr><th>checker</th><th>violations</th>"
              "<th>first at (s after the first claim)</th><th>stored in results.json</th></tr>\n",
              f);
    for (size_t i = 0; i < r->nc; i++) {
        const qc__rcheck *c = &r->c[i];
        if (total_of(c) <= 0 && c->nv == 0)
            continue;
        fputs("<tr>", f);
        html_cell(f, NULL, c->name);
        fmt_long(num, sizeof num, total_of(c));
        html_cell(f, "num", num);
        if (c->first_violation_s >= 0)
            snprintf(num, sizeof num, "%.3f", c->first_violation_s);
        else
            snprintf(num, sizeof num, "-");
        html_cell(f, "num", num);
        snprintf(num, sizeof num, "%zu", c->nv);
        html_cell(f, "num", num);
        fputs("</tr>\n", f);
    }
    if (any_violation(r))
        fputs("</table>\n<p>Each checker's first violation, and its widest, with its timeline "
              "(ms since the run started; hover an item for the ledger event in words; "
              "outlined items are the ones the violation cites). The other stored violations "
              "are listed <a href=\"#all-violations\">after the plots</a>.</p>\n",
              f);
    for (size_t i = 0; i < r->nc; i++) {
        const qc__rcheck *c = &r->c[i];
        size_t ks[2];
        pick(c, hist, &ks[0], &ks[1]);
        for (int w = 0; w < 2; w++) {
            if (ks[w] == SIZE_MAX)
                continue;
            const qc__rviolation *vi = &c->v[ks[w]];
            card_head(c, ks[w], w, line, sizeof line);
            fputs("<div class=\"violation\" id=\"", f);
            esc(f, c->name);
            fprintf(f, "-%s\">\n<h3>", w ? "widest" : "first");
            esc(f, line);
            fputs("</h3>\n<p>", f);
            qc__report_explain(vi->explanation, origin, line, sizeof line);
            esc(f, line[0] != '\0' ? line : "(no explanation)");
            fputs("</p>\n<div class=\"tl\">\n", f);
            if (qc__timeline_svg(f, hist, origin, vi) != 0)
                fputs("<p class=\"note\">No timeline: none of its events is in the "
                      "ledger.</p>\n",
                      f);
            fputs("</div>\n", f);
            if (vi->nseq > 0)
                fputs("<p>Evidence from the ledger:</p>\n<ul class=\"evidence\">\n", f);
            for (size_t q = 0; q < vi->nseq; q++) {
                qc__report_describe(hist, origin, vi->seq[q], line, sizeof line);
                fputs("<li>", f);
                esc(f, line);
                fputs("</li>\n", f);
            }
            if (vi->nseq > 0)
                fputs("</ul>\n", f);
            if (vi->nwitness > 0)
                fputs("<p>Confirmed by the server's witness:</p>\n<ul class=\"evidence\">\n", f);
            for (size_t s = 0; s < vi->nwitness; s++) {
                qc__report_describe(hist, origin, vi->wseq[s], line, sizeof line);
                fputs("<li>", f);
                esc(f, line);
                fputs("</li>\n", f);
            }
            fputs(vi->nwitness > 0 ? "</ul>\n</div>\n" : "</div>\n", f);
        }
    }
    for (size_t i = 0; i < r->nc; i++) {
        if (strcmp(r->c[i].verdict, "INCONCLUSIVE") != 0 || !r->c[i].judged)
            continue;
        fputs("<p><span class=\"badge inconclusive\">", f);
        esc(f, r->c[i].name);
        fputs("</span> is INCONCLUSIVE: it had no opportunity to catch a violation, so the "
              "run proves nothing about it.</p>\n",
              f);
    }

    fputs("\n<h2 id=\"plots\">Plots</h2>\n", f);
    html_plots(f, dir, p);

    if (any_violation(r))
        fputs("\n<h2 id=\"all-violations\">All stored violations</h2>\n", f);
    for (size_t i = 0; i < r->nc; i++) {
        const qc__rcheck *c = &r->c[i];
        if (c->nv == 0)
            continue;
        fputs("<details>\n<summary>", f);
        esc(f, c->name);
        fprintf(f,
                ": %zu stored of %ld</summary>\n<table "
                "class=\"evidence\">\n<tr><th>#</th><th>job</th><th>seq</th>"
                "<th>explanation</th></tr>\n",
                c->nv, total_of(c));
        for (size_t k = 0; k < c->nv; k++) {
            const qc__rviolation *vi = &c->v[k];
            fprintf(f, "<tr><td class=\"num\">%zu</td><td class=\"num\">", k + 1);
            if (vi->has_job)
                fprintf(f, "%" PRId64, vi->job);
            fputs("</td><td>", f);
            for (size_t q = 0; q < vi->nseq; q++)
                fprintf(f, "%s%" PRId64, q ? " " : "", vi->seq[q]);
            fputs("</td><td>", f);
            qc__report_explain(vi->explanation, origin, line, sizeof line);
            esc(f, line);
            fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
        if (total_of(c) > (long)c->nv)
            fprintf(f,
                    "<p>%ld more are counted but not stored (results.json keeps the first "
                    "%zu).</p>\n",
                    total_of(c) - (long)c->nv, c->nv);
        fputs("</details>\n", f);
    }

    fputs("\n<h2>Repeat this run</h2>\n<p>", f);
    esc(f, repeat_intro(r));
    fputs("</p>\n", f);
    if (r->command != NULL) {
        fputs("<pre id=\"command\"><code>", f);
        esc(f, r->command);
        fputs("</code></pre>\n", f);
    }
    if (r->has_seed)
        fprintf(f, "<p>Seed: <code>%" PRIu64 "</code></p>\n", r->seed);
    fputs("</body>\n</html>\n", f);
    return qc__report_close(f, dir, "report.html", err);
}
