//===- GroupedMatMulTest.cpp - Grouped-query attention's repeated heads ----===//
//
// The host device fuses MatMul(A, Reshape(Expand(X))) (repeat_kv feeding the
// attention products) into one product per key/value head
// (runtime/host/GroupedMatMul.cpp). Through whole models: scores (B^T, a
// folded Transpose) and values, one row (decode: dot products, B in place)
// and more (packed), 1 and 2 threads, Reshape shapes written with 0 and -1,
// against a double-precision reference; shapes the fast path does not take
// (A broadcast over the batch, no repeat) give the same results as the
// nodes as written, and a bad Expand shape is an error naming the node. The
// same models with fusion off (an output observer sees every node) agree.
//
//===----------------------------------------------------------------------===//

#include "test/unit/Runtime/ModelBuilder.h"

#include <gmock/gmock.h>


using namespace qeff::runtime;
using namespace qeff::runtime::test;

namespace {

struct Dims {
  int64_t batch, groups, rep, rows, ctx, dim;
};

/// Q [b, g*rep, rows, dim] (or [1, ...] when `broadcastA`), K and V
/// [b, g, ctx, dim], P [b, g*rep, rows, ctx]: Scores = Q K^T and
/// Out = P V with K and V repeated as HF's repeat_kv writes it.
ModelBuilder groupedAttention(const Dims &d, const std::vector<int64_t> &reshape,
                              const std::vector<int64_t> &expand) {
  ModelBuilder b;
  for (const char *name : {"Q", "K", "V", "P"}) {
    b.input(name, F32, {});
    b.graph()->mutable_input()->rbegin()->mutable_type()->mutable_tensor_type()->clear_shape();
  }
  b.initI64("axes", {1}, {2});
  b.initI64("expand", {int64_t(expand.size())}, expand);
  b.initI64("reshape", {int64_t(reshape.size())}, reshape);
  for (const char *x : {"K", "V"}) {
    std::string s(x);
    b.node("Unsqueeze", {s, "axes"}, {s + "5"});
    b.node("Expand", {s + "5", "expand"}, {s + "e"});
    b.node("Reshape", {s + "e", "reshape"}, {s + "r"});
  }
  attrs(b.node("Transpose", {"Kr"}, {"Kt"}), "perm", {0, 1, 3, 2});
  b.node("MatMul", {"Q", "Kt"}, {"Scores"}, "scores");
  b.node("MatMul", {"P", "Vr"}, {"Out"}, "values");
  for (const char *name : {"Scores", "Out"}) {
    b.output(name, F32, {});
    b.graph()->mutable_output()->rbegin()->mutable_type()->mutable_tensor_type()->clear_shape();
  }
  return b;
}

struct Result {
  std::vector<float> scores, out;
  Shape scoresShape, outShape;
};

Result run(const ModelBuilder &b, const Dims &d, bool broadcastA, int threads, bool fuse) {
  int64_t heads = d.groups * d.rep, qb = broadcastA ? 1 : d.batch;
  auto q = randomFloats(qb * heads * d.rows * d.dim, 1);
  auto k = randomFloats(d.batch * d.groups * d.ctx * d.dim, 2);
  auto v = randomFloats(d.batch * d.groups * d.ctx * d.dim, 3);
  auto p = randomFloats(qb * heads * d.rows * d.ctx, 4);
  TempDir dir;
  SessionOptions opts;
  opts.numThreads = threads;
  if (!fuse)
    opts.outputObserver = [](const std::string &, const std::string &, const Tensor &) {};
  auto s = Session::open(b.save(dir), DeviceKind::Host, opts);
  EXPECT_TRUE(s.ok()) << s.error();
  if (!s.ok())
    return {};
  Status st = s->run({{"Q", Tensor::fromFloat({qb, heads, d.rows, d.dim}, q)},
                      {"K", Tensor::fromFloat({d.batch, d.groups, d.ctx, d.dim}, k)},
                      {"V", Tensor::fromFloat({d.batch, d.groups, d.ctx, d.dim}, v)},
                      {"P", Tensor::fromFloat({qb, heads, d.rows, d.ctx}, p)}});
  EXPECT_TRUE(st.ok()) << st.error();
  if (!st.ok())
    return {};
  Result r;
  r.scores = floats(*s->getOutput("Scores"));
  r.out = floats(*s->getOutput("Out"));
  r.scoresShape = s->getOutput("Scores")->shape();
  r.outShape = s->getOutput("Out")->shape();
  // The reference, in double.
  for (int64_t bi = 0; bi < d.batch; ++bi)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < d.rows; ++i) {
        int64_t qrow = ((broadcastA ? 0 : bi) * heads + h) * d.rows + i;
        int64_t kv = (bi * d.groups + h / d.rep) * d.ctx;
        int64_t orow = (bi * heads + h) * d.rows + i;
        for (int64_t c = 0; c < d.ctx; ++c) {
          double sum = 0;
          for (int64_t e = 0; e < d.dim; ++e)
            sum += double(q[qrow * d.dim + e]) * k[(kv + c) * d.dim + e];
          EXPECT_NEAR(r.scores[orow * d.ctx + c], sum, 1e-5 * d.dim) << "scores " << orow;
        }
        for (int64_t e = 0; e < d.dim; ++e) {
          double sum = 0;
          for (int64_t c = 0; c < d.ctx; ++c)
            sum += double(p[qrow * d.ctx + c]) * v[(kv + c) * d.dim + e];
          EXPECT_NEAR(r.out[orow * d.dim + e], sum, 1e-5 * d.ctx) << "out " << orow;
        }
      }
  return r;
}

