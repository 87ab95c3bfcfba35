//===- ExternalData.cpp - Writing the ONNX external data file -------------===//
//
// Part of qeff. See ExternalData.h.
//
//===----------------------------------------------------------------------===//

#include "lowering/Export/ExternalData.h"

#include "lowering/Export/WeightConversion.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <fcntl.h>
#include <mutex>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

namespace qeff::exporter {

namespace {

/// O_DIRECT wants buffer addresses, file offsets and lengths aligned to the
/// device's logical block; 4096 covers every common device.
constexpr size_t kBlock = 4096;
/// Chunks smaller than this are converted by one thread.
constexpr size_t kParallelMin = 1u << 20;
/// Writer threads: two writes in flight keep the disk queue busy.
constexpr int kWriterThreads = 2;
/// Staging buffers: one being filled, the others being written. A fourth
/// (one queued) only added its 16 MiB to the resident set: the writes are
/// disk-bound (7B shape, default form: peak RSS 261 -> 245 MiB).
constexpr int kNumBuffers = kWriterThreads + 1;

size_t pageSize() {
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

/// Drops the pages of a read-only file-mapped range from this process (they
/// are mapped again from the page cache, or re-read, if touched again).
void releasePages(const std::byte *data, size_t size) {
  if (size == 0)
    return;
  uintptr_t begin = reinterpret_cast<uintptr_t>(data) & ~(pageSize() - 1);
  uintptr_t end = reinterpret_cast<uintptr_t>(data) + size;
  ::madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

std::string errnoText(int err) { return std::strerror(err); }

/// Runs `fn(part, parts)` for every part on `parts` threads (the caller is
/// part 0) and returns when all are done. The threads live as long as the
/// pool.
class WorkerPool {
public:
  explicit WorkerPool(unsigned threads) {
    for (unsigned i = 1; i < threads; ++i)
      workers_.emplace_back([this, i] { loop(i); });
  }
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread &w : workers_)
      w.join();
  }

  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

  void run(const std::function<void(unsigned, unsigned)> &fn) {
    if (workers_.empty())
      return fn(0, 1);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &fn;
      pending_ = static_cast<unsigned>(workers_.size());
      ++generation_;
    }
    wake_.notify_all();
    fn(0, size());
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
  }

private:
  void loop(unsigned part) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(unsigned, unsigned)> *job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_)
          return;
        seen = generation_;
        job = job_;
      }
      (*job)(part, size());
      {
        std::lock_guard<std::mutex> lock(mutex_);
        --pending_;
      }
      done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(unsigned, unsigned)> *job_ = nullptr;
  unsigned pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

/// A block-aligned heap buffer.
struct AlignedBuffer {
  std::byte *data = nullptr;
  AlignedBuffer() = default;
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
  ~AlignedBuffer() { std::free(data); }
  bool allocate(size_t size) {
    void *p = nullptr;
    if (::posix_memalign(&p, kBlock, size) != 0)
      return false;
    data = static_cast<std::byte *>(p);
    return true;
  }
};

/// The writer threads: write submitted buffers at their file offsets and
/// hand them back.
class BlockWriter {
public:
  BlockWriter(int fd, const std::string &path, bool direct)
      : fd_(fd), path_(path), direct_(direct) {
    for (int i = 0; i < kWriterThreads; ++i)
      threads_.emplace_back([this] { loop(); });
  }
  ~BlockWriter() { finish(); }

  /// Waits for a free buffer (nullptr once the writer has failed).
  std::byte *acquire() {
    std::unique_lock<std::mutex> lock(mutex_);
    returned_.wait(lock, [&] { return !free_.empty() || !error_.empty(); });
    if (!error_.empty())
      return nullptr;
    std::byte *b = free_.back();
    free_.pop_back();
    return b;
  }
  /// Hands a buffer (new, or taken and not submitted) to the free list.
  void release(std::byte *buffer) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      free_.push_back(buffer);
    }
    returned_.notify_all();
  }

  void submit(std::byte *buffer, uint64_t offset, size_t length) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back({buffer, offset, length});
    }
    queued_.notify_one();
  }

  /// Waits for every submitted write; stops the thread.
  void finish() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_)
        return;
      stopping_ = true;
    }
    queued_.notify_all();
    for (std::thread &t : threads_)
      t.join();
  }

  bool failed() {
    std::lock_guard<std::mutex> lock(mutex_);
    return !error_.empty();
  }
  std::string error() {
    std::lock_guard<std::mutex> lock(mutex_);
    return error_;
  }
  bool direct() const { return direct_; }

