/* table_kernel.c: the Kernel Summary (semantics.md §6.6): one row per full
 * kernel name over every Kernel record of the span (attributed, attached to
 * a thread root, or unattributed), sorted by sorted_by, ratio = item total
 * / sum over all kernels.
 *
 * Decision: Paddle prints this table only when it has kernel items
 * (`if statistic_data.event_summary.kernel_items:` in _build_table), so a
 * span without kernels prints nothing, not an empty table. Results hold no
 * device records yet, so there are never kernel items: *out is always NULL.
 * The GPU tracer will build the rows here from the attributed, root and
 * unattributed kernel records once they exist. */
#include "summary.h"

int sp__summary_kernel(const sp__model *m, const sp__summary_opts *o, sp__table **out)
{
    (void)o;
    *out = NULL;
    if (m->failed) return -1;
    return 0;
}
