// NonMaxSuppression and RoiAlign: hand-checked values.
#include "op_test_util.h"

namespace kiln::ir::test {

TEST_CASE("NonMaxSuppression keeps the best box and drops those overlapping it by IoU > threshold") {
  OpTest t;  // boxes 0 and 1 overlap with IoU 0.9 / 1.1; box 2 is far away
  Node* n = t.node("NonMaxSuppression",
                   {t.input("boxes", f32({1, 3, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 10, 1, 11})),
                    t.input("scores", f32({1, 1, 3}, {0.9f, 0.95f, 0.5f})), t.constant("max", i64s({3})),
                    t.constant("iou", f32({1}, {0.5f}))});
  Tensor y = t.run1(n);
  CHECK(y.dims() == std::vector<int64_t>{2, 3});
  check_close(y, {0, 0, 1, 0, 0, 2});
}

TEST_CASE("NonMaxSuppression: max_output_boxes_per_class and score_threshold limit the output") {
  OpTest t;
  Node* n = t.node("NonMaxSuppression",
                   {t.input("boxes", f32({1, 3, 4}, {0, 0, 1, 1, 0, 2, 1, 3, 0, 4, 1, 5})),
                    t.input("scores", f32({1, 1, 3}, {0.2f, 0.9f, 0.6f})), t.constant("max", i64s({1})),
                    t.constant("iou", f32({1}, {0.5f})), t.constant("score", f32({1}, {0.95f}))});
  CHECK(t.run1(n).dims() == std::vector<int64_t>{0, 3});
}

TEST_CASE("RoiAlign avg, half_pixel: one sample at the centre of a 2x2 roi interpolates all four pixels") {
  OpTest t;
  Node* n = t.node("RoiAlign", {t.input("x", f32({1, 1, 2, 2}, {1, 2, 3, 4})), t.input("rois", f32({1, 4}, {0, 0, 2, 2})),
                                t.input("bi", i64({1}, {0}))},
                   {{"sampling_ratio", int64_t{1}}});
  Tensor y = t.run1(n);
  CHECK(y.dims() == std::vector<int64_t>{1, 1, 1, 1});
  check_close(y, {2.5});
  OpTest u;
  Node* m = u.node("RoiAlign", {u.input("x", f32({1, 1, 2, 2}, {1, 2, 3, 4})), u.input("rois", f32({1, 4}, {0, 0, 2, 2})),
                                u.input("bi", i64({1}, {1}))});
  CHECK(u.eval_error(m) == "node 'n' (RoiAlign): a batch index is outside [0, 1)");
}

}  // namespace kiln::ir::test