private:
  struct Write {
    std::byte *buffer;
    uint64_t offset;
    size_t length;
  };

  void loop() {
    for (;;) {
      Write w;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty())
          return;
        w = queue_.front();
        queue_.pop_front();
      }
      std::string problem = writeAll(w);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        free_.push_back(w.buffer);
        if (!problem.empty() && error_.empty())
          error_ = std::move(problem);
      }
      returned_.notify_all();
    }
  }

  std::string writeAll(const Write &w) {
    const std::byte *data = w.buffer;
    size_t size = w.length;
    off_t at = static_cast<off_t>(w.offset);
    while (size > 0) {
      bool wasDirect = direct_;
      ssize_t n = ::pwrite(fd_, data, size, at);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EINVAL && wasDirect) {
        // The file system took O_DIRECT at open but refuses these writes:
        // go through the page cache instead (another writer may have
        // switched already).
        std::lock_guard<std::mutex> lock(modeMutex_);
        int flags = ::fcntl(fd_, F_GETFL);
        if (flags != -1 &&
            ((flags & O_DIRECT) == 0 || ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT) == 0)) {
          direct_ = false;
          continue;
        }
      }
      if (n < 0)
        return "writing " + path_ + ": " + errnoText(errno);
      if (n == 0)
        return "writing " + path_ + ": no progress";
      data += n;
      at += n;
      size -= static_cast<size_t>(n);
    }
    return {};
  }

  int fd_;
  const std::string &path_;
  std::atomic<bool> direct_;
  std::mutex modeMutex_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable queued_, returned_;
  std::deque<Write> queue_;
  std::vector<std::byte *> free_;
  std::string error_;
  bool stopping_ = false;
};

/// Reads the tensors' sources ahead of the converter: a thread walks them in
/// file order and asks the kernel to read each range into the page cache
/// (madvise WILLNEED on the mapping starts the reads and returns), never more
/// than `window` bytes past the tensor being converted. Contiguous tensors
/// are asked for together, in requests of at least kRequest bytes.
class ReadAhead {
public:
  ReadAhead(const std::vector<DataTensor> &tensors, size_t window)
      : tensors_(tensors), window_(window) {
    long pages = sysconf(_SC_PHYS_PAGES);
    if (pages > 0)
      window_ = std::min<uint64_t>(window_, uint64_t(pages) * pageSize() / 8);
    if (window_ > 0 && !tensors_.empty())
      thread_ = std::thread([this] { loop(); });
  }
  ~ReadAhead() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    moved_.notify_all();
    if (thread_.joinable())
      thread_.join();
  }
  /// The converter has finished this many source bytes.
  void consumed(uint64_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      consumed_ = bytes;
    }
    moved_.notify_all();
  }

private:
  static constexpr size_t kRequest = 8u << 20;

  void loop() {
    uint64_t issued = 0; // source bytes asked for so far
    uintptr_t runBegin = 0, runEnd = 0;
    auto flushRun = [&] {
      if (runEnd > runBegin) {
        uintptr_t b = runBegin & ~(pageSize() - 1);
        ::madvise(reinterpret_cast<void *>(b), runEnd - b, MADV_WILLNEED);
      }
      runBegin = runEnd = 0;
    };
    for (const DataTensor &t : tensors_) {
      size_t bytes = static_cast<size_t>(t.numElements) * hf::dtypeSize(t.from);
      if (!t.src || bytes == 0)
        continue;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        moved_.wait(lock, [&] { return stop_ || issued < consumed_ + window_; });
        if (stop_)
          return;
      }
      uintptr_t b = reinterpret_cast<uintptr_t>(t.src), e = b + bytes;
      if (runEnd == 0 || b < runEnd || b > runEnd + pageSize()) {
        flushRun();
        runBegin = b;
      }
      runEnd = e;
      issued += bytes;
      if (runEnd - runBegin >= kRequest)
        flushRun();
    }
    flushRun();
  }

  const std::vector<DataTensor> &tensors_;
  size_t window_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable moved_;
  uint64_t consumed_ = 0;
  bool stop_ = false;
};

