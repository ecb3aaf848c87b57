#include <doctest/doctest.h>

#include "core/validation/published_run.hpp"
#include "core/validation/validation_report.hpp"

using namespace parashift::core;

TEST_CASE("gpu_type keywords map to device presets") {
  std::string note;
  CHECK(device_for_gpu_type("A100-SXM4-80GB (DGX A100, NVIDIA Selene)", &note) == "a100-80gb");
  CHECK(note.empty());
  CHECK(device_for_gpu_type("NVIDIA A100 40GB", nullptr) == "a100-40gb");
  CHECK(device_for_gpu_type("H100-SXM5-80GB (DGX H100, NVIDIA Eos)", nullptr) == "h100-sxm-80gb");
  note.clear();
  CHECK(device_for_gpu_type("H100 (SXM 80GB presumed; README only says H100)", &note) ==
        "h100-sxm-80gb");
  CHECK(note.empty());
  note.clear();
  CHECK(device_for_gpu_type("H100 (implied)", &note) == "h100-sxm-80gb");
  CHECK(note.find("variant not stated") != std::string::npos);
  CHECK(device_for_gpu_type("H100 96GB HBM2e, 500 W power cap (Grand Teton)", nullptr) ==
        "h100-96gb-500w");
  CHECK(device_for_gpu_type("h200 141GB", nullptr) == "h200");
  CHECK_FALSE(device_for_gpu_type("H100 PCIe 80GB", nullptr));
  CHECK_FALSE(device_for_gpu_type("V100-SXM2-32GB", nullptr));
  CHECK_FALSE(device_for_gpu_type("TPU v4", nullptr));
}

TEST_CASE("precision, sharding, recompute and yes/no keywords") {
  CHECK(precision_from_text("FP8 (hybrid, Transformer Engine)") == Precision::Fp8);
  CHECK(precision_from_text("Float8 linears") == Precision::Fp8);
  CHECK(precision_from_text("BF16 (MFU = TFLOP/s / 989)") == Precision::Bf16);
  CHECK(precision_from_text("16-bit mixed precision") == Precision::Bf16);
  CHECK_FALSE(precision_from_text("int4"));
  CHECK(sharding_from_text("FSDP2 (ZeRO-3 style)") == OptimizerSharding::Fsdp);
  CHECK(sharding_from_text("distributed optimizer (--overlap-param-gather)") ==
        OptimizerSharding::Distributed);
  CHECK(sharding_from_text("ZeRO-1") == OptimizerSharding::Distributed);
  CHECK(sharding_from_text("none") == OptimizerSharding::None);
  CHECK_FALSE(sharding_from_text("magic"));
  CHECK(recompute_from_text("full (Eq.3 assumes recompute)") == Recompute::Full);
  CHECK(recompute_from_text("selective (attention core only)") == Recompute::Selective);
  CHECK(recompute_from_text("per-op selective") == Recompute::Selective);
  CHECK(recompute_from_text("none") == Recompute::None);
  CHECK_FALSE(recompute_from_text("sometimes"));
  CHECK(yes_no_from_text("yes") == true);
  CHECK(yes_no_from_text(" No ") == false);
  CHECK_FALSE(yes_no_from_text("maybe"));
}

TEST_CASE("numbers with trailing comments") {
  CHECK(leading_number("8192 (default cfg)") == 8192.0);
  CHECK(leading_number(" 3.53 ") == 3.53);
  CHECK(leading_number("12(approx)") == 12.0);
  CHECK_FALSE(leading_number("abc"));
  CHECK_FALSE(leading_number("12abc"));
  CHECK_FALSE(leading_number(""));
}

namespace {

const char* kHeader =
    "row_id,source_group,model,arch_notes,layers,hidden,heads,kv_heads,ffn_hidden,seq_len,vocab,"
    "gpu_type,num_gpus,gpus_per_node,tp,pp,dp,cp,vp_interleave,micro_batch,global_batch_seqs,"
    "act_recompute,seq_parallel,precision,optimizer_sharding,framework,notes,"
    "reported_iteration_time_s,derived_iteration_time_s\n";

}  // namespace

