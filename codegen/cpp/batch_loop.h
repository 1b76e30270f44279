// Nodes run item by item over a symbolic batch. A convolution, a pool or a channel-blocked
// reorder computes each item of its leading dim on its own, with the same weights, so a node
// whose only symbolic dim is that leading dim can run the code its emitter writes for one item
// in a loop over the batch, each item's pointers one item further on. Emitters opt in with
// Emitter::batch_items; check_compilable, the planner (scratch for one item, reused by each)
// and the emission all see the node typed for one item, through BatchOne.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace kiln::codegen::cpp {

// The node's batch dim: a symbolic dim that is the leading dim of every output and of every
// input that is not static, the other dims of those values being numbers. nullopt otherwise
// (a static node, or symbols elsewhere).
std::optional<ir::Dim> batch_dim(const ir::Node& node);

// While alive, the node's values with the batch dim are typed with a batch of 1; their old
// types come back when it goes.
class BatchOne {
 public:
  BatchOne(const ir::Node& node, const ir::Dim& batch);
  ~BatchOne();
  BatchOne(const BatchOne&) = delete;
  BatchOne& operator=(const BatchOne&) = delete;
  // The values typed for one item (each input and output that had the batch dim).
  std::vector<const ir::Value*> items() const;

 private:
  std::vector<std::pair<ir::Value*, ir::Shape>> saved_;
};

}  // namespace kiln::codegen::cpp
