/* ring.h: the overwrite policy at the memory cap (ring.c). */
#ifndef SP_RECORD_RING_H
#define SP_RECORD_RING_H

#include "record.h"

/* Whether the overwrite policy is on (sp__record_set_overwrite). */
int sp__ring_on(void);

/* Unlinks the oldest reusable chunk over all threads and returns it, empty,
 * for the calling thread to write into; its unread events are counted as
 * overwritten on the thread that wrote them. NULL if no chunk can be taken
 * now (none is reusable, or a drain holds the buffers). */
sp__chunk *sp__ring_take(void);

#endif
