// `warden serve` against what a hostile client sends: smuggled bodies,
// unauthenticated uploads, idle connections, slow handlers. A real server
// process and raw sockets (curl would not send most of it).
#include <poll.h>

#include <cerrno>
#include <csignal>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "database_lock.h"
#include "http_fixture.h"

namespace wt {
namespace {

class HttpHardeningTest : public HttpApiTest {
 protected:
  static size_t Count(const std::string& text, const std::string& part) {
    size_t n = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
  }

  // A connection that has sent `bytes` and waits: its fd.
  int Open(const std::string& bytes) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    timeval tv{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (!bytes.empty()) send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    return fd;
  }

  // What `fd` reads until the server closes it or 10 s pass.
  static std::string ReadAll(int fd) {
    std::string got;
    char buf[4096];
    while (true) {
      const ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    return got;
  }

  // A /proc/PID/status field of the server, in kB (VmRSS, VmHWM).
  long ServerKb(const std::string& field) {
    std::ifstream in("/proc/" + std::to_string(server().pid()) + "/status");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
    }
    ADD_FAILURE() << "no " << field;
    return -1;
  }

  static std::string Post(const std::string& path, const std::string& headers, size_t length) {
    return "POST " + path +
           " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
           "application/json\r\n" +
           headers + "Content-Length: " + std::to_string(length) + "\r\n\r\n";
  }
};

// RFC 9112 §6.3: a body framed by anything but Content-Length or one
// `chunked` is refused, and what follows it is never read as a request.
TEST_P(HttpHardeningTest, ABodyFramedAnyOtherWayIs400AndNothingIsSmuggled) {
  StartServer({"--no-auth"});
  const std::string smuggled =
      "POST /v1/queues/smuggled/pause HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Content-Type: application/json\r\nContent-Length: 0\r\n\r\n";
  for (const std::string te :
       {"Transfer-Encoding: gzip\r\n", "Transfer-Encoding: chunked, gzip\r\n",
        "Transfer-Encoding: foo, chunked\r\n",
        "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n",
        "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n"}) {
    const std::string answer =
        Raw("POST /v1/queues/first/pause HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Content-Type: application/json\r\n" +
            te + "\r\n" + smuggled);
    EXPECT_TRUE(answer.rfind("HTTP/1.1 400", 0) == 0) << te << answer;
    // (Beast's parser refuses Transfer-Encoding with Content-Length itself.)
    EXPECT_TRUE(Has(answer, "Transfer-Encoding") || Has(answer, "bad Content-Length"))
        << te << answer;
    EXPECT_TRUE(Has(answer, "Connection: close")) << te << answer;
    EXPECT_EQ(Count(answer, "HTTP/1.1 "), 1u) << "one answer, then closed: " << te << answer;
  }
  HttpResult queues = Http("GET", "/v1/queues");
  ASSERT_EQ(queues.status, 200) << queues.body;
  EXPECT_FALSE(Has(queues.body, "smuggled")) << queues.body;
  EXPECT_FALSE(Has(queues.body, "first")) << queues.body;
  // One `chunked` (any case) is served.
  const std::string chunked =
      Raw("POST /v1/queues/ok/pause HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
          "close\r\n"
          "Content-Type: application/json\r\nTransfer-Encoding: "
          "Chunked\r\n\r\nf\r\n{\"create\":true}\r\n0\r\n\r\n");
  EXPECT_TRUE(chunked.rfind("HTTP/1.1 200", 0) == 0) << chunked;
  EXPECT_FALSE(server().Exited()) << server().Stderr();
}

// The path is split at '/' before its segments are decoded: a queue named
// "a/b" is reached as a%2Fb, and "." and ".." (which a client normalises
// away unless they are encoded) as %2E and %2E%2E.
TEST_P(HttpHardeningTest, QueuesNamedWithASlashOrDotsAreManagedOverHttp) {
  StartServer({"--no-auth"});
  const std::vector<std::pair<std::string, std::string>> names = {
      {"a/b", "a%2Fb"}, {"..", "%2E%2E"}, {".", "%2e"}, {"a%b", "a%25b"}};
  for (const auto& [name, encoded] : names) {
    for (const std::string action : {"pause", "resume"}) {
      // Paused before any job names it: said with "create".
      const std::string body = action == "pause" ? R"({"create":true})" : "";
      HttpResult r =
          Http("POST", "/v1/queues/" + encoded + "/" + action, "", body, {"--path-as-is"});
      ASSERT_EQ(r.status, 200) << name << " " << action << ": " << r.body;
      EXPECT_EQ(r.json.value("queue", ""), name) << r.body;
      EXPECT_EQ(r.json.value("paused", action != "pause"), action == "pause") << r.body;
      EXPECT_TRUE(r.json.value("changed", false)) << name << " " << action << ": " << r.body;
    }
  }
  // And the CLI sees the same queue: paused by name, once more over HTTP.
  ASSERT_EQ(Http("POST", "/v1/queues/a%2Fb/pause", "", R"({"create":true})").status, 200);
  CliResult queues = Cli({"queues"});
  ASSERT_EQ(queues.exit_code, 0) << queues.err;
  bool paused = false;
  for (const Json& q : queues.json)
    paused |= q.value("name", "") == "a/b" && q.value("paused", false);
  EXPECT_TRUE(paused) << queues.out;
}

// A name with a character that does not show is refused over HTTP as by
// the CLI, the code point named: `ma\u200bil` would list beside `mail`.
TEST_P(HttpHardeningTest, NamesWithCharactersThatDoNotShowAreRefused) {
  StartServer({"--no-auth"});
  HttpResult job = Http("POST", "/v1/jobs", "", R"({"task": "t", "queue": "ma\u200bil"})");
  EXPECT_EQ(job.status, 400) << job.body;
  EXPECT_TRUE(Has(job.json["error"].value("message", ""), "queue must not contain U+200B"))
      << job.body;
  HttpResult task = Http("POST", "/v1/jobs", "", R"({"task": "\u202eliam"})");
  EXPECT_EQ(task.status, 400) << task.body;
  EXPECT_TRUE(Has(task.body, "task must not contain U+202E")) << task.body;
  HttpResult pause = Http("POST", "/v1/queues/ma%E2%80%8Bil/pause");
  EXPECT_EQ(pause.status, 400) << pause.body;
  EXPECT_TRUE(Has(pause.body, "U+200B")) << pause.body;
  EXPECT_EQ(Http("GET", "/v1/queues").json["queues"].size(), 0u) << "nothing was stored";
}

// The token (and Host and Origin) are checked when the head of a request
// has come: a refused upload is answered at once, its body never read.
TEST_P(HttpHardeningTest, AnUploadWithoutATokenIsRefusedBeforeItsBodyIsSent) {
  const std::string ops = Token("ops", "operate");
  StartServer();
  constexpr size_t kBig = 8 * 1024 * 1024;
  struct Case {
    std::string headers;
    std::string status;
  };
  for (const Case& c : std::vector<Case>{
           {"", "HTTP/1.1 401"},
           {"Authorization: Bearer wdn_1_nosuchsecret\r\n", "HTTP/1.1 401"},
           {"Authorization: Bearer " + ops + "\r\nOrigin: http://evil.example\r\n", "HTTP/1.1 403"},
       }) {
    // Only the head is sent: the answer cannot wait for the body.
    const int fd = Open(Post("/v1/jobs", c.headers, kBig));
    const std::string answer = ReadAll(fd);
    close(fd);
    EXPECT_TRUE(answer.rfind(c.status, 0) == 0) << c.headers << ": " << answer;
    EXPECT_TRUE(Has(answer, "Connection: close")) << answer;
  }
  // With a token, the same head waits for its body.
  const int fd = Open(Post("/v1/jobs", "Authorization: Bearer " + ops + "\r\n", 20));
  pollfd p{fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 1000), 0) << "answered before its body came";
  const std::string body = R"({"task": "uploaded"})";
  ASSERT_EQ(body.size(), 20u);
  send(fd, body.data(), body.size(), MSG_NOSIGNAL);
  shutdown(fd, SHUT_WR);
  const std::string accepted = ReadAll(fd);
  close(fd);
  EXPECT_TRUE(accepted.rfind("HTTP/1.1 201", 0) == 0) << accepted;
}

// 48 clients upload 8 MiB each at once without a token: the server's
// memory does not grow by their bodies (it grew by all of them: 200 such
// uploads took it from 15 MB to 800 MB).
TEST_P(HttpHardeningTest, ParallelUnauthenticatedUploadsDoNotGrowTheServersMemory) {
  StartServer();
  ASSERT_EQ(Http("GET", "/healthz").status, 200);
  const long before = ServerKb("VmHWM");
  constexpr size_t kBig = 8 * 1024 * 1024;
  constexpr int kClients = 48;
  std::atomic<int> refused{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&] {
      const int fd = Open(Post("/v1/jobs", "", kBig));
      // The whole body, until the server answers (as curl does): the
      // answer may come before the body is sent, or only after.
      const std::string chunk(256 * 1024, ' ');
      for (size_t sent = 0; sent < kBig;) {
        pollfd p{fd, POLLIN | POLLOUT, 0};
        if (poll(&p, 1, 10'000) <= 0 || (p.revents & (POLLIN | POLLERR | POLLHUP)) != 0) break;
        const ssize_t n = send(fd, chunk.data(), std::min(chunk.size(), kBig - sent),
                               MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno != EAGAIN) break;
        if (n > 0) sent += static_cast<size_t>(n);
      }
      const std::string answer = ReadAll(fd);
      close(fd);
      if (answer.rfind("HTTP/1.1 401", 0) == 0) ++refused;
    });
  }
  for (std::thread& t : clients) t.join();
  const long after = ServerKb("VmHWM");
  std::cout << "[ measure  ] server peak RSS " << before / 1024 << " MB before, " << after / 1024
            << " MB after " << kClients << " unauthenticated 8 MiB uploads\n";
  EXPECT_EQ(refused.load(), kClients);
  // Their bodies would be 384 MiB.
  EXPECT_LT(after - before, 64 * 1024) << "kB";
  EXPECT_EQ(Http("GET", "/healthz").status, 200);
}

// Bodies being read hold at most 64 MiB together: past that, 503 and
// Retry-After, and the body is not read.
TEST_P(HttpHardeningTest, BodiesInFlightAreBoundedAndTheRestAreAnswered503) {
  const std::string ops = Token("ops", "operate");
  StartServer();
  constexpr size_t kMax = 8 * 1024 * 1024;  // the largest body a request may have
  std::vector<int> holding;
  // Eight admitted uploads of 8 MiB that send a few bytes, then wait. Each
  // waits for its 100 Continue: its token was checked and its 8 MiB taken.
  for (int i = 0; i < 8; ++i) {
    const int fd = Open(
        Post("/v1/jobs", "Authorization: Bearer " + ops + "\r\nExpect: 100-continue\r\n", kMax));
    holding.push_back(fd);
    char buf[64] = {};
    const ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
    ASSERT_GT(n, 0) << "no 100 Continue for upload " << i;
    ASSERT_EQ(std::string(buf, static_cast<size_t>(n)), "HTTP/1.1 100 Continue\r\n\r\n");
    send(fd, "[{\"task\"", 8, MSG_NOSIGNAL);
  }
  // A ninth is refused at once, its body not read.
  const int ninth = Open(Post("/v1/jobs", "Authorization: Bearer " + ops + "\r\n", kMax));
  const std::string answer = ReadAll(ninth);
  close(ninth);
  EXPECT_TRUE(answer.rfind("HTTP/1.1 503", 0) == 0) << answer;
  EXPECT_TRUE(Has(answer, "too_many_bodies")) << answer;
  EXPECT_TRUE(Has(answer, "Retry-After: 1")) << answer;
  // A request without a body is served meanwhile, and once the uploads
  // are gone, another is taken.
  EXPECT_EQ(Http("GET", "/v1/queues", ops).status, 200);
  for (int fd : holding) close(fd);
  EXPECT_TRUE(
      WaitFor([&] { return Http("POST", "/v1/jobs", ops, R"({"task": "after"})").status == 201; }));
}

// At the connection limit, the connection idle the longest is closed to
// make room: idle connections (no token needed to open them) cannot lock
// out a client with a request.
TEST_P(HttpHardeningTest, IdleConnectionsCannotLockOutAClientWithARequest) {
  const std::string reader = Token("reader", "read");
  StartServer({"--max-connections", "20"});
  std::vector<int> idle = Flood(port_, 20);
  // Accepted: each of them holds a slot (a connection waiting for its
  // request sends nothing back, so wait a moment).
  std::this_thread::sleep_for(Millis(300));
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    HttpResult r = Http("GET", "/v1/queues", reader);
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  }
  // The oldest idle ones were closed (they read the end of the stream).
  char c;
  EXPECT_EQ(recv(idle[0], &c, 1, 0), 0) << "the oldest idle connection is closed";
  for (int fd : idle) close(fd);
  EXPECT_FALSE(server().Exited()) << server().Stderr();
}

