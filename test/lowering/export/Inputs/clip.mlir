// y = x + transpose(big.weight): a 2-D f32 weight with values beyond the
// fp16 range, for --onnx-weights-dtype=f16 (see Inputs/clip-data.py).
module attributes {qeff.checkpoint_dir = "ckpt"} {
  func.func @forward(%x: tensor<4x2xf32> {qeff.name = "x", qeff.dims = ["", ""]})
      -> (tensor<4x2xf32> {qeff.name = "y", qeff.dims = ["", ""]}) {
    %w = qeff.weight "big.weight" : f32 -> tensor<4x2xf32> {transpose} loc("big")
    %y = onnx.Add %x, %w : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32> loc("add")
    return %y : tensor<4x2xf32>
  }
}
