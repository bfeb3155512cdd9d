/* quickstart.c: the README's C example, complete. A toy training loop marks
 * its data loading, forward and backward phases; steps [10, 20) are recorded
 * into ./log as a TensorBoard trace, and paddle's summary tables are printed
 * at the end. next_batch, forward and backward stand in for a real loader
 * and model. `make test` runs it (ctest example_quickstart_c). */
#include <stepprof/stepprof.h>

#include <stdio.h>

enum { BATCH = 32, FEATURES = 4096 };
typedef struct batch { int size; float x[FEATURES]; } batch;

static void next_batch(batch *b, int step)
{
    b->size = BATCH;
    for (int i = 0; i < FEATURES; i++) b->x[i] = (float)((step * 31 + i) % 17) / 17.0f;
}

static float forward(const batch *b)
{
    float loss = 0.0f;
    for (int i = 0; i < FEATURES; i++) loss += b->x[i] * b->x[i];
    return loss / FEATURES;
}

static void backward(batch *b, float loss)
{
    for (int i = 0; i < FEATURES; i++) b->x[i] -= 0.01f * loss * b->x[i];
}

int main(void)
{
    sp_options o;
    sp_options_init(&o);
    sp_scheduler_range(&o.scheduler, 10, 20);                 /* record steps [10, 20) */
    sp_handler_tensorboard(&o.on_trace_ready, "./log", NULL, false);
    sp_profiler *prof;
    if (sp_profiler_create(&o, &prof) != SP_OK) { fprintf(stderr, "%s\n", sp_last_error()); return 1; }
    sp_profiler_start(prof);
    batch b;
    float loss = 0.0f;
    for (int step = 0; step < 30; step++) {
        sp_range_begin(SP_EVENT_DATALOADER, "DataLoader"); next_batch(&b, step); sp_range_end();
        { SP_SCOPE(SP_EVENT_FORWARD, "forward"); loss = forward(&b); }   /* closed at block end */
        sp_range_begin(SP_EVENT_BACKWARD, "backward"); backward(&b, loss); sp_range_end();
        sp_profiler_step(prof, b.size);                          /* once per iteration */
    }
    if (sp_profiler_stop(prof) != SP_OK) {                    /* waits until the trace is written */
        fprintf(stderr, "%s\n", sp_last_error());
        sp_profiler_destroy(prof);
        return 1;
    }
    sp_result_summary(sp_profiler_result(prof), NULL, stdout);  /* paddle's summary tables */
    printf("loss %.4f\ntrace: %s\n", (double)loss, sp_profiler_trace_path(prof));
    sp_profiler_destroy(prof);
    return 0;
}
