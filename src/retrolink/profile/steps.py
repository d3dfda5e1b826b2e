"""The names of the steps a guest marks for the instruction profile (docs/profile.md
"Steps"): norma.ko's breakdown steps (guest/kernel/norma/norma.h: the transport's trace
steps, enum norma_step, then the IPC layer's, enum norma_ipc_step), and the window's own
opening and closing (the plugin's step 0 and 0xffff)."""

OPEN, CLOSE = 0, 0xFFFF

NAMES = {
    OPEN: "(window opened)", CLOSE: "(window closed)",
    1: "de_send", 2: "de_request_rx", 3: "de_permit_tx", 4: "de_permit_rx", 5: "de_kmsg_tx",
    6: "de_pages_tx", 7: "de_pages_rx", 8: "de_deliver", 9: "de_done_rx", 10: "de_done",
    11: "de_accept_tx", 12: "de_accept_rx",
    32: "send_begin", 33: "send_copied", 34: "send_queued", 35: "send_done",
    36: "rcv_arrived", 37: "rcv_queued", 38: "rcv_taken", 39: "rcv_done",
}


def name(step: int) -> str:
    return NAMES.get(step, f"step {step}")
