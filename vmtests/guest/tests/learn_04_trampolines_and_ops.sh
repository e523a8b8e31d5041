# learn_04_trampolines_and_ops: the run-marked commands of
# docs/learn/04-trampolines-and-ops.md (vmtests/guest/learn.sh).
. /fhook/lib.sh
. /fhook/learn.sh

load_fhook
learn_lesson 04-trampolines-and-ops
