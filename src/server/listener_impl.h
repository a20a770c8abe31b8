// The listener's shared state (Listener::Impl) and the names of the
// Boost libraries it is written with: for listener.cc and session.h alone.
//
// Thread safety: the atomics and the IdleConnections, BodyBudget and
// LogLimit members are shared by every thread; the rest is set before the
// I/O threads start, or touched by the I/O threads' Accept alone.
#pragma once

#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "server/conn_limits.h"
#include "server/listener.h"
#include "server/log_limit.h"

namespace warden::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

struct Listener::Impl {
  ListenerOptions options;
  Handler handler;
  LogLine log;
  asio::io_context io{options.io_threads};
  asio::thread_pool handlers{static_cast<size_t>(std::max(1, options.handler_threads))};
  std::optional<ssl::context> tls;
  tcp::acceptor acceptor{io};
  std::vector<std::thread> threads;
  std::atomic<bool> stopping{false};
  // Requests read and not yet answered (their handler runs, or their
  // response is being written): Stop waits for these.
  std::atomic<int> in_flight{0};
  std::atomic<int> connections{0};         // open sessions (max_connections)
  std::atomic<bool> probe_answered{true};  // IoTurns
  asio::steady_timer accept_pause{io};
  // When an accept error was last logged: a flood that exhausts the fds
  // fails every accept, and one line a second says so.
  std::chrono::steady_clock::time_point accept_error_logged{};
  // The same for failed TLS handshakes (any client can fail them at will).
  LogLimit handshake_errors;
  ListenerHooks hooks;
  IdleConnections idle;
  BodyBudget bodies{options.max_body_memory};
  int bound_port = 0;

  Impl(ListenerOptions o, Handler h, LogLine l, ListenerHooks k)
      : options(std::move(o)), handler(std::move(h)), log(std::move(l)), hooks(std::move(k)) {}

  void Accept();
  // Answers a connection over max_connections with 503 and closes it.
  void Refuse(tcp::socket socket);
  template <typename Stream>
  void Serve(std::shared_ptr<Stream> stream, std::string peer);
};

}  // namespace warden::server