// /healthz is answered by the I/O threads, not behind the handler pool:
// with every handler waiting on a locked database, it still answers.
TEST_P(HttpHardeningTest, HealthzAnswersWhileEveryHandlerIsBusy) {
  StartServer({"--no-auth"});
  // Writers wait on this lock up to the backend's wait limit (5 s).
  DatabaseLock lock(postgres(), db(), Millis(8000));
  ASSERT_TRUE(lock.WaitHeld());
  // Eight enqueues (writes to the jobs table, which the lock holds on both
  // backends) for four handler threads: every one busy, four queued.
  std::vector<int> slow;
  const std::string job = R"({"task": "t"})";
  for (int i = 0; i < 8; ++i) slow.push_back(Open(Post("/v1/jobs", "", job.size()) + job));
  std::this_thread::sleep_for(Millis(500));  // they reach the handlers
  const auto t0 = std::chrono::steady_clock::now();
  const std::string health =
      Raw("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", Millis(4000));
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_TRUE(health.rfind("HTTP/1.1 200", 0) == 0) << health;
  EXPECT_LT(took, std::chrono::seconds(1));
  EXPECT_FALSE(lock.released()) << "the handlers were still busy";
  for (int fd : slow) close(fd);
}

// Failed authentication and cross-site refusals are logged, one line a
// second at most of each; never a token.
TEST_P(HttpHardeningTest, RefusalsAreLoggedRateLimitedAndNeverWithTheToken) {
  const std::string ops = Token("ops", "operate");
  StartServer();
  const std::string wrong = ops.substr(0, ops.size() - 4) + "abcd";  // a live id, a wrong secret
  EXPECT_EQ(Http("GET", "/v1/queues?token=" + ops, wrong).status, 401);
  EXPECT_EQ(
      Http("POST", "/v1/queues/q/pause", ops, "", {"-H", "Origin: http://evil.example"}).status,
      403);
  ASSERT_TRUE(WaitFor([&] { return Has(server().Stderr(), "cross-site"); })) << server().Stderr();
  const std::string log = server().Stderr();
  EXPECT_TRUE(Has(log, "refused GET /v1/queues from 127.0.0.1:")) << log;
  EXPECT_TRUE(Has(log, ": 401, a token that is not a live token")) << log;
  EXPECT_TRUE(Has(log, "refused POST /v1/queues/q/pause from 127.0.0.1:")) << log;
  EXPECT_TRUE(Has(log, ": 403, cross-site: a POST from another origin (http://evil.example"))
      << log;
  // A flood of them: one line a second at most; the next line after a
  // quiet second says how many went untold.
  const auto t0 = std::chrono::steady_clock::now();
  const std::string refused =
      "GET /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  for (int i = 0; i < 40; ++i) Raw(refused);
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - t0)
          .count();
  std::this_thread::sleep_for(Millis(1100));
  Raw(refused);
  EXPECT_TRUE(WaitFor([&] {
    return Has(server().Stderr(), "more in the last second, not logged");
  })) << server().Stderr();
  const size_t lines = Count(server().Stderr(), "refused GET /v1/jobs");
  EXPECT_GE(lines, 1u);
  EXPECT_LE(lines, static_cast<size_t>(seconds) + 3) << server().Stderr();
  // Neither the token's secret nor the query that carried it.
  const std::string secret = ops.substr(ops.rfind('_') + 1);
  EXPECT_FALSE(Has(server().Stderr(), secret)) << server().Stderr();
  EXPECT_FALSE(Has(server().Stderr(), "abcd")) << server().Stderr();
}

