#include "hw/cuda/nccl_communicator.hpp"

#include <cstring>
#include <deque>
#include <vector>

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

class NcclCommunicator : public Communicator {
 public:
  NcclCommunicator(ncclComm_t comm, int device) : comm_(comm), device_(device) {
    CUDACHECK(cudaSetDevice(device_));
    CUDACHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CUDACHECK(cudaStreamCreateWithFlags(&send_stream_, cudaStreamNonBlocking));
    NCCLCHECK(ncclCommUserRank(comm_, &rank_));
    NCCLCHECK(ncclCommCount(comm_, &size_));
  }
  ~NcclCommunicator() override {
    // Destructors do not throw: codes are ignored on the way out.
    cudaStreamSynchronize(send_stream_);
    for (void* p : pending_) cudaFree(p);
    cudaFree(staging_);
    cudaStreamDestroy(send_stream_);
    cudaStreamDestroy(stream_);
    ncclCommDestroy(comm_);
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
    std::vector<double> all(mine.size() * static_cast<std::size_t>(size_));
    void* buffer = stage(all.size() * sizeof(double));
    auto* base = static_cast<double*>(buffer);
    double* slot = base + mine.size() * static_cast<std::size_t>(rank_);
    CUDACHECK(
        cudaMemcpyAsync(slot, mine.data(), mine.size_bytes(), cudaMemcpyHostToDevice, stream_));
    NCCLCHECK(ncclAllGather(slot, base, mine.size(), ncclFloat64, comm_, stream_));
    CUDACHECK(cudaMemcpyAsync(all.data(), base, all.size() * sizeof(double), cudaMemcpyDeviceToHost,
                              stream_));
    CUDACHECK(cudaStreamSynchronize(stream_));
    return all;
  }

  void barrier() override {
    double one = 1.0;
    all_reduce_sum(std::span<double>(&one, 1));
  }

  void send(std::span<const float> data, int peer, int tag) override {
    send_bytes(std::as_bytes(data), peer, tag);
  }
  void recv(std::span<float> data, int peer, int tag) override {
    receive(data.data(), data.size_bytes(), peer, tag);
  }
  void send_bytes(std::span<const std::byte> data, int peer, int tag) override {
    check_tag(tag);
    // Length first, then the payload, each from its own device copy that
    // lives until flush_sends(): the host does not wait for the receiver.
    const auto length = static_cast<std::uint64_t>(data.size());
    post_send(&length, sizeof length, peer);
    if (!data.empty()) post_send(data.data(), data.size(), peer);
  }
  std::vector<std::byte> recv_bytes(int peer, int tag) override {
    std::uint64_t length = 0;
    receive(&length, sizeof length, peer, tag);
    std::vector<std::byte> out(length);
    if (length > 0) receive(out.data(), out.size(), peer, tag);
    return out;
  }
  void flush_sends() override {
    CUDACHECK(cudaStreamSynchronize(send_stream_));
    for (void* p : pending_) CUDACHECK(cudaFree(p));
    pending_.clear();
  }

  std::unique_ptr<Communicator> split(int color, int key) override {
    ncclComm_t child = nullptr;
    NCCLCHECK(ncclCommSplit(comm_, color, key, &child, nullptr));
    return std::make_unique<NcclCommunicator>(child, device_);
  }

 private:
  static void check_tag(int tag) {
    if (tag < 0) throw HwError("NCCL communicator: negative message tag " + std::to_string(tag));
  }

  void* stage(std::size_t bytes) {
    if (bytes > staging_bytes_) {
      if (staging_) CUDACHECK(cudaFree(staging_));
      CUDACHECK(cudaMalloc(&staging_, bytes));
      staging_bytes_ = bytes;
    }
    return staging_;
  }

  // In place on `data`; blocking, like the MPI flavour: the caller's
  // stream work on device data is finished (HwBackend synchronizes its
  // kernels before each collective), and the result is there on return.
  void reduce(void* data, std::size_t bytes, std::size_t count, ncclDataType_t type,
              ncclRedOp_t op) {
    if (on_device(data)) {
      NCCLCHECK(ncclAllReduce(data, data, count, type, op, comm_, stream_));
    } else {
      void* device = stage(bytes);
      CUDACHECK(cudaMemcpyAsync(device, data, bytes, cudaMemcpyHostToDevice, stream_));
      NCCLCHECK(ncclAllReduce(device, device, count, type, op, comm_, stream_));
      CUDACHECK(cudaMemcpyAsync(data, device, bytes, cudaMemcpyDeviceToHost, stream_));
    }
    CUDACHECK(cudaStreamSynchronize(stream_));
  }

  // The payload is copied (host or device source alike) into a buffer that
  // lives until flush_sends(), so the caller may reuse its own at once.
  void post_send(const void* data, std::size_t bytes, int peer) {
    void* device = nullptr;
    CUDACHECK(cudaMalloc(&device, bytes));
    pending_.push_back(device);
    CUDACHECK(cudaMemcpyAsync(device, data, bytes, cudaMemcpyDefault, send_stream_));
    NCCLCHECK(ncclSend(device, bytes, ncclUint8, peer, comm_, send_stream_));
  }

  void receive(void* data, std::size_t bytes, int peer, int tag) {
    check_tag(tag);
    if (on_device(data)) {
      NCCLCHECK(ncclRecv(data, bytes, ncclUint8, peer, comm_, stream_));
    } else {
      void* device = stage(bytes);
      NCCLCHECK(ncclRecv(device, bytes, ncclUint8, peer, comm_, stream_));
      CUDACHECK(cudaMemcpyAsync(data, device, bytes, cudaMemcpyDeviceToHost, stream_));
    }
    CUDACHECK(cudaStreamSynchronize(stream_));
  }

  ncclComm_t comm_ = nullptr;
  int device_ = 0;
  int rank_ = 0, size_ = 1;
  cudaStream_t stream_ = nullptr, send_stream_ = nullptr;
  void* staging_ = nullptr;
  std::size_t staging_bytes_ = 0;
  std::deque<void*> pending_;
};

}  // namespace

std::unique_ptr<Communicator> make_nccl_world(Communicator& bootstrap, int device) {
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
  return std::make_unique<NcclCommunicator>(comm, device);
}

}  // namespace parashift::hw
