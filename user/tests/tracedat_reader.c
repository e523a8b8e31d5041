// SPDX-License-Identifier: GPL-2.0
/*
 * tracedat_reader FILE: the events of a trace.dat as libtracecmd reads them,
 * one line each: "CPU TS COMM-PID EVENT: INFO" (TS in ns), and
 * "CPU:N [LOST M EVENTS]" where the ring buffer pages say events were
 * missed.  The independent reader of fhook's trace.dat writer
 * (user/tests/cli/tracedat.sh); plugins are not loaded, so every event is
 * printed from the format the file carries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <trace-cmd.h>

static int show(struct tracecmd_input* handle, struct tep_record* record, int cpu, void* data) {
    struct tep_handle* tep = tracecmd_get_tep(handle);
    struct trace_seq s;

    (void)data;
    if (record->missed_events > 0)
        printf("CPU:%d [LOST %lld EVENTS]\n", cpu, record->missed_events);
    trace_seq_init(&s);
    trace_seq_printf(&s, "%d %llu ", cpu, record->ts);
    tep_print_event(tep, &s, record, "%s-%d %s: %s", TEP_PRINT_COMM, TEP_PRINT_PID, TEP_PRINT_NAME,
                    TEP_PRINT_INFO);
    trace_seq_terminate(&s);
    printf("%s\n", s.buffer);
    trace_seq_destroy(&s);
    return 0;
}

int main(int argc, char** argv) {
    struct tracecmd_input* handle;

    if (argc != 2) {
        fprintf(stderr, "usage: tracedat_reader FILE\n");
        return 2;
    }
    handle =
        tracecmd_open(argv[1], TRACECMD_FL_LOAD_NO_PLUGINS | TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS);
    if (!handle) {
        fprintf(stderr, "tracedat_reader: libtracecmd cannot open %s\n", argv[1]);
        return 1;
    }
    tracecmd_iterate_events(handle, NULL, 0, show, NULL);
    tracecmd_close(handle);
    return 0;
}
