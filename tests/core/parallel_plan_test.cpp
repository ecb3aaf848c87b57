#include <doctest/doctest.h>

#include "core/input_error.hpp"
#include "core/parallel_plan.hpp"
#include "core/rank_layout.hpp"
#include "cost/test_models.hpp"

using namespace parashift::core;

namespace {
ModelSpec gpt3() {
  return test::gpt3_175b();
}
ParallelPlan plan_8x8x16() {
  ParallelPlan p;
  p.tp = 8;
  p.pp = 8;
  p.dp = 16;
  p.global_batch = 1536;
  return p;
}
}  // namespace

TEST_CASE("a valid plan has no problems and derives its micro-batch count") {
  const ParallelPlan p = plan_8x8x16();
  CHECK(p.problems(gpt3(), 2048, 1024).empty());
  CHECK(p.gpus() == 1024);
  // 1536 sequences / (16 replicas * 1 per micro-batch) = 96 micro-batches per replica.
  CHECK(p.micro_batches() == 96);
}

TEST_CASE("impossible plans are refused with the field named") {
  ParallelPlan p = plan_8x8x16();
  p.tp = 5;  // 96 heads are not divisible by 5; 5*8*16 = 640 GPUs
  const auto problems = p.problems(gpt3(), 2048, 1024);
  REQUIRE(problems.size() >= 2);
  CHECK(problems[0] == "tp: tp=5 does not divide heads=96");
  CHECK_THROWS_WITH_AS(p.validate(gpt3(), 2048, 1024), "plan.tp: tp=5 does not divide heads=96",
                       InputError);

  p = plan_8x8x16();
  CHECK_THROWS_WITH_AS(p.validate(gpt3(), 2048, 512),
                       "plan.dp: tp*pp*dp*cp=8*8*16*1=1024 differs from the cluster's 512 GPUs",
                       InputError);

  p = plan_8x8x16();
  p.global_batch = 1000;  // not a multiple of dp * micro_batch = 16
  CHECK_THROWS_WITH_AS(p.validate(gpt3(), 2048, 1024),
                       "plan.global_batch: 1000 is not divisible by dp*micro_batch=16", InputError);

  p = plan_8x8x16();
  p.virtual_stages = 2;  // chunks need the interleaved schedule
  CHECK_FALSE(p.problems(gpt3(), 2048, 1024).empty());
  p.schedule = Schedule::Interleaved1F1B;
  CHECK(p.problems(gpt3(), 2048, 1024).empty());

  p = plan_8x8x16();
  p.sequence_parallel = true;
  p.tp = 1;
  p.dp = 128;
  CHECK(p.problems(gpt3(), 2048, 1024) ==
        std::vector<std::string>{"sequence_parallel: needs tp > 1"});
}

TEST_CASE("enum names round-trip and bad names list the choices") {
  for (auto s :
       {Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved1F1B, Schedule::ZeroBubbleH1}) {
    CHECK(parse_schedule(to_string(s)) == s);
  }
  CHECK_THROWS_WITH_AS(parse_recompute("some"),
                       "expected one of none, selective, full, found 'some'", InputError);
  CHECK(parse_optimizer_sharding("fsdp") == OptimizerSharding::Fsdp);
  CHECK(parse_precision("fp8") == Precision::Fp8);
}

TEST_CASE("rank layout: tp fastest, then cp, dp, pp") {
  ParallelPlan p;
  p.tp = 4;
  p.cp = 2;
  p.dp = 3;
  p.pp = 2;
  const RankLayout layout(p);
  // rank = tp + 4 * (cp + 2 * (dp + 3 * pp)); (tp 1, cp 1, dp 2, pp 1) -> 1 + 4*(1 + 2*5) = 45.
  CHECK(layout.rank({1, 1, 2, 1}) == 45);
  for (int r = 0; r < layout.ranks(); ++r) CHECK(layout.rank(layout.coord(r)) == r);
}

TEST_CASE("rank order tp-cp-pp-dp puts each replica's whole pipeline on consecutive ranks") {
  ParallelPlan p;
  p.tp = 4;
  p.cp = 2;
  p.dp = 3;
  p.pp = 2;
  p.order = parse_rank_order("tp-cp-pp-dp");
  const RankLayout layout(p);
  // rank = tp + 4 * (cp + 2 * (pp + 2 * dp)); (tp 1, cp 1, dp 2, pp 1) -> 1 + 4*(1 + 2*5) = 45,
  // as in the default order by coincidence; (tp 0, cp 0, dp 1, pp 0) -> 4*2*2 = 16 (default: 8).
  CHECK(layout.rank({1, 1, 2, 1}) == 45);
  CHECK(layout.rank({0, 0, 1, 0}) == 16);
  CHECK(layout.dp_stride() == 16);
  CHECK(layout.pp_stride() == 8);
  for (int r = 0; r < layout.ranks(); ++r) CHECK(layout.rank(layout.coord(r)) == r);
  CHECK(p.label().find(" order:tp-cp-pp-dp") != std::string::npos);
  p.order = RankOrder::TpCpDpPp;
  CHECK(p.label().find("order") == std::string::npos);  // the default is not named
  CHECK(RankLayout(p).rank({0, 0, 1, 0}) == 8);
  CHECK_THROWS_WITH(parse_rank_order("pp-dp"),
                    "expected one of tp-cp-dp-pp, tp-cp-pp-dp, found 'pp-dp'");
}

