"""Small programs built in code, shared by the timeline and collector tests."""

from app.core import Program


def tanh_chain_program(length: int) -> Program:
    """x, then ``length`` tanh statements, then the same loss backwarded twice (retained, then not)."""
    lines = ["import torch", "x = torch.tensor([1., 2.], requires_grad=True)", "h0 = x"]
    lines += [f"h{i + 1} = torch.tanh(h{i})" for i in range(length)]
    lines += [f"h{length}.sum().backward(retain_graph=True)", f"h{length}.sum().backward()"]
    return Program("\n".join(lines) + "\n", name="tanh-chain")
