# learn_10_ftrace_perf_ebpf: the run-marked commands of
# docs/learn/10-ftrace-perf-ebpf.md (vmtests/guest/learn.sh).
. /fhook/lib.sh
. /fhook/learn.sh

load_fhook
learn_lesson 10-ftrace-perf-ebpf
