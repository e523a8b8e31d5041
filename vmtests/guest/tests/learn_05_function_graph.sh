# learn_05_function_graph: the run-marked commands of
# docs/learn/05-function-graph.md (vmtests/guest/learn.sh).
. /fhook/lib.sh
. /fhook/learn.sh

load_fhook
learn_lesson 05-function-graph
