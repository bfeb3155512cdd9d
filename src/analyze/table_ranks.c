/* table_ranks.c: the cross-rank summary of ranks.h as three tables in the
 * style of the others (semantics.md §6.10): Cross-rank Summary (a row per
 * rank), Collective Summary (a row per collective name) and Straggler
 * Summary (a row per rank and phase where it fell behind), and
 * sp_results_rank_summary, which prints them. */
#include "ranks.h"
#include "summary.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void cell_time(char *out, size_t size, double ns, const char *unit) { sp__fmt_time(out, size, ns, unit); }

static sp__table *rank_table(const sp__ranks *x, const char *unit)
{
    static const char *const head[] = {"Rank", "Steps", "Step", "Compute", "Communication",
                                       "Overlap", "Exposed Comm.", "Idle", "Collectives"};
    sp__table *t = sp__table_new(9);
    if (!t) return NULL;
    for (size_t c = 0; c < 9; c++)
        sp__table_column(t, c, c == 0 || c == 1 ? 6 : 14, 1);
    sp__table_title(t, "Cross-rank Summary");
    char line[64];
    snprintf(line, sizeof line, "Time unit: %s (means per step)", unit);
    sp__table_text(t, line);
    sp__table_separator(t);
    sp__table_header(t, head);
    sp__table_separator(t);
    for (size_t i = 0; i < x->nrows; i++) {
        const sp__rank_row *r = &x->rows[i];
        char c[9][32];
        snprintf(c[0], sizeof c[0], "%" PRId64, r->rank);
        snprintf(c[1], sizeof c[1], "%zu", r->steps);
        const double v[] = {r->step_ns, r->compute_ns, r->comm_ns, r->overlap_ns, r->exposed_ns, r->idle_ns};
        for (size_t k = 0; k < 6; k++)
            cell_time(c[2 + k], sizeof c[2 + k], v[k], unit);
        snprintf(c[8], sizeof c[8], "%zu", r->collectives);
        const char *cells[9];
        for (size_t k = 0; k < 9; k++)
            cells[k] = c[k];
        sp__table_row(t, cells);
    }
    sp__table_separator(t);
    sp__table_blank(t);
    return t;
}

static sp__table *collective_table(const sp__ranks *x, const char *unit)
{
    static const char *const head[] = {"Name", "Calls", "Bytes", "Time (median rank)", "Avg", "Bandwidth (GB/s)",
                                       "Wait (median)"};
    sp__table *t = sp__table_new(7);
    if (!t) return NULL;
    sp__table_column(t, 0, 24, 1);
    for (size_t c = 1; c < 7; c++)
        sp__table_column(t, c, c == 1 ? 8 : 18, 1);
    sp__table_title(t, "Collective Summary");
    char line[200];
    snprintf(line, sizeof line, "Time unit: %s; %zu operations matched on every rank (%s), %zu collectives left "
                                "unmatched",
             unit, x->matched, x->by_seq ? "by process group and seq" : "by their order", x->unmatched);
    sp__table_text(t, line);
    if (x->mismatched)
        sp__table_text(t, "Warning: matched operations have different names on different ranks: the ranks "
                          "diverged, or the results are not one job's.");
    sp__table_separator(t);
    sp__table_header(t, head);
    sp__table_separator(t);
    for (size_t i = 0; i < x->ncolls; i++) {
        const sp__collective_row *r = &x->colls[i];
        char name[SP__NAME_CELL_BYTES], calls[24], bytes[32], tot[32], avg[32], bw[32], wait[32];
        sp__fmt_name(name, sizeof name, "", r->name, 60, 57);
        snprintf(calls, sizeof calls, "%zu", r->calls);
        if (r->has_bytes)
            snprintf(bytes, sizeof bytes, "%.0f", r->bytes);
        else
            snprintf(bytes, sizeof bytes, "-");
        cell_time(tot, sizeof tot, r->time_ns, unit);
        cell_time(avg, sizeof avg, r->calls ? r->time_ns / (double)r->calls : 0, unit);
        /* bytes per ns is GB/s */
        if (r->has_bytes && r->time_ns > 0)
            snprintf(bw, sizeof bw, "%.3f", r->bytes / r->time_ns);
        else
            snprintf(bw, sizeof bw, "-");
        cell_time(wait, sizeof wait, r->wait_ns, unit);
        const char *cells[] = {name, calls, bytes, tot, avg, bw, wait};
        sp__table_row(t, cells);
    }
    sp__table_separator(t);
    sp__table_blank(t);
    return t;
}

