/* perfetto.h: what the .pftrace writer (perfetto.c) and reader
 * (src/load/load_pftrace.c) agree on beyond Perfetto's own schema: the
 * field numbers used (public facts of Perfetto's trace format, listed at
 * https://perfetto.dev/docs/reference/trace-packet-proto), the categories
 * and debug annotation names stepprof gives its data, and how the first
 * packet of a stepprof trace begins (how load.c tells the format). The
 * layout of a file is in docs/trace-format.md, "Perfetto traces". */
#ifndef SP_EXPORT_PERFETTO_H
#define SP_EXPORT_PERFETTO_H

#include "collect.h"

/* Trace */
#define PF_TRACE_PACKET 1
/* TracePacket */
#define PF_PACKET_CLOCK_SNAPSHOT 6
#define PF_PACKET_TIMESTAMP 8
#define PF_PACKET_SEQUENCE_ID 10 /* trusted_packet_sequence_id */
#define PF_PACKET_TRACK_EVENT 11
#define PF_PACKET_INTERNED_DATA 12
#define PF_PACKET_SEQUENCE_FLAGS 13
#define PF_PACKET_DEFAULTS 59 /* trace_packet_defaults */
#define PF_PACKET_TRACK_DESCRIPTOR 60
#define PF_SEQ_INCREMENTAL_STATE_CLEARED 1
/* ClockSnapshot and its Clock */
#define PF_SNAPSHOT_CLOCKS 1
#define PF_CLOCK_ID 1
#define PF_CLOCK_TIMESTAMP 2
#define PF_CLOCK_INCREMENTAL 3
#define PF_CLOCK_BOOTTIME 6      /* the trace processor's default trace clock */
#define PF_CLOCK_SEQUENCE 64     /* the first sequence-scoped clock id */
/* TracePacketDefaults, TrackEventDefaults */
#define PF_DEFAULTS_CLOCK_ID 58
#define PF_DEFAULTS_TRACK_EVENT 11
#define PF_TE_DEFAULTS_TRACK_UUID 11
/* TrackEvent */
#define PF_TE_CATEGORY_IIDS 3
#define PF_TE_DEBUG_ANNOTATIONS 4
#define PF_TE_TYPE 9
#define PF_TE_NAME_IID 10
#define PF_TE_TRACK_UUID 11
#define PF_TE_EXTRA_COUNTER_VALUES 12
#define PF_TE_CATEGORIES 22
#define PF_TE_NAME 23
#define PF_TE_EXTRA_COUNTER_TRACKS 31
#define PF_TE_DOUBLE_COUNTER_VALUE 44
#define PF_TE_FLOW_IDS 47
#define PF_TE_TERMINATING_FLOW_IDS 48
#define PF_TYPE_SLICE_BEGIN 1
#define PF_TYPE_SLICE_END 2
#define PF_TYPE_INSTANT 3
#define PF_TYPE_COUNTER 4
/* InternedData; EventCategory, EventName and DebugAnnotationName share
 * their fields: iid 1, name 2. */
#define PF_INTERNED_CATEGORIES 1
#define PF_INTERNED_NAMES 2
#define PF_INTERNED_ANNOTATION_NAMES 3
#define PF_INTERNED_ANNOTATION_STRINGS 29 /* InternedString: iid 1, str 2 */
#define PF_INTERNED_IID 1
#define PF_INTERNED_NAME 2
/* DebugAnnotation */
#define PF_ANN_NAME_IID 1
#define PF_ANN_UINT 3
#define PF_ANN_INT 4
#define PF_ANN_DOUBLE 5
#define PF_ANN_STRING 6
#define PF_ANN_NAME 10
#define PF_ANN_STRING_IID 17
/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor, CounterDescriptor */
#define PF_TRACK_UUID 1
#define PF_TRACK_NAME 2
#define PF_TRACK_PROCESS 3
#define PF_TRACK_THREAD 4
#define PF_TRACK_PARENT 5
#define PF_TRACK_COUNTER 8
#define PF_PROCESS_PID 1
#define PF_PROCESS_NAME 6
#define PF_THREAD_PID 1
#define PF_THREAD_TID 2
#define PF_THREAD_NAME 5
#define PF_COUNTER_UNIT 3
#define PF_UNIT_SIZE_BYTES 3

