#include "node_admin.h"

#include "ledger.h"

namespace chaos {

NodeAdmin::NodeAdmin(std::string db_url) : db_url_(std::move(db_url)) {
  thread_ = std::thread([this] { Loop(); });
}

NodeAdmin::~NodeAdmin() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

int NodeAdmin::Post(Op op, int64_t give_up_ms) {
  std::lock_guard lock(mu_);
  queue_.push_back({++next_ticket_, std::move(op), give_up_ms});
  cv_.notify_all();
  return next_ticket_;
}

std::vector<NodeAdmin::Done> NodeAdmin::TakeDone() {
  std::lock_guard lock(mu_);
  std::vector<Done> out;
  out.swap(done_);
  return out;
}

bool NodeAdmin::Idle() {
  std::lock_guard lock(mu_);
  return queue_.empty() && !busy_ && done_.empty();
}

void NodeAdmin::Loop() {
  std::unique_ptr<warden::Client> client;
  while (true) {
    Pending p;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      p = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    Done d;
    d.ticket = p.ticket;
    d.sent_ms = WallMs();
    while (true) {
      ++d.tries;
      warden::Status s = warden::Status::Ok();
      Outcome outcome;
      bool opened = true;
      if (!client) {
        auto c = warden::Client::Open(db_url_, std::chrono::milliseconds(1000));
        if (c.has_value()) {
          client = std::move(c).value();
        } else {
          s = c.error();
          opened = false;
        }
      }
      if (client) s = p.op(*client, &outcome);
      d.done_ms = WallMs();
      if (s.ok()) {
        d.ok = true;
        d.detail = outcome.detail;
        d.outcome = std::move(outcome);
        break;
      }
      d.detail = s.ToString();
      client.reset();  // a session the fault ended: open a new one
      bool stop = false;
      {
        std::lock_guard lock(mu_);
        stop = stop_;
      }
      // A refusal (not a store error) will not change by trying again.
      if (stop || (opened && !s.transient()) ||
          (p.give_up_ms > 0 && WallMs() - d.sent_ms >= p.give_up_ms)) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::lock_guard lock(mu_);
    done_.push_back(std::move(d));
    busy_ = false;
  }
}

}  // namespace chaos