TEST_CASE("empty cells get documented defaults, each reported") {
  const std::string csv =
      std::string(kHeader) +
      "R1,G,Llama 8B,\"SwiGLU, RoPE, GQA\",32,4096,32,8,14336,8192 (default cfg),128256,"
      "\"H100 96GB HBM2e, 500 W power cap\",8,8,1,1,8,,,2,16,selective,,BF16,"
      "FSDP2 (ZeRO-3 style),torchtitan (eager),,,2.84\n";
  const ValidationReport r = validate_csv_table(parse_csv(csv, "d.csv"), "d.csv");
  REQUIRE(r.rows.size() == 1);
  const PublishedRun& run = r.rows[0].run;
  CHECK(run.seq_len == 8192);
  CHECK(run.device == "h100-96gb-500w");
  CHECK(run.plan.cp == 1);
  CHECK(run.plan.virtual_stages == 1);
  CHECK(run.plan.optimizer_sharding == OptimizerSharding::Fsdp);
  CHECK(run.plan.precision == Precision::Bf16);
  CHECK(run.model.ffn_kind == FfnKind::SwiGlu);
  // torchtitan's "selective" is op-level SAC; eager runs unfused element-wise ops.
  CHECK(run.options.selective == SelectiveRecompute::PerOp);
  CHECK(run.options.elementwise_traffic > 1.0);
  CHECK(run.measured_s == 2.84);  // derived time when no reported one
  auto said = [&run](const char* what) {
    for (const auto& d : run.defaults) {
      if (d.find(what) != std::string::npos) return true;
    }
    return false;
  };
  CHECK(said("cp=1"));
  CHECK(said("no interleaving"));
  CHECK(said("seq_parallel=off"));
}

TEST_CASE("vp_interleave 'yes' and numbers, reported time wins over derived") {
  const std::string csv =
      std::string(kHeader) +
      "R2,G,GPT,GPT-3 style,96,12288,96,96,49152,2048,51200,H100-SXM5-80GB,128,8,4,8,4,1,yes,1,256,"
      ",,FP8,,NeMo,,8.9,9.5\n"
      "R3,G,GPT,GPT-3 style,96,12288,96,96,49152,2048,51200,H100-SXM5-80GB,128,8,4,8,4,1,12,1,256,"
      ",,BF16,,NeMo,,8.9,\n";
  const ValidationReport r = validate_csv_table(parse_csv(csv, "v.csv"), "v.csv");
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0].run.plan.virtual_stages == 2);
  CHECK(r.rows[0].run.plan.schedule == Schedule::Interleaved1F1B);
  CHECK(r.rows[0].run.measured_s == 8.9);
  CHECK(r.rows[0].run.plan.precision == Precision::Fp8);
  CHECK(r.rows[0].run.plan.sequence_parallel);  // default on with tp > 1
  CHECK(r.rows[1].run.plan.virtual_stages == 12);
}

TEST_CASE("malformed rows are named by file and line, the rest is still processed") {
  const std::string good =
      "OK,G,GPT,GPT-3 style,24,2048,16,16,8192,2048,51200,A100-SXM4-80GB,8,8,1,1,8,1,,1,64,,no,"
      "BF16,none,Megatron-LM,,1.0,\n";
  const std::string bad_number =
      "BADNUM,G,GPT,GPT-3 style,twenty,2048,16,16,8192,2048,51200,A100-SXM4-80GB,8,8,1,1,8,1,,1,"
      "64,,no,BF16,none,Megatron-LM,,1.0,\n";
  const std::string short_row = "SHORT,G,GPT,,24\n";
  const std::string unknown_gpu =
      "V100,G,GPT,GPT-3 style,24,2048,16,16,8192,2048,51200,V100-SXM2-32GB,8,8,1,1,8,1,,1,64,,no,"
      "BF16,none,Megatron-LM,,1.0,\n";
  const std::string bad_plan =
      "PLAN,G,GPT,GPT-3 style,24,2048,16,16,8192,2048,51200,A100-SXM4-80GB,8,8,3,1,8,1,,1,64,,no,"
      "BF16,none,Megatron-LM,,1.0,\n";
  const std::string csv =
      std::string(kHeader) + good + bad_number + short_row + unknown_gpu + bad_plan;
  const ValidationReport r = validate_csv_table(parse_csv(csv, "m.csv"), "m.csv");
  CHECK(r.rows.size() == 1);
  REQUIRE(r.malformed.size() == 2);
  CHECK(r.malformed[0].find("m.csv:3 (BADNUM): column layers: expected a number, found 'twenty'") !=
        std::string::npos);
  CHECK(r.malformed[1].find("m.csv:4: expected 29 fields, found 5") != std::string::npos);
  REQUIRE(r.skipped.size() == 2);
  CHECK(r.skipped[0].row_id == "V100");
  CHECK(r.skipped[0].reason.find("gpu_type 'V100-SXM2-32GB' matches no device preset") !=
        std::string::npos);
  CHECK(r.skipped[1].reason.find("tp=3 does not divide heads=16") != std::string::npos);
}