TEST_CASE("sync modes and compressors: what the replicated all-reduce needs") {
  ParallelPlan p = plan_8x8x16();
  p.sync = SyncMode::Hierarchical;
  p.compression = parse_compression("powersgd:4");
  CHECK(p.problems(gpt3(), 2048, 1024).empty());
  CHECK(p.label().find(" sync:hierarchical gc:powersgd:4") != std::string::npos);
  // GPT-3's hidden 12288 / tp 8 = 1536 rows in its smallest matrix.
  p.compression = parse_compression("powersgd:1537");
  CHECK(p.problems(gpt3(), 2048, 1024) ==
        std::vector<std::string>{"compression: powersgd rank 1537 exceeds the smallest gradient "
                                 "matrix's rank, min(hidden, ffn_hidden)/tp = 1536"});
  p.compression = parse_compression("int8");
  p.optimizer_sharding = OptimizerSharding::Distributed;
  const auto problems = p.problems(gpt3(), 2048, 1024);
  REQUIRE(problems.size() == 2);
  CHECK(problems[0] ==
        "sync: hierarchical needs optimizer_sharding none (the replicated gradient all-reduce), "
        "found distributed");
  CHECK(problems[1].rfind("compression: int8:256 needs optimizer_sharding none", 0) == 0);
  CHECK(parse_sync_mode("flat") == SyncMode::Flat);
  CHECK_THROWS_WITH_AS(parse_sync_mode("tree"),
                       "expected one of flat, hierarchical, delayed, found 'tree'", InputError);
}

TEST_CASE("dp_shard: HSDP's shard degree, its label and its problems") {
  ParallelPlan p = plan_8x8x16();
  CHECK(p.shard_degree() == 1);  // no sharding
  p.optimizer_sharding = OptimizerSharding::Distributed;
  CHECK(p.shard_degree() == 16);
  p.optimizer_sharding = OptimizerSharding::Fsdp;
  CHECK(p.shard_degree() == 16);
  p.dp_shard = 4;  // 4 shards, 4 replicas of each
  CHECK(p.shard_degree() == 4);
  CHECK(p.problems(gpt3(), 2048, 1024).empty());
  CHECK(p.label().find("os:fsdp/4 ") != std::string::npos);
  p.dp_shard = 16;  // the whole group: plain FSDP, labelled so
  CHECK(p.label().find("os:fsdp bf16") != std::string::npos);
  p.dp_shard = 3;
  CHECK(p.problems(gpt3(), 2048, 1024) ==
        std::vector<std::string>{"dp_shard: 3 does not divide dp=16"});
  p.dp_shard = 4;
  p.optimizer_sharding = OptimizerSharding::Distributed;
  CHECK(p.problems(gpt3(), 2048, 1024) ==
        std::vector<std::string>{
            "dp_shard: sharding over 4 ranks needs optimizer_sharding fsdp, found distributed"});
  CHECK(p.shard_degree() == 16);
}

TEST_CASE("recompute_layers: the share of a stage's layers recomputed, and its problems") {
  ParallelPlan p = plan_8x8x16();            // GPT-3 175B: 96 layers over pp 8, 12 a stage
  CHECK(p.full_recompute_share(96) == 0.0);  // no recompute
  p.recompute = Recompute::Full;
  CHECK(p.full_recompute_share(96) == 1.0);  // every layer (recompute_layers 0)
  p.recompute_layers = 3;                    // 3 of a stage's 12
  CHECK(p.full_recompute_share(96) == doctest::Approx(0.25));
  CHECK(p.problems(gpt3(), 2048, 1024).empty());
  CHECK(p.label().find("rc:full3") != std::string::npos);
  // With 2 chunks a rank a (virtual) stage holds 6 layers: 3 is half.
  p.virtual_stages = 2;
  p.schedule = Schedule::Interleaved1F1B;
  CHECK(p.full_recompute_share(96) == doctest::Approx(0.5));
  p.recompute_layers = 7;  // more than the 6 a chunk holds
  CHECK(p.problems(gpt3(), 2048, 1024) ==
        std::vector<std::string>{"recompute_layers: 7 exceeds the layers of a stage (6)"});
  p.recompute_layers = 3;
  p.recompute = Recompute::Selective;
  CHECK(p.problems(gpt3(), 2048, 1024) ==
        std::vector<std::string>{
            "recompute_layers: 3 layers recomputed need recompute full, found selective"});
  CHECK(p.full_recompute_share(96) == 0.0);
  p.recompute = Recompute::Full;
  p.recompute_layers = -1;
  CHECK(p.problems(gpt3(), 2048, 1024) ==
        std::vector<std::string>{"recompute_layers: expected an integer >= 0, found -1"});
}
