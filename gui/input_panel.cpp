#include "gui/input_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QUndoCommand>
#include <QUndoStack>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "common/json_reader.h"
#include "common/limits.h"
#include "common/str_format.h"
#include "planner/units_format.h"
#include "simulator/hf_config.h"
#include "simulator/job_spec_json.h"
#include "simulator/memory.h"
#include "simulator/pipeline_schedule.h"
#include "simulator/presets.h"

namespace gpuplan {

namespace {

QString Q(std::string_view s) {
  return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

struct Choice {
  QString label;
  QString value;
};

enum class Kind { kInt, kDouble, kChoice, kBool };

// Dimension edits turn the model into a custom one (the origin stays, for the label).
ModelSpec& EditModel(Session* s) {
  if (s->model_source != ModelSource::kCustom) {
    s->model_source = ModelSource::kCustom;
    s->job.model.name = "custom (" + s->job.model.name + ")";
  }
  return s->job.model;
}

// LoRA target sets offered in the form (PEFT's usual choices); others read from a file show
// as "custom".
struct LoraTargetSet {
  const char* label;
  const char* value;
  uint32_t bits;
};
constexpr LoraTargetSet kLoraTargetSets[] = {
    {"q, v (LoRA paper)", "qv", kLoraQ | kLoraV},
    {"attention (q, k, v, o)", "attention", kLoraAttention},
    {"all linear layers", "all", kLoraAll},
};

// A spin box whose value (stored / scale) reads as a count with a k, M, B or T suffix, as the
// CLI prints it ("1.00T tokens", FormatSiCount), and is typed as the CLI takes it ("2T",
// "500B", "1.5e12"; ParseCount). Up and down change the last digit shown.
class CountSpinBox : public QDoubleSpinBox {
 public:
  CountSpinBox(double scale, QWidget* parent) : QDoubleSpinBox(parent), scale_(scale) {}

  QString textFromValue(double v) const override { return Q(FormatSiCount(v * scale_)); }

  double valueFromText(const QString& text) const override {
    // The shown text of the current value keeps it: three digits do not round it.
    if (Stripped(text) == textFromValue(value())) return value();
    return Parse(text).value_or(value());
  }

  QValidator::State validate(QString& text, int&) const override {
    const std::optional<double> v = Parse(text);
    return v && *v >= minimum() && *v <= maximum() ? QValidator::Acceptable
                                                   : QValidator::Intermediate;
  }

  void stepBy(int steps) override {
    const double stored = value() * scale_;
    // Three significant digits are shown; below 100 the count is shown whole.
    const double digit = stored >= 100 ? std::pow(10.0, std::floor(std::log10(stored)) - 2) : 1;
    setValue((stored + steps * digit) / scale_);
  }

 private:
  QString Stripped(QString text) const {
    if (text.endsWith(suffix())) text.chop(suffix().size());
    return text.trimmed().remove(',');
  }

  std::optional<double> Parse(const QString& text) const {
    const std::optional<double> count = ParseCount(Stripped(text).toStdString());
    if (!count) return std::nullopt;
    return *count / scale_;
  }

  double scale_;
};

}  // namespace

/// One input: where it sits, what it is called, what it explains, and how it reads and writes
/// the Session. The table below is the form.
struct InputPanel::Field {
  const char* section;
  const char* key;
  const char* label;
  const char* tooltip;
  Kind kind;
  int lo = 0, hi = 0;             // kInt range; kDouble range in shown units
  const char* special = nullptr;  // kInt/kDouble: text shown at `lo` (e.g. "auto", "none")
  double scale = 1;               // kDouble: stored = shown x scale
  int decimals = 0;               // kDouble
  bool si_count = false;          // kDouble: shown and typed as 1.00T, 500B (CountSpinBox)
  const char* suffix = "";        // kInt/kDouble
  int64_t (*get_int)(const Session&) = nullptr;
  void (*set_int)(Session*, int64_t) = nullptr;
  double (*get_double)(const Session&) = nullptr;
  void (*set_double)(Session*, double) = nullptr;
  std::vector<Choice> (*choices)(const HardwareDb&, const Session&) = nullptr;
  QString (*get_choice)(const Session&) = nullptr;
  void (*set_choice)(const HardwareDb&, Session*, const QString&) = nullptr;
  bool (*get_bool)(const Session&) = nullptr;
  void (*set_bool)(Session*, bool) = nullptr;
  bool (*enabled)(const Session&) = nullptr;  // nullptr: always
};

namespace {

using Field = InputPanel::Field;

bool IsMoe(const Session& s) { return s.job.model.is_moe(); }
bool HasLora(const Session& s) { return s.job.training.lora.enabled; }
bool IsFullySharded(const Session& s) {
  return s.job.parallel.zero_stage == 3 || s.job.parallel.fsdp;
}

std::vector<Choice> PresetChoices(const HardwareDb&, const Session& s) {
  std::vector<Choice> out;
  if (s.model_source == ModelSource::kHfConfig) {
    out.push_back({"config.json: " + Q(s.model_origin), ""});
  } else if (s.model_source == ModelSource::kCustom) {
    out.push_back({"custom dimensions", ""});
  }
  for (const ModelPreset& p : ModelPresets()) out.push_back({Q(p.spec.name), p.id});
  return out;
}

std::vector<Choice> GpuChoices(const HardwareDb& db, const Session&) {
  std::vector<Choice> out;
  for (const auto& [id, gpu] : db.gpus()) out.push_back({Q(gpu.name), Q(id)});
  return out;
}

std::vector<Choice> NodeChoices(const HardwareDb& db, const Session& s) {
  std::vector<Choice> out;
  for (const std::string& id : NodesOfGpu(db, s.job.cluster.gpu)) {
    const NodeTemplate& n = *db.FindNode(id);
    out.push_back({Q(n.name) + " (" + QString::number(n.gpus_per_node) + " " +
                       Q(Noun(n.gpus_per_node, "GPU", "GPUs")) + ")",
                   Q(id)});
  }
  return out;
}

std::vector<Choice> NetworkChoices(const HardwareDb& db, const Session&) {
  std::vector<Choice> out;
  for (const auto& [id, net] : db.networks()) out.push_back({Q(net.name), Q(id)});
  return out;
}

std::vector<Choice> PrecisionChoices(const HardwareDb& db, const Session& s) {
  std::vector<Choice> out;
  const GpuSpec* gpu = db.FindGpu(s.job.cluster.gpu);
  for (int i = 0; i < kPrecisionCount; ++i) {
    const Precision p = static_cast<Precision>(i);
    if (gpu == nullptr || gpu->PeakFlops(p) > 0)
      out.push_back({Q(PrecisionName(p)), Q(PrecisionName(p))});
  }
  return out;
}

std::vector<Choice> FrameworkChoices(const HardwareDb& db, const Session&) {
  std::vector<Choice> out;
  for (const auto& [id, f] : db.frameworks()) out.push_back({Q(f.name), Q(id)});
  return out;
}

std::vector<Choice> ScheduleChoices(const HardwareDb&, const Session&) {
  std::vector<Choice> out;
  for (const ScheduleInfo& info : Schedules()) out.push_back({Q(info.name), Q(info.name)});
  return out;
}

std::vector<Choice> ProviderChoices(const HardwareDb& db, const Session& s) {
  std::vector<Choice> out = {{"cheapest that sells this GPU", ""}};
  std::vector<std::string> sellers;
  for (const PriceEntry& e : db.prices()) {
    if (e.gpu == s.job.cluster.gpu && e.kind == s.price_kind &&
        std::find(sellers.begin(), sellers.end(), e.provider) == sellers.end()) {
      sellers.push_back(e.provider);
    }
  }
  std::sort(sellers.begin(), sellers.end());
  for (const std::string& p : sellers) out.push_back({Q(p), Q(p)});
  if (!s.provider.empty() &&
      std::find(sellers.begin(), sellers.end(), s.provider) == sellers.end()) {
    out.push_back(
        {Q(s.provider) + " (no " + Q(PriceKindName(s.price_kind)) + " price)", Q(s.provider)});
  }
  return out;
}

std::vector<Choice> LoraTargetChoices(const HardwareDb&, const Session& s) {
  std::vector<Choice> out;
  bool known = false;
  for (const LoraTargetSet& t : kLoraTargetSets) {
    out.push_back({t.label, t.value});
    known = known || t.bits == s.job.training.lora.targets;
  }
  if (!known) out.push_back({"custom (from the session file)", "custom"});
  return out;
}

template <typename... Names>
std::vector<Choice> Fixed(Names... names) {
  return {Choice{names, names}...};
}

const std::vector<Field>& Fields() {
  static const std::vector<Field> fields = {
      // ---- model ---------------------------------------------------------------------------
      {.section = "Model",
       .key = "preset",
       .label = "Preset",
       .tooltip = "A built-in model (gpuplan models lists each with the source of its "
                  "dimensions). Editing a dimension below makes it a custom model.",
       .kind = Kind::kChoice,
       .choices = PresetChoices,
       .get_choice =
           [](const Session& s) {
             return s.model_source == ModelSource::kPreset ? Q(s.model_origin) : QString();
           },
       .set_choice =
           [](const HardwareDb&, Session* s, const QString& v) {
             if (v.isEmpty()) return;
             s->model_source = ModelSource::kPreset;
             s->model_origin = v.toStdString();
             s->job.model = FindModelPreset(s->model_origin).value();
           }},
      {.section = "Model",
       .key = "layers",
       .label = "Layers",
       .tooltip = "Transformer layers (HF num_hidden_layers).",
       .kind = Kind::kInt,
       .lo = 1,
       .hi = 1000,
       .get_int = [](const Session& s) { return s.job.model.num_layers; },
       .set_int =
           [](Session* s, int64_t v) {
             ModelSpec& m = EditModel(s);
             // Local attention keeps its share: all layers stay all, others at most all.
             m.local_attention_layers = m.local_attention_layers == m.num_layers
                                            ? (m.attention_window > 0 ? v : 0)
                                            : std::min(m.local_attention_layers, v);
             m.num_layers = v;
           }},
      {.section = "Model",
       .key = "hidden",
       .label = "Hidden size",
       .tooltip = "Model width h (HF hidden_size).",
       .kind = Kind::kInt,
       .lo = 1,
       .hi = 131072,
       .get_int = [](const Session& s) { return s.job.model.hidden_size; },
       .set_int = [](Session* s, int64_t v) { EditModel(s).hidden_size = v; }},
      {.section = "Model",
       .key = "ffn",
       .label = "FFN size",
       .tooltip = "Hidden size of the dense MLP (HF intermediate_size).",
       .kind = Kind::kInt,
       .lo = 1,
       .hi = 1048576,
       .get_int = [](const Session& s) { return s.job.model.ffn_hidden_size; },
       .set_int = [](Session* s, int64_t v) { EditModel(s).ffn_hidden_size = v; }},
      {.section = "Model",
       .key = "heads",
       .label = "Attention heads",
       .tooltip = "Query heads a (HF num_attention_heads). TP must divide them.",
       .kind = Kind::kInt,
       .lo = 1,
       .hi = 4096,
       .get_int = [](const Session& s) { return s.job.model.num_attention_heads; },
       .set_int = [](Session* s, int64_t v) { EditModel(s).num_attention_heads = v; }},
      {.section = "Model",
       .key = "kv_heads",
       .label = "KV heads",
       .tooltip = "Key/value heads: equal to the heads for MHA, fewer for GQA, 1 for MQA (HF "
                  "num_key_value_heads).",
       .kind = Kind::kInt,
       .lo = 1,
       .hi = 4096,
       .get_int = [](const Session& s) { return s.job.model.num_kv_heads; },
       .set_int = [](Session* s, int64_t v) { EditModel(s).num_kv_heads = v; }},
      {.section = "Model",
       .key = "head_dim",
       .label = "Head dim",
       .tooltip = "Per-head size; 'auto' = hidden size / heads (HF head_dim).",
       .kind = Kind::kInt,
       .lo = 0,
       .hi = 4096,
       .special = "auto",
       .get_int = [](const Session& s) { return s.job.model.head_dim; },
       .set_int = [](Session* s, int64_t v) { EditModel(s).head_dim = v; }},
      {.section = "Model",
       .key = "vocab",
       .label = "Vocabulary",
       .tooltip = "Tokens in the vocabulary (HF vocab_size): embedding and LM-head size.",
       .kind = Kind::kInt,
       .lo = 1,
       .hi = 4000000,
       .get_int = [](const Session& s) { return s.job.model.vocab_size; },
       .set_int = [](Session* s, int64_t v) { EditModel(s).vocab_size = v; }},
      {.section = "Model",
       .key = "mlp",
       .label = "MLP",
       .tooltip = "gelu: two matrices h->f->h (GPT); swiglu: three (gate, up, down; Llama).",
       .kind = Kind::kChoice,
       .choices = [](const HardwareDb&, const Session&) { return Fixed("gelu", "swiglu"); },
       .get_choice =
           [](const Session& s) {
             return QString(s.job.model.mlp == MlpKind::kSwiGlu ? "swiglu" : "gelu");
           },
       .set_choice =
           [](const HardwareDb&, Session* s, const QString& v) {
             EditModel(s).mlp = v == "swiglu" ? MlpKind::kSwiGlu : MlpKind::kGelu;
           }},
      {.section = "Model",
       .key = "tied",
       .label = "Tied embeddings",
       .tooltip = "The LM head shares the input embedding matrix (HF tie_word_embeddings).",
       .kind = Kind::kBool,
       .get_bool = [](const Session& s) { return s.job.model.tied_embeddings; },
       .set_bool = [](Session* s, bool v) { EditModel(s).tied_embeddings = v; }},
      {.section = "Model",
       .key = "experts",
       .label = "Experts",
       .tooltip = "Routed experts per MoE layer (HF num_local_experts); 'dense' = no MoE.",
       .kind = Kind::kInt,
       .lo = 0,
       .hi = 4096,
       .special = "dense",
       .get_int = [](const Session& s) { return s.job.model.moe_num_experts; },
       .set_int =
           [](Session* s, int64_t v) {
             ModelSpec& m = EditModel(s);
             m.moe_num_experts = v;
             if (v > 0 && m.moe_top_k == 0) m.moe_top_k = std::min<int64_t>(2, v);
             if (v == 0) m.moe_top_k = 0;
           }},
      {.section = "Model",
       .key = "top_k",
       .label = "Experts per token",
       .tooltip = "Routed experts each token goes to (HF num_experts_per_tok).",
       .kind = Kind::kInt,
       .lo = 0,
       .hi = 4096,
       .get_int = [](const Session& s) { return s.job.model.moe_top_k; },
       .set_int = [](Session* s, int64_t v) { EditModel(s).moe_top_k = v; },
       .enabled = IsMoe},
      {.section = "Model",
       .key = "expert_ffn",
       .label = "Expert FFN size",
       .tooltip = "Hidden size of one expert's MLP; '= FFN' uses the dense FFN size.",
       .kind = Kind::kInt,
       .lo = 0,
       .hi = 1048576,
       .special = "= FFN",
       .get_int = [](const Session& s) { return s.job.model.moe_ffn_hidden_size; },
       .set_int = [](Session* s, int64_t v) { EditModel(s).moe_ffn_hidden_size = v; },
       .enabled = IsMoe},
      {.section = "Model",
       .key = "shared_experts",
       .label = "Shared experts",
       .tooltip = "Always-active experts of the expert FFN size (DeepSeek).",
       .kind = Kind::kInt,
       .lo = 0,
       .hi = 64,
       .get_int = [](const Session& s) { return s.job.model.moe_shared_experts; },
       .set_int = [](Session* s, int64_t v) { EditModel(s).moe_shared_experts = v; },
       .enabled = IsMoe},
      // ---- job -----------------------------------------------------------------------------
      {.section = "Job",
       .key = "tokens",
       .label = "Training tokens",
       .tooltip = "Tokens to train on, typed as 2T, 500B or 1.5e12 (Llama 3: 15.6T). Time and "
                  "cost to train count whole optimizer steps of the global batch.",
       .kind = Kind::kDouble,
       .lo = 0,
       .hi = 1000000,
       .scale = 1e9,
       .decimals = 6,
       .si_count = true,
       .suffix = " tokens",
       .get_double = [](const Session& s) { return s.train_tokens; },
       .set_double = [](Session* s, double v) { s->train_tokens = v; }},
      {.section = "Job",
       .key = "seq_len",
       .label = "Sequence length",
       .tooltip = "Tokens per training sequence. CP must divide it.",
       .kind = Kind::kInt,
       .lo = 1,
       .hi = 4194304,
       .get_int = [](const Session& s) { return s.job.training.seq_len; },
       .set_int = [](Session* s, int64_t v) { s->job.training.seq_len = v; }},
      {.section = "Job",
       .key = "global_batch",
       .label = "Global batch",
       .tooltip = "Sequences per optimizer step, over all data-parallel replicas. It must divide "
                  "into micro-batch x DP; changing it changes convergence, not just speed.",
       .kind = Kind::kInt,
       .lo = 1,
       .hi = 100000000,
       .get_int = [](const Session& s) { return s.job.training.global_batch_size; },
       .set_int = [](Session* s, int64_t v) { s->job.training.global_batch_size = v; }},
      {.section = "Job",
       .key = "attention",
       .label = "Attention kernel",
       .tooltip = "flash: fused kernels, no s x s scores in memory (FlashAttention); unfused: "
                  "scores written to and read from HBM (older Megatron/PyTorch).",
       .kind = Kind::kChoice,
       .choices = [](const HardwareDb&, const Session&) { return Fixed("flash", "unfused"); },
       .get_choice =
           [](const Session& s) {
             return QString(s.job.training.attention == AttentionImpl::kFlash ? "flash"
                                                                              : "unfused");
           },
       .set_choice =
           [](const HardwareDb&, Session* s, const QString& v) {
             s->job.training.attention =
                 v == "flash" ? AttentionImpl::kFlash : AttentionImpl::kUnfused;
           }},
      {.section = "Job",
       .key = "framework",
       .label = "Framework",
       .tooltip = "Training stack (frameworks.json): what it keeps in memory, its host time per "
                  "layer, how it splits a pipeline and which ZeRO stages it runs.",
       .kind = Kind::kChoice,
       .choices = FrameworkChoices,
       .get_choice = [](const Session& s) { return Q(s.job.training.framework.id); },
       .set_choice =
           [](const HardwareDb& db, Session* s, const QString& v) {
             const FrameworkSpec* f = db.FindFramework(v.toStdString());
             if (f != nullptr) s->job.training.framework = *f;
           }},
      {.section = "Job",
       .key = "dropout",
       .label = "Dropout",
       .tooltip = "Dropout layers: their masks are stored for backward (more activation "
                  "memory; Korthikanti et al. 2022, Table 2).",
       .kind = Kind::kBool,
       .get_bool = [](const Session& s) { return s.job.training.dropout; },
       .set_bool = [](Session* s, bool v) { s->job.training.dropout = v; }},
      // ---- hardware ------------------------------------------------------------------------
      {.section = "Hardware",
       .key = "gpu",
       .label = "GPU",
       .tooltip = "GPU type (hardware-db/data/gpus.json, every figure with its source). "
                  "Choosing one also picks its usual node template and network.",
       .kind = Kind::kChoice,
       .choices = GpuChoices,
       .get_choice = [](const Session& s) { return Q(s.job.cluster.gpu); },
       .set_choice = [](const HardwareDb& db, Session* s,
                        const QString& v) { (void)SelectGpu(db, v.toStdString(), s); }},
      {.section = "Hardware",
       .key = "gpus",
       .label = "GPUs",
       .tooltip = "GPUs in the job. DP = GPUs / (TP x PP x CP); above one node it must be "
                  "whole nodes.",
       .kind = Kind::kInt,
       .lo = 1,
       .hi = 1048576,
       .get_int = [](const Session& s) { return s.job.cluster.num_gpus; },
       .set_int = [](Session* s, int64_t v) { s->job.cluster.num_gpus = v; }},
      {.section = "Hardware",
       .key = "node",
       .label = "Node",
       .tooltip = "The machine the cluster is built of: GPUs per node, intra-node fabric, "
                  "default network, and which offerings price it.",
       .kind = Kind::kChoice,
       .choices = NodeChoices,
       .get_choice = [](const Session& s) { return Q(s.node); },
       .set_choice =
           [](const HardwareDb& db, Session* s, const QString& v) {
             const NodeTemplate* node = db.FindNode(v.toStdString());
             if (node == nullptr) return;
             s->node = node->id;
             s->job.cluster.gpus_per_node = node->gpus_per_node;
             s->job.cluster.inter_node = node->network;
           }},
      {.section = "Hardware",
       .key = "network",
       .label = "Network",
       .tooltip = "Scale-out fabric between nodes (bandwidth per GPU, latency, efficiency in "
                  "hardware-db/data/networks.json).",
       .kind = Kind::kChoice,
       .choices = NetworkChoices,
       .get_choice = [](const Session& s) { return Q(s.job.cluster.inter_node); },
       .set_choice = [](const HardwareDb&, Session* s,
                        const QString& v) { s->job.cluster.inter_node = v.toStdString(); }},
      // ---- parallelism ---------------------------------------------------------------------
      {.section = "Parallelism",
       .key = "tp",
       .label = "TP",
       .tooltip = "Tensor parallelism (Megatron-LM): each layer's matrices split over TP GPUs, "
                  "two all-reduces per layer and pass. Keep it inside a node.",
       .kind = Kind::kInt,
       .lo = 1,
       .hi = 1024,
       .get_int = [](const Session& s) { return s.job.parallel.tp; },
       .set_int = [](Session* s, int64_t v) { s->job.parallel.tp = v; }},
      {.section = "Parallelism",
       .key = "pp",
       .label = "PP",
       .tooltip = "Pipeline stages: layers split over PP GPUs; costs a bubble of (PP-1)/(m·VPP) "
                  "of the step (Narayanan et al. 2021).",
       .kind = Kind::kInt,
       .lo = 1,
       .hi = 1024,
       .get_int = [](const Session& s) { return s.job.parallel.pp; },
       .set_int = [](Session* s, int64_t v) { s->job.parallel.pp = v; }},
      {.section = "Parallelism",
       .key = "vpp",
       .label = "VPP",
       .tooltip = "Virtual pipeline stages (model chunks) per GPU, with the interleaved "
                  "schedule: a VPP times smaller bubble for VPP times more pipeline traffic.",
       .kind = Kind::kInt,
       .lo = 1,
       .hi = 128,
       .get_int = [](const Session& s) { return s.job.parallel.vpp; },
       .set_int =
           [](Session* s, int64_t v) {
             s->job.parallel.vpp = v;
             if (v > 1) s->job.parallel.schedule = Schedule::kInterleaved;
             if (v == 1 && s->job.parallel.schedule == Schedule::kInterleaved) {
               s->job.parallel.schedule = Schedule::k1F1B;
             }
           }},
      {.section = "Parallelism",
       .key = "cp",
       .label = "CP",
       .tooltip = "Context parallelism: each sequence split over CP GPUs, K/V exchanged in a "
                  "ring (for long sequences).",
       .kind = Kind::kInt,
       .lo = 1,
       .hi = 1024,
       .get_int = [](const Session& s) { return s.job.parallel.cp; },
       .set_int = [](Session* s, int64_t v) { s->job.parallel.cp = v; }},
      {.section = "Parallelism",
       .key = "ep",
       .label = "EP",
       .tooltip = "Expert parallelism (MoE only): experts split over EP GPUs of the DP x CP "
                  "group, tokens exchanged by all-to-all.",
       .kind = Kind::kInt,
       .lo = 1,
       .hi = 4096,
       .get_int = [](const Session& s) { return s.job.parallel.ep; },
       .set_int = [](Session* s, int64_t v) { s->job.parallel.ep = v; },
       .enabled = IsMoe},
      {.section = "Parallelism",
       .key = "etp",
       .label = "Expert TP",
       .tooltip = "Expert tensor parallelism (MoE only): each routed expert split over this many "
                  "GPUs of the TP group; dispatched tokens all-gathered over them. Equal to TP "
                  "unless set (Megatron's default); 1 keeps experts whole.",
       .kind = Kind::kInt,
       .lo = 1,
       .hi = 64,
       .get_int = [](const Session& s) { return s.job.parallel.ExpertTp(); },
       .set_int = [](Session* s,
                     int64_t v) { s->job.parallel.etp = v == s->job.parallel.tp ? 0 : v; },
       .enabled = IsMoe},
      {.section = "Parallelism",
       .key = "micro_batch",
       .label = "Micro-batch",
       .tooltip = "Sequences per micro-batch per replica; global batch / (micro-batch x DP) "
                  "micro-batches per step (gradient accumulation).",
       .kind = Kind::kInt,
       .lo = 1,
       .hi = 65536,
       .get_int = [](const Session& s) { return s.job.training.micro_batch_size; },
       .set_int = [](Session* s, int64_t v) { s->job.training.micro_batch_size = v; }},
      {.section = "Parallelism",
       .key = "schedule",
       .label = "Schedule",
       .tooltip = "Pipeline schedule: gpipe, 1f1b (PipeDream-Flush), interleaved (needs VPP > "
                  "1), zb-h1 (zero bubble, Qi et al. 2024).",
       .kind = Kind::kChoice,
       .choices = ScheduleChoices,
       .get_choice = [](const Session& s) { return Q(ScheduleName(s.job.parallel.schedule)); },
       .set_choice =
           [](const HardwareDb&, Session* s, const QString& v) {
             if (auto parsed = ParseScheduleName(v.toStdString()))
               s->job.parallel.schedule = *parsed;
           }},
      {.section = "Parallelism",
       .key = "recompute",
       .label = "Recompute",
       .tooltip = "Activation recomputation: selective re-runs attention's core (Korthikanti et "
                  "al. 2022), or the modules a session's training.recompute_modules names; full "
                  "re-runs each layer's forward (one more forward pass).",
       .kind = Kind::kChoice,
       .choices = [](const HardwareDb&,
                     const Session&) { return Fixed("none", "selective", "full"); },
       .get_choice = [](const Session& s) { return Q(RecomputeName(s.job.training.recompute)); },
       .set_choice =
           [](const HardwareDb&, Session* s, const QString& v) {
             s->job.training.recompute = v == "full"        ? Recompute::kFull
                                         : v == "selective" ? Recompute::kSelective
                                                            : Recompute::kNone;
             // The modules a selective recomputation re-runs (a session's recompute_modules)
             // stay with it; another level has none.
             if (s->job.training.recompute != Recompute::kSelective) {
               s->job.training.recompute_modules = kRecomputeCoreAttn;
             }
           }},
      {.section = "Parallelism",
       .key = "activation_offload_layers",
       .label = "Offloaded layers",
       .tooltip = "Stored activations of the first N layers go to host memory in forward and "
                  "come back for backward, over NVLink-C2C on Grace superchips or PCIe "
                  "(Megatron --cpu-offloading-num-layers); needs PP 1, no recomputation and "
                  "Megatron-Core. 0: none.",
       .kind = Kind::kInt,
       .lo = 0,
       .hi = kMaxLayers - 1,
       .get_int = [](const Session& s) { return s.job.training.activation_offload_layers; },
       .set_int = [](Session* s, int64_t v) { s->job.training.activation_offload_layers = v; }},
      {.section = "Parallelism",
       .key = "zero",
       .label = "ZeRO stage",
       .tooltip = "Sharding of the model state over data-parallel ranks (Rajbhandari et al. "
                  "2020): 1 optimizer state (= Megatron distributed optimizer), 2 + gradients, "
                  "3 + weights.",
       .kind = Kind::kChoice,
       .choices =
           [](const HardwareDb&, const Session&) {
             return std::vector<Choice>{{"0: none", "0"},
                                        {"1: optimizer state", "1"},
                                        {"2: + gradients", "2"},
                                        {"3: + weights", "3"}};
           },
       .get_choice = [](const Session& s) { return QString::number(s.job.parallel.zero_stage); },
       .set_choice = [](const HardwareDb&, Session* s,
                        const QString& v) { s->job.parallel.zero_stage = v.toInt(); }},
      {.section = "Parallelism",
       .key = "fsdp",
       .label = "FSDP",
       .tooltip = "PyTorch FSDP FULL_SHARD: the traffic and memory of ZeRO-3.",
       .kind = Kind::kBool,
       .get_bool = [](const Session& s) { return s.job.parallel.fsdp; },
       .set_bool =
           [](Session* s, bool v) {
             s->job.parallel.fsdp = v;
             if (v) s->job.parallel.zero_stage = 3;
           }},
      {.section = "Parallelism",
       .key = "dp_replicate",
       .label = "HSDP replicas",
       .tooltip = "Hybrid sharding (ZeRO-3 / FSDP only): the model state is sharded over DP / "
                  "replicas x CP GPUs and that group replicated; gradient shards are all-reduced "
                  "across the replicas. 1: shard over all DP x CP GPUs. Must divide DP.",
       .kind = Kind::kInt,
       .lo = 1,
       .hi = 4096,
       .get_int = [](const Session& s) { return s.job.parallel.dp_replicate; },
       .set_int = [](Session* s, int64_t v) { s->job.parallel.dp_replicate = v; },
       .enabled = IsFullySharded},
      {.section = "Parallelism",
       .key = "sequence_parallel",
       .label = "Sequence parallel",
       .tooltip = "Megatron sequence parallelism: norms and dropout split over TP ranks, "
                  "all-reduce becomes all-gather + reduce-scatter (Korthikanti et al. 2022).",
       .kind = Kind::kBool,
       .get_bool = [](const Session& s) { return s.job.parallel.sequence_parallel; },
       .set_bool = [](Session* s, bool v) { s->job.parallel.sequence_parallel = v; }},
      {.section = "Parallelism",
       .key = "cpu_offload",
       .label = "CPU offload",
       .tooltip = "Optimizer state and master weights in host memory (ZeRO-Offload, Ren et al. "
                  "2021); needs ZeRO >= 1 or FSDP.",
       .kind = Kind::kBool,
       .get_bool = [](const Session& s) { return s.job.parallel.cpu_offload; },
       .set_bool = [](Session* s, bool v) { s->job.parallel.cpu_offload = v; }},
      {.section = "Parallelism",
       .key = "tp_overlap",
       .label = "TP overlap",
       .tooltip = "Overlap TP collectives with GEMMs (Megatron --tp-comm-overlap).",
       .kind = Kind::kBool,
       .get_bool = [](const Session& s) { return s.job.parallel.tp_overlap; },
       .set_bool = [](Session* s, bool v) { s->job.parallel.tp_overlap = v; }},
      {.section = "Parallelism",
       .key = "ep_overlap",
       .label = "EP overlap",
       .tooltip = "MoE: overlap the expert all-to-all with another micro-batch's computation "
                  "(Megatron --overlap-moe-expert-parallel-comm); needs ep > 1, no full "
                  "recomputation, and the interleaved schedule when pp > 1.",
       .kind = Kind::kBool,
       .get_bool = [](const Session& s) { return s.job.parallel.ep_overlap; },
       .set_bool = [](Session* s, bool v) { s->job.parallel.ep_overlap = v; }},
      {.section = "Parallelism",
       .key = "dp_overlap",
       .label = "DP overlap",
       .tooltip = "Overlap the gradient reduction with backward, in buckets (PyTorch DDP, "
                  "Megatron --overlap-grad-reduce).",
       .kind = Kind::kBool,
       .get_bool = [](const Session& s) { return s.job.parallel.dp_overlap; },
       .set_bool = [](Session* s, bool v) { s->job.parallel.dp_overlap = v; }},
      {.section = "Parallelism",
       .key = "precision",
       .label = "Precision",
       .tooltip = "Number format of the matrix math (mixed precision, fp32 master weights); "
                  "only those the GPU runs are listed.",
       .kind = Kind::kChoice,
       .choices = PrecisionChoices,
       .get_choice = [](const Session& s) { return Q(PrecisionName(s.job.training.precision)); },
       .set_choice =
           [](const HardwareDb&, Session* s, const QString& v) {
             ParsePrecision(v.toStdString(), &s->job.training.precision);
           }},
      {.section = "Parallelism",
       .key = "lora",
       .label = "LoRA",
       .tooltip = "Fine-tune low-rank adapters only (Hu et al. 2021): the base weights are "
                  "frozen, no gradients or optimizer state for them.",
       .kind = Kind::kBool,
       .get_bool = HasLora,
       .set_bool =
           [](Session* s, bool v) {
             LoraSpec& l = s->job.training.lora;
             l.enabled = v;
             if (v && l.rank == 0) l.rank = 16;
             if (v && l.targets == 0) l.targets = kLoraAll;
           }},
      {.section = "Parallelism",
       .key = "lora_rank",
       .label = "LoRA rank",
       .tooltip = "Rank r of each adapter (A: h x r, B: r x h).",
       .kind = Kind::kInt,
       .lo = 1,
       .hi = 65536,
       .get_int = [](const Session& s) { return s.job.training.lora.rank; },
       .set_int = [](Session* s, int64_t v) { s->job.training.lora.rank = v; },
       .enabled = HasLora},
      {.section = "Parallelism",
       .key = "lora_targets",
       .label = "LoRA targets",
       .tooltip = "Projections that get adapters.",
       .kind = Kind::kChoice,
       .choices = LoraTargetChoices,
       .get_choice =
           [](const Session& s) {
             for (const LoraTargetSet& t : kLoraTargetSets) {
               if (t.bits == s.job.training.lora.targets) return QString(t.value);
             }
             return QString("custom");
           },
       .set_choice =
           [](const HardwareDb&, Session* s, const QString& v) {
             for (const LoraTargetSet& t : kLoraTargetSets) {
               if (v == t.value) s->job.training.lora.targets = t.bits;
             }
           },
       .enabled = HasLora},
      {.section = "Parallelism",
       .key = "lora_base",
       .label = "LoRA base weights",
       .tooltip = "Storage of the frozen base weights. same: the training precision; bf16, "
                  "fp16: 2 bytes; fp8: 1 byte; nf4: 4-bit NormalFloat (QLoRA, Dettmers et al. "
                  "2023).",
       .kind = Kind::kChoice,
       .choices = [](const HardwareDb&,
                     const Session&) { return Fixed("same", "bf16", "fp16", "fp8", "nf4"); },
       .get_choice =
           [](const Session& s) {
             return QString::fromUtf8(BaseWeightsName(s.job.training.lora.base).data());
           },
       .set_choice =
           [](const HardwareDb&, Session* s, const QString& v) {
             for (BaseWeights b : {BaseWeights::kSame, BaseWeights::kBf16, BaseWeights::kFp16,
                                   BaseWeights::kFp8, BaseWeights::kNf4}) {
               if (v == QString::fromUtf8(BaseWeightsName(b).data())) {
                 s->job.training.lora.base = b;
               }
             }
           },
       .enabled = HasLora},
      // ---- price ---------------------------------------------------------------------------
      {.section = "Price",
       .key = "provider",
       .label = "Provider",
       .tooltip = "Where the GPU-hours are bought (hardware-db/data/prices.json, each price "
                  "with source and date). Jobs are billed in whole instances.",
       .kind = Kind::kChoice,
       .choices = ProviderChoices,
       .get_choice = [](const Session& s) { return Q(s.provider); },
       .set_choice = [](const HardwareDb&, Session* s,
                        const QString& v) { s->provider = v.toStdString(); }},
      {.section = "Price",
       .key = "price_kind",
       .label = "Capacity",
       .tooltip = "on-demand, or spot: cheaper, but preempted at the provider's rate (lost work "
                  "and restarts are counted).",
       .kind = Kind::kChoice,
       .choices = [](const HardwareDb&, const Session&) { return Fixed("on-demand", "spot"); },
       .get_choice = [](const Session& s) { return Q(PriceKindName(s.price_kind)); },
       .set_choice = [](const HardwareDb&, Session* s,
                        const QString& v) { ParsePriceKind(v.toStdString(), &s->price_kind); }},
      {.section = "Price",
       .key = "price_override",
       .label = "Own price",
       .tooltip = "Your negotiated price per GPU-hour; replaces the database's prices for this "
                  "GPU ('none' = use them).",
       .kind = Kind::kDouble,
       .lo = 0,
       .hi = 1000,
       .special = "none",
       .decimals = 2,
       .suffix = " $/GPU-h",
       .get_double = [](const Session& s) { return s.price_override_usd_per_gpu_hour; },
       .set_double = [](Session* s, double v) { s->price_override_usd_per_gpu_hour = v; }},
      // ---- search --------------------------------------------------------------------------
      {.section = "Find best plan",
       .key = "objective",
       .label = "Objective",
       .tooltip = "What the planner optimises: time, cost, cost under the deadline or time "
                  "under the budget.",
       .kind = Kind::kChoice,
       .choices =
           [](const HardwareDb&, const Session&) {
             return Fixed("cost", "time", "cost-under-deadline", "time-under-budget");
           },
       .get_choice = [](const Session& s) { return Q(ObjectiveName(s.objective)); },
       .set_choice = [](const HardwareDb&, Session* s,
                        const QString& v) { ParseObjective(v.toStdString(), &s->objective); }},
      {.section = "Find best plan",
       .key = "search_all_gpus",
       .label = "Every GPU type",
       .tooltip = "Search every GPU of the hardware database, or only the selected one.",
       .kind = Kind::kBool,
       .get_bool = [](const Session& s) { return s.search_all_gpus; },
       .set_bool = [](Session* s, bool v) { s->search_all_gpus = v; }},
      {.section = "Find best plan",
       .key = "search_max_gpus",
       .label = "At most GPUs",
       .tooltip = "Largest GPU count searched.",
       .kind = Kind::kInt,
       .lo = 1,
       .hi = 1048576,
       .get_int = [](const Session& s) { return s.search_max_gpus; },
       .set_int = [](Session* s, int64_t v) { s->search_max_gpus = v; }},
      {.section = "Find best plan",
       .key = "deadline",
       .label = "Deadline",
       .tooltip = "Finish within this many days ('none' = no deadline).",
       .kind = Kind::kDouble,
       .lo = 0,
       .hi = 100000,
       .special = "none",
       .scale = 86400,
       .decimals = 1,
       .suffix = " d",
       .get_double = [](const Session& s) { return s.deadline_s; },
       .set_double = [](Session* s, double v) { s->deadline_s = v; }},
      {.section = "Find best plan",
       .key = "budget",
       .label = "Budget",
       .tooltip = "Spend at most this many thousand dollars ('none' = no budget).",
       .kind = Kind::kDouble,
       .lo = 0,
       .hi = 100000000,
       .special = "none",
       .scale = 1e3,
       .decimals = 0,
       .suffix = " k$",
       .get_double = [](const Session& s) { return s.budget_usd; },
       .set_double = [](Session* s, double v) { s->budget_usd = v; }},
  };
  return fields;
}

// One edit of the inputs. Consecutive edits of the same field merge into one undo step.
class SessionCommand : public QUndoCommand {
 public:
  SessionCommand(InputPanel* panel, Session before, Session after, int field, const QString& text)
      : QUndoCommand(text),
        panel_(panel),
        before_(std::move(before)),
        after_(std::move(after)),
        field_(field) {}
  void undo() override { panel_->ShowSession(before_); }
  void redo() override { panel_->ShowSession(after_); }
  int id() const override { return field_; }
  bool mergeWith(const QUndoCommand* other) override {
    if (other->id() != field_) return false;
    after_ = static_cast<const SessionCommand*>(other)->after_;
    return true;
  }

