//===- CardBatch.cpp - `qeff compile --models cards.json -o OUT [-j N]` ---===//
//
// Part of qeff. Hashes every card of a model-card file here (a cache hit is
// published in this process: it costs only its hash) and compiles each miss in
// a child process `qeff compile --models F --card-index I -o OUT
// --card-events --known-hash ...` (CardRun.cpp), N at a time; shows progress (a live block on a terminal, one plain
// line per event otherwise), merges their summaries into OUT/summary.json and
// prints a one-screen table. A child that crashes fails its card only. On
// SIGINT or SIGTERM every running compile is killed (with its process group:
// a qaic-compile it started goes too) and its staging directories removed:
// finished cards stay, unfinished ones leave nothing behind.
//
//===----------------------------------------------------------------------===//

#include "tools/qeff/Cards.h"

#include "lowering/Driver/CompileCache.h"
#include "lowering/Driver/ModelCards.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <atomic>
#include <map>
#include <memory>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using namespace llvm;
using namespace mlir::qeff;
using qeff::tool::CardSummary;
using Clock = std::chrono::steady_clock;

namespace {

volatile std::sig_atomic_t interrupted = 0;
void onInterrupt(int signal) { interrupted = signal; }

std::string join(StringRef dir, StringRef name) {
  SmallString<256> p(dir);
  sys::path::append(p, name);
  return std::string(p.str());
}

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// The memory a card's compile may take: ~200 MB measured for the 1.1B and 7B
/// shapes (docs/performance.md), budgeted at 512 MiB; calibration runs the
/// model on the host device in fp32 (twice the checkpoint's bf16 bytes, and
/// as much again for the compile beside it).
uint64_t cardBudget(const ModelCard &card) {
  uint64_t budget = 512ull << 20;
  if (card.options.calibrate > 0) {
    // A GGUF file decodes to f32: up to 8x its (4-bit) bytes.
    uint64_t ggufSize = 0;
    if (isGGUFCheckpoint(card.options.checkpointDir) &&
        !sys::fs::file_size(card.options.checkpointDir, ggufSize))
      budget += 8 * ggufSize;
    std::error_code ec;
    for (sys::fs::directory_iterator it(card.options.checkpointDir, ec), end;
         it != end && !ec; it.increment(ec))
      if (StringRef(it->path()).ends_with(".safetensors")) {
        uint64_t size = 0;
        if (!sys::fs::file_size(it->path(), size))
          budget += 4 * size;
      }
  }
  return budget;
}

/// MemAvailable of /proc/meminfo, or 0.
uint64_t availableMemory() {
  auto buffer = MemoryBuffer::getFileAsStream("/proc/meminfo");
  if (!buffer)
    return 0;
  SmallVector<StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (StringRef line : lines)
    if (line.consume_front("MemAvailable:")) {
      uint64_t kib = 0;
      if (!line.trim().rsplit(' ').first.trim().getAsInteger(10, kib))
        return kib << 10;
    }
  return 0;
}

struct Child {
  size_t index = 0;
  pid_t pid = -1;
  int out = -1, err = -1;
  std::string outBuf, errBuf;
  std::string stage = "starting";
  uint64_t done = 0, total = 0;
  Clock::time_point start;
};

std::string stageText(const Child &c) {
  if (c.stage == "hash")
    return "hashing the checkpoint";
  if (c.stage == "wait")
    return "waiting: the same key is compiling";
  if (c.stage == "compile")
    return "compiling";
  if (c.stage == "weights")
    return "weights " + qeff::tool::humanBytes(c.done) + " / " +
           qeff::tool::humanBytes(c.total);
  if (c.stage == "link")
    return "publishing";
  return c.stage;
}

/// Removes what a killed child left: its staging and retired directories.
void removeLeftovers(const std::string &dir, pid_t pid) {
  std::error_code ec;
  std::vector<std::string> remove;
  std::string staging = ".qeff-staging-" + std::to_string(pid) + "-";
  std::string retired = ".qeff-retired-" + std::to_string(pid) + "-";
  for (sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec)) {
    StringRef name = sys::path::filename(it->path());
    if (name.starts_with(".") && (name.contains(staging) || name.contains(retired)))
      remove.push_back(it->path());
  }
  for (const std::string &path : remove)
    sys::fs::remove_directories(path, /*IgnoreErrors=*/true);
}

