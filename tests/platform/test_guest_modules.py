"""The guest loads the kernel modules its machine's boards name, with their dependencies
(modprobe and depmod's indexes in the initramfs), and no others."""
from helpers import run_retrolink


def test_a_plain_node_loads_only_fw_cfg_and_modprobe_resolves_dependencies(artifacts):
    cmd = ("cut -d' ' -f1 /proc/modules | sort | tr '\\n' ' '; echo; "
           "modprobe e100 && cut -d' ' -f1 /proc/modules | sort | tr '\\n' ' '")
    r = run_retrolink("run", "plain", "--node", "0", "--", cmd)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[node0] qemu_fw_cfg ", "[node0] e100 mii qemu_fw_cfg "]
