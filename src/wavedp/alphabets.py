"""The letters sequences are stored in and their code tables, as bytes (no NumPy: makedb
guesses a file's alphabet with them before it imports NumPy; ``scoring`` makes its arrays
from them)."""

from __future__ import annotations

#: byte value in an encoding table that marks a character the alphabet does not accept
INVALID = 255

DNA_LETTERS = "ACGTN"
_IUPAC_AS_N = "RYSWKMBDHVN"


def dna_codes() -> bytes:
    """The 256-entry code table of DNA letters (ACGT, U as T, IUPAC ambiguity codes as N;
    INVALID elsewhere)."""
    table = bytearray([INVALID]) * 256
    for code, letter in enumerate("ACGT"):
        table[ord(letter)] = table[ord(letter.lower())] = code
    table[ord("U")] = table[ord("u")] = 3
    for letter in _IUPAC_AS_N:
        table[ord(letter)] = table[ord(letter.lower())] = 4
    return bytes(table)


def letter_codes(alphabet: str) -> bytes:
    """The 256-entry code table of a substitution matrix's ``alphabet`` (either case; U, O
    and J as X where the matrix has X; INVALID elsewhere)."""
    table = bytearray([INVALID]) * 256
    for code, letter in enumerate(alphabet):
        table[ord(letter)] = code
        table[ord(letter.lower())] = code
    if "X" in alphabet:
        for letter in "UOJ":
            if letter not in alphabet:
                table[ord(letter)] = table[ord(letter.lower())] = alphabet.index("X")
    return bytes(table)


#: the letters a DNA sequence may hold (bases, U, N and the IUPAC ambiguity codes), and the
#: bases; :func:`guess` calls residues DNA when they hold only the first and mostly the second
DNA_TEXT_LETTERS = b"ACGTUNRYSWKMBDHVacgtunryswkmbdhv"
BASES = b"ACGTUacgtu"
#: :func:`guess`'s share of bases among the letters of DNA
DNA_BASES = 0.9


def guess(residues: bytes) -> str:
    """``dna`` when every byte of ``residues`` is a DNA letter (A, C, G, T, U, N or an IUPAC
    ambiguity code) and at least DNA_BASES of them are A, C, G, T or U; else ``protein``."""
    if not residues or residues.translate(None, DNA_TEXT_LETTERS):
        return "protein"
    bases = len(residues) - len(residues.translate(None, BASES))
    return "dna" if bases >= DNA_BASES * len(residues) else "protein"