static sp__table *straggler_table(const sp__ranks *x, const char *unit)
{
    static const char *const head[] = {"Rank", "Behind in", "Collectives", "Others waited", "Phase excess",
                                       "Steps"};
    sp__table *t = sp__table_new(6);
    if (!t) return NULL;
    for (size_t c = 0; c < 6; c++)
        sp__table_column(t, c, c == 0 ? 6 : 14, 1);
    sp__table_title(t, "Straggler Summary");
    char line[200];
    snprintf(line, sizeof line,
             "Time unit: %s; a rank is a straggler in a collective when the others' median wait there is "
             "%.0f%% of the median step or more (and at least %d us)",
             unit, 100 * SP__STRAGGLER_SHARE, SP__STRAGGLER_MIN_NS / 1000);
    sp__table_text(t, line);
    if (x->nstrag == 0) {
        sp__table_text(t, x->nrows < 2 ? "One rank only: no rank to wait for." : "No straggler: no rank made the others wait.");
        sp__table_blank(t);
        return t;
    }
    sp__table_separator(t);
    sp__table_header(t, head);
    sp__table_separator(t);
    for (size_t i = 0; i < x->nstrag; i++) {
        const sp__straggler_row *r = &x->strag[i];
        char rank[24], count[24], wait[32], excess[32], steps[160];
        snprintf(rank, sizeof rank, "%" PRId64, r->rank);
        snprintf(count, sizeof count, "%zu", r->count);
        cell_time(wait, sizeof wait, r->wait_ns, unit);
        cell_time(excess, sizeof excess, r->behind_ns, unit);
        size_t n = 0;
        steps[0] = '\0';
        for (size_t k = 0; k < r->nsteps && k < SP__STRAGGLER_STEPS; k++)
            n += (size_t)snprintf(steps + n, sizeof steps - n, "%s#%" PRId64, k ? ", " : "", r->steps[k]);
        if (r->nsteps > SP__STRAGGLER_STEPS)
            snprintf(steps + n, sizeof steps - n, " and %zu more", r->nsteps - SP__STRAGGLER_STEPS);
        const char *cells[] = {rank, r->phase >= 0 ? sp__phase_name(r->phase) : "(no phase grew)", count, wait,
                               excess, steps};
        sp__table_row(t, cells);
    }
    sp__table_separator(t);
    sp__table_blank(t);
    return t;
}

sp__table *sp__ranks_table(const sp__ranks *x, int which, const char *unit)
{
    switch (which) {
    case 0: return rank_table(x, unit);
    case 1: return collective_table(x, unit);
    case 2: return straggler_table(x, unit);
    default: return NULL;
    }
}

void sp__ranks_render(const sp__ranks *x, const char *unit, sp__buf *out)
{
    for (int which = 0; which < SP__RANKS_TABLES; which++) {
        sp__table *t = sp__ranks_table(x, which, unit);
        if (!t || sp__table_failed(t)) out->failed = 1;
        if (t) sp__table_render(t, out);
        sp__table_free(t);
    }
}

sp_status sp_results_rank_summary(const sp_result *const *results, const int64_t *ranks, size_t count,
                                  const char *time_unit, FILE *out)
{
    if (!results || !out || count == 0)
        return sp__fail(SP_EINVAL, "sp_results_rank_summary: results, count and output are required");
    for (size_t i = 0; i < count; i++)
        if (!results[i]) return sp__fail(SP_EINVAL, "sp_results_rank_summary: result %zu is NULL", i);
    const char *unit = time_unit ? time_unit : "ms";
    if (strcmp(unit, "s") && strcmp(unit, "ms") && strcmp(unit, "us") && strcmp(unit, "ns"))
        return sp__fail(SP_EINVAL, "time_unit must be one of s, ms, us, ns");
    int64_t *own = sp__alloc(sizeof *own * count);
    if (!own) return sp__fail(SP_ENOMEM, "out of memory");
    if (ranks)
        memcpy(own, ranks, sizeof *own * count);
    else
        sp__ranks_default_ids(results, count, own);
    for (size_t i = 0; i < count; i++)
        for (size_t j = i + 1; j < count; j++)
            if (own[i] == own[j]) {
                sp_status s = sp__fail(SP_EINVAL, "rank %" PRId64 " is given twice (results %zu and %zu)",
                                       own[i], i, j);
                sp__free(own);
                return s;
            }
    sp__ranks x;
    sp_status s = SP_OK;
    if (sp__ranks_build(results, own, count, &x) != 0) s = sp__fail(SP_ENOMEM, "out of memory");
    sp__free(own);
    if (s != SP_OK) return s;
    sp__buf b;
    sp__buf_init(&b);
    sp__ranks_render(&x, unit, &b);
    if (b.failed)
        s = sp__fail(SP_ENOMEM, "out of memory printing the cross-rank summary");
    else if (fwrite(b.data, 1, b.len, out) != b.len)
        s = sp__fail(SP_EIO, "cannot write the cross-rank summary");
    sp__buf_fini(&b);
    sp__ranks_fini(&x);
    return s;
}
