# learn_01_first_trace: the run-marked commands of docs/learn/01-first-trace.md
# (vmtests/guest/learn.sh).
. /fhook/lib.sh
. /fhook/learn.sh

load_fhook
learn_lesson 01-first-trace
