"""The merge rule of sync between devices: deterministic, whatever order changes arrive in.

Every version of a record carries a Lamport clock — a counter one higher than any the
device had seen, and the device's id to break ties — and the clock of the version it was
edited from (``base``). Wall clocks play no part, so a device whose clock is wrong cannot win
by it. A version edited from the other wins; two versions edited from the same one are
concurrent: the higher clock wins, and the other is kept as a copy when it holds words the
winner does not (a deletion never takes a concurrent edit with it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Version:
    counter: int
    device: str
    base: str = ""
    deleted: bool = False
    data: dict[str, Any] | None = None

    @property
    def clock(self) -> str:
        return clock(self.counter, self.device)

    @property
    def order(self) -> tuple[int, str]:
        return (self.counter, self.device)


def clock(counter: int, device: str) -> str:
    return f"{counter}.{device}"


def resolve(local: Version, remote: Version) -> tuple[Version, Version | None]:
    """(the version to keep, a concurrent loser to keep as a copy or None)."""
    if remote.clock == local.clock:
        return local, None
    if remote.base == local.clock:
        return remote, None  # edited from what this device has
    if local.base == remote.clock:
        return local, None  # this device's version was edited from it
    winner, loser = (remote, local) if remote.order > local.order else (local, remote)
    keep = not loser.deleted and (winner.deleted or loser.data != winner.data)
    return winner, loser if keep else None
