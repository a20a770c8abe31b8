#include "server/listener.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <atomic>
#include <deque>
#include <limits>
#include <optional>
#include <thread>
#include <vector>

#include "server/api.h"
#include "server/framing.h"
#include "server/url.h"

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
  std::atomic<int> connections{0};  // open sessions (max_connections)
  std::atomic<bool> probe_answered{true};  // IoTurns
  asio::steady_timer accept_pause{io};
  // When an accept error was last logged: a flood that exhausts the fds
  // fails every accept, and one line a second says so.
  std::chrono::steady_clock::time_point accept_error_logged{};
  // The same for failed TLS handshakes (any client can fail them at will),
  // from the I/O threads: the steady clock's ms of the last line, and how
  // many failures it did not tell of.
  std::atomic<int64_t> handshake_error_logged_ms{std::numeric_limits<int64_t>::min() / 2};
  std::atomic<int> handshake_errors_untold{0};
  void LogHandshakeFailure(const std::string& peer, const std::string& why);
  int bound_port = 0;

  Impl(ListenerOptions o, Handler h, LogLine l)
      : options(std::move(o)), handler(std::move(h)), log(std::move(l)) {}

  void Accept();
  // Answers a connection over max_connections with 503 and closes it.
  void Refuse(tcp::socket socket);
  template <typename Stream>
  void Serve(std::shared_ptr<Stream> stream, std::string peer);
};

void Listener::Impl::LogHandshakeFailure(const std::string& peer, const std::string& why) {
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  int64_t last = handshake_error_logged_ms.load();
  if (now - last < 1000 || !handshake_error_logged_ms.compare_exchange_strong(last, now)) {
    ++handshake_errors_untold;
    return;
  }
  const int untold = handshake_errors_untold.exchange(0);
  log("TLS handshake with " + peer + " failed: " + why +
      (untold > 0 ? " (and " + std::to_string(untold) + " more in the last second, not logged)"
                  : std::string()));
}

namespace {

// One connection: reads a request, hands it to the handler pool, writes the
// response, and reads the next (keep-alive) until the client or a limit
// ends it. Every step of a connection runs on its strand.
template <typename Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(Listener::Impl& server, Stream stream, std::string peer)
      : server_(server),
        stream_(std::move(stream)),
        peer_(std::move(peer)),
        max_age_(stream_.get_executor()) {
    ++server_.connections;
  }
  ~Session() { --server_.connections; }

