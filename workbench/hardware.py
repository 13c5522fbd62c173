"""Accelerator hardware spec: the numbers the runtime and the cost model share.

One frozen dataclass with units in every field name, plus a few presets. The presets
are illustrative round numbers in the range of current inference accelerators (a
chip split into a few compute cores sharing one HBM stack), not vendor datasheets.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.limits import GIB, KIB, MAX_CORES, MIB, check_int_range, check_range


@dataclass(frozen=True, slots=True)
class Hardware:
    """An accelerator: N identical cores sharing one HBM."""

    cores: int = 4
    peak_flops_per_core: float = 50e12  # FLOP/s, dense bf16
    sram_bytes_per_core: int = 24 * MIB  # on-chip scratchpad per core
    hbm_bandwidth_bytes_per_s: float = 1.6e12  # shared by all cores
    hbm_capacity_bytes: int = 32 * GIB
    launch_s: float = 5e-6  # per kernel launch / dispatch overhead
    mma_rows: int = 16  # rows of the matrix unit: compute pads the token rows to a multiple of this
    # host memory -> HBM, each way: evicted weights come back over it. PCIe 5.0 x16 moves 32 GT/s x 16 lanes
    # x 128/130 = 63 GB/s (64 GB/s as usually quoted); PCIe 4.0 x16 half that, NVLink-C2C about 450 GB/s
    host_link_bytes_per_s: float = 64e9

    def __post_init__(self) -> None:
        # ranges wide enough for any real accelerator; finite, so no derived time overflows
        check_int_range("cores", self.cores, 1, MAX_CORES, "every dispatch looks at every core")
        check_range("peak_flops_per_core", self.peak_flops_per_core, 1e6, 1e18, "FLOP/s")
        check_int_range("sram_bytes_per_core", self.sram_bytes_per_core, KIB, 2**40)
        check_range("hbm_bandwidth_bytes_per_s", self.hbm_bandwidth_bytes_per_s, 1e6, 1e16, "bytes/s")
        check_int_range("hbm_capacity_bytes", self.hbm_capacity_bytes, MIB, 2**50)
        check_range("launch_s", self.launch_s, 0.0, 1.0, "s")
        check_int_range("mma_rows", self.mma_rows, 1, 4096)
        check_range("host_link_bytes_per_s", self.host_link_bytes_per_s, 1e6, 1e16, "bytes/s")


PRESETS: dict[str, Hardware] = {
    # a mid-size inference chip: 4 cores, one HBM2e-class stack
    "generic-4core": Hardware(),
    # a small edge NPU: 2 cores, LPDDR-class bandwidth, little SRAM; an M.2 card on PCIe 4.0 x4
    # (16 GT/s x 4 lanes x 128/130 = 7.9 GB/s each way)
    "edge-2core": Hardware(
        cores=2,
        peak_flops_per_core=8e12,
        sram_bytes_per_core=4 * MIB,
        hbm_bandwidth_bytes_per_s=100e9,
        hbm_capacity_bytes=8 * GIB,
        launch_s=10e-6,
        host_link_bytes_per_s=8e9,
    ),
    # a large training/inference chip: 8 cores, HBM3-class bandwidth; a PCIe 5.0 x16 card (the default link:
    # a part with NVLink-C2C to its host CPU would set host_link_bytes_per_s = 450e9)
    "datacenter-8core": Hardware(
        cores=8,
        peak_flops_per_core=120e12,
        sram_bytes_per_core=48 * MIB,
        hbm_bandwidth_bytes_per_s=3.2e12,
        hbm_capacity_bytes=96 * GIB,
        launch_s=4e-6,
    ),
}
