/* json_cuda.h: what load_json.c needs to read back the CUDA records that
 * stepprof's own Chrome-trace JSON carries (trace-format.md §2, §6, §7), in
 * the cats torch's Kineto uses as well: runtime and driver calls on their
 * host threads, kernels, memcpys and memsets on (device, stream) tracks, and
 * the top-level deviceProperties. */
#ifndef SP_JSON_CUDA_H
#define SP_JSON_CUDA_H

#include "json_lex.h"
#include "load.h"

/* The args of one CUDA event that matter. */
typedef struct sp__cuda_args {
    int has_correlation;
    int bad; /* an arg read here held a value of the wrong type */
    int64_t correlation, cbid, device, context, stream, bytes, registers, shared, queued;
    int has_device, has_context, has_stream;
    uint32_t grid[3], block[3];
} sp__cuda_args;

void sp__cuda_args_reset(sp__cuda_args *a);
/* Takes a numeric arg by key; unknown keys are ignored. */
void sp__cuda_arg_number(sp__cuda_args *a, const char *key, int64_t v);
/* Reads the value of key when it is one of ours and not a number ("grid"
 * and "block" are arrays of three); returns 1 when it read the value, 0
 * when the caller should read it, -1 on a syntax error. A value of the
 * wrong type for one of our keys marks the args bad. */
int sp__cuda_arg_other(sp__cuda_args *a, sp__jlex *lx, const char *key);

/* The record type of an X event's cat: SP_EVENT_CUDA_RUNTIME (cuda_runtime
 * and cuda_driver, *driver set for the latter), SP_EVENT_KERNEL,
 * SP_EVENT_MEMCPY, SP_EVENT_MEMSET, or SP_EVENT_TYPE_COUNT for none. */
sp_event_type sp__cuda_type(const char *ph, const char *cat, int *driver);

/* Adds a runtime call of host thread tid, or a device record of device
 * pid and stream tid, named name (the JSON's spelling). Returns 0 when
 * added, 1 when the args cannot make a record (no correlation, or a value
 * of the wrong type), -1 when out of memory. A memcpy or memset name not of
 * the form the writer gives keeps the record, with "Unknown" kinds. */
int sp__cuda_add(sp__builder *b, const sp__cuda_args *a, sp_event_type type, int driver,
                 int64_t pid, int64_t tid, const char *name, int64_t start, int64_t end);

/* Reads the top-level "deviceProperties" array into the result's device
 * properties (objects of the wrong shape are skipped and counted in
 * *skipped). Returns -1 on a syntax error or when out of memory. */
int sp__cuda_read_props(sp__jlex *lx, sp_result *r, uint64_t *skipped);

#endif