  void Start() {
    if constexpr (kTls) {
      beast::get_lowest_layer(stream_).expires_after(server_.options.io_timeout);
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) {
                                  self->server_.LogHandshakeFailure(self->peer_, ec.message());
                                  return;
                                }
                                self->Read(/*first=*/true);
                              });
    } else {
      Read(/*first=*/true);
    }
  }

 private:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  void Read(bool first) {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(server_.options.max_header_bytes));
    parser_->body_limit(server_.options.max_body_bytes);
    // The first request must come within the I/O timeout; between requests
    // of a kept-alive connection, the idle timeout applies.
    beast::get_lowest_layer(stream_).expires_after(first ? server_.options.io_timeout
                                                         : server_.options.idle_timeout);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) {
          self->OnHeader(ec);
        });
  }

  void OnHeader(beast::error_code ec) {
    if (ec) return OnReadError(ec);
    // A body framed any other way than by Content-Length or `chunked` is
    // refused before a byte of it is read, and the connection closed: its
    // rest must never be read as another request (server/framing.h).
    const auto& head = parser_->get();
    Framing framing;
    for (const auto& field : head) {
      if (field.name() == http::field::transfer_encoding) {
        framing.transfer_encodings.emplace_back(field.value().data(), field.value().size());
      }
      if (field.name() == http::field::content_length) framing.content_length = true;
    }
    framing.version = static_cast<int>(head.version());
    if (Status s = CheckFraming(framing); !s.ok()) {
      return Write(ErrorResponse(400, "bad_request", s.message()), /*keep_alive=*/false,
                   /*counted=*/false);
    }
    // Once a request has begun, the whole of it must come within the I/O
    // timeout (a client that trickles a body is cut off).
    beast::get_lowest_layer(stream_).expires_after(server_.options.io_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return self->OnReadError(ec);
                       self->Dispatch();
                     });
  }

  void OnReadError(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == asio::error::operation_aborted || ec == asio::error::eof ||
        ec == asio::error::connection_reset) {
      return Close();
    }
    // The request is not one we can read: answer once, then close.
    int status = 400;
    std::string code = "bad_request";
    std::string message = "malformed HTTP request: " + ec.message();
    if (ec == http::error::body_limit) {
      status = 413;
      code = "body_too_large";
      message = "the request body is larger than " +
                std::to_string(server_.options.max_body_bytes) + " bytes";
    } else if (ec == http::error::header_limit) {
      status = 431;
      code = "headers_too_large";
      message = "the request headers are larger than " +
                std::to_string(server_.options.max_header_bytes) + " bytes";
    }
    Write(ErrorResponse(status, code, message), /*keep_alive=*/false, /*counted=*/false);
  }

  void Dispatch() {
    ++server_.in_flight;
    http::request<http::string_body> raw = parser_->release();
    const bool keep_alive = raw.keep_alive() && !server_.stopping;
    auto req = std::make_shared<Request>();
    req->method = std::string(raw.method_string());
    req->peer = peer_;
    for (const auto& field : raw) {
      std::string name(field.name_string());
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      req->headers[name] = std::string(field.value());
    }
    req->body = std::move(raw.body());
    Status target =
        SplitTarget(std::string(raw.target()), &req->path, &req->query, &req->segments);
    if (!target.ok()) {
      // The message quotes the target: ErrorResponse escapes it as JSON.
      return Write(ErrorResponse(400, "bad_request", "bad request target (" + target.message() + ")"),
                   false, true);
    }
    // The handler may block on the store: off the I/O threads.
    asio::post(server_.handlers, [self = this->shared_from_this(), req, keep_alive] {
      Response r;
      try {
        r = self->server_.handler(*req);
      } catch (const std::exception& e) {
        self->server_.log(std::string("handler threw: ") + e.what());
        r = ErrorResponse(500, "internal", "internal error");
      }
      asio::post(self->stream_.get_executor(),
                 [self, r = std::move(r), keep_alive]() mutable {
                   self->Write(std::move(r), keep_alive, true);
                 });
    });
  }

  // `counted`: the answer to a request counted in flight (Dispatch).
  void Write(Response r, bool keep_alive, bool counted) {
    if (r.stream && counted) return StartStream(std::move(r));
    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(r.status), 11);
    res->set(http::field::server, "warden");
    res->set(http::field::content_type, r.content_type);
    res->set("X-Content-Type-Options", "nosniff");
    res->set(http::field::cache_control, "no-store");
    for (const auto& [name, value] : r.headers) res->set(name, value);
    res->keep_alive(keep_alive);
    res->body() = std::move(r.body);
    res->prepare_payload();
    beast::get_lowest_layer(stream_).expires_after(server_.options.io_timeout);
    http::async_write(stream_, *res,
                      [self = this->shared_from_this(), res, keep_alive,
                       counted](beast::error_code ec, size_t) {
                        if (counted) --self->server_.in_flight;
                        if (ec || !keep_alive) return self->Close();
                        self->Read(/*first=*/false);
                      });
  }

  // An event stream: the headers, then what its source sends, until the
  // client goes (or sends anything), a write fails or times out, the client
  // falls kMaxPending events behind, or the stream's max_age.
  void StartStream(Response r) {
    std::string head = "HTTP/1.1 " + std::to_string(r.status) +
                       " OK\r\nServer: warden\r\nContent-Type: text/event-stream\r\n"
                       "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
                       "X-Accel-Buffering: no\r\nConnection: close\r\n";
    for (const auto& [name, value] : r.headers) head += name + ": " + value + "\r\n";
    head += "\r\n";
    --server_.in_flight;  // answered: Stop need not wait for it to end
    Queue(std::move(head));
    std::weak_ptr<Session> weak = this->shared_from_this();
    auto send = [weak, executor = stream_.get_executor()](std::string text) {
      auto self = weak.lock();
      if (!self || self->stream_ended_) return false;
      asio::post(executor,
                 [self, text = std::move(text)]() mutable { self->Queue(std::move(text)); });
      return true;
    };
    subscription_ = r.stream->attach(std::move(send));
    max_age_.expires_after(r.stream->max_age);
    max_age_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (!ec) self->EndStream();
    });
    beast::get_lowest_layer(stream_).socket().async_wait(
        tcp::socket::wait_read,
        [self = this->shared_from_this()](beast::error_code) { self->EndStream(); });
  }

  void Queue(std::string text) {
    static constexpr size_t kMaxPending = 256;
    if (stream_ended_) return;
    if (pending_.size() >= kMaxPending) return EndStream();
    pending_.push_back(std::move(text));
    if (pending_.size() == 1) WriteNext();
  }

  void WriteNext() {
    beast::get_lowest_layer(stream_).expires_after(server_.options.io_timeout);
    asio::async_write(stream_, asio::buffer(pending_.front()),
                      [self = this->shared_from_this()](beast::error_code ec, size_t) {
                        if (ec || self->stream_ended_) return self->EndStream();
                        self->pending_.pop_front();
                        if (!self->pending_.empty()) self->WriteNext();
                      });
  }

  // Closes at once, without a TLS close_notify: the client sends nothing
  // on an event stream, and it reconnects however the stream ends. Closing
  // cancels what is pending (a write, the wait for the client, max_age),
  // and the last of them lets the session go.
  void EndStream() {
    if (stream_ended_) return;
    stream_ended_ = true;
    subscription_.reset();
    max_age_.cancel();
    beast::error_code ec;
    beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_both, ec);
    beast::get_lowest_layer(stream_).close();
  }

  void Close() {
    beast::error_code ec;
    if constexpr (kTls) {
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(2));
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {});
    } else {
      // Half-close, then read what the client still sends until it closes
      // too: closing with unread bytes (a request refused for its size)
      // would reset the connection, and the client could lose our answer.
      stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(2));
      Drain();
    }
  }

  void Drain() {
    stream_.async_read_some(asio::buffer(scratch_),
                            [self = this->shared_from_this()](beast::error_code ec, size_t) {
                              if (!ec) self->Drain();
                            });
  }

  Listener::Impl& server_;
  Stream stream_;
  std::string peer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  char scratch_[4096];
  // An event stream's (StartStream); all on the strand but stream_ended_,
  // which the source's `send` reads from its own thread.
  std::atomic<bool> stream_ended_{false};
  // The front one is being written; kept until the session ends, since a
  // write cancelled by EndStream may still be reading its buffer.
  std::deque<std::string> pending_;
  std::shared_ptr<void> subscription_;
  asio::steady_timer max_age_;
};

}  // namespace

