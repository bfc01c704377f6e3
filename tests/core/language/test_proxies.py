"""Checked proxies for nn modules and optimizers: PyTorch is the oracle, and only listed members exist.

Each module is built twice under the same seed, once through its factory and
once plainly; outputs, gradients and optimizer updates must be equal.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch import nn

from app.core.language.evaluator import Evaluator
from app.core.language.module_proxies import NN_MODULES, ModuleProxy, nn_members
from app.core.language.objects import Checked
from app.core.language.optimizer_proxies import OptimizerProxy, optim_members
from app.core.language.parsing import parse
from app.core.model.errors import ProgramError
from app.core.sizing.guard import guarded_call
from app.core.sizing.limits import Budget, Limits

NN = nn_members()
OPTIM = optim_members()

Inputs = Callable[[], tuple[Any, ...]]


def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape).requires_grad_()


def _targets(*values: int) -> torch.Tensor:
    return torch.tensor(values)


# name, constructor arguments, keyword settings, inputs of the forward (made under a fixed seed)
FAMILIES: list[tuple[str, tuple[Any, ...], dict[str, Any], Inputs]] = [
    ("Linear", (3, 4), {}, lambda: (_randn(2, 3),)),
    (
        "Linear",
        (3, 4),
        {"bias": False, "dtype": torch.float64},
        lambda: (torch.randn(2, 3, dtype=torch.float64).requires_grad_(),),
    ),
    ("Bilinear", (3, 2, 4), {}, lambda: (_randn(2, 3), _randn(2, 2))),
    ("RNNCell", (3, 4), {"nonlinearity": "relu"}, lambda: (_randn(2, 3), _randn(2, 4))),
    ("GRUCell", (3, 4), {}, lambda: (_randn(2, 3), _randn(2, 4))),
    ("LSTMCell", (3, 4), {}, lambda: (_randn(2, 3), (_randn(2, 4), _randn(2, 4)))),
    ("RNN", (3, 4, 2), {"nonlinearity": "tanh"}, lambda: (_randn(5, 2, 3), _randn(2, 2, 4))),
    (
        "LSTM",
        (3, 4),
        {"batch_first": True},
        lambda: (_randn(2, 5, 3), (_randn(1, 2, 4), _randn(1, 2, 4))),
    ),
    ("GRU", (3, 4), {"bidirectional": True}, lambda: (_randn(5, 2, 3), _randn(2, 2, 4))),
    ("Embedding", (10, 3), {"padding_idx": 0}, lambda: (torch.tensor([[1, 0, 9], [4, 4, 2]]),)),
    ("Conv1d", (2, 3, 3), {"padding": 1}, lambda: (_randn(1, 2, 8),)),
    ("Conv2d", (2, 3, (3, 3)), {"stride": 2}, lambda: (_randn(1, 2, 6, 6),)),
    ("LayerNorm", ([4],), {"eps": 1e-3}, lambda: (_randn(2, 4),)),
    ("LayerNorm", (torch.Size([2, 4]),), {}, lambda: (_randn(3, 2, 4),)),
    ("BatchNorm1d", (3,), {"momentum": 0.2}, lambda: (_randn(4, 3),)),
    ("Dropout", (0.5,), {}, lambda: (_randn(4, 5),)),
    ("ReLU", (), {}, lambda: (_randn(2, 3),)),
    ("Tanh", (), {}, lambda: (_randn(2, 3),)),
    ("Sigmoid", (), {}, lambda: (_randn(2, 3),)),
    ("Softmax", (), {"dim": 1}, lambda: (_randn(2, 3),)),
    ("MSELoss", (), {"reduction": "sum"}, lambda: (_randn(2, 3), torch.randn(2, 3))),
    ("BCELoss", (), {}, lambda: (torch.rand(2, 3).requires_grad_(), torch.rand(2, 3).round())),
    (
        "BCEWithLogitsLoss",
        (),
        {"pos_weight": torch.tensor([1.0, 2.0, 0.5])},
        lambda: (_randn(2, 3), torch.rand(2, 3).round()),
    ),
    (
        "CrossEntropyLoss",
        (torch.tensor([1.0, 2.0, 0.5]),),
        {"label_smoothing": 0.1},
        lambda: (_randn(4, 3), _targets(0, 2, 1, 2)),
    ),
    ("NLLLoss", (), {"reduction": "none"}, lambda: (_randn(4, 3), _targets(0, 2, 1, 2))),
    ("ConvTranspose1d", (2, 3, 3), {"stride": 2}, lambda: (_randn(1, 2, 5),)),
    ("ConvTranspose2d", (2, 3, 4), {"stride": 2, "padding": 1}, lambda: (_randn(1, 2, 4, 4),)),
    ("MaxPool1d", (2,), {}, lambda: (_randn(1, 2, 6),)),
    ("MaxPool2d", (2,), {"return_indices": True}, lambda: (_randn(1, 2, 4, 4),)),
    ("AvgPool1d", (3,), {"stride": 1}, lambda: (_randn(1, 2, 6),)),
    ("AvgPool2d", ((2, 2),), {}, lambda: (_randn(1, 2, 4, 4),)),
    ("AdaptiveAvgPool1d", (3,), {}, lambda: (_randn(1, 2, 7),)),
    ("AdaptiveAvgPool2d", ((1, 1),), {}, lambda: (_randn(2, 3, 5, 5),)),
    ("AdaptiveMaxPool1d", (2,), {}, lambda: (_randn(1, 2, 7),)),
    ("AdaptiveMaxPool2d", (2,), {}, lambda: (_randn(1, 2, 5, 5),)),
    ("Upsample", (), {"scale_factor": 2, "mode": "nearest"}, lambda: (_randn(1, 2, 3, 3),)),
    ("Flatten", (), {}, lambda: (_randn(2, 3, 4),)),
    ("Unflatten", (1, (2, 3)), {}, lambda: (_randn(4, 6),)),
    ("Identity", (), {}, lambda: (_randn(2, 3),)),
    ("BatchNorm2d", (3,), {}, lambda: (_randn(2, 3, 4, 4),)),
    ("GroupNorm", (2, 4), {}, lambda: (_randn(3, 4, 5),)),
    ("InstanceNorm1d", (3,), {"affine": True}, lambda: (_randn(2, 3, 5),)),
    ("InstanceNorm2d", (3,), {}, lambda: (_randn(2, 3, 4, 4),)),
    ("Dropout1d", (0.5,), {}, lambda: (_randn(2, 4, 5),)),
    ("Dropout2d", (0.5,), {}, lambda: (_randn(2, 4, 3, 3),)),
    (
        "MultiheadAttention",
        (8, 2),
        {"batch_first": True},
        lambda: (_randn(2, 5, 8), _randn(2, 5, 8), _randn(2, 5, 8)),
    ),
    ("TransformerEncoderLayer", (8, 2), {"dim_feedforward": 16, "dropout": 0.1}, lambda: (_randn(5, 2, 8),)),
    (
        "TransformerDecoderLayer",
        (8, 2),
        {"dim_feedforward": 16, "batch_first": True},
        lambda: (_randn(2, 4, 8), _randn(2, 5, 8)),
    ),
    ("ReLU6", (), {}, lambda: ((torch.randn(2, 3) * 8).requires_grad_(),)),
    ("LeakyReLU", (0.2,), {}, lambda: (_randn(2, 3),)),
    ("PReLU", (), {"num_parameters": 3}, lambda: (_randn(2, 3),)),
    ("ELU", (), {"alpha": 0.5}, lambda: (_randn(2, 3),)),
    ("SELU", (), {}, lambda: (_randn(2, 3),)),
    ("GELU", (), {"approximate": "tanh"}, lambda: (_randn(2, 3),)),
    ("SiLU", (), {}, lambda: (_randn(2, 3),)),
    ("Mish", (), {}, lambda: (_randn(2, 3),)),
    ("Softplus", (), {"beta": 2}, lambda: (_randn(2, 3),)),
    ("Softsign", (), {}, lambda: (_randn(2, 3),)),
    ("Hardtanh", (-0.5, 0.5), {}, lambda: (_randn(2, 3),)),
    ("LogSoftmax", (), {"dim": -1}, lambda: (_randn(2, 3),)),
    ("CosineSimilarity", (), {"dim": 1}, lambda: (_randn(2, 3), _randn(2, 3))),
    ("PairwiseDistance", (), {"p": 1.0}, lambda: (_randn(2, 3), _randn(2, 3))),
    ("L1Loss", (), {}, lambda: (_randn(2, 3), torch.randn(2, 3))),
    ("SmoothL1Loss", (), {"beta": 0.5}, lambda: (_randn(2, 3), torch.randn(2, 3))),
    ("HuberLoss", (), {"delta": 0.5}, lambda: (_randn(2, 3), torch.randn(2, 3))),
    (
        "KLDivLoss",
        (),
        {"reduction": "batchmean"},
        lambda: (torch.randn(2, 3).log_softmax(1).requires_grad_(), torch.rand(2, 3).softmax(1)),
    ),
    ("CosineEmbeddingLoss", (), {"margin": 0.1}, lambda: (_randn(2, 3), _randn(2, 3), torch.tensor([1, -1]))),
    ("MarginRankingLoss", (), {"margin": 0.2}, lambda: (_randn(4), _randn(4), torch.tensor([1, -1, 1, 1]))),
    ("TripletMarginLoss", (), {"margin": 1.0}, lambda: (_randn(2, 3), _randn(2, 3), _randn(2, 3))),
]


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _tensors(item)]
    return []


def _made(inputs: Inputs) -> tuple[Any, ...]:
    torch.manual_seed(1)
    return inputs()


def _backward(output: Any) -> None:
    total = sum(t.sum() for t in _tensors(output) if t.requires_grad)
    assert isinstance(total, torch.Tensor)
    total.backward()


def _assert_same(ours: list[torch.Tensor | None], theirs: list[torch.Tensor | None]) -> None:
    assert len(ours) == len(theirs)
    for mine, plain in zip(ours, theirs, strict=True):
        if mine is None or plain is None:
            assert mine is None and plain is None
        else:
            assert torch.equal(mine, plain)


def _built(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[ModuleProxy, nn.Module]:
    torch.manual_seed(0)
    proxy = NN[name](*args, **kwargs)
    torch.manual_seed(0)
    plain = getattr(nn, name)(*args, **kwargs)
    return proxy, plain


@pytest.mark.parametrize(("name", "args", "kwargs", "inputs"), FAMILIES, ids=[f[0] for f in FAMILIES])
def test_each_module_agrees_with_pytorch(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any], inputs: Inputs
) -> None:
    proxy, plain = _built(name, args, kwargs)
    ours, theirs = _made(inputs), _made(inputs)
    torch.manual_seed(2)  # dropout draws its mask here
    out = proxy.call(*ours)
    torch.manual_seed(2)
    expected = plain(*theirs)
    _assert_same(list(_tensors(out)), list(_tensors(expected)))
    assert type(out) is type(expected)
    if _tensors(expected) and any(t.requires_grad for t in _tensors(expected)):
        _backward(out)
        _backward(expected)
        _assert_same([p.grad for p in proxy.parameters()], [p.grad for p in plain.parameters()])
        _assert_same([t.grad for t in _tensors(ours)], [t.grad for t in _tensors(theirs)])
    assert proxy.kind == f"an nn.{name} module"
    assert [n for n, _ in proxy.named_parameters()] == [n for n, _ in plain.named_parameters()]


def test_every_listed_module_is_covered() -> None:
    assert {f[0] for f in FAMILIES} == set(NN_MODULES)
    assert set(NN) == {*NN_MODULES, "Sequential", "TransformerEncoder"}


def test_sequential_takes_proxies_and_agrees_with_pytorch() -> None:
    torch.manual_seed(0)
    seq = NN["Sequential"](NN["Linear"](3, 4), NN["ReLU"](), NN["Linear"](4, 1))
    torch.manual_seed(0)
    plain = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    x = _made(lambda: (_randn(5, 3),))[0]
    out, expected = seq.call(x), plain(x)
    assert torch.equal(out, expected)
    out.sum().backward()
    expected.sum().backward()
    _assert_same([p.grad for p in seq.parameters()], [p.grad for p in plain.parameters()])
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert seq.kind == "an nn.Sequential module"


def test_sequential_shares_the_modules_it_was_given() -> None:
    lin = NN["Linear"](2, 2)
    seq = NN["Sequential"](lin, NN["Tanh"]())
    assert seq.parameters()[0] is lin.get_attribute("weight")


@pytest.mark.parametrize("bad", [torch.ones(2), 3, "relu", nn.Linear(2, 2)])
def test_sequential_refuses_what_is_not_a_module_proxy(bad: Any) -> None:
    with pytest.raises(ProgramError, match=r"nn\.Sequential takes modules"):
        NN["Sequential"](NN["Linear"](2, 2), bad)


def test_sequential_refuses_keywords() -> None:
    with pytest.raises(ProgramError, match="without keywords"):
        NN["Sequential"](first=NN["Linear"](2, 2))


def test_batchnorm_in_train_and_eval_mode_agrees_with_pytorch() -> None:
    bn, plain = _built("BatchNorm1d", (3,), {})
    x = _made(lambda: (torch.randn(6, 3) * 4 + 1,))[0]
    assert torch.equal(bn.call(x), plain(x))
    assert torch.equal(dict(bn.named_tensors())["running_mean"], plain.running_mean)
    assert bn.eval() is bn
    plain.eval()
    assert torch.equal(bn.call(x), plain(x))
    assert bn.train() is bn
    plain.train()
    assert torch.equal(bn.call(x), plain(x))
    assert torch.equal(dict(bn.named_tensors())["running_var"], plain.running_var)


def test_dropout_in_eval_mode_is_the_identity() -> None:
    drop = NN["Dropout"](p=0.9)
    x = torch.randn(50)
    assert drop.eval() is drop
    assert torch.equal(drop.call(x), x)
    assert not torch.equal(drop.train().call(x), x)


def test_relu_inplace_writes_into_its_input_as_pytorch_does() -> None:
    relu = NN["ReLU"](inplace=True)
    x = torch.tensor([-1.0, 2.0], requires_grad=True)
    a = x * 1
    version = a._version
    out = relu.call(a)
    assert out is a and a._version == version + 1
    assert torch.equal(a, torch.tensor([0.0, 2.0]))
    with pytest.raises(RuntimeError) as ours:
        relu.call(x)
    with pytest.raises(RuntimeError) as theirs:
        nn.ReLU(inplace=True)(x)
    assert str(ours.value) == str(theirs.value)


def test_zero_grad_sets_grads_to_none_by_default() -> None:
    lin = NN["Linear"](2, 1)
    lin.call(torch.ones(2)).sum().backward()
    lin.zero_grad(set_to_none=False)
    assert torch.equal(lin.get_attribute("weight").grad, torch.zeros(1, 2))
    lin.zero_grad()
    assert all(p.grad is None for p in lin.parameters())


def test_parameters_and_settings_read_as_attributes() -> None:
    rnn = NN["RNN"](3, 4, num_layers=2)
    assert rnn.get_attribute("weight_ih_l1").shape == (4, 4)
    assert rnn.get_attribute("hidden_size") == 4 and rnn.get_attribute("num_layers") == 2
    assert {"weight_ih_l0", "hidden_size", "parameters", "zero_grad"} <= set(rnn.members())
    assert NN["Linear"](2, 3, bias=False).members().count("bias") == 0


@pytest.mark.parametrize(
    "name",
    [
        "_parameters",
        "_modules",
        "__dict__",
        "__class__",
        "_apply",
        "register_forward_hook",
        "register_full_backward_hook",
        "apply",
        "forward",
        "training",
    ],
)
def test_module_members_not_listed_are_refused(name: str) -> None:
    seq = NN["Sequential"](NN["Linear"](2, 2))
    for proxy in (NN["Linear"](2, 2), NN["BatchNorm1d"](2), seq):
        with pytest.raises(KeyError):
            proxy.get_attribute(name)
        with pytest.raises(KeyError):
            proxy.method(name)
        assert name not in proxy.members()


def test_nothing_but_its_parameters_may_be_assigned_on_a_module() -> None:
    lin = NN["Linear"](2, 2)
    for name in ("training", "forward", "_parameters"):
        with pytest.raises(KeyError):
            lin.set_attribute(name, torch.zeros(2, 2))
    with pytest.raises(KeyError):  # NOTE [module attributes]: no evaluator object reaches a layer
        lin.set_attribute("weight", object())
    with pytest.raises(TypeError, match=r"torch\.nn\.Parameter or None expected"):  # PyTorch's own
        lin.set_attribute("weight", torch.zeros(2, 2))
    lin.set_attribute("weight", torch.nn.Parameter(torch.ones(2, 2)))
    assert torch.equal(lin.get_attribute("weight"), torch.ones(2, 2))


def test_members_are_public_and_every_one_answers() -> None:
    lin = NN["Linear"](2, 2)
    for name in lin.members():
        assert not name.startswith("_")
        try:
            value = lin.get_attribute(name)
        except KeyError:
            value = lin.method(name)
            assert getattr(value, "__self__", None) is lin  # bound to the proxy, not the module
        else:
            assert isinstance(value, (torch.Tensor, int, float, bool, str))


def test_what_comes_out_is_tensors_lists_and_proxies() -> None:
    lin = NN["Linear"](2, 2)
    assert all(type(p) is nn.Parameter for p in lin.parameters())
    assert isinstance(lin.parameters(), list)
    assert all(isinstance(n, str) and isinstance(p, torch.Tensor) for n, p in lin.named_parameters())
    assert lin.train() is lin and lin.eval() is lin
    assert lin.zero_grad() is None
    lstm = NN["LSTM"](2, 3)
    out, (h, c) = lstm.call(torch.ones(4, 1, 2))
    assert all(isinstance(t, torch.Tensor) for t in (out, h, c))


@pytest.mark.parametrize(
    "build",
    [
        lambda: NN["Linear"](torch.tensor(3), 2),
        lambda: NN["Linear"](2, in_features=torch.tensor(3)),
        lambda: NN["Conv2d"](1, 1, torch.tensor([3, 3])),
        lambda: NN["Linear"](2, NN["Linear"](2, 2)),
        lambda: NN["Linear"](2, 2, bias=print),
        lambda: NN["Linear"](2, 2, device=[torch.device("cpu")]),
        lambda: NN["LayerNorm"]([2] * 100),
        lambda: NN["Softmax"](dim=[[1]]),
        lambda: NN["Embedding"](3, 2, _weight=torch.ones(3, 2)),
        lambda: NN["Embedding"](3, 2, sparse=True),
        lambda: NN["RNN"](3, 4, torch.tensor(1)),
        lambda: NN["LSTM"](2, 2, 10**6),
        lambda: NN["GRU"](2, 2, num_layers=101),
        lambda: NN["MSELoss"](reduction=torch.ones(1)),
    ],
)
def test_constructors_refuse_what_is_not_a_plain_setting(build: Callable[[], Any]) -> None:
    with pytest.raises(ProgramError):
        build()


def test_constructor_errors_are_pytorchs_own() -> None:
    with pytest.raises(TypeError) as ours:
        NN["Linear"](2)
    with pytest.raises(TypeError) as theirs:
        nn.Linear(2)  # type: ignore[call-arg]
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError, match="nonlinearity"):
        NN["RNN"](2, 3, nonlinearity="sine")


def test_module_forward_refuses_objects() -> None:
    lin = NN["Linear"](2, 2)
    for bad in (lin, "x", print, {"x": torch.ones(2)}):
        with pytest.raises(ProgramError, match="takes tensors"):
            lin.call(bad)


def test_named_tensors_are_named_parameters_then_buffers() -> None:
    seq = NN["Sequential"](NN["Linear"](3, 3), NN["BatchNorm1d"](3))
    names = [n for n, _ in seq.named_tensors()]
    assert names == [
        "0.weight",
        "0.bias",
        "1.weight",
        "1.bias",
        "1.running_mean",
        "1.running_var",
        "1.num_batches_tracked",
    ]
    assert names[:4] == [n for n, _ in seq.named_parameters()]
    loss = NN["CrossEntropyLoss"](weight=torch.ones(3))
    assert [n for n, _ in loss.named_tensors()] == ["weight"]


def test_factories_are_named_like_pytorchs_classes() -> None:
    for name, factory in NN.items():
        assert factory.__name__ == name and factory.__module__ == "torch.nn"
    for name, factory in OPTIM.items():
        assert factory.__name__ == name and factory.__module__ == "torch.optim"
    assert repr(NN["Linear"]) == "nn.Linear"


# -- optimizers -------------------------------------------------------------------

OPTIMIZER_CASES: list[tuple[str, dict[str, Any]]] = [
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "dampening": 0.1}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.9), "eps": 1e-6, "amsgrad": True}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.01, "betas": [0.5, 0.6], "amsgrad": True}),
]


def _train(model: Any, opt: Any, forward: Callable[[torch.Tensor], torch.Tensor]) -> None:
    torch.manual_seed(3)
    for _ in range(3):
        opt.zero_grad()
        loss = (forward(torch.randn(4, 3)) ** 2).mean()
        loss.backward()
        opt.step()


@pytest.mark.parametrize(("name", "settings"), OPTIMIZER_CASES)
def test_optimizer_steps_agree_with_pytorch(name: str, settings: dict[str, Any]) -> None:
    proxy, plain = _built("Linear", (3, 2), {})
    ours = OPTIM[name](proxy.parameters(), **settings)
    theirs = getattr(torch.optim, name)(plain.parameters(), **settings)
    _train(proxy, ours, proxy.call)
    _train(plain, theirs, plain)
    for mine, expected in zip(proxy.parameters(), plain.parameters(), strict=True):
        torch.testing.assert_close(mine, expected, rtol=0, atol=0)
    assert ours.kind == f"an optim.{name} optimizer"
    state = dict(ours.named_tensors())
    for index, param in enumerate(plain.parameters()):
        for key, value in theirs.state[param].items():
            torch.testing.assert_close(state[f"state[{index}].{key}"], value, rtol=0, atol=0)


def test_optimizer_takes_a_positional_lr_and_a_joined_list() -> None:
    a, b = NN["Linear"](2, 2), NN["Linear"](2, 1)
    w = torch.ones(1, requires_grad=True)
    opt = OPTIM["SGD"](a.parameters() + b.parameters() + [w], 0.5, 0.9)
    (b.call(a.call(torch.ones(2))) * w).sum().backward()
    before = [p.detach().clone() for p in (*a.parameters(), *b.parameters(), w)]
    opt.step()
    after = [*a.parameters(), *b.parameters(), w]
    assert all(not torch.equal(x, y) for x, y in zip(before, after, strict=True))
    assert [n for n, _ in opt.named_tensors()] == [f"state[{i}].momentum_buffer" for i in range(5)]


def test_optimizer_zero_grad() -> None:
    w = torch.ones(2, requires_grad=True)
    opt = OPTIM["Adam"]([w])
    (w * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert torch.equal(w.grad, torch.zeros(2))
    opt.zero_grad()
    assert w.grad is None
    with pytest.raises(ProgramError):
        opt.zero_grad(set_to_none="yes")


def test_optimizer_errors_are_pytorchs_own() -> None:
    leaf = torch.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="non-leaf"):
        OPTIM["SGD"]([leaf * 2], lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        OPTIM["SGD"]([], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        OPTIM["Adam"]([leaf], lr=-1.0)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda w: OPTIM["SGD"]([{"params": [w]}], lr=0.1), "list of tensors"),
        (lambda w: OPTIM["SGD"](NN["Linear"](2, 2), lr=0.1), r"parameters\(\)"),
        (lambda w: OPTIM["SGD"](w, lr=0.1), "list of tensors"),
        (lambda w: OPTIM["SGD"]([w], lr=torch.ones(2)), "plain number"),
        (lambda w: OPTIM["Adam"]([w], betas=(torch.tensor(0.9), 0.99)), "plain number"),
        (lambda w: OPTIM["Adam"]([w], foreach=True), "no setting 'foreach'"),
        (lambda w: OPTIM["Adam"]([w], capturable=True), "no setting 'capturable'"),
        (lambda w: OPTIM["AdamW"]([w], fused=True), "no setting 'fused'"),
        (lambda w: OPTIM["SGD"]([w], lr=0.1, differentiable=True), "no setting 'differentiable'"),
    ],
)
def test_optimizer_refuses_what_is_not_listed(build: Callable[[Any], Any], message: str) -> None:
    with pytest.raises(ProgramError, match=message):
        build(torch.ones(2, requires_grad=True))


@pytest.mark.parametrize(
    "name",
    [
        "state",
        "state_dict",
        "load_state_dict",
        "add_param_group",
        "register_step_pre_hook",
        "register_step_post_hook",
        "defaults",
        "_optimizer",
        "__dict__",
    ],
)
def test_optimizer_members_not_listed_are_refused(name: str) -> None:
    opt = OPTIM["SGD"]([torch.ones(2, requires_grad=True)], lr=0.1)
    with pytest.raises(KeyError):
        opt.get_attribute(name)
    with pytest.raises(KeyError):
        opt.method(name)
    with pytest.raises(KeyError):
        opt.set_attribute(name, 1)
    assert opt.members() == ["step", "zero_grad", "param_groups"]


def test_step_refuses_a_closure() -> None:
    w = torch.ones(2, requires_grad=True)
    opt = OPTIM["SGD"]([w], lr=0.1)
    with pytest.raises(ProgramError, match="no closure"):
        opt.step((w * w).sum)
    with pytest.raises(ProgramError, match="no closure"):
        opt.step(closure=(w * w).sum)


def test_optimizers_run_with_plain_per_parameter_ops() -> None:
    w = torch.ones(2, requires_grad=True)
    for name in OPTIM:
        opt = OPTIM[name]([w])
        assert isinstance(opt, OptimizerProxy)
        defaults = opt._optimizer.defaults
        assert defaults["foreach"] is False and defaults.get("fused") is None  # RMSprop has no fused


def test_building_and_stepping_does_not_import_dynamo() -> None:
    code = (
        "import sys, warnings\n"
        "import torch\n"
        "warnings.simplefilter('error')\n"
        "from app.core.language.module_proxies import nn_members\n"
        "from app.core.language.optimizer_proxies import optim_members\n"
        "nn, optim = nn_members(), optim_members()\n"
        "lin = nn['LSTM'](2, 2)\n"
        "for name in optim:\n"
        "    opt = optim[name](lin.parameters(), lr=0.1)\n"
        "    lin.call(torch.ones(3, 1, 2))[0].sum().backward()\n"
        "    opt.step()\n"
        "    opt.zero_grad()\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


# -- under the size guard ---------------------------------------------------------


def _guarded(fn: Callable[..., Any], *args: Any, limits: Limits | None = None, **kwargs: Any) -> Any:
    limits = limits or Limits()
    result, _ = guarded_call(
        fn, list(args), kwargs, limits=limits, budget=Budget(limits.max_total_elements), deadline=None
    )
    return result


def test_parameter_allocation_is_sized_by_the_guard() -> None:
    with pytest.raises(ProgramError, match="limit is 10,000,000"):
        _guarded(NN["Linear"], 100_000, 100_000)
    with pytest.raises(ProgramError, match="limit is 100"):
        _guarded(NN["Embedding"], 20, 10, limits=Limits(max_elements=100))


def test_forward_and_steps_run_under_the_guard() -> None:
    lin = _guarded(NN["Linear"], 3, 2)
    assert isinstance(lin, Checked)
    opt = _guarded(OPTIM["Adam"], _guarded(lin.method("parameters")), lr=0.1)
    loss = _guarded(lin.call, torch.ones(3)).sum()
    loss.backward()
    _guarded(opt.method("step"))
    _guarded(opt.method("zero_grad"))
    assert lin.get_attribute("weight").grad is None


def test_printing_shows_pytorchs_own_text() -> None:
    assert repr(NN["Linear"](2, 3)) == repr(nn.Linear(2, 3))
    assert str(NN["Sequential"](NN["Tanh"]())) == str(nn.Sequential(nn.Tanh()))
    w = torch.ones(2, requires_grad=True)
    assert repr(OPTIM["SGD"]([w], lr=0.1)).startswith("SGD (")


@pytest.mark.parametrize(("name", "args", "kwargs", "inputs"), FAMILIES, ids=[f[0] for f in FAMILIES])
def test_each_module_builds_and_runs_under_the_guard(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any], inputs: Inputs
) -> None:
    proxy, plain = _built(name, args, kwargs)
    torch.manual_seed(0)
    guarded = _guarded(NN[name], *args, **kwargs)
    _assert_same(list(guarded.parameters()), list(plain.parameters()))
    torch.manual_seed(2)
    out = _guarded(guarded.call, *_made(inputs))
    torch.manual_seed(2)
    _assert_same(_tensors(out), _tensors(proxy.call(*_made(inputs))))


# -- through the language ------------------------------------------------------------

TRAINING = """
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
rnn = nn.LSTMCell(1, 2)
opt = optim.Adam(model.parameters() + rnn.parameters(), lr=0.05)
h, c = torch.zeros(1, 2), torch.zeros(1, 2)
x = torch.randn(5, 3)
for i in range(3):
    opt.zero_grad()
    h, c = rnn(model(x).mean(0, keepdim=True), (h, c))
    loss = (h ** 2).sum() + F.mse_loss(model(x), torch.ones(5, 1))
    loss.backward()
    opt.step()
    h, c = h.detach(), c.detach()
