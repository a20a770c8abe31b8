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
          "Chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n");
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
      HttpResult r = Http("POST", "/v1/queues/" + encoded + "/" + action, "", "", {"--path-as-is"});
      ASSERT_EQ(r.status, 200) << name << " " << action << ": " << r.body;
      EXPECT_EQ(r.json.value("queue", ""), name) << r.body;
      EXPECT_EQ(r.json.value("paused", action != "pause"), action == "pause") << r.body;
      EXPECT_TRUE(r.json.value("changed", false)) << name << " " << action << ": " << r.body;
    }
  }
  // And the CLI sees the same queue: paused by name, once more over HTTP.
  ASSERT_EQ(Http("POST", "/v1/queues/a%2Fb/pause").status, 200);
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

INSTANTIATE_TEST_SUITE_P(Backends, HttpHardeningTest, ::testing::ValuesIn(AllBackends()),
                         BackendName);

}  // namespace
}  // namespace wt
