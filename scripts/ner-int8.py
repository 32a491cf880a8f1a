"""Derives the names model's int8 form for bulk indexing from the pinned 4-bit model.

Usage: ner-int8.py MODEL_Q4 OUT

The 4-bit weights (MatMulNBits) are dequantized exactly to float MatMuls, then ONNX Runtime's
own dynamic quantizer stores them as int8 per output channel; the classifier stays in float.
ONNX Runtime runs int8 MatMuls with integer dot-product kernels (AVX2/AVX-VNNI/AVX-512 VNNI),
about twice as fast as its 4-bit kernels for this model on one core. The result is
deterministic for pinned package versions; the fetch script checks its sha256.
The model is CC-BY-4.0 (Arcjet): this derived file keeps that license and attribution.
"""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic


def dequantize(model: onnx.ModelProto) -> onnx.ModelProto:
    inits = {i.name: i for i in model.graph.initializer}

    def arr(name):
        return numpy_helper.to_array(inits[name])

    nodes, new_inits, dropped = [], [], set()
    for n in model.graph.node:
        if n.op_type != "MatMulNBits":
            nodes.append(n)
            continue
        at = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        if at.get("bits", 4) != 4:
            raise SystemExit(f"{n.name}: only 4-bit MatMulNBits is handled")
        k, cols, bs = at["K"], at["N"], at["block_size"]
        a_in, b_in, s_in = n.input[0], n.input[1], n.input[2]
        zp = n.input[3] if len(n.input) > 3 and n.input[3] else None
        bias = n.input[5] if len(n.input) > 5 and n.input[5] else None
        if len(n.input) > 4 and n.input[4]:
            raise SystemExit(f"{n.name}: g_idx is not handled")
        q = arr(b_in)  # [N, blocks, bs/2] bytes, low nibble first
        blocks = q.shape[1]
        vals = np.stack([q & 0x0F, q >> 4], axis=-1).reshape(cols, blocks, bs).astype(np.float32)
        scale = arr(s_in).reshape(cols, blocks, 1).astype(np.float32)
        if zp is None:
            zero = np.float32(8.0)
        else:
            z = arr(zp)
            if z.dtype == np.uint8:  # packed nibbles, as the weights
                z = np.stack([z & 0x0F, z >> 4], axis=-1).reshape(cols, -1)[:, :blocks]
            zero = z.reshape(cols, blocks, 1).astype(np.float32)
        w = ((vals - zero) * scale).reshape(cols, blocks * bs)[:, :k]
        w_name = b_in + "_f32"
        new_inits.append(numpy_helper.from_array(np.ascontiguousarray(w.T), w_name))
        dropped.update(x for x in (b_in, s_in, zp) if x)
        if bias:
            mid = n.output[0] + "_nobias"
            nodes.append(helper.make_node("MatMul", [a_in, w_name], [mid], name=n.name + "_f"))
            nodes.append(helper.make_node("Add", [mid, bias], [n.output[0]], name=n.name + "_b"))
        else:
            nodes.append(helper.make_node("MatMul", [a_in, w_name], [n.output[0]], name=n.name + "_f"))
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    kept = [i for i in model.graph.initializer if i.name not in dropped]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept + new_inits)
    return model


def main() -> None:
    src, out = sys.argv[1], sys.argv[2]
    model = dequantize(onnx.load(src))
    # Activation x activation products (attention scores) and the small classifier stay float:
    # the first are not weights, the second decides every label.
    keep_float = [
        n.name
        for n in model.graph.node
        if n.op_type == "MatMul"
        and (n.name.endswith("/self/MatMul") or n.name.endswith("/self/MatMul_1") or "classifier" in n.name)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        f32 = os.path.join(tmp, "f32.onnx")
        onnx.save(model, f32)
        quantize_dynamic(
            f32,
            out + ".part",
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
            nodes_to_exclude=keep_float,
        )
    os.replace(out + ".part", out)


if __name__ == "__main__":
    main()
