"""`tf.quantization`: fake quantisation for quantisation-aware training. Re-exports only."""
from tensorweave.ops.fake_quant_ops import (  # noqa: F401
    fake_quant_with_min_max_args, fake_quant_with_min_max_args_gradient,
    fake_quant_with_min_max_vars, fake_quant_with_min_max_vars_gradient,
    fake_quant_with_min_max_vars_per_channel, fake_quant_with_min_max_vars_per_channel_gradient)
from tensorweave.ops.quantize_ops import (quantize, dequantize, quantized_concat,  # noqa: F401
                                          quantize_and_dequantize)
from tensorweave.ops.quantize_ops import (  # noqa: F401 - one op, TF's two spellings
    quantize_and_dequantize as quantize_and_dequantize_v2)
