/* table_distributed.c: the Distributed Summary, titled "Distribution Summary"
 * (semantics.md §6.4), and the host communication ranges it shares with the
 * Overview Summary. Communication is the union of the merged CPU
 * communication ranges and the merged GPU communication kernels, computation
 * the merged other kernels, overlap their intersection; each row is its
 * length and its ratio to T.
 *
 * GPU side (sp__summary_gpu_comm, shared with the Overview's GPU
 * Communication row): only Kernel records count; memcpy and memset are
 * neither communication nor computation. A kernel reaches a node through its
 * runtime call (collect.h: device -> runtime -> innermost host range).
 *
 * Decisions:
 * - A kernel whose runtime call lies in a Communication node, or in an
 *   Operator named *allreduce*, *broadcast* or *rpc* (case-insensitive), or
 *   in any descendant of one, is GPU communication whatever its name (rules
 *   1 and 2: "every Kernel record under n"); it is never computation (§9:
 *   descendants of a communication node are not re-classified, so a gemm
 *   launched inside an allreduce does not inflate Overlap).
 * - Every other kernel follows rule 3 by its own name: lower-cased contains
 *   "nccl" or "xccl" -> GPU communication, else computation. That includes
 *   kernels launched from the thread root (runtime host -1), unattributed
 *   kernels (thread -1) and kernels whose thread, runtime or host index is
 *   out of range (a hand-made or loaded result): all treated as the root.
 * - Node flags ("has a case-1/2 node on the path from the root") are computed
 *   once per model in event order (parents come first), so classification is
 *   linear in nodes + device records.
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

static int is_comm_name(const char *name)
{
    return name && (contains_lower(name, "allreduce") || contains_lower(name, "broadcast") ||
                    contains_lower(name, "rpc"));
}

/* Per name id: 0 not looked at yet, 1 not a communication name, 2 one. A
 * span repeats few names many times, so each is searched once. NULL (no
 * memory) only means searching every time. */
static uint8_t *comm_name_cache(const sp_result *r)
{
    return r && r->names.count ? sp__alloc(r->names.count) : NULL;
}

