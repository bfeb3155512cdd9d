/* table_distributed.c: the Distributed Summary, titled "Distribution Summary"
 * (semantics.md §6.4), and the host communication ranges it shares with the
 * Overview Summary. Communication is the union of the merged CPU
 * communication ranges and the merged GPU communication kernels, computation
 * the merged other kernels, overlap their intersection; each row is its
 * length and its ratio to T.
 *
 * Host part only: results hold no device records yet, so GPU communication
 * and computation are empty, communication is the merged CPU ranges and
 * computation and overlap print 0.00. The GPU tracer adds rule 3 and the
 * kernels under case-1/2 nodes here.
 *
 * Decisions:
 * - "Printed only if communication is non-empty" means at least one range,
 *   as Paddle tests its list: a single zero-length Communication range
 *   prints the table with 0.00.
 * - The "ProfileStep" row (T, 100.00) is printed only when the span has
 *   ProfileStep time (m->T_is_fallback == 0); otherwise the three rows are
 *   ratios of the fallback T (§9) and keep their two-space indent.
 * - Paddle's note ends with "\n" and its append adds another, so a blank
 *   line comes between the note and the closing dashes; kept byte for byte.
 * - The columns do not grow (Paddle's fixed 25). */
#include "summary.h"

#include <stdio.h>
#include <string.h>

/* 1 if lower-cased hay contains needle (needle already lower case). */
static int contains_lower(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t k = 0;
        while (k < n && hay[k]) {
            char c = hay[k];
            if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
            if (c != needle[k]) break;
            k++;
        }
        if (k == n) return 1;
    }
    return 0;
}

static int is_comm_node(const sp_result *r, const sp__event *e)
{
    if (e->type == SP_EVENT_COMMUNICATION) return 1;
    if (e->type != SP_EVENT_OPERATOR) return 0;
    const char *name = sp__result_name(r, e->name);
    if (!name) return 0;
    return contains_lower(name, "allreduce") || contains_lower(name, "broadcast") ||
           contains_lower(name, "rpc");
}

/* out must be initialised; its old spans are replaced. Every node of the
 * model is a non-root host node (the root of §5.1 is implicit). On failure
 * out is left empty with failed set. */
int sp__summary_cpu_comm(const sp__model *m, sp__spans *out)
{
    sp__spans_fini(out);
    if (m->failed) {
        out->failed = 1;
        return -1;
    }
    for (size_t ti = 0; ti < m->thread_count; ti++) {
        const sp__thread_model *tm = &m->threads[ti];
        for (size_t k = 0; k < tm->count; k++) {
            const sp__event *e = &tm->thread->events[tm->nodes[k].event];
            if (is_comm_node(m->result, e)) sp__spans_add(out, e->start_ns, e->end_ns);
        }
    }
    if (out->failed) {
        sp__spans_fini(out);
        out->failed = 1;
        return -1;
    }
    sp__spans_merge(out);
    return 0;
}

static void dist_row(sp__table *t, const char *name, int64_t ns, int64_t T, const char *unit)
{
    char time[64], ratio[64];
    sp__fmt_time(time, sizeof time, (double)ns, unit);
    sp__fmt_ratio(ratio, sizeof ratio, (double)ns, (double)T);
    const char *cells[3] = {name, time, ratio};
    sp__table_row(t, cells);
}

static const char *const dist_note[] = {
    "Note:",
    "Communication time: Communication Event time, Communication Op time and its kernel time "
    "on gpu.",
    "Computation time: Kernel time, except kernels belong to communication(nccl kernels).",
    "Overlap time: Communication time intersects with computation time.",
    "Example:",
    "Communication:",
    "  CPU:              |_________________|",
    "  GPU:                                  |______________|",
    "  Total:            |_________________| |______________|",
    "Computation time(Kernel):",
    "  GPU:         |________________|",
    "Overlap time:       |___________|",
};

static sp__table *dist_table(const sp__model *m, const sp__summary_opts *o, int64_t comm,
                             int64_t comp, int64_t overlap)
{
    static const char *const header[3] = {"Name", "Total Time", "Ratio (%)"};
    const char *unit = o ? o->time_unit : NULL;
    char line[64];
    sp__table *t = sp__table_new(3);
    if (!t) return NULL;
    for (size_t c = 0; c < 3; c++) sp__table_column(t, c, 25, 0);
    sp__table_title(t, "Distribution Summary");
    /* sp__fmt_time treats an unknown unit as "ms"; say the same here. */
    int known = unit && (!strcmp(unit, "s") || !strcmp(unit, "ms") || !strcmp(unit, "us") ||
                         !strcmp(unit, "ns"));
    snprintf(line, sizeof line, "Time unit: %s", known ? unit : "ms");
    sp__table_text(t, line);
    sp__table_separator(t);
    sp__table_header(t, header);
    sp__table_separator(t);
    if (!m->T_is_fallback) dist_row(t, "ProfileStep", m->T, m->T, unit);
    dist_row(t, "  Communication", comm, m->T, unit);
    dist_row(t, "  Computation", comp, m->T, unit);
    dist_row(t, "  Overlap", overlap, m->T, unit);
    sp__table_separator(t);
    for (size_t i = 0; i < sizeof dist_note / sizeof dist_note[0]; i++)
        sp__table_text(t, dist_note[i]);
    sp__table_blank(t);
    sp__table_dashes(t);
    sp__table_blank(t);
    sp__table_blank(t);
    if (sp__table_failed(t)) {
        sp__table_free(t);
        return NULL;
    }
    return t;
}

int sp__summary_distributed(const sp__model *m, const sp__summary_opts *o, sp__table **out)
{
    sp__spans comm, comp, overlap;
    int rc = -1;
    *out = NULL;
    sp__spans_init(&comm);
    sp__spans_init(&comp); /* kernels only: empty until device records exist */
    sp__spans_init(&overlap);
    if (sp__summary_cpu_comm(m, &comm) != 0) goto done;
    rc = 0;
    if (comm.n == 0) goto done; /* nothing communicated: no table */
    rc = -1;
    if (sp__spans_intersect(&overlap, &comm, &comp) != 0) goto done;
    *out = dist_table(m, o, sp__spans_length(&comm), sp__spans_length(&comp),
                      sp__spans_length(&overlap));
    if (*out) rc = 0;
done:
    sp__spans_fini(&comm);
    sp__spans_fini(&comp);
    sp__spans_fini(&overlap);
    return rc;
}