TEST_CASE("a GPU named by its peak, implied recompute, Llama's untied head, group and schedule") {
  std::string note;
  CHECK(device_for_gpu_type("312 TFLOP/s Ampere part", &note) == "a100-80gb");
  CHECK(note.find("named by its peak") != std::string::npos);
  CHECK(device_for_gpu_type("Hopper (989 TFLOPS dense BF16)", nullptr) == "h100-sxm-80gb");
  CHECK_FALSE(device_for_gpu_type("a 500 TFLOP/s part", nullptr));
  CHECK(recompute_from_text("implied") == Recompute::Full);
  const std::string header =
      "row_id,source_group,model,arch_notes,layers,hidden,heads,kv_heads,ffn_hidden,seq_len,vocab,"
      "gpu_type,num_gpus,gpus_per_node,tp,pp,dp,cp,vp_interleave,micro_batch,global_batch_seqs,"
      "act_recompute,seq_parallel,precision,optimizer_sharding,framework,notes,"
      "reported_iteration_time_s,derived_iteration_time_s,group,schedule\n";
  const std::string csv =
      header +
      "L,G,Llama 3 8B,\"SwiGLU, GQA\",32,4096,32,8,14336,8192,128256,H100-SXM5-80GB,16,8,1,2,8,,,"
      "1,64,,,BF16,,Megatron-Core,,2.0,,g1,zb_h1\n"
      "T,G,Llama 3.2 1B,\"SwiGLU, GQA, tied\",16,2048,32,8,8192,8192,128256,H100-SXM5-80GB,8,8,1,1,"
      "8,,,1,64,,,BF16,,Megatron-Core,,1.0,,,\n"
      "Z,G,Llama 3 8B,SwiGLU,32,4096,32,8,14336,8192,128256,H100-SXM5-80GB,16,8,1,2,8,,,"
      "1,64,,,BF16,,Megatron-Core,,2.0,,g1,warp_drive\n";
  const ValidationReport r = validate_csv_table(parse_csv(csv, "s.csv"), "s.csv");
  REQUIRE(r.rows.size() == 2);
  CHECK_FALSE(r.rows[0].run.model.tied_embeddings);
  CHECK(r.rows[0].run.group == "g1");
  CHECK(r.rows[0].run.plan.schedule == Schedule::ZeroBubbleH1);
  CHECK(r.rows[0].run.location == "s.csv:2 (L)");
  CHECK(r.rows[1].run.model.tied_embeddings);  // said so in arch_notes
  REQUIRE(r.skipped.size() == 1);
  CHECK(r.skipped[0].reason.find("schedule 'warp_drive' not recognised") != std::string::npos);
}

