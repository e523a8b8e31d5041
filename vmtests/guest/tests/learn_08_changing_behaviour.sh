# learn_08_changing_behaviour: the run-marked commands of
# docs/learn/08-changing-behaviour.md (vmtests/guest/learn.sh).
. /fhook/lib.sh
. /fhook/learn.sh

load_fhook
learn_lesson 08-changing-behaviour
