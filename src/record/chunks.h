/* chunks.h: chunk allocation under the global memory cap (chunks.c). */
#ifndef SP_RECORD_CHUNKS_H
#define SP_RECORD_CHUNKS_H

#include "record.h"

#define SP__CHUNK_MIN_BYTES ((size_t)16 << 10)
#define SP__CHUNK_MAX_BYTES ((size_t)1 << 20)

/* Size of the chunk that should follow cur (NULL or a stub: the smallest). */
size_t sp__chunk_next_bytes(const sp__chunk *cur);

/* A chunk of `bytes` bytes, pre-faulted, or NULL if the cap would be
 * exceeded or memory is short. */
sp__chunk *sp__chunk_acquire(size_t bytes);

/* The same without the cap (counted in it all the same, so that nothing
 * else is taken until it is released): for ProfileStep ranges, which are
 * never dropped at the cap. NULL if memory is short. */
sp__chunk *sp__chunk_acquire_past_cap(size_t bytes);

/* Returns a chunk to the pool (1 MiB) or frees it. Stub chunks are ignored. */
void sp__chunk_release(sp__chunk *c);

#endif
