/* cupti_records.h: turning CUPTI activity records into sp__gpu_record
 * (cupti_records.c), and the store that holds them until a take. Private to
 * src/gpu; the tests of tests/gpu feed it hand-made records. Only compiled
 * with CUPTI's headers (SP_HAVE_CUPTI). */
#ifndef SP_GPU_CUPTI_RECORDS_H
#define SP_GPU_CUPTI_RECORDS_H

#ifdef SP_HAVE_CUPTI

#include "gpu.h"

#include <cupti.h>

/* Interned names: each distinct string is stored once, and kernel names
 * are demangled once per distinct mangled name. A batch owns one (its
 * `names`), so every name it points to lives until sp__gpu_batch_free. */
typedef struct sp__gpu_names sp__gpu_names;

sp__gpu_names *sp__gpu_names_create(void); /* NULL when out of memory */
void sp__gpu_names_destroy(sp__gpu_names *n); /* NULL: nothing */
/* The stored copy of s, or NULL when out of memory. */
const char *sp__gpu_names_intern(sp__gpu_names *n, const char *s);
/* The demangled form of a kernel's mangled name (the name itself when it is
 * not mangled or no demangler is loaded), stored; NULL when out of memory. */
const char *sp__gpu_names_kernel(sp__gpu_names *n, const char *mangled);

/* The kind of external correlation id stepprof pushes: CUSTOM2, as Kineto
 * (torch.profiler) pushes CUSTOM0 and CUSTOM1 where both trace at once. */
#define SP__CUPTI_EXTERNAL_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2

/* An external correlation record of stepprof's kind: the API call with this
 * correlation id was made inside the range whose begin ticks are `id`. */
typedef struct sp__gpu_external {
    uint32_t correlation;
    uint64_t id;
} sp__gpu_external;

/* Records converted so far, with the counts of those lost. Threads: the
 * caller serialises (the tracer's store lock). */
typedef struct sp__gpu_store {
    sp__gpu_record *records;
    size_t count, cap;
    sp__gpu_external *externals; /* until sp__gpu_store_link_external */
    size_t external_count, external_cap;
    sp__gpu_names *names;       /* created at the first name */
    uint64_t discarded_records; /* out of memory here, or the discard buffer */
    uint64_t zero_timestamp;    /* device records with a zero start or end: dropped */
    uint64_t filtered;          /* noisy API calls and the recorder's own sync: dropped */
} sp__gpu_store;

/* Frees what the store holds and empties it. */
void sp__gpu_store_fini(sp__gpu_store *s);

/* Gives each API record the external id recorded for its correlation id
 * (0 where none was), then forgets the external records. A call whose
 * external record was lost (out of memory) is attributed by time instead. */
void sp__gpu_store_link_external(sp__gpu_store *s);

/* Names an API call: CUPTI's cuptiGetCallbackName in the tracer. May
 * return NULL, which gives "runtime_cbid_<n>" or "driver_cbid_<n>". */
typedef const char *(*sp__gpu_api_namer)(void *ctx, int driver, uint32_t cbid);

/* How records are converted. */
typedef struct sp__cupti_convert {
    sp__gpu_api_namer api_name; /* NULL: the fallback names */
    void *api_ctx;
    /* The recorder's own device synchronisation: API records of this
     * thread inside [skip_start, skip_end] are dropped. skip_end 0: none. */
    uint64_t skip_tid, skip_start, skip_end;
} sp__cupti_convert;

/* Callback ids whose records are dropped as noise (docs/design.md, GPU recorder);
 * the tracer also disables them in CUPTI where it can. */
extern const uint32_t sp__cupti_noisy_runtime[];
extern const size_t sp__cupti_noisy_runtime_count;
extern const uint32_t sp__cupti_noisy_driver[];
extern const size_t sp__cupti_noisy_driver_count;
int sp__cupti_is_noisy(int driver, uint32_t cbid);

/* CUPTI's copy and memory kinds as the indexes of kinds.c. */
uint8_t sp__cupti_copy_kind(unsigned cupti_kind);
uint8_t sp__cupti_memory_kind(unsigned cupti_kind);

/* Converts one record into the store. Returns 1 when stored, 0 when dropped
 * on purpose (another kind, noise, zero timestamps: counted; external ids of
 * other tools' kinds), -1 when out of memory (counted in discarded_records,
 * except external records, which only cost their call the exact
 * attribution). Reads only the leading fields that every record version
 * since CUDA 12.0 shares. */
int sp__cupti_convert_one(sp__gpu_store *s, const sp__cupti_convert *c, const CUpti_Activity *rec);

/* cuptiActivityGetNextRecord's type: the walk takes it as a parameter so
 * the tests can walk without libcupti. */
typedef CUptiResult (*sp__cupti_next_fn)(uint8_t *buffer, size_t valid_bytes, CUpti_Activity **record);

/* Walks a completed buffer until next fails (end of the valid bytes, or an
 * incomplete or invalid record) and converts each record into s, or only
 * counts them when s is NULL. Returns the number of records walked. */
size_t sp__cupti_walk(sp__gpu_store *s, const sp__cupti_convert *c, sp__cupti_next_fn next,
                      uint8_t *buffer, size_t valid_bytes);

#endif /* SP_HAVE_CUPTI */
#endif
