// A histogram (fhook/hist.hpp) as the kernel's tracefs `hist` file prints
// it (kernel/trace/trace_events_hist.c: hist_show()), and as JSON.
#pragma once

#include <string>

#include <fhook/output/format.hpp>
#include <fhook/probe/hist.hpp>
#include <fhook/sys/ksyms.hpp>

namespace fhook {

// `table` with its ustacktrace keys named: the tgid and addresses become
// the frames' names, a line each ("function+0xoff (binary)", "0x..." when
// unknown), by `frames` (the process's mappings while it lives, else the
// binary of uprobe `def`, placed by where the probe hit: the first frame
// of an entry uprobe's stacks).  Entries whose keys are then the same (one
// program's stack in several processes) are added up.  Tables without a
// ustacktrace key come back as they are.
HistTable name_user_stacks(const HistTable& table, const KprobeDef* def, UserFrames& frames);

// Reads the mappings of the processes in `table`'s ustacktrace keys now,
// while they live, so that name_user_stacks() can name their frames
// after they exit.
void remember_user_stacks(const HistTable& table, UserFrames& frames);

// A ustacktrace key part's frames: the lines name_user_stacks() made, else
// the addresses after the tgid ("0x...").
std::vector<std::string> user_stack_frames(const HistKeyPart& part);

// "# event histogram" and the trigger, an entry per line in the spec's
// sort order, the Totals block: byte for byte what the kernel prints for
// the same entries (entries with equal sort values in key order: the
// kernel's heapsort leaves them in an order of its own).
void append_hist_text(const HistTable& table, const Ksyms& ksyms, std::string& out);

// One JSON object per entry ({"key":{...},"hitcount":N,VAL:N...}) in the
// same order, then {"totals":{"hits":N,"entries":N,"dropped":N}}; a line
// each.
void append_hist_json(const HistTable& table, const Ksyms& ksyms, std::string& out);

// An entry's key as metric labels (output/metrics.hpp), a label per key
// part named after its field: numbers in decimal (signed where the field
// is), strings as they are, symbols by name, stacks as their frames joined
// by ';' (folded-stack style), .execname as comm (and pid), .log2 as the
// power ("2^N"), .buckets as "FROM-TO", .hex in hex.  Without `pids` the
// parts that name a task (common_pid, a pid or tgid field, .execname's
// pid) are left out: summing their entries is the caller's.
std::vector<std::pair<std::string, std::string>>
hist_key_labels(const HistSpec& spec, const HistEntry& entry, const Ksyms& ksyms, bool pids);

} // namespace fhook