/// One piece of a tensor: elements [begin, end) of a plain tensor, output
/// rows [begin, end) of a transposed one. Either is contiguous in the file.
struct Chunk {
  int64_t begin, end;
};

/// Bytes a transposed tensor's output row takes, or an element's.
uint64_t unitBytes(const DataTensor &t) {
  uint64_t outSize = hf::dtypeSize(t.to);
  return t.transpose ? static_cast<uint64_t>(t.rows) * outSize : outSize;
}

std::vector<Chunk> chunksOf(const DataTensor &t, size_t chunkBytes) {
  if (t.numElements == 0)
    return {};
  int64_t units = t.transpose ? t.cols : t.numElements;
  int64_t perChunk = std::max<int64_t>(1, static_cast<int64_t>(chunkBytes / unitBytes(t)));
  // A decoded tensor is decoded by whole rows; a transposed one by whole
  // packed blocks of columns where a chunk holds one (a GGUF Q4_K block is
  // 256 columns: a chunk of 372 would decode most blocks twice).
  if (t.decoded && !t.transpose)
    perChunk = std::max<int64_t>(1, perChunk / t.cols) * t.cols;
  if (t.decoded && t.transpose) {
    int64_t block = std::max<int64_t>(1, t.decoded->columnBlock());
    if (perChunk >= block)
      perChunk = perChunk / block * block;
  }
  std::vector<Chunk> chunks;
  for (int64_t b = 0; b < units; b += perChunk)
    chunks.push_back({b, std::min(units, b + perChunk)});
  return chunks;
}

/// Units [b, e) (elements, or output rows when transposed) of a tensor with
/// a row selection (DataTensor::sourceRows): converted row segment by row
/// segment, or element by element when transposed. Such tensors are small
/// (K/V projections), so the simple loops are fast enough.
uint64_t convertSelectedRows(const DataTensor &t, int64_t b, int64_t e,
                             std::byte *out) {
  size_t inSize = hf::dtypeSize(t.from), outSize = hf::dtypeSize(t.to);
  uint64_t clipped = 0;
  auto source = [&](int64_t row, int64_t col) {
    return t.src + (static_cast<size_t>(t.sourceRows[row]) * t.cols + col) * inSize;
  };
  if (t.transpose) {
    for (int64_t j = b; j < e; ++j)
      for (int64_t k = 0; k < t.rows; ++k, out += outSize)
        clipped += convertElements(source(k, j), t.from, out, t.to, 1);
    return clipped;
  }
  for (int64_t i = b; i < e;) {
    int64_t row = i / t.cols, col = i % t.cols;
    int64_t n = std::min(e - i, t.cols - col);
    clipped += convertElements(source(row, col), t.from, out, t.to, static_cast<size_t>(n));
    out += n * outSize;
    i += n;
  }
  return clipped;
}

/// Units [b, e) of a decoded tensor (DataTensor::decoded) into `out`: its
/// dense rows [b / cols, e / cols) (b, e row-aligned), or the output rows
/// [b, e) of its transpose restricted to dense rows [r0, r1) (a thread's
/// share). f32 output is decoded in place; other dtypes through a small
/// f32 strip.
uint64_t convertDecoded(const DataTensor &t, int64_t b, int64_t e, int64_t r0,
                        int64_t r1, std::byte *out) {
  constexpr size_t kScratchFloats = size_t(256) << 10; // 1 MiB
  size_t outSize = hf::dtypeSize(t.to);
  uint64_t clipped = 0;
  std::vector<float> scratch;
  if (!t.transpose) {
    int64_t rb = b / t.cols, re = e / t.cols;
    if (t.to == DType::F32) {
      t.decoded->decode(rb, re, 0, t.cols, reinterpret_cast<float *>(out), t.cols);
      return 0;
    }
    int64_t strip = std::max<int64_t>(1, int64_t(kScratchFloats) / t.cols);
    scratch.resize(static_cast<size_t>(std::min(strip, re - rb) * t.cols));
    for (int64_t r = rb; r < re; r += strip) {
      int64_t r2 = std::min(re, r + strip);
      t.decoded->decode(r, r2, 0, t.cols, scratch.data(), t.cols);
      clipped += convertElements(reinterpret_cast<const std::byte *>(scratch.data()),
                                 DType::F32, out + (r - rb) * t.cols * outSize, t.to,
                                 static_cast<size_t>((r2 - r) * t.cols));
    }
    return clipped;
  }
  if (t.to == DType::F32) {
    t.decoded->decodeTransposed(b, e, r0, r1, reinterpret_cast<float *>(out) + r0, t.rows);
    return 0;
  }
  int64_t width = e - b;
  int64_t strip = std::max<int64_t>(1, int64_t(kScratchFloats) / width);
  scratch.resize(static_cast<size_t>(width * std::min(strip, r1 - r0)));
  for (int64_t r = r0; r < r1; r += strip) {
    int64_t r2 = std::min(r1, r + strip);
    t.decoded->decodeTransposed(b, e, r, r2, scratch.data(), r2 - r);
    for (int64_t j = 0; j < width; ++j)
      clipped += convertElements(
          reinterpret_cast<const std::byte *>(scratch.data() + j * (r2 - r)), DType::F32,
          out + (j * t.rows + r) * outSize, t.to, static_cast<size_t>(r2 - r));
  }
  return clipped;
}

