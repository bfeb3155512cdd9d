/* gpu.h: the GPU recorder (docs/design.md, GPU recorder). It sits beside the host
 * recorder: it turns CUPTI activity records into records free of CUPTI's
 * headers and keeps them until the collector takes them. CUPTI is loaded
 * with dlopen at the first prepare, so neither the library nor its users
 * need CUDA unless GPU tracing is requested; where it cannot be had, every
 * call here is a cheap no-op and sp__gpu_prepare says why in one line. */
#ifndef SP_GPU_H
#define SP_GPU_H

#include <stddef.h>
#include <stdint.h>

/* What a device record is. Values are stepprof's, not CUPTI's. */
typedef enum sp__gpu_kind {
    SP__GPU_RUNTIME = 0, /* a CUDA runtime API call (cudaLaunchKernel) */
    SP__GPU_DRIVER = 1,  /* a driver API call (cuLaunchKernel) */
    SP__GPU_KERNEL = 2,
    SP__GPU_MEMCPY = 3,
    SP__GPU_MEMSET = 4
} sp__gpu_kind;

/* Memory copy directions and memory kinds, in the order of the JSON
 * spellings of trace-format.md §6 (sp__gpu_copy_kind_name and
 * sp__gpu_memory_kind_name give them). Loaders map strings back. */
enum { SP__GPU_COPY_KINDS = 11, SP__GPU_MEMORY_KINDS = 8 };
const char *sp__gpu_copy_kind_name(unsigned kind);   /* "HtoD", ..., "PtoP", "Unknown" */
const char *sp__gpu_memory_kind_name(unsigned kind); /* "Pageable", ..., "Unknown" */
unsigned sp__gpu_copy_kind_parse(const char *s);     /* unknown -> "Unknown" */
unsigned sp__gpu_memory_kind_parse(const char *s);

/* The detail a device record carries besides its times and stream. */
typedef struct sp__kernel_detail {
    uint32_t grid[3], block[3];
    uint32_t registers;      /* per thread */
    uint32_t static_shared;  /* bytes per block */
    uint32_t dynamic_shared; /* bytes per block */
    uint32_t local_per_thread;
    uint32_t local_total;
    uint64_t queued_ns, submitted_ns; /* 0: unknown (CUPTI reports them only on request) */
} sp__kernel_detail;

typedef struct sp__copy_detail {
    uint8_t copy_kind;          /* index for sp__gpu_copy_kind_name */
    uint8_t src_kind, dst_kind; /* indexes for sp__gpu_memory_kind_name */
} sp__copy_detail;

typedef struct sp__set_detail {
    uint8_t memory_kind; /* index for sp__gpu_memory_kind_name */
    uint32_t value;
} sp__set_detail;

typedef union sp__device_detail {
    sp__kernel_detail kernel;
    sp__copy_detail copy;
    sp__set_detail set;
} sp__device_detail;

/* The properties of one CUDA device (trace-format.md §2 deviceProperties,
 * and what the occupancy estimate needs). */
typedef struct sp__device_props {
    uint32_t id;
    char name[256];
    uint64_t total_global_mem;
    uint32_t compute_major, compute_minor;
    uint32_t max_threads_per_block, max_threads_per_sm;
    uint32_t regs_per_block, regs_per_sm;
    uint32_t warp_size;
    uint64_t shared_per_block, shared_per_sm, shared_per_block_optin;
    uint32_t num_sms;
    uint32_t max_blocks_per_sm; /* 0: unknown (the estimate then derives it from the compute capability) */
} sp__device_props;

/* One activity record. Times are in the recorder's clock (see
 * sp__gpu_batch.clock). Names live as long as the batch. */
typedef struct sp__gpu_record {
    uint64_t start, end;
    const char *name;     /* API name ("cudaLaunchKernel_v7000"), demangled kernel name, "MEMCPY_HtoD", "MEMSET" */
    uint8_t kind;         /* sp__gpu_kind */
    uint32_t correlation; /* shared by an API call and the device records it launched */
    uint32_t cbid;        /* API calls: CUPTI's callback id */
    uint64_t tid;         /* API calls: the OS thread id that made the call */
    uint64_t external;    /* API calls: the begin ticks of the range the call was made in
                           * (its external correlation id, correlate.h); 0: none */
    uint32_t device, context, stream;
    uint64_t bytes;       /* memcpy, memset */
    sp__device_detail detail;
} sp__gpu_record;

/* The clock of a batch's times. */
typedef enum sp__gpu_clock {
    SP__GPU_CLOCK_TICKS = 0,   /* stepprof's own ticks (its timestamp callback is registered) */
    SP__GPU_CLOCK_REALTIME = 1 /* CUPTI's default, CLOCK_REALTIME ns */
} sp__gpu_clock;

/* Everything recorded since the last take or discard, with the counts of
 * records lost on the way (docs/design.md, GPU recorder). */
typedef struct sp__gpu_batch {
    sp__gpu_record *records;
    size_t count;
    sp__gpu_clock clock;
    uint64_t cupti_dropped;     /* cuptiActivityGetNumDroppedRecords */
    uint64_t discarded_records; /* handed the discard buffer: pool empty */
    uint64_t zero_timestamp;    /* kernel records with a zero start or end */
    sp__device_props *devices;  /* every visible device, in id order */
    size_t device_count;
    void *names;                /* the recorder's storage for the names above */
} sp__gpu_batch;

/* The line every refusal shares: paddle's words first, as paddle users
 * know them, then the reason and what to do. */
#define SP__GPU_OFF "Profiling GPU is not supported in current context: "
#define SP__GPU_CPU_ONLY "; recording the CPU only"

/* Says whether sp__gpu_prepare can succeed, without subscribing to CUPTI:
 * the driver loads, a device exists and libcupti loads. Returns 0, or -1
 * with the line prepare would give. For a warning when the profiler is
 * created, as paddle gives one. */
int sp__gpu_probe(char *why, size_t why_size);

/* Loads CUPTI (once per process), subscribes and enables the activity kinds.
 * Returns 0, or -1 after writing one line to why saying what is missing and
 * what to do (no libcupti, no device, insufficient privileges, another
 * CUPTI subscriber such as nsys or torch.profiler); the profiler then warns
 * and records the CPU only. A failure other than a missing device is
 * remembered: later calls fail at once with the same line. */
int sp__gpu_prepare(char *why, size_t why_size);

/* Synchronises the devices, flushes CUPTI and forgets every record so far
 * (READY -> RECORD: what READY recorded only warmed the buffers). */
void sp__gpu_discard(void);

/* Synchronises the devices, force-flushes CUPTI and moves every record so
 * far into *out (which the caller frees with sp__gpu_batch_free). Without a
 * prepared recorder *out is empty. Returns 0, or -1 when out of memory (the
 * records are then dropped and counted in out->discarded_records). */
int sp__gpu_take(sp__gpu_batch *out);
void sp__gpu_batch_free(sp__gpu_batch *b);

/* Disables the activity kinds (the profiler released the tracers). CUPTI
 * stays loaded and subscribed: re-initialising it crashes with CUDA Graphs. */
void sp__gpu_release(void);

/* Non-zero when the process has loaded the CUDA driver (libcuda.so.1): the
 * default targets trace the GPU only then, so a CPU-only program never
 * loads CUPTI (presence.c). */
int sp__gpu_cuda_in_process(void);

/* Non-zero once sp__gpu_prepare has succeeded and until sp__gpu_release. */
int sp__gpu_active(void);

#endif
