// kprobe definitions: parser, fetch-program compiler, field rendering.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <fhook/core/error.hpp>
#include <fhook/output/fields.hpp>
#include <fhook/output/format.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/ring/event.hpp>
#include <fhook/sys/ksyms.hpp>

namespace fhook {
namespace {

std::optional<std::uint64_t> resolve(std::string_view name) {
    if (name == "jiffies_64") {
        return 0xffffffff82a05000ULL;
    }
    return std::nullopt;
}

KprobeDef parse(std::string_view text) {
    return parse_kprobe(text, resolve);
}

// The Usage Error's message, or "" when `text` parses.
std::string error_of(std::string_view text) {
    try {
        parse(text);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Invalid) << text;
        return e.what();
    }
    return "";
}

struct Insn {
    std::uint8_t op, size;
    std::uint16_t dst;
    std::uint32_t arg;
    std::int64_t imm;
    bool operator==(const Insn&) const = default;
};

std::vector<Insn> insns(const KprobeDef& d) {
    std::vector<Insn> out;
    for (const auto& i : d.insns) {
        out.push_back(Insn{i.op, i.size, i.dst, i.arg, i.imm});
    }
    return out;
}

TEST(ProbeDefinition, Recognised) {
    EXPECT_TRUE(is_probe_definition("p:x vfs_read"));
    EXPECT_TRUE(is_probe_definition("p vfs_read"));
    EXPECT_TRUE(is_probe_definition("r:grp/x vfs_read"));
    EXPECT_TRUE(is_probe_definition("r10:x vfs_read"));
    EXPECT_TRUE(is_probe_definition("r vfs_read"));
    EXPECT_FALSE(is_probe_definition("vfs_*"));
    EXPECT_FALSE(is_probe_definition("pid_vnr"));
    EXPECT_FALSE(is_probe_definition("r"));
    EXPECT_FALSE(is_probe_definition("p10:x vfs_read")); // only r takes a count
    EXPECT_FALSE(is_probe_definition("read_pages"));
}

TEST(ProbeDefinition, NamesLikeTracefs) {
    auto d = parse("p vfs_read+8");
    EXPECT_EQ(d.group, "kprobes");
    EXPECT_EQ(d.event, "p_vfs_read_8");
    EXPECT_EQ(d.symbol, "vfs_read");
    EXPECT_EQ(d.offset, 8U);
    EXPECT_FALSE(d.is_return);
    d = parse("r vfs_read");
    EXPECT_EQ(d.event, "r_vfs_read_0");
    EXPECT_TRUE(d.is_return);
    d = parse("r16:grp/ev vfs_read");
    EXPECT_EQ(d.group, "grp");
    EXPECT_EQ(d.event, "ev");
    EXPECT_EQ(d.maxactive, 16U);
    d = parse("p:ev 0xffffffff81000000");
    EXPECT_EQ(d.addr, 0xffffffff81000000ULL);
    EXPECT_TRUE(d.symbol.empty());
    d = parse("p ext4:ext4_sync_fs+0x10");
    EXPECT_EQ(d.symbol, "ext4:ext4_sync_fs");
    EXPECT_EQ(d.offset, 16U);
    EXPECT_EQ(d.event, "p_ext4_ext4_sync_fs_16");
}

TEST(ProbeCompile, NestedUserExampleString) {
    // the users' example: a string three pointers away from %di
    auto d = parse("p:x f s=+0(+0(+16(%di))):string");
    ASSERT_EQ(d.fields.size(), 1U);
    EXPECT_EQ(d.fields[0].name, "s");
    EXPECT_EQ(d.data_size, 4U);
    const std::vector<Insn> want = {
        {FHOOK_OP_REG, 0, 0, FHOOK_REG_DI, 0},
        {FHOOK_OP_DEREF, 0, 0, 0, 16},
        {FHOOK_OP_DEREF, 0, 0, 0, 0},
        {FHOOK_OP_ST_STRING, 0, 0, FHOOK_MAX_STRING, 0},
    };
    EXPECT_EQ(insns(d), want);
}

TEST(ProbeCompile, LayoutAndStores) {
    auto d = parse("p:x f a=%si:u32 b=+8(%di):s16 c=$stack2 +u4(%dx):x8[3] e=$comm "
                   "g=@jiffies_64+8:u64 h=\\-5:s8");
    ASSERT_EQ(d.fields.size(), 7U);
    EXPECT_EQ(d.fields[3].name, "arg4"); // unnamed: argN by position
    EXPECT_EQ(d.fields[2].type.name, "x64");
    const std::vector<Insn> want = {
        {FHOOK_OP_REG, 0, 0, FHOOK_REG_SI, 0},
        {FHOOK_OP_ST_RAW, 4, 0, 0, 0},
        {FHOOK_OP_REG, 0, 0, FHOOK_REG_DI, 0},
        {FHOOK_OP_ST_MEM, 2, 4, 1, 8},
        {FHOOK_OP_STACK, 0, 0, 2, 0},
        {FHOOK_OP_ST_RAW, 8, 6, 0, 0},
        {FHOOK_OP_REG, 0, 0, FHOOK_REG_DX, 0},
        {FHOOK_OP_ST_UMEM, 1, 14, 3, 4},
        {FHOOK_OP_ST_COMM, 0, 17, 0, 0},
        {FHOOK_OP_IMM, 0, 0, 0, static_cast<std::int64_t>(0xffffffff82a05008ULL)},
        {FHOOK_OP_ST_MEM, 8, 21, 1, 0},
        {FHOOK_OP_IMM, 0, 0, 0, -5},
        {FHOOK_OP_ST_RAW, 1, 29, 0, 0},
    };
    EXPECT_EQ(insns(d), want);
    EXPECT_EQ(d.data_size, 30U);
    for (std::uint32_t i = 0; i < d.fields.size(); i++) {
        EXPECT_EQ(d.fields[i].store, i);
    }
}

TEST(ProbeCompile, ReturnProbeCarriesArgumentsFromEntry) {
    auto d = parse("r:x f ret=$retval:s64 n=$arg2:string d=%di@entry r=%ax");
    EXPECT_EQ(d.entry_len, 4U); // $arg2 string, %di: both at entry
    ASSERT_EQ(d.fields.size(), 4U);
    EXPECT_FALSE(d.fields[0].at_entry);
    EXPECT_TRUE(d.fields[1].at_entry);
    EXPECT_TRUE(d.fields[2].at_entry);
    EXPECT_FALSE(d.fields[3].at_entry);
    // entry fields take the first fault bits, as the module numbers stores
    EXPECT_EQ(d.fields[1].store, 0U);
    EXPECT_EQ(d.fields[2].store, 1U);
    EXPECT_EQ(d.fields[0].store, 2U);
    EXPECT_EQ(d.fields[3].store, 3U);
    EXPECT_EQ(d.insns[0].op, FHOOK_OP_ARG);
    EXPECT_EQ(d.insns[0].arg, 2U);
    EXPECT_EQ(d.insns[4].op, FHOOK_OP_RETVAL);
    auto e = parse("r:x f v=%si:u32@entry");
    EXPECT_TRUE(e.fields[0].at_entry);
}

TEST(ProbeCompile, Bitfield) {
    auto d = parse("p:x f b=+2(%di):b3@4/16");
    EXPECT_EQ(d.fields[0].type.kind, FetchType::Kind::Bitfield);
    EXPECT_EQ(d.fields[0].type.size, 2U);
    EXPECT_EQ(d.insns[1].op, FHOOK_OP_ST_MEM);
    EXPECT_EQ(d.insns[1].size, 2U);
}

// Each CPU's registers as tracefs spells them there; the other CPU's refused.
TEST(ProbeCompile, RegistersOfTheHostCpu) {
    EXPECT_EQ(register_index("x0"), std::optional<std::uint32_t>(FHOOK_REG_X0));
    EXPECT_EQ(register_index("x30"), std::optional<std::uint32_t>(FHOOK_REG_X30));
    EXPECT_EQ(register_index("pstate"), std::optional<std::uint32_t>(FHOOK_REG_PSTATE));
    EXPECT_TRUE(register_of(FHOOK_REG_SP, Arch::Arm64));
    EXPECT_TRUE(register_of(FHOOK_REG_SP, Arch::X86_64));
    EXPECT_TRUE(register_of(FHOOK_REG_X0 + 29, Arch::Arm64));
    EXPECT_FALSE(register_of(FHOOK_REG_X0, Arch::X86_64));
    EXPECT_FALSE(register_of(FHOOK_REG_DI, Arch::Arm64));
    EXPECT_FALSE(register_of(FHOOK_REG_MAX, Arch::Arm64));
    EXPECT_EQ(arch_max_argn(Arch::Arm64), 8u);
    EXPECT_EQ(arch_max_argn(Arch::X86_64), static_cast<std::uint32_t>(FHOOK_MAX_ARGN));
    if (host_arch() == Arch::Arm64) {
        EXPECT_NE(error_of("p:x f a=$arg9").find("on arm64"), std::string::npos);
    } else {
        EXPECT_EQ(parse("p:x f a=$arg9").insns[0].arg, 9u);
    }
    const char* other = host_arch() == Arch::Arm64 ? "p:x f d=%di" : "p:x f d=%x0";
    EXPECT_NE(error_of(other).find("unknown register"), std::string::npos);
    const char* own = host_arch() == Arch::Arm64 ? "p:x f d=%x0 s=%sp" : "p:x f d=%di s=%sp";
    EXPECT_EQ(parse(own).insns[0].arg, host_arch() == Arch::Arm64 ? FHOOK_REG_X0 : FHOOK_REG_DI);
}

TEST(ProbeErrors, NameTheTokenAndWhy) {
    EXPECT_NE(error_of("p:x f d=%foo").find("unknown register '%foo'"), std::string::npos);
    EXPECT_NE(error_of("p:x f d=%di:u7").find("unknown type 'u7'"), std::string::npos);
    EXPECT_NE(error_of("p:x f r=$retval").find("only in return probes"), std::string::npos);
    EXPECT_NE(error_of("p:x f+4 a=$arg1").find("function entry"), std::string::npos);
    EXPECT_NE(error_of("r:x f+4").find("no offset"), std::string::npos);
    EXPECT_NE(error_of("r:x f r=$retval@entry").find("not known at function entry"),
              std::string::npos);
    EXPECT_NE(error_of("p:x f d=%di@entry").find("return probes"), std::string::npos);
    EXPECT_NE(error_of("p:x f d=+0(%di").find("dereference is"), std::string::npos);
    EXPECT_NE(error_of("p:x f d=$nope").find("unknown variable '$nope'"), std::string::npos);
    EXPECT_NE(error_of("p:x f d=@nosuch").find("unknown symbol 'nosuch'"), std::string::npos);
    EXPECT_NE(error_of("p:x f d=%di d=%si").find("used twice"), std::string::npos);
    EXPECT_NE(error_of("p:x f d=+0(%di):string[2]").find("arrays of strings"), std::string::npos);
    EXPECT_NE(error_of("p:x f d=%di:u32[4]").find("needs a dereference"), std::string::npos);
    EXPECT_NE(error_of("p:x f d=%di:u32[0]").find("array length"), std::string::npos);
    EXPECT_NE(error_of("p:9x f").find("bad event name '9x'"), std::string::npos);
    EXPECT_NE(error_of("p:g-1/x f").find("bad group name"), std::string::npos);
    EXPECT_NE(error_of("p:x").find("no place to probe"), std::string::npos);
    EXPECT_NE(error_of("r0:x f").find("MAXACTIVE"), std::string::npos);
    EXPECT_NE(error_of("r5000:x f").find("MAXACTIVE"), std::string::npos);
    EXPECT_NE(error_of("p:x f-4").find("negative"), std::string::npos);
    EXPECT_NE(error_of("p:x f d=$comm:u32").find("$comm is a string"), std::string::npos);
    EXPECT_NE(error_of("p:x f d=+0($comm)").find("cannot be dereferenced"), std::string::npos);
    EXPECT_NE(error_of("p:x f d=%di:b9@0/8").find("bitfield"), std::string::npos);
    EXPECT_NE(error_of("p:x f d=$stack99999").find("$stackN"), std::string::npos);
    EXPECT_NE(error_of("p:x f d=$arg0").find("$argN"), std::string::npos);
    EXPECT_NE(error_of("p:x f d=\\zz").find("bad immediate"), std::string::npos);
    std::string deep = "%di";
    for (int i = 0; i <= FHOOK_MAX_DEREF; i++) {
        deep = "+0(" + deep + ")";
    }
    EXPECT_NE(error_of("p:x f d=" + deep).find("dereferences"), std::string::npos);
    std::string many = "p:x f";
    for (int i = 0; i <= FHOOK_MAX_FIELDS; i++) {
        many += " a" + std::to_string(i) + "=%di";
    }
    EXPECT_NE(error_of(many).find("more than"), std::string::npos);
    EXPECT_NE(error_of("p:x f d=+0(%di):u64[256] e=+0(%di):u64[8]").find("bytes"),
              std::string::npos);
}

// An event carrying `data` as a probe record would.
Event event_with(std::vector<std::uint8_t> data, std::uint64_t faults = 0) {
    Event ev;
    ev.type = EventType::Kprobe;
    ev.data = std::move(data);
    ev.faults = faults;
    return ev;
}

template <typename T>
void put(std::vector<std::uint8_t>& d, std::size_t at, T v) {
    if (d.size() < at + sizeof(T)) {
        d.resize(at + sizeof(T));
    }
    std::memcpy(d.data() + at, &v, sizeof(T));
}

TEST(ProbeRender, ValuesLikeTheKernel) {
    const Ksyms ksyms = Ksyms::parse("ffffffff81000000 T vfs_read\n"
                                     "ffffffff81000170 T vfs_write\n"
                                     "ffffffffc0000000 t mod_fn\t[loop]\n"
                                     "ffffffffc0000040 t mod_next\t[loop]\n");
    NameCache names(ksyms);
    auto d = parse("p:x f u=%di:u32 s=%si:s16 h=%dx:x8 c=%cx:char y=%r8:symbol "
                   "str=+0(%r9):string a=+0(%di):u16[3] b=+0(%di):b3@4/16 m=%ax:symbol");
    std::vector<std::uint8_t> data;
    put<std::uint32_t>(data, 0, 4000000000U);
    put<std::int16_t>(data, 4, -2);
    put<std::uint8_t>(data, 6, 0xab);
    put<char>(data, 7, 'Q');
    put<std::uint64_t>(data, 8, 0xffffffff81000004ULL);
    put<std::uint16_t>(data, 20, 1);
    put<std::uint16_t>(data, 22, 2);
    put<std::uint16_t>(data, 24, 3);
    put<std::uint16_t>(data, 26, 0x5a); // 0b0101'1010: bits 4..6 = 0b101
    put<std::uint64_t>(data, 28, 0xffffffffc0000010ULL);
    // the string after the fixed area (36 bytes): data_loc = len << 16 | offset
    const std::string text = "/etc/passwd";
    put<std::uint32_t>(data, 16, static_cast<std::uint32_t>((text.size() + 1) << 16 | 36));
    data.resize(36);
    data.insert(data.end(), text.begin(), text.end());
    data.push_back(0);
    ASSERT_EQ(d.data_size, 36U);

    std::string out;
    append_probe_fields(d, event_with(data), names, out);
    EXPECT_EQ(out, " u=4000000000 s=-2 h=0xab c='Q' y=vfs_read+0x4/0x170 str=\"/etc/passwd\" "
                   "a={1,2,3} b=5 m=mod_fn+0x10/0x40 [loop]");

    // a string the module cut (FHOOK_LOC_CUT) says so after its quotes
    out.clear();
    put<std::uint32_t>(data, 16,
                       static_cast<std::uint32_t>((text.size() + 1) << 16 | 36) | FHOOK_LOC_CUT);
    append_probe_fields(d, event_with(data), names, out);
    EXPECT_NE(out.find(" str=\"/etc/passwd\"(cut) "), std::string::npos) << out;

    // a faulted field prints (fault); so does a string of length 0
    out.clear();
    put<std::uint32_t>(data, 16, 36U);
    append_probe_fields(d, event_with(data, 1U << 0), names, out);
    EXPECT_NE(out.find(" u=(fault) "), std::string::npos) << out;
    EXPECT_NE(out.find(" str=(fault) "), std::string::npos) << out;

    out.clear();
    append_probe_fields_json(d, event_with(data, 1U << 1), names, out);
    EXPECT_NE(out.find("\"u\":4000000000,\"s\":null,\"h\":\"0xab\""), std::string::npos) << out;
    EXPECT_NE(out.find("\"a\":[1,2,3]"), std::string::npos) << out;
    EXPECT_NE(out.find("\"str\":null"), std::string::npos) << out;
}

TEST(ProbeRender, ShortDataIsNotReadPastItsEnd) {
    const Ksyms ksyms;
    NameCache names(ksyms);
    auto d = parse("p:x f a=%di:u64 s=+0(%si):string");
    std::vector<std::uint8_t> data(4, 0xff); // shorter than the fixed area
    std::string out;
    append_probe_fields(d, event_with(data), names, out);
    EXPECT_EQ(out, " a=(bad) s=(bad)");
    // a data_loc pointing outside the record
    data.assign(12, 0);
    put<std::uint32_t>(data, 8, (100U << 16) | 10U);
    out.clear();
    append_probe_fields(d, event_with(data), names, out);
    EXPECT_EQ(out, " a=0 s=(fault)");
}

TEST(ProbeRender, KernelLineForKprobeAndKretprobe) {
    const Ksyms ksyms = Ksyms::parse("ffffffff81000000 T do_sys_openat2\n"
                                     "ffffffff81000170 T do_sys_open\n"
                                     "ffffffff81000200 T ksys_read\n"
                                     "ffffffff810002f0 T vfs_read\n");
    ProbeTable table;
    table.add(3, parse("p:myprobe do_sys_openat2 dfd=%di:s32"));
    table.add(4, parse("r:myret vfs_read ret=$retval:x64"));
    TextFormatter f(ksyms);
    f.set_probes(&table);

    Event ev = event_with({});
    ev.probe_id = 3;
    ev.comm = "cat";
    ev.pid = 94;
    ev.cpu = 1;
    ev.ts = 2431445123ULL;
    ev.ip = 0xffffffff81000000ULL;
    put<std::int32_t>(ev.data, 0, -100);
    std::string out;
    f.format(ev, out);
    EXPECT_EQ(out, "             cat-94      [001] .....     2.431445: myprobe: "
                   "(do_sys_openat2+0x0/0x170) dfd=-100\n");

    ev.type = EventType::Kretprobe;
    ev.probe_id = 4;
    ev.ip = 0xffffffff810002f0ULL;
    ev.ret_ip = 0xffffffff8100021eULL;
    ev.data.clear();
    put<std::uint64_t>(ev.data, 0, 3);
    out.clear();
    f.format(ev, out);
    EXPECT_EQ(out, "             cat-94      [001] .....     2.431445: myret: "
                   "(ksys_read+0x1e/0xf0 <- vfs_read) ret=0x3\n");
}

TEST(ProbeDecode, RecordIntoEvent) {
    alignas(8) std::uint8_t buf[sizeof(fhook_rec_probe) + 16] = {};
    auto* r = reinterpret_cast<fhook_rec_probe*>(buf);
    r->hdr.size = sizeof(buf) - 3;
    r->hdr.type = FHOOK_REC_KRETPROBE;
    r->hdr.probe_id = 2;
    r->ip = 0x10;
    r->ret_ip = 0x20;
    r->faults = 5;
    r->data[0] = 42;
    auto ev = decode(&r->hdr);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->type, EventType::Kretprobe);
    EXPECT_EQ(ev->ret_ip, 0x20U);
    EXPECT_EQ(ev->faults, 5U);
    EXPECT_EQ(ev->data.size(), 13U);
    EXPECT_EQ(ev->data[0], 42);
    r->hdr.size = sizeof(fhook_rec_probe) - 1;
    EXPECT_THROW(decode(&r->hdr), Error);
}

} // namespace
} // namespace fhook