/// Elements [c, c + n) of row `row` of the [*, cols] matrix a row selection
/// reads, from the decoder's own [rows, decodedCols] form (the same
/// row-major elements; decodedCols is a multiple of cols).
void decodeSelectedRow(const DataTensor &t, int64_t row, int64_t c, int64_t n,
                       float *dst) {
  int64_t width = t.decodedCols ? t.decodedCols : t.cols;
  int64_t flat = row * t.cols + c;
  t.decoded->decode(flat / width, flat / width + 1, flat % width,
                    flat % width + n, dst, n);
}

/// A selection of rows (DataTensor::sourceRows) of a decoded tensor: each
/// selected dense row decoded whole (such tensors are small: K/V heads).
uint64_t convertDecodedRows(const DataTensor &t, int64_t b, int64_t e, std::byte *out) {
  size_t outSize = hf::dtypeSize(t.to);
  uint64_t clipped = 0;
  std::vector<float> row(static_cast<size_t>(t.cols));
  if (t.transpose) {
    // Output row j (column j of the selection): element k from selected row k.
    for (int64_t j = b; j < e; ++j)
      for (int64_t k = 0; k < t.rows; ++k, out += outSize) {
        float v;
        decodeSelectedRow(t, t.sourceRows[k], j, 1, &v);
        clipped += convertElements(reinterpret_cast<const std::byte *>(&v), DType::F32, out,
                                   t.to, 1);
      }
    return clipped;
  }
  for (int64_t i = b; i < e;) {
    int64_t r = i / t.cols, c = i % t.cols;
    int64_t n = std::min(e - i, t.cols - c);
    decodeSelectedRow(t, t.sourceRows[r], c, n, row.data());
    clipped += convertElements(reinterpret_cast<const std::byte *>(row.data()), DType::F32,
                               out, t.to, static_cast<size_t>(n));
    out += n * outSize;
    i += n;
  }
  return clipped;
}

/// Produces the file front to back into staging buffers.
class DataFileProducer {
public:
  DataFileProducer(const std::string &path, const std::vector<DataTensor> &tensors,
                   const DataFileOptions &options, DataFileResult &result)
      : path_(path), tensors_(tensors), options_(options), result_(result) {}

  void run() {
    if (options_.alignment == 0 || options_.alignment > kBlock ||
        (options_.alignment & (options_.alignment - 1)) != 0)
      return fail(SIZE_MAX, "invalid data alignment " + std::to_string(options_.alignment));
    result_.offsets = layoutDataFile(tensors_, options_.alignment, result_.fileBytes);
    int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
      return fail(SIZE_MAX, "cannot create " + path_ + ": " + errnoText(errno));
    bool direct = false;
    if (options_.mode != DataWriteMode::Buffered) {
      int flags = ::fcntl(fd, F_GETFL);
      direct = flags != -1 && ::fcntl(fd, F_SETFL, flags | O_DIRECT) == 0;
      if (!direct && options_.mode == DataWriteMode::Direct) {
        fail(SIZE_MAX, path_ + ": the file system refuses direct I/O: " + errnoText(errno));
        ::close(fd);
        return;
      }
    }
    produce(fd, direct);
    if (::close(fd) != 0 && result_.error.empty())
      fail(SIZE_MAX, "closing " + path_ + ": " + errnoText(errno));
  }

private:
  void fail(size_t tensor, std::string message) {
    if (!result_.error.empty())
      return;
    result_.error = std::move(message);
    result_.failedTensor = tensor;
  }

