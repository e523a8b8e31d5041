#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <list>
#include <mutex>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <fhook/core/error.hpp>
#include <fhook/sys/http.hpp>

namespace fhook {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

// "HOST:PORT", ":PORT", "[V6]:PORT" as host and port ("" host: loopback)
std::pair<std::string, std::string> split_host_port(const std::string& address) {
    const std::size_t colon = address.rfind(':');
    if (colon == std::string::npos || colon + 1 == address.size()) {
        throw_invalid("'" + address + "' is not HOST:PORT (e.g. 127.0.0.1:9110 or :9110)");
    }
    std::string host = address.substr(0, colon);
    const std::string port = address.substr(colon + 1);
    if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 ||
        std::stoul(port) > 65535) {
        throw_invalid("'" + port + "' in '" + address + "' is not a TCP port (0-65535)");
    }
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    return {host.empty() ? "127.0.0.1" : host, port};
}

// A thread with every signal blocked (created so: a thread inherits its
// creator's mask), so that the process's signals go where the caller
// waits for them (the Tracer's signalfd), never to a server thread.
template <typename F>
std::thread quiet_thread(F f) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    std::thread t(std::move(f));
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return t;
}

// Runs the asynchronous operation `start` begins on `io`, this thread's
// only work, to its end: blocking I/O whose deadline is the stream's
// expiry (Asio's blocking calls wait without one: SO_RCVTIMEO only makes
// them poll again).
template <typename Start>
boost::system::error_code run_op(asio::io_context& io, Start&& start) {
    boost::system::error_code result;
    start([&result](boost::system::error_code ec, auto&&...) { result = ec; });
    io.restart();
    io.run();
    return result;
}

} // namespace

struct HttpServer::Impl {
    asio::io_context io;
    tcp::acceptor acceptor{io};
    HttpHandler handler;
    std::thread accepter;
    std::mutex mutex; // connections
    struct Connection {
        tcp::socket socket;
        std::thread thread;
        std::atomic<bool> done{false};
    };
    std::list<Connection> connections;
    std::atomic<bool> stopping{false};

    void serve(Connection& c) {
        // (on a duplicate of the socket: the connection's own stays open,
        // for the destructor's shutdown, until the thread is joined)
        asio::io_context io;
        beast::tcp_stream stream(io);
        boost::system::error_code ec;
        stream.socket().assign(c.socket.local_endpoint(ec).protocol(),
                               ::dup(c.socket.native_handle()), ec);
        boost::beast::flat_buffer buffer;
        while (!ec) {
            http::request<http::string_body> req;
            stream.expires_after(std::chrono::seconds(kIdleSeconds));
            ec = run_op(io, [&](auto done) { http::async_read(stream, buffer, req, done); });
            if (ec) {
                break;
            }
            HttpReply reply;
            try {
                reply = handler(
                    std::string_view(req.method_string().data(), req.method_string().size()),
                    std::string_view(req.target().data(), req.target().size()), req.body());
            } catch (const std::exception& e) {
                reply = {500, "text/plain; charset=utf-8", std::string(e.what()) + "\n"};
            }
            http::response<http::string_body> res{static_cast<http::status>(reply.status),
                                                  req.version()};
            res.set(http::field::server, "fhook");
            res.set(http::field::content_type, reply.content_type);
            res.keep_alive(req.keep_alive());
            res.body() = req.method() == http::verb::head ? std::string() : reply.body;
            res.prepare_payload();
            if (req.method() == http::verb::head) {
                res.content_length(reply.body.size());
            }
            stream.expires_after(std::chrono::seconds(kIdleSeconds));
            ec = run_op(io, [&](auto done) { http::async_write(stream, res, done); });
            if (!res.keep_alive() || stopping) {
                break;
            }
        }
        stream.socket().shutdown(tcp::socket::shutdown_both, ec);
        c.done = true;
    }

    // joins the connections that ended; under mutex
    void reap() {
        for (auto it = connections.begin(); it != connections.end();) {
            if (it->done) {
                it->thread.join();
                it = connections.erase(it);
            } else {
                ++it;
            }
        }
    }

    void accept_loop() {
        for (;;) {
            tcp::socket socket(io);
            boost::system::error_code ec;
            acceptor.accept(socket, ec);
            if (stopping) {
                return;
            }
            if (ec) {
                // (out of fds, say: not a busy loop)
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
                continue;
            }
            const std::lock_guard lock(mutex);
            reap();
            if (connections.size() >= kMaxConnections) {
                http::response<http::string_body> res{http::status::service_unavailable, 11};
                res.body() = "too many connections\n";
                res.prepare_payload();
                http::write(socket, res, ec);
                continue;
            }
            Connection& c = connections.emplace_back(std::move(socket));
            c.thread = quiet_thread([this, &c] { serve(c); });
        }
    }
};

HttpServer::HttpServer(const std::string& address, HttpHandler handler)
    : impl_(std::make_unique<Impl>()) {
    impl_->handler = std::move(handler);
    const auto [host, port] = split_host_port(address);
    boost::system::error_code ec;
    const auto ip = asio::ip::make_address(host, ec);
    if (ec) {
        throw_invalid("'" + host + "' in '" + address + "' is not an IP address");
    }
    const tcp::endpoint at(ip, static_cast<unsigned short>(std::stoul(port)));
    auto& a = impl_->acceptor;
    a.open(at.protocol(), ec);
    if (!ec) {
        a.set_option(tcp::acceptor::reuse_address(true), ec);
        a.bind(at, ec);
    }
    if (!ec) {
        a.listen(asio::socket_base::max_listen_connections, ec);
    }
    if (ec) {
        throw_runtime("cannot listen on " + address + ": " + ec.message(), ec.value());
    }
    impl_->accepter = quiet_thread([impl = impl_.get()] { impl->accept_loop(); });
}