namespace fhook {
namespace {

std::string filter_error(std::string_view expr, const KprobeDef* def) {
    try {
        compile_filter(expr, def);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Invalid);
        return e.what();
    }
    return "";
}

TEST(ProbeFilter, CompilesToPostfix) {
    auto d = parse("p:x f cnt=%dx:u64 neg=%si:s32 path=+0(%di):string if cnt >= 4 && "
                   "(neg < -1 || path ~ \"/tmp/*\") && !(comm == \"cat\")");
    EXPECT_EQ(d.filter, "cnt >= 4 && (neg < -1 || path ~ \"/tmp/*\") && !(comm == \"cat\")");
    EXPECT_EQ(d.fields.size(), 3U); // "if" and what follows are not fields
    const auto& p = d.pred;
    ASSERT_EQ(p.size(), 10U);
    EXPECT_EQ(p[0].op, FHOOK_PRED_FIELD);
    EXPECT_EQ(p[0].arg, static_cast<std::uint32_t>(FHOOK_CMP_GE));
    EXPECT_EQ(p[0].size, 8U);
    EXPECT_EQ(p[0].imm, 4);
    EXPECT_EQ(p[1].op, FHOOK_PRED_FIELD);
    EXPECT_EQ(p[1].arg, FHOOK_CMP_LT | FHOOK_PRED_SIGNED);
    EXPECT_EQ(p[1].dst, 8U);
    EXPECT_EQ(p[1].imm, -1);
    EXPECT_EQ(p[2].op, FHOOK_PRED_STR);
    EXPECT_EQ(p[2].arg, static_cast<std::uint32_t>(FHOOK_CMP_GLOB));
    EXPECT_EQ(p[2].imm, 6);
    EXPECT_STREQ(reinterpret_cast<const char*>(&p[3]), "/tmp/*");
    EXPECT_EQ(p[4].op, FHOOK_PRED_OR);
    EXPECT_EQ(p[5].op, FHOOK_PRED_AND);
    EXPECT_EQ(p[6].op, FHOOK_PRED_COMM);
    EXPECT_STREQ(reinterpret_cast<const char*>(&p[7]), "cat");
    EXPECT_EQ(p[8].op, FHOOK_PRED_NOT);
    EXPECT_EQ(p[9].op, FHOOK_PRED_AND);
}

TEST(ProbeFilter, TaskFieldsAndGlobEquals) {
    auto p = compile_filter("common_pid == 42 || tgid != 7 || cpu & 1 || comm == \"ca*\"", nullptr);
    EXPECT_EQ(p[0].op, FHOOK_PRED_PID);
    EXPECT_EQ(p[1].op, FHOOK_PRED_TGID);
    EXPECT_EQ(p[3].op, FHOOK_PRED_CPU);
    EXPECT_EQ(p[3].arg, static_cast<std::uint32_t>(FHOOK_CMP_BITS));
    EXPECT_EQ(p[5].op, FHOOK_PRED_COMM);
    EXPECT_EQ(p[5].arg, static_cast<std::uint32_t>(FHOOK_CMP_GLOB)); // == with '*'
}

TEST(ProbeFilter, ErrorsNameTheToken) {
    auto d = parse("p:x f cnt=%dx:u64 s=+0(%di):string a=+0(%di):u8[2]");
    EXPECT_NE(filter_error("nope == 1", &d).find("unknown field 'nope'"), std::string::npos);
    EXPECT_NE(filter_error("cnt == \"x\"", &d).find("is a number"), std::string::npos);
    EXPECT_NE(filter_error("s > 1", &d).find("is a string"), std::string::npos);
    EXPECT_NE(filter_error("cnt ~ \"x\"", &d).find("needs a string"), std::string::npos);
    EXPECT_NE(filter_error("a == 1", &d).find("cannot filter"), std::string::npos);
    EXPECT_NE(filter_error("(cnt == 1", &d).find("expected ')'"), std::string::npos);
    EXPECT_NE(filter_error("cnt == 1 cnt", &d).find("unexpected 'cnt'"), std::string::npos);
    EXPECT_NE(filter_error("", &d).find("empty filter"), std::string::npos);
    EXPECT_NE(filter_error("s == \"abc", &d).find("unterminated"), std::string::npos);
    EXPECT_NE(filter_error("cnt == 1", nullptr).find("unknown field 'cnt'"), std::string::npos);
    std::string deep = "cnt == 1";
    for (int i = 0; i < FHOOK_PRED_STACK; i++) {
        deep = "cnt == 1 || (" + deep + ")";
    }
    EXPECT_NE(filter_error(deep, &d).find("too complex"), std::string::npos);
}

} // namespace
} // namespace fhook