  void produce(int fd, bool direct) {
    // A buffer holds a full block of chunkBytes, the largest chunk and the
    // unaligned tail carried over from the previous buffer.
    uint64_t largest = 0;
    for (const DataTensor &t : tensors_)
      if (t.numElements > 0)
        largest = std::max<uint64_t>(largest, std::max<uint64_t>(options_.chunkBytes, unitBytes(t)));
    flushBytes_ = std::max<size_t>(kBlock, options_.chunkBytes / kBlock * kBlock);
    capacity_ = flushBytes_ + largest + 2 * kBlock;
    AlignedBuffer buffers[kNumBuffers];
    BlockWriter writer(fd, path_, direct);
    for (AlignedBuffer &b : buffers) {
      if (!b.allocate(capacity_)) {
        fail(SIZE_MAX, "cannot allocate " + std::to_string(capacity_) +
                           " bytes of staging buffer for " + path_);
        return;
      }
      writer.release(b.data);
    }
    writer_ = &writer;
    unsigned threads = options_.threads;
    if (threads == 0)
      threads = std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
    WorkerPool pool(threads);
    pool_ = &pool;
    ReadAhead readAhead(tensors_, options_.readAheadBytes);
    uint64_t consumed = 0;

    current_ = writer.acquire();
    for (size_t i = 0; i < tensors_.size() && result_.error.empty(); ++i) {
      if (!current_) {
        fail(i, writer.error());
        break;
      }
      // Zero gap up to the tensor's offset (less than the alignment).
      size_t gap = static_cast<size_t>(result_.offsets[i] - (base_ + fill_));
      std::memset(current_ + fill_, 0, gap);
      fill_ += gap;
      produceTensor(i);
      consumed += static_cast<uint64_t>(tensors_[i].numElements) * hf::dtypeSize(tensors_[i].from);
      readAhead.consumed(consumed);
      if (result_.error.empty() && options_.progress)
        options_.progress(i);
      if (result_.error.empty() && options_.cancelled && options_.cancelled())
        fail(i, "cancelled");
    }
    flushReleases();
    if (result_.error.empty() && current_) {
      // The last block, zero-padded to the block size for O_DIRECT; the file
      // is cut to its real size below.
      size_t length = fill_;
      if (direct) {
        length = (fill_ + kBlock - 1) / kBlock * kBlock;
        std::memset(current_ + fill_, 0, length - fill_);
      }
      writer.submit(current_, base_, length);
      current_ = nullptr;
    } else if (current_) {
      writer.release(current_);
    }
    writer.finish();
    if (result_.error.empty() && writer.failed())
      fail(SIZE_MAX, writer.error());
    result_.mode = writer.direct() ? DataWriteMode::Direct : DataWriteMode::Buffered;
    if (result_.error.empty() && ::ftruncate(fd, static_cast<off_t>(result_.fileBytes)) != 0)
      fail(SIZE_MAX, "cannot size " + path_ + ": " + errnoText(errno));
  }

  /// Hands the block-aligned part of the current buffer to the writer and
  /// continues in a fresh buffer holding the tail.
  bool flush(size_t tensor) {
    size_t aligned = fill_ / kBlock * kBlock;
    if (aligned == 0)
      return true;
    std::byte *next = writer_->acquire();
    if (!next) {
      fail(tensor, writer_->error());
      return false;
    }
    std::memcpy(next, current_ + aligned, fill_ - aligned);
    writer_->submit(current_, base_, aligned);
    current_ = next;
    base_ += aligned;
    fill_ -= aligned;
    return true;
  }

