// Graph outputs that are not node results: a graph input, a weight used
// twice (one initializer), a constant, and one value returned twice. Each
// goes through an Identity named after the output.
module attributes {qeff.checkpoint_dir = "ckpt"} {
  func.func @forward(%x: tensor<2x8xf32> {qeff.name = "x", qeff.dims = ["", ""]})
      -> (tensor<2x8xf32> {qeff.name = "x_out", qeff.dims = ["", ""]},
          tensor<8xf32> {qeff.name = "norm", qeff.dims = [""]},
          tensor<2xi64> {qeff.name = "shape", qeff.dims = [""]},
          tensor<2x8xf32> {qeff.name = "y", qeff.dims = ["", ""]},
          tensor<2x8xf32> {qeff.name = "y_again", qeff.dims = ["", ""]}) {
    %n = qeff.weight "model.norm.weight" : bf16 -> tensor<8xf32> loc("model.norm.weight")
    %n2 = qeff.weight "model.norm.weight" : bf16 -> tensor<8xf32> loc("model.norm.weight")
    %c = onnx.Constant dense<[2, 8]> : tensor<2xi64> loc("model.norm")
    %y = onnx.Mul %x, %n2 : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32> loc("model.norm")
    return %x, %n, %c, %y, %y : tensor<2x8xf32>, tensor<8xf32>, tensor<2xi64>, tensor<2x8xf32>, tensor<2x8xf32>
  }
}