 private:
  InputPanel* panel_;
  Session before_, after_;
  int field_;  // index into Fields(); -1 for whole-session edits (never merged)
};

void SetChoices(QComboBox* box, const std::vector<Choice>& choices) {
  bool same = box->count() == static_cast<int>(choices.size());
  for (int i = 0; same && i < box->count(); ++i) {
    same = box->itemText(i) == choices[static_cast<size_t>(i)].label &&
           box->itemData(i).toString() == choices[static_cast<size_t>(i)].value;
  }
  if (same) return;
  box->clear();
  for (const Choice& c : choices) box->addItem(c.label, c.value);
}

}  // namespace

InputPanel::InputPanel(const HardwareDb& db, QUndoStack* undo, const Session& initial,
                       QWidget* parent)
    : QWidget(parent), db_(db), undo_(undo), session_(initial) {
  Build();
  Refresh();
}

InputPanel::~InputPanel() = default;

void InputPanel::Build() {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(6, 6, 6, 6);
  const std::vector<Field>& fields = Fields();
  widgets_.assign(fields.size(), nullptr);
  QFormLayout* form = nullptr;
  std::string section;
  for (size_t i = 0; i < fields.size(); ++i) {
    const Field& f = fields[i];
    if (f.section != section) {
      section = f.section;
      auto* box = new QGroupBox(f.section, this);
      form = new QFormLayout(box);
      form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
      form->setLabelAlignment(Qt::AlignRight);
      outer->addWidget(box);
      if (section == "Model") {
        auto* open = new QPushButton(tr("Open config.json…"), box);
        open->setToolTip(
            tr("Read a Hugging Face config.json (Llama, Mistral, Mixtral, Qwen2, GPT-2 field "
               "names)."));
        connect(open, &QPushButton::clicked, this, &InputPanel::OpenHfConfig);
        form->addRow(QString(), open);
        model_summary_ = new QLabel(box);
        model_summary_->setWordWrap(true);
        form->addRow(QString(), model_summary_);
      }
    }
    QWidget* made = widgets_[i] = AddField(form, f);
    const int index = static_cast<int>(i);
    const auto commit = [this, index](auto apply) {
      Session next = session_;
      apply(&next);
      Commit(std::move(next), index);
    };
    switch (f.kind) {
      case Kind::kInt:
        connect(static_cast<QSpinBox*>(made), &QSpinBox::valueChanged, this,
                [commit, &f](int v) { commit([&](Session* s) { f.set_int(s, v); }); });
        break;
      case Kind::kDouble:
        connect(
            static_cast<QDoubleSpinBox*>(made), &QDoubleSpinBox::valueChanged, this,
            [commit, &f](double v) { commit([&](Session* s) { f.set_double(s, v * f.scale); }); });
        break;
      case Kind::kChoice:
        connect(static_cast<QComboBox*>(made), &QComboBox::activated, this,
                [this, commit, &f, made](int row) {
                  const QString v = static_cast<QComboBox*>(made)->itemData(row).toString();
                  if (v == f.get_choice(session_)) return;  // the same item chosen again
                  commit([&](Session* s) { f.set_choice(db_, s, v); });
                });
        break;
      case Kind::kBool:
        connect(static_cast<QCheckBox*>(made), &QCheckBox::toggled, this,
                [commit, &f](bool v) { commit([&](Session* s) { f.set_bool(s, v); }); });
        break;
    }
    if (std::string_view(f.key) == "gpu") {
      gpu_summary_ = new QLabel(form->parentWidget());
      gpu_summary_->setWordWrap(true);
      form->addRow(QString(), gpu_summary_);
    }
    if (std::string_view(f.key) == "vpp") {
      dp_label_ = new QLabel(form->parentWidget());
      dp_label_->setToolTip(
          tr("Data parallelism follows the GPU count: DP = GPUs / (TP x PP x CP)."));
      form->addRow(tr("DP"), dp_label_);
    }
  }
  outer->addStretch(1);
}

QWidget* InputPanel::AddField(QFormLayout* form, const Field& f) {
  QWidget* parent = form->parentWidget();
  QWidget* w = nullptr;
  switch (f.kind) {
    case Kind::kInt: {
      auto* spin = new QSpinBox(parent);
      spin->setRange(f.lo, f.hi);
      spin->setKeyboardTracking(false);
      spin->setGroupSeparatorShown(true);
      if (f.special != nullptr) spin->setSpecialValueText(f.special);
      if (*f.suffix != '\0') spin->setSuffix(f.suffix);
      w = spin;
      break;
    }
    case Kind::kDouble: {
      auto* spin = f.si_count ? new CountSpinBox(f.scale, parent) : new QDoubleSpinBox(parent);
      spin->setRange(f.lo, f.hi);
      spin->setDecimals(f.decimals);
      spin->setKeyboardTracking(false);
      spin->setGroupSeparatorShown(true);
      if (f.special != nullptr) spin->setSpecialValueText(f.special);
      spin->setSuffix(f.suffix);
      w = spin;
      break;
    }
    case Kind::kChoice: {
      auto* box = new QComboBox(parent);
      box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
      box->setMinimumContentsLength(12);
      w = box;
      break;
    }
    case Kind::kBool:
      w = new QCheckBox(parent);
      break;
  }
  w->setObjectName(f.key);
  w->setToolTip(f.tooltip);
  auto* label = new QLabel(f.label, parent);
  label->setToolTip(f.tooltip);
  label->setBuddy(w);
  form->addRow(label, w);
  return w;
}

void InputPanel::Commit(Session next, int field_index) {
  const Field& f = Fields()[static_cast<size_t>(field_index)];
  undo_->push(new SessionCommand(this, session_, std::move(next), field_index,
                                 tr("Change %1").arg(f.label)));
}

void InputPanel::Edit(const Session& next, const QString& what) {
  undo_->push(new SessionCommand(this, session_, next, -1, what));
}

void InputPanel::ShowSession(const Session& session) {
  session_ = session;
  Refresh();
  emit SessionChanged();
}

QWidget* InputPanel::FieldWidget(const QString& key) const {
  const std::vector<Field>& fields = Fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (key == fields[i].key) return widgets_[i];
  }
  return nullptr;
}

void InputPanel::Refresh() {
  const std::vector<Field>& fields = Fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    const Field& f = fields[i];
    QWidget* w = widgets_[i];
    const QSignalBlocker block(w);
    switch (f.kind) {
      case Kind::kInt:
        static_cast<QSpinBox*>(w)->setValue(static_cast<int>(f.get_int(session_)));
        break;
      case Kind::kDouble:
        static_cast<QDoubleSpinBox*>(w)->setValue(f.get_double(session_) / f.scale);
        break;
      case Kind::kChoice: {
        auto* box = static_cast<QComboBox*>(w);
        SetChoices(box, f.choices(db_, session_));
        box->setCurrentIndex(box->findData(f.get_choice(session_)));
        break;
      }
      case Kind::kBool:
        static_cast<QCheckBox*>(w)->setChecked(f.get_bool(session_));
        break;
    }
    w->setEnabled(f.enabled == nullptr || f.enabled(session_));
  }

