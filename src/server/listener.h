// The HTTP(S) listener: Boost.Beast over Asio. A few I/O threads serve
// every connection without blocking (a slow or idle client costs a socket
// and a buffer, not a thread), and handlers, which call the store and may
// block, run on a separate pool: a burst of slow queries cannot stall the
// reading and writing of other connections, and thousands of quiet
// connections cannot take the threads the queries need.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "server/http_types.h"
#include "warden/status.h"

namespace warden::server {

struct ListenerOptions {
  std::string host = "127.0.0.1";
  int port = 7878;  // 0: any free port (see Listener::port)
  std::string tls_cert;  // PEM files; both empty: plain HTTP
  std::string tls_key;
  size_t max_header_bytes = 16 * 1024;
  size_t max_body_bytes = 8 * 1024 * 1024;
  // A client must send each request (headers and body) within this, and
  // read each response within it too: a slow client is cut off.
  std::chrono::milliseconds io_timeout{10'000};
  // An idle keep-alive connection is closed after this.
  std::chrono::milliseconds idle_timeout{60'000};
  // Connections beyond this are answered 503 and closed at once, so a
  // flood cannot take every fd (the listener's and the database's). At the
  // limit, a new connection first closes the one that has waited longest
  // for a request (idle keep-alive, or never sent one): idle connections
  // cannot lock out clients that have something to send.
  int max_connections = 10'000;
  // What the bodies of requests being read may hold together, across all
  // connections: a request whose body (its Content-Length; max_body_bytes
  // for a chunked one) would not fit is answered 503 with Retry-After, and
  // its body not read. Bodies are read only after the request was admitted
  // (ListenerHooks::admit), so unauthenticated uploads hold nothing.
  size_t max_body_memory = 64 * 1024 * 1024;
  int io_threads = 2;
  int handler_threads = 4;
};

// Takes a request and returns its response; runs on a handler thread and
// may block. Never throws (what it throws is answered 500 and logged).
using Handler = std::function<Response(const Request&)>;
// Where the listener reports what no response can carry (TLS handshake
// failures, a handler that threw): one line each.
using LogLine = std::function<void(const std::string&)>;

// What else a listener may be given (each may be empty).
struct ListenerHooks {
  // Answers a request that has no body on the I/O thread, without waiting
  // for a handler thread (nullopt: the handler pool answers it). For what
  // must answer when every handler is busy: /healthz. Must not block.
  std::function<std::optional<Response>(const Request&)> answer_now;
  // Called with a request's head (no body yet) when it declares a body, on
  // a handler thread: a response refuses it before its body is read (the
  // connection is closed after it), nullopt lets its body be read. So an
  // upload without a valid token costs no memory.
  std::function<std::optional<Response>(const Request&)> admit;
  // After each response is written (or failed to be): the request (empty
  // method when it could not be read), its status, and how long it took.
  std::function<void(const Request&, const Response&, std::chrono::milliseconds)> access;
};

class Listener {
 public:
  // Binds and starts serving at once.
  static Result<std::unique_ptr<Listener>> Start(const ListenerOptions& options, Handler handler,
                                                 LogLine log, ListenerHooks hooks = {});
  ~Listener();  // Stop()s
  int port() const;  // the bound port
  // Whether the I/O threads ran the probe the previous call posted (true on
  // the first call, and once stopping), then posts another: called every
  // few seconds, false means no I/O thread turned for that long (a wedged
  // event loop). Handlers waiting on the store are not judged. Any thread.
  bool IoTurns();
  // Stops accepting; requests in progress get their responses for up to
  // `grace`, then every connection is closed.
  void Stop(std::chrono::milliseconds grace = std::chrono::milliseconds(5000));

  struct Impl;

 private:
  explicit Listener(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace warden::server
