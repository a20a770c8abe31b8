// One connection of the listener (listener.h): its requests read, handed
// to the handler pool and answered, one after another, on its strand.
// Included by listener.cc alone.
#pragma once

#include <sys/socket.h>

#include <cerrno>
#include <deque>
#include <memory>
#include <string>

#include "server/api.h"
#include "server/framing.h"
#include "server/listener_impl.h"
#include "server/url.h"

namespace warden::server::internal {

// One connection: reads a request, hands it to the handler pool, writes the
// response, and reads the next (keep-alive) until the client or a limit
// ends it. Every step of a connection runs on its strand.
//
// A request's head is read first. A body is read only once the request is
// admitted (ListenerHooks::admit: its Host, Origin and token, on a handler
// thread) and its size reserved in the shared BodyBudget; a refused one is
// answered and the connection closed, its body never held.
template <typename Stream>
class Session : public IdleConnections::Member,
                public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(Listener::Impl& server, Stream stream, std::string peer)
      : server_(server),
        stream_(std::move(stream)),
        peer_(std::move(peer)),
        max_age_(stream_.get_executor()) {
    ++server_.connections;
  }
  ~Session() {
    server_.idle.Leave(this);
    ReleaseBody();
    --server_.connections;
  }

  void Start() {
    // Until its first request's head has come, a connection is idle.
    server_.idle.Enter(this, this->weak_from_this());
    if constexpr (kTls) {
      beast::get_lowest_layer(stream_).expires_after(server_.options.io_timeout);
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) {
                                  if (self->evicted_) return;
                                  if (auto more = self->server_.handshake_errors.Allow()) {
                                    self->server_.log("TLS handshake with " + self->peer_ +
                                                      " failed: " + ec.message() + *more);
                                  }
                                  return;
                                }
                                self->Read(/*first=*/true);
                              });
    } else {
      Read(/*first=*/true);
    }
  }

  void Evict() override {
    asio::post(stream_.get_executor(), [self = this->shared_from_this()] {
      self->evicted_ = true;
      beast::error_code ec;
      beast::get_lowest_layer(self->stream_).socket().close(ec);
    });
  }

 private:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  void Read(bool first) {
    server_.idle.Enter(this, this->weak_from_this());
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(server_.options.max_header_bytes));
    parser_->body_limit(server_.options.max_body_bytes);
    head_.reset();
    // The first request must come within the I/O timeout; between requests
    // of a kept-alive connection, the idle timeout applies.
    beast::get_lowest_layer(stream_).expires_after(first ? server_.options.io_timeout
                                                         : server_.options.idle_timeout);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(beast::error_code ec) {
    server_.idle.Leave(this);
    started_ = std::chrono::steady_clock::now();
    if (ec) return OnReadError(ec);
    const auto& head = parser_->get();
    head_ = std::make_shared<Request>();
    head_->method = std::string(head.method_string());
    head_->peer = peer_;
    for (const auto& field : head) {
      std::string name(field.name_string());
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      head_->headers[name] = std::string(field.value());
    }
    // A body framed any other way than by Content-Length or `chunked` is
    // refused before a byte of it is read, and the connection closed: its
    // rest must never be read as another request (server/framing.h).
    Framing framing;
    for (const auto& field : head) {
      if (field.name() == http::field::transfer_encoding) {
        framing.transfer_encodings.emplace_back(field.value().data(), field.value().size());
      }
      if (field.name() == http::field::content_length) framing.content_length = true;
    }
    framing.version = static_cast<int>(head.version());
    if (Status s = CheckFraming(framing); !s.ok()) {
      return Write(ErrorResponse(400, "bad_request", s.message()),
                   /*keep_alive=*/false,
                   /*counted=*/false);
    }
    const std::string target_text(head.target());
    head_->raw_path = target_text.substr(0, target_text.find('?'));
    Status target = SplitTarget(target_text, &head_->path, &head_->query, &head_->segments);
    if (!target.ok()) {
      // The message quotes the target: ErrorResponse escapes it as JSON.
      return Write(
          ErrorResponse(400, "bad_request", "bad request target (" + target.message() + ")"), false,
          false);
    }
    const bool chunked = parser_->chunked();
    const uint64_t length = parser_->content_length().value_or(0);
    head_->declares_body = chunked || length > 0;
    // Beast answers the length check only once the body is read: before
    // anything is reserved, say 413 at once.
    if (length > server_.options.max_body_bytes) return OnReadError(http::error::body_limit);
    if (!head_->declares_body) {
      // What must answer even when every handler is busy (/healthz).
      if (server_.hooks.answer_now) {
        if (std::optional<Response> now = server_.hooks.answer_now(*head_)) {
          ++server_.in_flight;
          return Write(std::move(*now), head.keep_alive() && !server_.stopping, true);
        }
      }
      return ReadBody();
    }
    if (!server_.hooks.admit) return Reserve(chunked ? server_.options.max_body_bytes : length);
    asio::post(server_.handlers, [self = this->shared_from_this(), chunked, length] {
      std::optional<Response> refusal;
      try {
        refusal = self->server_.hooks.admit(*self->head_);
      } catch (const std::exception& e) {
        self->server_.log(std::string("handler threw: ") + e.what());
        refusal = ErrorResponse(500, "internal", "internal error");
      }
      asio::post(self->stream_.get_executor(),
                 [self, refusal = std::move(refusal), chunked, length]() mutable {
                   if (refusal)
                     return self->Write(std::move(*refusal), /*keep_alive=*/false, false);
                   self->Reserve(chunked ? self->server_.options.max_body_bytes : length);
                 });
    });
  }

  // Takes `bytes` of the body budget, then reads the body; 503 if they are
  // not to be had (bodies in flight hold the rest).
  void Reserve(size_t bytes) {
    if (!server_.bodies.Take(bytes)) {
      Response r = ErrorResponse(503, "too_many_bodies",
                                 "the server holds as many request bodies as it may at once; "
                                 "try again");
      r.headers.emplace_back("Retry-After", "1");
      return Write(std::move(r), /*keep_alive=*/false, false);
    }
    reserved_ = bytes;
    // A client that waits for leave to send its body (Expect: 100-continue,
    // as curl does for large ones) gets it now rather than after a delay.
    if (beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
      static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      asio::async_write(stream_, asio::buffer(kContinue),
                        [self = this->shared_from_this()](beast::error_code ec, size_t) {
                          if (ec) return self->Close();
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReleaseBody() {
    if (reserved_ > 0) server_.bodies.Give(reserved_);
    reserved_ = 0;
  }

  void ReadBody() {
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
    ReleaseBody();
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == asio::error::operation_aborted || ec == asio::error::eof ||
        ec == asio::error::connection_reset || ec == asio::error::bad_descriptor) {
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
    Write(ErrorResponse(status, code, message), /*keep_alive=*/false,
          /*counted=*/false);
  }

  void Dispatch() {
    ++server_.in_flight;
    http::request<http::string_body> raw = parser_->release();
    const bool keep_alive = raw.keep_alive() && !server_.stopping;
    auto req = head_;
    req->body = std::move(raw.body());
    // The handler may block on the store: off the I/O threads.
    asio::post(server_.handlers, [self = this->shared_from_this(), req, keep_alive] {
      Response r;
      try {
        r = self->server_.handler(*req);
      } catch (const std::exception& e) {
        self->server_.log(std::string("handler threw: ") + e.what());
        r = ErrorResponse(500, "internal", "internal error");
      }
      req->body.clear();
      req->body.shrink_to_fit();
      asio::post(self->stream_.get_executor(), [self, r = std::move(r), keep_alive]() mutable {
        self->ReleaseBody();
        self->Write(std::move(r), keep_alive, true);
      });
    });
  }

  // `counted`: the answer to a request counted in flight (Dispatch).
  void Write(Response r, bool keep_alive, bool counted) {
    if (server_.hooks.access) {
      Request unread;  // the request could not be read as one
      unread.peer = peer_;
      server_.hooks.access(head_ ? *head_ : unread, r,
                           std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::steady_clock::now() - started_));
    }
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
    http::async_write(
        stream_, *res,
        [self = this->shared_from_this(), res, keep_alive, counted](beast::error_code ec, size_t) {
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
    WatchClient();
  }

  // The client sends nothing on an event stream: once its socket has
  // something to read (its FIN, a reset, stray bytes), it has gone or broken
  // the protocol, and the stream ends. The wait may also end with nothing
  // there: the request's own arrival, an edge the reactor reports late
  // after the request was read without it (seen under ThreadSanitizer: a
  // stream ended under a client that was still listening). Then it waits
  // again.
  void WatchClient() {
    beast::get_lowest_layer(stream_).socket().async_wait(
        tcp::socket::wait_read, [self = this->shared_from_this()](beast::error_code ec) {
          if (!ec && !self->stream_ended_ && self->NothingToRead()) return self->WatchClient();
          self->EndStream();
        });
  }

  bool NothingToRead() {
    char byte;
    const ssize_t n = ::recv(beast::get_lowest_layer(stream_).socket().native_handle(), &byte, 1,
                             MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
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
  // The request being read or answered: its head from OnHeader on, its
  // body once read (Dispatch); when it began; the bytes of the body budget
  // it holds. All on the strand.
  std::shared_ptr<Request> head_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  size_t reserved_ = 0;
  bool evicted_ = false;  // closed by IdleConnections::EvictOldest
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

}  // namespace warden::server::internal