  void produceTensor(size_t index) {
    const DataTensor &t = tensors_[index];
    size_t inSize = hf::dtypeSize(t.from);
    size_t sourceBytes = t.decoded ? 0 : static_cast<size_t>(t.numElements) * inSize;
    uint64_t unit = unitBytes(t);
    for (const Chunk &chunk : chunksOf(t, options_.chunkBytes)) {
      uint64_t bytes = (chunk.end - chunk.begin) * unit;
      if (fill_ + bytes > capacity_ && !flush(index))
        return;
      std::byte *dst = current_ + fill_;
      std::atomic<uint64_t> clipped{0};
      // A large transposed source is swept in strips of rows, each dropped
      // once converted: every chunk reads a few columns of every source row,
      // so without this the whole source would stay mapped. The threads then
      // split the source rows (disjoint strips); otherwise the chunk's
      // elements or output rows.
      bool strips = t.transpose && t.releaseSource && t.sourceRows.empty() &&
                    sourceBytes > options_.stripSourceAbove;
      auto convert = [&](unsigned part, unsigned parts) {
        uint64_t c = 0;
        if (t.decoded && !t.sourceRows.empty()) {
          int64_t n = chunk.end - chunk.begin;
          int64_t b = chunk.begin + n * part / parts, e = chunk.begin + n * (part + 1) / parts;
          if (b < e)
            c = convertDecodedRows(t, b, e, dst + (b - chunk.begin) * unit);
        } else if (t.decoded && t.transpose) {
          // The threads split the dense rows (disjoint columns of every
          // output row).
          int64_t r0 = t.rows * part / parts, r1 = t.rows * (part + 1) / parts;
          if (r0 < r1)
            c = convertDecoded(t, chunk.begin, chunk.end, r0, r1, dst);
        } else if (t.decoded) {
          int64_t rows = (chunk.end - chunk.begin) / t.cols;
          int64_t rb = chunk.begin / t.cols + rows * part / parts;
          int64_t re = chunk.begin / t.cols + rows * (part + 1) / parts;
          if (rb < re)
            c = convertDecoded(t, rb * t.cols, re * t.cols, 0, 0,
                               dst + (rb * t.cols - chunk.begin) * unit);
        } else if (strips) {
          int64_t rb = t.rows * part / parts, re = t.rows * (part + 1) / parts;
          size_t rowBytes = static_cast<size_t>(t.cols) * inSize;
          int64_t stripRows = std::max<int64_t>(1, static_cast<int64_t>(options_.stripBytes / rowBytes));
          for (int64_t r = rb; r < re; r += stripRows) {
            int64_t r1 = std::min(re, r + stripRows);
            c += transposeConvertTile(t.src, t.from, t.cols, r, r1, chunk.begin, chunk.end,
                                      dst + r * hf::dtypeSize(t.to), t.rows, t.to);
            releasePages(t.src + r * rowBytes, (r1 - r) * rowBytes);
          }
        } else {
          int64_t n = chunk.end - chunk.begin;
          int64_t b = chunk.begin + n * part / parts;
          int64_t e = chunk.begin + n * (part + 1) / parts;
          if (b == e)
            return;
          std::byte *out = dst + (b - chunk.begin) * unit;
          c = !t.sourceRows.empty()
                  ? convertSelectedRows(t, b, e, out)
              : t.transpose ? transposeConvertRows(t.src, t.from, t.rows, t.cols, b, e, out, t.to)
                          : convertElements(t.src + b * inSize, t.from, out, t.to,
                                            static_cast<size_t>(e - b));
        }
        clipped += c;
      };
      if (bytes >= kParallelMin && pool_->size() > 1)
        pool_->run(convert);
      else
        convert(0, 1);
      result_.clipped += clipped;
      fill_ += bytes;
      if (t.releaseSource && !t.decoded && !t.transpose && t.sourceRows.empty() &&
          sourceBytes > options_.chunkBytes)
        releasePages(t.src + chunk.begin * inSize, (chunk.end - chunk.begin) * inSize);
      if (fill_ >= flushBytes_ && !flush(index))
        return;
    }
    if (t.releaseSource && t.sourceRows.empty() && sourceBytes > 0)
      releaseAround(t.src, sourceBytes);
    if (t.decoded && t.releaseSource)
      for (auto [data, bytes] : t.decoded->packedRanges())
        releaseAround(data, bytes);
  }

