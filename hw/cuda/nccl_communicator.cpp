#include "hw/cuda/nccl_communicator.hpp"

#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "hw/comm/deferred_sends.hpp"
#include "hw/cuda/cuda_check.hpp"

namespace parashift::hw {

namespace {

constexpr int kIdTag = 30'999;

// Device memory (the executor's buffers on CudaKernels) goes to NCCL as it
// is; host memory (losses, reports, snapshot bytes) through a device copy.
bool on_device(const void* p) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    cudaGetLastError();  // clear the error: an unknown pointer is host memory
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

// Point-to-point messages are deferred: send() copies the payload into a
// device buffer of its own and queues it; the queued sends go to NCCL in one
// ncclGroupStart/End group with the next receive or receive group
// (recv_group: an interleaved step's forward input and backward gradient;
// as Megatron pairs send_forward with recv_backward), or at flush_sends(),
// in the order hw/comm/deferred_sends.hpp gives. NCCL runs one
// communicator's kernels one after another and a send blocks until its
// receiver posts, so sends issued on their own would deadlock interleaved
// 1F1B (each stage's next send waiting behind a receive the other stage has
// not reached) and every ring exchange; the tests show both on a rendezvous
// model of NCCL (tests/hw/rendezvous_test.cpp).
// send_bytes() sends a length header, then the payload.
class NcclCommunicator : public Communicator {
 public:
  NcclCommunicator(ncclComm_t comm, int device, std::chrono::seconds patience)
      : comm_(comm), device_(device), patience_(patience) {
    CUDACHECK(cudaSetDevice(device_));
    CUDACHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    NCCLCHECK(ncclCommUserRank(comm_, &rank_));
    NCCLCHECK(ncclCommCount(comm_, &size_));
  }
  ~NcclCommunicator() override {
    // Destructors do not throw: codes are ignored on the way out.
    if (!aborted_) cudaStreamSynchronize(stream_);
    for (const auto& [id, device] : buffers_) cudaFree(device);
    cudaFree(staging_);
    cudaStreamDestroy(stream_);
    if (!aborted_) ncclCommDestroy(comm_);
  }
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void all_reduce_sum(std::span<float> data) override {
    reduce(data.data(), data.size_bytes(), data.size(), ncclFloat32, ncclSum);
  }
  void all_reduce_sum(std::span<double> data) override {
    reduce(data.data(), data.size_bytes(), data.size(), ncclFloat64, ncclSum);
  }
  void all_reduce_max(std::span<double> data) override {
    reduce(data.data(), data.size_bytes(), data.size(), ncclFloat64, ncclMax);
  }

  std::vector<double> all_gather(std::span<const double> mine) override {
    no_sends_queued("all_gather");
    std::vector<double> all(mine.size() * static_cast<std::size_t>(size_));
    void* buffer = stage(all.size() * sizeof(double));
    auto* base = static_cast<double*>(buffer);
    double* slot = base + mine.size() * static_cast<std::size_t>(rank_);
    CUDACHECK(
        cudaMemcpyAsync(slot, mine.data(), mine.size_bytes(), cudaMemcpyHostToDevice, stream_));
    checked(ncclAllGather(slot, base, mine.size(), ncclFloat64, comm_, stream_), "ncclAllGather");
    CUDACHECK(cudaMemcpyAsync(all.data(), base, all.size() * sizeof(double), cudaMemcpyDeviceToHost,
                              stream_));
    wait();
    return all;
  }

