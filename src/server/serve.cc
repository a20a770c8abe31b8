#include "server/serve.h"

#include <sys/resource.h>
#include <unistd.h>

#include <condition_variable>
#include <csignal>
#include <mutex>
#include <random>
#include <thread>

#include "server/api.h"
#include "server/host_check.h"
#include "server/listener.h"
#include "server/maintenance_participant.h"
#include "warden/plural.h"
#include "warden/text.h"

namespace warden::server {

namespace {

// Runs the unfinished bulk operations of the database, one at a time, until
// stopped: those started here, those whose server died (their lease ran
// out), whichever `serve` they were started on. `owner` names this process
// (fresh per process: a restarted server waits out its old lease too).
class BulkRunner {
 public:
  using Log = std::function<void(LogLevel, const std::string&)>;
  BulkRunner(std::unique_ptr<Client> client, const ServeOptions& options, Log log)
      : client_(std::move(client)), options_(options), log_(std::move(log)) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    owner_ = "serve:" + std::string(host) + ":" + std::to_string(getpid()) + ":" +
             std::to_string(std::random_device{}() % 1'000'000);
    thread_ = std::thread([this] { Run(); });
  }
  ~BulkRunner() {
    stop_ = true;
    Wake();
    thread_.join();
  }
  void Wake() {
    {
      std::lock_guard lock(mu_);
      woken_ = true;
    }
    cv_.notify_all();
  }

 private:
  void Run() {
    while (!stop_) {
      Client::BulkRunOptions ro;
      ro.batch = options_.bulk_batch;
      ro.lease = options_.bulk_lease;
      ro.stop = &stop_;
      ro.progress = [this](const BulkOp& op) {
        if (op.state == BulkState::kDone) {
          log_(LogLevel::kInfo, "bulk operation " + std::to_string(op.id) + " (" +
                                    BulkActionName(op.action) + ") done: " +
                                    std::to_string(op.done) + " of " + Plural(op.total, "job") +
                                    " changed in " + Plural(op.batches, "batch", "batches"));
        } else if (options_.bulk_pause.count() > 0) {
          Sleep(options_.bulk_pause);
        }
      };
      auto ran = client_->BulkRun(owner_, ro);
      if (!ran.has_value()) {
        log_(LogLevel::kWarn, "bulk operations: " + ran.error().ToString() + " (trying again)");
        Sleep(std::chrono::seconds(1));
      } else if (!*ran) {
        // Nothing to take: wait to be woken (an operation started here) or
        // for another server's lease to run out.
        Sleep(std::chrono::seconds(1));
      }
    }
  }
  void Sleep(std::chrono::milliseconds d) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, d, [this] { return woken_ || stop_; });
    woken_ = false;
  }

  std::unique_ptr<Client> client_;
  const ServeOptions options_;
  Log log_;
  std::string owner_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = false;
  std::thread thread_;
};

// The liveness check Serve hands out (ServeHooks::ready): the listener's,
// until the drain begins; Ok from then on (the drain is bounded by
// --drain-grace and --io-timeout), and after the listener is gone.
class LiveCheck {
 public:
  explicit LiveCheck(Listener* listener) : listener_(listener) {}
  Status Check() {
    std::lock_guard lock(mu_);
    if (listener_ == nullptr || listener_->IoTurns()) return Status::Ok();
    return Unavailable("stuck: the HTTP listener's I/O threads have not turned since the last "
                       "check");
  }
  void Detach() {
    std::lock_guard lock(mu_);
    listener_ = nullptr;
  }

 private:
  std::mutex mu_;
  Listener* listener_;
};

// One access log line: who, what (the path without its query: no header,
// no query and no body is logged, so no token is), the status, the time
// taken and the token's name.
std::string AccessLine(const Request& req, const Response& r, std::chrono::milliseconds took) {
  std::string line = "access " + req.peer + " ";
  line += req.method.empty() ? std::string("-")
                              : OneLine(req.method, 16) + " " + OneLine(req.raw_path, 200);
  line += " " + std::to_string(r.status) + " " + std::to_string(took.count()) + "ms";
  if (!r.actor.empty()) line += " " + r.actor;
  return line;
}

}  // namespace

