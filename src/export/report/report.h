/* report.h: the HTML report (docs/report.md). report.c writes the page: the
 * style, the data of the result (and of a baseline) as one JSON object, and
 * the script that draws it (report.js, report.css, embedded at build time).
 * The data is everything the page shows, computed here in C from the same
 * model, tables and diagnosis as `stepprof summary` and `diagnose`, so the
 * script only lays it out. report_data.c writes one result's data,
 * report_series.c its charts' series (top operators and kernels, GPU
 * utilisation, memory), report_timeline.c the median step's events.
 *
 * Every string goes through sp__json_put_string, and the page escapes '<',
 * '>' and '&' of the whole object (report.c), so no recorded name can end
 * the script element or inject markup; the script only ever sets text.
 *
 * Threads: one report is written by one thread; the result is only read. */
#ifndef SP_EXPORT_REPORT_H
#define SP_EXPORT_REPORT_H

#include "diagnose.h"
#include "model.h"
#include "table.h"
#include "throughput.h"

/* The page's fixed parts, NUL-terminated (generated from report.js and
 * report.css by cmake/embed.cmake). */
extern const char sp__report_js[];
extern const char sp__report_css[];

/* At most this many rows of a table section, events in the timeline, lanes
 * in it, points of a memory curve: what is left out is counted in the data
 * and said on the page. */
#define SP__REPORT_TABLE_ROWS 1000
#define SP__REPORT_TIMELINE_EVENTS 20000
#define SP__REPORT_LANES 64
#define SP__REPORT_MEMORY_POINTS 2000
#define SP__REPORT_TOP 15
#define SP__REPORT_UTIL_BINS 200

/* Appends the JSON object of one result (docs/report.md §2). m is built
 * from r; d is its diagnosis (steps.n == 0 when it has no step), t its
 * throughput. source may be NULL. */
void sp__report_data(sp__buf *b, const sp_result *r, const sp__model *m, const sp__diagnosis *d,
                     const sp__throughput *t, const char *source);

/* The report's time origin: the first step's start, else the span's. */
int64_t sp__report_origin(const sp__model *m, const sp__steps *s);

/* Appends a table as {"view": view, "lines": [["kind", cells...], ...]}. */
void sp__report_table(sp__buf *b, const char *view, const sp__table *t);

/* Appends "top_ops", "top_kernels", "gpu_util" and "memory" members, each
 * followed by ','. */
void sp__report_series(sp__buf *b, const sp__model *m, const sp__steps *s);

/* Appends the "timeline" member (no ','): the events of the median step
 * (null when there is no step). */
void sp__report_timeline(sp__buf *b, const sp__model *m, const sp__steps *s);

/* The index in s of the median step: steps ordered by length, then number;
 * the lower of the two middle ones. s->n must be > 0. */
size_t sp__report_median_step(const sp__steps *s);

#endif