void Listener::Impl::Refuse(tcp::socket socket) {
  // Plain HTTP only (a TLS client would need a handshake first): written
  // without blocking, into a fresh socket's empty send buffer.
  if (!tls) {
    static const std::string kBody =
        R"({"error": {"code": "too_many_connections", "message": "the server holds its )"
        R"(maximum of open connections (--max-connections); try again"}})";
    const std::string response =
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
        std::to_string(kBody.size()) + "\r\n\r\n" + kBody;
    beast::error_code ec;
    socket.non_blocking(true, ec);
    if (!ec) socket.write_some(asio::buffer(response), ec);
  }
  beast::error_code ec;
  socket.shutdown(tcp::socket::shutdown_both, ec);
  socket.close(ec);
}

void Listener::Impl::Accept() {
  acceptor.async_accept(asio::make_strand(io), [this](beast::error_code ec, tcp::socket socket) {
    if (ec) {
      if (stopping || ec == asio::error::operation_aborted) return;
      // Out of fds (a connection flood) or another passing failure:
      // accepting again at once would spin, so pause, and say so once a
      // second at most.
      const auto now = std::chrono::steady_clock::now();
      if (now - accept_error_logged >= std::chrono::seconds(1)) {
        accept_error_logged = now;
        log("accept failed: " + ec.message() + " (" + std::to_string(connections.load()) +
            " connections open); pausing accepts for 50 ms");
      }
      accept_pause.expires_after(std::chrono::milliseconds(50));
      accept_pause.async_wait([this](beast::error_code wait_ec) {
        if (!wait_ec && !stopping) Accept();
      });
      return;
    }
    if (connections >= options.max_connections) {
      Refuse(std::move(socket));
      Accept();
      return;
    }
    beast::error_code peer_ec;
    const tcp::endpoint peer = socket.remote_endpoint(peer_ec);
    std::string who = peer_ec ? "unknown" : peer.address().to_string() + ":" +
                                                std::to_string(peer.port());
    if (tls) {
      using Tls = beast::ssl_stream<beast::tcp_stream>;
      std::make_shared<Session<Tls>>(*this, Tls(beast::tcp_stream(std::move(socket)), *tls),
                                     std::move(who))
          ->Start();
    } else {
      std::make_shared<Session<beast::tcp_stream>>(*this, beast::tcp_stream(std::move(socket)),
                                                   std::move(who))
          ->Start();
    }
    Accept();
  });
}

