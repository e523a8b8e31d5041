# learn_11_latency_tracers: the run-marked commands of
# docs/learn/11-latency-tracers.md (vmtests/guest/learn.sh).
. /fhook/lib.sh
. /fhook/learn.sh

load_fhook
learn_lesson 11-latency-tracers
