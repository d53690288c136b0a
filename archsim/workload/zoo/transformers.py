"""Transformer models: BERT encoders, GPT-2 decoders, a Llama-like decoder with grouped-query attention.

Tokens are ``T = batch * seq_len``; every linear layer is one :class:`Gemm` over the ``T`` tokens. Head
reshapes and permutes are free views (the attention kernels take strided operands). Decoders build
either a ``"prefill"`` pass over ``seq_len`` tokens or one ``"decode"`` step: one new token per
sequence attending to a KV cache of ``seq_len`` positions (``seq_len - 1`` cached + the new one), with
the new K and V written into the cache in place.
"""

from __future__ import annotations

from dataclasses import dataclass

from archsim.errors import WorkloadError
from archsim.workload.dtypes import DType
from archsim.workload.graph import OpGraph, Value
from archsim.workload.ops import Attention, Copy, Embedding
from archsim.workload.zoo._net import Net, finish

__all__ = ["bert_base", "bert_large", "gpt2", "llama_like", "GPT2_SIZES"]


def _check_seq(seq_len: int, limit: int, model: str) -> None:
    if isinstance(seq_len, bool) or not isinstance(seq_len, int) or not 1 <= seq_len <= limit:
        raise WorkloadError(f"seq_len: {model} takes 1..{limit} tokens, got {seq_len!r}")


def _check_mode(mode: str, training: bool) -> None:
    if mode not in ("prefill", "decode"):
        raise WorkloadError(f"mode: {mode!r} is not one of 'prefill', 'decode'")
    if mode == "decode" and training:
        raise WorkloadError("mode: a decode step is inference only (training=True needs mode='prefill')")


def _bert(name: str, layers: int, hidden: int, heads: int, batch: int, seq_len: int, dtype: DType | str,
          training: bool, optimizer: str, fused_attention: bool) -> OpGraph:
    _check_seq(seq_len, 512, name)
    net = Net(name, batch, dtype, training)
    dt, t, hd = net.dtype, batch * seq_len, hidden // heads
    x = net.b.add(Embedding(30522, hidden, t, dt, name="word_embeddings"))
    pos = net.b.add(Embedding(512, hidden, seq_len, dt, name="position_embeddings"))
    typ = net.b.add(Embedding(2, hidden, t, dt, name="token_type_embeddings"))
    x = net.add(x, pos, fn="add", name="embeddings.add_position", shape=(batch, seq_len, hidden))
    x = net.add(x, typ, fn="add", name="embeddings.add_type")
    x = net.dropout(net.layernorm(x, hidden, name="embeddings.ln"))
    for i in range(layers):
        p = f"layer{i}"
        qkv = net.linear(x, 3 * hidden, rows=t, name=f"{p}.qkv")
        q, k, v = net.b.split(qkv, 3)
        attn = net.b.add(Attention(batch, heads, seq_len, seq_len, hd, fused=fused_attention, dtype=dt,
                                   name=f"{p}.attention"), q, k, v)
        y = net.dropout(net.linear(attn, hidden, rows=t, name=f"{p}.attn_out"))
        x = net.layernorm(net.add(y, x, name=f"{p}.attn_residual"), hidden, name=f"{p}.attn_ln")
        y = net.act(net.linear(x, 4 * hidden, rows=t, name=f"{p}.ffn_in"), "gelu_erf", name=f"{p}.gelu")
        y = net.dropout(net.linear(y, hidden, rows=t, name=f"{p}.ffn_out"))
        x = net.layernorm(net.add(y, x, name=f"{p}.ffn_residual"), hidden, name=f"{p}.ffn_ln")
    cls = net.b.slice(x, (batch, hidden))  # the [CLS] token of each sequence
    net.act(net.linear(cls, hidden, rows=batch, name="pooler"), "tanh", name="pooler.tanh")
    return finish(net, training, optimizer)


