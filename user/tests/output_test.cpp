#include <sys/mman.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include <gtest/gtest.h>

#include <fhook/core/error.hpp>
#include <fhook/core/fd.hpp>
#include <fhook/core/output.hpp>

namespace fhook {
namespace {

std::pair<UniqueFd, UniqueFd> make_pipe() {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

std::string read_all(int fd) {
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof(buf))) > 0) {
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

TEST(OutputWriter, BuffersUntilCapacityOrFlush) {
    auto [r, w] = make_pipe();
    {
        OutputWriter out(w.get(), 16);
        out.append("0123456789");
        out.append("abc");
        EXPECT_EQ(out.buffer().size(), 13u); // below capacity: nothing written yet
        out.append("defghij");               // 20 >= 16: written
        EXPECT_TRUE(out.buffer().empty());
        out.buffer() += "tail";
        out.flush();
    }
    w.reset();
    EXPECT_EQ(read_all(r.get()), "0123456789abcdefghijtail");
}

TEST(OutputWriter, ClosedReaderIsOutputClosed) {
    auto old = std::signal(SIGPIPE, SIG_IGN);
    auto [r, w] = make_pipe();
    r.reset();
    OutputWriter out(w.get());
    out.buffer() = "line\n";
    try {
        out.flush();
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::OutputClosed);
    }
    std::signal(SIGPIPE, old);
}

TEST(UniqueFd, ClosesAndMoves) {
    auto [r, w] = make_pipe();
    int raw = w.get();
    UniqueFd moved(std::move(w));
    EXPECT_FALSE(w);
    EXPECT_EQ(moved.get(), raw);
    moved.reset();
    EXPECT_EQ(::write(raw, "x", 1), -1); // closed
    EXPECT_EQ(errno, EBADF);
}

TEST(Mapping, MapsAndUnmaps) {
    UniqueFd fd(::memfd_create("fhook-test", MFD_CLOEXEC));
    ASSERT_TRUE(fd);
    ASSERT_EQ(::ftruncate(fd.get(), 4096), 0);
    Mapping m = Mapping::map_shared(fd.get(), 4096, PROT_READ | PROT_WRITE, 0, "test");
    static_cast<char*>(m.data())[0] = 'x';
    Mapping other(std::move(m));
    EXPECT_FALSE(m);
    EXPECT_EQ(static_cast<char*>(other.data())[0], 'x');
    try {
        Mapping::map_shared(fd.get(), 4096, PROT_READ, 4095, "misaligned");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.sys_errno(), EINVAL);
    }
}

} // namespace
} // namespace fhook
