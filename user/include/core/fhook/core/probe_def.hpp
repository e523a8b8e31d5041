// The probe definitions a session adds: fetch types, fields and the
// compiled programs of kprobes, kretprobes, uprobes and tracepoints
// (parsed by fhook/probe.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <fhook_abi.h>

namespace fhook {

// TYPE of a fetch argument.
struct FetchType {
    // FixedString: a char array inside the record (tracepoint fields)
    enum class Kind { Unsigned, Signed, Hex, Char, String, UString, Symbol, Bitfield, FixedString };
    Kind kind = Kind::Hex;
    unsigned size = 8;     // bytes of one element (container for bitfields); 4 for strings
    unsigned count = 0;    // array elements, 0 = scalar
    unsigned bf_width = 0; // Bitfield
    unsigned bf_offset = 0;
    std::string name; // as written ("x64", "string", "b4@2/32", "u8[4]")

    bool is_string() const noexcept { return kind == Kind::String || kind == Kind::UString; }
};

// One NAME=FETCHARG[:TYPE] of a probe.
struct ProbeField {
    std::string name;
    std::string text; // the FETCHARG[:TYPE] as given
    FetchType type;
    std::uint16_t offset = 0; // in the record's data area
    std::uint32_t store = 0;  // index of its store in the program (fault bit)
    bool at_entry = false;    // kretprobe: fetched when the function is entered
    std::string raw;          // FETCHARG in plain tracefs syntax (no BTF names)
};

struct KprobeDef {
    bool is_return = false;
    bool is_tracepoint = false; // t:SUBSYS:EVENT: fields from the event's format
    std::uint64_t tp_id = 0;
    std::string tp_format;  // the event's format file as read (record files keep it)
    bool is_uprobe = false; // PATH:SYMBOL[+OFFS] | PATH:0xOFFSET
    std::string path;       // uprobes: the binary (absolute); offset is a file offset
    std::string group = "kprobes";
    std::string event;
    std::string symbol; // empty when probing an address
    std::uint64_t offset = 0;
    std::uint64_t addr = 0;
    std::uint32_t maxactive = 0;
    std::vector<ProbeField> fields;
    std::vector<fhook_insn> insns; // entry part first (kretprobes)
    std::uint32_t entry_len = 0;
    std::uint32_t data_size = 0;
    std::string text;             // the definition as given
    std::string filter;           // the "if EXPR" / --filter expression, "" = none
    std::vector<fhook_insn> pred; // its predicate program
    bool stack = false;           // record a stack trace with each event
    // The definition with every name resolved (BTF members to offsets,
    // binary symbols to file offsets, @SYM to addresses): what record files
    // keep, parsed again without BTF, the binary or kallsyms.
    std::string canonical;

    // syscalls:sys_enter_* / sys_exit_*: events the kernel makes and prints
    // itself (kernel/trace/trace_syscalls.c), not from a TP_printk
    bool is_syscall_event() const {
        return is_tracepoint && group == "syscalls" &&
               (event.starts_with("sys_enter_") || event.starts_with("sys_exit_"));
    }
};

} // namespace fhook