def bert_base(batch: int = 1, seq_len: int = 128, dtype: DType | str = "fp32", training: bool = False,
              optimizer: str = "adam", fused_attention: bool = False) -> OpGraph:
    """BERT-base encoder (Devlin et al. 2019: L=12, H=768, A=12, "110M"), with the pooler, as in Hugging
    Face ``bert-base-uncased`` (vocabulary 30522, 512 positions): 109,482,240 parameters."""
    return _bert("bert_base", 12, 768, 12, batch, seq_len, dtype, training, optimizer, fused_attention)


def bert_large(batch: int = 1, seq_len: int = 128, dtype: DType | str = "fp32", training: bool = False,
               optimizer: str = "adam", fused_attention: bool = False) -> OpGraph:
    """BERT-large encoder (L=24, H=1024, A=16; the paper rounds to "340M"), as in Hugging Face
    ``bert-large-uncased``: 335,141,888 parameters."""
    return _bert("bert_large", 24, 1024, 16, batch, seq_len, dtype, training, optimizer, fused_attention)


@dataclass(frozen=True)
class _Decoder:
    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    max_positions: int
    gpt2_style: bool  # learned positions, LayerNorm, GELU MLP, biases, tied head; else Llama style


# GPT-2 (Radford et al. 2019) configurations as in Hugging Face gpt2 / -medium / -large / -xl.
GPT2_SIZES: dict[str, tuple[int, int, int]] = {
    "small": (12, 768, 12),
    "medium": (24, 1024, 16),
    "large": (36, 1280, 20),
    "xl": (48, 1600, 25),
}


def _decoder(cfg: _Decoder, batch: int, seq_len: int, mode: str, dtype: DType | str, training: bool,
             optimizer: str, fused_attention: bool) -> OpGraph:
    _check_mode(mode, training)
    _check_seq(seq_len, cfg.max_positions, cfg.name)
    net = Net(f"{cfg.name}.{mode}", batch, dtype, training)
    dt, h, hd = net.dtype, cfg.hidden, cfg.hidden // cfg.heads
    kv_dim = cfg.kv_heads * hd
    sq = seq_len if mode == "prefill" else 1  # new tokens per sequence
    t = batch * sq
    bias = cfg.gpt2_style
    x = net.b.add(Embedding(cfg.vocab, h, t, dt, name="wte"))
    if cfg.gpt2_style:
        pos = net.b.add(Embedding(cfg.max_positions, h, sq, dt, name="wpe"))
        x = net.dropout(net.add(x, pos, fn="add", name="embeddings.add_position", shape=(batch, sq, h)))
    for i in range(cfg.layers):
        p = f"layer{i}"
        y = net.layernorm(x, h, rms=not cfg.gpt2_style, name=f"{p}.ln1")
        if cfg.gpt2_style:
            q, k, v = net.b.split(net.linear(y, h + 2 * kv_dim, bias=bias, rows=t, name=f"{p}.qkv"), 3)
        else:
            q = net.linear(y, h, bias=False, rows=t, name=f"{p}.q_proj")
            k = net.linear(y, kv_dim, bias=False, rows=t, name=f"{p}.k_proj")
            v = net.linear(y, kv_dim, bias=False, rows=t, name=f"{p}.v_proj")
            q = net.act(q, "rotary", name=f"{p}.rope_q")
            k = net.act(k, "rotary", name=f"{p}.rope_k")
        attn = Attention(batch, cfg.heads, sq, seq_len, hd, kv_heads=cfg.kv_heads, causal=True,
                         fused=fused_attention, dtype=dt, name=f"{p}.attention")
        if mode == "prefill":
            o = net.b.add(attn, q, k, v)
        else:  # the new K, V go into the cache; attention reads the whole cache through memory
            kv = _concat_kv(net, k, v, (batch, 2 * kv_dim), f"{p}.kv_cache_write")
            o = net.b.add(attn, q, after=(kv,))
        y = net.dropout(net.linear(o, h, bias=bias, rows=t, name=f"{p}.o_proj"))
        x = net.add(y, x, name=f"{p}.attn_residual")
        y = net.layernorm(x, h, rms=not cfg.gpt2_style, name=f"{p}.ln2")
        if cfg.gpt2_style:
            y = net.act(net.linear(y, cfg.ffn, rows=t, name=f"{p}.fc_in"), "gelu", name=f"{p}.gelu")
        else:
            gate = net.act(net.linear(y, cfg.ffn, bias=False, rows=t, name=f"{p}.gate_proj"), "silu",
                           name=f"{p}.silu")
            up = net.linear(y, cfg.ffn, bias=False, rows=t, name=f"{p}.up_proj")
            y = net.add(gate, up, fn="mul", name=f"{p}.gate_mul")
        y = net.dropout(net.linear(y, h, bias=bias, rows=t, name=f"{p}.fc_out"))
        x = net.add(y, x, name=f"{p}.mlp_residual")
    x = net.layernorm(x, h, rms=not cfg.gpt2_style, name="ln_f")
    net.linear(x, cfg.vocab, bias=False, rows=t, name="lm_head", tied=cfg.gpt2_style)
    return finish(net, training, optimizer)


