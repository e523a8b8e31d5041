// fhook errors' output: a failing chain from do_sys_openat2 down to the
// path walk that produced -ENOENT, as text and JSON, identical chains
// keyed alike, and the --stat table.
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include <gtest/gtest.h>

#include <fhook/core/error.hpp>
#include <fhook/output/errors_format.hpp>
#include <fhook/ring/event.hpp>

namespace fhook {
namespace {

const Ksyms& ksyms() {
    static const Ksyms k = Ksyms::parse("ffffffff81300000 T do_sys_openat2\n"
                                        "ffffffff81300400 T do_filp_open\n"
                                        "ffffffff81300800 t path_openat\n"
                                        "ffffffff81300c00 t walk_component\n"
                                        "ffffffff81301000 T vfs_open\n");
    return k;
}

// open("/nonexistent"): the walk's -ENOENT returned up through
// path_openat's ERR_PTR and do_filp_open's to do_sys_openat2 (a long)
ErrorChain open_chain() {
    const ReturnType l{ReturnType::Kind::Errno, 8}, i{ReturnType::Kind::Errno, 4},
        p{ReturnType::Kind::Pointer, 8};
    const auto enoent = static_cast<std::uint64_t>(-2);
    ErrorChain c;
    c.ts = 12345678000;
    c.pid = c.tgid = 150;
    c.cpu = 1;
    c.comm = "cat";
    c.frames = {{0xffffffff81300000, 12345670000, 8000, enoent, l},
                {0xffffffff81300400, 12345671000, 6500, enoent, p},
                {0xffffffff81300800, 12345671200, 6000, enoent, p},
                {0xffffffff81300c00, 12345672000, 1200, 0x00000000fffffffeULL, i}};
    c.first = first_failure(c.frames);
    return c;
}

TEST(Errors, ChainText) {
    const std::string out = format_error_chain(open_chain(), ksyms());
    EXPECT_EQ(out.substr(0, out.find('\n')),
              "cat-150 [001] 12.345678: do_sys_openat2 returned -ENOENT after 8.000 us");
    EXPECT_NE(out.find("\n  do_sys_openat2 "), std::string::npos) << out;
    EXPECT_NE(out.find("\n    do_filp_open "), std::string::npos) << out;
    EXPECT_NE(out.find("ERR_PTR(-ENOENT)"), std::string::npos) << out;
    // the deepest frame is marked, and only it
    EXPECT_NE(out.find("walk_component"), std::string::npos);
    EXPECT_EQ(out.find("<- first"), out.rfind("<- first"));
    EXPECT_TRUE(out.ends_with("1.200 us  <- first\n")) << out;
    ErrorChain cut = open_chain();
    cut.truncated = true;
    EXPECT_TRUE(format_error_chain(cut, ksyms(), 3)
                    .ends_with("<- (the first failure may be deeper: not watched or not kept)\n"));
    EXPECT_NE(format_error_chain(cut, ksyms(), 3).find("after 8.000 us (3 times)\n"),
              std::string::npos);
}

TEST(Errors, ChainJson) {
    const std::string j = format_error_chain_json(open_chain(), ksyms());
    EXPECT_EQ(j.substr(0, j.find(",\"frames\"")),
              "{\"ts_ns\":12345678000,\"cpu\":1,\"pid\":150,\"tgid\":150,\"comm\":\"cat\","
              "\"entry\":\"do_sys_openat2\",\"result\":\"-ENOENT\",\"errno\":2,\"first\":"
              "\"walk_component\",\"truncated\":false,\"incomplete\":false,\"repeats\":1");
    EXPECT_NE(j.find("{\"function\":\"path_openat\",\"result\":\"ERR_PTR(-ENOENT)\","
                     "\"duration_ns\":6000,\"calltime_ns\":12345671200}"),
              std::string::npos)
        << j;
}

// OTLP: the chain a trace, its frames spans each the child of the one
// before, stamped on the realtime clock, ids spread from the stamp and salt
TEST(Errors, ChainAsAnOtlpTrace) {
    const OtlpSpanIds ids{42, 1'000'000'000};
    const auto j = nlohmann::json::parse(format_error_chain_otlp(open_chain(), ksyms(), ids));
    const auto& rs = j.at("resourceSpans").at(0);
    EXPECT_EQ(rs.at("resource").at("attributes").at(0).at("value").at("stringValue"), "fhook");
    const auto& spans = rs.at("scopeSpans").at(0).at("spans");
    ASSERT_EQ(spans.size(), 4u);
    const std::string trace = spans[0].at("traceId");
    EXPECT_EQ(trace.size(), 32u);
    EXPECT_FALSE(spans[0].contains("parentSpanId"));
    std::set<std::string> ids_seen;
    for (std::size_t i = 0; i < spans.size(); i++) {
        EXPECT_EQ(spans[i].at("traceId"), trace);
        EXPECT_EQ(spans[i].at("spanId").get<std::string>().size(), 16u);
        EXPECT_TRUE(ids_seen.insert(spans[i].at("spanId")).second);
        if (i) {
            EXPECT_EQ(spans[i].at("parentSpanId"), spans[i - 1].at("spanId"));
        }
        EXPECT_EQ(spans[i].at("status").at("code"), 2);
    }
    EXPECT_EQ(spans[2].at("name"), "path_openat");
    EXPECT_EQ(spans[2].at("status").at("message"), "ERR_PTR(-ENOENT)");
    EXPECT_EQ(spans[2].at("startTimeUnixNano"), "13345671200");
    EXPECT_EQ(spans[2].at("endTimeUnixNano"), "13345677200");
    const std::string root = spans[0].at("attributes").dump();
    EXPECT_NE(root.find(R"({"key":"thread.name","value":{"stringValue":"cat"}})"),
              std::string::npos)
        << root;
    EXPECT_NE(root.find(R"({"key":"process.pid","value":{"intValue":"150"}})"), std::string::npos);
    // the first failure marked on walk_component alone
    for (std::size_t i = 0; i < spans.size(); i++) {
        EXPECT_EQ(spans[i].at("attributes").dump().find("fhook.first") != std::string::npos,
                  i == 3);
    }
    // another salt, another trace; the same, the same
    EXPECT_NE(nlohmann::json::parse(format_error_chain_otlp(open_chain(), ksyms(), {43, 0}))
                  .at("resourceSpans")[0]["scopeSpans"][0]["spans"][0]["traceId"],
              trace);
    EXPECT_EQ(nlohmann::json::parse(format_error_chain_otlp(open_chain(), ksyms(), ids))
                  .at("resourceSpans")[0]["scopeSpans"][0]["spans"][0]["traceId"],
              trace);
}

// kmalloc's NULL below the -ENOMEM of the call that checked it: that call
// produced the errno, the NULL is what it came from
TEST(Errors, FirstIsTheDeepestFrameWithTheEntrysFailure) {
    ErrorChain c = open_chain();
    const ReturnType p{ReturnType::Kind::Pointer, 8}, i{ReturnType::Kind::Errno, 4};
    const auto enomem = static_cast<std::uint64_t>(-12);
    for (ErrorFrame& f : c.frames) {
        f.retval = f.type.kind == ReturnType::Kind::Pointer || f.type.size == 8
                       ? enomem
                       : static_cast<std::uint32_t>(-12);
    }
    c.frames.push_back({0xffffffff81301000, 12345672100, 300, 0, p});
    EXPECT_EQ(first_failure(c.frames), 3u);
    c.first = 3;
    c.truncated = true; // (cut below the NULL: no matter)
    EXPECT_TRUE(c.first_sure());
    const std::string out = format_error_chain(c, ksyms());
    EXPECT_NE(
        out.find("walk_component                           -ENOMEM                  1.200 us  "
                 "<- first\n"),
        std::string::npos)
        << out;
    EXPECT_TRUE(out.ends_with("vfs_open                               NULL                     "
                              "0.300 us\n"))
        << out;
    EXPECT_NE(format_error_chain_json(c, ksyms()).find("\"first\":\"walk_component\""),
              std::string::npos);
    // a NULL entry: the deepest NULL
    ErrorChain n;
    n.frames = {{0xffffffff81300400, 1, 9, 0, p},
                {0xffffffff81300c00, 2, 5, static_cast<std::uint32_t>(-22), i},
                {0xffffffff81301000, 3, 1, 0, p}};
    // (the entry turned -EINVAL into its NULL; the NULL below made the -EINVAL)
    EXPECT_EQ(first_failure(n.frames), 0u);
    n.frames[1].retval = 0;
    n.frames[1].type = p;
    EXPECT_EQ(first_failure(n.frames), 2u);
}

TEST(Errors, UserStackAfterTheFrames) {
    ErrorChain c = open_chain();
    c.ustack = {"__open64+0x42 (/usr/lib/x86_64-linux-gnu/libc.so.6)", "main+0x1d (/usr/bin/cat)"};
    const std::string out = format_error_chain(c, ksyms());
    EXPECT_TRUE(
        out.ends_with("  <- first\n  user stack:\n    __open64+0x42 "
                      "(/usr/lib/x86_64-linux-gnu/libc.so.6)\n    main+0x1d (/usr/bin/cat)\n"))
        << out;
    const std::string j = format_error_chain_json(c, ksyms());
    EXPECT_TRUE(j.ends_with("],\"ustack\":[\"__open64+0x42 (/usr/lib/x86_64-linux-gnu/libc.so.6)\","
                            "\"main+0x1d (/usr/bin/cat)\"]}"))
        << j;
    // (the same calls from elsewhere: the same chain)
    EXPECT_EQ(error_chain_key(c), error_chain_key(open_chain()));
}

TEST(Errors, IdenticalChainsShareAKey) {
    ErrorChain a = open_chain(), b = open_chain();
    b.ts += 1000000;
    b.pid = 151;
    b.frames[0].duration = 9000; // times aside
    EXPECT_EQ(error_chain_key(a), error_chain_key(b));
    b.frames[3].retval = static_cast<std::uint32_t>(-13); // -EACCES
    EXPECT_NE(error_chain_key(a), error_chain_key(b));
    b = open_chain();
    b.truncated = true;
    EXPECT_NE(error_chain_key(a), error_chain_key(b));
}

TEST(Errors, StatTable) {
    ErrorStats stats;
    EXPECT_EQ(stats.text(ksyms()), "(no failures)\n");
    stats.add(open_chain());
    stats.add(open_chain());
    ErrorChain eacces = open_chain();
    eacces.frames.resize(1);
    eacces.frames[0].retval = static_cast<std::uint64_t>(-13);
    eacces.first = 0;
    stats.add(eacces);
    EXPECT_EQ(stats.total(), 3u);
    const std::string t = stats.text(ksyms());
    // the most frequent first
    EXPECT_LT(t.find("walk_component"), t.find("-EACCES")) << t;
    EXPECT_NE(t.find("         2  -ENOENT"), std::string::npos) << t;
    EXPECT_NE(t.find("         1  -EACCES              do_sys_openat2                   "
                     "do_sys_openat2\n"),
              std::string::npos)
        << t;
}

// A FHOOK_REC_ERRORS record of `frames` (outermost first), as the module writes it.
std::vector<std::uint8_t> errors_record(const std::vector<fhook_err_frame>& frames,
                                        std::uint32_t flags = 0) {
    std::vector<std::uint8_t> buf(sizeof(fhook_rec_errors) +
                                  frames.size() * sizeof(fhook_err_frame));
    fhook_rec_errors r{};
    r.hdr.type = FHOOK_REC_ERRORS;
    r.hdr.size = static_cast<std::uint16_t>(buf.size());
    r.hdr.probe_id = 1;
    r.hdr.ts = 12345678000;
    r.hdr.pid = r.hdr.tgid = 150;
    r.hdr.cpu = 1;
    r.nr_frames = static_cast<std::uint32_t>(frames.size());
    r.flags = flags;
    std::memcpy(buf.data(), &r, sizeof(r));
    std::memcpy(buf.data() + sizeof(r), frames.data(), frames.size() * sizeof(fhook_err_frame));
    return buf;
}

const auto kEnoent = static_cast<std::uint64_t>(-2);

std::vector<fhook_err_frame> open_frames() {
    return {{0xffffffff81300000, kEnoent, 12345670000, 8000},
            {0xffffffff81300400, kEnoent, 12345671000, 6500},
            {0xffffffff81300800, kEnoent, 12345671200, 6000},
            {0xffffffff81300c00, 0x00000000fffffffeULL, 12345672000, 1200}};
}

Event decoded(const std::vector<std::uint8_t>& buf) {
    std::optional<Event> ev = decode(reinterpret_cast<const fhook_rec*>(buf.data()));
    EXPECT_TRUE(ev.has_value());
    ev->comm = "cat";
    return *ev;
}

TEST(Errors, DecodeRecord) {
    const Event ev = decoded(errors_record(open_frames(), FHOOK_ERRORS_DEEPER));
    EXPECT_EQ(ev.type, EventType::Errors);
    EXPECT_EQ(ev.ip, 0xffffffff81300000u);
    EXPECT_EQ(ev.retval, kEnoent);
    const ErrorsRecord rec = errors_of(ev);
    EXPECT_EQ(rec.flags, FHOOK_ERRORS_DEEPER);
    ASSERT_EQ(rec.frames.size(), 4u);
    EXPECT_EQ(rec.frames[3].retval, 0x00000000fffffffeULL);
    EXPECT_EQ(rec.frames[2].duration, 6000u);

    // a record shorter than its frames, or with none, is refused
    std::vector<std::uint8_t> cut = errors_record(open_frames());
    reinterpret_cast<fhook_rec*>(cut.data())->size -= 8;
    EXPECT_THROW(decode(reinterpret_cast<const fhook_rec*>(cut.data())), Error);
    std::vector<std::uint8_t> none = errors_record({});
    EXPECT_THROW(decode(reinterpret_cast<const fhook_rec*>(none.data())), Error);
}

// FHOOK_ERRORS_ARGS: each frame's six argument registers after the frames,
// before the user stack; without BTF, named arg1..arg6
TEST(Errors, ArgumentsAfterTheFrames) {
    const std::vector<fhook_err_frame> frames = open_frames();
    std::vector<std::uint8_t> buf = errors_record(frames, FHOOK_ERRORS_ARGS);
    std::vector<std::uint64_t> regs;
    for (std::uint64_t i = 0; i < frames.size() * FHOOK_GRAPH_NR_ARGS; i++) {
        regs.push_back(0x100 + i);
    }
    const std::vector<std::uint64_t> stack = {0x401000, 1}; // (ips[n], n)
    const std::size_t at = buf.size();
    buf.resize(at + 8 * (regs.size() + stack.size()));
    std::memcpy(buf.data() + at, regs.data(), 8 * regs.size());
    std::memcpy(buf.data() + at + 8 * regs.size(), stack.data(), 8 * stack.size());
    auto* hdr = reinterpret_cast<fhook_rec*>(buf.data());
    hdr->size = static_cast<std::uint16_t>(buf.size());
    hdr->flags |= FHOOK_CTX_STACK;
    const Event ev = decoded(buf);
    EXPECT_EQ(ev.stack, std::vector<std::uint64_t>{0x401000});
    const ErrorsRecord rec = errors_of(ev);
    ASSERT_EQ(rec.args.size(), 4u);
    EXPECT_EQ(rec.args[0][0], 0x100u);
    EXPECT_EQ(rec.args[3][5], 0x100u + 23);
    ErrorsFormatter f(ksyms(), OutputFormat::Text, {});
    const ErrorChain c = f.chain_of(ev);
    ASSERT_EQ(c.frames.size(), 4u);
    const std::string out = format_error_chain(c, ksyms());
    EXPECT_NE(out.find("  <- first\n          (arg1=0x112, arg2=0x113, arg3=0x114, arg4=0x115, "
                       "arg5=0x116, arg6=0x117)\n"),
              std::string::npos)
        << out;
    EXPECT_NE(format_error_chain_json(c, ksyms())
                  .find("\"calltime_ns\":12345670000,\"args\":{\"arg1\":\"0x100\","),
              std::string::npos);
    // (a record cut inside the arguments is refused)
    hdr->size =
        static_cast<std::uint16_t>(sizeof(fhook_rec_errors) + 4 * sizeof(fhook_err_frame) + 8);
    hdr->flags &= ~FHOOK_CTX_STACK;
    EXPECT_THROW(decode(hdr), Error);
}

// FHOOK_ERRORS_CALLSITES: each frame's return address, before the
// arguments: a frame is "at" its call of the next, the last at its start
TEST(Errors, CallSitesBeforeTheArguments) {
    const std::vector<fhook_err_frame> frames = open_frames();
    std::vector<std::uint8_t> buf =
        errors_record(frames, FHOOK_ERRORS_CALLSITES | FHOOK_ERRORS_ARGS);
    const std::vector<std::uint64_t> from = {0xffffffff81000010, 0xffffffff81300040,
                                             0xffffffff81300480, 0xffffffff81300888};
    const std::size_t at = buf.size();
    buf.resize(at + 8 * from.size() + 8 * FHOOK_GRAPH_NR_ARGS * frames.size());
    std::memcpy(buf.data() + at, from.data(), 8 * from.size());
    buf[at + 8 * from.size()] = 7; // (the entry's first argument)
    reinterpret_cast<fhook_rec*>(buf.data())->size = static_cast<std::uint16_t>(buf.size());
    const ErrorsRecord rec = errors_of(decoded(buf));
    EXPECT_EQ(rec.callsites, from);
    ASSERT_EQ(rec.args.size(), 4u);
    EXPECT_EQ(rec.args[0][0], 7u);
    ErrorsFormatter f(ksyms(), OutputFormat::Text, {});
    const ErrorChain c = f.chain_of(decoded(buf));
    ASSERT_EQ(c.frames.size(), 4u);
    EXPECT_EQ(c.frames[0].at, "do_sys_openat2+0x40/0x400");
    EXPECT_EQ(c.frames[2].at, "path_openat+0x88/0x400");
    EXPECT_EQ(c.frames[3].at, "walk_component+0x0/0x400");
    const std::string out = format_error_chain(c, ksyms());
    EXPECT_NE(out.find("\n      at do_filp_open+0x80/0x400\n"), std::string::npos) << out;
    EXPECT_NE(
        format_error_chain_json(c, ksyms())
            .find(
                "\"at\":\"do_sys_openat2+0x40/0x400\",\"source\":null,\"args\":{\"arg1\":\"0x7\","),
        std::string::npos);
}

TEST(Errors, FormatterPrintsIdenticalChainsOnce) {
    ErrorsFormatter f(ksyms(), OutputFormat::Text, {});
    std::string out;
    const Event ev = decoded(errors_record(open_frames()));
    f.format(ev, out);
    f.format(ev, out);
    f.format(ev, out);
    EXPECT_EQ(out, format_error_chain(f.chain_of(ev), ksyms()) + "\n");
    // without BTF the innermost int's low half reads as -ENOENT too
    EXPECT_NE(out.find("walk_component"), std::string::npos) << out;
    EXPECT_TRUE(out.ends_with("1.200 us  <- first\n\n")) << out;
    out.clear();
    f.end(out);
    EXPECT_EQ(out, "# 3 failing calls, 1 distinct chain (identical ones printed once)\n");

    ErrorsFormatOptions every;
    every.all = true;
    ErrorsFormatter all(ksyms(), OutputFormat::Text, every);
    out.clear();
    all.format(ev, out);
    all.format(ev, out);
    EXPECT_NE(out.find("<- first"), out.rfind("<- first")) << out;
}

TEST(Errors, FormatterCutsAtAValueThatIsNoFailure) {
    std::vector<fhook_err_frame> frames = open_frames();
    frames[2].retval = 5; // (no errno as a long or an int)
    ErrorsFormatter f(ksyms(), OutputFormat::Text, {});
    const ErrorChain c = f.chain_of(decoded(errors_record(frames, FHOOK_ERRORS_DEEPER)));
    ASSERT_EQ(c.frames.size(), 2u);
    EXPECT_EQ(c.frames.back().func, 0xffffffff81300400u);
    // what failed below path_openat cannot be told: no first failure named
    EXPECT_TRUE(c.truncated);
    EXPECT_NE(format_error_chain_json(c, ksyms()).find("\"first\":null"), std::string::npos);
    frames[0].retval = 0;
    EXPECT_TRUE(f.chain_of(decoded(errors_record(frames))).frames.empty());
    std::string out;
    f.format(decoded(errors_record(frames)), out);
    EXPECT_EQ(out, "");
}

TEST(Errors, IncompleteChainsNameNoFirst) {
    ErrorsFormatter f(ksyms(), OutputFormat::Json, {});
    std::string out;
    f.format(decoded(errors_record(open_frames(), FHOOK_ERRORS_INCOMPLETE)), out);
    EXPECT_NE(out.find("\"first\":null"), std::string::npos) << out;
    EXPECT_NE(out.find("\"incomplete\":true"), std::string::npos) << out;
    Event lost;
    lost.type = EventType::Lost;
    lost.lost = 7;
    f.format(lost, out);
    out.clear();
    f.end(out);
    EXPECT_EQ(
        out,
        "{\"failures\":1,\"distinct\":1,\"lost\":7,\"stat\":[{\"count\":1,"
        "\"result\":\"-ENOENT\",\"entry\":\"do_sys_openat2\",\"first\":null,\"deeper\":false}]}\n");
    ErrorChain c = open_chain();
    c.incomplete = true;
    EXPECT_TRUE(format_error_chain(c, ksyms())
                    .ends_with("(calls may be missing: the task's log "
                               "was full)\n"));
}

TEST(Errors, ChromeSpansNestAsCalled) {
    ChromeFormatter chrome(ksyms());
    std::string out;
    chrome.begin(out);
    chrome.format(decoded(errors_record(open_frames())), out);
    chrome.end(out);
    std::size_t spans = 0;
    for (std::size_t at = 0; (at = out.find("\"cat\":\"errors\"", at)) != std::string::npos; at++) {
        spans++;
    }
    EXPECT_EQ(spans, 4u) << out;
    EXPECT_NE(
        out.find("{\"ph\":\"X\",\"name\":\"path_openat\",\"cat\":\"errors\",\"ts\":12345671.200,"
                 "\"dur\":6.000"),
        std::string::npos)
        << out;
    // the deepest is the first failure, and only it
    EXPECT_EQ(out.find("\"first\":true"), out.rfind("\"first\":true"));
    EXPECT_NE(out.find("\"result\":\"-ENOENT\",\"first\":true}"), std::string::npos) << out;
}

} // namespace
} // namespace fhook