w = rnn.weight_ih
"""


def test_a_training_program_agrees_with_plain_pytorch() -> None:
    env: dict[str, Any] = {}
    Evaluator(env, field="program").run(parse(TRAINING, field="program", mode="exec"))
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    rnn = nn.LSTMCell(1, 2)
    opt = torch.optim.Adam([*model.parameters(), *rnn.parameters()], lr=0.05)
    h, c = torch.zeros(1, 2), torch.zeros(1, 2)
    x = torch.randn(5, 3)
    for _ in range(3):
        opt.zero_grad()
        h, c = rnn(model(x).mean(0, keepdim=True), (h, c))
        loss = (h**2).sum() + nn.functional.mse_loss(model(x), torch.ones(5, 1))
        loss.backward()
        opt.step()
        h, c = h.detach(), c.detach()
    assert isinstance(env["model"], ModuleProxy) and isinstance(env["opt"], OptimizerProxy)
    _assert_same(env["model"].parameters(), list(model.parameters()))
    _assert_same([env["loss"], env["h"], env["w"]], [loss, h, rnn.weight_ih])


@pytest.mark.parametrize(
    "code",
    [
        "lin._parameters",
        "lin.__dict__",
        "lin.register_forward_hook(torch.relu)",
        "lin.apply(lin)",
        "lin.to('meta')",
        "lin.to(torch.float64)",
        "lin.forward(torch.ones(2))",
        "lin.training = False",
        "lin.weight = torch.ones(2, 2)",
        "opt.param_groups[0].keys()",
        "opt.param_groups[0]['params'] = []",
        "opt.state_dict()",
        "lin.state_dict(destination={})",
        "opt.step(print)",
        "nn.Linear(torch.tensor(2), 2)",
        "optim.SGD(lin, lr=0.1)",
    ],
)
def test_the_language_refuses_what_proxies_do_not_list(code: str) -> None:
    program = f"lin = nn.Linear(2, 2)\nopt = optim.SGD(lin.parameters(), lr=0.1)\n{code}\n"
    with pytest.raises(ProgramError) as refused:
        Evaluator({}, field="program").run(parse(program, field="program", mode="exec"))
    assert refused.value.line == 3
