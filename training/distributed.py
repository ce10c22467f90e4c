"""DistributedDataParallel glue for ``torchrun``: process-group set-up from the environment
torchrun exports (RANK, WORLD_SIZE, LOCAL_RANK), teardown, and the few collectives the trainer
needs. One process without those variables is a world of size 1 and touches no process group.

How the ranks share the data (exact equivalence with one process): every rank reads the same
deterministic global batch sequence; one optimizer step consumes ``world`` consecutive batches,
rank r training on the r-th. Each rank's loss is ``loss_sum * world / step_tokens`` where
``step_tokens`` counts the target tokens of all the step's batches (each rank computes it from
the batch lengths it has read, no collective needed), so DDP's mean of the rank gradients is the
gradient of one process's loss over the union of the batches. ``train.simulate_world_size``
makes one process train on exactly those union batches.

Only rank 0 validates and writes checkpoints, metrics and logs; the others wait in the
broadcast that carries its decisions (learning rate, stop).
"""
from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, TypeVar

import torch
import torch.distributed as dist

T = TypeVar("T")
COLLECTIVE_TIMEOUT = datetime.timedelta(hours=2)  # rank 0 validates while the others wait


@dataclass(frozen=True)
class World:
    """This process's place among the training processes."""

    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.size > 1

    def device(self, name: str) -> torch.device:
        """The device this rank trains on: ``cuda:LOCAL_RANK`` on GPUs, else the CPU."""
        if name == "cuda" and not torch.cuda.is_available():
            raise ValueError("train.device is 'cuda' but torch sees no CUDA device")
        if name == "auto":
            name = "cuda" if torch.cuda.is_available() else "cpu"
        if name == "cuda":
            torch.cuda.set_device(self.local_rank)
            return torch.device("cuda", self.local_rank)
        return torch.device(name)

    # collectives: each is a no-op in a world of one ----------------------------------------------
    def sum(self, values: list[float]) -> list[float]:
        """Element-wise sum over ranks (float64 on the CPU for gloo, on the device for nccl)."""
        if not self.distributed:
            return values
        tensor = torch.tensor(values, dtype=torch.float64, device=_collective_device())
        dist.all_reduce(tensor)
        return tensor.tolist()

    def broadcast(self, value: Any) -> Any:
        """Rank 0's ``value`` (any picklable object) on every rank."""
        if not self.distributed:
            return value
        box = [value]
        dist.broadcast_object_list(box, src=0, device=_collective_device())
        return box[0]

    def barrier(self) -> None:
        if self.distributed:
            dist.barrier()


def env_rank() -> int:
    """This process's rank as torchrun exported it (0 outside torchrun)."""
    return int(os.environ.get("RANK", "0"))


def init_world(device_name: str = "auto") -> World:
    """Join the process group when torchrun started this process (WORLD_SIZE > 1): nccl on CUDA,
    gloo on CPUs. Environment variables are read here and nowhere else."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1:
        return World()
    world = World(int(os.environ["RANK"]), size, int(os.environ.get("LOCAL_RANK", "0")))
    use_cuda = device_name == "cuda" or (device_name == "auto" and torch.cuda.is_available())
    if not dist.is_initialized():
        if use_cuda:
            torch.cuda.set_device(world.local_rank)
        dist.init_process_group("nccl" if use_cuda else "gloo", timeout=COLLECTIVE_TIMEOUT)
    return world


def teardown(world: World, clean: bool = True) -> None:
    """Leave the process group; after a clean run, behind a barrier so that no rank exits while
    the others still talk (after an error the others are stopped by torchrun)."""
    if world.distributed and dist.is_initialized():
        if clean:
            dist.barrier()
        dist.destroy_process_group()


def step_groups(batches: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive groups of ``size`` batches, one per optimizer step. An incomplete last group is
    dropped (every rank must take the same number of steps), after reading the stream to its end."""
    group: list[T] = []
    for batch in batches:
        group.append(batch)
        if len(group) == size:
            yield group
            group = []


def _collective_device() -> torch.device:
    if dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")
