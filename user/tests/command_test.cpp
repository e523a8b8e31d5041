#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include <fhook/sys/command.hpp>
#include <fhook/sys/signals.hpp>

namespace fhook {
namespace {

sigset_t empty_mask() {
    sigset_t set;
    sigemptyset(&set);
    return set;
}

std::string temp_path(const char* name) {
    return ::testing::TempDir() + "fhook-" + name + "-" + std::to_string(::getpid());
}

bool exists(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
}

TEST(HeldCommand, RunsOnlyAfterRelease) {
    const std::string marker = temp_path("ran");
    ::unlink(marker.c_str());
    HeldCommand cmd({"sh", "-c", "touch " + marker}, empty_mask());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(cmd.exited());
    EXPECT_FALSE(exists(marker)) << "the command ran before release()";
    cmd.release();
    ASSERT_TRUE(cmd.exited(true));
    EXPECT_TRUE(WIFEXITED(cmd.status()));
    EXPECT_EQ(WEXITSTATUS(cmd.status()), 0);
    EXPECT_FALSE(cmd.exec_failed());
    EXPECT_TRUE(exists(marker));
    ::unlink(marker.c_str());
}

TEST(HeldCommand, UnreleasedCommandNeverRuns) {
    const std::string marker = temp_path("never");
    ::unlink(marker.c_str());
    pid_t pid;
    {
        HeldCommand cmd({"sh", "-c", "touch " + marker}, empty_mask());
        pid = cmd.pid();
    } // setup failed: destroyed without release
    EXPECT_EQ(::kill(pid, 0), -1) << "child not reaped";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(exists(marker));
}

TEST(HeldCommand, ExecFailureIsReported) {
    HeldCommand cmd({"/nonexistent/fhook-no-such-command"}, empty_mask());
    cmd.release();
    ASSERT_TRUE(cmd.exited(true));
    EXPECT_EQ(WEXITSTATUS(cmd.status()), 127);
    EXPECT_TRUE(cmd.exec_failed());
}

TEST(HeldCommand, ExitStatusOfTheCommand) {
    HeldCommand cmd({"sh", "-c", "exit 3"}, empty_mask());
    cmd.release();
    ASSERT_TRUE(cmd.exited(true));
    EXPECT_EQ(WEXITSTATUS(cmd.status()), 3);
    EXPECT_FALSE(cmd.exec_failed());
}

TEST(HeldCommand, ChildGetsTheGivenSignalMask) {
    // fhook blocks SIGINT/SIGTERM/SIGCHLD for its signalfd; the command must
    // not inherit that.
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigset_t old;
    ASSERT_EQ(::sigprocmask(SIG_BLOCK, &block, &old), 0);
    HeldCommand cmd({"sh", "-c", "kill -TERM $$; sleep 5"}, old);
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    cmd.release();
    ASSERT_TRUE(cmd.exited(true));
    EXPECT_TRUE(WIFSIGNALED(cmd.status()));
    EXPECT_EQ(WTERMSIG(cmd.status()), SIGTERM);
}

} // namespace
} // namespace fhook

namespace fhook {
namespace {

// Two watches ending in the order they began (fhook export's jobs): the
// mask afterwards is the one before, SIGTERM not left blocked.
TEST(SignalWatch, WatchesEndingInAnyOrderRestoreTheFirstMask) {
    sigset_t before, after;
    ::sigprocmask(SIG_SETMASK, nullptr, &before);
    ASSERT_FALSE(sigismember(&before, SIGTERM));
    auto a = std::make_unique<SignalWatch>();
    auto b = std::make_unique<SignalWatch>(true);
    EXPECT_FALSE(sigismember(&b->original_mask(), SIGTERM));
    a.reset();
    ::sigprocmask(SIG_SETMASK, nullptr, &after);
    EXPECT_TRUE(sigismember(&after, SIGTERM)); // (b still reads it)
    b.reset();
    ::sigprocmask(SIG_SETMASK, nullptr, &after);
    EXPECT_FALSE(sigismember(&after, SIGTERM));
    EXPECT_FALSE(sigismember(&after, SIGUSR1));
}

} // namespace
} // namespace fhook