  const ParameterCounts params = CountParameters(session_.job.model);
  QString summary = tr("%1 parameters").arg(Q(FormatSiCount(params.total)));
  if (session_.job.model.is_moe()) {
    summary += tr(", %1 active per token").arg(Q(FormatSiCount(params.active_per_token)));
  }
  if (session_.model_source == ModelSource::kHfConfig) {
    summary += tr("\nfrom %1").arg(Q(session_.model_origin));
  }
  model_summary_->setText(summary);

  if (const GpuSpec* gpu = db_.FindGpu(session_.job.cluster.gpu)) {
    gpu_summary_->setText(
        tr("%1 usable memory, %2 TFLOP/s dense %3")
            .arg(Q(FormatGb(UsableBytes(*gpu, session_.job.overhead))))
            .arg(gpu->PeakFlops(session_.job.training.precision) / 1e12, 0, 'f', 0)
            .arg(Q(PrecisionName(session_.job.training.precision))));
  }
  const ParallelSpec& p = session_.job.parallel;
  const int64_t model_parallel = p.tp * p.pp * p.cp;
  const int64_t gpus = session_.job.cluster.num_gpus;
  if (model_parallel > 0 && gpus % model_parallel == 0) {
    dp_label_->setText(tr("%1 = %2 %3 / (TP x PP x CP)")
                           .arg(gpus / model_parallel)
                           .arg(gpus)
                           .arg(Q(Noun(gpus, "GPU", "GPUs"))));
    dp_label_->setStyleSheet(QString());
  } else {
    dp_label_->setText(tr("none: %1 %2 / %3 is not whole")
                           .arg(gpus)
                           .arg(Q(Noun(gpus, "GPU", "GPUs")))
                           .arg(model_parallel));
    dp_label_->setStyleSheet("color: #d62728;");
  }
}

void InputPanel::OpenHfConfig() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open a Hugging Face config.json"),
                                                    QString(), tr("JSON (*.json);;All files (*)"));
  if (path.isEmpty()) return;
  const Status loaded = LoadHfConfig(path);
  if (!loaded.ok()) QMessageBox::warning(this, tr("Cannot read the model"), Q(loaded.message()));
}

Status InputPanel::LoadHfConfig(const QString& path) {
  Expected<ModelSpec> model = ReadHfConfigFile(path.toStdString());
  if (!model.ok()) return model.status();
  Session next = session_;
  next.model_source = ModelSource::kHfConfig;
  next.model_origin = path.toStdString();
  next.job.model = std::move(model).value();
  Edit(next, tr("Open %1").arg(path));
  return Status::Ok();
}

}  // namespace gpuplan
