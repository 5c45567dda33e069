// Reads a Hugging Face transformers `config.json` into a ModelSpec.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "simulator/model.h"

namespace gpuplan {

/// Understands the field names of Llama, Mistral, Mixtral, Qwen2 (hidden_size, intermediate_size,
/// num_hidden_layers, num_attention_heads, num_key_value_heads, vocab_size, hidden_act,
/// tie_word_embeddings, head_dim, num_local_experts, num_experts_per_tok) and GPT-2 (n_embd,
/// n_layer, n_head, n_inner, n_positions, activation_function). Errors name the file and field.
Expected<ModelSpec> ModelFromHfConfig(const nlohmann::json& config, const std::string& origin);

/// Reads the file and calls ModelFromHfConfig.
Expected<ModelSpec> ReadHfConfigFile(const std::string& path);

}  // namespace gpuplan