static int is_comm_node(const sp_result *r, uint8_t *cache, const sp__event *e)
{
    if (e->type == SP_EVENT_COMMUNICATION) return 1;
    if (e->type != SP_EVENT_OPERATOR) return 0;
    if (!cache || e->name >= r->names.count) return is_comm_name(sp__result_name(r, e->name));
    if (!cache[e->name]) cache[e->name] = (uint8_t)(1 + is_comm_name(sp__result_name(r, e->name)));
    return cache[e->name] == 2;
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
    uint8_t *cache = comm_name_cache(m->result);
    for (size_t ti = 0; ti < m->thread_count; ti++) {
        const sp__thread_model *tm = &m->threads[ti];
        for (size_t k = 0; k < tm->count; k++) {
            const sp__event *e = &tm->thread->events[tm->nodes[k].event];
            if (is_comm_node(m->result, cache, e)) sp__spans_add(out, e->start_ns, e->end_ns);
        }
    }
    sp__free(cache);
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


/* Whether kernel dev lies under a case-1/2 node. under[off[t] + n] is 1 when
 * node n of thread t or one of its ancestors is a communication node. */
static int kernel_under_comm(const sp__model *m, const sp__device_rec *dev, const size_t *off,
                             const unsigned char *under)
{
    if (dev->thread < 0 || (size_t)dev->thread >= m->thread_count) return 0;
    const sp__thread_model *tm = &m->threads[dev->thread];
    const sp__thread *th = tm->thread;
    if (dev->runtime < 0 || (size_t)dev->runtime >= th->runtime_count) return 0;
    int32_t host = th->runtimes[dev->runtime].host;
    if (host < 0) return 0;
    int32_t n = sp__model_node_of(tm, host);
    return n >= 0 && under[off[dev->thread] + (size_t)n];
}

/* Appends every kernel of the model to comm (GPU communication) or, when
 * comp is not NULL, to comp (computation); neither is merged. Returns 0, or
 * -1 when memory ran out (the lists may then be partial). */
static int classify_kernels(const sp__model *m, sp__spans *comm, sp__spans *comp)
{
    const sp_result *r = m->result;
    size_t ndev = r ? r->device_count : 0;
    if (ndev == 0) return 0;
    size_t *off = sp__alloc(sizeof *off * (m->thread_count + 1));
    if (!off) return -1;
    off[0] = 0;
    for (size_t t = 0; t < m->thread_count; t++) off[t + 1] = off[t] + m->threads[t].count;
    unsigned char *under = sp__alloc(off[m->thread_count] ? off[m->thread_count] : 1);
    if (!under) {
        sp__free(off);
        return -1;
    }
    uint8_t *cache = comm_name_cache(r);
    for (size_t t = 0; t < m->thread_count; t++) {
        const sp__thread_model *tm = &m->threads[t];
        unsigned char *u = under + off[t];
        for (size_t k = 0; k < tm->count; k++) {
            const sp__node *nd = &tm->nodes[k];
            /* Parents come before children; an out-of-order parent (never
             * built by the model) counts as none. */
            int up = nd->parent >= 0 && (size_t)nd->parent < k ? u[nd->parent] : 0;
            u[k] = (unsigned char)(up || is_comm_node(r, cache, &tm->thread->events[nd->event]));
        }
    }
    sp__free(cache);
    for (size_t d = 0; d < ndev; d++) {
        const sp__device_rec *dev = &r->devices[d];
        if (dev->type != SP_EVENT_KERNEL) continue;
        int is_comm = kernel_under_comm(m, dev, off, under);
        if (!is_comm) { /* rule 3, by the kernel's own name */
            const char *name = sp__result_name(r, dev->name);
            is_comm = name && (contains_lower(name, "nccl") || contains_lower(name, "xccl"));
        }
        if (is_comm)
            sp__spans_add(comm, dev->start_ns, dev->end_ns);
        else if (comp)
            sp__spans_add(comp, dev->start_ns, dev->end_ns);
    }
    sp__free(under);
    sp__free(off);
    return comm->failed || (comp && comp->failed) ? -1 : 0;
}

/* The GPU communication kernels of §6.4 (rules 1 and 2 by ancestry, rule 3
 * by name, see the decisions above), one span per kernel record, NOT merged,
 * so the caller can count distinct ranges before merging. out must be
 * initialised; its old spans are replaced. Returns 0, or -1 when memory ran
 * out: out is then empty with failed set. */
int sp__summary_gpu_comm(const sp__model *m, sp__spans *out)
{
    sp__spans_fini(out);
    if (m->failed || classify_kernels(m, out, NULL) != 0) {
        sp__spans_fini(out);
        out->failed = 1;
        return -1;
    }
    return 0;
}

int sp__summary_gpu_split(const sp__model *m, sp__spans *comm, sp__spans *comp)
{
    sp__spans_fini(comm);
    sp__spans_fini(comp);
    if (m->failed || classify_kernels(m, comm, comp) != 0) {
        sp__spans_fini(comm);
        sp__spans_fini(comp);
        comm->failed = comp->failed = 1;
        return -1;
    }
    return 0;
}

int sp__summary_distributed(const sp__model *m, const sp__summary_opts *o, sp__table **out)
{
    sp__spans cpu, gpu, comm, comp, overlap;
    int rc = -1;
    *out = NULL;
    sp__spans_init(&cpu);
    sp__spans_init(&gpu);
    sp__spans_init(&comm);
    sp__spans_init(&comp);
    sp__spans_init(&overlap);
    /* Host communication counts only inside the steps, as in the Overview
     * (model.h); kernels keep their GPU-clock times. */
    if (sp__summary_cpu_comm(m, &cpu) != 0 || sp__model_clip_to_steps(m, &cpu) != 0) goto done;
    if (classify_kernels(m, &gpu, &comp) != 0) goto done;
    if (sp__spans_union(&comm, &cpu, &gpu) != 0) goto done; /* merges both */
    rc = 0;
    if (comm.n == 0) goto done; /* nothing communicated: no table */
    rc = -1;
    sp__spans_merge(&comp);
    if (sp__spans_intersect(&overlap, &comm, &comp) != 0) goto done;
    *out = dist_table(m, o, sp__spans_length(&comm), sp__spans_length(&comp),
                      sp__spans_length(&overlap));
    if (*out) rc = 0;
done:
    sp__spans_fini(&cpu);
    sp__spans_fini(&gpu);
    sp__spans_fini(&comm);
    sp__spans_fini(&comp);
    sp__spans_fini(&overlap);
    return rc;
}
