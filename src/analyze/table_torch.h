/* table_torch.h: the torch-style table (semantics.md §6.11), the text that
 * torch's prof.key_averages().table(sort_by=..., row_limit=...) prints, built
 * from the host model so that users coming from torch can compare line by
 * line. It is an optional view beside the Paddle summary tables of
 * summary.h and is rendered straight into a buffer: torch right-aligns every
 * column, Name included, which sp__table_render (left-aligned names) cannot
 * do, and nobody needs the cells as data. */
#ifndef SP_ANALYZE_TABLE_TORCH_H
#define SP_ANALYZE_TABLE_TORCH_H

#include "model.h"
#include "sys.h"

/* Appends the table of m to out.
 * Rows: every host range (model node) grouped by its name as spelled in the
 * JSON (trace-format.md §6), "ProfilerStep#N" renamed "ProfilerStep*" as
 * torch does. Columns, formats, NaN percentages and footer per §6.11; the
 * device columns and the "Self CUDA time total" footer appear only when some
 * node has device time; the memory columns when the result was recorded
 * with profile_memory.
 * sort_by: "self_cpu_time_total" (also for NULL), "cpu_time_total",
 * "cpu_time_avg" (torch's attribute "cpu_time" is accepted too), "count",
 * torch's device time and memory keys (sort_keys in table_torch.c), or
 * "none"; rows sort descending, ties in order of first occurrence (start
 * asc, end desc, as torch's event list). row_limit < 0 prints every row (callers
 * default to 100). An empty model appends nothing, as torch returns "".
 * Returns 0; -2 for an unknown sort_by (nothing appended, so the caller
 * can report it); -1 when memory ran out or m is a failed model (out may then
 * hold a partial table, and out->failed may be set).
 * Threads: m is only read; not concurrently with a writer of out. */
int sp__torch_table(const sp__model *m, const char *sort_by, int row_limit, sp__buf *out);

#endif
