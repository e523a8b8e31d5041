# learn_03_dynamic_ftrace: the run-marked commands of
# docs/learn/03-dynamic-ftrace.md (vmtests/guest/learn.sh).
. /fhook/lib.sh
. /fhook/learn.sh

load_fhook
learn_lesson 03-dynamic-ftrace