#include <fhook/output/summary.hpp>

namespace fhook {
namespace {

TEST(ProbeStack, TrailerDecodedAndPrinted) {
    // a function record with a stack trailer: ips[3], then 3
    alignas(8) std::uint8_t buf[sizeof(fhook_rec_func) + 4 * 8] = {};
    auto* r = reinterpret_cast<fhook_rec_func*>(buf);
    r->hdr.size = sizeof(buf);
    r->hdr.type = FHOOK_REC_FUNC;
    r->hdr.flags = FHOOK_CTX_STACK | FHOOK_CTX_IRQS_OFF;
    r->hdr.pid = 7;
    r->ip = 0xffffffff81000010ULL;
    r->parent_ip = 0xffffffff81000210ULL;
    const std::uint64_t tail[4] = {0xffffffff81000010ULL, 0xffffffff81000210ULL,
                                   0xffffffff81000320ULL, 3};
    std::memcpy(r + 1, tail, sizeof(tail));
    auto ev = decode(&r->hdr);
    ASSERT_TRUE(ev);
    ASSERT_EQ(ev->stack.size(), 3U);
    EXPECT_EQ(ev->stack[2], 0xffffffff81000320ULL);
    EXPECT_EQ(ev->flags, FHOOK_CTX_IRQS_OFF); // the stack bit is not a context
    const Ksyms ksyms = Ksyms::parse("ffffffff81000000 T vfs_read\n"
                                     "ffffffff81000200 T ksys_read\n"
                                     "ffffffff81000300 T do_syscall_64\n");
    TextFormatter f(ksyms);
    std::string out;
    f.format(*ev, out);
    EXPECT_NE(out.find(": vfs_read <-ksys_read\n => vfs_read\n => ksys_read\n => do_syscall_64\n"),
              std::string::npos)
        << out;
    JsonFormatter j(ksyms);
    out.clear();
    j.format(*ev, out);
    EXPECT_NE(out.find(",\"stack\":[\"vfs_read\",\"ksys_read\",\"do_syscall_64\"]}"),
              std::string::npos)
        << out;
    // a count the record cannot hold
    const std::uint64_t huge = 1000;
    std::memcpy(buf + sizeof(buf) - 8, &huge, 8);
    EXPECT_THROW(decode(&r->hdr), Error);
}

TEST(StatTable, Columns) {
    StatRow row;
    row.id = 2;
    row.stats.total = CpuStats{100, 90, 10, 3};
    row.filtered = 55;
    row.description = "p:x vfs_read";
    const std::string t = stat_table({row});
    EXPECT_EQ(t,
              "probe         hits     filtered     missed       events       lost  definition\n"
              "    2          100           55          3           90         10  p:x vfs_read\n");
}

} // namespace
} // namespace fhook