class Batch {
public:
  Batch(const qeff::tool::CardsRun &run, const ModelCardFile &file)
      : run_(run), file_(file), tty_(sys::Process::StandardOutIsDisplayed()) {}
  int run();

private:
  void startCheck(size_t index);
  void reapChecks(bool wait);
  bool spawn(size_t index, const std::map<std::string, std::string> &hashes,
             std::string &error);
  void readPipes(int timeoutMs);
  void handleLine(Child &c, StringRef line);
  void reap();
  void finished(size_t index, Clock::time_point start, int status,
                const std::string &errors);
  void event(const std::string &text);
  void redraw(bool force);
  void clearLive();
  int interrupt();

  const qeff::tool::CardsRun &run_;
  const ModelCardFile &file_;
  std::string cacheDir_, self_;
  bool tty_;
  int jobs_ = 1;
  unsigned exportThreads_ = 0;
  std::vector<Child> running_;
  /// Cards being hashed in this process (a hit is published here; a miss
  /// goes on to a card process).
  struct Check {
    size_t index = 0;
    Clock::time_point start;
    std::thread thread;
    std::atomic<int> result{-1};
    std::map<std::string, std::string> hashes;
  };
  std::vector<std::unique_ptr<Check>> checks_;
  bool spawnFailed_ = false;
  size_t finished_ = 0, failed_ = 0;
  Clock::time_point start_ = Clock::now(), lastDraw_;
  size_t liveLines_ = 0;
};

void Batch::startCheck(size_t index) {
  const ModelCard &card = file_.cards[index];
  // A summary from an earlier run must not pass for this one's.
  sys::fs::remove(qeff::tool::cardSummaryPath(run_.outDir, card.name));
  auto check = std::make_unique<Check>();
  check->index = index;
  check->start = Clock::now();
  Check *c = check.get();
  c->thread = std::thread([this, c] {
    c->result = qeff::tool::detail::cardThroughCache(
        run_, file_, c->index, /*compileMisses=*/false, /*print=*/false, c->hashes);
  });
  checks_.push_back(std::move(check));
  if (!tty_)
    event(card.name + ": started, hashing the checkpoint");
}

void Batch::reapChecks(bool wait) {
  for (size_t i = 0; i < checks_.size();) {
    Check &c = *checks_[i];
    if (!wait && c.result.load() < 0) {
      ++i;
      continue;
    }
    c.thread.join();
    std::unique_ptr<Check> done = std::move(checks_[i]);
    checks_.erase(checks_.begin() + i);
    if (done->result != 2) {
      finished(done->index, done->start, done->result << 8, "");
      continue;
    }
    // A miss: its compile runs in a process of its own.
    std::string error;
    if (interrupted || spawnFailed_)
      continue;
    if (!spawn(done->index, done->hashes, error)) {
      errs() << "qeff compile: " << error << "\n";
      spawnFailed_ = true;
    }
  }
}