  void all_gather(std::span<const float> mine, std::span<float> all) override {
    no_sends_queued("all_gather");
    check_block(mine.size(), all.size(), size_, "all_gather");
    const DevicePair d = device_pair(mine.data(), mine.size_bytes(), all.data(), all.size_bytes());
    checked(ncclAllGather(d.in, d.out, mine.size(), ncclFloat32, comm_, stream_), "ncclAllGather");
    finish(d, all.data(), all.size_bytes());
  }
  void reduce_scatter_sum(std::span<const float> all, std::span<float> mine) override {
    no_sends_queued("reduce_scatter");
    check_block(mine.size(), all.size(), size_, "reduce_scatter_sum");
    const DevicePair d = device_pair(all.data(), all.size_bytes(), mine.data(), mine.size_bytes());
    checked(ncclReduceScatter(d.in, d.out, mine.size(), ncclFloat32, ncclSum, comm_, stream_),
            "ncclReduceScatter");
    finish(d, mine.data(), mine.size_bytes());
  }

  void barrier() override {
    double one = 1.0;
    all_reduce_sum(std::span<double>(&one, 1));
  }

  void send(std::span<const float> data, int peer, int tag) override {
    check_tag(tag);
    if (!data.empty()) queue(data.data(), data.size_bytes(), peer, false);
  }
  void recv(std::span<float> data, int peer, int tag) override {
    check_tag(tag);
    if (!data.empty()) receive({{data.data(), data.size_bytes(), peer}}, false);
  }
  void recv_group(std::span<const RecvRequest> requests) override {
    std::vector<Incoming> in;
    for (const RecvRequest& r : requests) {
      check_tag(r.tag);
      if (!r.data.empty()) in.push_back({r.data.data(), r.data.size_bytes(), r.peer});
    }
    if (!in.empty()) receive(in, false);
  }
  void send_bytes(std::span<const std::byte> data, int peer, int tag) override {
    check_tag(tag);
    const auto length = static_cast<std::uint64_t>(data.size());
    queue(&length, sizeof length, peer, true);
    if (!data.empty()) queue(data.data(), data.size(), peer, false);
  }
  std::vector<std::byte> recv_bytes(int peer, int tag) override {
    check_tag(tag);
    std::uint64_t length = 0;
    receive({{&length, sizeof length, peer}}, true);
    std::vector<std::byte> out(length);
    if (length > 0) receive({{out.data(), out.size(), peer}}, false);
    return out;
  }
  void flush_sends() override {
    post_sends();
    wait();
    release_issued();
  }
  // The stream runs the group; the next receive's, flush's or collective's
  // wait covers it, and its buffers go after that wait (release_issued).
  void post_sends() override {
    checked(ncclGroupStart(), "ncclGroupStart");
    issue(false);
    checked(ncclGroupEnd(), "ncclGroupEnd");
  }

  std::unique_ptr<Communicator> split(int color, int key) override {
    no_sends_queued("split");
    ncclComm_t child = nullptr;
    NCCLCHECK(ncclCommSplit(comm_, color, key, &child, nullptr));
    return std::make_unique<NcclCommunicator>(child, device_, patience_);
  }