  /// Drops the source pages of a finished tensor, and again those of every
  /// earlier finished tensor near it: reading a page maps the neighbours
  /// already in the page cache too (the kernel's fault-around, within an
  /// aligned block of at most 2 MiB), so converting one tensor maps a few
  /// pages of the tensors beside it in the checkpoint.
  void releaseAround(const std::byte *src, size_t bytes) {
    constexpr uintptr_t kFaultAround = 2u << 20;
    uintptr_t b = reinterpret_cast<uintptr_t>(src), e = b + bytes;
    uintptr_t lo = b & ~(kFaultAround - 1);
    uintptr_t hi = (e + kFaultAround - 1) & ~(kFaultAround - 1);
    // Keep the released ranges merged (a checkpoint's tensors are contiguous,
    // so they collapse into a few ranges): one madvise per range near this
    // tensor, not one per earlier tensor — thousands of small tensors would
    // otherwise cost a TLB shootdown each, many times over.
    uintptr_t page = pageSize();
    auto it = released_.upper_bound(b);
    if (it != released_.begin()) {
      auto prev = std::prev(it);
      if (prev->second + page >= b) {
        b = std::min(b, prev->first);
        e = std::max(e, prev->second);
        it = released_.erase(prev);
      }
    }
    while (it != released_.end() && it->first <= e + page) {
      e = std::max(e, it->second);
      it = released_.erase(it);
    }
    released_[b] = e;
    // Batch the small tensors: each madvise costs a TLB shootdown on every
    // CPU, so ranges are dropped once kReleaseBatch bytes have accumulated
    // (the resident source stays bounded by that plus the fault-around).
    pendingLo_ = std::min(pendingLo_, lo);
    pendingHi_ = std::max(pendingHi_, hi);
    pendingBytes_ += bytes;
    if (pendingBytes_ >= kReleaseBatch)
      flushReleases();
  }

  /// Drops the released ranges within the pending window.
  void flushReleases() {
    if (pendingHi_ <= pendingLo_)
      return;
    auto it = released_.upper_bound(pendingLo_);
    if (it != released_.begin())
      --it; // may start below pendingLo_ and reach into it
    for (; it != released_.end() && it->first < pendingHi_; ++it) {
      uintptr_t rb = std::max(it->first, pendingLo_);
      uintptr_t re = std::min(it->second, pendingHi_);
      if (rb < re)
        releasePages(reinterpret_cast<const std::byte *>(rb), re - rb);
    }
    pendingLo_ = UINTPTR_MAX;
    pendingHi_ = 0;
    pendingBytes_ = 0;
  }

  static constexpr size_t kReleaseBatch = 16u << 20;
  uintptr_t pendingLo_ = UINTPTR_MAX, pendingHi_ = 0;
  size_t pendingBytes_ = 0;

  const std::string &path_;
  const std::vector<DataTensor> &tensors_;
  const DataFileOptions &options_;
  DataFileResult &result_;
  BlockWriter *writer_ = nullptr;
  WorkerPool *pool_ = nullptr;
  std::byte *current_ = nullptr; ///< the buffer being filled
  /// Source address ranges [begin, end) of the finished releasable tensors,
  /// merged where they touch.
  std::map<uintptr_t, uintptr_t> released_;
  uint64_t base_ = 0;            ///< file offset of current_[0] (block-aligned)
  size_t fill_ = 0;              ///< bytes of current_ filled
  size_t flushBytes_ = 0, capacity_ = 0;
};

} // namespace

std::vector<uint64_t> layoutDataFile(const std::vector<DataTensor> &tensors,
                                     uint64_t alignment, uint64_t &fileBytes) {
  std::vector<uint64_t> offsets;
  offsets.reserve(tensors.size());
  uint64_t end = 0;
  for (const DataTensor &t : tensors) {
    uint64_t offset = (end + alignment - 1) / alignment * alignment;
    offsets.push_back(offset);
    end = offset + t.fileBytes();
  }
  fileBytes = end;
  return offsets;
}

DataFileResult writeDataFile(const std::string &path,
                             const std::vector<DataTensor> &tensors,
                             const DataFileOptions &options) {
  DataFileResult result;
  DataFileProducer(path, tensors, options, result).run();
  return result;
}

} // namespace qeff::exporter