TEST_CASE("torchtitan FSDP with pipelining keeps parameters gathered (costs as ZeRO-1)") {
  const std::string csv =
      std::string(kHeader) +
      "P,G,Llama 70B,\"SwiGLU, GQA\",80,8192,64,8,28672,8192,128256,\"H100 96GB, 500 W\",64,8,8,"
      "2,4,,,1,32,full,,BF16,FSDP2 (ZeRO-3 style),torchtitan (compile),,,10.0\n"
      "Q,G,Llama 70B,\"SwiGLU, GQA\",80,8192,64,8,28672,8192,128256,\"H100 96GB, 500 W\",64,8,8,"
      "1,8,,,1,32,full,,BF16,FSDP2 (ZeRO-3 style),torchtitan (compile),,,10.0\n";
  const ValidationReport r = validate_csv_table(parse_csv(csv, "t.csv"), "t.csv");
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0].run.plan.optimizer_sharding == OptimizerSharding::Distributed);
  CHECK(r.rows[1].run.plan.optimizer_sharding == OptimizerSharding::Fsdp);
}

TEST_CASE("out-of-range sizes are malformed or skipped, never predicted") {
  const std::string row_prefix = "O,G,GPT,GPT-3 style,24,2048,16,16,8192,";
  const std::string csv =
      std::string(kHeader) +
      // seq_len 819,252,128 (a fuzzer's row): over the 2^24 range of the column.
      row_prefix +
      "819252128,51200,A100-SXM4-80GB,8,8,1,1,8,1,,1,64,,no,BF16,none,Megatron,,1.0,\n" +
      // Each in range, but 2^24 sequences of 2^24 tokens: years per iteration at peak.
      "P,G,GPT,GPT-3 style,4096,65536,512,512,262144,16777216,51200,A100-SXM4-80GB,8,8,1,1,8,1,,1,"
      "16777216,,no,BF16,none,Megatron,,1.0,\n";
  const ValidationReport r = validate_csv_table(parse_csv(csv, "o.csv"), "o.csv");
  CHECK(r.rows.empty());
  REQUIRE(r.malformed.size() == 1);
  CHECK(r.malformed[0].find("column seq_len: expected a whole number from 0 to 16777216") !=
        std::string::npos);
  REQUIRE(r.skipped.size() == 1);
  CHECK(r.skipped[0].reason.find("sizes out of range") != std::string::npos);
}

TEST_CASE("XLA of 2023 without Transformer Engine runs attention unfused") {
  // XLA turned cuDNN flash attention on by default on 2024-02-06 (JAX-Toolbox
  // Pax README): a 2023 container without TE has none; TE's rows and later
  // containers keep the default, fused. The same 126M plan four ways.
  const std::string plan =
      "GPT-3 style,12,768,12,12,3072,2048,50304,A100-SXM4-80GB,64,8,1,1,64,1,,4,256,none,no,";
  const std::string csv = std::string(kHeader) +  //
                          "A,G,GPT," + plan + "BF16,none,\"Paxml (JAX/XLA), jax:23.08\",,0.14,\n" +
                          "B,G,GPT," + plan +
                          "BF16 (Transformer Engine),none,\"Paxml (JAX/XLA), jax:23.08\",,0.11,\n" +
                          "C,G,GPT," + plan + "BF16,none,\"Paxml (JAX/XLA), jax:24.04\",,0.12,\n" +
                          "D,G,GPT," + plan + "BF16,none,Megatron-Core 0.9 (2024),,0.12,\n";
  const ValidationReport r = validate_csv_table(parse_csv(csv, "x.csv"), "x.csv");
  REQUIRE(r.rows.size() == 4);
  CHECK(r.rows[0].run.model.attention == AttentionKernel::Unfused);
  CHECK(r.rows[1].run.model.attention == AttentionKernel::Fused);
  CHECK(r.rows[2].run.model.attention == AttentionKernel::Fused);
  CHECK(r.rows[3].run.model.attention == AttentionKernel::Fused);
  // Unfused attention writes and reads the s x s scores: 12 heads x 2048^2 =
  // 50M a layer and sequence, some 20 B each through softmax and dropout,
  // forward and backward: ~1 GB, ~0.7 ms at ~1.5 TB/s, against ~126 GFLOP
  // of GEMMs and attention (3 x (24 s h^2 + 4 s^2 h)), ~0.6 ms at ~200
  // TFLOP/s. About twice the time: more than 1.2x with margin.
  CHECK(r.rows[0].predicted_s > 1.2 * r.rows[1].predicted_s);
}