HttpServer::~HttpServer() {
    impl_->stopping = true;
    // (wakes the blocked accept(2) and recv(2)s: Linux ends them on shutdown)
    ::shutdown(impl_->acceptor.native_handle(), SHUT_RDWR);
    impl_->accepter.join();
    const std::lock_guard lock(impl_->mutex);
    for (auto& c : impl_->connections) {
        ::shutdown(c.socket.native_handle(), SHUT_RDWR);
    }
    for (auto& c : impl_->connections) {
        c.thread.join();
    }
}

std::string HttpServer::url() const {
    const tcp::endpoint at = impl_->acceptor.local_endpoint();
    const std::string host =
        at.address().is_v6() ? "[" + at.address().to_string() + "]" : at.address().to_string();
    return "http://" + host + ":" + std::to_string(at.port());
}

struct HttpClient::Impl {
    std::chrono::milliseconds timeout{0};
    std::string authority, host, port = "80";
    asio::io_context io;
    beast::tcp_stream stream{io};
    boost::beast::flat_buffer buffer;
    bool open = false;

    void connect() {
        tcp::resolver resolver(io);
        boost::system::error_code ec;
        const auto endpoints = resolver.resolve(host, port, ec);
        if (!ec) {
            stream.expires_after(timeout);
            ec = run_op(io, [&](auto done) { stream.async_connect(endpoints, done); });
        }
        if (ec) {
            throw_runtime("cannot reach " + authority + ": " + ec.message(), ec.value());
        }
        buffer.clear();
        open = true;
    }

    void close() {
        boost::system::error_code ec;
        stream.socket().shutdown(tcp::socket::shutdown_both, ec);
        stream.socket().close(ec);
        open = false;
    }
};

HttpClient::HttpClient(const std::string& url, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
    impl_->timeout = timeout;
    constexpr std::string_view scheme = "http://";
    if (url.compare(0, scheme.size(), scheme) != 0) {
        throw_invalid("'" + url + "' is not an http:// URL (no TLS: a local collector or proxy)");
    }
    const std::size_t slash = url.find('/', scheme.size());
    impl_->authority = url.substr(
        scheme.size(), slash == std::string::npos ? std::string::npos : slash - scheme.size());
    impl_->host = impl_->authority;
    if (const std::size_t colon = impl_->authority.rfind(':');
        colon != std::string::npos && impl_->authority.find(']', colon) == std::string::npos) {
        impl_->host = impl_->authority.substr(0, colon);
        impl_->port = impl_->authority.substr(colon + 1);
    }
    if (impl_->host.size() >= 2 && impl_->host.front() == '[') {
        impl_->host = impl_->host.substr(1, impl_->host.size() - 2);
    }
}

HttpClient::~HttpClient() {
    if (impl_->open) {
        impl_->close();
    }
}

HttpReply HttpClient::request(std::string_view method, const std::string& target,
                              std::string_view content_type, std::string_view body,
                              bool keep_alive) {
    Impl& c = *impl_;
    const auto verb = http::string_to_verb(boost::beast::string_view(method.data(), method.size()));
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, c.authority);
    req.set(http::field::user_agent, "fhook/" + std::string(version()));
    if (!content_type.empty()) {
        req.set(http::field::content_type, std::string(content_type));
    }
    req.keep_alive(keep_alive);
    req.body() = std::string(body);
    req.prepare_payload();
    // (a kept connection the server closed meanwhile: once more on a new one)
    for (bool reused = c.open;; reused = false) {
        if (!c.open) {
            c.connect();
        }
        http::response<http::string_body> res;
        c.stream.expires_after(c.timeout);
        boost::system::error_code ec =
            run_op(c.io, [&](auto done) { http::async_write(c.stream, req, done); });
        if (!ec) {
            c.stream.expires_after(c.timeout);
            ec = run_op(c.io, [&](auto done) { http::async_read(c.stream, c.buffer, res, done); });
        }
        if (ec) {
            c.close();
            if (reused) {
                continue;
            }
            throw_runtime(std::string(method) + " http://" + c.authority + target + ": " +
                              ec.message(),
                          ec.value());
        }
        if (!keep_alive || !res.keep_alive()) {
            c.close();
        }
        return {res.result_int(), std::string(res[http::field::content_type]), res.body()};
    }
}

HttpReply http_request(std::string_view method, const std::string& url,
                       std::string_view content_type, std::string_view body) {
    const std::size_t slash = url.find('/', url.find("://") + 3);
    HttpClient client(url);
    return client.request(method, slash == std::string::npos ? "/" : url.substr(slash),
                          content_type, body, false);
}

} // namespace fhook

namespace fhook {

std::string url_with_path(const std::string& url, const char* path) {
    const std::size_t host = url.find("://");
    const std::size_t at = url.find('/', host == std::string::npos ? 0 : host + 3);
    return at == std::string::npos || at + 1 == url.size() ? url.substr(0, at) + path : url;
}

void http_send(std::string_view method, const std::string& url, std::string_view content_type,
               std::string_view body, const std::string& who) {
    const HttpReply reply = http_request(method, url, content_type, body);
    if (reply.status < 200 || reply.status > 299) {
        std::string said = reply.body.substr(0, 200);
        while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) {
            said.pop_back();
        }
        throw_runtime(who + " at " + url + " answered " + std::to_string(reply.status) +
                      (said.empty() ? "" : ": " + said));
    }
}

} // namespace fhook
