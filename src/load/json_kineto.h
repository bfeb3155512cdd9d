/* json_kineto.h: the event types of a trace written by torch.profiler
 * (Kineto), which carries no "Event Type" arg: its step, data-loading,
 * optimizer and collective ranges are told by their names, as the
 * TensorBoard plugin and HTA tell them (docs/trace-format.md §10.4), so
 * that summary, diagnose, report and diff see steps and phases in a
 * torch.profiler trace too. */
#ifndef SP_LOAD_JSON_KINETO_H
#define SP_LOAD_JSON_KINETO_H

#include <stepprof/stepprof.h>

/* The type of a host range named name with cat cat and no "Event Type";
 * fallback (the type cat alone gives) when its name means nothing more. */
sp_event_type sp__kineto_type(const char *cat, const char *name, sp_event_type fallback);

#endif