TEST_CASE("checkpointing a fraction of blocks: the share from the row's HFU over MFU") {
  // HFU counts the recomputed forward, 2 of a layer's 6 FLOPs per parameter
  // and token; MFU does not: HFU/MFU = 1 + f/3. fms-fsdp's 13B row, MFU 61
  // and HFU 69: f = 3 (69/61 - 1) = 0.393; its 70B row, 55 and 74, past 1.
  CHECK(recomputed_block_share(61.0, 69.0) == doctest::Approx(0.3934).epsilon(1e-3));
  CHECK(recomputed_block_share(55.0, 74.0) == 1.0);
  CHECK(recomputed_block_share(68.0, 68.0) == 0.0);
  CHECK_FALSE(recomputed_block_share(std::nullopt, 69.0));
  CHECK_FALSE(recomputed_block_share(61.0, 0.0));
  CHECK(recomputes_some_blocks("selective (fms-fsdp: full checkpointing of a fraction of blocks)"));
  CHECK(recomputes_some_blocks("--recompute-method block"));
  CHECK_FALSE(recomputes_some_blocks("selective (attention core only)"));
  const std::string header =
      "row_id,source_group,model,arch_notes,layers,hidden,heads,kv_heads,ffn_hidden,seq_len,vocab,"
      "gpu_type,num_gpus,gpus_per_node,tp,pp,dp,cp,vp_interleave,micro_batch,global_batch_seqs,"
      "act_recompute,seq_parallel,precision,optimizer_sharding,framework,notes,"
      "reported_iteration_time_s,derived_iteration_time_s,reported_mfu_pct,reported_hfu_pct\n";
  const std::string plan =
      "Llama 2 13B,SwiGLU,40,5120,40,40,13824,4096,32000,A100-SXM4-80GB,128,8,1,1,128,1,,2,256,"
      "\"selective (full checkpointing of a fraction of blocks)\",no,BF16,FSDP,fms-fsdp,,,3.81,";
  const std::string csv = header + "A,G," + plan + "61,69\n" +  // 0.393 x 40 = 15.7: 16 layers
                          "B,G," + plan + "55,74\n" +           // every layer
                          "C,G," + plan + "68,68\n" +           // none
                          "D,G," + plan + ",\n";                // not stated: every layer
  const ValidationReport r = validate_csv_table(parse_csv(csv, "f.csv"), "f.csv");
  REQUIRE(r.rows.size() == 4);
  CHECK(r.rows[0].run.plan.recompute == Recompute::Full);
  CHECK(r.rows[0].run.plan.recompute_layers == 16);
  CHECK(r.rows[1].run.plan.recompute == Recompute::Full);
  CHECK(r.rows[1].run.plan.recompute_layers == 0);
  CHECK(r.rows[2].run.plan.recompute == Recompute::None);
  CHECK(r.rows[3].run.plan.recompute == Recompute::Full);
  CHECK(r.rows[3].run.plan.recompute_layers == 0);
  // Fewer layers recomputed, less time: A's prediction under B's.
  CHECK(r.rows[0].predicted_s < r.rows[1].predicted_s);
  CHECK(r.rows[2].predicted_s < r.rows[0].predicted_s);
}

