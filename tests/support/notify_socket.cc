#include "notify_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace wt {

bool NotifySocket::Message::Has(const std::string& assignment) const {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line == assignment) return true;
  }
  return false;
}

NotifySocket::NotifySocket(std::string path) : path_(std::move(path)) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path_.size() >= sizeof(addr.sun_path)) {
    throw std::runtime_error("notify socket path too long: " + path_);
  }
  std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
  fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  const int on = 1;
  unlink(path_.c_str());
  if (setsockopt(fd_, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) != 0 ||
      bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    const std::string why = std::strerror(errno);
    close(fd_);
    throw std::runtime_error("cannot bind " + path_ + ": " + why);
  }
  thread_ = std::thread([this] { Receive(); });
}

NotifySocket::~NotifySocket() {
  stop_ = true;
  thread_.join();
  close(fd_);
  unlink(path_.c_str());
}

void NotifySocket::Receive() {
  while (!stop_) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) continue;
    char buf[4096];
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
    iovec iov{buf, sizeof(buf)};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    const ssize_t n = recvmsg(fd_, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0) continue;
    Message m;
    m.at = std::chrono::steady_clock::now();
    m.text.assign(buf, static_cast<size_t>(n));
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
        ucred cred;
        std::memcpy(&cred, CMSG_DATA(c), sizeof(cred));
        m.pid = cred.pid;
      }
    }
    std::lock_guard lock(mu_);
    messages_.push_back(std::move(m));
  }
}

std::vector<NotifySocket::Message> NotifySocket::Messages() const {
  std::lock_guard lock(mu_);
  return messages_;
}

std::vector<NotifySocket::Message> NotifySocket::With(const std::string& assignment) const {
  std::vector<Message> out;
  for (Message& m : Messages()) {
    if (m.Has(assignment)) out.push_back(std::move(m));
  }
  return out;
}

std::string NotifySocket::Dump() const {
  std::string out;
  const std::vector<Message> all = Messages();
  const auto t0 = all.empty() ? std::chrono::steady_clock::now() : all.front().at;
  for (const Message& m : all) {
    std::string text = m.text;
    for (char& c : text) {
      if (c == '\n') c = '|';
    }
    out += "  +" +
           std::to_string(
               std::chrono::duration_cast<std::chrono::milliseconds>(m.at - t0).count()) +
           "ms pid " + std::to_string(m.pid) + ": " + text + "\n";
  }
  return out.empty() ? "  (no message)\n" : out;
}

}  // namespace wt
