/* paddle_pb.h: Profiler._add_paddle_pb (paddle_pb.c). */
#ifndef STEPPROF_PY_PADDLE_PB_H
#define STEPPROF_PY_PADDLE_PB_H

#include "core.h"

/* _add_paddle_pb(fd, event_map, mem_map) for prof: reads the paddle .pb in
 * the open file fd (from its start; fd stays open) and adds its host events,
 * less ProfileStep, to the span being recorded, and, when mem_map is not
 * None, its memory events. event_map / mem_map: bytes, paddle's type value
 * -> stepprof's (0xff: none). Returns True when added, False when no span
 * records now; raises (ValueError for a file that is no valid .pb, OSError,
 * MemoryError) with nothing added. Needs the GIL. */
PyObject *spx_add_paddle_pb(sp_profiler *prof, PyObject *args);

#endif
