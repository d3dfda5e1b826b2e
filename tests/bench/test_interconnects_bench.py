"""`retrolink bench interconnects`: every network boots, every protocol is measured at
every size with the CPU load of each stream (and the bandwidths a network names), and
the whole is deterministic: twice --quick, byte for byte."""
from helpers import E1000_WINDOW_US, quick_bench_twice, sizes_take_the_e1000_window

from retrolink.bench import interconnects as ic

# the kernel's protocols over QEMU's e1000 (helpers.E1000_WINDOW_US)
E1000_KERNEL_PATHS = {("rxe", "udp"), ("rxe", "tcp")}


def test_quick_bench_twice_gives_identical_results(artifacts, tmp_path):
    a = quick_bench_twice("interconnects", tmp_path, timeout=1500)
    d = ic.load_definition(quick=True)
    sizes = {str(s) for s in d["sizes"]}
    assert set(a["latency_us"]) == set(d["networks"])
    for name, net in d["networks"].items():
        lat = a["latency_us"][name]
        assert set(lat) == set(net["protocols"])
        assert all(set(v) == sizes for v in lat.values())
        small, large = str(min(d["sizes"])), str(max(d["sizes"]))
        # a larger message takes longer, on every network and protocol but the kernel's
        # over an e1000, where both take the NIC's interrupt window
        for p in lat:
            if (name, p) in E1000_KERNEL_PATHS:
                assert E1000_WINDOW_US * 0.9 < lat[p][small] < E1000_WINDOW_US * 1.5, (name, lat)
                assert sizes_take_the_e1000_window(lat[p][small], lat[p][large]), (name, lat)
            else:
                assert 0 < lat[p][small] < lat[p][large], (name, p, lat)
        load = a["cpu_load_pct"][name]
        assert set(load) == {ic.IDLE, *d["cpu_load"]["protocols"]}
        # a stream costs both sides more than no traffic does
        for p in d["cpu_load"]["protocols"]:
            assert load[p]["sender"] > load[ic.IDLE]["sender"], (name, p, load)
            assert load[p]["receiver"] > load[ic.IDLE]["receiver"], (name, p, load)
        assert a["parameters"][name]["machine"] == net["machine"]
        # the bandwidths the network names (VIA's, RDMA writes over rxe): every size, a
        # larger message moving more bytes a second
        bw = a["bandwidth_MBps"][name]
        assert set(bw) == set(net.get("bandwidth", []))
        assert all(set(v) == sizes and 0 < v[small] < v[large] for v in bw.values()), (name, bw)
