#include "wal_watch.h"

#include <cstring>

namespace warden::testing {
namespace {

// The shim's file: ours first, the real VFS's file right after it (SQLite
// allocates szOsFile bytes for both).
struct ShimFile {
  sqlite3_file base;
  sqlite3_file* real;
  bool wal;
};

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<ShimFile*>(f)->real; }
bool IsWal(sqlite3_file* f) { return reinterpret_cast<ShimFile*>(f)->wal; }

int Close(sqlite3_file* f) { return Real(f)->pMethods->xClose(Real(f)); }
int Read(sqlite3_file* f, void* p, int n, sqlite3_int64 at) {
  return Real(f)->pMethods->xRead(Real(f), p, n, at);
}
int Write(sqlite3_file* f, const void* p, int n, sqlite3_int64 at) {
  if (IsWal(f)) WalWatch::current->Note('W');
  return Real(f)->pMethods->xWrite(Real(f), p, n, at);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  return Real(f)->pMethods->xTruncate(Real(f), size);
}
int Sync(sqlite3_file* f, int flags) {
  if (IsWal(f)) {
    if (WalWatch::current->on_sync) WalWatch::current->on_sync();
    WalWatch::current->Note('S');
  }
  return Real(f)->pMethods->xSync(Real(f), flags);
}
int FileSize(sqlite3_file* f, sqlite3_int64* size) {
  return Real(f)->pMethods->xFileSize(Real(f), size);
}
int Lock(sqlite3_file* f, int level) { return Real(f)->pMethods->xLock(Real(f), level); }
int Unlock(sqlite3_file* f, int level) { return Real(f)->pMethods->xUnlock(Real(f), level); }
int CheckReservedLock(sqlite3_file* f, int* out) {
  return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
}
int FileControl(sqlite3_file* f, int op, void* arg) {
  return Real(f)->pMethods->xFileControl(Real(f), op, arg);
}
int SectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int DeviceCharacteristics(sqlite3_file* f) {
  return Real(f)->pMethods->xDeviceCharacteristics(Real(f));
}
int ShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  return Real(f)->pMethods->xShmMap(Real(f), region, size, extend, out);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
int ShmUnmap(sqlite3_file* f, int drop) { return Real(f)->pMethods->xShmUnmap(Real(f), drop); }
int Fetch(sqlite3_file* f, sqlite3_int64 at, int n, void** out) {
  return Real(f)->pMethods->xFetch(Real(f), at, n, out);
}
int Unfetch(sqlite3_file* f, sqlite3_int64 at, void* p) {
  return Real(f)->pMethods->xUnfetch(Real(f), at, p);
}

const sqlite3_io_methods kShimMethods = {
    .iVersion = 3,
    .xClose = Close,
    .xRead = Read,
    .xWrite = Write,
    .xTruncate = Truncate,
    .xSync = Sync,
    .xFileSize = FileSize,
    .xLock = Lock,
    .xUnlock = Unlock,
    .xCheckReservedLock = CheckReservedLock,
    .xFileControl = FileControl,
    .xSectorSize = SectorSize,
    .xDeviceCharacteristics = DeviceCharacteristics,
    .xShmMap = ShmMap,
    .xShmLock = ShmLock,
    .xShmBarrier = ShmBarrier,
    .xShmUnmap = ShmUnmap,
    .xFetch = Fetch,
    .xUnfetch = Unfetch,
};

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
  auto* shim = reinterpret_cast<ShimFile*>(f);
  shim->real = reinterpret_cast<sqlite3_file*>(shim + 1);
  shim->wal = (flags & SQLITE_OPEN_WAL) != 0;
  sqlite3_vfs* real = WalWatch::current->real();
  const int rc = real->xOpen(real, name, shim->real, flags, out_flags);
  // SQLite calls xClose only on a file whose pMethods is set.
  shim->base.pMethods = shim->real->pMethods ? &kShimMethods : nullptr;
  return rc;
}

}  // namespace

WalWatch* WalWatch::current = nullptr;

WalWatch::WalWatch() : real_(sqlite3_vfs_find(nullptr)) {
  // Same methods and pAppData as the real VFS (the unix VFS reads its own
  // from pAppData), with a bigger file and our xOpen.
  std::memcpy(&shim_, real_, sizeof shim_);
  shim_.szOsFile = static_cast<int>(sizeof(ShimFile)) + real_->szOsFile;
  shim_.zName = "warden-wal-watch";
  shim_.pNext = nullptr;
  shim_.xOpen = Open;
  current = this;
  sqlite3_vfs_register(&shim_, /*makeDflt=*/1);
}

WalWatch::~WalWatch() {
  sqlite3_vfs_unregister(&shim_);
  sqlite3_vfs_register(real_, /*makeDflt=*/1);
  current = nullptr;
}

std::string WalWatch::events() {
  std::lock_guard lock(mu_);
  return events_;
}

void WalWatch::Clear() {
  std::lock_guard lock(mu_);
  events_.clear();
}

void WalWatch::Note(char event) {
  std::lock_guard lock(mu_);
  events_ += event;
}

}  // namespace warden::testing
