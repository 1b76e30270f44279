module @jit_ops_mix attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x9x9x4xf32>, %arg1: tensor<3x3x4x6xf32>, %arg2: tensor<3x5xf32>) -> (tensor<2x5x5x6xf32> {jax.result_info = "result[0]"}, tensor<2x6x8x9xf32> {jax.result_info = "result[1]"}, tensor<2x9x6xf32> {jax.result_info = "result[2]"}, tensor<2x5x5x4xf32> {jax.result_info = "result[3]"}, tensor<2x5x5x4xf32> {jax.result_info = "result[4]"}, tensor<2x8x8x4xf32> {jax.result_info = "result[5]"}, tensor<5xf32> {jax.result_info = "result[6]"}, tensor<3xf32> {jax.result_info = "result[7]"}, tensor<f32> {jax.result_info = "result[8]"}, tensor<3xf32> {jax.result_info = "result[9]"}, tensor<5xf32> {jax.result_info = "result[10]"}, tensor<3xi1> {jax.result_info = "result[11]"}, tensor<5xi1> {jax.result_info = "result[12]"}, tensor<3xi32> {jax.result_info = "result[13]"}, tensor<5xi32> {jax.result_info = "result[14]"}, tensor<3x5xf32> {jax.result_info = "result[15]"}, tensor<3x5xf32> {jax.result_info = "result[16]"}, tensor<3x5xf32> {jax.result_info = "result[17]"}, tensor<3x5xf32> {jax.result_info = "result[18]"}, tensor<3x5xf32> {jax.result_info = "result[19]"}, tensor<3x5xf32> {jax.result_info = "result[20]"}, tensor<3x5xf32> {jax.result_info = "result[21]"}, tensor<3x5xf32> {jax.result_info = "result[22]"}, tensor<3x5xf32> {jax.result_info = "result[23]"}, tensor<3x5xf32> {jax.result_info = "result[24]"}, tensor<3x5xf32> {jax.result_info = "result[25]"}, tensor<3x5xf32> {jax.result_info = "result[26]"}, tensor<3x5xf32> {jax.result_info = "result[27]"}, tensor<3x5xf32> {jax.result_info = "result[28]"}, tensor<3x5xf32> {jax.result_info = "result[29]"}, tensor<3x5xf32> {jax.result_info = "result[30]"}, tensor<3x5xf32> {jax.result_info = "result[31]"}, tensor<5x3xf32> {jax.result_info = "result[32]"}, tensor<2x3xf32> {jax.result_info = "result[33]"}, tensor<6x5xf32> {jax.result_info = "result[34]"}, tensor<3x2x5xf32> {jax.result_info = "result[35]"}, tensor<4x7xf32> {jax.result_info = "result[36]"}, tensor<3x5xf32> {jax.result_info = "result[37]"}, tensor<3x3xf32> {jax.result_info = "result[38]"}, tensor<5x5xf32> {jax.result_info = "result[39]"}, tensor<3x5xf32> {jax.result_info = "result[40]"}, tensor<3x5xi32> {jax.result_info = "result[41]"}, tensor<3x4xi32> {jax.result_info = "result[42]"}, tensor<3x5xi32> {jax.result_info = "result[43]"}, tensor<3x5xf32> {jax.result_info = "result[44]"}, tensor<3xf32> {jax.result_info = "result[45]"}, tensor<3x5xf32> {jax.result_info = "result[46]"}, tensor<3x3xf32> {jax.result_info = "result[47]"}, tensor<2x2x5xf32> {jax.result_info = "result[48]"}) {
    %c = stablehlo.constant dense<[4, 0, 2]> : tensor<3xi32>
    %c_0 = stablehlo.constant dense<[[2, 1], [0, 0]]> : tensor<2x2xi32>
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x9x9x4xf32>, tensor<3x3x4x6xf32>) -> tensor<2x5x5x6xf32>
    %1 = stablehlo.transpose %arg0, dims = [0, 3, 1, 2] : (tensor<2x9x9x4xf32>) -> tensor<2x4x9x9xf32>
    %2 = stablehlo.transpose %arg1, dims = [3, 2, 0, 1] : (tensor<3x3x4x6xf32>) -> tensor<6x4x3x3xf32>
    %3 = stablehlo.convolution(%1, %2) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[2, 1], [0, 2]], lhs_dilate = [1, 1], rhs_dilate = [2, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x4x9x9xf32>, tensor<6x4x3x3xf32>) -> tensor<2x6x8x9xf32>
    %4 = stablehlo.slice %arg0 [0:2, 0:1, 0:9, 0:4] : (tensor<2x9x9x4xf32>) -> tensor<2x1x9x4xf32>
    %5 = stablehlo.reshape %4 : (tensor<2x1x9x4xf32>) -> tensor<2x9x4xf32>
    %6 = stablehlo.slice %arg1 [0:1, 0:3, 0:4, 0:6] : (tensor<3x3x4x6xf32>) -> tensor<1x3x4x6xf32>
    %7 = stablehlo.reshape %6 : (tensor<1x3x4x6xf32>) -> tensor<3x4x6xf32>
    %8 = stablehlo.convolution(%5, %7) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [1], pad = [[1, 1]], lhs_dilate = [1], rhs_dilate = [1], reverse = [false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x9x4xf32>, tensor<3x4x6xf32>) -> tensor<2x9x6xf32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %10 = "stablehlo.reduce_window"(%arg0, %9) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %131 = stablehlo.maximum %arg3, %arg4 : tensor<f32>
      stablehlo.return %131 : tensor<f32>
    }) : (tensor<2x9x9x4xf32>, tensor<f32>) -> tensor<2x5x5x4xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<f32>
    %12 = "stablehlo.reduce_window"(%arg0, %11) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %131 = stablehlo.add %arg3, %arg4 : tensor<f32>
      stablehlo.return %131 : tensor<f32>
    }) : (tensor<2x9x9x4xf32>, tensor<f32>) -> tensor<2x5x5x4xf32>
    %cst_2 = stablehlo.constant dense<9.000000e+00> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<2x5x5x4xf32>
    %14 = stablehlo.divide %12, %13 : tensor<2x5x5x4xf32>
    %cst_3 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<f32>
    %16 = "stablehlo.reduce_window"(%arg0, %15) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 1, 1, 1>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %131 = stablehlo.minimum %arg3, %arg4 : tensor<f32>
      stablehlo.return %131 : tensor<f32>
    }) : (tensor<2x9x9x4xf32>, tensor<f32>) -> tensor<2x8x8x4xf32>
    %cst_4 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %17 = stablehlo.reduce(%arg2 init: %cst_4) applies stablehlo.maximum across dimensions = [0] : (tensor<3x5xf32>, tensor<f32>) -> tensor<5xf32>
    %cst_5 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %18 = stablehlo.reduce(%arg2 init: %cst_5) applies stablehlo.minimum across dimensions = [1] : (tensor<3x5xf32>, tensor<f32>) -> tensor<3xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %19 = stablehlo.reduce(%arg2 init: %cst_6) applies stablehlo.add across dimensions = [0, 1] : (tensor<3x5xf32>, tensor<f32>) -> tensor<f32>
    %cst_7 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %20 = stablehlo.reduce(%arg2 init: %cst_7) applies stablehlo.multiply across dimensions = [1] : (tensor<3x5xf32>, tensor<f32>) -> tensor<3xf32>
    %c_8 = stablehlo.constant dense<0> : tensor<i32>
    %21 = call @_var(%arg2, %c_8) : (tensor<3x5xf32>, tensor<i32>) -> tensor<5xf32>
    %cst_9 = stablehlo.constant dense<-2.000000e+00> : tensor<f32>
    %22 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %23 = stablehlo.compare GT, %arg2, %22, FLOAT : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xi1>
    %c_10 = stablehlo.constant dense<true> : tensor<i1>
    %24 = stablehlo.reduce(%23 init: %c_10) applies stablehlo.and across dimensions = [1] : (tensor<3x5xi1>, tensor<i1>) -> tensor<3xi1>
    %cst_11 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %25 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %26 = stablehlo.compare GT, %arg2, %25, FLOAT : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xi1>
    %c_12 = stablehlo.constant dense<false> : tensor<i1>
    %27 = stablehlo.reduce(%26 init: %c_12) applies stablehlo.or across dimensions = [0] : (tensor<3x5xi1>, tensor<i1>) -> tensor<5xi1>
    %28 = call @argmax(%arg2) : (tensor<3x5xf32>) -> tensor<3xi32>
    %29 = call @round(%arg2) : (tensor<3x5xf32>) -> tensor<3x5xf32>
    %30 = call @argmin(%29) : (tensor<3x5xf32>) -> tensor<5xi32>
    %31 = stablehlo.exponential %arg2 : tensor<3x5xf32>
    %32 = stablehlo.abs %arg2 : tensor<3x5xf32>
    %33 = stablehlo.log_plus_one %32 : tensor<3x5xf32>
    %34 = stablehlo.abs %arg2 : tensor<3x5xf32>
    %35 = stablehlo.sqrt %34 : tensor<3x5xf32>
    %36 = stablehlo.multiply %arg2, %arg2 : tensor<3x5xf32>
    %37 = stablehlo.multiply %36, %arg2 : tensor<3x5xf32>
    %38 = stablehlo.abs %arg2 : tensor<3x5xf32>
    %cst_13 = stablehlo.constant dense<0.699999988> : tensor<f32>
    %39 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %40 = stablehlo.power %38, %39 : tensor<3x5xf32>
    %41 = stablehlo.negate %arg2 : tensor<3x5xf32>
    %42 = stablehlo.exponential %41 : tensor<3x5xf32>
    %cst_14 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %43 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %44 = stablehlo.add %43, %42 : tensor<3x5xf32>
    %cst_15 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %45 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %46 = stablehlo.divide %45, %44 : tensor<3x5xf32>
    %47 = stablehlo.multiply %arg2, %arg2 : tensor<3x5xf32>
    %48 = stablehlo.multiply %47, %arg2 : tensor<3x5xf32>
    %cst_16 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %49 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %50 = stablehlo.multiply %49, %48 : tensor<3x5xf32>
    %51 = stablehlo.add %arg2, %50 : tensor<3x5xf32>
    %cst_17 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %52 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %53 = stablehlo.multiply %52, %51 : tensor<3x5xf32>
    %54 = stablehlo.tanh %53 : tensor<3x5xf32>
    %cst_18 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %55 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %56 = stablehlo.add %55, %54 : tensor<3x5xf32>
    %cst_19 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %57 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %58 = stablehlo.multiply %57, %56 : tensor<3x5xf32>
    %59 = stablehlo.multiply %arg2, %58 : tensor<3x5xf32>
    %cst_20 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %cst_21 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %60 = call @clip(%arg2, %cst_20, %cst_21) : (tensor<3x5xf32>, tensor<f32>, tensor<f32>) -> tensor<3x5xf32>
    %61 = stablehlo.sign %arg2 : tensor<3x5xf32>
    %62 = stablehlo.floor %arg2 : tensor<3x5xf32>
    %63 = stablehlo.exponential_minus_one %arg2 : tensor<3x5xf32>
    %64 = call @round(%arg2) : (tensor<3x5xf32>) -> tensor<3x5xf32>
    %cst_22 = stablehlo.constant dense<3.000000e-01> : tensor<f32>
    %65 = call @remainder(%arg2, %cst_22) : (tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xf32>
    %66 = stablehlo.sine %arg2 : tensor<3x5xf32>
    %67 = call @silu(%arg2) : (tensor<3x5xf32>) -> tensor<3x5xf32>
    %68 = call @softplus(%arg2) : (tensor<3x5xf32>) -> tensor<3x5xf32>
    %69 = call @elu(%arg2) : (tensor<3x5xf32>) -> tensor<3x5xf32>
    %70 = stablehlo.transpose %arg2, dims = [1, 0] : (tensor<3x5xf32>) -> tensor<5x3xf32>
    %71 = stablehlo.slice %arg2 [0:3:2, 1:4] : (tensor<3x5xf32>) -> tensor<2x3xf32>
    %cst_23 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %72 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %73 = stablehlo.multiply %arg2, %72 : tensor<3x5xf32>
    %74 = stablehlo.concatenate %arg2, %73, dim = 0 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<6x5xf32>
    %75 = stablehlo.broadcast_in_dim %arg2, dims = [0, 2] : (tensor<3x5xf32>) -> tensor<3x1x5xf32>
    %76 = stablehlo.broadcast_in_dim %75, dims = [0, 1, 2] : (tensor<3x1x5xf32>) -> tensor<3x2x5xf32>
    %c_24 = stablehlo.constant dense<0> : tensor<i32>
    %77 = call @_pad(%arg2, %c_24) : (tensor<3x5xf32>, tensor<i32>) -> tensor<4x7xf32>
    %78 = call @_flip(%arg2) : (tensor<3x5xf32>) -> tensor<3x5xf32>
    %79 = stablehlo.dot_general %arg2, %arg2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x3xf32>
    %80 = stablehlo.slice %arg2 [0:1, 0:5] : (tensor<3x5xf32>) -> tensor<1x5xf32>
    %81 = stablehlo.reshape %80 : (tensor<1x5xf32>) -> tensor<5xf32>
    %82 = stablehlo.slice %arg2 [1:2, 0:5] : (tensor<3x5xf32>) -> tensor<1x5xf32>
    %83 = stablehlo.reshape %82 : (tensor<1x5xf32>) -> tensor<5xf32>
    %84 = stablehlo.dot_general %81, %83, contracting_dims = [] x [], precision = [DEFAULT, DEFAULT] : (tensor<5xf32>, tensor<5xf32>) -> tensor<5x5xf32>
    %cst_25 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %85 = stablehlo.broadcast_in_dim %cst_25, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %86 = stablehlo.compare GT, %arg2, %85, FLOAT : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xi1>
    %cst_26 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %87 = stablehlo.broadcast_in_dim %cst_26, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %88 = stablehlo.multiply %87, %arg2 : tensor<3x5xf32>
    %89 = call @_where_1(%86, %arg2, %88) : (tensor<3x5xi1>, tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
    %90 = stablehlo.slice %arg2 [0:1, 0:5] : (tensor<3x5xf32>) -> tensor<1x5xf32>
    %91 = stablehlo.reshape %90 : (tensor<1x5xf32>) -> tensor<5xf32>
    %92 = stablehlo.broadcast_in_dim %91, dims = [1] : (tensor<5xf32>) -> tensor<1x5xf32>
    %93 = stablehlo.broadcast_in_dim %92, dims = [0, 1] : (tensor<1x5xf32>) -> tensor<3x5xf32>
    %94 = stablehlo.compare NE, %arg2, %93, FLOAT : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xi1>
    %95 = stablehlo.convert %94 : (tensor<3x5xi1>) -> tensor<3x5xi32>
    %96 = stablehlo.iota dim = 0 : tensor<12xi32>
    %97 = stablehlo.reshape %96 : (tensor<12xi32>) -> tensor<3x4xi32>
    %c_27 = stablehlo.constant dense<2> : tensor<i32>
    %98 = stablehlo.broadcast_in_dim %c_27, dims = [] : (tensor<i32>) -> tensor<3x4xi32>
    %99 = stablehlo.multiply %97, %98 : tensor<3x4xi32>
    %c_28 = stablehlo.constant dense<1> : tensor<i32>
    %100 = stablehlo.broadcast_in_dim %c_28, dims = [] : (tensor<i32>) -> tensor<3x4xi32>
    %101 = stablehlo.add %99, %100 : tensor<3x4xi32>
    %102 = stablehlo.convert %arg2 : (tensor<3x5xf32>) -> tensor<3x5xi32>
    %c_29 = stablehlo.constant dense<2> : tensor<i32>
    %103 = call @floor_divide(%102, %c_29) : (tensor<3x5xi32>, tensor<i32>) -> tensor<3x5xi32>
    %104 = call @log_softmax(%arg2) : (tensor<3x5xf32>) -> tensor<3x5xf32>
    %cst_30 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %105 = stablehlo.reduce(%arg2 init: %cst_30) applies stablehlo.maximum across dimensions = [1] : (tensor<3x5xf32>, tensor<f32>) -> tensor<3xf32>
    %cst_31 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %106 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %107 = stablehlo.maximum %106, %105 : tensor<3xf32>
    %108 = stablehlo.is_finite %107 : (tensor<3xf32>) -> tensor<3xi1>
    %cst_32 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %109 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %110 = stablehlo.select %108, %107, %109 : tensor<3xi1>, tensor<3xf32>
    %111 = stablehlo.broadcast_in_dim %110, dims = [0] : (tensor<3xf32>) -> tensor<3x1xf32>
    %112 = stablehlo.broadcast_in_dim %111, dims = [0, 1] : (tensor<3x1xf32>) -> tensor<3x5xf32>
    %113 = stablehlo.subtract %arg2, %112 : tensor<3x5xf32>
    %114 = stablehlo.exponential %113 : tensor<3x5xf32>
    %cst_33 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %115 = stablehlo.reduce(%114 init: %cst_33) applies stablehlo.add across dimensions = [1] : (tensor<3x5xf32>, tensor<f32>) -> tensor<3xf32>
    %116 = stablehlo.abs %115 : tensor<3xf32>
    %117 = stablehlo.log %116 : tensor<3xf32>
    %118 = stablehlo.add %117, %110 : tensor<3xf32>
    %119 = stablehlo.convert %arg2 : (tensor<3x5xf32>) -> tensor<3x5xf16>
    %cst_34 = stablehlo.constant dense<2.000000e+00> : tensor<f16>
    %120 = stablehlo.broadcast_in_dim %cst_34, dims = [] : (tensor<f16>) -> tensor<3x5xf16>
    %121 = stablehlo.multiply %119, %120 : tensor<3x5xf16>
    %122 = stablehlo.convert %121 : (tensor<3x5xf16>) -> tensor<3x5xf32>
    %123 = call @_take(%arg2, %c) : (tensor<3x5xf32>, tensor<3xi32>) -> tensor<3x3xf32>
    %c_35 = stablehlo.constant dense<0> : tensor<i32>
    %124 = stablehlo.broadcast_in_dim %c_35, dims = [] : (tensor<i32>) -> tensor<2x2xi32>
    %125 = stablehlo.compare LT, %c_0, %124, SIGNED : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi1>
    %c_36 = stablehlo.constant dense<3> : tensor<i32>
    %126 = stablehlo.broadcast_in_dim %c_36, dims = [] : (tensor<i32>) -> tensor<2x2xi32>
    %127 = stablehlo.add %c_0, %126 : tensor<2x2xi32>
    %128 = stablehlo.select %125, %127, %c_0 : tensor<2x2xi1>, tensor<2x2xi32>
    %129 = stablehlo.broadcast_in_dim %128, dims = [0, 1] : (tensor<2x2xi32>) -> tensor<2x2x1xi32>
    %130 = "stablehlo.gather"(%arg2, %129) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 5>}> : (tensor<3x5xf32>, tensor<2x2x1xi32>) -> tensor<2x2x5xf32>
    return %0, %3, %8, %10, %14, %16, %17, %18, %19, %20, %21, %24, %27, %28, %30, %31, %33, %35, %37, %40, %46, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %74, %76, %77, %78, %79, %84, %89, %95, %101, %103, %104, %118, %122, %123, %130 : tensor<2x5x5x6xf32>, tensor<2x6x8x9xf32>, tensor<2x9x6xf32>, tensor<2x5x5x4xf32>, tensor<2x5x5x4xf32>, tensor<2x8x8x4xf32>, tensor<5xf32>, tensor<3xf32>, tensor<f32>, tensor<3xf32>, tensor<5xf32>, tensor<3xi1>, tensor<5xi1>, tensor<3xi32>, tensor<5xi32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<5x3xf32>, tensor<2x3xf32>, tensor<6x5xf32>, tensor<3x2x5xf32>, tensor<4x7xf32>, tensor<3x5xf32>, tensor<3x3xf32>, tensor<5x5xf32>, tensor<3x5xf32>, tensor<3x5xi32>, tensor<3x4xi32>, tensor<3x5xi32>, tensor<3x5xf32>, tensor<3xf32>, tensor<3x5xf32>, tensor<3x3xf32>, tensor<2x2x5xf32>
  }
  func.func private @_var(%arg0: tensor<3x5xf32>, %arg1: tensor<i32>) -> tensor<5xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<3x5xf32>, tensor<f32>) -> tensor<5xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [1] : (tensor<5xf32>) -> tensor<1x5xf32>
    %cst_0 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<1x5xf32>
    %3 = stablehlo.divide %1, %2 : tensor<1x5xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<1x5xf32>) -> tensor<3x5xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<3x5xf32>
    %6 = chlo.square %5 : tensor<3x5xf32> -> tensor<3x5xf32>
    %7 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %cst_1 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %8 = stablehlo.subtract %cst_1, %7 : tensor<f32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.reduce(%6 init: %cst_2) applies stablehlo.add across dimensions = [0] : (tensor<3x5xf32>, tensor<f32>) -> tensor<5xf32>
    %10 = stablehlo.broadcast_in_dim %8, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %11 = stablehlo.divide %9, %10 : tensor<5xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %12 = stablehlo.compare GT, %8, %cst_3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %13 = call @_where(%12, %11, %cst_4) : (tensor<i1>, tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
    return %13 : tensor<5xf32>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<5xf32>, %arg2: tensor<f32>) -> tensor<5xf32> {
    %0 = stablehlo.convert %arg2 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<i1>, tensor<5xf32>
    return %2 : tensor<5xf32>
  }
  func.func private @argmax(%arg0: tensor<3x5xf32>) -> tensor<3xi32> {
    %0 = stablehlo.iota dim = 1 : tensor<3x5xi32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [1] : (tensor<3x5xf32>, tensor<3x5xi32>, tensor<f32>, tensor<i32>) -> (tensor<3xf32>, tensor<3xi32>)
     reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
      %2 = stablehlo.compare GT, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.or %2, %3 : tensor<i1>
      %5 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %4, %7 : tensor<i1>
      %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<f32>
      %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i32>
      stablehlo.return %9, %10 : tensor<f32>, tensor<i32>
    }
    return %1#1 : tensor<3xi32>
  }
  func.func private @round(%arg0: tensor<3x5xf32>) -> tensor<3x5xf32> {
    %0 = stablehlo.round_nearest_even %arg0 : tensor<3x5xf32>
    return %0 : tensor<3x5xf32>
  }
  func.func private @argmin(%arg0: tensor<3x5xf32>) -> tensor<5xi32> {
    %0 = stablehlo.iota dim = 0 : tensor<3x5xi32>
    %cst = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [0] : (tensor<3x5xf32>, tensor<3x5xi32>, tensor<f32>, tensor<i32>) -> (tensor<5xf32>, tensor<5xi32>)
     reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
      %2 = stablehlo.compare LT, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.or %2, %3 : tensor<i1>
      %5 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %4, %7 : tensor<i1>
      %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<f32>
      %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i32>
      stablehlo.return %9, %10 : tensor<f32>, tensor<i32>
    }
    return %1#1 : tensor<5xi32>
  }
  func.func private @clip(%arg0: tensor<3x5xf32>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> tensor<3x5xf32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %2 = stablehlo.maximum %1, %arg0 : tensor<3x5xf32>
    %3 = stablehlo.convert %arg2 : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %5 = stablehlo.minimum %4, %2 : tensor<3x5xf32>
    return %5 : tensor<3x5xf32>
  }
  func.func private @remainder(%arg0: tensor<3x5xf32>, %arg1: tensor<f32>) -> tensor<3x5xf32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %2 = stablehlo.remainder %arg0, %1 : tensor<3x5xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %4 = stablehlo.compare NE, %2, %3, FLOAT : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xi1>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %6 = stablehlo.compare LT, %2, %5, FLOAT : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xi1>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.compare LT, %0, %cst_1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %8 = stablehlo.broadcast_in_dim %7, dims = [] : (tensor<i1>) -> tensor<3x5xi1>
    %9 = stablehlo.compare NE, %6, %8, UNSIGNED : (tensor<3x5xi1>, tensor<3x5xi1>) -> tensor<3x5xi1>
    %10 = stablehlo.and %9, %4 : tensor<3x5xi1>
    %11 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %12 = stablehlo.add %2, %11 : tensor<3x5xf32>
    %13 = stablehlo.select %10, %12, %2 : tensor<3x5xi1>, tensor<3x5xf32>
    return %13 : tensor<3x5xf32>
  }
  func.func private @silu(%arg0: tensor<3x5xf32>) -> tensor<3x5xf32> {
    %0 = stablehlo.negate %arg0 : tensor<3x5xf32>
    %1 = stablehlo.exponential %0 : tensor<3x5xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %3 = stablehlo.add %2, %1 : tensor<3x5xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %5 = stablehlo.divide %4, %3 : tensor<3x5xf32>
    %6 = stablehlo.multiply %arg0, %5 : tensor<3x5xf32>
    return %6 : tensor<3x5xf32>
  }
  func.func private @softplus(%arg0: tensor<3x5xf32>) -> tensor<3x5xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<3x5xf32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %3 = stablehlo.subtract %arg0, %2 : tensor<3x5xf32>
    %4 = stablehlo.compare NE, %3, %3, FLOAT : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xi1>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %6 = stablehlo.add %arg0, %5 : tensor<3x5xf32>
    %7 = stablehlo.abs %3 : tensor<3x5xf32>
    %8 = stablehlo.negate %7 : tensor<3x5xf32>
    %9 = stablehlo.exponential %8 : tensor<3x5xf32>
    %10 = stablehlo.log_plus_one %9 : tensor<3x5xf32>
    %11 = stablehlo.add %1, %10 : tensor<3x5xf32>
    %12 = stablehlo.select %4, %6, %11 : tensor<3x5xi1>, tensor<3x5xf32>
    return %12 : tensor<3x5xf32>
  }
  func.func private @elu(%arg0: tensor<3x5xf32>) -> tensor<3x5xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %1 = stablehlo.compare GT, %arg0, %0, FLOAT : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xi1>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %3 = stablehlo.compare GT, %arg0, %2, FLOAT : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xi1>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = call @_where_0(%3, %cst_1, %arg0) : (tensor<3x5xi1>, tensor<f32>, tensor<3x5xf32>) -> tensor<3x5xf32>
    %5 = stablehlo.exponential_minus_one %4 : tensor<3x5xf32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %7 = stablehlo.multiply %6, %5 : tensor<3x5xf32>
    %8 = call @_where_1(%1, %arg0, %7) : (tensor<3x5xi1>, tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
    return %8 : tensor<3x5xf32>
  }
  func.func private @_where_0(%arg0: tensor<3x5xi1>, %arg1: tensor<f32>, %arg2: tensor<3x5xf32>) -> tensor<3x5xf32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %2 = stablehlo.select %arg0, %1, %arg2 : tensor<3x5xi1>, tensor<3x5xf32>
    return %2 : tensor<3x5xf32>
  }
  func.func private @_where_1(%arg0: tensor<3x5xi1>, %arg1: tensor<3x5xf32>, %arg2: tensor<3x5xf32>) -> tensor<3x5xf32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<3x5xi1>, tensor<3x5xf32>
    return %0 : tensor<3x5xf32>
  }
  func.func private @_pad(%arg0: tensor<3x5xf32>, %arg1: tensor<i32>) -> tensor<4x7xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1, 0], high = [0, 2], interior = [0, 0] : (tensor<3x5xf32>, tensor<f32>) -> tensor<4x7xf32>
    return %1 : tensor<4x7xf32>
  }
  func.func private @_flip(%arg0: tensor<3x5xf32>) -> tensor<3x5xf32> {
    %0 = stablehlo.reverse %arg0, dims = [0] : tensor<3x5xf32>
    return %0 : tensor<3x5xf32>
  }
  func.func private @floor_divide(%arg0: tensor<3x5xi32>, %arg1: tensor<i32>) -> tensor<3x5xi32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<3x5xi32>
    %2 = stablehlo.divide %arg0, %1 : tensor<3x5xi32>
    %3 = stablehlo.sign %arg0 : tensor<3x5xi32>
    %4 = stablehlo.sign %0 : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<i32>) -> tensor<3x5xi32>
    %6 = stablehlo.compare NE, %3, %5, SIGNED : (tensor<3x5xi32>, tensor<3x5xi32>) -> tensor<3x5xi1>
    %7 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<3x5xi32>
    %8 = stablehlo.remainder %arg0, %7 : tensor<3x5xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<3x5xi32>
    %10 = stablehlo.compare NE, %8, %9, SIGNED : (tensor<3x5xi32>, tensor<3x5xi32>) -> tensor<3x5xi1>
    %11 = stablehlo.and %6, %10 : tensor<3x5xi1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %12 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<3x5xi32>
    %13 = stablehlo.subtract %2, %12 : tensor<3x5xi32>
    %14 = call @_where_2(%11, %13, %2) : (tensor<3x5xi1>, tensor<3x5xi32>, tensor<3x5xi32>) -> tensor<3x5xi32>
    return %14 : tensor<3x5xi32>
  }
  func.func private @_where_2(%arg0: tensor<3x5xi1>, %arg1: tensor<3x5xi32>, %arg2: tensor<3x5xi32>) -> tensor<3x5xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<3x5xi1>, tensor<3x5xi32>
    return %0 : tensor<3x5xi32>
  }
  func.func private @log_softmax(%arg0: tensor<3x5xf32>) -> tensor<3x5xf32> {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [0] : (tensor<3x5xf32>, tensor<f32>) -> tensor<5xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<5xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [1] : (tensor<5xf32>) -> tensor<1x5xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<1x5xf32>) -> tensor<3x5xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<3x5xf32>
    %6 = stablehlo.exponential %5 : tensor<3x5xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [0] : (tensor<3x5xf32>, tensor<f32>) -> tensor<5xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [1] : (tensor<5xf32>) -> tensor<1x5xf32>
    %9 = stablehlo.log %8 : tensor<1x5xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<1x5xf32>) -> tensor<3x5xf32>
    %11 = stablehlo.subtract %5, %10 : tensor<3x5xf32>
    return %11 : tensor<3x5xf32>
  }
  func.func private @_take(%arg0: tensor<3x5xf32>, %arg1: tensor<3xi32>) -> tensor<3x3xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<3xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
    %c_0 = stablehlo.constant dense<5> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<3xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<3xi32>
    %4 = call @_where_3(%1, %3, %arg1) : (tensor<3xi1>, tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<3xi32>) -> tensor<3x1xi32>
    %c_1 = stablehlo.constant dense<4> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<3x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_1, dims = [1] : (tensor<1xi32>) -> tensor<1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<1x1xi32>) -> tensor<3x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<3x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [1] : (tensor<3x1xi1>, tensor<i1>) -> tensor<3xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 3, 1>}> : (tensor<3x5xf32>, tensor<3x1xi32>) -> tensor<3x3xf32>
    %14 = stablehlo.broadcast_in_dim %12, dims = [1] : (tensor<3xi1>) -> tensor<3x3xi1>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x3xf32>
    %16 = stablehlo.select %14, %13, %15 : tensor<3x3xi1>, tensor<3x3xf32>
    return %16 : tensor<3x3xf32>
  }
  func.func private @_where_3(%arg0: tensor<3xi1>, %arg1: tensor<3xi32>, %arg2: tensor<3xi32>) -> tensor<3xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<3xi1>, tensor<3xi32>
    return %0 : tensor<3xi32>
  }
}
