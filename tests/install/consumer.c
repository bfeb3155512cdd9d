/* consumer.c: a program built against an installed stepprof, as a user
 * would build one; it records one span and exports it. */
#include <stepprof/stepprof.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    sp_profiler *prof;
    if (sp_profiler_create(&o, &prof) != SP_OK) return 1;
    sp_profiler_start(prof);
    sp_range_begin(SP_EVENT_FORWARD, "forward");
    sp_range_end();
    sp_profiler_stop(prof);
    sp_status s = sp_profiler_export(prof, argv[1], SP_FORMAT_AUTO);
    sp_profiler_destroy(prof);
    printf("consumer: %s\n", s == SP_OK ? "ok" : sp_last_error());
    return s == SP_OK ? 0 : 1;
}
