#include "server/listener.h"

#include <limits>

#include "server/api.h"
#include "server/listener_impl.h"
#include "server/session.h"

namespace warden::server {

using internal::Session;

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
    // At the limit, the connection idle the longest makes room (it closes
    // at once; its slot is free once its session is gone); when none is
    // idle, every slot serves a request, and this one is refused.
    if (connections >= options.max_connections && !idle.EvictOldest()) {
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
                                                  Handler handler, LogLine log,
                                                  ListenerHooks hooks) {
  auto impl =
      std::make_unique<Impl>(options, std::move(handler), std::move(log), std::move(hooks));
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
  // ParseListen, which names the flag, has refused anything else already.
  if (ec) return InvalidArgument("'" + options.host + "' is not an IP address");
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