// --access-log: a line per response in either log format, with the token's
// name and never the token; without it, none.
TEST_P(HttpHardeningTest, TheAccessLogIsOptInAndNeverHoldsAToken) {
  const std::string ops = Token("ops", "operate");
  StartServer({"--log-format", "json"});
  ASSERT_EQ(Http("GET", "/v1/queues", ops).status, 200);
  EXPECT_FALSE(Has(server().Stderr(), "access ")) << server().Stderr();
  server().Signal(SIGTERM);
  server().WaitExit(Millis(30'000));

  for (const std::string format : {"json", "text"}) {
    StartServer({"--access-log", "--log-format", format});
    ASSERT_EQ(Http("GET", "/v1/queues?token=" + ops, ops).status, 200);
    ASSERT_EQ(Http("POST", "/v1/jobs", ops, R"({"task": "t"})").status, 201);
    ASSERT_EQ(Http("GET", "/healthz").status, 200);
    ASSERT_EQ(Http("GET", "/v1/queues", "wdn_1_x").status, 401);
    ASSERT_TRUE(WaitFor([&] { return Count(server().Stderr(), "access 127.0.0.1:") >= 4; }))
        << server().Stderr();
    const std::string log = server().Stderr();
    EXPECT_TRUE(Has(log, " GET /v1/queues 200 ")) << log;
    EXPECT_TRUE(Has(log, " POST /v1/jobs 201 ")) << log;
    EXPECT_TRUE(Has(log, "ms token:ops")) << log;
    EXPECT_TRUE(Has(log, " GET /healthz 200 ")) << log;
    EXPECT_TRUE(Has(log, " GET /v1/queues 401 ")) << log;
    EXPECT_FALSE(Has(log, ops.substr(ops.rfind('_') + 1))) << log;
    EXPECT_FALSE(Has(log, "token=")) << log;
    if (format == "json") {
      std::istringstream lines(log);
      for (std::string line; std::getline(lines, line);) {
        if (!Has(line, "access ")) continue;
        const Json j = Json::parse(line, nullptr, false);
        EXPECT_TRUE(j.is_object()) << line;
        EXPECT_EQ(j.value("level", ""), "info") << line;
      }
    }
    server().Signal(SIGTERM);
    server().WaitExit(Millis(30'000));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, HttpHardeningTest, ::testing::ValuesIn(AllBackends()),
                         BackendName);

}  // namespace
}  // namespace wt
