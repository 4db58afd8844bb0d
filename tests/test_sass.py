"""The kernels' machine code, counted (wavedp.lab.sass): the loop parser on a fixed text, and
the scan kernel's step against the floor BENCHMARKS.md and the energy model state (no GPU
needed: NVRTC compiles, nvdisasm disassembles)."""

import pytest
from helpers import need_sass_tools, sass_step

from wavedp.lab import sass

TEXT = """
        /*0000*/                   MOV R1, c[0x0][0x28] ;
.L_x_0:
        /*0010*/                   VIADDMNMX.S16x2 R2, R2, R3, R4 ;
        /*0020*/              @!P0 VIADDMNMX.S16x2.RELU R5, R2, R3, R4 ;
.L_x_1:
        /*0030*/                   VIADD.16x2 R6, R5, R7 ;
        /*0040*/                   ISETP.GE.AND P1, PT, R6, RZ, PT ;
        /*0050*/               @P1 BRA `(.L_x_1) ;
        /*0060*/                   VIMNMX3.S16x2 R8, R8, R2, R5 ;
        /*0070*/              @!P2 BRA `(.L_x_0) ;
        /*0080*/                   BRA `(.L_x_2) ;
.L_x_2:
        /*0090*/                   EXIT ;
"""


def test_loops_are_read_from_branches_back():
    found = sass.loops(TEXT)
    assert [(loop.start, loop.end) for loop in found] == [(0x30, 0x50), (0x10, 0x70)]
    inner, outer = found
    assert inner.opcodes == {"VIADD.16x2": 1, "ISETP.GE.AND": 1, "BRA": 1}
    assert outer.count("VIADDMNMX") == 2 and outer.count("VIMNMX3") == 1
    assert outer.alu == 4 and outer.size == 7  # 2 add-max, ISETP, VIMNMX3 on the ALU pipe
    assert sass.inner_loop(TEXT) == outer  # the smallest loop with add-max
    with pytest.raises(ValueError, match="no loop"):
        sass.inner_loop(TEXT, "HMMA")


def test_an_elf_cut_short_is_restored_from_its_headers():
    import struct

    # an ELF64 header, one program header at 64, one section (PROGBITS) of 16 bytes at 120,
    # section headers at 136 (two: the null one and that section)
    elf = bytearray(136 + 2 * 64)
    elf[:4] = b"\x7fELF"
    struct.pack_into("<QQ", elf, 0x20, 64, 136)
    struct.pack_into("<HHHH", elf, 0x36, 56, 1, 64, 2)
    struct.pack_into("<I", elf, 136 + 64 + 4, 1)
    struct.pack_into("<QQ", elf, 136 + 64 + 0x18, 120, 16)
    assert sass._whole_elf(bytes(elf[:-1])) == bytes(elf)
    assert sass._whole_elf(bytes(elf)) == bytes(elf)


def _step(expression: str):
    return sass_step("search.cu", expression)


@pytest.mark.parametrize("rows", [32, 8])
def test_the_packed_scan_step_is_at_its_floor(rows):
    """Per word (two cells) of a local packed scan: four DPX add-max (E, X with the zero
    floor, F, H) and half a three-way max for the best on the ALU pipe, X - go as one packed
    add on the FMA pipe, and at most 16 other ALU instructions per step of ``rows`` rows."""
    loop = _step(f"scan<0, 32, {rows}, true>")
    steps, rest = divmod(loop.count("VIMNMX3"), rows // 2)
    assert steps >= 1 and rest == 0, loop.opcodes
    assert loop.count("VIADDMNMX") == 4 * rows * steps
    assert loop.opcodes["VIADD.16x2"] == rows * steps
    other = loop.alu - loop.count("VIADDMNMX") - loop.count("VIMNMX3")
    assert other <= 16 * steps, loop.opcodes
    # G a template parameter and the gap words kernel arguments: the profile's offsets are
    # immediates and no registers are copied around the gap words (507 per two steps before)
    assert loop.size <= (5.5 * rows + 64) * steps, loop.opcodes


def test_the_wide_scan_step_keeps_x_minus_open_off_the_alu_pipe():
    loop = _step("scan<0, 32, 32, false>")
    steps = loop.count("VIMNMX3") // 16
    assert steps >= 1 and loop.count("VIADDMNMX") == 128 * steps
    assert loop.count("VIADD") >= 32 * steps  # X - go: VIADD, not an ALU add


def test_the_command_prints_each_instance(capsys):
    need_sass_tools()
    sass.main(["search.cu", "scan<0, 32, 8, true>", "scan<1, 32, 8, false>"])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("scan<0, 32, 8, true>: ") and "on the ALU pipe" in out[0]
    assert out[2].startswith("scan<1, 32, 8, false>: ") and "VIADDMNMX" in out[3]