namespace fhook {
namespace {

std::string trigger_error(std::string_view text) {
    try {
        parse_trigger(text);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Invalid);
        return e.what();
    }
    return "";
}

TEST(Trigger, Parse) {
    auto t = parse_trigger("rd=traceoff");
    EXPECT_EQ(t.event, "rd");
    EXPECT_EQ(t.action, static_cast<std::uint32_t>(FHOOK_TRIG_TRACEOFF));
    EXPECT_EQ(t.count, 0U);
    t = parse_trigger("rd=stacktrace:5 if cnt > 100 && comm == \"cat\"");
    EXPECT_EQ(t.action, static_cast<std::uint32_t>(FHOOK_TRIG_STACKTRACE));
    EXPECT_EQ(t.count, 5U);
    EXPECT_EQ(t.filter, "cnt > 100 && comm == \"cat\"");
    t = parse_trigger("open=disable:rd:3");
    EXPECT_EQ(t.action, static_cast<std::uint32_t>(FHOOK_TRIG_DISABLE));
    EXPECT_EQ(t.target, "rd");
    EXPECT_EQ(t.count, 3U);
    t = parse_trigger("func=snapshot");
    EXPECT_EQ(t.action, static_cast<std::uint32_t>(FHOOK_TRIG_SNAPSHOT));
}

TEST(Trigger, Errors) {
    EXPECT_NE(trigger_error("traceoff").find("no EVENT="), std::string::npos);
    EXPECT_NE(trigger_error("rd=explode").find("unknown action 'explode'"), std::string::npos);
    EXPECT_NE(trigger_error("rd=enable").find("needs the event"), std::string::npos);
    EXPECT_NE(trigger_error("rd=traceoff:0").find("positive"), std::string::npos);
    EXPECT_NE(trigger_error("rd=traceoff:1:2").find("too many"), std::string::npos);
    EXPECT_NE(trigger_error("9x=traceoff").find("bad event name"), std::string::npos);
}

} // namespace
} // namespace fhook

