# learn_09_tracing_on_and_printk: the run-marked commands of
# docs/learn/09-tracing-on-and-printk.md (vmtests/guest/learn.sh).
. /fhook/lib.sh
. /fhook/learn.sh

load_fhook
learn_lesson 09-tracing-on-and-printk