TEST_CASE("a stated inter-node network is priced, one that does not say of what is not") {
  // 8 NICs x 400 Gb/s = 3,200 Gb/s = 400e9 B/s a node.
  CHECK(node_network_Bps_from_text("8x400 Gb/s NDR InfiniBand per node (ConnectX-7)", 8) ==
        doctest::Approx(400e9));
  // 400 Gb/s per GPU on 8 GPUs: the same node.
  CHECK(node_network_Bps_from_text("RDMA backend network, 400 Gb/s per GPU", 8) ==
        doctest::Approx(400e9));
  // 400 Gb/s for the node: 50e9 B/s.
  CHECK(node_network_Bps_from_text("400 Gb/s per node network (\"128 GPUs with 400Gbps\")", 8) ==
        doctest::Approx(50e9));
  CHECK_FALSE(node_network_Bps_from_text("InfiniBand NDR 400 Gb/s (report hardware line)", 8));
  CHECK_FALSE(node_network_Bps_from_text("not stated in the source", 8));
  CHECK_FALSE(node_network_Bps_from_text("", 8));
  // A cell of a million characters (a fuzzer's): read without recursion.
  CHECK_FALSE(node_network_Bps_from_text(std::string(1'000'000, '9') + " Gb/s", 8));
  std::string many;
  for (int i = 0; i < 100'000; ++i) many += "4 gbps x";
  CHECK_FALSE(node_network_Bps_from_text(many, 8));
  // The A100 preset's NIC is 200 Gb/s a GPU, 1,600 Gb/s a node; a row
  // stating 400 Gb/s a node has a quarter of it, and its FSDP gathers over
  // 16 nodes take longer: the prediction grows.
  const std::string header =
      "row_id,source_group,model,arch_notes,layers,hidden,heads,kv_heads,ffn_hidden,seq_len,vocab,"
      "gpu_type,num_gpus,gpus_per_node,inter_node,tp,pp,dp,cp,vp_interleave,micro_batch,"
      "global_batch_seqs,act_recompute,seq_parallel,precision,optimizer_sharding,framework,notes,"
      "reported_iteration_time_s\n";
  const std::string model =
      "Llama 2 34B,\"SwiGLU, GQA\",48,8192,64,8,22016,4096,32000,A100-SXM4-80GB,128,8,";
  const std::string plan = ",1,1,128,1,,2,256,full,no,BF16,FSDP,fms-fsdp,,10.0\n";
  const std::string csv = header + "A,G," + model + "\"400 Gb/s per node\"" + plan + "B,G," +
                          model + "\"8x200 Gb/s HDR per node\"" + plan + "C,G," + model + plan;
  const ValidationReport r = validate_csv_table(parse_csv(csv, "n.csv"), "n.csv");
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[0].run.node_network_Bps == doctest::Approx(50e9));
  CHECK(r.rows[0].predicted_s > r.rows[1].predicted_s);
  // The preset's own rate stated or left out: the same prediction.
  CHECK(r.rows[1].predicted_s == r.rows[2].predicted_s);
}

TEST_CASE("hybrid sharding (HSDP) is read: a stated shard group, else a node's ranks") {
  const std::string model =
      "Llama 2 7B,SwiGLU,32,4096,32,32,11008,4096,32000,H100-SXM5-80GB,128,8,1,1,128,1,,2,256,"
      "none,no,BF16,";
  const std::string csv =
      std::string(kHeader) +  //
      "A,G," + model + "\"FSDP hybrid: HSDP, sharded within each 8-GPU node\",fms-fsdp,,,1.8\n" +
      "B,G," + model + "\"FSDP (ZeRO-3) hybrid, shard group 16 (ici_fsdp)\",MaxText,,,1.8\n" +
      "C,G," + model + "\"FSDP (ZeRO-3), full shard\",fms-fsdp,,,1.8\n" + "D,G," + model +
      "\"distributed optimizer, hybrid\",Megatron-Core,,,1.8\n";
  const ValidationReport r = validate_csv_table(parse_csv(csv, "h.csv"), "h.csv");
  REQUIRE(r.rows.size() == 4);
  CHECK(r.rows[0].run.plan.dp_shard == 8);   // tp 1: a node's 8 data-parallel ranks
  CHECK(r.rows[1].run.plan.dp_shard == 16);  // as stated
  CHECK(r.rows[2].run.plan.dp_shard == 0);   // over all 128
  CHECK(r.rows[3].run.plan.dp_shard == 0);   // not FSDP: nothing to read
  // Sharded in a node, the 16 replicas all-reduce across nodes once; over
  // all 128, every micro-batch's gathers cross nodes: the same model differs.
  CHECK(r.rows[0].predicted_s != r.rows[2].predicted_s);
}