bool Batch::spawn(size_t index, const std::map<std::string, std::string> &hashes,
                  std::string &error) {
  const ModelCard &card = file_.cards[index];
  std::vector<std::string> args = {self_, "compile", "--models", run_.cardsFile,
                                   "--card-index", std::to_string(index), "-o",
                                   run_.outDir, "--cache-dir", cacheDir_,
                                   "--card-events"};
  if (exportThreads_ > 0)
    args.push_back("--export-threads=" + std::to_string(exportThreads_));
  for (const auto &[file, hash] : hashes)
    args.push_back("--known-hash=" + file + "=" + hash);
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  int outPipe[2], errPipe[2];
  if (::pipe2(outPipe, O_CLOEXEC) != 0)
    return error = std::string("pipe: ") + std::strerror(errno), false;
  if (::pipe2(errPipe, O_CLOEXEC) != 0) {
    ::close(outPipe[0]);
    ::close(outPipe[1]);
    return error = std::string("pipe: ") + std::strerror(errno), false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // A process group of its own: an interrupt kills the compile and whatever
  // it started (qaic-compile) together.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  Child c;
  c.index = index;
  c.start = Clock::now();
  int rc = posix_spawn(&c.pid, self_.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(outPipe[1]);
  ::close(errPipe[1]);
  if (rc != 0) {
    ::close(outPipe[0]);
    ::close(errPipe[0]);
    return error = "cannot start " + self_ + ": " + std::strerror(rc), false;
  }
  c.out = outPipe[0];
  c.err = errPipe[0];
  ::fcntl(c.out, F_SETFL, O_NONBLOCK);
  ::fcntl(c.err, F_SETFL, O_NONBLOCK);
  running_.push_back(std::move(c));
  return true;
}

void Batch::handleLine(Child &c, StringRef line) {
  Expected<json::Value> v = json::parse(line);
  if (!v) {
    consumeError(v.takeError());
    return;
  }
  const json::Object *o = v->getAsObject();
  if (!o)
    return;
  std::optional<StringRef> kind = o->getString("event");
  if (kind == "stage") {
    std::string stage = o->getString("stage").value_or("?").str();
    if (stage == "ok" || stage == "failed")
      return; // the summary says it
    c.stage = stage;
    if (!tty_ && stage != "hash") // the batch hashed it already
      event(file_.cards[c.index].name + ": " + stageText(c));
  } else if (kind == "weights") {
    c.stage = "weights";
    c.done = static_cast<uint64_t>(std::max<int64_t>(0, o->getInteger("done").value_or(0)));
    c.total = static_cast<uint64_t>(std::max<int64_t>(0, o->getInteger("total").value_or(0)));
  }
}

void Batch::readPipes(int timeoutMs) {
  std::vector<pollfd> fds;
  for (Child &c : running_) {
    if (c.out >= 0)
      fds.push_back({c.out, POLLIN, 0});
    if (c.err >= 0)
      fds.push_back({c.err, POLLIN, 0});
  }
  if (fds.empty()) {
    ::usleep(timeoutMs * 1000);
    return;
  }
  if (::poll(fds.data(), fds.size(), timeoutMs) <= 0)
    return;
  char buffer[65536];
  for (Child &c : running_)
    for (int *fd : {&c.out, &c.err}) {
      if (*fd < 0)
        continue;
      for (;;) {
        ssize_t n = ::read(*fd, buffer, sizeof buffer);
        if (n > 0) {
          std::string &buf = fd == &c.out ? c.outBuf : c.errBuf;
          buf.append(buffer, n);
          if (fd == &c.err && buf.size() > (64 << 10))
            buf.erase(0, buf.size() - (32 << 10)); // keep the tail
          continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          ::close(*fd);
          *fd = -1;
        }
        break;
      }
      if (fd == &c.out)
        for (size_t nl; (nl = c.outBuf.find('\n')) != std::string::npos;) {
          std::string line = c.outBuf.substr(0, nl);
          c.outBuf.erase(0, nl + 1);
          handleLine(c, line);
        }
    }
}

void Batch::finished(size_t index, Clock::time_point start, int status,
                     const std::string &errors) {
  const ModelCard &card = file_.cards[index];
  std::string path = qeff::tool::cardSummaryPath(run_.outDir, card.name);
  Expected<CardSummary> s = sys::fs::exists(path)
                                ? qeff::tool::readCardSummary(path)
                                : Expected<CardSummary>(createStringError(
                                      inconvertibleErrorCode(), "no summary"));
  if (!s) {
    consumeError(s.takeError());
    // The child died before writing its summary: the batch writes it.
    CardSummary own;
    own.name = card.name;
    own.index = index;
    own.total = file_.cards.size();
    own.cardsHash = file_.contentHash;
    own.seconds = since(start);
    std::string why = WIFSIGNALED(status)
                          ? "killed by signal " + std::to_string(WTERMSIG(status)) +
                                " (" + strsignal(WTERMSIG(status)) + ")"
                          : "exited with status " + std::to_string(WEXITSTATUS(status));
    std::string tail = StringRef(errors).trim().str();
    if (tail.size() > 2000)
      tail = "..." + tail.substr(tail.size() - 2000);
    own.error = "the compile of this card " + why + " without a summary" +
                (tail.empty() ? "" : ": " + tail);
    if (std::string error = qeff::tool::writeCardSummary(run_.outDir, own); !error.empty())
      own.error += "; " + error;
    s = std::move(own);
  }
  ++finished_;
  failed_ += !s->ok;
  std::string line = (s->ok ? "ok      " : "FAILED  ") + card.name + "  " +
                     formatv("{0:f2} s", s->seconds).str();
  if (s->ok)
    line += "  " + qeff::tool::humanBytes(s->outputBytes) + (s->cacheHit ? "  (cache hit)" : "");
  else {
    std::string error = s->error;
    if (size_t nl = error.find('\n'); nl != std::string::npos)
      error = error.substr(0, nl) + " ...";
    line += ": " + error;
  }
  event(line);
}

void Batch::reap() {
  for (size_t i = 0; i < running_.size();) {
    Child &c = running_[i];
    int status = 0;
    pid_t r = ::waitpid(c.pid, &status, WNOHANG);
    if (r != c.pid) {
      ++i;
      continue;
    }
    // Drain what the pipes still hold (the child is gone: they end).
    readPipes(50);
    for (int *fd : {&c.out, &c.err})
      if (*fd >= 0) {
        ::close(*fd);
        *fd = -1;
      }
    if (!c.outBuf.empty())
      handleLine(c, c.outBuf);
    Child done = std::move(c);
    running_.erase(running_.begin() + i);
    finished(done.index, done.start, status, done.errBuf);
  }
}

void Batch::clearLive() {
  if (!tty_ || liveLines_ == 0)
    return;
  outs() << "\x1b[" << liveLines_ << "F\x1b[J";
  liveLines_ = 0;
}

void Batch::event(const std::string &text) {
  clearLive();
  if (tty_)
    outs() << text << "\n";
  else
    outs() << formatv("[{0,7:f1} s] ", since(start_)) << text << "\n";
  outs().flush();
  redraw(true);
}

void Batch::redraw(bool force) {
  if (!tty_ || (!force && since(lastDraw_) < 0.2))
    return;
  lastDraw_ = Clock::now();
  clearLive();
  size_t total = file_.cards.size();
  outs() << formatv("[{0}/{1} done, {2} failed, {3} running] {4:f1} s\n", finished_,
                    total, failed_, running_.size() + checks_.size(), since(start_));
  liveLines_ = 1;
  for (const auto &c : checks_) {
    outs() << formatv("  {0}  hashing the checkpoint  {1:f1} s\n",
                      file_.cards[c->index].name, since(c->start));
    ++liveLines_;
  }
  for (const Child &c : running_) {
    outs() << formatv("  {0}  {1}  {2:f1} s\n", file_.cards[c.index].name, stageText(c),
                      since(c.start));
    ++liveLines_;
  }
  outs().flush();
}

int Batch::interrupt() {
  // Hash checks cannot be killed: let them end (a hit publishes its card
  // whole; a miss starts nothing now).
  reapChecks(/*wait=*/true);
  for (Child &c : running_)
    ::kill(-c.pid, SIGKILL);
  for (Child &c : running_) {
    int status = 0;
    while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
    for (int fd : {c.out, c.err})
      if (fd >= 0)
        ::close(fd);
    removeLeftovers(run_.outDir, c.pid);
    removeLeftovers(cacheDir_, c.pid);
    sys::fs::remove(qeff::tool::cardSummaryPath(run_.outDir, file_.cards[c.index].name));
  }
  clearLive();
  outs().flush();
  errs() << "qeff compile: "
         << (spawnFailed_ ? "cannot start a card process"
             : interrupted == SIGTERM ? "SIGTERM"
                                      : "SIGINT")
         << ": stopped "
         << running_.size() << " running compile(s); " << finished_ << " of "
         << file_.cards.size()
         << " cards had finished (their OUT/<name> and summaries stay), the "
            "others left nothing behind. summary.json not written; run the "
            "same command again to complete (finished cards are cache hits)\n";
  running_.clear();
  return spawnFailed_ ? 1 : 130;
}

int Batch::run() {
  cacheDir_ = run_.cacheDir.empty() ? defaultCacheDir() : run_.cacheDir;
  self_ = sys::fs::getMainExecutable(nullptr, nullptr);
  if (self_.empty()) {
    errs() << "qeff compile: cannot find the qeff executable to run the cards\n";
    return 1;
  }
  size_t numCards = file_.cards.size();
  unsigned cores = std::max(1u, llvm::hardware_concurrency().compute_thread_count());
  uint64_t budget = 0;
  for (const ModelCard &card : file_.cards)
    budget = std::max(budget, cardBudget(card));
  uint64_t memory = availableMemory();
  std::string why;
  if (run_.jobs > 0) {
    jobs_ = run_.jobs;
    why = "-j " + std::to_string(jobs_);
  } else {
    // A compile keeps about two cores busy (the pass pipeline and the
    // checkpoint hashing, then the exporter's converting threads and its
    // writer); memory allows one compile per budget of MemAvailable.
    int byCores = std::max(1u, cores / 2);
    int byMemory = memory ? static_cast<int>(std::max<uint64_t>(1, memory / budget)) : byCores;
    jobs_ = std::min(byCores, byMemory);
    why = formatv("auto: {0} cores at 2 per compile, {1} available at {2} per compile",
                  cores, memory ? qeff::tool::humanBytes(memory) : std::string("memory unknown"),
                  qeff::tool::humanBytes(budget))
              .str();
  }
  jobs_ = static_cast<int>(std::min<size_t>(jobs_, numCards));
  // The exporter's converting threads share the cores between the compiles.
  exportThreads_ = run_.exportThreads
                       ? run_.exportThreads
                       : std::clamp<unsigned>(cores / jobs_, 1, 8);
  outs() << "qeff compile: " << numCards << " card" << (numCards == 1 ? "" : "s")
         << " from " << run_.cardsFile << " -> " << run_.outDir << ", " << jobs_
         << " at a time (" << why << "; " << exportThreads_
         << " exporter thread(s) each), cache " << cacheDir_ << "\n";
  outs().flush();
  if (std::error_code ec = sys::fs::create_directories(run_.outDir)) {
    errs() << "qeff compile: cannot create " << run_.outDir << ": " << ec.message() << "\n";
    return 1;
  }

  struct sigaction action = {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);

  // Each card is first hashed here: a cache hit is published in this
  // process (it costs only its hash); a miss is compiled by a card process.
  size_t next = 0;
  while (next < numCards || !running_.empty() || !checks_.empty()) {
    if (spawnFailed_)
      interrupted = SIGTERM;
    if (interrupted)
      return interrupt();
    while (next < numCards && running_.size() + checks_.size() < size_t(jobs_))
      startCheck(next++);
    readPipes(checks_.empty() ? 100 : 10);
    reapChecks(/*wait=*/false);
    reap();
    redraw(false);
  }
  clearLive();
  std::vector<std::string> notes;
  Expected<std::vector<CardSummary>> cards =
      qeff::tool::collectCardSummaries(run_.outDir, file_.contentHash, notes);
  if (!cards) {
    errs() << "qeff compile: " << toString(cards.takeError()) << "\n";
    return 1;
  }
  if (std::string error = qeff::tool::writeSummary(run_.outDir, *cards); !error.empty()) {
    errs() << "qeff compile: " << error << "\n";
    return 1;
  }
  outs() << "\n";
  qeff::tool::printSummaryTable(*cards, run_.outDir);
  return failed_ == 0 ? 0 : 1;
}

} // namespace

int qeff::tool::runCompileCards(const CardsRun &run) {
  if (run.cardIndex >= 0)
    return detail::runOneCard(run, static_cast<size_t>(run.cardIndex));
  // Every card is checked before anything runs.
  Expected<ModelCardFile> file = readModelCards(run.cardsFile);
  if (!file) {
    errs() << toString(file.takeError()) << "\n";
    return 1;
  }
  Batch batch(run, *file);
  return batch.run();
}
