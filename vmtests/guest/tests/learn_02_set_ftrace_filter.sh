# learn_02_set_ftrace_filter: the run-marked commands of
# docs/learn/02-set-ftrace-filter.md (vmtests/guest/learn.sh).
. /fhook/lib.sh
. /fhook/learn.sh

load_fhook
learn_lesson 02-set-ftrace-filter
