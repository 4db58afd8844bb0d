"""The kernels' machine code, counted: one kernel instance compiled with NVRTC (no GPU
needed), disassembled with ``nvdisasm`` (the ``nvidia-cuda-nvdisasm`` package, or a CUDA
toolkit's), and the opcodes of its loops counted. The floors in BENCHMARKS.md and the energy
model's operations per cell (``lab.energy_model.CELL_COUNTS``) rest on such counts; the tests
check the scan kernel's step against them."""

from __future__ import annotations

import collections
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..engines.cuda.module import compile_cubin

#: opcodes that issue to the ALU pipe on sm_90 (integer compare, select, logic, shift,
#: min/max and the DPX add-max); the FMA pipe takes IMAD (moves included) and VIADD
ALU = frozenset({"VIADDMNMX", "VIMNMX", "VIMNMX3", "ISETP", "SEL", "LOP3", "SHF", "LEA",
                 "IADD3", "PLOP3", "PRMT", "IABS", "FSEL", "P2R", "R2P", "FLO", "POPC",
                 "BMSK", "SGXT"})

_INSTRUCTION = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_LABEL = re.compile(r"\s*(\.L_x_\d+):")
_BRANCH = re.compile(r"\bBRA\b.*`\((\.L_x_\d+)\)")


@dataclass(frozen=True)
class Loop:
    """A loop of the machine code: a backward branch and the instructions it repeats."""
    start: int  # address of its first instruction
    end: int  # address of the branch back
    opcodes: collections.Counter  # full mnemonics (with modifiers), predicates left out

    def count(self, base: str) -> int:
        """Instructions whose mnemonic is ``base`` (modifiers any: ``VIADDMNMX`` counts
        ``VIADDMNMX.S16x2.RELU`` too)."""
        return sum(n for op, n in self.opcodes.items() if op.split(".")[0] == base)

    @property
    def alu(self) -> int:
        """Instructions of the ALU pipe (:data:`ALU`)."""
        return sum(n for op, n in self.opcodes.items() if op.split(".")[0] in ALU)

    @property
    def size(self) -> int:
        return sum(self.opcodes.values())


def nvdisasm() -> str | None:
    """The ``nvdisasm`` program: the ``nvidia-cuda-nvdisasm`` package's, else one on the
    PATH or in /usr/local/cuda; None where there is none."""
    try:
        import nvidia

        roots = list(nvidia.__path__)
    except ImportError:
        roots = []
    for found in (p for root in roots for p in sorted(Path(root).glob("*/bin/nvdisasm"))):
        if os.access(found, os.X_OK):
            return str(found)
    return shutil.which("nvdisasm") or shutil.which("nvdisasm", path="/usr/local/cuda/bin")


def cubin(name: str, expression: str, arch: str = "sm_90") -> bytes:
    """One template instance (``expression``) of the kernel file ``name`` compiled with
    NVRTC for ``arch``. Raises RuntimeError with NVRTC's log where it does not compile."""
    return _whole_elf(compile_cubin(name, [expression], arch))


def _whole_elf(binary: bytes) -> bytes:
    """The cubin with the length its ELF headers give (the furthest end of its section
    contents, section headers and program headers): CuPy's getCUBIN drops the last byte,
    as if the binary were a C string, and nvdisasm then rejects the file. The byte dropped
    is the last header's (zero) high byte."""
    import struct

    phoff, shoff = struct.unpack_from("<QQ", binary, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", binary, 0x36)
    ends = [phoff + phentsize * phnum, shoff + shentsize * shnum]
    for k in range(shnum):
        kind, = struct.unpack_from("<I", binary, shoff + k * shentsize + 4)
        offset, size = struct.unpack_from("<QQ", binary, shoff + k * shentsize + 0x18)
        if kind != 8:  # SHT_NOBITS takes no room in the file
            ends.append(offset + size)
    return binary.ljust(max(ends), b"\0")


def disassemble(binary: bytes) -> str:
    """``nvdisasm``'s text of a cubin. Raises RuntimeError where there is no nvdisasm."""
    program = nvdisasm()
    if program is None:
        raise RuntimeError("no nvdisasm: install nvidia-cuda-nvdisasm or a CUDA toolkit")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(binary)
        return subprocess.run([program, "-c", str(path)], capture_output=True, text=True,
                              check=True).stdout


def loops(sass: str) -> list[Loop]:
    """Every loop of ``nvdisasm`` text: from a label to a branch back to it, in the order
    of their branches."""
    instructions: list[tuple[int, str]] = []
    labels: dict[str, int] = {}
    pending: list[str] = []
    for line in sass.splitlines():
        label = _LABEL.match(line)
        if label:
            pending.append(label[1])
            continue
        found = _INSTRUCTION.match(line)
        if found:
            labels.update((p, len(instructions)) for p in pending)
            pending = []
            instructions.append((int(found[1], 16), found[2]))
    out = []
    for k, (address, text) in enumerate(instructions):
        branch = _BRANCH.search(text)
        if not branch or labels.get(branch[1], k + 1) > k:
            continue
        body = instructions[labels[branch[1]]:k + 1]
        ops = collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", t).split()[0] for _, t in body)
        out.append(Loop(body[0][0], address, ops))
    return out


def inner_loop(sass: str, marker: str = "VIADDMNMX") -> Loop:
    """The smallest loop holding ``marker`` instructions (a kernel's DP step)."""
    found = [loop for loop in loops(sass) if loop.count(marker)]
    if not found:
        raise ValueError(f"no loop with {marker}")
    return min(found, key=lambda loop: loop.size)


def main(argv: list[str] | None = None) -> None:
    """``python -m wavedp.lab.sass FILE EXPRESSION...``: each instance's innermost DP loop,
    its size, its ALU-pipe share and its opcodes."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m wavedp.lab.sass",
                                     description=main.__doc__.splitlines()[0])
    parser.add_argument("file", help="a kernel file of wavedp/kernels, e.g. search.cu")
    parser.add_argument("expressions", nargs="+",
                        help='template instances, e.g. "scan<0, 32, 32, true>"')
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--marker", default="VIADDMNMX", help="an opcode the loop must hold")
    args = parser.parse_args(argv)
    for expression in args.expressions:
        loop = inner_loop(disassemble(cubin(args.file, expression, args.arch)), args.marker)
        print(f"{expression}: {loop.size} instructions, {loop.alu} on the ALU pipe")
        print("  " + " ".join(f"{op}:{n}" for op, n in loop.opcodes.most_common()))


if __name__ == "__main__":
    main()