Result<std::unique_ptr<Listener>> Listener::Start(const ListenerOptions& options,
                                                  Handler handler, LogLine log) {
  auto impl = std::make_unique<Impl>(options, std::move(handler), std::move(log));
  if (!options.tls_cert.empty() || !options.tls_key.empty()) {
    if (options.tls_cert.empty() || options.tls_key.empty()) {
      return InvalidArgument("TLS needs both --tls-cert and --tls-key");
    }
    impl->tls.emplace(ssl::context::tls_server);
    impl->tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                           ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                           ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
    // TLS 1.2 offers only forward-secret AEAD suites (TLS 1.3's are all of
    // that kind), and the server's order wins over the client's.
    SSL_CTX* native = impl->tls->native_handle();
    SSL_CTX_set_options(native, SSL_OP_CIPHER_SERVER_PREFERENCE);
    if (SSL_CTX_set_cipher_list(native, "ECDHE+AESGCM:ECDHE+CHACHA20") != 1) {
      return Internal("OpenSSL offers no ECDHE AEAD cipher suite for TLS 1.2");
    }
    beast::error_code ec;
    impl->tls->use_certificate_chain_file(options.tls_cert, ec);
    if (ec) {
      return InvalidArgument("--tls-cert " + options.tls_cert + ": " + ec.message());
    }
    impl->tls->use_private_key_file(options.tls_key, ssl::context::pem, ec);
    if (ec) return InvalidArgument("--tls-key " + options.tls_key + ": " + ec.message());
  }
  beast::error_code ec;
  const asio::ip::address address = asio::ip::make_address(options.host, ec);
  if (ec) return InvalidArgument("--listen: '" + options.host + "' is not an IP address");
  const tcp::endpoint endpoint(address, static_cast<uint16_t>(options.port));
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Unavailable("cannot listen on " + options.host + ":" + std::to_string(options.port) +
                       ": " + ec.message());
  }
  impl->bound_port = impl->acceptor.local_endpoint().port();
  impl->Accept();
  for (int i = 0; i < std::max(1, options.io_threads); ++i) {
    impl->threads.emplace_back([io = &impl->io] { io->run(); });
  }
  return std::unique_ptr<Listener>(new Listener(std::move(impl)));
}

Listener::Listener(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Listener::~Listener() { Stop(std::chrono::milliseconds(0)); }

int Listener::port() const { return impl_->bound_port; }

bool Listener::IoTurns() {
  if (impl_->stopping) return true;
  // Unanswered: the probe posted last time still waits; one is enough.
  if (!impl_->probe_answered.exchange(false)) return false;
  asio::post(impl_->io, [impl = impl_.get()] { impl->probe_answered = true; });
  return true;
}

void Listener::Stop(std::chrono::milliseconds grace) {
  if (impl_->threads.empty()) return;
  impl_->stopping = true;
  asio::post(impl_->io, [impl = impl_.get()] {
    beast::error_code ec;
    impl->acceptor.close(ec);
    impl->accept_pause.cancel();
  });
  // Requests in progress get their answers; a kept-alive connection is not
  // read again once stopping is set, and idle ones are dropped with io.
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (impl_->in_flight > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  impl_->io.stop();
  for (std::thread& t : impl_->threads) t.join();
  impl_->threads.clear();
  impl_->handlers.join();
}

}  // namespace warden::server
