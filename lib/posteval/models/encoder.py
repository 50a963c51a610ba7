"""Shared event encoder: a set of reconstructed objects -> one context vector per event.

nu2flows-style (see ``shared/notes/paper_and_nu2flows.md`` §B.3): one embedding MLP per object
type (global event features, leptons, jets), a pre-LayerNorm transformer over the set
[global, lepton 1, lepton 2, jet 1 .. jet J] with the padded jets masked out of attention,
class-attention layers in which a learned token pools the set, and an MLP head to the context.
Padding never changes the output: padded jets are excluded from every attention.
"""

from __future__ import annotations

import torch
from torch import nn

from .mlp import mlp


def normed_mlp(n_in: int, hidden: int, n_out: int, *, dropout: float = 0.0) -> nn.Sequential:
    """`posteval.models.mlp` with one hidden layer of width ``hidden``: Linear, LayerNorm, LeakyReLU [, Dropout], Linear."""
    return mlp(n_in, n_out, (hidden,), activation=nn.LeakyReLU, layer_norm=True, dropout=dropout)


class ClassAttentionLayer(nn.Module):
    """A learned class token attends to the (masked) set: pre-LN attention + feed-forward."""

    def __init__(self, width: int, heads: int, ff_hidden: int, dropout: float):
        super().__init__()
        self.norm_query = nn.LayerNorm(width)
        self.norm_set = nn.LayerNorm(width)
        self.attention = nn.MultiheadAttention(width, heads, dropout=dropout, batch_first=True)
        self.norm_ff = nn.LayerNorm(width)
        self.ff = normed_mlp(width, ff_hidden, width, dropout=dropout)

    def forward(self, token: torch.Tensor, tokens: torch.Tensor, padding: torch.Tensor) -> torch.Tensor:
        keys = self.norm_set(tokens)
        attended, _ = self.attention(self.norm_query(token), keys, keys, key_padding_mask=padding,
                                     need_weights=False)
        token = token + attended
        return token + self.ff(self.norm_ff(token))


class EventEncoder(nn.Module):
    """Permutation-invariant encoder of an event's objects into a context vector.

    Why this size: the parameters of `__init__` are the architecture's hyper-parameters, those of
    the nu2flows encoder that chapter 3 mirrors (its ``encoder`` parameter passes them by name):
    three input sizes, then keyword-only widths, depths and dropout with defaults.

    Parameters
    ----------
    global_dim, lepton_dim, jet_dim : int
        Number of features of the global token (e.g. MET x, y, jet counts), of each lepton and
        of each jet.
    width : int
        Transformer model dimension (nu2flows: 128).
    heads : int
        Attention heads; must divide ``width``.
    self_layers, class_layers : int
        Number of self-attention and class-attention layers (nu2flows: 3 and 2).
    ff_hidden, embed_hidden : int
        Hidden widths of the transformer feed-forward blocks and of the embedding MLPs.
    context_dim, context_hidden : int
        Output size and hidden width of the context head (nu2flows: 32 and 64).
    dropout : float
        Dropout probability in attention, feed-forward and heads.
    """

    def __init__(self, global_dim: int, lepton_dim: int, jet_dim: int, *, width: int = 128,
                 heads: int = 8, self_layers: int = 3, class_layers: int = 2, ff_hidden: int = 256,
                 embed_hidden: int = 256, context_dim: int = 32, context_hidden: int = 64,
                 dropout: float = 0.0):
        super().__init__()
        for name, value in [("global_dim", global_dim), ("lepton_dim", lepton_dim), ("jet_dim", jet_dim),
                            ("width", width), ("heads", heads), ("ff_hidden", ff_hidden),
                            ("embed_hidden", embed_hidden), ("context_dim", context_dim),
                            ("context_hidden", context_hidden)]:
            if int(value) < 1:
                raise ValueError(f"{name} must be a positive integer, got {value}")
        if self_layers < 0 or class_layers < 1:
            raise ValueError(f"need self_layers >= 0 and class_layers >= 1, got {self_layers}, {class_layers}")
        if width % heads:
            raise ValueError(f"heads ({heads}) must divide width ({width})")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        self.dims = (global_dim, lepton_dim, jet_dim)
        self.context_dim = context_dim
        self.embed_global = normed_mlp(global_dim, embed_hidden, width)
        self.embed_lepton = normed_mlp(lepton_dim, embed_hidden, width)
        self.embed_jet = normed_mlp(jet_dim, embed_hidden, width)
        self.self_attention = nn.ModuleList(
            nn.TransformerEncoderLayer(width, heads, ff_hidden, dropout, activation="gelu",
                                       batch_first=True, norm_first=True)
            for _ in range(self_layers))
        self.class_token = nn.Parameter(torch.zeros(1, 1, width))
        self.class_attention = nn.ModuleList(
            ClassAttentionLayer(width, heads, ff_hidden, dropout) for _ in range(class_layers))
        self.final_norm = nn.LayerNorm(width)
        self.head = normed_mlp(width, context_hidden, context_dim, dropout=dropout)

    def check_inputs(self, global_feats: torch.Tensor, leptons: torch.Tensor, jets: torch.Tensor,
                     jet_mask: torch.Tensor) -> None:
        """Raise ValueError naming the argument whose shape does not fit the encoder."""
        n = global_feats.shape[0] if global_feats.ndim == 2 else None
        g, l, j = self.dims
        if global_feats.ndim != 2 or global_feats.shape[1] != g:
            raise ValueError(f"global_feats must have shape (n, {g}), got {tuple(global_feats.shape)}")
        if leptons.ndim != 3 or leptons.shape[0] != n or leptons.shape[2] != l:
            raise ValueError(f"leptons must have shape ({n}, n_leptons, {l}), got {tuple(leptons.shape)}")
        if jets.ndim != 3 or jets.shape[0] != n or jets.shape[2] != j:
            raise ValueError(f"jets must have shape ({n}, n_jets, {j}), got {tuple(jets.shape)}")
        if jet_mask.shape != jets.shape[:2] or jet_mask.dtype != torch.bool:
            raise ValueError(f"jet_mask must be a bool tensor of shape {tuple(jets.shape[:2])}, "
                             f"got {jet_mask.dtype} {tuple(jet_mask.shape)}")

    def forward(self, global_feats: torch.Tensor, leptons: torch.Tensor, jets: torch.Tensor,
                jet_mask: torch.Tensor) -> torch.Tensor:
        """Context of shape (n, context_dim); ``jet_mask`` is True for real jets."""
        self.check_inputs(global_feats, leptons, jets, jet_mask)
        tokens = torch.cat([self.embed_global(global_feats)[:, None], self.embed_lepton(leptons),
                            self.embed_jet(jets)], dim=1)
        always = torch.zeros(jet_mask.shape[0], 1 + leptons.shape[1], dtype=torch.bool, device=jets.device)
        padding = torch.cat([always, ~jet_mask], dim=1)  # True = ignore
        for layer in self.self_attention:
            tokens = layer(tokens, src_key_padding_mask=padding)
        token = self.class_token.expand(tokens.shape[0], -1, -1)
        for layer in self.class_attention:
            token = layer(token, tokens, padding)
        return self.head(self.final_norm(token[:, 0]))
