# ring_account: exact loss accounting under pressure, against an
# independent count.  fhook-ring (a second consumer, written from
# docs/ring-protocol.md) arms two probes on fhook_testmod's functions with
# 4 KiB rings and reads slowly while every CPU runs "mix N": task-context
# calls with hard-irq and softirq timers and self-sent NMIs nesting on top
# (records from each context must be read).  For each CPU and
# probe: records read + drops reported (LOST records' per-probe counts, the
# rest from the stats area) + missed == the calls fhook_testmod counted;
# read == written; hits == written + dropped; seq_next == written + dropped;
# sequence numbers unique; both probes' drops reported in band.  Then the
# same with direct probes (FHOOK_PROBE_DIRECT), and with kprobes at the
# functions' entries storing their argument twice ($arg1, %di), which must
# be the one of the call's context (fhook_testmod passes 1 in hard irqs, 2
# in softirqs, 3 in NMIs): on x86-64 the assembly recorder writes those as
# FHOOK_REC_FN_KPROBE records, and FHOOK_REC_KPROBE records where it
# leaves a hit to C.
. /fhook/lib.sh

load_fhook
load_workmod
run_checks $D/a.out fhook-ring account "$(pick 500000 100000)"
lines=$(grep -c '^# cpu' $D/a.out)
checks=$CHECKS
# the same through direct probes: on x86-64 the assembly recorder
# (tramp.S, fhook_fnrec_common) writes their records
direct=
if has_feature direct; then
	run_checks $D/d.out fhook-ring account "$(pick 500000 100000)" direct
	checks=$((checks + CHECKS))
	direct=", direct probes too"
fi
run_checks $D/k.out fhook-ring account "$(pick 200000 50000)" kprobe
checks=$((checks + CHECKS))
log "$(grep 'FN_KPROBE' $D/k.out | tr '\n' '|')"
pass "$checks checks, $lines cpu x probe lines$direct, kprobes too"
