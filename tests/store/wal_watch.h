// WalWatch: the default SQLite VFS, seen through. While one lives, every
// connection opened in this process goes through a shim over the real VFS
// that records the writes to and syncs of write-ahead logs, so a test can
// check when a commit reached the disk, and run code at the moment of a
// sync. Everything else passes through untouched.
#pragma once

#include <sqlite3.h>

#include <functional>
#include <mutex>
#include <string>

namespace warden::testing {

class WalWatch {
 public:
  WalWatch();   // becomes the default VFS
  ~WalWatch();  // the real one is the default again
  WalWatch(const WalWatch&) = delete;
  WalWatch& operator=(const WalWatch&) = delete;

  // 'W' per write to a WAL, 'S' per sync of one, since the last Clear.
  std::string events();
  void Clear();
  // Called at each WAL sync, before it (from the syncing thread).
  std::function<void()> on_sync;

  // For the shim's callbacks.
  static WalWatch* current;
  sqlite3_vfs* real() { return real_; }
  void Note(char event);

 private:
  sqlite3_vfs* real_;
  sqlite3_vfs shim_;
  std::mutex mu_;
  std::string events_;
};

}  // namespace warden::testing
