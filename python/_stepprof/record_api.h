/* record_api.h: the recording calls of stepprof._core, handed to stepprof's
 * torch adapter (python/_stepprof_torch) in the capsule
 * stepprof._core._record_api. The core is compiled into _core with hidden
 * symbols, and a second extension that linked its own copy would record into
 * buffers that no profiler reads; the capsule gives the adapter _core's own
 * functions. C and C++ include it. */
#ifndef STEPPROF_PY_RECORD_API_H
#define STEPPROF_PY_RECORD_API_H

#include <stepprof/stepprof.h>

#define SPX_RECORD_API_CAPSULE "stepprof._core._record_api"
/* Raised whenever a member is added or changed: an adapter built for another
 * layout refuses the capsule. */
#define SPX_RECORD_API_VERSION 4u
/* The capsule name of stepprof._core.Profiler._handle(): an sp_profiler *. */
#define SPX_PROFILER_CAPSULE "stepprof._core.profiler"

typedef struct spx_record_api {
    unsigned version; /* SPX_RECORD_API_VERSION */
    /* Nonzero while the library wants range begins and ends (the flag the
     * header's inline calls test before calling in). */
    const int *active;
    void (*range_begin)(sp_event_type type, const char *name);
    void (*range_begin_copy)(sp_event_type type, const char *name, size_t len);
    void (*range_end)(void);
    /* sp_profiler_add_op_info: input shapes and dtypes (record_shapes). */
    sp_status (*add_op_info)(sp_profiler *prof, const sp_op_info *ops, size_t count);
    /* sp_memory_event's call: torch's allocators' reports (profile_memory);
     * recorded only while *active has bit 0 (recording). */
    void (*memory_event)(sp_mem_event_type type, const char *place, const sp_mem_info *info);
    /* sp_profiler_add_comm_info: torch.distributed's collectives. */
    sp_status (*add_comm_info)(sp_profiler *prof, const sp_comm_info *comms, size_t count);
} spx_record_api;

#endif