def _concat_kv(net: Net, k: Value, v: Value, shape: tuple[int, int], name: str) -> Value:
    """Write the new token's K and V into the cache (in place: a copy of ``2 * kv_dim`` per sequence)."""
    return net.b.add(Copy(shape, net.dtype, name=name), after=(k, v))


def gpt2(batch: int = 1, seq_len: int = 1024, mode: str = "prefill", dtype: DType | str = "fp32",
         training: bool = False, optimizer: str = "adam", size: str = "small",
         fused_attention: bool = False) -> OpGraph:
    """GPT-2 decoder (Radford et al. 2019) as in Hugging Face ``gpt2``: pre-LayerNorm blocks, GELU (tanh)
    MLP, learned positions (1024), vocabulary 50257, LM head tied to the token embedding.
    ``size="small"``: 124,439,808 parameters ("124M"). ``mode``: ``"prefill"`` over ``seq_len`` tokens or
    one ``"decode"`` step with a KV cache of ``seq_len`` positions. The LM head runs on every new token."""
    if size not in GPT2_SIZES:
        raise WorkloadError(f"size: {size!r} is not one of {', '.join(GPT2_SIZES)}")
    layers, hidden, heads = GPT2_SIZES[size]
    cfg = _Decoder(f"gpt2_{size}" if size != "small" else "gpt2", layers, hidden, heads, heads, 4 * hidden, 50257,
                   1024, True)
    return _decoder(cfg, batch, seq_len, mode, dtype, training, optimizer, fused_attention)


def llama_like(batch: int = 1, seq_len: int = 2048, mode: str = "prefill", dtype: DType | str = "bf16",
               training: bool = False, optimizer: str = "adam", hidden: int = 4096, layers: int = 32,
               heads: int = 32, kv_heads: int = 8, ffn: int = 14336, vocab: int = 128256,
               max_positions: int = 8192, fused_attention: bool = True) -> OpGraph:
    """A Llama-style decoder (Touvron et al. 2023; Llama 3, Grattafiori et al. 2024): RMSNorm, rotary
    positions, grouped-query attention (``kv_heads``), SwiGLU MLP (``ffn``), no biases, untied LM head.
    Defaults are Llama-3-8B's configuration: 8,030,261,248 parameters. See :func:`gpt2` for ``mode``."""
    for f, v in (("hidden", hidden), ("layers", layers), ("heads", heads), ("kv_heads", kv_heads), ("ffn", ffn),
                 ("vocab", vocab), ("max_positions", max_positions)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise WorkloadError(f"{f}: must be an int >= 1, got {v!r}")
    if hidden % heads:
        raise WorkloadError(f"heads: {heads} does not divide hidden={hidden}")
    if heads % kv_heads:
        raise WorkloadError(f"kv_heads: {kv_heads} does not divide heads={heads}")
    cfg = _Decoder("llama_like", layers, hidden, heads, kv_heads, ffn, vocab, max_positions, False)
    return _decoder(cfg, batch, seq_len, mode, dtype, training, optimizer, fused_attention)

