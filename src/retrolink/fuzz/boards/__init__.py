"""The boards `retrolink fuzz` knows: name -> the module whose BOARD describes it.
A new board is one file here and one line below."""
import importlib

BOARDS = {
    "sx": "retrolink.fuzz.boards.sx",
    "fc": "retrolink.fuzz.boards.fc",
    "cenju3": "retrolink.fuzz.boards.cenju3",
    "e1000": "retrolink.fuzz.boards.e1000",
}


def load(name: str):
    """The BoardSpec of a registered board (KeyError if there is none)."""
    return importlib.import_module(BOARDS[name]).BOARD
