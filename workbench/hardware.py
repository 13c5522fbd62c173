"""Accelerator hardware spec: the numbers the runtime and the cost model share.

One frozen dataclass with units in every field name, plus a few presets:

* ``generic-4core``, ``edge-2core``, ``datacenter-8core``: illustrative round numbers in the range of
  current inference NPUs (a chip split into a few compute cores sharing one HBM), not datasheets;
* ``h100-sxm``, ``a100-sxm``, ``a40``: NVIDIA GPUs from their data sheets (dense bf16 tensor FLOP/s, memory
  bandwidth and capacity; on-chip memory = L1/shared memory per SM x SMs; host link PCIe 5 / 4 x16);
* ``inferentia2``: AWS Inferentia2, a real multi-core NPU (two NeuronCore-v2 sharing one HBM), from AWS's
  Neuron architecture pages.

**A GPU is one core.** Its SMs are not independent cores that each run their own kernel on a shard of
the layer: one kernel runs across all of them, so a GPU preset has ``cores = 1`` and the whole chip's
FLOP/s. ``cores > 1`` means a multi-core NPU: the serving model then splits every layer tensor-parallel
over the cores (Megatron-LM's split) and all-reduces the partial sums through the shared HBM.
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


GPU_PRESETS = ("h100-sxm", "a100-sxm", "a40")

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
    # NVIDIA H100 SXM5 (H100 Tensor Core GPU data sheet): 989.4 TFLOP/s dense bf16 (1,979 with sparsity),
    # 3.35 TB/s HBM3, 80 GB (5 stacks of 16 GiB); 132 SMs x 256 KiB of L1/shared memory; PCIe 5.0 x16 to the host.
    # mma_rows 64: a warpgroup MMA's rows (wgmma m64), the smallest row tile a GEMM pays for
    "h100-sxm": Hardware(cores=1, peak_flops_per_core=989.4e12, sram_bytes_per_core=132 * 256 * KIB,
                         hbm_bandwidth_bytes_per_s=3.35e12, hbm_capacity_bytes=80 * GIB, launch_s=5e-6, mma_rows=64,
                         host_link_bytes_per_s=64e9),
    # NVIDIA A100 SXM4 80GB (A100 data sheet): 312 TFLOP/s dense bf16, 2,039 GB/s HBM2e, 80 GB; 108 SMs x 192 KiB;
    # PCIe 4.0 x16 (16 GT/s x 16 lanes x 128/130 = 31.5 GB/s each way)
    "a100-sxm": Hardware(cores=1, peak_flops_per_core=312e12, sram_bytes_per_core=108 * 192 * KIB,
                         hbm_bandwidth_bytes_per_s=2.039e12, hbm_capacity_bytes=80 * GIB, launch_s=5e-6, mma_rows=64,
                         host_link_bytes_per_s=31.5e9),
    # NVIDIA A40 (A40 data sheet; GA102): 149.7 TFLOP/s dense bf16 (299.4 with sparsity), 696 GB/s GDDR6, 48 GB;
    # 84 SMs x 128 KiB; PCIe 4.0 x16
    "a40": Hardware(cores=1, peak_flops_per_core=149.7e12, sram_bytes_per_core=84 * 128 * KIB,
                    hbm_bandwidth_bytes_per_s=696e9, hbm_capacity_bytes=48 * GIB, launch_s=5e-6, mma_rows=64,
                    host_link_bytes_per_s=31.5e9),
    # AWS Inferentia2, one chip: a real multi-core NPU. AWS Neuron docs, "Inferentia2 Architecture": two
    # NeuronCore-v2 per chip, 190 TFLOP/s FP16/BF16 per chip (95 per core), 32 GiB HBM at 820 GB/s shared by both
    # cores (820 GB/s in the NKI guide, "820 GiB/sec" on the newer architecture page: the smaller, 820e9, is taken);
    # "Trainium/Inferentia2 Architecture Guide for NKI": a 24 MiB state buffer (SBUF) per NeuronCore-v2
    # (plus a 2 MiB PSUM accumulator, left out) and a 128 x 128 systolic tensor engine (mma_rows 128). Neither page
    # gives a launch overhead or the host link: 5 us and PCIe 4.0 x16 (31.5 GB/s) are this workbench's assumptions
    "inferentia2": Hardware(cores=2, peak_flops_per_core=95e12, sram_bytes_per_core=24 * MIB,
                            hbm_bandwidth_bytes_per_s=820e9, hbm_capacity_bytes=32 * GIB, launch_s=5e-6, mma_rows=128,
                            host_link_bytes_per_s=31.5e9),
}

REAL_PRESETS = (*GPU_PRESETS, "inferentia2")  # the presets taken from vendors' published figures
