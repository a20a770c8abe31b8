#include "runtime/checkpoint_writer.h"

#include <utility>

namespace warden {

CheckpointWriter::CheckpointWriter(SaveFn save, std::function<void()> on_fenced)
    : save_(std::move(save)), on_fenced_(std::move(on_fenced)) {}

CheckpointWriter::~CheckpointWriter() { Finish(); }

void CheckpointWriter::Submit(Json checkpoint) {
  std::lock_guard lock(mu_);
  if (done_) return;
  pending_ = std::move(checkpoint);
  if (!thread_.joinable()) {
    thread_ = std::thread([this] { Loop(); });
  } else {
    cv_.notify_one();
  }
}

std::string CheckpointWriter::Finish() {
  {
    std::lock_guard lock(mu_);
    done_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  return errors_;
}

void CheckpointWriter::Loop() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return done_ || pending_.has_value(); });
    if (!pending_) return;  // done, and nothing left to write
    Json checkpoint = std::move(*pending_);
    pending_.reset();
    lock.unlock();
    Result<bool> saved = save_(checkpoint);
    lock.lock();
    if (!saved.has_value()) {
      if (errors_.size() < 4096) {
        errors_ += "warden: checkpoint not saved: " + saved.error().ToString() + "\n";
      }
    } else if (!*saved) {
      lock.unlock();
      on_fenced_();
      lock.lock();
    }
  }
}

}  // namespace warden
