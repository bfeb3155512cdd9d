/* correlate.h: tells an outside tracer which range each thread is in, so
 * that the tracer can tag what the thread does meanwhile (CUPTI's external
 * correlation ids, docs/design.md, GPU recorder). While a correlator
 * is set, range begins and ends leave record.c's fast path: a recorded
 * begin pushes its own tick count as the id, and its end pops it. The id
 * and the calling thread name the range exactly, whatever clock the tracer
 * stamps its records with. */
#ifndef SP_RECORD_CORRELATE_H
#define SP_RECORD_CORRELATE_H

#include <stdint.h>

typedef struct sp__correlator {
    void (*push)(uint64_t id); /* called by the thread that begins the range */
    void (*pop)(void);         /* by the same thread, at the range's end */
} sp__correlator;

/* Sets the correlator (NULL: none). The correlator must stay valid for the
 * life of the process: a thread may still call it just after it is unset.
 * Ranges begun before a correlator was set are never pushed; ranges begun
 * under an earlier one are forgotten (their ids may stay on the tracer's
 * stack, naming a range of an earlier span). Threads: any. */
void sp__record_set_correlator(const sp__correlator *c);

/* The bit of sp__host_active that sends begins and ends to the slow path. */
#define SP__ACTIVE_CORRELATE 4

/* record.c's slow paths: a begin (recorded or not, for the nesting), and
 * an end. Cheap no-ops without a correlator. */
void sp__correlate_begin(int recorded, uint64_t ticks);
void sp__correlate_end(void);

/* fork.c: the child forgets the correlator (the tracer is the parent's). */
void sp__correlate_fork_child(void);

#endif
