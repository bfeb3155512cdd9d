/* json_gpu.h: the part of the Chrome-trace JSON writer that handles GPU
 * data and op supplements (json_gpu.c), and the few helpers of chrome_json.c
 * it shares. Private to src/export. chrome_json.c drives it: one
 * sp__json_gpu per file, set up before the first event and torn down after
 * the last. With no runtime or device records every call returns at once,
 * so CPU-only traces pay nothing. */
#ifndef SP_EXPORT_JSON_GPU_H
#define SP_EXPORT_JSON_GPU_H

#include "export.h"
#include "json_heads.h"

/* What a runtime/driver record needs at write time, computed once. */
typedef struct sp__json_rt {
    uint64_t op_ext;    /* External id of the nearest cpu_op at or above its host node; 0: none */
    uint64_t user_ext;  /* External id of the nearest user_annotation range above it; 0: none */
    int32_t user_event; /* that range's index in the thread's events; -1: none */
    int32_t flow_dev;   /* index in the result's devices of its flow end; -1: no flow */
} sp__json_rt;

typedef struct sp__json_gpu {
    const sp_result *r;
    sp__out *out;
    sp__buf *b;
    int64_t base_ns;
    sp__json_heads *heads; /* the writer's head cache; count 0: render in full */
    sp__buf scratch;       /* a head being rendered */
    sp__json_rt **rt;      /* per thread, one per runtime record; NULL: no GPU data */
    uint32_t *order;       /* device record indexes in write order */
    size_t next_rt;        /* the current thread's first runtime not yet written */
    int32_t *ops;          /* the current thread's event -> op supplement index, -1: none */
    size_t ops_cap;
    /* The last kernel's metrics args, reused while launches repeat. */
    sp__buf metrics;
    const sp__device_props *metrics_props;
    sp__kernel_detail metrics_kernel;
} sp__json_gpu;

/* Computes External ids, user ranges and flows of every runtime record and
 * the write order of device records. 0, or -1 when out of memory. */
int sp__json_gpu_init(sp__json_gpu *g, const sp_result *r, sp__out *out, int64_t base_ns,
                      sp__json_heads *heads);
void sp__json_gpu_fini(sp__json_gpu *g);

/* Appends the deviceProperties array (trace-format.md §2); "[]" without devices. */
void sp__json_put_device_props(sp__buf *b, const sp_result *r);

/* Appends the §5 metadata of every device and stream that has records. */
void sp__json_put_gpu_tracks(sp__json_gpu *g);

/* Starts thread i: resets the runtime cursor and returns the map from the
 * thread's event index to the op supplement written on it (cpu_op ranges
 * only, the last supplement attached wins), or NULL when the thread has no
 * supplements. Out of memory marks the output failed and returns NULL. */
const int32_t *sp__json_gpu_thread(sp__json_gpu *g, size_t i);

/* Writes thread i's runtime records that come before host event e in write
 * order (start ascending, longer first; a host range before a runtime call
 * with the same interval), each followed by its flow start. */
void sp__json_put_runtimes_until(sp__json_gpu *g, size_t i, const sp__event *e);
/* Writes thread i's runtime records not written yet. */
void sp__json_put_runtimes_rest(sp__json_gpu *g, size_t i);

/* Writes every device record on its (device, stream) track, each followed
 * by its flow end, then the gpu_user_annotation records (§8). */
void sp__json_put_device_tracks(sp__json_gpu *g);

/* Appends `"Input Dims":[...],"Input type":[...],` and `"Call stack":"...",`
 * (when non-empty) for op supplement k of thread t. */
void sp__json_put_op_args(sp__buf *b, const sp_result *r, const sp__thread *t, size_t k);

/* Helpers of chrome_json.c. */
void sp__json_put_u64(sp__buf *b, uint64_t v);
/* Writes v in decimal at p (room for 20 bytes); returns the end. */
char *sp__json_u64_at(char *p, uint64_t v);
/* `,"key":` then ns as microseconds with three decimals (clamped at 0). */
void sp__json_put_time(sp__buf *b, const char *key, int64_t ns);
/* Whether host event e is written with cat cpu_op (External ids of GPU
 * records refer to these). */
int sp__json_event_is_op(const sp_result *r, const sp__event *e);
/* The JSON spelling of e's name, quoted. */
void sp__json_put_event_name(sp__buf *b, const sp_result *r, const sp__event *e);

#endif
