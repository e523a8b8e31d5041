// Plain HTTP/1.1 on Boost.Beast (header-only, so the static CLI keeps it):
// the metrics endpoint (`--listen`) and the requests of `--push` and
// `--otlp`.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace fhook {

struct HttpReply {
    unsigned status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
};

// Answers a request (method, target: "/metrics?x=1", its body) on a server
// thread.
using HttpHandler = std::function<HttpReply(std::string_view method, std::string_view target,
                                            std::string_view body)>;

// An HTTP server on its own threads until destroyed: each connection on a
// thread of its own (at most kMaxConnections at once; more get 503), idle
// connections closed after kIdleSeconds.  Its threads block every signal:
// the process's signals stay the caller's.
class HttpServer {
public:
    static constexpr unsigned kMaxConnections = 8;
    static constexpr unsigned kIdleSeconds = 30;

    // Listens on `address`: "HOST:PORT", ":PORT" (127.0.0.1: the loopback
    // unless an address is given), "[V6]:PORT"; port 0 picks one.  An
    // Invalid Error for a malformed address, a Runtime one when it cannot
    // listen there.
    HttpServer(const std::string& address, HttpHandler handler);
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;
    ~HttpServer();

    // "http://127.0.0.1:9110": where it listens (the port picked for 0)
    std::string url() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Requests to one server over one connection, kept between them (a
// scraper's): "http://HOST[:PORT]" (a path in `url` is ignored).  The
// connection is made at the first request, and again when the server
// closed it meanwhile.
class HttpClient {
public:
    // `timeout`: for each connect, write and read (a server that accepts
    // and never answers is a Runtime Error, not a hang)
    explicit HttpClient(const std::string& url,
                        std::chrono::milliseconds timeout = std::chrono::seconds(30));
    HttpClient(const HttpClient&) = delete;
    HttpClient& operator=(const HttpClient&) = delete;
    ~HttpClient();
    // `target`: "/metrics"; a Runtime Error as http_request()'s
    HttpReply request(std::string_view method, const std::string& target,
                      std::string_view content_type = {}, std::string_view body = {},
                      bool keep_alive = true);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// One request to `url` ("http://HOST[:PORT]/PATH": no TLS), its reply.  A
// Runtime Error when the host cannot be reached or answers nothing.
HttpReply http_request(std::string_view method, const std::string& url,
                       std::string_view content_type = {}, std::string_view body = {});

// `url`, or `url` with `path` where it has none (or only "/"): a
// collector's or gateway's bare address given, its usual endpoint.
std::string url_with_path(const std::string& url, const char* path);

// http_request(), a 2xx answer expected: else a Runtime Error naming `who`
// (the Pushgateway, the OTLP endpoint), the status and the start of the body.
void http_send(std::string_view method, const std::string& url, std::string_view content_type,
               std::string_view body, const std::string& who);

} // namespace fhook
