"""Boards: the interconnect hardware a node carries. Each board model is one module here
with its parameter tables and its QEMU command line; this registry is the one place that
lists them (a new board: its module and one line below)."""
from typing import Annotated, Union

from pydantic import Field

from retrolink.boards.base import BoardBase
from retrolink.boards.cenju3 import Cenju3Board
from retrolink.boards.ethernet import NICS, EthernetBoard
from retrolink.boards.fc import FcBoard
from retrolink.boards.sx import SxBoard

BOARDS: dict[str, type[BoardBase]] = {"sx": SxBoard, "fc": FcBoard, "cenju3": Cenju3Board,
                                      **{nic: EthernetBoard for nic in NICS}}

Board = Annotated[Union[tuple(dict.fromkeys(BOARDS.values()))], Field(discriminator="model")]
