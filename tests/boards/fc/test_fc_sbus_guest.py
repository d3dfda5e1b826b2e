"""In the guest, on machines/puma-iii-ss5.toml: SPARCstation 5 nodes (sparc32 Linux on
QEMU's sun4m) with the FC adapter as an SBus card. The driver binds the node OpenBIOS made
from the card's FCode PROM, IP over FC comes up, the raw protocol and Fast Messages pass
the cases they pass on the PCs (fc_test, the same source cross-built against klibc: the
groups of test_fc_guest.py: the sparc32 kernel's coherent DMA memory allocated, mapped
and freed right, guest/sparc/patches). docs/sparc.md, "The SBus card"; the driver's
own tests, its unload among them: test_fc_sbus_driver.py."""
import pytest
from helpers import run_retrolink
from test_fc_guest import GROUPS, check_group, check_passed_on_both, run_fc_test

MACHINE = "puma-iii-ss5"


@pytest.fixture(scope="module")
def fc_test_run(sparc):
    return run_fc_test(MACHINE)


def test_the_driver_binds_the_card_of_the_prom_and_ip_comes_up(sparc):
    r = run_retrolink("run", MACHINE, "--", "sh", "-c",
                      "cat /sys/bus/platform/drivers/fc/*/of_node/name; echo; "
                      "cat /sys/class/net/fc0/carrier /sys/class/misc/fc0/node "
                      "/sys/class/misc/fc0/nodes")
    assert r.returncode == 0, r.stderr
    for node in (0, 1):
        out = [line.split("] ", 1)[1].rstrip("\0") for line in r.stdout.splitlines()
               if line.startswith(f"[node{node}]")]
        # the node the PROM made, its name (a NUL-terminated property), bound
        assert out == ["PUMA,fc", "1", str(node), "2"], out


def test_fc_test_passes_on_both_sparcstations(fc_test_run):
    check_passed_on_both(fc_test_run)


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_group_passed(fc_test_run, group):
    check_group(fc_test_run, group)
