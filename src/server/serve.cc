#include "server/serve.h"

#include <sys/resource.h>

#include <csignal>
#include <thread>

#include "server/api.h"
#include "server/listener.h"

namespace warden::server {

Status ParseListen(const std::string& listen, std::string* host, int* port, const char* flag) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) {
    return InvalidArgument(std::string(flag) + " '" + listen +
                           "' is not ADDR:PORT (e.g. 127.0.0.1:7878)");
  }
  *host = listen.substr(0, colon);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  const std::string p = listen.substr(colon + 1);
  if (p.find_first_not_of("0123456789") != std::string::npos || p.size() > 5 ||
      std::stoi(p) > 65535) {
    return InvalidArgument(std::string(flag) + " '" + listen + "': '" + p +
                           "' is not a port (0-65535)");
  }
  *port = std::stoi(p);
  return Status::Ok();
}

bool IsLoopback(const std::string& host) {
  return host == "::1" || host.rfind("127.", 0) == 0;
}

Status Serve(const ServeOptions& options, const std::function<void(int port)>& ready,
             const std::function<void(const std::string&)>& log) {
  ListenerOptions lo;
  WARDEN_RETURN_IF_ERROR(ParseListen(options.listen, &lo.host, &lo.port));
  if (options.no_auth && !IsLoopback(lo.host)) {
    return InvalidArgument("--no-auth is refused on " + lo.host +
                           ": without tokens, anyone who can reach the address could run "
                           "operator actions; listen on 127.0.0.1 or use tokens");
  }
  lo.tls_cert = options.tls_cert;
  lo.tls_key = options.tls_key;
  lo.max_body_bytes = options.max_body_bytes;
  lo.io_timeout = options.io_timeout;
  lo.handler_threads = options.handler_threads;
  lo.max_connections = options.max_connections;
  // Connections are fds: take the hard limit (the soft one is often 1024),
  // and keep the cap under it with room for the database's and the logs'.
  rlimit fds{};
  if (getrlimit(RLIMIT_NOFILE, &fds) == 0 && fds.rlim_cur < fds.rlim_max) {
    fds.rlim_cur = fds.rlim_max;
    setrlimit(RLIMIT_NOFILE, &fds);
    getrlimit(RLIMIT_NOFILE, &fds);
  }
  constexpr rlim_t kSpareFds = 128;
  if (fds.rlim_cur != RLIM_INFINITY && fds.rlim_cur > kSpareFds &&
      static_cast<rlim_t>(lo.max_connections) > fds.rlim_cur - kSpareFds) {
    lo.max_connections = static_cast<int>(fds.rlim_cur - kSpareFds);
    log("--max-connections lowered to " + std::to_string(lo.max_connections) +
        ": the open-file limit is " + std::to_string(fds.rlim_cur));
  }

  // Block the stop signals before any thread starts, so that every thread
  // inherits the mask and sigwait below is the one to take them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  WARDEN_ASSIGN_OR_RETURN(auto clients, ClientPool::Open(options.db, lo.handler_threads));
  Api api(ApiOptions{options.no_auth, options.allow_command_jobs}, *clients);
  WARDEN_ASSIGN_OR_RETURN(
      auto listener,
      Listener::Start(lo, [&api](const Request& req) { return api.Handle(req); }, log));
  if (!IsLoopback(lo.host) && lo.tls_cert.empty()) {
    log("warning: serving plain HTTP on " + lo.host +
        ", beyond loopback: tokens cross the network in clear text (give --tls-cert and "
        "--tls-key)");
  }
  ready(listener->port());
  int sig = 0;
  sigwait(&stop, &sig);
  log(std::string("received ") + (sig == SIGTERM ? "SIGTERM" : "SIGINT") + ": draining");
  api.SetDraining();
  std::this_thread::sleep_for(options.drain_grace);
  listener->Stop(options.io_timeout);
  return Status::Ok();
}

}  // namespace warden::server