namespace fhook {
namespace {

constexpr const char* kSwitchFormat =
    "name: sched_switch\nID: 317\nformat:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
    "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
    "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
    "\tfield:void * ptr;\toffset:40;\tsize:8;\tsigned:0;\n"
    "\tfield:__data_loc char[] name;\toffset:48;\tsize:4;\tsigned:0;\n"
    "\tfield:u32 vals[2];\toffset:52;\tsize:8;\tsigned:0;\n\n"
    "print fmt: \"...\"\n";

TEST(TracepointFormat, FieldsAndRendering) {
    std::uint32_t fixed = 0;
    const auto fields = parse_event_format(kSwitchFormat, fixed);
    ASSERT_EQ(fields.size(), 6U);
    EXPECT_EQ(fixed, 60U);
    EXPECT_EQ(fields[0].name, "prev_comm");
    EXPECT_EQ(fields[0].type.kind, FetchType::Kind::FixedString);
    EXPECT_EQ(fields[1].name, "prev_pid");
    EXPECT_EQ(fields[1].type.kind, FetchType::Kind::Signed);
    EXPECT_EQ(fields[3].name, "ptr");
    EXPECT_EQ(fields[3].type.kind, FetchType::Kind::Hex);
    EXPECT_EQ(fields[4].type.kind, FetchType::Kind::String);
    EXPECT_EQ(fields[5].type.count, 2U);
    // the declarations as the format file has them
    EXPECT_EQ(fields[0].text, "char prev_comm[16]");
    EXPECT_EQ(fields[4].text, "__data_loc char[] name");
    EXPECT_EQ(fields[5].text, "u32 vals[2]");

    KprobeDef def;
    def.is_tracepoint = true;
    def.event = "sched_switch";
    def.fields = fields;
    def.data_size = fixed;
    std::vector<std::uint8_t> data(60, 0);
    std::memcpy(data.data() + 8, "bash", 4);
    const std::int32_t pid = 42;
    std::memcpy(data.data() + 24, &pid, 4);
    const std::int64_t state = -1;
    std::memcpy(data.data() + 32, &state, 8);
    const std::uint32_t loc = 4U << 16 | 60U;
    std::memcpy(data.data() + 48, &loc, 4);
    data.insert(data.end(), {'a', 'b', 'c', 0});
    const std::uint32_t vals[2] = {1, 2};
    std::memcpy(data.data() + 52, vals, 8);
    Event ev;
    ev.type = EventType::Tracepoint;
    ev.probe_id = 1;
    ev.comm = "bash";
    ev.pid = 42;
    ev.data = data;
    ProbeTable table;
    table.add(1, def);
    const Ksyms ksyms;
    TextFormatter f(ksyms);
    f.set_probes(&table);
    std::string out;
    f.format(ev, out);
    EXPECT_NE(out.find(": sched_switch: prev_comm=\"bash\" prev_pid=42 prev_state=-1 ptr=0x0 "
                       "name=\"abc\" vals={0x1,0x2}\n"),
              std::string::npos)
        << out;
    // filters over format fields compile to offsets in the entry
    auto pred = compile_filter("prev_pid == 42 && name ~ \"a*\"", &def);
    EXPECT_EQ(pred[0].op, FHOOK_PRED_FIELD);
    EXPECT_EQ(pred[0].dst, 24U);
    EXPECT_EQ(pred[1].op, FHOOK_PRED_STR);
    EXPECT_EQ(pred[1].dst, 48U);
    EXPECT_THROW(compile_filter("prev_comm == \"bash\"", &def), Error);
}

// The kernel's own text: libtraceevent runs the event's print fmt
// (__print_flags, __print_symbolic, %ps through kallsyms), as cat trace.
TEST(TracepointFormat, PrintsTheEventsOwnFormat) {
    const std::string format =
        "name: fhk_ev\nID: 77\nformat:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
        "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
        "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
        "\tfield:unsigned long state;\toffset:24;\tsize:8;\tsigned:0;\n"
        "\tfield:int mode;\toffset:32;\tsize:4;\tsigned:1;\n"
        "\tfield:void * fn;\toffset:40;\tsize:8;\tsigned:0;\n\n"
        "print fmt: \"comm=%s state=%s mode=%s fn=%ps\", REC->comm, "
        "__print_flags(REC->state, \"|\", { 1, \"S\" }, { 2, \"D\" }), "
        "__print_symbolic(REC->mode, { 0, \"LOW\" }, { 1, \"HIGH\" }), REC->fn\n";
    KprobeDef def;
    def.is_tracepoint = true;
    def.group = "fhk";
    def.event = "fhk_ev";
    def.tp_id = 77;
    def.tp_format = format;
    def.fields = parse_event_format(format, def.data_size);
    ASSERT_EQ(def.fields.size(), 4U);
    EXPECT_EQ(def.data_size, 48U);
    std::vector<std::uint8_t> data(48, 0);
    const std::uint16_t type = 77;
    std::memcpy(data.data(), &type, 2);
    std::memcpy(data.data() + 8, "bash", 4);
    const std::uint64_t state = 3;
    std::memcpy(data.data() + 24, &state, 8);
    const std::int32_t mode = 1;
    std::memcpy(data.data() + 32, &mode, 4);
    const std::uint64_t fn = 0xffffffff812a0010;
    std::memcpy(data.data() + 40, &fn, 8);
    Event ev;
    ev.type = EventType::Tracepoint;
    ev.probe_id = 1;
    ev.comm = "bash";
    ev.pid = 42;
    ev.data = data;
    ProbeTable table;
    table.add(1, def);
    const Ksyms ksyms = Ksyms::parse("ffffffff812a0000 T vfs_read\nffffffff812a0400 T ksys_read\n");
    TextFormatter f(ksyms);
    f.set_probes(&table);
    std::string out;
    f.format(ev, out);
    EXPECT_NE(out.find(": fhk_ev: comm=bash state=S|D mode=HIGH fn=vfs_read\n"), std::string::npos)
        << out;
    // an entry of another event (its common_type): each field as name=value
    const std::uint16_t other = 78;
    std::memcpy(ev.data.data(), &other, 2);
    out.clear();
    f.format(ev, out);
    EXPECT_NE(out.find(": fhk_ev: comm=\"bash\" state=3 mode=1 fn=0xffffffff812a0010\n"),
              std::string::npos)
        << out;
}

// Syscall events print as the kernel's print_syscall_enter/exit do, not
// with their format's print fmt.
TEST(TracepointFormat, SyscallsAsTheKernelPrintsThem) {
    auto syscall = [](const std::string& name, const std::vector<std::string>& args) {
        std::string format = "name: " + name +
                             "\nID: 9\nformat:\n"
                             "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
                             "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
                             "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n";
        unsigned off = 16;
        for (const auto& a : args) {
            format += "\tfield:unsigned long " + a + ";\toffset:" + std::to_string(off) +
                      ";\tsize:8;\tsigned:0;\n";
            off += 8;
        }
        format += "\nprint fmt: \"x\"\n";
        KprobeDef def;
        def.is_tracepoint = true;
        def.group = "syscalls";
        def.event = name;
        def.tp_id = 9;
        def.tp_format = format;
        def.fields = parse_event_format(format, def.data_size);
        return def;
    };
    ProbeTable table;
    table.add(1, syscall("sys_enter_openat", {"dfd", "filename", "flags", "mode"}));
    table.add(2, syscall("sys_exit_openat", {"ret"}));
    const Ksyms ksyms;
    TextFormatter f(ksyms);
    f.set_probes(&table);
    Event ev;
    ev.type = EventType::Tracepoint;
    ev.comm = "cat";
    ev.pid = 7;
    ev.probe_id = 1;
    ev.data.assign(48, 0);
    const std::uint64_t args[4] = {0xffffffffffffff9cULL, 0x48d135, 0x80000, 0};
    std::memcpy(ev.data.data() + 16, args, sizeof(args));
    std::string out;
    f.format(ev, out);
    EXPECT_NE(out.find(": sys_openat(dfd: ffffffffffffff9c, filename: 48d135, flags: 80000, "
                       "mode: 0)\n"),
              std::string::npos)
        << out;
    ev.probe_id = 2;
    ev.data.assign(24, 0);
    ev.data[16] = 3;
    out.clear();
    f.format(ev, out);
    EXPECT_NE(out.find(": sys_openat -> 0x3\n"), std::string::npos) << out;
}

} // namespace
} // namespace fhook