/* The first packet of every stepprof trace: field 1 of the Trace, its
 * length, then these bytes: sequence id 1, sequence flags 1 (incremental
 * state cleared), the key of a track descriptor (the process's). */
#define PF_FIRST_PACKET_BODY "\x50\x01\x68\x01\xe2\x03"
#define PF_FIRST_PACKET_BODY_LEN 6

/* Categories beyond the event types' names (sp_event_type_name): a memory
 * event, and stepprof's metadata events on the process track. */
#define PF_CATEGORY_MEMORY "memory"
#define PF_CATEGORY_STEPPROF "stepprof"
/* The names of the metadata events. */
#define PF_NAME_METADATA "stepprof metadata"
#define PF_NAME_DEVICE "stepprof device"
#define PF_NAME_MEMORY "[memory]"
#define PF_NAME_RESERVED "[reserved memory]"

/* The interned debug annotation names of events (a metadata event names
 * its annotations in full instead). */
#define PF_ANNOTATION_LIST(X)                                                                      \
    X(PF_A_CORRELATION, "correlation")                                                             \
    X(PF_A_CBID, "cbid")                                                                           \
    X(PF_A_DRIVER, "driver")                                                                       \
    X(PF_A_DEVICE, "device")                                                                       \
    X(PF_A_CONTEXT, "context")                                                                     \
    X(PF_A_STREAM, "stream")                                                                       \
    X(PF_A_BYTES, "bytes")                                                                         \
    X(PF_A_GRID, "grid")                                                                           \
    X(PF_A_BLOCK, "block")                                                                         \
    X(PF_A_REGISTERS, "registers per thread")                                                      \
    X(PF_A_STATIC_SHARED, "static shared memory")                                                  \
    X(PF_A_DYNAMIC_SHARED, "dynamic shared memory")                                                \
    X(PF_A_LOCAL_PER_THREAD, "local memory per thread")                                            \
    X(PF_A_LOCAL_TOTAL, "local memory total")                                                      \
    X(PF_A_QUEUED, "queued ns")                                                                    \
    X(PF_A_SUBMITTED, "submitted ns")                                                              \
    X(PF_A_COPY_KIND, "copy kind")                                                                 \
    X(PF_A_SRC_KIND, "src kind")                                                                   \
    X(PF_A_DST_KIND, "dst kind")                                                                   \
    X(PF_A_MEMORY_KIND, "memory kind")                                                             \
    X(PF_A_VALUE, "value")                                                                         \
    X(PF_A_NUM_SAMPLES, "num_samples")                                                             \
    X(PF_A_FLAGS, "stepprof flags")                                                                \
    X(PF_A_ADDR, "Addr")                                                                           \
    X(PF_A_MEM_BYTES, "Bytes")                                                                     \
    X(PF_A_PLACE, "place")                                                                         \
    X(PF_A_MEM_TYPE, "memory event")                                                               \
    X(PF_A_PEAK_ALLOCATED, "peak allocated")                                                       \
    X(PF_A_PEAK_RESERVED, "peak reserved")                                                        \
    X(PF_A_INDEX, "stepprof index")                                                               \
    X(PF_A_RECORDED, "recorded name")

#define PF__ANN_ENUM(id, text) id,
typedef enum pf_annotation { PF_ANNOTATION_LIST(PF__ANN_ENUM) PF_A_COUNT } pf_annotation;
#undef PF__ANN_ENUM

/* Which flags of an event the file carries ("stepprof flags"); instant and
 * counter are told by the packet, overlap is recomputed when loaded. */
#define PF_KEPT_FLAGS (SP_EVENT_FLAG_UNCLOSED | SP_EVENT_FLAG_SPLIT | SP_EVENT_FLAG_SPLIT_CONT)

/* Appends, on sequence 1, the metadata events (perfetto_meta.c): one
 * PF_NAME_METADATA instant at the span's start with the span, the rank,
 * the options, the counters and the threads' drops as debug annotations,
 * and one PF_NAME_DEVICE instant per device's properties, all on track. */
void sp__perfetto_put_metadata(sp__buf *out, const sp_result *r, uint64_t track);

/* Writes r to path as a Perfetto trace (perfetto.c). */
sp_status sp__export_perfetto(const sp_result *r, const char *path);

#endif