 private:
  // Until stream_ has drained. A peer that died leaves NCCL's kernels
  // waiting for it forever: when NCCL reports an error, or nothing finishes
  // within the patience, the communicator is aborted (ncclCommAbort) and the
  // call throws, so the process ends and the launcher can restart the job
  // from its snapshots (abort and rebuild; run --restore).
  void wait() {
    const auto start = std::chrono::steady_clock::now();
    for (int polls = 0;; ++polls) {
      const cudaError_t status = cudaStreamQuery(stream_);
      if (status == cudaSuccess) return;
      if (status != cudaErrorNotReady)
        abort_with(std::string("the stream failed: ") + cudaGetErrorString(status));
      ncclResult_t async = ncclSuccess;
      checked(ncclCommGetAsyncError(comm_, &async), "ncclCommGetAsyncError");
      if (async != ncclSuccess && async != ncclInProgress)
        abort_with(std::string("NCCL reported ") + ncclGetErrorString(async));
      if (std::chrono::steady_clock::now() - start > patience_)
        abort_with("nothing finished in " + std::to_string(patience_.count()) +
                   " s (a peer is gone or stuck)");
      // Spin first (a tensor-parallel all-reduce takes microseconds), then back off.
      if (polls < 1000)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  // An NCCL call on the communication path: a failure aborts the
  // communicator like a failed wait (a peer may be gone).
  void checked(ncclResult_t result, const char* call) {
    if (result != ncclSuccess && result != ncclInProgress)
      abort_with(std::string(call) + ": " + ncclGetErrorString(result));
  }

  [[noreturn]] void abort_with(const std::string& why) {
    ncclCommAbort(comm_);
    aborted_ = true;
    throw HwError("NCCL communicator (rank " + std::to_string(rank_) + " of " +
                  std::to_string(size_) + "): " + why + "; aborted it");
  }

  static void check_tag(int tag) {
    if (tag < 0) throw HwError("NCCL communicator: negative message tag " + std::to_string(tag));
  }

  // A collective behind queued sends would wait for receivers that may be
  // waiting for it; the executor flushes first, and this keeps it so.
  void no_sends_queued(const char* what) const {
    if (!deferred_.empty())
      throw HwError(std::string("NCCL communicator: ") + what +
                    " with point-to-point sends still queued (flush_sends first)");
  }

  void* stage(std::size_t bytes) {
    if (bytes > staging_bytes_) {
      if (staging_) CUDACHECK(cudaFree(staging_));
      CUDACHECK(cudaMalloc(&staging_, bytes));
      staging_bytes_ = bytes;
    }
    return staging_;
  }

  // A collective's input and output on the device: themselves when both are
  // device memory, else both staged (input copied up) in one buffer.
  struct DevicePair {
    const void* in = nullptr;
    void* out = nullptr;
    bool staged = false;
  };
  DevicePair device_pair(const void* in, std::size_t in_bytes, void* out, std::size_t out_bytes) {
    if (on_device(in) && on_device(out)) return {in, out, false};
    auto* device = static_cast<std::byte*>(stage(in_bytes + out_bytes));
    CUDACHECK(cudaMemcpyAsync(device, in, in_bytes, cudaMemcpyDefault, stream_));
    return {device, device + in_bytes, true};
  }
  // Copies a staged output back and waits: the result is there on return.
  void finish(const DevicePair& d, void* out, std::size_t out_bytes) {
    if (d.staged) CUDACHECK(cudaMemcpyAsync(out, d.out, out_bytes, cudaMemcpyDefault, stream_));
    wait();
  }

  // In place on `data`; blocking, like the MPI flavour: the caller's
  // stream work on device data is finished (HwBackend synchronizes its
  // kernels before each collective), and the result is there on return.
  void reduce(void* data, std::size_t bytes, std::size_t count, ncclDataType_t type,
              ncclRedOp_t op) {
    no_sends_queued("all_reduce");
    if (on_device(data)) {
      checked(ncclAllReduce(data, data, count, type, op, comm_, stream_), "ncclAllReduce");
    } else {
      void* device = stage(bytes);
      CUDACHECK(cudaMemcpyAsync(device, data, bytes, cudaMemcpyHostToDevice, stream_));
      checked(ncclAllReduce(device, device, count, type, op, comm_, stream_), "ncclAllReduce");
      CUDACHECK(cudaMemcpyAsync(data, device, bytes, cudaMemcpyDeviceToHost, stream_));
    }
    wait();
  }

  // The payload (host or device source alike) is copied into a buffer of
  // its own before this returns, so the caller may overwrite its buffer at
  // once (the executor's next kernels do).
  void queue(const void* data, std::size_t bytes, int peer, bool header) {
    void* device = nullptr;
    CUDACHECK(cudaMalloc(&device, bytes));
    const std::size_t id = deferred_.queue(peer, header);
    buffers_.emplace(id, device);
    messages_.emplace(id, Message{bytes, peer});
    CUDACHECK(cudaMemcpyAsync(device, data, bytes, cudaMemcpyDefault, stream_));
    wait();
  }

  // Inside a group: the queued sends deferred_ releases for this receive.
  void issue(bool headers_only) {
    for (const std::size_t id : deferred_.take(headers_only)) {
      const Message& m = messages_.at(id);
      checked(ncclSend(buffers_.at(id), m.bytes, ncclUint8, m.peer, comm_, stream_), "ncclSend");
      issued_.push_back(id);
    }
  }

  // After the group completed: the issued sends' buffers go.
  void release_issued() {
    for (const std::size_t id : issued_) {
      CUDACHECK(cudaFree(buffers_.at(id)));
      buffers_.erase(id);
      messages_.erase(id);
    }
    issued_.clear();
    deferred_.forget_issued();
  }

  struct Incoming {
    void* data = nullptr;
    std::size_t bytes = 0;
    int peer = 0;
  };

  // One group: the queued sends (all of them, or for a header only those up
  // to each peer's next payload) and these receives; returns when all are
  // done. Host destinations land in the staging buffer, one after another.
  void receive(const std::vector<Incoming>& in, bool header) {
    std::size_t staged = 0;
    for (const Incoming& r : in)
      if (!on_device(r.data)) staged += r.bytes;
    auto* staging = staged > 0 ? static_cast<std::byte*>(stage(staged)) : nullptr;
    std::vector<std::pair<const Incoming*, std::byte*>> copies;  // host ones, from staging
    checked(ncclGroupStart(), "ncclGroupStart");
    issue(header);
    for (const Incoming& r : in) {
      void* into = r.data;
      if (!on_device(r.data)) {
        copies.emplace_back(&r, staging);
        into = staging;
        staging += r.bytes;
      }
      checked(ncclRecv(into, r.bytes, ncclUint8, r.peer, comm_, stream_), "ncclRecv");
    }
    checked(ncclGroupEnd(), "ncclGroupEnd");
    for (const auto& [r, from] : copies)
      CUDACHECK(cudaMemcpyAsync(r->data, from, r->bytes, cudaMemcpyDeviceToHost, stream_));
    wait();
    release_issued();
  }

  ncclComm_t comm_ = nullptr;
  int device_ = 0;
  std::chrono::seconds patience_;
  bool aborted_ = false;
  int rank_ = 0, size_ = 1;
  cudaStream_t stream_ = nullptr;
  void* staging_ = nullptr;
  std::size_t staging_bytes_ = 0;
  struct Message {
    std::size_t bytes = 0;
    int peer = 0;
  };
  DeferredSends deferred_;
  std::map<std::size_t, void*> buffers_;  // queued sends' device copies, by id
  std::map<std::size_t, Message> messages_;
  std::vector<std::size_t> issued_;  // in the group now in flight
};

}  // namespace

std::unique_ptr<Communicator> make_nccl_world(Communicator& bootstrap, int device,
                                              std::chrono::seconds patience) {
  ncclUniqueId id{};
  if (bootstrap.rank() == 0) {
    NCCLCHECK(ncclGetUniqueId(&id));
    const auto bytes = std::as_bytes(std::span<const ncclUniqueId>(&id, 1));
    for (int r = 1; r < bootstrap.size(); ++r) bootstrap.send_bytes(bytes, r, kIdTag);
    bootstrap.flush_sends();
  } else {
    const auto bytes = bootstrap.recv_bytes(0, kIdTag);
    if (bytes.size() != sizeof id)
      throw HwError("NCCL bootstrap: expected a " + std::to_string(sizeof id) + "-byte id, got " +
                    std::to_string(bytes.size()));
    std::memcpy(&id, bytes.data(), sizeof id);
  }
  CUDACHECK(cudaSetDevice(device));
  ncclComm_t comm = nullptr;
  NCCLCHECK(ncclCommInitRank(&comm, bootstrap.size(), id, bootstrap.rank()));
  return std::make_unique<NcclCommunicator>(comm, device, patience);
}

}  // namespace parashift::hw