Status CheckServeOptions(const ServeOptions& options) {
  std::string host;
  int port = 0;
  WARDEN_RETURN_IF_ERROR(ParseListen(options.listen, &host, &port));
  if (options.no_auth && !IsLoopback(host)) {
    return InvalidArgument("--no-auth is refused on " + host +
                           ": without tokens, anyone who can reach the address could run "
                           "operator actions; listen on 127.0.0.1 or use tokens");
  }
  for (const std::string& name : options.allowed_hosts) {
    WARDEN_RETURN_IF_ERROR(ValidateAllowedHost(name));
  }
  return Status::Ok();
}

Status Serve(const ServeOptions& options, const ServeHooks& hooks) {
  const BulkRunner::Log log = [&hooks](LogLevel level, const std::string& line) {
    if (hooks.log) hooks.log(level, line);
  };
  // What the listener and the live updates report is what went wrong.
  const auto warn = [log](const std::string& line) { log(LogLevel::kWarn, line); };
  WARDEN_RETURN_IF_ERROR(CheckServeOptions(options));
  ListenerOptions lo;
  WARDEN_RETURN_IF_ERROR(ParseListen(options.listen, &lo.host, &lo.port));
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
    log(LogLevel::kWarn, "--max-connections lowered to " + std::to_string(lo.max_connections) +
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
  WARDEN_ASSIGN_OR_RETURN(auto bulk_client, Client::Open(options.db));
  BulkRunner bulk(std::move(bulk_client), options, log);
  WARDEN_ASSIGN_OR_RETURN(auto events_client, Client::Open(options.db));
  EventHub events(std::move(events_client), EventHubOptions{}, warn);
  ApiOptions api_options;
  api_options.no_auth = options.no_auth;
  api_options.allow_command_jobs = options.allow_command_jobs;
  api_options.bulk_started = [&bulk] { bulk.Wake(); };
  api_options.events = &events;
  api_options.allowed_hosts = options.allowed_hosts;
  api_options.tls = !options.tls_cert.empty();
  api_options.log_refusal = warn;
  Api api(api_options, *clients);
  ListenerHooks listener_hooks;
  listener_hooks.answer_now = [&api](const Request& req) { return api.AnswerNow(req); };
  listener_hooks.admit = [&api](const Request& head) { return api.Admit(head); };
  if (options.access_log) {
    listener_hooks.access = [log](const Request& req, const Response& r,
                                  std::chrono::milliseconds took) {
      log(LogLevel::kInfo, AccessLine(req, r, took));
    };
  }
  WARDEN_ASSIGN_OR_RETURN(
      auto listener, Listener::Start(lo, [&api](const Request& req) { return api.Handle(req); },
                                     warn, std::move(listener_hooks)));
  if (!IsLoopback(lo.host) && lo.tls_cert.empty()) {
    log(LogLevel::kWarn, "warning: serving plain HTTP on " + lo.host +
        ", beyond loopback: tokens cross the network in clear text (give --tls-cert and "
        "--tls-key)");
  }
  std::unique_ptr<MaintenanceParticipant> maintenance;
  if (options.maintenance) {
    WARDEN_ASSIGN_OR_RETURN(maintenance,
                            MaintenanceParticipant::Start(options.db, options.maintenance_name,
                                                          log));
  }
  auto live = std::make_shared<LiveCheck>(listener.get());
  if (hooks.ready) hooks.ready(listener->port(), [live] { return live->Check(); });
  int sig = 0;
  sigwait(&stop, &sig);
  log(LogLevel::kInfo,
      std::string("received ") + (sig == SIGTERM ? "SIGTERM" : "SIGINT") + ": draining");
  live->Detach();
  if (hooks.draining) hooks.draining();
  api.SetDraining();
  // Event streams end with the listener; nothing may be sent to them then.
  events.Stop();
  std::this_thread::sleep_for(options.drain_grace);
  listener->Stop(options.io_timeout);
  if (maintenance) maintenance->Stop();
  return Status::Ok();
}

}  // namespace warden::server
