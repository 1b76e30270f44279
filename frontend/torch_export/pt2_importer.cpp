#include "frontend/torch_export/pt2_importer.h"

#include <filesystem>
#include <fstream>

#include "frontend/torch_export/pt2_archive.h"
#include "frontend/torch_export/pt2_graph.h"
#include "frontend/torchscript/zip_archive.h"
#include "ir/error.h"

namespace kiln::frontend {

namespace ts = kiln::frontend::torchscript;

std::unique_ptr<ir::Graph> import_pt2(const std::string& path, const Pt2ImportOptions& options, Pt2ModelInfo* info) {
  Pt2ModelInfo local;
  Pt2ModelInfo& out = info ? *info : local;
  try {
    std::error_code ec;
    uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec) fail("cannot read: {}", ec.message());
    // Weights stay in the file (views of the mapping): the limit is on the file as a whole.
    uint64_t most = std::max(options.limits.max_file_bytes, options.limits.max_tensor_bytes);
    if (size > most) fail("{} bytes, over the limit of {} (--max-file-bytes, --max-tensor-bytes)", size, most);
    ts::ZipLimits zip_limits;
    zip_limits.max_entry_bytes = most;
    auto zip = ts::ZipArchive::open(path, zip_limits);
    torch_export::Pt2Contents contents = torch_export::read_pt2_contents(*zip, options.model, options.limits);
    out.layout = contents.layout;
    try {
      auto graph = torch_export::build_pt2_graph(contents, options, out);
      graph->set_name(std::filesystem::path(path).stem().string());
      return graph;
    } catch (const Error& e) {
      fail("{}: {}", contents.program_entry, e.what());
    }
  } catch (const Error& e) {
    std::string message = e.what();
    if (message.rfind(path, 0) == 0) throw;  // the zip reader names the file itself
    fail("{}: {}", path, message);
  }
}

bool is_pt2_file(const std::string& path) {
  // A zip (local file header first) holding one of the two layouts' telltale entries.
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  if (!in.read(magic, 4) || std::string_view(magic, 4) != std::string_view("PK\x03\x04", 4)) return false;
  try {
    auto zip = ts::ZipArchive::open(path);
    return zip->has("archive_format") || zip->has("serialized_exported_program.json");
  } catch (const Error&) {
    return false;
  }
}

}  // namespace kiln::frontend
