"""A small training script with the copy mistakes this linter finds (see README)."""
import copy

import torch
from torch import nn


def train(model: nn.Module, loader, epochs: int = 2):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.MSELoss()
    history = []
    for _ in range(epochs):
        for x, y in loader:
            out = model(x)
            loss = criterion(out, y)
            history.append(loss.clone())  # keeps every step's graph alive
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return history


def normalise(features: torch.Tensor):
    centred = features.detach()
    centred -= centred.mean()  # also changes `features`
    return features, centred


def snapshot(model: nn.Module, x: torch.Tensor):
    hidden = model(x)
    return copy.deepcopy(hidden)  # raises: `hidden` is not a graph leaf