TEST(HostGroupedMatMul, RepeatedHeadsMatchTheReference) {
  for (int64_t rows : {1, 3, 20})
    for (int64_t rep : {1, 4})
      for (int threads : {1, 2})
        for (int form = 0; form < 3; ++form) {
          Dims d{2, 3, rep, rows, 37, 19};
          std::vector<int64_t> expand{d.batch, d.groups, rep, d.ctx, d.dim};
          std::vector<int64_t> reshape{d.batch, d.groups * rep, d.ctx, d.dim};
          if (form == 1)
            reshape = {0, -1, d.ctx, d.dim}; // 0 copies E's dim; -1 is inferred
          if (form == 2)
            expand = {1, 1, rep, 1, 1}; // broadcast dims written as 1
          SCOPED_TRACE(::testing::Message() << "rows " << rows << " rep " << rep << " threads "
                                            << threads << " form " << form);
          ModelBuilder b = groupedAttention(d, reshape, expand);
          Result fused = run(b, d, false, threads, true);
          Result plain = run(b, d, false, threads, false);
          EXPECT_EQ(fused.scoresShape, Shape({d.batch, d.groups * rep, rows, d.ctx}));
          EXPECT_EQ(fused.outShape, Shape({d.batch, d.groups * rep, rows, d.dim}));
          EXPECT_EQ(fused.scoresShape, plain.scoresShape);
          EXPECT_EQ(fused.outShape, plain.outShape);
        }
}

TEST(HostGroupedMatMul, OtherShapesRunTheNodesAsWritten) {
  // A broadcast over the batch: the products take the MatMul's broadcasting.
  Dims d{2, 2, 3, 2, 16, 8};
  ModelBuilder b = groupedAttention(d, {d.batch, d.groups * d.rep, d.ctx, d.dim},
                                    {d.batch, d.groups, d.rep, d.ctx, d.dim});
  Result r = run(b, d, true, 2, true);
  EXPECT_EQ(r.scoresShape, Shape({d.batch, d.groups * d.rep, d.rows, d.ctx}));
  // A Reshape that does not merge the repeated dim into the heads.
  Dims flat{1, 2, 2, 1, 8, 4};
  ModelBuilder f = groupedAttention(flat, {1, 2, 2 * 8, 4}, {1, 2, 2, 8, 4});
  TempDir dir;
  auto s = Session::open(f.save(dir), DeviceKind::Host);
  ASSERT_TRUE(s.ok()) << s.error();
  std::vector<float> q(1 * 2 * 1 * 4, 1.f), kv(1 * 2 * 8 * 4, 0.5f), p(1 * 2 * 1 * 16, 0.25f);
  Status st = s->run({{"Q", Tensor::fromFloat({1, 2, 1, 4}, q)},
                      {"K", Tensor::fromFloat({1, 2, 8, 4}, kv)},
                      {"V", Tensor::fromFloat({1, 2, 8, 4}, kv)},
                      {"P", Tensor::fromFloat({1, 2, 1, 16}, p)}});
  ASSERT_TRUE(st.ok()) << st.error();
  EXPECT_EQ(s->getOutput("Scores")->shape(), Shape({1, 2, 1, 16}));
  for (float x : floats(*s->getOutput("Scores")))
    EXPECT_FLOAT_EQ(x, 2.f); // 4 x 1 x 0.5
  for (float x : floats(*s->getOutput("Out")))
    EXPECT_FLOAT_EQ(x, 2.f); // 16 x 0.25 x 0.5
  // An Expand shape that does not broadcast: the Expand's error, in the
  // fused node.
  ModelBuilder bad = groupedAttention(flat, {1, 4, 8, 4}, {1, 3, 2, 8, 4});
  TempDir dir2;
  auto sb = Session::open(bad.save(dir2), DeviceKind::Host);
  ASSERT_TRUE(sb.ok()) << sb.error();
  st = sb->run({{"Q", Tensor::fromFloat({1, 4, 1, 4}, std::vector<float>(16, 1.f))},
                {"K", Tensor::fromFloat({1, 2, 8, 4}, kv)},
                {"V", Tensor::fromFloat({1, 2, 8, 4}, kv)},
                {"P", Tensor::fromFloat({1, 4, 1, 8}, std::vector<float>(32, 1.f))}});
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error(), ::testing::HasSubstr("MatMul(Reshape(Expand))"));
}

} // namespace
