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

#include <stdio.h>

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

/* The rest of torch's table() arguments, for sp__torch_table_with. */
typedef struct sp__torch_table_opts {
    const char *sort_by; /* as sp__torch_table's; NULL: self_cpu_time_total */
    int row_limit;       /* as sp__torch_table's; default 100 */
    /* torch's max_name_column_width (default 55): the name column is at
     * most this wide, and names of width - 3 code points and more are cut
     * to width - 3 + "..." (widths under 4 count as 4); <= 0: torch's None,
     * no limit and no cut. */
    long max_name_width;
    /* torch's time_unit: "s", "ms" or "us" formats every time with that
     * unit ("%.3f<unit>"); NULL or any other text: torch's automatic units. */
    const char *time_unit;
    /* torch's key_averages(group_by_input_shape=True): rows by name and
     * input shapes (torch's str(input_shapes), from the range's op record:
     * "[[16, 32], [64]]", "[]" without one), with torch's "Input Shapes"
     * column after "# of Calls" when some row has a non-empty list. A range
     * merged into its same-named parent counts with the parent's shapes. */
    int by_input_shapes;
    /* torch's max_shapes_column_width (default 80): that column is at most
     * this wide and its cells are cut to it; < 0: torch's None, no limit. */
    long max_shapes_width;
} sp__torch_table_opts;

/* Fills o with torch's defaults. */
void sp__torch_table_opts_init(sp__torch_table_opts *o);

/* sp__torch_table with every option; same results and errors. */
int sp__torch_table_with(const sp__model *m, const sp__torch_table_opts *o, sp__buf *out);

/* sp_result_table_torch with every option (the Python binding's entry):
 * the same errors, and SP_EINVAL for a NULL o.
 * Threads: any. */
sp_status sp__result_table_torch_with(const sp_result *r, const sp__torch_table_opts *o, FILE *out);

#endif
