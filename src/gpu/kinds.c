/* kinds.c: the spellings of memory copy directions and memory kinds
 * (trace-format.md §6). Records keep small indexes; the JSON writer and the
 * protobuf writer spell them, the protobuf loader reads them back. */
#include "gpu.h"

#include <string.h>

static const char *const copy_kinds[SP__GPU_COPY_KINDS] = {
    "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP", "Unknown",
};

static const char *const memory_kinds[SP__GPU_MEMORY_KINDS] = {
    "Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static", "Unknown",
};

const char *sp__gpu_copy_kind_name(unsigned kind)
{
    return copy_kinds[kind < SP__GPU_COPY_KINDS ? kind : SP__GPU_COPY_KINDS - 1];
}

const char *sp__gpu_memory_kind_name(unsigned kind)
{
    return memory_kinds[kind < SP__GPU_MEMORY_KINDS ? kind : SP__GPU_MEMORY_KINDS - 1];
}

static unsigned parse(const char *s, const char *const *names, unsigned count)
{
    for (unsigned i = 0; s && i < count; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return count - 1;
}

unsigned sp__gpu_copy_kind_parse(const char *s) { return parse(s, copy_kinds, SP__GPU_COPY_KINDS); }

unsigned sp__gpu_memory_kind_parse(const char *s) { return parse(s, memory_kinds, SP__GPU_MEMORY_KINDS); }
