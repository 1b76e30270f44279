// The two layouts torch.export.save has written, read into one form: the ExportedProgram's
// JSON plus the tensors its placeholders refer to.
//
// - PT2 archive (torch >= 2.8): `archive_format` is "pt2"; models/<model>.json;
//   data/weights/<model>_weights_config.json maps each state-dict name to a file
//   data/weights/weight_N (raw bytes of an untyped storage, viewed through the entry's
//   tensor_meta sizes/strides/storage_offset; several names may share one file) or, with
//   use_pickle, a torch.save blob; data/constants/<model>_constants_config.json likewise for
//   lifted tensor constants (tensor_N). A transitional form kept the whole state dict as one
//   torch.save blob, data/weights/<model>.pt (and data/constants/<model>.pt): read too.
// - Legacy (torch 2.1 to 2.7): a flat zip with serialized_exported_program.json,
//   serialized_state_dict.pt and serialized_constants.pt (torch.save blobs, each itself a
//   zip: data.pkl with storages in data/<key>) and a `version` record.
//
// Every weight is checked to lie within its file, and sizes against the import limits.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "frontend/onnx/onnx_importer.h"
#include "frontend/torch_export/json.h"
#include "frontend/torchscript/zip_archive.h"
#include "ir/tensor.h"

namespace kiln::frontend::torch_export {

struct Pt2Contents {
  std::string layout;  // "pt2 archive" or "legacy"
  std::string program_entry;  // the JSON's entry name, for messages
  JsonValue program;          // the ExportedProgram
  std::map<std::string, ir::Tensor> state_dict;  // parameters and buffers, by name ("conv1.weight")
  std::map<std::string, ir::Tensor> constants;   // lifted tensor constants ("_tensor_constant0")
};

// Reads model `model` ("model" for torch.export.save) from an opened archive. Errors name
// the entry; the caller adds the file.
Pt2Contents read_pt2_contents(const torchscript::ZipArchive& zip, const std::string& model,
                              const ImportLimits& limits);

// The JSON limits that follow from the import limits (--max-file-bytes, --max-proto-depth).
JsonLimits json_limits(const ImportLimits& limits);

}  // namespace kiln::frontend::torch_export
