# learn_07_events_and_tracepoints: the run-marked commands of
# docs/learn/07-events-and-tracepoints.md (vmtests/guest/learn.sh).
. /fhook/lib.sh
. /fhook/learn.sh

load_fhook
learn_lesson 07-events-and-tracepoints
