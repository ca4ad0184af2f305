# Source: github.com/jaymody/picoGPT, gpt2.py (commit dfb5df895a7a6b18705866a0bf7ec04947d8e05a).
# MIT License, Copyright (c) 2023 Jay Mody. Permission is hereby granted, free of charge, to any
# person obtaining a copy of this software and associated documentation files (the "Software"),
# to deal in the Software without restriction, including without limitation the rights to use,
# copy, modify, merge, publish, distribute, sublicense, and/or sell copies of the Software, and
# to permit persons to whom the Software is furnished to do so, subject to the following
# conditions: The above copyright notice and this permission notice shall be included in all
# copies or substantial portions of the Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT
# WARRANTY OF ANY KIND, EXPRESS OR IMPLIED.
#
# The layer functions below are copied unchanged (gpt2(), generate() and main(), which load
# weights and tokenize, are left out). The `*_flat` entry points at the end are ours: numfuse
# takes arrays and scalars as arguments, while picoGPT passes its parameters as dicts of arrays,
# so each entry point builds those dicts from flat array arguments and calls picoGPT's function.

import numpy as np


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def softmax(x):
    exp_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return exp_x / np.sum(exp_x, axis=-1, keepdims=True)


def layer_norm(x, g, b, eps: float = 1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    variance = np.var(x, axis=-1, keepdims=True)
    x = (x - mean) / np.sqrt(variance + eps)  # normalize x to have mean=0 and var=1 over last axis
    return g * x + b  # scale and offset with gamma/beta params


def linear(x, w, b):  # [m, in], [in, out], [out] -> [m, out]
    return x @ w + b


def ffn(x, c_fc, c_proj):  # [n_seq, n_embd] -> [n_seq, n_embd]
    # project up
    a = gelu(linear(x, **c_fc))  # [n_seq, n_embd] -> [n_seq, 4*n_embd]

    # project back down
    x = linear(a, **c_proj)  # [n_seq, 4*n_embd] -> [n_seq, n_embd]

    return x


def attention(q, k, v, mask):  # [n_q, d_k], [n_k, d_k], [n_k, d_v], [n_q, n_k] -> [n_q, d_v]
    return softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask) @ v


def mha(x, c_attn, c_proj, n_head):  # [n_seq, n_embd] -> [n_seq, n_embd]
    # qkv projection
    x = linear(x, **c_attn)  # [n_seq, n_embd] -> [n_seq, 3*n_embd]

    # split into qkv
    qkv = np.split(x, 3, axis=-1)  # [n_seq, 3*n_embd] -> [3, n_seq, n_embd]

    # split into heads
    qkv_heads = list(map(lambda x: np.split(x, n_head, axis=-1), qkv))  # [3, n_seq, n_embd] -> [3, n_head, n_seq, n_embd/n_head]

    # causal mask to hide future inputs from being attended to
    causal_mask = (1 - np.tri(x.shape[0], dtype=x.dtype)) * -1e10  # [n_seq, n_seq]

    # perform attention over each head
    out_heads = [attention(q, k, v, causal_mask) for q, k, v in zip(*qkv_heads)]  # [3, n_head, n_seq, n_embd/n_head] -> [n_head, n_seq, n_embd/n_head]

    # merge heads
    x = np.hstack(out_heads)  # [n_head, n_seq, n_embd/n_head] -> [n_seq, n_embd]

    # out projection
    x = linear(x, **c_proj)  # [n_seq, n_embd] -> [n_seq, n_embd]

    return x


def transformer_block(x, mlp, attn, ln_1, ln_2, n_head):  # [n_seq, n_embd] -> [n_seq, n_embd]
    # multi-head causal self attention
    x = x + mha(layer_norm(x, **ln_1), **attn, n_head=n_head)  # [n_seq, n_embd] -> [n_seq, n_embd]

    # position-wise feed forward network
    x = x + ffn(layer_norm(x, **ln_2), **mlp)  # [n_seq, n_embd] -> [n_seq, n_embd]

    return x


# ---- entry points (ours): flat array arguments -> picoGPT's dict parameters ----


def ffn_flat(x, fc_w, fc_b, proj_w, proj_b):
    return ffn(x, c_fc={"w": fc_w, "b": fc_b}, c_proj={"w": proj_w, "b": proj_b})


def mha_flat(x, attn_w, attn_b, proj_w, proj_b, n_head):
    return mha(x, c_attn={"w": attn_w, "b": attn_b}, c_proj={"w": proj_w, "b": proj_b}, n_head=n_head)


def transformer_block_flat(x, fc_w, fc_b, mproj_w, mproj_b, attn_w, attn_b, aproj_w, aproj_b,
                           ln1_g, ln1_b, ln2_g, ln2_b, n_head):
    return transformer_block(
        x,
        mlp={"c_fc": {"w": fc_w, "b": fc_b}, "c_proj": {"w": mproj_w, "b": mproj_b}},
        attn={"c_attn": {"w": attn_w, "b": attn_b}, "c_proj": {"w": aproj_w, "b": aproj_b}},
        ln_1={"g": ln1_g, "b": ln1_b},
        ln_2={"g": ln2_g, "b": ln2_b},
        n_head=n_head,
    )
