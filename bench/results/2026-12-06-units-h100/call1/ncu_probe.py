import torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
q, k, v = (torch.randn(1, 16, 2048, 128, device='cuda', dtype=torch.float32) for _ in range(3))
with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
    F.scaled_dot_product_attention(q, k, v); torch.cuda.synchronize()
