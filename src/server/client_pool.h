// A fixed set of Clients, one per handler thread at most: each holds its
// own connection, so that requests do not queue behind one another's
// queries (a Client serialises its calls).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "warden/client.h"

namespace warden::server {

class ClientPool {
 public:
  static Result<std::unique_ptr<ClientPool>> Open(const std::string& db_url, int size) {
    auto pool = std::unique_ptr<ClientPool>(new ClientPool);
    for (int i = 0; i < size; ++i) {
      WARDEN_ASSIGN_OR_RETURN(auto client, Client::Open(db_url));
      pool->free_.push_back(std::move(client));
    }
    return pool;
  }

  // A client for one request; back to the pool when it goes.
  class Lease {
   public:
    Lease(ClientPool& pool, std::unique_ptr<Client> c) : pool_(pool), client_(std::move(c)) {}
    Lease(const Lease&) = delete;
    ~Lease() { pool_.Return(std::move(client_)); }
    Client& operator*() { return *client_; }
    Client* operator->() { return client_.get(); }

   private:
    ClientPool& pool_;
    std::unique_ptr<Client> client_;
  };

  Lease Acquire() {
    std::unique_lock lock(mu_);
    freed_.wait(lock, [&] { return !free_.empty(); });
    std::unique_ptr<Client> c = std::move(free_.back());
    free_.pop_back();
    return Lease(*this, std::move(c));
  }

 private:
  ClientPool() = default;
  void Return(std::unique_ptr<Client> c) {
    {
      std::lock_guard lock(mu_);
      free_.push_back(std::move(c));
    }
    freed_.notify_one();
  }
  std::mutex mu_;
  std::condition_variable freed_;
  std::vector<std::unique_ptr<Client>> free_;
};

}  // namespace warden::server
