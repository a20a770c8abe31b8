// The fixture of the HTTP tests: a real `warden serve` process, driven by
// curl (an HTTP implementation that is not the server's) and, for what no
// well-behaved client sends, raw sockets.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "harness.h"

namespace wt {

struct HttpResult {
  int status = -1;
  std::string body;
  Json json;
  std::string headers;
};

class HttpApiTest : public IntegrationTest {
 protected:
  // `warden serve --listen 127.0.0.1:0 FLAGS...`; waits for its "serving
  // on" line and returns the port (-1, and a test failure, if none).
  int StartServer(std::vector<std::string> flags = {}) {
    std::vector<std::string> argv = {WARDEN_BIN, "--db", db(), "serve", "--listen", "127.0.0.1:0"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    const std::string base = dir() + "/serve-" + std::to_string(servers_.size());
    servers_.push_back(warden::testing::Child::Spawn(argv, base + ".out", base + ".err"));
    warden::testing::Child& s = *servers_.back();
    int port = -1;
    const bool up = WaitFor([&] {
      const std::string log = s.Stderr();
      const size_t at = log.find("serving on 127.0.0.1:");
      if (at != std::string::npos) port = std::atoi(log.c_str() + at + 21);
      return port > 0 || s.Exited();
    });
    EXPECT_TRUE(up && port > 0) << s.Stderr();
    scheme_ = "http";
    for (const std::string& f : flags) {
      if (f == "--tls-cert") scheme_ = "https";
    }
    port_ = port;
    return port;
  }
  warden::testing::Child& server() { return *servers_.back(); }

  // curl METHOD PATH with `token` (if any), `body` as JSON (if any).
  HttpResult Http(const std::string& method, const std::string& path, const std::string& token = "",
                  const std::string& body = "", std::vector<std::string> extra = {}) {
    const std::string base = dir() + "/curl-" + std::to_string(++requests_);
    std::vector<std::string> argv = {
        "/usr/bin/curl", "-sS", "-X", method, "-D", base + ".headers", "-w", "\n%{http_code}"};
    if (!token.empty()) argv.insert(argv.end(), {"-H", "Authorization: Bearer " + token});
    if (!body.empty()) {
      std::ofstream(base + ".body") << body;
      argv.insert(argv.end(),
                  {"-H", "Content-Type: application/json", "--data-binary", "@" + base + ".body"});
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(scheme_ + "://127.0.0.1:" + std::to_string(port_) + path);
    CliResult r = RunToExit(argv, base, Millis(30'000));
    HttpResult out;
    EXPECT_EQ(r.exit_code, 0) << method << " " << path << ": " << r.err;
    const size_t nl = r.out.rfind('\n');
    if (nl == std::string::npos) return out;
    out.status = std::atoi(r.out.c_str() + nl + 1);
    out.body = r.out.substr(0, nl);
    out.json = Json::parse(out.body, nullptr, false);
    std::ifstream h(base + ".headers");
    out.headers.assign(std::istreambuf_iterator<char>(h), {});
    return out;
  }

  // A token of `scope` made with the CLI; its secret.
  std::string Token(const std::string& name, const std::string& scope) {
    CliResult r = Cli({"tokens", "create", name, "--scope", scope});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.json.value("token", "");
  }

  // Sends `raw` bytes on a new connection and returns all it reads back
  // until the server closes it (or `wait` passes).
  std::string Raw(const std::string& raw, Millis wait = Millis(15'000)) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    timeval tv{static_cast<time_t>(wait.count() / 1000), 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (!raw.empty()) {
      EXPECT_EQ(send(fd, raw.data(), raw.size(), MSG_NOSIGNAL), ssize_t(raw.size()));
    }
    std::string got;
    char buf[4096];
    while (true) {
      const ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    return got;
  }

  static bool Has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }

  std::vector<std::unique_ptr<warden::testing::Child>> servers_;
  std::string scheme_ = "http";
  int port_ = -1;
  int requests_ = 0;
};

// Connects `n` sockets to the server and sends `first` on each (nothing:
// idle connections): a connection flood.
inline std::vector<int> Flood(int port, int n, const std::string& first = "") {
  std::vector<int> fds;
  for (int i = 0; i < n; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    timeval tv{0, 200'000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (!first.empty()) send(fd, first.data(), first.size(), MSG_NOSIGNAL);
    fds.push_back(fd);
  }
  return fds;
}

}  // namespace wt
