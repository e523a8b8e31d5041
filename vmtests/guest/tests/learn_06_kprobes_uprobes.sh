# learn_06_kprobes_uprobes: the run-marked commands of
# docs/learn/06-kprobes-uprobes.md (vmtests/guest/learn.sh).
. /fhook/lib.sh
. /fhook/learn.sh

load_fhook
learn_lesson 06-kprobes-uprobes
