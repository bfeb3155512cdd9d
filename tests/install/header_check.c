/* header_check.c: a user's translation unit that includes the public header
 * and calls each of its inline functions and macros, compiled by
 * header_check.cmake as C11 and as C++17 with -Wall -Wextra -Wconversion
 * -Wsign-conversion -pedantic -Werror: the header must not warn in code
 * built with stricter flags than stepprof's own. */
#include <stepprof/stepprof.h>

#include <stdio.h>

static int loop(void)
{
    sp_range_begin(SP_EVENT_FORWARD, "forward");
    sp_range_begin_copy(SP_EVENT_USER_DEFINED, "user", 4);
    sp_range_end();
    sp_range_end();
    sp_instant(SP_EVENT_OPERATOR, "mark");
    sp_counter("queue_depth", 3.0);
    sp_mem_info info = {0, 64, 64, 64, 64, 64};
    sp_memory_event(SP_MEM_ALLOCATE, "Place(cpu)", &info);
    {
        SP_SCOPE(SP_EVENT_BACKWARD, "backward");
    }
    return sp_is_recording();
}

int main(void)
{
    printf("%s %s %d\n", SP_VERSION_STRING, sp_status_str(SP_EINVAL), loop());
    return 0;
}
