// Hist triggers: the language, the table and the kernel's hist file format
// (the format strings of kernel/trace/trace_events_hist.c).
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include <fhook/core/error.hpp>
#include <fhook/output/flamegraph.hpp>
#include <fhook/output/hist_format.hpp>
#include <fhook/probe/hist.hpp>
#include <fhook/probe/probe.hpp>

namespace fhook {
namespace {

KprobeDef vfs_read_def() {
    return parse_kprobe("p:fh/vr vfs_read count=%dx:u64 fd=%di:s32 flags=%si:x32",
                        [](std::string_view) { return std::nullopt; });
}

// An event of vfs_read_def() by `pid`/`comm` with count and fd
Event event(const KprobeDef& def, std::uint32_t pid, const char* comm, std::uint64_t count,
            std::int32_t fd = 3) {
    Event ev;
    ev.type = EventType::Kprobe;
    ev.pid = ev.tgid = pid;
    ev.comm = comm;
    ev.cpu = 1;
    ev.data.assign(def.data_size, 0);
    std::memcpy(ev.data.data() + def.fields[0].offset, &count, 8);
    std::memcpy(ev.data.data() + def.fields[1].offset, &fd, 4);
    return ev;
}

HistSpec resolved(std::string_view trigger, const KprobeDef* def) {
    HistSpec spec = parse_hist_trigger(trigger);
    resolve_hist_fields(spec, def);
    return spec;
}

std::string error_of(std::string_view trigger, const KprobeDef* def) {
    try {
        resolved(trigger, def);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

TEST(HistTrigger, ParsesAsTheKernelAndPrintsTheTriggerBack) {
    const KprobeDef def = vfs_read_def();
    // aliases, hitcount among the values, a filter, size rounded up
    HistSpec s = resolved("hist:key=common_pid.execname,count.log2:values=hitcount,count:"
                          "sort=count.descending,hitcount:size=200 if count > 1",
                          &def);
    EXPECT_EQ(s.keys.size(), 2u);
    EXPECT_EQ(s.vals.size(), 1u) << "hitcount is always there";
    EXPECT_EQ(s.size, 256u);
    EXPECT_EQ(s.filter, "count > 1");
    EXPECT_EQ(hist_trigger_info(s), "hist:keys=common_pid.execname,count.log2:vals=hitcount,count:"
                                    "sort=count.descending,hitcount:size=256 if count > 1")
        << "sort= names the value count, the first field of that name (values come first)";
    // without hist:, default sort and size; buckets
    s = resolved("keys=count.buckets=100", &def);
    EXPECT_EQ(hist_trigger_info(s), "hist:keys=count.buckets=100:vals=hitcount:sort=hitcount:"
                                    "size=2048");
    // a function probe's fields
    s = resolved("keys=parent_ip.sym,cpu", nullptr);
    EXPECT_EQ(s.keys[0].source, HistSource::ParentIp);
    EXPECT_EQ(s.keys[1].source, HistSource::Cpu);
}

TEST(HistTrigger, BadInputNamesTheToken) {
    const KprobeDef def = vfs_read_def();
    EXPECT_NE(error_of("keys=bogus", &def).find("Couldn't find field 'bogus'"), std::string::npos);
    EXPECT_NE(error_of("keys=count.foo", &def).find("Invalid field modifier: 'count.foo'"),
              std::string::npos);
    EXPECT_NE(error_of("vals=count", &def).find("no keys="), std::string::npos);
    EXPECT_NE(error_of("keys=count:sort=fd", &def).find("Sort field must be a key or a val: 'fd'"),
              std::string::npos);
    EXPECT_NE(error_of("keys=count:sort=count.log2", &def).find("Invalid sort modifier"),
              std::string::npos);
    EXPECT_NE(error_of("keys=count:sort=count,fd,hitcount", &def).find("Too many sort fields"),
              std::string::npos);
    EXPECT_NE(error_of("keys=count,fd,flags,comm", &def).find("too many keys"), std::string::npos);
    EXPECT_NE(error_of("keys=count:vals=fd,flags,count", &def).find("too many values"),
              std::string::npos);
    EXPECT_NE(error_of("keys=count:size=64", &def).find("128 to 131072"), std::string::npos);
    EXPECT_NE(error_of("keys=count:size=lots", &def).find("size=lots"), std::string::npos);
    EXPECT_NE(error_of("keys=fd.execname", &def).find("execname is for common_pid"),
              std::string::npos);
    EXPECT_NE(error_of("keys=count:vals=comm", &def).find("'comm' is not a number"),
              std::string::npos);
    EXPECT_NE(error_of("keys=count:vals=count.log2", &def).find("Invalid field modifier"),
              std::string::npos);
    EXPECT_NE(error_of("keys=count:pause", &def).find("'pause'"), std::string::npos);
    EXPECT_NE(error_of("keys=count:onmax(count).save(fd)", &def).find("not a part"),
              std::string::npos);
    EXPECT_NE(error_of("keys=count:x=fd", &def).find("variables"), std::string::npos);
    EXPECT_NE(error_of("keys=count iff fd", &def).find("starts with 'if'"), std::string::npos);
    EXPECT_NE(error_of("keys=", &def).find("Empty assignment"), std::string::npos);
    EXPECT_NE(error_of("keys=count.buckets=0", &def).find("bucket size"), std::string::npos);
}

TEST(HistTable, CountsSumsAndPrintsTheKernelsFormat) {
    const KprobeDef def = vfs_read_def();
    HistTable t(resolved("keys=common_pid.execname:vals=count:sort=count.descending", &def));
    t.add(event(def, 412, "journald", 1000), &def);
    t.add(event(def, 412, "renamed", 56), &def); // the name of the entry's first event stays
    t.add(event(def, 0, "swapper/1", 7), &def);
    std::string out;
    append_hist_text(t, Ksyms(), out);
    EXPECT_EQ(out,
              "# event histogram\n"
              "#\n"
              "# trigger info: hist:keys=common_pid.execname:vals=hitcount,count:"
              "sort=count.descending:size=2048 [active]\n"
              "#\n"
              "\n"
              "{ common_pid: journald        [       412] } hitcount:          2  count:       "
              "1056\n"
              "{ common_pid: <idle>          [         0] } hitcount:          1  count:       "
              "   7\n"
              "\n"
              "Totals:\n"
              "    Hits: 3\n"
              "    Entries: 2\n"
              "    Dropped: 0\n");
    out.clear();
    append_hist_json(t, Ksyms(), out);
    EXPECT_EQ(out, "{\"key\":{\"common_pid\":{\"pid\":412,\"comm\":\"journald\"}},\"hitcount\":2,"
                   "\"count\":1056}\n"
                   "{\"key\":{\"common_pid\":{\"pid\":0,\"comm\":\"<idle>\"}},\"hitcount\":1,"
                   "\"count\":7}\n"
                   "{\"totals\":{\"hits\":3,\"entries\":2,\"dropped\":0}}\n");
}

TEST(HistTable, KeyKindsInTheKernelsWords) {
    const KprobeDef def = vfs_read_def();
    const auto line = [&](std::string_view trigger, const Event& ev) {
        HistTable t(resolved(trigger, &def));
        t.add(ev, &def);
        std::string out;
        append_hist_text(t,
                         Ksyms::parse("ffffffff812a0000 T vfs_read\n"
                                      "ffffffff812a0400 T ksys_read\n"),
                         out);
        const auto b = out.find("\n{ ");
        return out.substr(b + 1, out.find('\n', b + 1) - b - 1);
    };
    Event ev = event(def, 7, "cat", 5, -2);
    EXPECT_EQ(line("keys=count.log2", ev), "{ count: ~ 2^3  } hitcount:          1");
    EXPECT_EQ(line("keys=count.buckets=4", ev), "{ count: ~ 4-7 } hitcount:          1");
    EXPECT_EQ(line("keys=fd", ev), "{ fd: 18446744073709551614 } hitcount:          1")
        << "signed fields print unsigned, as the kernel's %10llu";
    EXPECT_EQ(line("keys=fd.hex", ev), "{ fd: fffffffffffffffe } hitcount:          1");
    EXPECT_EQ(line("keys=comm,count", ev),
              "{ comm: cat                                               , count:          5 } "
              "hitcount:          1");
    const std::uint64_t addr = 0xffffffff812a0010;
    std::memcpy(ev.data.data() + def.fields[0].offset, &addr, 8);
    EXPECT_EQ(line("keys=count.sym", ev),
              "{ count: [ffffffff812a0010] vfs_read                                      } "
              "hitcount:          1");
    EXPECT_EQ(line("keys=count.sym-offset", ev), "{ count: [ffffffff812a0010] vfs_read+0x10/0x400" +
                                                     std::string(55 - 19, ' ') +
                                                     " } hitcount:          1");
    EXPECT_EQ(line("keys=count:vals=flags.hex", ev),
              "{ count: 18446744071581597712 } hitcount:          1  flags:          0");
}

TEST(HistTable, StacksPrintAFrameALine) {
    HistTable t(resolved("keys=stacktrace", nullptr));
    Event ev;
    ev.stack = {0xffffffff812a0004, 0xffffffff812a0433, 0};
    t.add(ev, nullptr);
    t.add(ev, nullptr);
    std::string out;
    append_hist_text(t, Ksyms::parse("ffffffff812a0000 T vfs_read\nffffffff812a0400 T ksys_read\n"),
                     out);
    EXPECT_NE(out.find("\n{ stacktrace:\n"
                       "         vfs_read+0x4/0x400\n"
                       "         ksys_read+0x33/0x0\n"
                       "} hitcount:          2\n"),
              std::string::npos)
        << out;
}

TEST(HistTable, AFullTableDropsNewKeysAsTheKernelDoes) {
    const KprobeDef def = vfs_read_def();
    HistTable t(resolved("keys=count:size=128", &def));
    for (std::uint64_t i = 0; i < 200; i++) {
        t.add(event(def, 1, "w", i), &def);
        t.add(event(def, 1, "w", i), &def); // old keys still count
    }
    EXPECT_EQ(t.sorted().size(), 128u);
    EXPECT_EQ(t.hits(), 256u) << "hits: events that found or made an entry";
    EXPECT_EQ(t.dropped(), 144u) << "entries + dropped events == events";
}

TEST(HistTable, SortsAsAskedTiesByKey) {
    const KprobeDef def = vfs_read_def();
    HistTable t(resolved("keys=fd:vals=count:sort=hitcount.descending,count", &def));
    for (int fd : {5, 4, 4, 3, 3, 2}) {
        t.add(event(def, 1, "w", static_cast<std::uint64_t>(10 - fd), fd), &def);
    }
    std::vector<std::uint64_t> order;
    for (const auto& e : t.sorted()) {
        order.push_back(std::get<std::uint64_t>(e.key[0]));
    }
    // hitcount 2: fd 4 (count 12) before fd 3 (14); hitcount 1: fd 5 (5), fd 2 (8)
    EXPECT_EQ(order, (std::vector<std::uint64_t>{4, 3, 5, 2}));
    // the default: hitcount ascending, the largest last
    HistTable d(resolved("keys=fd", &def));
    for (int fd : {9, 9, 9, 1}) {
        d.add(event(def, 1, "w", 1, fd), &def);
    }
    EXPECT_EQ(std::get<std::uint64_t>(d.sorted().back().key[0]), 9u);
    // signed keys sort signed
    HistTable s(resolved("keys=fd:sort=fd", &def));
    for (int fd : {3, -100}) {
        s.add(event(def, 1, "w", 1, fd), &def);
    }
    EXPECT_EQ(static_cast<std::int64_t>(std::get<std::uint64_t>(s.sorted().front().key[0])), -100);
}

} // namespace
} // namespace fhook

namespace fhook {
namespace {

// What HIST_SET gets for a trigger, and the module's entries read back
TEST(ModuleHist, StacksAndTablesInTheModulesLayout) {
    const KprobeDef def = vfs_read_def();
    const HistSpec spec = resolved("keys=common_pid,stacktrace:vals=count", &def);
    // stacks only when the module takes them
    EXPECT_FALSE(module_hist(spec, &def, 7, 0, FHOOK_FEAT_HIST_USTACK).has_value());
    const auto set = module_hist(spec, &def, 7, 2, FHOOK_FEAT_HIST_STACK);
    ASSERT_TRUE(set.has_value());
    EXPECT_EQ(set->probe_id, 7u);
    EXPECT_EQ(set->table, 2u);
    ASSERT_EQ(set->nr_keys, 2u);
    EXPECT_EQ(set->keys[0].src, FHOOK_HIST_SRC_PID);
    EXPECT_EQ(set->keys[1].src, FHOOK_HIST_SRC_STACK);
    EXPECT_EQ(set->keys[1].op, FHOOK_HIST_OP_NONE);
    ASSERT_EQ(set->nr_vals, 1u);
    EXPECT_EQ(set->vals[0].src, FHOOK_HIST_SRC_DATA);
    // a return probe's stack is not the module's to take
    const KprobeDef ret = parse_kprobe("r:fh/vrr vfs_read ret=$retval:s64",
                                       [](std::string_view) { return std::nullopt; });
    EXPECT_FALSE(module_hist(resolved("keys=stacktrace", &ret), &ret, 1, 0, FHOOK_FEAT_HIST_STACK)
                     .has_value());

    // one entry: pid 42, a stack of 3 frames, 5 hits, a sum of 300
    const std::uint32_t key_size = 8 + 8 * FHOOK_HIST_STACK_DEPTH;
    const std::uint32_t elt_size = key_size + 8 * (1 + FHOOK_HIST_MAX_VALS) + 16;
    std::vector<std::uint8_t> elt(elt_size, 0);
    const std::uint64_t words[] = {42, 0xffffffff81000010, 0xffffffff81000020, 0xffffffff81000030};
    std::memcpy(elt.data(), words, sizeof(words));
    const std::uint64_t hits = 5, sum = 300;
    std::memcpy(elt.data() + key_size, &hits, 8);
    std::memcpy(elt.data() + key_size + 8, &sum, 8);
    const std::vector<HistEntry> got = module_hist_entries(spec, elt.data(), 1, key_size, elt_size);
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(got[0].key.size(), 2u);
    EXPECT_EQ(std::get<std::uint64_t>(got[0].key[0]), 42u);
    EXPECT_EQ(std::get<std::vector<std::uint64_t>>(got[0].key[1]),
              (std::vector<std::uint64_t>{words[1], words[2], words[3]}));
    EXPECT_EQ(got[0].hitcount, 5u);
    EXPECT_EQ(got[0].sums, std::vector<std::uint64_t>{300});
}

// ustacktrace: the tgid and the user frames, any probe; named, then the
// same stack in two processes is one entry
TEST(ModuleHist, UserStacksNamedAndMerged) {
    const KprobeDef ret = parse_kprobe("r:fh/vrr vfs_read ret=$retval:s64",
                                       [](std::string_view) { return std::nullopt; });
    const HistSpec spec = resolved("keys=ustacktrace", &ret);
    EXPECT_FALSE(module_hist(spec, &ret, 1, 0, FHOOK_FEAT_HIST_STACK).has_value());
    const auto set = module_hist(spec, &ret, 1, 0, FHOOK_FEAT_HIST_USTACK);
    ASSERT_TRUE(set.has_value());
    EXPECT_EQ(set->keys[0].src, FHOOK_HIST_SRC_USTACK);
    EXPECT_THROW(resolved("keys=ustacktrace.hex", &ret), Error);
    EXPECT_THROW(resolved("keys=common_pid:vals=ustacktrace", &ret), Error);

    // two entries: processes that do not exist, the same two frames
    const std::uint32_t key_size = 8 * (1 + FHOOK_HIST_STACK_DEPTH);
    const std::uint32_t elt_size = key_size + 8 * (1 + FHOOK_HIST_MAX_VALS) + 16;
    std::vector<std::uint8_t> elts(2 * elt_size, 0);
    for (std::uint64_t i = 0; i < 2; i++) {
        const std::uint64_t words[] = {0x7ffffff0 + i, 0x401000, 0x401100};
        const std::uint64_t hits = 3 + i;
        std::memcpy(elts.data() + i * elt_size, words, sizeof(words));
        std::memcpy(elts.data() + i * elt_size + key_size, &hits, 8);
    }
    std::vector<HistEntry> got = module_hist_entries(spec, elts.data(), 2, key_size, elt_size);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(std::get<std::vector<std::uint64_t>>(got[1].key[0]),
              (std::vector<std::uint64_t>{0x7ffffff1, 0x401000, 0x401100}));
    HistTable table(spec);
    table.set(std::move(got), 7, 0);
    UserFrames frames;
    const HistTable named = name_user_stacks(table, &ret, frames);
    const std::vector<HistEntry> entries = named.sorted();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].hitcount, 7u);
    EXPECT_EQ(user_stack_frames(entries[0].key[0]),
              (std::vector<std::string>{"0x401000", "0x401100"}));
    std::string text;
    append_hist_text(named, Ksyms(), text);
    EXPECT_NE(
        text.find("{ ustacktrace:\n         0x401000\n         0x401100\n} hitcount:          7\n"),
        std::string::npos)
        << text;
    std::string folded;
    append_folded(folded_stacks(named, Ksyms()), folded);
    EXPECT_EQ(folded, "0x401100;0x401000 7\n");
}

} // namespace
} // namespace fhook
